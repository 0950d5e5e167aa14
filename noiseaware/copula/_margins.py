r"""The exact posterior of a DPCopula margin's cell probabilities (data augmentation over the noisy counts).

Used by :func:`noiseaware.copula.fit_dpcopula`; see :func:`margin_posterior`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import owned

__all__ = ['A0_GRID', 'margin_posterior']

# ----------------------------------------------------------------------------- margins: exact DA
#: Grid of the hierarchical prior on ``a0`` (``prior="hierarchical"``): 41 values, log-uniform on [1e-3, 10].
A0_GRID = tuple(float(x) for x in np.logspace(-3.0, 1.0, 41))
#: Log of the relative weight below which the tails of a cell's posterior over its true count are cut.
_CUT = 80.0


def _nb_logpmf(c: np.ndarray, a0: float, beta: float) -> np.ndarray:
    """Log-pmf P(c) of the negative binomial c ~ Poisson(lambda), lambda ~ Gamma(a0, rate beta)."""
    from scipy import special

    return (
        special.gammaln(a0 + c)
        - special.gammaln(a0)
        - special.gammaln(c + 1.0)
        + a0 * math.log(beta / (beta + 1.0))
        - c * math.log1p(beta)
    )


def _count_posterior(y: np.ndarray, la: float, a0: float, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per cell: window start, log weights of c = start..start+L-1 (unnormalised), log normaliser.

    The weight of ``c`` is :math:`P_{NB}(c)\,\alpha^{|y-c|}`. The window keeps every ``c`` whose
    weight is within ``exp(-80)`` of the largest possible and bounds what it leaves out: above
    :math:`\max(y, \text{NB mode}, c_1)`, :math:`c_1` where :math:`(a_0+c)/(c+1) \le \alpha^{-1/2}`,
    successive weights fall at least by :math:`\alpha^{1/2}`, and below ``y - W_lo`` they are at
    most the NB's largest value on ``[0, y]`` times :math:`\alpha^{W_{lo}}`.
    """
    yc = np.maximum(y, 0).astype(np.float64)
    mode = max(0.0, math.floor((a0 - 1.0) / beta)) if a0 > 1.0 else 0.0
    top = np.minimum(yc, mode)  # where the NB is largest on [0, y]
    drop = np.maximum(_nb_logpmf(top, a0, beta) - _nb_logpmf(yc, a0, beta), 0.0)
    lo = np.maximum(yc - np.ceil((_CUT + drop) / -la), 0.0)
    # above c1 the NB ratio (a0 + c)/(c + 1) is below alpha**-0.5, so successive weights fall by alpha**0.5
    s = math.exp(-la / 2.0)
    c1 = max(0.0, (a0 - s) / (s - 1.0))
    start = np.maximum(yc, max(mode, c1))
    hi = start + math.ceil((_CUT + 10.0) / (-la / 2.0))
    L = int(np.max(hi - lo)) + 1
    c = lo[:, None] + np.arange(L)[None, :]
    logw = _nb_logpmf(c, a0, beta) + la * np.abs(y.astype(np.float64)[:, None] - c)
    logw = np.where(c <= hi[:, None], logw, -np.inf)
    mx = logw.max(axis=1, keepdims=True)
    lse = (mx + np.log(np.exp(logw - mx).sum(axis=1, keepdims=True)))[:, 0]
    return lo, logw, lse


@owned("margin_posterior")
def margin_posterior(
    noisy: Any,
    alpha: float,
    *,
    n: int | None = None,
    draws: int = 100,
    prior: float | str = 0.5,
    seed: Any = None,
) -> np.ndarray:
    r"""Independent exact posterior draws of a histogram's cell probabilities given its noisy counts.

    Model (one margin, ``K`` cells): :math:`\pi \sim \mathrm{Dirichlet}(a_0\mathbf 1)`, true counts
    :math:`c \mid \pi \sim \mathrm{Multinomial}(N, \pi)`, released :math:`y_k = c_k + e_k`,
    :math:`e_k` iid two-sided geometric with :math:`P(e)\propto\alpha^{|e|}`. It is written in its
    Poisson-Gamma form, :math:`\lambda_k \sim \mathrm{Gamma}(a_0, \beta)` iid,
    :math:`c_k \sim \mathrm{Poisson}(\lambda_k)`, :math:`\pi = \lambda/\sum\lambda` — the same
    Dirichlet prior and the same :math:`\pi \mid c \sim \mathrm{Dirichlet}(a_0 + c)`, with the
    total :math:`N` left free (the public ``n`` only sets :math:`\beta = a_0K/n`, the prior mean of
    :math:`\sum\lambda`). With :math:`\lambda` integrated out the true counts are independent
    negative binomials, so given ``y`` the cells are independent and

    .. math:: P(c_k \mid y_k, a_0) \propto \frac{\Gamma(a_0+c_k)}{\Gamma(a_0)\,c_k!}
              (1+\beta)^{-c_k}\,\alpha^{|y_k-c_k|},

    a 1-D law drawn by inverting its CDF on a window that leaves out less than
    :math:`e^{-80}` of relative weight; then :math:`\lambda_k \mid c_k \sim
    \mathrm{Gamma}(a_0+c_k, \beta+1)` and :math:`\pi = \lambda/\sum\lambda`. Draws are independent
    (no Markov chain, no burn-in, no sticking at small :math:`a_0`).

    ``prior="hierarchical"``: :math:`a_0` gets its own prior, uniform on the 41-point log grid
    :data:`A0_GRID` (:math:`10^{-3}` to 10); its posterior on the grid is exact (the product over
    cells of the windowed sums above), and each draw first draws :math:`a_0`. The data then choose
    how many pseudo-records the prior spreads over the cells — few when most cells look empty.

    Parameters
    ----------
    noisy : array of int, shape (K,)
        The released noisy counts.
    alpha : float
        The geometric noise parameter ``exp(-1/scale)`` of the release.
    n : int, optional
        Public number of records (sets ``beta``); default ``max(sum(noisy), K)``.
    draws : int
        Number of independent draws.
    prior : float or "hierarchical"
        Dirichlet concentration :math:`a_0` per cell, or ``"hierarchical"``.
    seed : int or Generator, optional
        Randomness.

    Returns
    -------
    ndarray, shape (draws, K)
        Draws of :math:`\pi`.

    Raises
    ------
    ValueError
        For bad counts, ``alpha`` outside (0, 1) or non-positive settings.

    Examples
    --------
    >>> pi = margin_posterior([480, 20, 510], alpha=0.5, draws=50, seed=0)
    >>> pi.shape, bool(abs(pi[:, 1].mean() - 0.02) < 0.01)
    ((50, 3), True)
    >>> margin_posterior([480, 20, 510, -3, 1, 0], alpha=0.5, draws=4, prior="hierarchical", seed=0).shape
    (4, 6)
    """
    y = v.integer_array("noisy", noisy).ravel()
    if y.size < 1:
        v.refuse("noisy", "must hold at least one count", y.tolist())
    a = v.open_unit("alpha", alpha)
    draws = v.integer("draws", draws, minimum=1)
    if isinstance(prior, str):
        v.choice("prior", prior, ("hierarchical",))
        grid = A0_GRID
    else:
        grid = (v.positive("prior", prior),)
    K = y.size
    total = max(int(np.maximum(y, 0).sum()), K) if n is None else v.integer("n", n, minimum=1)
    rng = v.generator("seed", seed)
    la = math.log(a)
    posts = [_count_posterior(y, la, a0, a0 * K / total) for a0 in grid]
    logml = np.array([float(p[2].sum()) for p in posts])
    w = np.exp(logml - logml.max())
    pick = rng.choice(len(grid), size=draws, p=w / w.sum())
    out = np.empty((draws, K))
    for gi in np.unique(pick):
        rows = np.nonzero(pick == gi)[0]
        lo, logw, lse = posts[gi]
        cdf = np.cumsum(np.exp(logw - lse[:, None]), axis=1)
        u = rng.random((K, rows.size))
        idx = np.array([np.searchsorted(cdf[k], u[k], side="right") for k in range(K)]).T
        c = lo[None, :] + np.minimum(idx, cdf.shape[1] - 1)
        # log Gamma(a) draws as log Gamma(a + 1) + log(U)/a: no underflow to 0 at tiny shapes
        shape = grid[gi] + c
        lg = np.log(rng.gamma(shape + 1.0, 1.0)) + np.log(rng.random(shape.shape)) / shape
        lam = np.exp(lg - lg.max(axis=1, keepdims=True))
        out[rows] = lam / lam.sum(axis=1, keepdims=True)
    return out
