r"""The ``dirichlet_logmean`` statistic: Guo et al. (2022) Algorithm 1 (DPSS).

Registered with :func:`noiseaware.privatize`.

Algorithm 1 of Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional Data* (§3.2-3.3):

1. Candidate thresholds :math:`0=a_0<a_1<\dots<a_M<a_{M+1}=1`; counts
   :math:`s_m=\#\{i: a_{m-1}\le\min_j x_{ij}<a_m\}`, :math:`m=1..M+1`. Moving one record changes
   two counts by one, so the vector has L1 sensitivity 2; it is released with the geometric
   mechanism (``alpha = exp(-epsilon_2/2)``) and clipped at 0:
   :math:`s_{G,m}=\max\{0, s_m+\varepsilon^G_m\}` (clipping is post-processing).
2. :math:`\hat p_{G,m}=\sum_{l\le m}s_{G,l}\big/\sum_{l\le M+1}s_{G,l}`, the plain ratio of sums of
   §3.2. **The printed** :math:`\min\{s_{G,l},0\}` **in Algorithm 1 is a misprint**: the clipped
   counts are :math:`\ge 0`, so that minimum is always 0 and the ratio would be 0/0; we read it as
   the §3.2 definition (and Supplement S2's consistency proof, which needs exactly this ratio).
   If every noisy count is 0 the ratio is undefined and the smallest candidate is used.
3. :math:`a=a_l` for the largest :math:`l` with :math:`\hat p_{G,l}\le t_c` (the ratios are
   non-decreasing, so this is the :math:`l` with :math:`\hat p_{G,l}\le t_c<\hat p_{G,l+1}`), and
   :math:`a=a_1` when there is none.
4. :math:`S_L(D,a)=S_0(D,a)+\mathrm{Laplace}(-d\log a/(n\epsilon_1))^d`, with
   :math:`S_0(D,a)=n^{-1}\sum_i\log\max(x_i,a)` (L1 sensitivity :math:`-d\log(a)/n`, §3.1);
   optionally on a uniformly random split into :math:`D_1` (prior elicitation, size
   :math:`n_1`) and :math:`D_2`, each with its own :math:`n_l` (parallel composition).

Theorem 2: the whole release is :math:`(\epsilon_1+\epsilon_2)`-DP.

**Units of the record.** The Laplace noise is stated on the censored *log-sums*
:math:`n_l S_0(D_l,a)` (sensitivity :math:`-d\log a`, scale :math:`-d\log a/\epsilon_1`, the same
for both parts of a split), so one mechanism describes every row exactly and the split is a
``"parallel"`` release; ``values[l] / n_l`` is :math:`S_L(D_l,a)` and its Laplace scale is
``mechanism.scale / n_l`` (:func:`noiseaware.dirichlet.parts` does this).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as v
from .._statistics import noisy_rates
from .._validation import owned
from ..exceptions import NoiseawareValueError
from ..mechanisms import GeometricMechanism, Guarantee, LaplaceMechanism
from ..release import Release, expected_guarantee
from . import _dask
from ._common import Context, as_matrix, censoring_counts, fit_sum, no_extra, shares_of_checked_budget, statistic
from ._fsum import exact_column_sums

__all__ = ["DEFAULT_CANDIDATES", "DEFAULT_SIMPLEX_TOL", "censoring_counts", "select_threshold"]

#: Candidate thresholds of Guo et al. (2022) §5.1.
DEFAULT_CANDIDATES = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1)
#: Rows must sum to 1 within this absolute tolerance (then they are renormalized).
DEFAULT_SIMPLEX_TOL = 1e-6
_OWNER = "privatize(statistic='dirichlet_logmean')"


def select_threshold(noisy_counts: Any, candidates: Any, target_rate: float) -> tuple[int, np.ndarray]:
    r"""Choice of Guo et al. (2022) Algorithm 1: index ``l`` (0-based) of ``a``, noisy rates :math:`\hat p_{G,1..M}`.

    ``l`` is the largest index with :math:`\hat p_{G,l}\le t_c`, or 0 (``a_1``) if there is none
    or if all noisy counts are 0 (rates then reported as 1, :func:`noiseaware._statistics.noisy_rates`).
    Pure post-processing of the noisy counts, so the loader checks a ``dirichlet_logmean`` record's
    choice against the same rates.

    Examples
    --------
    >>> select_threshold(np.array([1, 2, 17, 980]), np.array([1e-3, 1e-2, 0.1]), 0.01)
    (1, array([0.001, 0.003, 0.02 ]))
    """
    s = np.asarray(noisy_counts, dtype=np.float64)
    rates = noisy_rates(s, len(candidates))
    if s.sum() <= 0:
        return 0, rates
    ok = np.nonzero(rates <= target_rate)[0]
    return (int(ok[-1]) if ok.size else 0), rates
_OPTIONS = {
    "candidates",
    "target_rate",
    "threshold",
    "threshold_share",
    "split",
    "columns",
    "zeros",
    "simplex_tol",
}


def _check_simplex(x: np.ndarray, zeros: str, tol: float) -> np.ndarray:
    if np.any(x < 0):
        i, j = np.argwhere(x < 0)[0]
        raise NoiseawareValueError(
            f"{_OWNER}: compositions must have non-negative parts; got {int(np.sum(x < 0))} negative part(s), "
            f"e.g. row {int(i)} column {int(j)} = {float(x[i, j])!r}."
        )
    sums = x.sum(axis=1)
    bad = np.abs(sums - 1.0) > tol
    if np.any(bad):
        i = int(np.argmax(bad))
        raise NoiseawareValueError(
            f"{_OWNER}: rows must lie on the simplex (sum to 1 within simplex_tol={tol!r}); got "
            f"{int(bad.sum())} row(s) off it, e.g. row {i} sums to {float(sums[i])!r}. Divide each row by its sum, "
            "or raise simplex_tol for rounded shares."
        )
    if np.any(x == 0) and zeros == "error":
        raise NoiseawareValueError(
            f"{_OWNER}: compositions have {int(np.sum(x == 0))} zero part(s) in {int(np.any(x == 0, axis=1).sum())} "
            "row(s); the Dirichlet model gives them probability 0. Pass zeros='censor' to let the threshold a "
            "replace them (log max(x, a)), or drop those rows."
        )
    return x / sums[:, None]


@dataclass(frozen=True)
class _LogmeanPlan:
    """The checked data and options of one ``dirichlet_logmean`` run.

    ``x`` is the in-memory data (checked and renormalized; None for Dask data, read through ``src``,
    a :class:`~noiseaware._privatize._dask.DirichletSource`). ``threshold`` is the curator's fixed ``a``;
    without it ``candidates``, ``target_rate`` and ``share`` (``threshold_share``) choose ``a`` (Algorithm 1).
    """

    eps: float
    zeros: str
    tol: float
    names: list[str]
    n: int
    d: int
    x: np.ndarray | None
    src: Any
    n1: int | None
    threshold: float | None = None
    candidates: np.ndarray = field(default_factory=lambda: np.zeros(0))
    target_rate: float = 0.0
    share: float = 0.0


@dataclass(frozen=True)
class _Threshold:
    """The threshold ``a``, the budget split ``eps1`` (log-sums) / ``eps2`` (counts) and what choosing it released."""

    a: float
    eps1: float
    eps2: float
    meta: dict[str, Any]
    components: tuple[Release, ...] = ()


@owned(_OWNER)
def _logmean_data(data: Any, options: dict[str, Any], zeros: str, tol: float) -> tuple[np.ndarray | None, Any]:
    """The in-memory data, checked (``x``), or the Dask data's source (``src``): one of the two is None."""
    if _dask.is_dask(data):  # data larger than memory: block sums (_dask.py), the same release
        if options.get("split") is not None:
            raise NoiseawareValueError(
                f"{_OWNER}: split is not available for Dask data (the random partition needs all n rows at once); "
                "split the records yourself and privatize each part, or use no split."
            )
        return None, _dask.DirichletSource(data, options.get("columns"), zeros, tol)
    x, names = as_matrix(data, options.get("columns"))
    return _check_simplex(x, zeros, tol), names


@owned(_OWNER)
def _candidates(raw: Any) -> np.ndarray:
    """The candidate thresholds, sorted: a non-empty list of distinct values in (0, 1)."""
    cand = v.finite_array("candidates", raw)
    if cand.ndim != 1 or cand.size < 1 or np.any(cand <= 0) or np.any(cand >= 1):
        v.refuse("candidates", "must be a non-empty list of thresholds in (0, 1)", raw)
    cand = np.sort(cand)
    if np.any(np.diff(cand) == 0):
        v.refuse("candidates", "must be distinct", cand.tolist())
    return cand


@owned(_OWNER)
def _logmean_plan(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> _LogmeanPlan:
    """The options and the data, checked in the order their errors are reported, before any budget is charged."""
    no_extra(options, _OPTIONS)
    v.choice("mechanism", mechanism or "laplace", ("laplace",))
    eps = ctx.require("epsilon")
    zeros = v.choice("zeros", options.get("zeros", "error"), ("error", "censor"))
    tol = v.nonnegative("simplex_tol", options.get("simplex_tol", DEFAULT_SIMPLEX_TOL))
    x, found = _logmean_data(data, options, zeros, tol)
    if x is None:
        src, names, (n, d) = found, found.names, (found.n, found.d)
    else:
        src, names, (n, d) = None, found, x.shape
    n1 = _split_size(options.get("split"), n)
    common = {"eps": eps, "zeros": zeros, "tol": tol, "names": names, "n": n, "d": d, "x": x, "src": src, "n1": n1}
    fixed = options.get("threshold")
    if fixed is not None:
        if any(k in options for k in ("candidates", "target_rate", "threshold_share")):
            raise NoiseawareValueError(
                f"{_OWNER}: threshold=... fixes a; do not also give candidates, target_rate or threshold_share."
            )
        return _LogmeanPlan(**common, threshold=v.open_unit("threshold", fixed))
    cand = _candidates(options.get("candidates", DEFAULT_CANDIDATES))
    t_c = v.open_unit("target_rate", options.get("target_rate", 0.01))
    share = v.open_unit("threshold_share", options.get("threshold_share", 0.25))
    return _LogmeanPlan(**common, candidates=cand, target_rate=t_c, share=share)


def _fixed_threshold(ctx: Context, plan: _LogmeanPlan, a: float) -> _Threshold:
    """The curator's ``a``: the whole budget goes to the log-sums (charged here, before any noise)."""
    ctx.charge(Guarantee(epsilon=plan.eps), label="dirichlet_logmean")
    return _Threshold(a, plan.eps, 0.0, {"threshold_selection": "fixed by the curator (no budget spent)"})


def _selected_threshold(ctx: Context, plan: _LogmeanPlan) -> _Threshold:
    """Algorithm 1 steps 1-3: noisy censoring counts (``eps2``), then ``a``; the whole budget is charged first."""
    cand = plan.candidates
    eps2 = plan.eps * plan.share
    eps1 = fit_sum(plan.eps, [eps2], plan.eps - eps2)  # the two guarantees add up to at most eps in float64
    counts = censoring_counts(plan.x, cand) if plan.x is not None else plan.src.censoring_counts(cand)
    with shares_of_checked_budget():
        geo = GeometricMechanism.from_epsilon(eps2, sensitivity=2)
    ctx.charge(geo.guarantee().compose(Guarantee(epsilon=eps1)), label="dirichlet_logmean")
    raw = geo.release(counts, rng=ctx.rng)
    noisy = np.maximum(raw, 0)
    l_idx, rates = select_threshold(noisy, cand, plan.target_rate)
    labels_c = [(f"[{lo:g}, {hi:g})",) for lo, hi in zip([0.0, *cand], [*cand, 1.0], strict=True)]
    comp_meta = {
        "clipped_at_zero": True,
        "candidates": cand.tolist(),
        "note": "values are the unclipped noisy counts; the selection uses max(0, value) (Algorithm 1)",
    }
    g_counts = expected_guarantee(geo, "joint", raw.shape)
    comp = ctx.release("dirichlet_censoring_counts", raw, labels_c, geo, "joint", g_counts, plan.n, comp_meta)
    meta = {
        "candidates": cand.tolist(),
        "target_rate": plan.target_rate,
        "noisy_counts": noisy.tolist(),
        "noisy_rates": rates.tolist(),
        "threshold_index": l_idx,
        "threshold_selection": "Algorithm 1 of Guo et al. (2022) (geometric counts, plain ratio of sums)",
    }
    return _Threshold(float(cand[l_idx]), eps1, eps2, meta, (comp,))


def _noisy_log_sums(
    ctx: Context, plan: _LogmeanPlan, thr: _Threshold
) -> tuple[np.ndarray, LaplaceMechanism, list[np.ndarray]]:
    """Algorithm 1 step 4: the censored log-sums of D (or of D1 and D2) with Laplace noise (``eps1``).

    Returns the noisy sums, their mechanism and the index sets of the split (empty without one).
    """
    parts = _partition(plan.n, plan.n1, ctx) if plan.n1 is not None else []  # no split: all rows, no index array
    sens = -plan.d * math.log(thr.a)
    with shares_of_checked_budget():
        mech = LaplaceMechanism.from_epsilon(thr.eps1, sensitivity=sens)
    if plan.x is not None:
        # exact, correctly rounded sums (_fsum.py): the same bits whatever the blocking (Dask data)
        logx = np.log(np.maximum(plan.x, thr.a))
        sums = np.stack([exact_column_sums(logx[idx]) for idx in parts]) if parts else exact_column_sums(logx)
    else:
        sums = plan.src.log_sums(thr.a)
    return mech.release(sums, rng=ctx.rng), mech, parts


def _logmean_release(
    ctx: Context,
    plan: _LogmeanPlan,
    thr: _Threshold,
    noisy_sums: np.ndarray,
    mech: LaplaceMechanism,
    parts: list[np.ndarray],
) -> Release:
    """The ``dirichlet_logmean`` release: the noisy log-sums, and the censoring counts as a component if any."""
    composition = "parallel" if parts else "joint"
    n_parts = [int(idx.size) for idx in parts] or [plan.n]
    if parts:
        labels: list[tuple[str, ...]] = [(part, c) for part in ("D1", "D2") for c in plan.names]
    else:
        labels = [(c,) for c in plan.names]
    meta: dict[str, Any] = {
        "columns": plan.names,
        "d": plan.d,
        "units": "censored log-sums; divide row l by n_parts[l]",
        **thr.meta,
        "a": thr.a,
        "n_parts": n_parts,
        "epsilon_1": thr.eps1,
        "epsilon_2": thr.eps2,
        "laplace_scale_logmean": [mech.scale / m for m in n_parts],
        "zeros": plan.zeros,
        "simplex_tol": plan.tol,
    }
    g = expected_guarantee(mech, composition, noisy_sums.shape)
    for c in thr.components:
        g = g.compose(c.guarantee)
    return ctx.release(
        "dirichlet_logmean", noisy_sums, labels, mech, composition, g, plan.n, meta, components=thr.components
    )


@statistic("dirichlet_logmean")
def _dirichlet_logmean(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """Guo et al. (2022) Algorithm 1 (DPSS): censored mean-log statistic with a DP threshold (module docstring).

    The steps: the options and data (:func:`_logmean_plan`); the threshold, fixed or chosen from noisy
    counts, with the whole budget charged before any noise (:func:`_fixed_threshold`,
    :func:`_selected_threshold`); the noisy log-sums (:func:`_noisy_log_sums`); the release.
    """
    plan = _logmean_plan(data, ctx, mechanism, options)
    if plan.threshold is not None:
        thr = _fixed_threshold(ctx, plan, plan.threshold)
    else:
        thr = _selected_threshold(ctx, plan)
    noisy_sums, mech, parts = _noisy_log_sums(ctx, plan, thr)
    return _logmean_release(ctx, plan, thr, noisy_sums, mech, parts)


@owned(_OWNER)
def _split_size(split: Any, n: int) -> int | None:
    """``n1``, the size of D1 of a split (None for no split); checked before any noise is drawn."""
    if split is None:
        return None
    if isinstance(split, float) and not float(split).is_integer():
        frac = v.open_unit("split", split)
        n1 = round(frac * n)
    else:
        n1 = v.integer("split", split, minimum=1)
    if n1 < 2 or n - n1 < 2:
        raise NoiseawareValueError(
            f"{_OWNER}: split must leave at least 2 records in each of D1 and D2; got split={split!r} with "
            f"n={n} (n1={n1}, n2={n - n1}). Use a smaller split or no split."
        )
    return n1


def _partition(n: int, n1: int | None, ctx: Context) -> list[np.ndarray]:
    """Index sets of D (no split) or of (D1, D2), a uniformly random partition (Algorithm 1).

    The partition is data-independent randomness, not privacy noise.
    """
    if n1 is None:
        return [np.arange(n)]
    perm = ctx.key_rng().permutation(n)
    return [np.sort(perm[:n1]), np.sort(perm[n1:])]
