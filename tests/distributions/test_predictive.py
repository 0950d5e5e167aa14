"""Prior and posterior predictive checks work on models built with ``from_release``, in both PPLs.

NumPyro's idiom is ``obs=None`` (the site is then drawn, shaped like the release); PyMC draws
observed variables in ``sample_prior_predictive`` / ``sample_posterior_predictive`` and also
takes ``observed=None`` for a free variable shaped like the release.
"""

from __future__ import annotations

import numpy as np
import pytest

import noiseaware as na


@pytest.fixture(scope="module")
def releases():
    x = np.random.default_rng(3).normal(size=(301, 3))
    pairs = na.privatize(x, statistic="median_pairs", epsilon=1.5, rng=np.random.default_rng(0))
    counts = na.privatize(
        np.array([5, 12, 40, 7]), statistic="counts", epsilon=1.0, sensitivity=1, rng=np.random.default_rng(1)
    )
    dg = na.privatize(np.array([5, 12, 40]), statistic="counts", rho=0.5, sensitivity=1, rng=np.random.default_rng(1))
    return {"pairs": pairs, "counts": counts, "dg": dg}


R3 = np.array([[1.0, 0.4, 0.1], [0.4, 1.0, -0.3], [0.1, -0.3, 1.0]])


def _numpyro_builders(rel):
    import numpyro.distributions as dist

    import noiseaware.numpyro as nan

    return {
        "TwoSidedGeometric": (
            rel["counts"],
            lambda obs: nan.TwoSidedGeometric.from_release("y", rel["counts"], 10, obs=obs),
        ),
        "DiscreteGaussian": (rel["dg"], lambda obs: nan.DiscreteGaussian.from_release("y", rel["dg"], 10, obs=obs)),
        "NoisyHypergeom": (rel["pairs"], lambda obs: nan.NoisyHypergeom.from_release("y", rel["pairs"], 0.0, obs=obs)),
        "NoisyTwoWayTable": (
            rel["pairs"],
            lambda obs: nan.NoisyTwoWayTable.from_release("y", rel["pairs"], 0.2, obs=obs),
        ),
        "CompositeCopulaLikelihood": (
            rel["pairs"],
            lambda obs: nan.CompositeCopulaLikelihood.from_release("y", rel["pairs"], R3, obs=obs),
        ),
        "Noisy": (rel["counts"], lambda obs: nan.Noisy.from_release("y", rel["counts"], dist.Poisson(10.0), obs=obs)),
    }


@pytest.mark.parametrize(
    "cls",
    [
        "TwoSidedGeometric",
        "DiscreteGaussian",
        "NoisyHypergeom",
        "NoisyTwoWayTable",
        "CompositeCopulaLikelihood",
        "Noisy",
    ],
)
def test_numpyro_predictive_draws_with_obs_none(releases, cls):
    import jax
    from numpyro.infer import Predictive

    rel, build = _numpyro_builders(releases)[cls]
    observed = Predictive(lambda: build(na.numpyro.RELEASE_VALUES), num_samples=3)(jax.random.PRNGKey(0))["y"]
    # an observed site returns its observation (NumPyro's semantics) ...
    np.testing.assert_array_equal(np.asarray(observed[0]), rel.values)
    drawn = np.asarray(Predictive(lambda: build(None), num_samples=200)(jax.random.PRNGKey(1))["y"])
    # ... obs=None draws, shaped like the release, different from draw to draw
    assert drawn.shape == (200, *rel.values.shape)
    assert drawn.dtype.kind == "i"
    assert len({tuple(np.ravel(d)) for d in drawn}) > 30


def test_numpyro_posterior_predictive_mean_tracks_parameter(releases):
    """Predictive draws follow the model: the mean of Noisy(Poisson(mu)) draws is mu."""
    import jax
    import numpyro.distributions as dist
    from numpyro.infer import Predictive

    import noiseaware.numpyro as nan

    rel = releases["counts"]

    def model(mu):
        nan.Noisy.from_release("y", rel, dist.Poisson(mu), obs=None)

    draws = np.asarray(
        Predictive(model, num_samples=4000)(jax.random.PRNGKey(2), np.array([3.0, 30.0, 50.0, 1.0]))["y"]
    )
    var = np.array([3.0, 30.0, 50.0, 1.0]) + 2 * rel.mechanism.alpha / (1 - rel.mechanism.alpha) ** 2
    z = (draws.mean(axis=0) - np.array([3.0, 30.0, 50.0, 1.0])) / np.sqrt(var / 4000)
    assert np.all(np.abs(z) < 4.5), z


def test_numpyro_obs_none_refuses_unbroadcastable_parameters(releases):
    import noiseaware.numpyro as nan

    with pytest.raises(ValueError, match="does not broadcast"):
        nan.TwoSidedGeometric.from_release("y", releases["counts"], np.zeros(3), obs=None)


@pytest.mark.parametrize("observed", ["release", None])
def test_pymc_prior_and_posterior_predictive_from_release(releases, observed):
    import pymc as pm

    import noiseaware.pymc as nap

    rel = releases["counts"]
    kw = {} if observed == "release" else {"observed": None}
    with pm.Model():
        mu = pm.Gamma("mu", 2.0, 0.1)
        nap.Noisy.from_release("y", rel, pm.Poisson.dist(mu), **kw)
        prior = pm.sample_prior_predictive(draws=50, random_seed=1)
    group = prior.prior_predictive if observed == "release" else prior.prior
    y = group["y"].values
    assert y.shape == (1, 50, *rel.values.shape)
    assert len({tuple(r) for r in y[0]}) > 40
    if observed == "release":
        np.testing.assert_array_equal(prior.observed_data["y"].values, rel.values)


def test_pymc_posterior_predictive_from_release(releases):
    import pymc as pm

    import noiseaware.pymc as nap
    from noiseaware.results import from_groups

    rel = releases["pairs"]
    with pm.Model():
        r = pm.Uniform("r", -0.9, 0.9)
        nap.NoisyTwoWayTable.from_release("t", rel, r=r)
        # a small fake posterior: predictive draws must follow it, not repeat the release
        post = from_groups({"posterior": {"r": np.full((1, 30), 0.5)}})
        pp = pm.sample_posterior_predictive(post, random_seed=2, progressbar=False)
    t = pp.posterior_predictive["t"].values
    assert t.shape == (1, 30, 3)
    assert not np.all(t == rel.values)
    # at r = 0.5 the high-high count is about n (1/4 + arcsin(0.5)/(2 pi)) = n/3
    assert abs(t.mean() - rel.n / 3) < 5
