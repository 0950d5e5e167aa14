"""Where regression.fit starts its chains: the release's plug-in values, jittered per chain.

A start drawn uniformly in (-2, 2) on the unconstrained scale (NumPyro's default) can sit where the
likelihood of a large release is so steep that NUTS adapts its step size to ~1e-7 and the chain never
moves (docs/regression.md, "Where the chains start"); these tests pin the replacement down.
"""

from __future__ import annotations

import numpy as np
import pytest

import noiseaware as na
from noiseaware import regression
from noiseaware.exceptions import PrivacyWarning
from noiseaware.regression._model import plug_in_values, prior_scales, pymc_initvals, pymc_model


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    cov = np.array([[0.04, 0.002, 0.0], [0.002, 0.0004, 0.0], [0.0, 0.0, 0.02]])  # sd 0.2, 0.02, 0.14; corr 0.5
    x = g.multivariate_normal([0.05, -0.02, 0.1], cov, size=n)
    y = 0.1 + x @ [0.5, -0.3, 0.2] + 0.05 * g.normal(size=n)
    return x, y


def _release(n: int, rho: float, seed: int = 0) -> tuple[na.Release, np.ndarray]:
    x, y = _data(n, seed)
    z = np.column_stack([x, y])
    return na.privatize(z, statistic="regression", response="x3", bound=1.0, rho=rho,
                        rng=np.random.default_rng(seed + 1)), z


def test_plug_in_start_is_the_data_values_for_a_nearly_exact_release():
    with pytest.warns(PrivacyWarning):  # almost no noise: the values are the data's own
        rel, z = _release(20000, rho=1e6)
    s = regression.plug_in_start(rel)
    x, y = z[:, :3], z[:, 3]
    u = np.column_stack([np.ones(len(y)), x])
    ols = np.linalg.lstsq(u, y, rcond=None)[0]
    np.testing.assert_allclose(s["beta"], ols, atol=2e-3)
    np.testing.assert_allclose(s["mu_x"], x.mean(axis=0), atol=1e-4)
    np.testing.assert_allclose(s["sd_x"], x.std(axis=0), rtol=2e-3)
    corr = s["corr_x_chol"] @ s["corr_x_chol"].T
    np.testing.assert_allclose(corr, np.corrcoef(x.T), atol=5e-3)
    resid = y - u @ ols
    assert s["sigma"] == pytest.approx(resid.std(), rel=2e-2)


def test_plug_in_start_is_in_the_support_and_near_the_prior_under_heavy_noise():
    rel, _ = _release(40, rho=1e-4)  # noise far above the statistics: an indefinite covariance
    prior = regression.RegressionPrior(beta_scale=0.5, sigma_scale=0.3, x_loc_scale=0.2, x_scale=0.4)
    s = regression.plug_in_start(rel, prior)
    assert np.all(np.isfinite(np.concatenate([np.ravel(v) for v in s.values()])))
    assert np.all(np.abs(s["beta"]) <= 1.5 + 1e-12) and 0.0 < s["sigma"] <= 0.9 + 1e-12
    assert np.all(np.abs(s["mu_x"]) <= 0.6 + 1e-12) and np.all((s["sd_x"] > 0) & (s["sd_x"] <= 1.2 + 1e-12))
    low = s["corr_x_chol"]
    assert np.allclose(np.triu(low, 1), 0.0) and np.all(np.diag(low) > 0)
    np.testing.assert_allclose(np.sum(low**2, axis=1), 1.0)


def test_init_to_start_jitters_around_the_suggested_start_and_falls_back_to_uniform():
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer.util import initialize_model

    from noiseaware._engine import init_to_start

    def model(start):
        numpyro.sample("a", dist.Normal(0.0, 100.0).expand([3]).to_event(1), infer={"start": start})
        numpyro.sample("s", dist.HalfNormal(100.0), infer={"start": 20.0})
        numpyro.sample("b", dist.Normal(0.0, 1.0))

    start = np.array([10.0, -10.0, 30.0])
    points = []
    for k in range(8):
        info = initialize_model(jax.random.PRNGKey(k), model, model_args=(start,), init_strategy=init_to_start)
        z = info.param_info.z
        assert np.all(np.abs(np.asarray(z["a"]) - start) <= 0.5)  # NumPyro's uniform start: |z| < 2
        assert abs(float(z["s"]) - np.log(20.0)) <= 0.5  # the unconstrained scale of a positive site
        assert abs(float(z["b"])) < 2.0
        points.append(np.asarray(z["a"]))
    assert len({p.tobytes() for p in points}) == 8  # each chain its own point
    with numpyro.handlers.seed(rng_seed=0):
        narrow = initialize_model(jax.random.PRNGKey(0), model, model_args=(start,),
                                  init_strategy=init_to_start(radius=0.01)).param_info.z
    assert np.all(np.abs(np.asarray(narrow["a"]) - start) <= 0.01)


def test_both_models_start_at_the_plug_in_values():
    from noiseaware.regression._model import numpyro_model

    rel, _ = _release(2000, rho=1.0)
    st = regression.read_regression(rel)
    sc = prior_scales("t", None, st)
    expected = plug_in_values(st, sc)
    _, data, _ = numpyro_model(st, sc)
    assert set(data[1]) == set(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(data[1][name], value)
    m = pymc_model(st, sc)
    init = pymc_initvals(st, sc)
    assert set(init) == {rv.name for rv in m.free_RVs}
    from pymc.initial_point import make_initial_point_fn

    fn = make_initial_point_fn(model=m, overrides=init, return_transformed=False)  # PyMC's start, no jitter
    start = fn(0)
    np.testing.assert_allclose(start["beta"], expected["beta"])
    np.testing.assert_allclose(start["mu_x"], expected["mu_x"])
    cov = m.compile_fn(m["cov_x"], inputs=[m["chol_x"]])({"chol_x": start["chol_x"]})
    low = expected["sd_x"][:, None] * expected["corr_x_chol"]
    np.testing.assert_allclose(cov, low @ low.T, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("sampler", ["numpyro", "pymc", "nutpie"])
def test_pymc_backend_passes_the_start_to_samplers_that_take_one(monkeypatch, sampler):
    from noiseaware.regression import _fit

    seen = {}

    class Stop(Exception):
        pass

    def fake_sample(owner, settings, *, cores, **kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(_fit, "nuts_sampler_choice", lambda owner, nuts_sampler="auto": sampler)
    monkeypatch.setattr(_fit, "pymc_sample", fake_sample)
    rel, _ = _release(2000, rho=1.0)
    with pytest.raises(Stop):
        regression.fit(rel, backend="pymc", chains=1, draws=10, warmup=10, cores=1)
    if sampler == "nutpie":  # PyMC hands nutpie no initial values (and warns if given some)
        assert "initvals" not in seen
    else:
        st = regression.read_regression(rel)
        init = pymc_initvals(st, prior_scales("t", None, st))
        assert set(seen["initvals"]) == set(init)
        np.testing.assert_array_equal(seen["initvals"]["beta"], init["beta"])
