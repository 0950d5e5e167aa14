"""``augment`` on per-unit count releases (issue 12, item 1): one noisy count per county.

Each test compares the data-augmentation draws with the exact posterior on a fine grid (the
convolution of the count model with the release's noise law, summed over the latent count) by
z-scores of the posterior mean and standard deviation with their Monte Carlo standard errors
(ArviZ ``mcse``), Bonferroni at a spurious-failure rate of 1e-4 -- and shows that the same check
rejects the posterior under a wrong noise scale.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

import noiseaware as na
from noiseaware._engine import group

jax = pytest.importorskip("jax")
az = pytest.importorskip("arviz")
augment = pytest.importorskip("noiseaware.augment")
jnp = jax.numpy

Z2 = float(stats.norm.isf(0.5e-4 / 2))  # two comparisons (mean, sd)


def geometric_logpmf(k: np.ndarray, alpha: float) -> np.ndarray:
    """Two-sided geometric noise, written here independently: (1 - a) / (1 + a) a^|k|."""
    return math.log((1 - alpha) / (1 + alpha)) + np.abs(k) * math.log(alpha)


def grid_moments(grid: np.ndarray, log_post: np.ndarray) -> tuple[float, float]:
    w = np.exp(log_post - log_post.max())
    w /= w.sum()
    mean = float((w * grid).sum())
    return mean, float(math.sqrt((w * (grid - mean) ** 2).sum()))


def agrees(draws: np.ndarray, mean: float, sd: float) -> tuple[bool, float]:
    """Max |z| of the posterior mean and sd of ``draws`` (chain, draw) against (mean, sd).

    Monte Carlo standard errors from ArviZ's effective sample sizes: of the draws for the mean,
    of the squared deviations for the variance (delta method for the sd).
    """
    dev2 = (draws - draws.mean()) ** 2
    ess_mean = float(az.ess(az.convert_to_dataset({"x": draws}), method="mean")["x"])
    ess_var = float(az.ess(az.convert_to_dataset({"x": dev2}), method="mean")["x"])
    sd_hat = draws.std()
    se_mean = sd_hat / math.sqrt(ess_mean)
    se_sd = dev2.std() / math.sqrt(ess_var) / (2 * sd_hat)
    z = max(abs(draws.mean() - mean) / se_mean, abs(sd_hat - sd) / se_sd)
    return z < Z2, z


# --------------------------------------------------------------------------- Poisson rate, per-county counts
EXPOSURE = np.array([3.0, 1.0, 2.0, 0.5, 4.0, 1.5, 2.5, 1.0, 3.5, 2.0, 0.8, 1.2])
A0, B0 = 2.0, 0.1  # Gamma(shape, rate) prior of the rate


def _poisson_release(epsilon: float, seed: int = 0) -> na.Release:
    rng = np.random.default_rng(seed)
    y = rng.poisson(6.0 * EXPOSURE)
    return na.privatize(y, statistic="counts", epsilon=epsilon, sensitivity=1, rng=rng)


def _poisson_grid_posterior(s_dp: np.ndarray, alpha: float) -> tuple[float, float]:
    """Exact posterior of the rate: sum over y of Poisson(y; lam w_i) * noise(s_i - y), on a grid."""
    lam = np.linspace(0.5, 20.0, 4000)
    y = np.arange(0, 400)
    log_noise = geometric_logpmf(s_dp[:, None] - y[None, :], alpha)  # (units, y)
    mu = lam[:, None] * EXPOSURE[None, :]  # (grid, units)
    log_pois = y[None, None, :] * np.log(mu)[..., None] - mu[..., None] - special.gammaln(y + 1)[None, None, :]
    loglik = special.logsumexp(log_pois + log_noise[None], axis=-1).sum(-1)
    log_prior = (A0 - 1) * np.log(lam) - B0 * lam
    return grid_moments(lam, loglik + log_prior)


@pytest.mark.slow  # make test-full: a compiled augmentation sampler per county (10 s)
def test_per_unit_counts_release_poisson_rate_matches_exact_posterior():
    rel = _poisson_release(epsilon=0.3)
    assert rel.composition == "joint" and rel.mechanism.family == "geometric"
    w = jnp.asarray(EXPOSURE)
    aug = augment.AugmentationModel(
        statistic=lambda y_i, s_i: y_i,  # record i is county i's true count
        latent=lambda key, th: jax.random.poisson(key, th["lam"] * w).astype(jnp.float64),
        posterior=lambda key, y, th: {"lam": jax.random.gamma(key, A0 + y.sum()) / (B0 + w.sum())},
        per_record=True,
    )
    idata = augment.sample(aug, rel, init={"lam": 5.0}, draws=1500, warmup=100, chains=4, seed=1, check_mixing=False)
    assert idata.attrs["per_unit"] == 1 and idata.attrs["mechanism"] == "geometric"
    draws = np.asarray(group(idata, "posterior")["lam"])
    alpha = float(rel.mechanism.alpha)
    ok, z = agrees(draws, *_poisson_grid_posterior(np.asarray(rel.values, float), alpha))
    assert ok, z
    # the same check rejects the posterior under a noise scale 4 times too small
    wrong = math.exp(-4 * -math.log(alpha))
    bad, z_bad = agrees(draws, *_poisson_grid_posterior(np.asarray(rel.values, float), wrong))
    assert not bad, z_bad


# --------------------------------------------------------------------------- individuals behind county counts (indexed)
COUNTY = np.repeat(np.arange(5), [8, 12, 6, 10, 9])  # 45 individuals in 5 counties
SIZES = np.bincount(COUNTY)


def _binomial_grid_posterior(s_dp: np.ndarray, alpha: float) -> tuple[float, float]:
    p = np.linspace(1e-4, 1 - 1e-4, 4000)
    loglik = np.zeros_like(p)
    for c, m in enumerate(SIZES):
        y = np.arange(m + 1)
        lb = stats.binom.logpmf(y[None, :], m, p[:, None])
        loglik += special.logsumexp(lb + geometric_logpmf(s_dp[c] - y, alpha)[None, :], axis=-1)
    return grid_moments(p, loglik)  # uniform prior


@pytest.mark.slow
def test_indexed_statistic_places_each_record_in_its_county():
    rng = np.random.default_rng(4)
    x = rng.random(COUNTY.size) < 0.35
    rel = na.privatize(
        np.bincount(COUNTY, weights=x).astype(int), statistic="counts", epsilon=1.0, sensitivity=1, rng=rng
    )
    county = jnp.asarray(COUNTY)
    aug = augment.AugmentationModel(
        statistic=lambda x_i, s_dp, i: jax.nn.one_hot(county[i], SIZES.size) * x_i,
        indexed=True,
        latent=lambda key, th: jax.random.bernoulli(key, th["p"], (COUNTY.size,)).astype(jnp.float64),
        posterior=lambda key, x, th: {"p": jax.random.beta(key, 1.0 + x.sum(), 1.0 + COUNTY.size - x.sum())},
    )
    idata = augment.sample(aug, rel, init={"p": 0.5}, draws=1500, warmup=100, chains=4, seed=2, check_mixing=False)
    draws = np.asarray(group(idata, "posterior")["p"])
    alpha = float(rel.mechanism.alpha)
    ok, z = agrees(draws, *_binomial_grid_posterior(np.asarray(rel.values, float), alpha))
    assert ok, z
    bad, z_bad = agrees(draws, *_binomial_grid_posterior(np.asarray(rel.values, float), alpha**4))
    assert not bad, z_bad


def test_aggregate_mode_on_a_per_unit_release_points_to_per_record():
    rel = _poisson_release(epsilon=1.0)
    w = jnp.asarray(EXPOSURE)
    aug = augment.AugmentationModel(
        statistic=lambda y_i, s: y_i,
        latent=lambda key, th: jax.random.poisson(key, th["lam"] * w).astype(jnp.float64),
        posterior=lambda key, y, th: {"lam": jnp.asarray(5.0)},
    )
    with pytest.raises(na.exceptions.NoiseawareValueError, match=r"\(12,\); got shape \(\).*per_record=True"):
        augment.sample(aug, rel, init={"lam": 5.0}, draws=5, warmup=0, chains=1, check_mixing=False)


def test_per_record_is_refused_for_a_non_additive_release():
    # a per-unit mode needs entrywise additive noise; a per-record release keeps its own rule
    from noiseaware.augment._sample import PER_UNIT_FAMILIES

    assert set(PER_UNIT_FAMILIES) == {"geometric", "discrete_gaussian", "laplace", "gaussian"}
    rr = na.privatize(
        np.array([0, 1, 2, 1]), statistic="randomized_response", epsilon=1.0, categories=3, rng=np.random.default_rng(0)
    )
    aug = augment.AugmentationModel(
        statistic=lambda x, s: x,
        latent=lambda key, th: jnp.zeros(4),
        posterior=lambda key, x, th: th,
        per_record=False,
    )
    with pytest.raises(na.exceptions.NoiseawareValueError, match="contradicts the release's composition"):
        augment.sample(aug, rr, init={"p": 0.5}, draws=5, warmup=0, chains=1, check_mixing=False)


# --------------------------------------------------------------------------- Poisson regression, NUTS for theta
Z_COUNTY = np.linspace(-1.5, 1.5, 16)  # a public covariate per county


def _regression_grid_posterior(s_dp: np.ndarray, alpha: float) -> dict[str, tuple[float, float]]:
    """Exact posterior of (b0, b1) on a 2-D grid: N(0, 3^2) priors, Poisson(exp(b0 + b1 z_i)) counts."""
    b0 = np.linspace(0.5, 3.5, 241)
    b1 = np.linspace(-0.8, 1.6, 241)
    y = np.arange(0, 250)
    log_noise = geometric_logpmf(s_dp[:, None] - y[None, :], alpha)  # (units, y)
    logp = np.zeros((b0.size, b1.size))
    for i, z in enumerate(Z_COUNTY):
        log_mu = b0[:, None] + b1[None, :] * z  # (b0, b1)
        lp = y * log_mu[..., None] - np.exp(log_mu)[..., None] - special.gammaln(y + 1)
        logp += special.logsumexp(lp + log_noise[i], axis=-1)
    logp += stats.norm.logpdf(b0, 0, 3)[:, None] + stats.norm.logpdf(b1, 0, 3)[None, :]
    return {
        "b0": grid_moments(b0, special.logsumexp(logp, axis=1)),
        "b1": grid_moments(b1, special.logsumexp(logp, axis=0)),
    }


@pytest.mark.slow
def test_poisson_regression_on_noisy_county_counts_matches_exact_posterior():
    import numpyro
    import numpyro.distributions as dist

    rng = np.random.default_rng(7)
    y = rng.poisson(np.exp(2.0 + 0.5 * Z_COUNTY))
    rel = na.privatize(y, statistic="counts", epsilon=0.3, sensitivity=1, rng=rng)
    zc = jnp.asarray(Z_COUNTY)

    def model():
        b0 = numpyro.sample("b0", dist.Normal(0.0, 3.0))
        b1 = numpyro.sample("b1", dist.Normal(0.0, 3.0))
        with numpyro.plate("county", zc.size):
            numpyro.sample("y", dist.Poisson(jnp.exp(b0 + b1 * zc)))

    aug = augment.AugmentationModel(statistic=lambda y_i, s_i: y_i, model=model, records="y", per_record=True)
    idata = augment.sample(aug, rel, draws=2000, warmup=500, chains=4, seed=3, check_mixing=False)
    s_dp, alpha = np.asarray(rel.values, float), float(rel.mechanism.alpha)
    exact = _regression_grid_posterior(s_dp, alpha)
    wrong = _regression_grid_posterior(s_dp, alpha**4)  # noise scale 4 times too small
    zmax = float(stats.norm.isf(0.5e-4 / 4))
    for name in ("b0", "b1"):
        draws = np.asarray(group(idata, "posterior")[name])
        _, z = agrees(draws, *exact[name])
        assert z < zmax, (name, z)
    assert max(agrees(np.asarray(group(idata, "posterior")[k]), *wrong[k])[1] for k in ("b0", "b1")) > zmax
