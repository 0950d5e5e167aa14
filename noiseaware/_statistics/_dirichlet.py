"""Schemas of Guo, Barrientos & Peña (2022): the censored log-mean of compositions and its threshold selection."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ._schema import (
    _RTOL,
    BOOL,
    FLOAT,
    FLOAT_LIST,
    INT,
    INT_LIST,
    STR,
    STR_LIST,
    StatisticSchema,
    _check_columns,
    _check_reach,
    _check_sensitivity,
    _close,
    _fail,
    _float,
    _float_list,
    _int,
    _int_list,
    _meta,
)

__all__ = ["noisy_rates"]


def noisy_rates(noisy_counts: Any, m: int) -> np.ndarray:
    r"""The rates :math:`\hat p_{G,1..m}` of Guo et al. (2022) Algorithm 1: cumulative shares of the noisy counts.

    All ones when every (clipped) noisy count is 0. Post-processing of the released counts: the
    curator's threshold choice (:func:`noiseaware._privatize._dirichlet.select_threshold`) reads them
    and the loader recomputes them.

    Examples
    --------
    >>> noisy_rates(np.array([1, 2, 17, 980]), 3)
    array([0.001, 0.003, 0.02 ])
    """
    s = np.asarray(noisy_counts, dtype=np.float64)
    total = s.sum()
    if total <= 0:
        return np.ones(m)
    return np.cumsum(s)[:m] / total


def _check_candidates(name: str, cand: list[float]) -> None:
    if not cand or any(not 0.0 < c < 1.0 for c in cand) or any(b <= a for a, b in itertools.pairwise(cand)):
        _fail(name, "must be a non-empty increasing list of thresholds in (0, 1)", cand)


def _check_censoring_counts(release: Any) -> None:
    cand = _float_list("metadata.candidates", _meta(release, "candidates"))
    _check_candidates("metadata.candidates", cand)
    if release.values.shape != (len(cand) + 1,):
        _fail("shape", f"must be [{len(cand) + 1}] (one count per interval between candidates)",
              list(release.values.shape))
    _check_sensitivity(release, 2.0, "2 (one record moves between two intervals)")
    _check_reach(release, 0.0, None if release.n is None else float(release.n))


def _check_dirichlet_logmean(release: Any) -> None:
    n = _int("n", release.n, minimum=2)
    d = _int("metadata.d", _meta(release, "d"), minimum=2)
    _check_columns(release, d)
    a = _float("metadata.a", _meta(release, "a"), lo=0.0, hi=1.0, open_lo=True)
    if a >= 1.0:
        _fail("metadata.a", "must be in (0, 1)", a)
    n_parts = _int_list("metadata.n_parts", _meta(release, "n_parts"), minimum=1)
    split = len(n_parts) == 2
    if len(n_parts) not in (1, 2) or sum(n_parts) != n:
        _fail("metadata.n_parts", f"must be [n] or [n1, n2] summing to n = {n}", n_parts)
    if split and min(n_parts) < 2:
        _fail("metadata.n_parts", "must leave at least 2 records in each part", n_parts)
    want_shape = (2, d) if split else (d,)
    if release.values.shape != want_shape:
        _fail("shape", f"must be {list(want_shape)} for d = {d} and {len(n_parts)} part(s)", list(release.values.shape))
    if release.composition != ("parallel" if split else "joint"):
        _fail("composition", f"must be {'parallel' if split else 'joint'} for {len(n_parts)} part(s)",
              release.composition)
    cols = [str(c) for c in _meta(release, "columns")]
    want_labels = [[part, c] for part in ("D1", "D2") for c in cols] if split else [[c] for c in cols]
    if [list(lab) for lab in release.labels] != want_labels:
        _fail("labels", "must be the column names (prefixed by D1/D2 for a split)", [list(x) for x in release.labels])
    _check_sensitivity(release, -d * math.log(a), "-d log(a) (censored log-sums, Guo et al. (2022) §3.1)")
    eps1 = _float("metadata.epsilon_1", _meta(release, "epsilon_1"), lo=0.0, open_lo=True)
    eps2 = _float("metadata.epsilon_2", _meta(release, "epsilon_2"), lo=0.0)
    g = release.mechanism.guarantee()
    if g.epsilon is None or not _close(g.epsilon, eps1):
        _fail("metadata.epsilon_1", f"must equal the Laplace mechanism's epsilon ({g.epsilon!r})", eps1)
    scales = _float_list("metadata.laplace_scale_logmean", _meta(release, "laplace_scale_logmean"))
    want = [float(release.mechanism.scale) / m for m in n_parts]
    if len(scales) != len(want) or not all(_close(s, w) for s, w in zip(scales, want, strict=False)):
        _fail("metadata.laplace_scale_logmean", f"must be mechanism.scale / n_parts = {want}", scales)
    if _meta(release, "zeros") not in ("error", "censor"):
        _fail("metadata.zeros", "must be 'error' or 'censor'", _meta(release, "zeros"))
    _float("metadata.simplex_tol", _meta(release, "simplex_tol"), lo=0.0)
    comps = release.components
    if not comps:
        if eps2 != 0.0:
            _fail("metadata.epsilon_2", "must be 0 when the threshold was fixed (no selection component)", eps2)
        for key in ("candidates", "noisy_counts", "noisy_rates", "threshold_index", "target_rate"):
            if key in release.metadata:
                _fail(f"metadata.{key}", "must be absent when the threshold was fixed", release.metadata[key])
        return
    if len(comps) != 1:
        _fail("components", "must hold exactly one threshold-selection release", len(comps))
    comp = comps[0]
    if comp.n != n:
        _fail("components[0].n", f"must equal n = {n}", comp.n)
    if comp.secure != release.secure:
        _fail("components[0].secure", f"must equal the release's secure flag ({release.secure})", comp.secure)
    ge = comp.mechanism.guarantee().epsilon
    if ge is None or not _close(ge, eps2):
        _fail("metadata.epsilon_2", f"must equal the selection component's epsilon ({ge!r})", eps2)
    cand = _float_list("metadata.candidates", _meta(release, "candidates"))
    _check_candidates("metadata.candidates", cand)
    if cand != [float(c) for c in comp.metadata["candidates"]]:
        _fail("metadata.candidates", "must equal the selection component's candidates", cand)
    noisy = _int_list("metadata.noisy_counts", _meta(release, "noisy_counts"), minimum=0)
    if noisy != np.maximum(comp.values, 0).tolist():
        _fail("metadata.noisy_counts", "must be max(0, the selection component's values) (Algorithm 1)", noisy)
    t_c = _float("metadata.target_rate", _meta(release, "target_rate"), lo=0.0, hi=1.0, open_lo=True)
    rates = noisy_rates(noisy, len(cand))
    # Algorithm 1 keeps the largest index whose rate is at most t_c, or the first one when there is none or
    # every noisy count is 0; the rates of non-negative counts never decrease, so that is a count
    l_idx = max(0, int(np.count_nonzero(rates <= t_c)) - 1) if any(noisy) else 0
    if _int("metadata.threshold_index", _meta(release, "threshold_index")) != l_idx:
        _fail("metadata.threshold_index", f"must be the index Algorithm 1 selects from the noisy counts ({l_idx})",
              _meta(release, "threshold_index"))
    got_rates = _float_list("metadata.noisy_rates", _meta(release, "noisy_rates"))
    if len(got_rates) != rates.size or not np.allclose(got_rates, rates, rtol=_RTOL, atol=0.0):
        _fail("metadata.noisy_rates", "must be the cumulative shares of the noisy counts", got_rates)
    if not _close(a, cand[l_idx]):
        _fail("metadata.a", f"must be the selected candidate candidates[{l_idx}] = {cand[l_idx]!r}", a)



#: The Dirichlet statistics, by schema.
SCHEMAS: tuple[StatisticSchema, ...] = (
    StatisticSchema(
        "dirichlet_censoring_counts",
        families=("geometric",),
        required={"candidates": FLOAT_LIST, "clipped_at_zero": BOOL, "note": STR},
        check=_check_censoring_counts,
        sensitivity="2 in L1 (one record moves between two intervals; Guo et al. 2022, Algorithm 1)",
    ),
    StatisticSchema(
        "dirichlet_logmean",
        families=("laplace",),
        compositions=("joint", "parallel"),
        required={
            "columns": STR_LIST,
            "d": INT,
            "units": STR,
            "threshold_selection": STR,
            "a": FLOAT,
            "n_parts": INT_LIST,
            "epsilon_1": FLOAT,
            "epsilon_2": FLOAT,
            "laplace_scale_logmean": FLOAT_LIST,
            "zeros": STR,
            "simplex_tol": FLOAT,
        },
        optional={
            "candidates": FLOAT_LIST,
            "target_rate": FLOAT,
            "noisy_counts": INT_LIST,
            "noisy_rates": FLOAT_LIST,
            "threshold_index": INT,
        },
        check=_check_dirichlet_logmean,
        components=("dirichlet_censoring_counts",),
        sensitivity="-d log(a) in L1 on the censored log-sums (Guo et al. 2022, §3.1)",
    ),
)
