"""MLE-NN: per-pair root of Wang et al. (2026) eq. (19), then the nearest correlation matrix."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import optimize, special

from .. import _core
from .. import _validation as v
from .._validation import owned
from ..exceptions import NoiseawareValueError
from ..release import Release
from ._higham import nearest_correlation

__all__ = ["MLEResult", "eta_from_r", "fisher_mean", "mle_nn", "mle_nn_pair", "r_from_eta"]


def eta_from_r(r: Any) -> np.ndarray:
    """``eta = 2 log((pi + 2 arcsin r) / (pi - 2 arcsin r))`` (Wang et al. 2026, eq. 9, natural parameter).

    The likelihoods' :func:`noiseaware._core.copula_log_odds` on NumPy (one formula).
    """
    return np.asarray(_core.copula_log_odds(_core.get_backend("numpy"), np.asarray(r, dtype=np.float64)))


def r_from_eta(eta: Any) -> np.ndarray:
    """Inverse of :func:`eta_from_r`: ``r = sin((pi/2) tanh(eta/4))``."""
    return np.sin(0.5 * np.pi * np.tanh(np.asarray(eta, dtype=np.float64) / 4.0))


@lru_cache(maxsize=64)
def _log_base(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Support and ``log C(h, t) + log C(n - h, h - t)`` for the median-split table (h = ceil(n/2))."""
    h = math.ceil(n / 2)
    t = np.arange(max(0, 2 * h - n), h + 1, dtype=np.float64)

    def lbinom(a: float, b: np.ndarray) -> np.ndarray:
        return special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(a - b + 1)

    return t, lbinom(h, t) + lbinom(n - h, h - t)


def fisher_mean(eta: float, n: int) -> float:
    """``E_eta(T)`` for the median-split table of ``n`` rows: right-hand side of eq. (19).

    Exact margins (``K = m = ceil(n/2)``, ``N = n``), so odd ``n`` is handled; the sum runs
    over the whole support in log space.
    """
    t, lb = _log_base(int(n))
    w = lb + eta * t
    w = np.exp(w - np.max(w))
    return float((w * t).sum() / w.sum())


@owned("mle_nn_pair")
def mle_nn_pair(t_tilde: float, n: int) -> float:
    """Solve eq. (19) ``t~ = E_r(T)`` for ``r`` (Wang et al. 2026, §4.1).

    Boundary cases: ``r = -1`` when ``t~`` is at or below the smallest possible count
    (0 for even ``n``, 1 for odd ``n``) and ``r = 1`` at or above ``ceil(n/2)``.
    """
    n = v.integer("n", n, minimum=2)
    tt = v.finite("t_tilde", t_tilde)
    t, _ = _log_base(n)
    if tt <= t[0]:
        return -1.0
    if tt >= t[-1]:
        return 1.0
    # E_eta(T) is increasing in eta; solve in eta, bracketing outward as needed.
    lo, hi = -8.0, 8.0
    while fisher_mean(lo, n) > tt and lo > -1e4:
        lo *= 2
    while fisher_mean(hi, n) < tt and hi < 1e4:
        hi *= 2
    f = lambda e: fisher_mean(e, n) - tt  # noqa: E731
    if f(lo) > 0:
        return -1.0
    if f(hi) < 0:
        return 1.0
    eta = optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-14, maxiter=500)
    return float(r_from_eta(eta))


@dataclass(frozen=True)
class MLEResult:
    """Output of :func:`mle_nn`.

    Attributes
    ----------
    R : ndarray
        Nearest correlation matrix to the pairwise estimates (the MLE-NN estimate).
    R_pairwise : ndarray
        Matrix of the per-pair roots of eq. (19) before projection (may be indefinite).
    columns : tuple of str
    """

    R: np.ndarray
    R_pairwise: np.ndarray
    columns: tuple[str, ...]


def mle_nn(release: Release) -> MLEResult:
    """MLE-NN (Wang et al. 2026, §4, Algorithm S.3) from a ``"median_pairs"`` release.

    Each pair's noisy count -- best from a range-preserving TGM / BTGM / RGM release, as the
    paper requires -- is plugged into eq. (19); the matrix of roots is projected onto the
    correlation matrices with :func:`nearest_correlation` (Higham 2002).

    Raises
    ------
    ValueError
        If the release is not a ``"median_pairs"`` release with ``n``.
    """
    if not isinstance(release, Release) or release.statistic != "median_pairs" or release.n is None:
        raise NoiseawareValueError("mle_nn: needs a 'median_pairs' Release (from privatize) with n.")
    p = int(release.metadata["p"])
    rhat = np.eye(p)
    for (j, k), t in zip(release.metadata["pairs"], release.values.ravel().tolist(), strict=True):
        rhat[j, k] = rhat[k, j] = mle_nn_pair(float(t), release.n)
    return MLEResult(nearest_correlation(rhat).matrix, rhat, tuple(release.metadata["columns"]))
