"""``from_release`` shaped like the host PPL: NumPyro's scan, plate and vmap; PyMC's pm.set_data predictions.

References are the same model written without the construct (the scan unrolled, the plate's
subsample indexed by hand, a Python loop instead of ``vmap``), so each test fails if the
construct observes the wrong cells or the wrong number of times.
"""

from __future__ import annotations

import numpy as np
import pytest

import noiseaware as na

T, S = 6, 3


@pytest.fixture(scope="module")
def walk():
    rng = np.random.default_rng(11)
    lam = np.exp(2.0 + np.cumsum(rng.normal(0.0, 0.2, (T, S)), axis=0))
    rel = na.privatize(rng.poisson(lam), statistic="counts", epsilon=1.0, sensitivity=1, rng=rng)
    z = 2.0 + np.cumsum(rng.normal(0.0, 0.1, (T, S)), axis=0)
    return rel, z


def _scan_model(rel, obs_mode):
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.contrib.control_flow import scan

    import noiseaware.numpyro as nan

    def model():
        sd = numpyro.sample("sd", dist.HalfNormal(0.3))

        def step(z, y_t):
            with numpyro.plate("region", S):
                z = numpyro.sample("z", dist.Normal(z, sd))
                kw = {} if obs_mode == "default" else {"obs": y_t}
                nan.Noisy.from_release("y", rel, dist.Poisson(jnp.exp(z)), **kw)
            return z, None

        xs = None if obs_mode in ("none", "default") else jnp.asarray(rel.values)
        scan(step, 2.0 * jnp.ones(S), xs, length=T)

    return model


def _unrolled(rel, z, sd):
    """The same joint log-density, the scan written out: one observed row per step."""
    import jax.numpy as jnp
    import numpyro.distributions as dist

    import noiseaware.numpyro as nan

    lp = float(dist.HalfNormal(0.3).log_prob(sd))
    prev = 2.0 * jnp.ones(S)
    for t in range(T):
        lp += float(dist.Normal(prev, sd).log_prob(z[t]).sum())
        lp += float(nan.Noisy(dist.Poisson(jnp.exp(z[t])), noise=rel).log_prob(rel.values[t]).sum())
        prev = z[t]
    return lp


def test_scan_observes_one_slice_per_step(walk):
    import jax.numpy as jnp
    from numpyro.infer.util import log_density

    rel, z = walk
    model = _scan_model(rel, "slice")
    lp = float(log_density(model, (), {}, {"sd": 0.25, "z": jnp.asarray(z)})[0])
    ref = _unrolled(rel, z, 0.25)
    assert lp == pytest.approx(ref, rel=1e-12, abs=1e-9)
    # observing the whole release in every step (what the default did) gives another density
    whole = sum(_unrolled(rel, np.broadcast_to(z[t], z.shape), 0.25) for t in range(T))
    assert abs(whole - ref) > 10


def test_scan_refuses_the_whole_release_and_names_the_pattern(walk):
    import jax.numpy as jnp
    from numpyro.infer.util import log_density

    rel, z = walk
    with pytest.raises(ValueError, match=r"scan.*obs=y_t"):
        log_density(_scan_model(rel, "default"), (), {}, {"sd": 0.25, "z": jnp.asarray(z)})


def test_scan_predictive_draws_one_slice_per_step(walk):
    import jax
    from numpyro.infer import Predictive

    rel, _ = walk
    draws = Predictive(_scan_model(rel, "none"), num_samples=7)(jax.random.PRNGKey(0))
    assert draws["y"].shape == (7, T, S)
    assert draws["z"].shape == (7, T, S)


def test_scan_refuses_obs_of_another_shape(walk):
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.contrib.control_flow import scan
    from numpyro.infer.util import log_density

    import noiseaware.numpyro as nan

    rel, _ = walk

    def model():
        def step(c, y_t):
            nan.Noisy.from_release("y", rel, dist.Poisson(5.0), obs=y_t[:2])
            return c, None

        scan(step, 0.0, jnp.asarray(rel.values))
        numpyro.sample("x", dist.Normal(0, 1))

    with pytest.raises(ValueError, match="one step of the release"):
        log_density(model, (), {}, {"x": 0.0})


def test_plate_on_the_wrong_axis_is_a_clear_error(walk):
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer.util import log_density

    import noiseaware.numpyro as nan

    rel, _ = walk

    def model():
        r = numpyro.sample("r", dist.Gamma(2.0, 0.2))
        with numpyro.plate("time", T):  # dim=-1, but the release's time axis is -2
            nan.Noisy.from_release("y", rel, dist.Poisson(r))

    with pytest.raises(ValueError, match=r"plate.*dim=-2"):
        log_density(model, (), {}, {"r": 8.0})


def test_subsampled_plate_observes_its_rows(walk):
    import numpyro
    import numpyro.distributions as dist
    from numpyro import handlers

    import noiseaware.numpyro as nan

    rel, _ = walk

    def model():
        r = numpyro.sample("r", dist.Gamma(2.0, 0.2))
        with numpyro.plate("time", T, dim=-2, subsample_size=2), numpyro.plate("region", S, dim=-1):
            nan.Noisy.from_release("y", rel, dist.Poisson(r))

    tr = handlers.trace(handlers.seed(handlers.substitute(model, {"r": 8.0}), 3)).get_trace()
    idx = np.asarray(tr["time"]["value"])
    np.testing.assert_array_equal(np.asarray(tr["y"]["value"]), rel.values[idx])
    assert tr["y"]["scale"] == pytest.approx(T / 2)


def test_vmap_over_parameters_matches_a_loop(walk):
    import jax
    import jax.numpy as jnp
    import numpyro.distributions as dist
    from numpyro.infer.util import log_density

    import noiseaware.numpyro as nan

    rel, _ = walk

    def model(rate):
        nan.Noisy.from_release("y", rel, dist.Poisson(rate))

    rates = jnp.array([4.0, 8.0, 12.0])
    vm = jax.vmap(lambda r: log_density(model, (r,), {}, {})[0])(rates)
    loop = [float(log_density(model, (r,), {}, {})[0]) for r in rates]
    np.testing.assert_allclose(np.asarray(vm), loop, rtol=1e-12)


# --------------------------------------------------------------------------- PyMC
@pytest.fixture(scope="module")
def areas():
    rng = np.random.default_rng(5)
    n = np.array([100, 200, 150, 120, 90, 300])
    return n, na.privatize(rng.binomial(n, 0.3), statistic="counts", epsilon=1.0, sensitivity=1, rng=rng)


def test_pymc_predictions_for_new_units_after_set_data(areas):
    import pymc as pm

    import noiseaware.pymc as nap
    from noiseaware.results import from_groups

    n, rel = areas
    with pm.Model() as m:
        n_data = pm.Data("n", n)
        p = pm.Beta("p", 2.0, 2.0)
        y = nap.Noisy.from_release("y", rel, pm.Binomial.dist(n_data, p))
    # the likelihood is unchanged: the release's values under NumPyro's Noisy at the same p
    import numpyro.distributions as dist

    import noiseaware.numpyro as nan

    ref = float(nan.Noisy(dist.Binomial(n, 0.4), noise=rel).log_prob(rel.values).sum())
    assert float(pm.logp(y, rel.values).sum().eval({p: 0.4})) == pytest.approx(ref, rel=1e-10)
    new_n = np.array([50, 60, 70, 8000])
    post = from_groups({"posterior": {"p": np.full((1, 400), 0.3)}})
    with m:
        pm.set_data({"n": new_n})
        pred = pm.sample_posterior_predictive(post, predictions=True, random_seed=2, progressbar=False)
    y = pred.predictions["y"].values
    assert y.shape == (1, 400, 4)
    alpha = rel.mechanism.alpha
    sd = np.sqrt(new_n * 0.3 * 0.7 + 2 * alpha / (1 - alpha) ** 2)
    z = (y.mean(axis=(0, 1)) - 0.3 * new_n) / (sd / np.sqrt(400))
    assert np.all(np.abs(z) < 4.5), z


@pytest.mark.parametrize("cls", ["TwoSidedGeometric", "DiscreteGaussian"])
def test_pymc_integer_noise_follows_loc_data(cls):
    import pymc as pm

    import noiseaware.pymc as nap
    from noiseaware.results import from_groups

    rng = np.random.default_rng(2)
    x = np.arange(5.0)
    kw = {"epsilon": 1.0} if cls == "TwoSidedGeometric" else {"rho": 0.5}
    rel = na.privatize(np.array([10, 12, 14, 16, 18]), statistic="counts", sensitivity=1, rng=rng, **kw)
    with pm.Model() as m:
        x_data = pm.Data("x", x)
        a = pm.Normal("a", 10.0, 1.0)
        getattr(nap, cls).from_release("y", rel, loc=pm.math.round(a + 2.0 * x_data))
        pm.set_data({"x": np.array([0.0, 100.0])})
        post = from_groups({"posterior": {"a": np.full((1, 300), 10.0)}})
        pred = pm.sample_posterior_predictive(post, predictions=True, random_seed=1, progressbar=False)
    y = pred.predictions["y"].values
    assert y.shape == (1, 300, 2)
    assert abs(y[..., 1].mean() - 210.0) < 2.0 and abs(y[..., 0].mean() - 10.0) < 2.0
    assert m["y"].eval().shape == (2,)


def test_pymc_shape_stays_the_release_for_a_scalar_parameter(areas):
    import pymc as pm

    import noiseaware.pymc as nap

    _, rel = areas
    with pm.Model():
        mu = pm.Gamma("mu", 2.0, 0.1)
        y = nap.Noisy.from_release("y", rel, pm.Poisson.dist(mu))
        assert y.eval().shape == rel.values.shape
