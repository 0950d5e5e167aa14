"""Baseline estimators compared with Bayes-NA in Wang et al. (2026) §5: Li-Kendall and Asghar-dpc."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate, optimize, special

from .. import _validation as v
from .._validation import owned
from ..exceptions import NoiseawareValueError
from ..release import Release
from ._higham import nearest_correlation

__all__ = ["AsgharResult", "asghar_dpc", "li_kendall", "tetrachoric"]


def li_kendall(release: Release, *, floor: float = 1e-6) -> np.ndarray:
    r"""Li-Kendall estimate of the copula correlation (Li et al. 2014, Algorithm 5).

    From a ``"kendall_pairs"`` release: :math:`\tilde P = \sin(\pi \tilde\tau / 2)` with unit
    diagonal; if it is not positive definite, negative eigenvalues are replaced by ``floor``
    (Rousseeuw & Molenberghs' eigenvalue method, Algorithm 5 step 3) and the result rescaled to
    a unit diagonal.

    Raises
    ------
    ValueError
        If the release is not a ``"kendall_pairs"`` release.
    """
    if not isinstance(release, Release) or release.statistic != "kendall_pairs":
        raise NoiseawareValueError("li_kendall: needs a 'kendall_pairs' Release (from privatize).")
    p = int(release.metadata["p"])
    tau = np.clip(release.values.astype(np.float64), -1.0, 1.0)
    P = np.eye(p)
    for (j, k), t in zip(release.metadata["pairs"], tau.tolist(), strict=True):
        P[j, k] = P[k, j] = np.sin(np.pi * t / 2.0)
    w, q = np.linalg.eigh(P)
    if np.min(w) <= 0:
        P = (q * np.maximum(w, floor)) @ q.T
        d = 1.0 / np.sqrt(np.diag(P))
        P = P * d[:, None] * d[None, :]
        np.fill_diagonal(P, 1.0)
    return P


# ----------------------------------------------------------------------------- Asghar-dpc
_ASGHAR = "asghar_dpc"


@dataclass(frozen=True)
class AsgharResult:
    """Output of :func:`asghar_dpc`.

    Attributes
    ----------
    R : ndarray, shape (p, p)
        The Asghar-dpc estimate: nearest correlation matrix to ``R_pairwise``.
    R_pairwise : ndarray, shape (p, p)
        Per-pair estimates from the post-processed noisy tables (may be indefinite).
    release : Release
        What was released: the ``4 * p(p-1)/2`` noisy cell counts (statistic ``"vector"``, one
        joint Laplace release). Everything else is post-processing of it.
    thresholds : tuple of float
        The public cut points used to dichotomize each column.
    columns : tuple of str
    """

    R: np.ndarray
    R_pairwise: np.ndarray
    release: Release
    thresholds: tuple[float, ...]
    columns: tuple[str, ...]


def _upper_orthant(a: float, b: float, r: float) -> float:
    r"""``P(Z_1 > a, Z_2 > b)`` for a standard bivariate normal with correlation ``r``.

    Deterministic quadrature of :math:`\Phi(-a)\Phi(-b) + \frac{1}{2\pi}\int_0^{\arcsin r}
    \exp\{-(a^2 + b^2 - 2ab\sin\theta) / (2\cos^2\theta)\}\,d\theta`.
    """
    pa, pb = float(special.ndtr(-a)), float(special.ndtr(-b))
    if r >= 1.0:  # the Frechet bounds, exactly (the integrand is singular at arcsin(+-1))
        return min(pa, pb)
    if r <= -1.0:
        return max(0.0, pa + pb - 1.0)
    base = pa * pb
    if r == 0.0:
        return base

    def g(th: float) -> float:
        c2 = math.cos(th) ** 2
        return math.exp(-(a * a + b * b - 2.0 * a * b * math.sin(th)) / (2.0 * c2)) if c2 > 0 else 0.0

    val, _ = integrate.quad(g, 0.0, math.asin(r), epsabs=1e-13, epsrel=1e-11, limit=200)
    return base + val / (2.0 * math.pi)


@owned("tetrachoric")
def tetrachoric(p11: float, p1: float, p2: float) -> float:
    r"""Latent Gaussian correlation matching a 2 x 2 table of proportions (tetrachoric correlation).

    Solves :math:`P(Z_1 > \Phi^{-1}(1 - p_1),\ Z_2 > \Phi^{-1}(1 - p_2);\ r) = p_{11}` for ``r``,
    where ``p_1``, ``p_2`` are the proportions "high" of each variable and ``p_11`` the proportion
    high on both. The left side increases in ``r`` from :math:`\max(0, p_1 + p_2 - 1)` (``r = -1``)
    to :math:`\min(p_1, p_2)` (``r = 1``); at or beyond these bounds the result is -1 or 1. If a
    margin is 0 or 1 every ``r`` fits the table, and 0 is returned. At
    ``p_1 = p_2 = 1/2`` this is Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian
    Copula Correlations*, eq. (7) inverted, :math:`r = \sin(2\pi(p_{11} - 1/4))`.

    Parameters
    ----------
    p11, p1, p2 : float
        Proportions in [0, 1].

    Returns
    -------
    float
        ``r`` in [-1, 1].

    Raises
    ------
    ValueError
        If a proportion is not in [0, 1].

    Examples
    --------
    >>> round(tetrachoric(0.25 + 1 / 12, 0.5, 0.5), 10)  # sin(pi / 6)
    0.5
    """
    p11 = v.finite("p11", p11)
    p1 = v.finite("p1", p1)
    p2 = v.finite("p2", p2)
    for name, x in (("p11", p11), ("p1", p1), ("p2", p2)):
        if not 0.0 <= x <= 1.0:
            v.refuse(name, "must be a proportion in [0, 1]", x)
    if min(p1, p2) <= 0.0 or max(p1, p2) >= 1.0:  # a constant variable: every r fits the table
        return 0.0
    a, b = float(special.ndtri(1.0 - p1)), float(special.ndtri(1.0 - p2))
    if p11 <= _upper_orthant(a, b, -1.0):  # at or below max(0, p1 + p2 - 1)
        return -1.0
    if p11 >= _upper_orthant(a, b, 1.0):  # at or above min(p1, p2)
        return 1.0
    f = lambda r: _upper_orthant(a, b, r) - p11  # noqa: E731
    with warnings.catch_warnings():  # quad's roundoff notes near |r| = 1 do not matter to the root
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        return float(optimize.brentq(f, -1.0, 1.0, xtol=1e-12, rtol=1e-12, maxiter=200))


def _asghar_cells(x: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Cell counts (high-high, high-low, low-high, low-low) of every column pair, shape (k, 4)."""
    hi = (x >= thresholds[None, :]).astype(np.int64)
    lo = 1 - hi
    iu, ju = np.triu_indices(x.shape[1], 1)
    return np.stack(
        [
            np.sum(hi[:, iu] * hi[:, ju], axis=0),
            np.sum(hi[:, iu] * lo[:, ju], axis=0),
            np.sum(lo[:, iu] * hi[:, ju], axis=0),
            np.sum(lo[:, iu] * lo[:, ju], axis=0),
        ],
        axis=1,
    )


def _asghar_pair(noisy: np.ndarray) -> float:
    """Post-process one noisy 2 x 2 table: clip at 0, normalize, noisy margins, tetrachoric r."""
    c = np.maximum(np.asarray(noisy, dtype=np.float64), 0.0)
    s = float(c.sum())
    if s <= 0.0:  # every cell clipped: the table carries no information
        return 0.0
    q = c / s
    return tetrachoric(float(q[0]), min(1.0, float(q[0] + q[1])), min(1.0, float(q[0] + q[2])))


@owned(_ASGHAR)
def asghar_dpc(
    data: Any,
    *,
    epsilon: float,
    thresholds: Any,
    columns: Sequence[str] | None = None,
    rng: np.random.Generator | None = None,
) -> AsgharResult:
    r"""Asghar-dpc: Asghar et al. (2020)'s DP Gaussian copula as configured in Wang et al. (2026) §5.

    Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula Correlations*, §5
    adapts Asghar et al. (2020, JPC 10(2)) to estimate only
    the copula correlation: every variable is dichotomized at a *public* cut point (there, the
    theoretical median of its marginal, rounded to two decimals), the whole budget goes to the
    two-way tables of their Algorithm 2, and the noisy row and column sums of each table replace
    the one-way marginals of their Algorithm 1. This function runs both sides:

    **Released (curator side).** For each of the ``k = p(p-1)/2`` column pairs, the 2 x 2 table
    of counts (high-high, high-low, low-high, low-low), with "high" meaning ``x >= threshold``.
    The ``4k`` counts are released once with the Laplace mechanism (``privatize(...,
    statistic="vector", mechanism="laplace")``), joint L1 sensitivity ``2k`` (substituting one
    record moves it between two cells of each table), so the Laplace scale is ``2k / epsilon`` --
    the same as ``epsilon / k`` per table with scale ``2 / (epsilon / k)``, Asghar et al.'s
    ``Lap(2 / epsilon')`` per two-way marginal. The release is ``epsilon``-DP in total (pure DP,
    substitution neighbours, ``n`` public). Without ``rng`` the noise comes from OpenDP's
    exact sampler; with ``rng`` it is simulation mode and the release says ``secure=False``.

    **Estimated (post-processing).** Per pair, negative noisy counts are clipped to 0 (the
    source of this method's bias noted in Wang et al. (2026) §1 and §5.1: an emptied high-high cell gives
    ``r = -1``), the table is normalized to proportions, its row and column sums give the
    margins, and the latent correlation is the :func:`tetrachoric` root of
    :math:`\Phi_2(\Phi^{-1}(p_1), \Phi^{-1}(p_2); r) = p_{11}` (Asghar et al. match the same
    Gaussian orthant probability by grid search). The matrix of pairwise roots is projected
    onto the correlation matrices with :func:`nearest_correlation` (Higham 2002); Asghar et al.
    use the nearest PSD matrix rescaled to a unit diagonal, which coincides when no projection
    is needed (always for ``p = 2``).

    Parameters
    ----------
    data : array_like or pandas.DataFrame, shape (n, p)
        The confidential data, numeric, finite, ``p >= 2``.
    epsilon : float
        Total privacy budget, split evenly over the ``k`` tables.
    thresholds : array_like of float, shape (p,)
        Public, data-independent cut points, one per column (e.g. the theoretical medians rounded
        to two decimals as in Wang et al. (2026) §5). Computing them from the data would spend budget that
        is not accounted for here.
    columns : sequence of str, optional
        Column names (default: the DataFrame's, or ``x0, x1, ...``).
    rng : numpy.random.Generator, optional
        Simulation mode (seeded, not secure).

    Returns
    -------
    AsgharResult
        ``R`` (the estimate), ``R_pairwise``, ``release`` (the noisy cells), ``thresholds``,
        ``columns``.

    Raises
    ------
    ValueError, TypeError
        For a bad budget, non-numeric / non-finite data or thresholds, or a number of thresholds
        that is not ``p``.

    References
    ----------
    H. J. Asghar, M. Ding, T. Rakotoarivelo, S. Mrabet, M. A. Kaafar (2020). Differentially
    private release of datasets using Gaussian copula. Journal of Privacy and Confidentiality
    10(2). Wang et al. (2026) §1 (limitations), §5 (configuration), Figure 1 (MAE comparison).

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware.datasets import demo_copula_data, MIXED_MARGINALS_P5
    >>> x, R, cols = demo_copula_data(seed=3, n=2000)
    >>> cuts = [round(float(m.median()), 2) for m in MIXED_MARGINALS_P5]
    >>> res = asghar_dpc(x, epsilon=1.0, thresholds=cuts, columns=cols, rng=np.random.default_rng(0))
    >>> res.release.guarantee.epsilon, res.release.values.shape
    (1.0, (40,))
    >>> bool(np.all(np.linalg.eigvalsh(res.R) > -1e-9))
    True
    """
    from .._privatize import as_matrix, privatize

    eps = v.epsilon(epsilon)
    x, names = as_matrix(data, columns)
    n, p = x.shape
    cuts = np.asarray(thresholds) if not isinstance(thresholds, np.ndarray) else thresholds
    if cuts.dtype.kind not in "biuf":
        raise NoiseawareValueError(v.message("thresholds", "must be numbers", thresholds))
    cuts = v.finite_array("thresholds", cuts)
    if cuts.shape != (p,):
        raise NoiseawareValueError(
            f"{_ASGHAR}: thresholds must give one public cut point per column ({p}); got shape {cuts.shape}."
        )
    cells = _asghar_cells(x, cuts)  # (k, 4)
    k = cells.shape[0]
    iu, ju = np.triu_indices(p, 1)
    kinds = ("hi,hi", "hi,lo", "lo,hi", "lo,lo")
    labels = [(names[i], names[j], c) for i, j in zip(iu, ju, strict=True) for c in kinds]
    release = privatize(
        cells.ravel().astype(np.float64),
        statistic="vector",
        epsilon=eps,
        mechanism="laplace",
        sensitivity=2.0 * k,
        labels=labels,
        n=n,
        rng=rng,
    )
    noisy = np.asarray(release.values, dtype=np.float64).reshape(k, 4)
    rhat = np.eye(p)
    for (i, j), table in zip(zip(iu, ju, strict=True), noisy, strict=True):
        rhat[i, j] = rhat[j, i] = _asghar_pair(table)
    return AsgharResult(
        R=nearest_correlation(rhat).matrix,
        R_pairwise=rhat,
        release=release,
        thresholds=tuple(float(c) for c in cuts),
        columns=tuple(names),
    )
