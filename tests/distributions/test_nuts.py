"""NUTS recovers r from a simulated one-pair release in each PPL, and matches the exact grid posterior."""

from __future__ import annotations

import math

import numpy as np
import pytest

from noiseaware import _core

NB = _core.get_backend("numpy")
N, R_TRUE, EPS = 4001, 0.5, 1.0
ALPHA = math.exp(-EPS)


@pytest.fixture(scope="module")
def observed():
    """One noisy high-high count simulated from the model (core sampler, fixed seed)."""
    h = math.ceil(N / 2)
    rng = np.random.default_rng(11)
    t = _core.fisher_sample_from_uniform(
        NB, _core.fisher_table(N, h, h), _core.copula_log_odds(NB, R_TRUE), rng.random()
    )
    u = rng.random(2)
    return int(t + _core.geometric_from_uniforms(NB, u[0], u[1], ALPHA))


@pytest.fixture(scope="module")
def grid_posterior(observed):
    """Exact posterior of r under a Uniform(-1, 1) prior, by quadrature on a fine grid."""
    h = math.ceil(N / 2)
    r = np.linspace(-0.9995, 0.9995, 20_001)
    lp = _core.noisy_fisher_logpmf(
        NB, _core.fisher_table(N, h, h), observed, _core.copula_log_odds(NB, r), "geometric", ALPHA
    )
    w = np.exp(lp - lp.max())
    w /= w.sum()
    mean = float(np.sum(w * r))
    return mean, float(math.sqrt(np.sum(w * (r - mean) ** 2)))


def check(samples, grid_posterior):
    mean, sd = grid_posterior
    assert abs(mean - R_TRUE) < 4 * sd  # the exact posterior covers the truth
    assert abs(np.mean(samples) - mean) < 0.3 * sd, (np.mean(samples), mean, sd)
    assert abs(np.std(samples) / sd - 1) < 0.25


def test_numpyro_nuts_recovers_r(observed, grid_posterior):
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    import noiseaware.numpyro as nan

    def model(t):
        r = numpyro.sample("r", dist.Uniform(-1.0, 1.0))
        numpyro.sample("t", nan.NoisyTwoWayTable(r, N, ALPHA), obs=t)

    mcmc = MCMC(NUTS(model), num_warmup=400, num_samples=800, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(2), observed)
    check(np.asarray(mcmc.get_samples()["r"]), grid_posterior)


@pytest.mark.slow  # ~45 s on 2 cores (PyTensor compilation and C-backend NUTS)
def test_pymc_nuts_recovers_r(observed, grid_posterior):
    import pymc as pm

    import noiseaware as na

    with pm.Model():
        r = pm.Uniform("r", -1, 1)
        na.NoisyTwoWayTable("t", r=r, n=N, alpha=ALPHA, observed=observed)
        idata = pm.sample(
            draws=800, tune=400, chains=1, cores=1, random_seed=3, progressbar=False, compute_convergence_checks=False
        )
    check(idata.posterior["r"].values.ravel(), grid_posterior)
