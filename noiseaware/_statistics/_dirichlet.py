"""Schemas of Guo, Barrientos & Peña (2022): the censored log-mean of compositions and its threshold selection."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validation import owned
from ._schema import (
    _RTOL,
    BOOL,
    FLOAT_LIST,
    INT,
    NAMES,
    NONNEGATIVE,
    OPEN_UNIT,
    POSITIVE,
    STR,
    Float,
    Int,
    ListOf,
    OneOf,
    StatisticSchema,
    _check_columns,
    _check_epsilon,
    _check_labels,
    _check_reach,
    _check_sensitivity,
    _check_shape,
    _close,
    _fail,
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


#: The candidate thresholds of Algorithm 1.
_CANDIDATES = ListOf(Float(gt=0.0, lt=1.0), min_length=1)


@owned("Release")
def _check_increasing(cand: list[float]) -> None:
    if any(b <= a for a, b in itertools.pairwise(cand)):
        _fail("metadata.candidates", "must be an increasing list of thresholds", cand)


def _check_censoring_counts(release: Any, meta: Mapping[str, Any]) -> None:
    cand = meta["candidates"]
    _check_increasing(cand)
    _check_shape(release, (len(cand) + 1,), "one count per interval between candidates")
    _check_sensitivity(release, 2.0, "2 (one record moves between two intervals)")
    _check_reach(release, 0.0, float(release.n))


@owned("Release")
def _check_dirichlet_logmean(release: Any, meta: Mapping[str, Any]) -> None:
    n = release.n
    d = meta["d"]
    cols = _check_columns(meta, d)
    a = meta["a"]
    n_parts = meta["n_parts"]
    split = len(n_parts) == 2
    if len(n_parts) not in (1, 2) or sum(n_parts) != n:
        _fail("metadata.n_parts", f"must be [n] or [n1, n2] summing to n = {n}", n_parts)
    if split and min(n_parts) < 2:
        _fail("metadata.n_parts", "must leave at least 2 records in each part", n_parts)
    _check_shape(release, (2, d) if split else (d,), f"d = {d} and {len(n_parts)} part(s)")
    if release.composition != ("parallel" if split else "joint"):
        _fail("composition", f"must be {'parallel' if split else 'joint'} for {len(n_parts)} part(s)",
              release.composition)
    want_labels = [[part, c] for part in ("D1", "D2") for c in cols] if split else [[c] for c in cols]
    _check_labels(release, want_labels, "must be the column names (prefixed by D1/D2 for a split)")
    _check_sensitivity(release, -d * math.log(a), "-d log(a) (censored log-sums, Guo et al. (2022) §3.1)")
    eps2 = meta["epsilon_2"]
    _check_epsilon(meta, "epsilon_1", release.mechanism.guarantee().epsilon, "the Laplace mechanism")
    scales = meta["laplace_scale_logmean"]
    want = [float(release.mechanism.scale) / m for m in n_parts]
    if len(scales) != len(want) or not all(_close(s, w) for s, w in zip(scales, want, strict=False)):
        _fail("metadata.laplace_scale_logmean", f"must be mechanism.scale / n_parts = {want}", scales)
    comps = release.components
    if not comps:
        if eps2 != 0.0:
            _fail("metadata.epsilon_2", "must be 0 when the threshold was fixed (no selection component)", eps2)
        for key in ("candidates", "noisy_counts", "noisy_rates", "threshold_index", "target_rate"):
            if key in meta:
                _fail(f"metadata.{key}", "must be absent when the threshold was fixed", meta[key])
        return
    if len(comps) != 1:
        _fail("components", "must hold exactly one threshold-selection release", len(comps))
    comp = comps[0]
    if comp.n != n:
        _fail("components[0].n", f"must equal n = {n}", comp.n)
    if comp.secure != release.secure:
        _fail("components[0].secure", f"must equal the release's secure flag ({release.secure})", comp.secure)
    _check_epsilon(meta, "epsilon_2", comp.mechanism.guarantee().epsilon, "the selection component")
    for key in ("candidates", "noisy_counts", "noisy_rates", "threshold_index", "target_rate"):
        if key not in meta:
            _fail(f"metadata.{key}", "is missing (required with a threshold-selection component)", None)
    cand = meta["candidates"]
    _check_increasing(cand)
    if cand != [float(c) for c in comp.metadata["candidates"]]:
        _fail("metadata.candidates", "must equal the selection component's candidates", cand)
    noisy = meta["noisy_counts"]
    if noisy != np.maximum(comp.values, 0).tolist():
        _fail("metadata.noisy_counts", "must be max(0, the selection component's values) (Algorithm 1)", noisy)
    rates = noisy_rates(noisy, len(cand))
    # Algorithm 1 keeps the largest index whose rate is at most t_c, or the first one when there is none or
    # every noisy count is 0; the rates of non-negative counts never decrease, so that is a count
    l_idx = max(0, int(np.count_nonzero(rates <= meta["target_rate"])) - 1) if any(noisy) else 0
    if meta["threshold_index"] != l_idx:
        _fail("metadata.threshold_index", f"must be the index Algorithm 1 selects from the noisy counts ({l_idx})",
              meta["threshold_index"])
    got_rates = meta["noisy_rates"]
    if len(got_rates) != rates.size or not np.allclose(got_rates, rates, rtol=_RTOL, atol=0.0):
        _fail("metadata.noisy_rates", "must be the cumulative shares of the noisy counts", got_rates)
    if not _close(a, cand[l_idx]):
        _fail("metadata.a", f"must be the selected candidate candidates[{l_idx}] = {cand[l_idx]!r}", a)


#: The Dirichlet statistics, by schema.
SCHEMAS: tuple[StatisticSchema, ...] = (
    StatisticSchema(
        "dirichlet_censoring_counts",
        families=("geometric",),
        required={"candidates": _CANDIDATES, "clipped_at_zero": BOOL, "note": STR},
        check=_check_censoring_counts,
        sensitivity="2 in L1 (one record moves between two intervals; Guo et al. 2022, Algorithm 1)",
    ),
    StatisticSchema(
        "dirichlet_logmean",
        families=("laplace",),
        compositions=("joint", "parallel"),
        required={
            "columns": NAMES,
            "d": Int(minimum=2),
            "units": STR,
            "threshold_selection": STR,
            "a": OPEN_UNIT,
            "n_parts": ListOf(Int(minimum=1)),
            "epsilon_1": POSITIVE,
            "epsilon_2": NONNEGATIVE,
            "laplace_scale_logmean": FLOAT_LIST,
            "zeros": OneOf(("error", "censor")),
            "simplex_tol": NONNEGATIVE,
        },
        optional={
            "candidates": _CANDIDATES,
            "target_rate": Float(gt=0.0, le=1.0),
            "noisy_counts": ListOf(Int(minimum=0)),
            "noisy_rates": FLOAT_LIST,
            "threshold_index": INT,
        },
        min_n=2,
        check=_check_dirichlet_logmean,
        components=("dirichlet_censoring_counts",),
        sensitivity="-d log(a) in L1 on the censored log-sums (Guo et al. 2022, §3.1)",
    ),
)
