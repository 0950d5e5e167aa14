"""Independent brute-force references (float64 full sums with SciPy; mpmath where noted).

Nothing here imports noiseaware: the references share no code with the implementation.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats


def integral(x):
    x = np.asarray(x, dtype=np.float64)
    return np.isfinite(x) & (np.floor(x) == x)


def tsg_logpmf(k, loc, alpha):
    """scipy.stats.dlaplace: pmf tanh(a/2) exp(-a|k|), a = -log(alpha)."""
    k = np.asarray(k, dtype=np.float64)
    ok = integral(k)
    with np.errstate(divide="ignore"):
        out = stats.dlaplace.logpmf(np.where(ok, k, 0) - loc, -math.log(alpha))
    return np.where(ok, out, -np.inf)


def tsg_cdf(k, loc, alpha):
    return stats.dlaplace.cdf(np.asarray(k, dtype=np.float64) - loc, -math.log(alpha))


def geometric_noise_logpmf(d, alpha):
    """log tanh(eps/2) - eps |d| (no underflow for large |d|)."""
    e = -math.log(alpha)
    return math.log(math.tanh(e / 2)) - e * np.abs(d)


def dg_log_normalizer(sigma):
    """Direct float64 sum over |j| <= 40 sigma + 40 (terms beyond are < e^-800)."""
    L = math.ceil(40 * sigma) + 40
    j = np.arange(-L, L + 1, dtype=np.float64)
    return float(special.logsumexp(-(j**2) / (2 * sigma**2)))


def dg_logpmf(k, loc, sigma):
    k = np.asarray(k, dtype=np.float64)
    ok = integral(k)
    d = np.where(ok, k, 0) - loc
    return np.where(ok, -(d**2) / (2 * sigma**2) - dg_log_normalizer(sigma), -np.inf)


def fisher_log_weights(N, K, m):
    lo, hi = max(0, m - (N - K)), min(K, m)
    t = np.arange(lo, hi + 1)
    lw = (
        special.gammaln(K + 1)
        - special.gammaln(t + 1)
        - special.gammaln(K - t + 1)
        + special.gammaln(N - K + 1)
        - special.gammaln(m - t + 1)
        - special.gammaln(N - K - m + t + 1)
    )
    return t, lw


def noisy_fisher_logpmf(y, N, K, m, psi, noise_logpmf):
    """Full sum over every t of the support: log sum_t f_psi(t) g(y - t)."""
    t, lw = fisher_log_weights(N, K, m)
    base = lw + psi * t
    lc = special.logsumexp(base)
    y = np.atleast_1d(np.asarray(y, dtype=np.float64))
    out = np.full(y.shape, -np.inf)
    for i, yi in enumerate(y):
        if integral(yi):
            out[i] = special.logsumexp(base + noise_logpmf(yi - t)) - lc
    return out


def copula_log_odds(r):
    return 2 * math.log((math.pi + 2 * math.asin(r)) / (math.pi - 2 * math.asin(r)))


def noisy_fisher_logpmf_mpmath(y, N, K, m, psi, alpha, dps=50):
    """mpmath full sum with exact binomials (for small N)."""
    import mpmath as mp

    mp.mp.dps = dps
    lo, hi = max(0, m - (N - K)), min(K, m)
    a = mp.mpf(alpha)
    w = [mp.binomial(K, t) * mp.binomial(N - K, m - t) * mp.e ** (mp.mpf(psi) * t) for t in range(lo, hi + 1)]
    c = mp.fsum(w)
    g = lambda d: (1 - a) / (1 + a) * a ** abs(d)  # noqa: E731
    return float(mp.log(mp.fsum(wt * g(y - t) for wt, t in zip(w, range(lo, hi + 1), strict=True)) / c))


def rr_answer_logpmf(y, probs, p):
    """log P(answer = y): the sum over true categories i of probs_i Q[i, y], Q built entry by entry."""
    probs = np.asarray(probs, dtype=np.float64)
    k = probs.shape[-1]
    Q = np.array([[p if i == j else (1 - p) / (k - 1) for j in range(k)] for i in range(k)])
    answer = probs @ Q
    y = np.asarray(y, dtype=np.float64)
    ok = np.isfinite(y) & (y == np.floor(np.where(np.isfinite(y), y, 0))) & (y >= 0) & (y < k)
    idx = np.where(ok, y, 0).astype(np.int64)
    with np.errstate(divide="ignore"):
        return np.where(ok, np.log(answer[idx]), -np.inf)
