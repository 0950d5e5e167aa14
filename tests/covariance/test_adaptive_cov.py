"""AdaptiveCov (Dong, Liang & Yi 2022) against a line-by-line reading of the authors' code, and its SVT sensitivity.

The reference below transcribes ``adaptive/algos.py: AdaptiveCov`` and ``adaptive/utils.py``
(``get_bincounts``, ``get_diff2``, ``SVT``, the tail bounds) loop by loop, in units where rows have
norm at most ``r = 1``; the package's version is vectorised and rescales ``x / (sqrt(d) B)``. Both
draw their noise from the same generator in the same order, so they must agree to rounding.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from noiseaware import covariance
from noiseaware.covariance._baselines import norm_bins


def _wigner(d: int, rng: np.random.Generator) -> np.ndarray:
    w = rng.standard_normal((d, d))
    return np.triu(w) + np.triu(w, 1).T


def _reference(x: np.ndarray, rho: float, beta: float, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    n, d = x.shape
    r = 1.0
    cov = x.T @ x / n
    tr = np.trace(cov)
    factor = np.sqrt(8.0 / rho * np.log(8.0 / beta))
    tr_tilde = tr + r * r * (2.0 / np.sqrt(rho) / n * rng.standard_normal() + factor / n)
    tr_tilde = max(min(tr_tilde, r), 1e-16)
    rho1, beta1 = 0.75 * rho, 0.75 * beta
    b = 0.5 * beta1
    eta = np.sqrt(d + 2 * np.sqrt(d * np.log(1 / b)) + 2 * np.log(1 / b))
    theta = min((np.log(d) / d) ** 0.3, 0.5)
    nu = (1 + theta) * (2 * np.sqrt(d) + 6 * np.sqrt(np.log(d)) / np.sqrt(np.log(1 + theta)))
    nu = nu + np.sqrt(2 * np.log(2 / b))
    omega = np.sqrt(
        d * d + 2.0 * np.sqrt(d * np.log(2.0 / beta1)) * (1 + np.sqrt(2 * (d - 1))) + 6 * np.log(2.0 / beta1)
    )
    sepnoise1 = 2**1.25 * np.sqrt(tr_tilde) / np.sqrt(n) / (rho1**0.25) * np.sqrt(nu) / 6.0
    sepnoise2 = np.sqrt(2) * eta / np.sqrt(rho1) / n
    gaussnoise1 = 1.0 / np.sqrt(rho1) / n * omega
    k1 = int(np.log2(r))
    k3 = -min(int(d * n), -int(np.log2(1e-24)))
    t = k1 - k3 + 1
    x_norm = np.linalg.norm(x, axis=1)
    parts = [2 ** (2 * (k1 - lv) + 2) for lv in range(t)]
    counts = np.zeros(t)
    for i in range(n):  # get_bincounts
        l1 = -int(np.floor(np.log2(x_norm[i])))
        if not (x_norm[i] > 2.0 ** (-l1)):
            l1 = l1 + 1
        l1 = max(l1, 1)
        if l1 < t:
            counts[l1] = counts[l1] + 1

    def get_diff2(k: int) -> float:
        i = k1 - k + 1
        bias = sum(counts[lv] * parts[lv] for lv in range(i))
        bias = (bias - sum(counts[:i]) * 2.0 ** (2 * k)) / n
        noise = min(2.0**k * gaussnoise1, 2.0**k * sepnoise1 + 2.0 ** (2 * k) * sepnoise2)
        return n * (bias - noise) / r / r

    eps = np.sqrt(rho) / 2.0  # SVT(0, sqrt(rho)/2, ...)
    t_tilde = 0 + rng.laplace(scale=2.0 / eps)
    j = 0
    while j < t:
        if get_diff2(k1 - j) + rng.laplace(scale=4.0 / eps) >= t_tilde:
            break
        j = j + 1
    k2 = k1 - j
    r_t = min(2.0 ** (k2 + 1), r)
    scale = r_t / x_norm
    xt = x.copy()
    xt[scale < 1] = xt[scale < 1] * scale[scale < 1, None]
    sepnoise = 2.0**k2 * sepnoise1 + 2.0 ** (2 * k2) * sepnoise2
    gaussnoise = 2.0 ** (2 * k2) * gaussnoise1
    cov_t = xt.T @ xt / n
    sens = np.sqrt(2) * r_t * r_t / n
    if sepnoise >= gaussnoise:  # GaussCov(..., b_fleig=True)
        c = cov_t + sens / np.sqrt(2 * rho1) * _wigner(d, rng)
        dd, uu = np.linalg.eigh(c)
        return (uu * np.clip(dd, 0, r_t * r_t)) @ uu.T, j
    cg = cov_t + sens / np.sqrt(2 * 0.5 * rho1) * _wigner(d, rng)  # SeparateCov: GaussCov at rho/2
    w, u = np.linalg.eigh(cg)
    ug = u[:, np.argsort(-np.abs(w), kind="stable")]
    dtil = np.sort(np.linalg.eigvalsh(cov_t))[::-1] + sens / np.sqrt(rho1) * rng.standard_normal(d)
    return (ug * np.clip(dtil, 0, r_t * r_t)) @ ug.T, j


@pytest.mark.parametrize(("scale", "rho", "seed"), [(1.0, 1.0, 0), (0.05, 1.0, 1), (0.01, 10.0, 2), (0.3, 0.01, 3)])
def test_matches_the_authors_algorithm(scale: float, rho: float, seed: int) -> None:
    d, n, bound = 4, 300, 1.0
    data = np.random.default_rng(seed).uniform(-1, 1, size=(n, d)) * scale
    got = covariance.adaptive_cov(data, rho, bound, np.random.default_rng(100 + seed))
    r = math.sqrt(d) * bound
    want, j = _reference(data / r, rho, 0.1, np.random.default_rng(100 + seed))
    np.testing.assert_allclose(got, want * r * r, rtol=1e-10, atol=1e-14)
    if scale <= 0.05 and rho >= 1.0:
        assert j >= 2  # the radius search clipped to a radius below r / 2 (rows are small)


def test_norm_bins_match_the_authors_loop() -> None:
    u = np.concatenate([np.random.default_rng(0).uniform(0, 1, 500), [1.0, 0.5, 0.25, 2.0**-10]])
    t = 12
    want = np.zeros(t)
    for val in u:
        l1 = -int(np.floor(np.log2(val)))
        if not (val > 2.0 ** (-l1)):
            l1 += 1
        l1 = max(l1, 1)
        if l1 < t:
            want[l1] += 1
    np.testing.assert_array_equal(norm_bins(u, t), want)


def test_svt_queries_have_sensitivity_below_one() -> None:
    """Substituting one row moves every query n * bias_l by less than 1 (the SVT's epsilon assumes 1)."""
    rng = np.random.default_rng(7)
    t = 20
    parts = 4.0 ** (1 - np.arange(t))

    def queries(u: np.ndarray) -> np.ndarray:
        c = norm_bins(u, t).astype(float)
        return np.cumsum(c * parts) - np.cumsum(c) * 4.0 ** (-np.arange(t))

    worst = 0.0
    for _ in range(3000):
        u = rng.uniform(0, 1, 5) ** rng.uniform(1, 8)
        q0 = queries(u)
        u2 = u.copy()
        u2[rng.integers(5)] = rng.choice([1.0, rng.uniform(0, 1) ** rng.uniform(1, 8), 0.0])
        worst = max(worst, float(np.max(np.abs(queries(u2) - q0))))
    assert worst < 1.0
    assert worst > 0.7  # and the bound is nearly reached
