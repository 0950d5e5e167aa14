"""The regression core: moments by exact quadrature, densities by SciPy, posterior by an exact Monte Carlo route."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from noiseaware._core import get_backend
from noiseaware._core._regression import (
    RegressionParameters,
    StatisticsLayout,
    gaussian_statistics_logp,
    laplace_statistics_logp,
    latent_statistics,
    released_entries,
    row_moments,
    statistics_moments,
)

NP = get_backend("numpy")


def _quadrature_moments(beta, sigma, mu_x, cov_x, intercept, rows, cols):
    """Mean and covariance of one row's products by Gauss-Hermite quadrature of the generative model.

    x = mu_x + L xi_x, y = u'beta + sigma xi_y with xi standard normal: each product of two products
    is a polynomial of degree <= 4 per coordinate of xi, which 3-point Gauss-Hermite integrates exactly.
    """
    nodes, weights = np.polynomial.hermite_e.hermegauss(3)
    weights = weights / weights.sum()
    d_x = len(mu_x)
    low = np.linalg.cholesky(cov_x)
    t, w = [], []
    for idx in itertools.product(range(3), repeat=d_x + 1):
        xi = nodes[list(idx)]
        x = mu_x + low @ xi[:d_x]
        u = np.concatenate([[1.0], x]) if intercept else x
        z = np.concatenate([u, [u @ beta + sigma * xi[d_x]]])
        t.append(z[rows] * z[cols])
        w.append(np.prod(weights[list(idx)]))
    t, w = np.array(t), np.array(w)
    mean = w @ t
    cov = (t - mean).T @ ((t - mean) * w[:, None])
    return mean, cov


CASES = [
    (np.array([0.3, -1.2, 0.7]), 0.8, np.array([0.5, -0.4]), np.array([[1.0, 0.3], [0.3, 0.5]]), True),
    (np.array([1.5, -0.5]), 1.3, np.array([0.2, 1.0]), np.array([[2.0, -0.6], [-0.6, 0.7]]), False),
    (np.array([0.0, 2.0]), 0.1, np.array([-1.0]), np.array([[0.3]]), True),
]


@pytest.mark.parametrize("case", CASES, ids=["intercept_d2", "no_intercept_d2", "intercept_d1"])
def test_isserlis_moments_equal_exact_quadrature(case):
    beta, sigma, mu_x, cov_x, intercept = case
    k = len(beta) + 1
    rows, cols = released_entries(k, intercept)
    m, c = row_moments(NP, RegressionParameters(beta, sigma, mu_x, cov_x), intercept, len(mu_x))
    mean, cov = statistics_moments(NP, m, c, rows, cols)
    want_mean, want_cov = _quadrature_moments(beta, sigma, mu_x, cov_x, intercept, rows, cols)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cov, want_cov, rtol=1e-10, atol=1e-12)
    # a wrong formula (the central Isserlis covariance, the mean terms forgotten) is rejected
    central = c[rows[:, None], rows[None, :]] * c[cols[:, None], cols[None, :]] + (
        c[rows[:, None], cols[None, :]] * c[cols[:, None], rows[None, :]]
    )
    assert np.max(np.abs(central - want_cov)) > 1e-2


def test_gaussian_logp_is_scipy_mvn_and_laplace_is_scipy_laplace():
    beta, sigma, mu_x, cov_x, intercept = CASES[0]
    rows, cols = released_entries(len(beta) + 1, intercept)
    n = 200.0
    mean, cov = _quadrature_moments(beta, sigma, mu_x, cov_x, intercept, rows, cols)
    sd = np.linspace(1.0, 3.0, rows.size)
    value = n * mean + np.random.default_rng(0).normal(size=rows.size) * 5.0
    params, layout = RegressionParameters(beta, sigma, mu_x, cov_x), StatisticsLayout(n, rows, cols, intercept)
    got = gaussian_statistics_logp(NP, value, params, layout, sd)
    want = stats.multivariate_normal(n * mean, n * cov + np.diag(sd**2)).logpdf(value)
    assert got == pytest.approx(want, rel=1e-10)
    w = np.random.default_rng(1).normal(size=rows.size)
    t = latent_statistics(NP, w, params, layout)
    np.testing.assert_allclose(t, n * mean + np.linalg.cholesky(n * cov) @ w, rtol=1e-10)
    got_l = laplace_statistics_logp(NP, value, t, sd)
    assert got_l == pytest.approx(stats.laplace(t, sd).logpdf(value).sum(), rel=1e-12)


def test_jax_backend_agrees():
    """(PyTensor is checked through the PyMC front end, tests/regression/test_distribution.py.)"""
    import jax

    beta, sigma, mu_x, cov_x, intercept = CASES[0]
    rows, cols = released_entries(len(beta) + 1, intercept)
    sd = np.full(rows.size, 2.0)
    value = np.arange(rows.size, dtype=float) * 10.0 + 50.0
    layout = StatisticsLayout(100.0, rows, cols, intercept)
    params = RegressionParameters(beta, sigma, mu_x, cov_x)
    want = gaussian_statistics_logp(NP, value, params, layout, sd)
    with jax.enable_x64(True):
        import jax.numpy as jnp

        params_jax = RegressionParameters(*map(_jx, params))
        got_jax = gaussian_statistics_logp(get_backend("jax"), jnp.asarray(value), params_jax, layout, _jx(sd))
        # the parameters' record is a pytree (it passes through jit as its arrays); the layout stays static
        jitted = jax.jit(lambda p, v: gaussian_statistics_logp(get_backend("jax"), v, p, layout, _jx(sd)))
        got_jit = jitted(params_jax, jnp.asarray(value))
    assert float(got_jax) == pytest.approx(want, rel=1e-10)
    assert float(got_jit) == pytest.approx(want, rel=1e-10)


def _jx(a):
    import jax.numpy as jnp

    return jnp.asarray(a) if isinstance(a, np.ndarray) and a.dtype == float else a


# ---------------------------------------------------------------------------------------------------
# Posterior against an exact reference: d = 1, no intercept, x ~ N(0, 1) known, (beta, sigma) unknown.
# Then (x, y) ~ N(0, C) and Z'Z ~ Wishart(n, C) exactly (no normal approximation); the exact likelihood
# of the noisy entries is E_W[p_noise(obs - W)], estimated by Monte Carlo over Bartlett draws with
# common random numbers across the grid.
N_ROWS = 50
BETA = np.linspace(-0.2, 2.0, 34)
SIG = np.linspace(0.25, 2.0, 26)


def _grid_cov():
    b, s = np.meshgrid(BETA, SIG, indexing="ij")
    c = np.empty((*b.shape, 2, 2))
    c[..., 0, 0], c[..., 0, 1], c[..., 1, 0] = 1.0, b, b
    c[..., 1, 1] = b * b + s * s
    return b, s, c


def _log_prior(b, s):
    return stats.norm(0, 1).logpdf(b) + stats.halfnorm(scale=1).logpdf(s)


def _exact_loglik(obs, noise_logpdf, draws=10000, seed=5):
    rng = np.random.default_rng(seed)
    a11 = np.sqrt(rng.chisquare(N_ROWS, draws))
    a22 = np.sqrt(rng.chisquare(N_ROWS - 1, draws))
    a21 = rng.normal(size=draws)
    _, _, c = _grid_cov()
    low = np.linalg.cholesky(c)  # (..., 2, 2)
    l11, l21, l22 = low[..., 0, 0, None], low[..., 1, 0, None], low[..., 1, 1, None]
    # W = L A A' L' with A = [[a11, 0], [a21, a22]]: M = L A
    m00, m10, m11 = l11 * a11, l21 * a11 + l22 * a21, l22 * a22
    w_xx = m00 * m00
    w_xy = m00 * m10
    w_yy = m10 * m10 + m11 * m11
    lp = noise_logpdf(obs[0], w_xx) + noise_logpdf(obs[1], w_xy) + noise_logpdf(obs[2], w_yy)
    top = lp.max(axis=-1, keepdims=True)
    return (top + np.log(np.mean(np.exp(lp - top), axis=-1, keepdims=True)))[..., 0]


def _summaries(logpost):
    b, s, _ = _grid_cov()
    p = np.exp(logpost - logpost.max())
    p /= p.sum()
    mb, ms = (p * b).sum(), (p * s).sum()
    return np.array([mb, ms]), np.array([np.sqrt((p * (b - mb) ** 2).sum()), np.sqrt((p * (s - ms) ** 2).sum())])


def _observed(noise_draw):
    rng = np.random.default_rng(2024)
    x = rng.normal(size=N_ROWS)
    y = 0.8 * x + 0.7 * rng.normal(size=N_ROWS)
    m = np.array([x @ x, x @ y, y @ y])  # entries (0,0), (1,0), (1,1): released_entries(2, False)
    return m + noise_draw(rng)


def _approx_gaussian_logpost(obs, sd):
    rows, cols = released_entries(2, False)
    b, s, _ = _grid_cov()
    lp = np.empty(b.shape)
    for i, j in np.ndindex(b.shape):
        params = RegressionParameters(np.array([b[i, j]]), s[i, j], np.zeros(1), np.eye(1))
        lp[i, j] = gaussian_statistics_logp(NP, obs, params, StatisticsLayout(float(N_ROWS), rows, cols, False), sd)
    return lp + _log_prior(b, s)


@pytest.mark.slow
def test_gaussian_route_posterior_matches_exact_wishart_reference():
    sd = 6.0
    obs = _observed(lambda rng: rng.normal(size=3) * sd)
    b, s, _ = _grid_cov()
    exact = _exact_loglik(obs, lambda o, w: stats.norm.logpdf(o, w, sd)) + _log_prior(b, s)
    mean_x, sd_x = _summaries(exact)
    mean_a, sd_a = _summaries(_approx_gaussian_logpost(obs, np.full(3, sd)))
    # the normal approximation at n = 50: posterior means within 0.15 posterior sd, sds within 10%
    assert np.all(np.abs(mean_a - mean_x) < 0.15 * sd_x), (mean_a, mean_x, sd_x)
    assert np.all(np.abs(sd_a / sd_x - 1.0) < 0.10), (sd_a, sd_x)
    # the noise-blind posterior (noise sd taken as ~0) misses: it is rejected by the same thresholds
    mean_b, sd_b = _summaries(_approx_gaussian_logpost(obs, np.full(3, 1e-6)))
    assert np.any(np.abs(mean_b - mean_x) > 0.15 * sd_x) or np.any(np.abs(sd_b / sd_x - 1.0) > 0.10)


@pytest.mark.slow
def test_laplace_latent_route_matches_exact_wishart_reference():
    scale = 4.0
    obs = _observed(lambda rng: rng.laplace(size=3) * scale)
    b, s, _ = _grid_cov()
    exact = _exact_loglik(obs, lambda o, w: stats.laplace.logpdf(o, w, scale)) + _log_prior(b, s)
    # the latent route's marginal: E_w[Laplace(obs | M(w))], w ~ N(0, I), M the non-centred normal statistics
    rows, cols = released_entries(2, False)
    w = np.random.default_rng(6).normal(size=(10000, 3))
    approx = np.empty(b.shape)
    for i, j in np.ndindex(b.shape):
        params = RegressionParameters(np.array([b[i, j]]), s[i, j], np.zeros(1), np.eye(1))
        layout = StatisticsLayout(float(N_ROWS), rows, cols, False)
        t0 = latent_statistics(NP, np.zeros(3), params, layout)  # the mean
        low = np.stack([latent_statistics(NP, e, params, layout) - t0 for e in np.eye(3)], axis=1)  # its Cholesky
        t = t0 + w @ low.T
        lp = -np.abs(obs - t).sum(axis=1) / scale - 3.0 * np.log(2.0 * scale)
        approx[i, j] = lp.max() + np.log(np.mean(np.exp(lp - lp.max())))
    mean_x, sd_x = _summaries(exact)
    mean_a, sd_a = _summaries(approx + _log_prior(b, s))
    assert np.all(np.abs(mean_a - mean_x) < 0.15 * sd_x), (mean_a, mean_x, sd_x)
    assert np.all(np.abs(sd_a / sd_x - 1.0) < 0.10), (sd_a, sd_x)
