"""Simulation-based calibration of the regression likelihood on a small case (slow).

d = 1, no intercept, x ~ N(0, 1) known; (beta, sigma) drawn from the prior N(0, 1) x HalfNormal(1),
n = 200 rows simulated from the model, their Z'Z released with Gaussian noise of sd 30 per entry (the
noise dominates: sum x^2 has sd 20). The posterior is computed on a grid with the core's
likelihood (no sampler between the model and the ranks), and each parameter's posterior CDF at the
truth must be uniform over replications (Talts et al. 2018, "Validating Bayesian inference
algorithms with simulation-based calibration"). The noise-blind likelihood is rejected by the same test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from noiseaware._core import get_backend
from noiseaware._core._regression import (
    RegressionParameters,
    StatisticsLayout,
    gaussian_statistics_logp,
    released_entries,
    row_moments,
    statistics_moments,
)

NP = get_backend("numpy")
N = 200
SD = 30.0
BETA = np.linspace(-4.0, 4.0, 161)
SIG = np.linspace(0.01, 4.0, 134)
REPS = 300


def _grid_moments() -> tuple[np.ndarray, np.ndarray]:
    """n times the mean and covariance of the released entries at every grid point (data-free: once)."""
    rows, cols = released_entries(2, False)
    mean = np.empty((BETA.size, SIG.size, 3))
    cov = np.empty((BETA.size, SIG.size, 3, 3))
    for i, j in np.ndindex(BETA.size, SIG.size):
        m, c = row_moments(NP, RegressionParameters(np.array([BETA[i]]), SIG[j], np.zeros(1), np.eye(1)), False, 1)
        mean[i, j], cov[i, j] = statistics_moments(NP, m, c, rows, cols)
    return N * mean, N * cov


def _pits(noise_sd: float, seed: int = 11) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows, cols = released_entries(2, False)
    bb, ss = np.meshgrid(BETA, SIG, indexing="ij")
    prior = stats.norm.logpdf(bb) + stats.halfnorm.logpdf(ss)
    mean, cov = _grid_moments()
    total = cov + noise_sd**2 * np.eye(3)
    low = np.linalg.cholesky(total)
    logdet = 2.0 * np.log(np.diagonal(low, axis1=-2, axis2=-1)).sum(axis=-1)
    out = []
    for r in range(REPS):
        beta, sigma = rng.normal(), abs(rng.normal())
        x = rng.normal(size=N)
        y = beta * x + sigma * rng.normal(size=N)
        obs = np.array([x @ x, x @ y, y @ y]) + SD * rng.normal(size=3)
        z = np.linalg.solve(low, (obs - mean)[..., None])[..., 0]
        lp = -0.5 * (z * z).sum(axis=-1) - 0.5 * logdet + prior
        if r == 0:  # the vectorized density is the core's
            params = RegressionParameters(np.array([BETA[7]]), SIG[5], np.zeros(1), np.eye(1))
            want = gaussian_statistics_logp(NP, obs, params, StatisticsLayout(float(N), rows, cols, False),
                                            np.full(3, noise_sd))
            assert lp[7, 5] - prior[7, 5] - 1.5 * np.log(2 * np.pi) == pytest.approx(want, rel=1e-9)
        p = np.exp(lp - lp.max())
        p /= p.sum()
        # posterior CDF at the truth, linear between grid points (grid spacing << posterior sd)
        pit_b = np.interp(beta, BETA, np.cumsum(p.sum(axis=1)) - 0.5 * p.sum(axis=1))
        pit_s = np.interp(sigma, SIG, np.cumsum(p.sum(axis=0)) - 0.5 * p.sum(axis=0))
        out.append((pit_b, pit_s))
    return np.array(out)


def _uniform_p(u: np.ndarray) -> float:
    counts = np.histogram(u, bins=10, range=(0.0, 1.0))[0]
    return float(stats.chisquare(counts).pvalue)


@pytest.mark.slow
def test_sbc_ranks_are_uniform_and_the_noise_blind_model_is_rejected():
    aware = _pits(SD)
    # spurious failure < 1e-4 per test: two p-values, each must exceed 5e-5
    assert min(_uniform_p(aware[:, 0]), _uniform_p(aware[:, 1])) > 5e-5, aware.mean(axis=0)
    blind = _pits(1e-3)
    assert min(_uniform_p(blind[:, 0]), _uniform_p(blind[:, 1])) < 5e-5
