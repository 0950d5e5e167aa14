"""A release's noise scale is public and fixed: a sampled or traced one is refused by that rule, in both PPLs."""

from __future__ import annotations

import pytest

MATCH = r"sigma must be a known constant: the noise scale of a release is public"


def test_numpyro_sampled_sigma_is_refused_eagerly_and_traced() -> None:
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro import handlers

    import noiseaware.numpyro as nan

    def model() -> None:
        s = numpyro.sample("s", dist.HalfNormal(5.0))
        numpyro.sample("y", nan.Noisy(dist.Poisson(10.0), sigma=s), obs=3)

    with pytest.raises(TypeError, match=MATCH + r".*got a ArrayImpl"):
        handlers.seed(model, rng_seed=0)()
    with pytest.raises(TypeError, match=MATCH):
        jax.jit(lambda s: nan.Noisy(dist.Poisson(10.0), sigma=s).log_prob(3))(2.0)
    with pytest.raises(TypeError, match=r"alpha must be a known constant"):
        jax.jit(lambda a: nan.Noisy(dist.Poisson(10.0), alpha=a).log_prob(3))(0.5)
    with pytest.raises(TypeError, match=r"noise\['sigma'\] must be a known constant"):
        jax.jit(lambda s: nan.Noisy(dist.Poisson(10.0), {"family": "discrete_gaussian", "sigma": s}).log_prob(3))(2.0)
    assert float(nan.Noisy(dist.Poisson(10.0), sigma=2.0).log_prob(3)) < 0  # a float is fine


def test_pymc_sampled_sigma_is_refused_and_a_constant_is_accepted() -> None:
    import pymc as pm
    import pytensor.tensor as pt

    import noiseaware.pymc as nap

    with pm.Model():
        s = pm.HalfNormal("s", 5.0)
        with pytest.raises(TypeError, match=MATCH + r".*got a TensorVariable"):
            nap.Noisy("y", pm.Poisson.dist(10.0), sigma=s, observed=3)
        with pytest.raises(TypeError, match=r"epsilon must be a known constant"):
            nap.Noisy("z", pm.Poisson.dist(10.0), epsilon=s, observed=3)
        nap.Noisy("w", pm.Poisson.dist(10.0), sigma=pt.constant(2.0), observed=3)
