"""Pairwise statistics of a data matrix: median two-way tables (Wang et al. 2026) and Kendall's tau (Li et al. 2014)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import _validation as v
from .._statistics import kendall_sensitivity
from .._validation import current_owner, owned
from ..exceptions import NoiseawareValueError, UtilityWarning
from ..mechanisms import BTGM, RGM, TGM, GeometricMechanism, LaplaceMechanism, Mechanism
from ..release import Release
from . import _dask
from ._common import Context, as_matrix, even_share, finish, no_extra, shares_of_checked_budget, statistic

__all__ = ["kendall_tau_a", "median_split_indicators"]


def median_split_indicators(x: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """High/low indicators of Wang et al. (2026) §3.1-3.2 with lexicographic tie-breaking.

    For each column ``j`` the rows are ordered by the pairs ``(x_ij, k_ij)`` and exactly
    ``ceil(n/2)`` rows with the largest pairs are marked 1 ("at or above the median"); for odd
    ``n`` the extra row goes to the high side, as in the paper.

    Parameters
    ----------
    x : ndarray, shape (n, p)
        The data.
    keys : ndarray, shape (n, p)
        Data-independent random keys (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for
        Gaussian Copula Correlations*, §3.2).

    Returns
    -------
    ndarray of int64, shape (n, p)
    """
    n, p = x.shape
    h = math.ceil(n / 2)
    a = np.zeros((n, p), dtype=np.int64)
    for j in range(p):
        order = np.lexsort((keys[:, j], x[:, j]))  # ascending by x, then key
        a[order[n - h :], j] = 1
    return a


def _pair_labels_and_meta(names: list[str]) -> tuple[list[tuple[str, ...]], dict[str, Any]]:
    """Labels and metadata of the p(p-1)/2 column pairs in row-major upper-triangle order."""
    iu, ju = np.triu_indices(len(names), 1)
    pairs = [(int(i), int(j)) for i, j in zip(iu, ju, strict=True)]
    labels: list[tuple[str, ...]] = [(names[i], names[j]) for i, j in pairs]
    return labels, {"columns": names, "p": len(names), "pairs": [list(q) for q in pairs]}


def _warn_if_swamped(mech: Mechanism, high_count: int) -> None:
    """Warn when the noise standard deviation of every count exceeds the count's whole range."""
    owner = current_owner()
    alpha = math.exp(-1.0 / float(getattr(mech, "scale", 1.0 / getattr(mech, "epsilon", 1.0))))
    sd = math.sqrt(2.0 * alpha) / (1.0 - alpha)
    if sd > high_count:
        warnings.warn(
            f"{owner}: the noise standard deviation of each count ({sd:.3g}) exceeds the largest value a count "
            f"can take (ceil(n/2) = {high_count}); the release will carry almost no information. Use fewer "
            "columns (the budget is split over p(p-1)/2 pairs), more records or a larger epsilon.",
            UtilityWarning,
            stacklevel=4,
        )


def _median_mechanism(mech_name: str, eps_pair: float, h: int) -> Mechanism:
    """The per-pair mechanism of ``median_pairs``, calibrated to at most ``eps_pair``."""
    if mech_name == "geometric":
        return GeometricMechanism.from_epsilon(eps_pair, sensitivity=1)
    if mech_name == "tgm":
        return TGM.from_epsilon(eps_pair, lower=0, upper=h, sensitivity=1)
    if mech_name == "btgm":
        return BTGM.from_epsilon(eps_pair, lower=0, upper=h, sensitivity=1)
    return RGM(epsilon=eps_pair, lower=0, upper=h, sensitivity=1)


@statistic("median_pairs")
@owned("privatize(statistic='median_pairs')")
def _median_pairs(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """Wang et al. (2026) Algorithm S.1: all p(p-1)/2 high-high counts, each with sensitivity 1."""
    owner = "privatize(statistic='median_pairs')"
    no_extra(options, {"columns", "tie_keys"})
    mech_name = v.choice("mechanism", mechanism or "geometric", ("geometric", "tgm", "btgm", "rgm"))
    eps = ctx.require("epsilon")
    if _dask.is_dask(data):  # data larger than memory: the same counts, block by block (_dask.py)
        cols, tie_keys = options.get("columns"), options.get("tie_keys")
        counts, names, n = _dask.median_pair_counts(data, cols, ctx.rng, tie_keys)
    else:
        x, names = as_matrix(data, options.get("columns"))
        n, p = x.shape
        keys = options.get("tie_keys")
        if keys is None:
            keys = ctx.key_rng().standard_normal((n, p))
        else:
            keys = v.finite_array("tie_keys", keys)
            if keys.shape != (n, p):
                raise NoiseawareValueError(f"{owner}: tie_keys must have the data's shape {(n, p)}; got {keys.shape}.")
        a = median_split_indicators(x, keys)
        iu, ju = np.triu_indices(p, 1)
        counts = (a.T @ a)[iu, ju].astype(np.int64)
    k = counts.size
    eps_pair = even_share(eps, k)  # the k per-pair guarantees add up to at most eps in float64
    h = math.ceil(n / 2)
    mech: Mechanism
    try:
        with shares_of_checked_budget():
            mech = _median_mechanism(mech_name, eps_pair, h)
    except NoiseawareValueError as exc:
        raise NoiseawareValueError(
            f"{owner}: epsilon={eps!r} split over {k} pair(s) gives epsilon_per_pair={eps_pair!r}, which the "
            f"{mech_name} mechanism cannot use: {exc}"
        ) from exc
    labels, meta = _pair_labels_and_meta(names)
    meta |= {
        "high_count": h,
        "epsilon_per_pair": eps_pair,
        "bounds": [0, h],
        "tie_breaking": "lexicographic (value, data-independent N(0,1) key); Wang et al. 2026, §3.2",
    }
    _warn_if_swamped(mech, h)
    return finish(ctx, "median_pairs", counts, mech, "sequential", labels, n, meta)


def kendall_tau_a(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-a, ``(n_c - n_d) / C(n, 2)``, exact with ties (Li et al. 2014, §4, Lemma 4.1).

    Computed from SciPy's tau-b and the tie counts, ``n_c - n_d = tau_b sqrt((n0-n1)(n0-n2))``.
    """
    from scipy import stats

    n = x.size
    n0 = n * (n - 1) / 2.0

    def ties(a: np.ndarray) -> float:
        _, c = np.unique(a, return_counts=True)
        return float((c * (c - 1) / 2.0).sum())

    n1, n2 = ties(x), ties(y)
    if n1 == n0 or n2 == n0:
        return 0.0
    tau_b = float(stats.kendalltau(x, y, variant="b").statistic)
    return tau_b * math.sqrt((n0 - n1) * (n0 - n2)) / n0


@statistic("kendall_pairs")
@owned("privatize(statistic='kendall_pairs')")
def _kendall_pairs(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """Li et al. (2014) Algorithm 5: noisy pairwise Kendall's tau-a, Laplace noise of sensitivity 4/n.

    The budget is split evenly over the p(p-1)/2 pairs (sequential composition). The sensitivity
    is that of substitution neighbours with ``n`` public (:func:`noiseaware._statistics.kendall_sensitivity`);
    the paper's ``4/(n+1)`` understates it by a factor ``n/(n+1)``.
    """
    no_extra(options, {"columns"})
    v.choice("mechanism", mechanism or "laplace", ("laplace",))
    eps = ctx.require("epsilon")
    x, names = as_matrix(data, options.get("columns"))
    n, p = x.shape
    iu, ju = np.triu_indices(p, 1)
    taus = np.array([kendall_tau_a(x[:, i], x[:, j]) for i, j in zip(iu, ju, strict=True)])
    sens = kendall_sensitivity(n)
    eps_pair = even_share(eps, taus.size)
    with shares_of_checked_budget():
        mech = LaplaceMechanism.from_epsilon(eps_pair, sensitivity=sens)
    labels, meta = _pair_labels_and_meta(names)
    meta |= {
        "epsilon_per_pair": eps_pair,
        "estimand": "Kendall's tau-a",
    }
    return finish(ctx, "kendall_pairs", taus, mech, "sequential", labels, n, meta)


