"""The one NUTS driver (noiseaware._engine._nuts): NumPyro's NUTS, run the package's way.

* ``numpyro_nuts`` (the driver on a NumPyro model) gives the draws of ``MCMC(NUTS(model))`` with
  vectorized chains for the same seed;
* the driver's NUTS options are NumPyro's defaults (so ``augment``'s inner NUTS, built with
  ``nuts_kernel_options``, is the driver's NUTS);
* NumPyro's HMC internals are imported by one module of the package only;
* the model's initialization runs as one compiled program where that stands in exactly for NumPyro's
  eager ``initialize_model`` (the same starts), and falls back to it where it cannot.
"""

from __future__ import annotations

import inspect
import pathlib
import re
import typing

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

from noiseaware._engine import check_settings, numpyro_nuts
from noiseaware._engine._nuts import nuts_kernel_options
from noiseaware._engine._x64 import float64

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "noiseaware"


def _model() -> None:
    scale = numpyro.sample("scale", dist.HalfNormal(2.0))
    x = numpyro.sample("x", dist.Normal(0.0, scale).expand([2]).to_event(1))
    numpyro.deterministic("total", x.sum())
    numpyro.sample("y", dist.Normal(x.sum(), 0.5), obs=np.float64(1.3))


@pytest.mark.slow  # make test-full: NumPyro's MCMC and the engine's driver, each compiled (18 s)
@pytest.mark.parametrize("chains", [1, 2])
def test_numpyro_nuts_gives_the_draws_of_mcmc_nuts(chains: int) -> None:
    st = check_settings(chains=chains, draws=60, warmup=60, seed=5)

    @float64
    def both():  # type: ignore[no-untyped-def]
        ours = numpyro_nuts(_model, st)
        mcmc = numpyro.infer.MCMC(
            numpyro.infer.NUTS(_model, target_accept_prob=st.target_accept), num_warmup=60, num_samples=60,
            num_chains=chains, chain_method="vectorized", progress_bar=False,
        )
        mcmc.run(jax.random.PRNGKey(5), extra_fields=("num_steps",))
        return ours, mcmc.get_samples(group_by_chain=True), mcmc.get_extra_fields(group_by_chain=True)

    ours, theirs, fields = both()
    # the same trajectories (every tree the same size); the values agree up to floating-point order of
    # operations (one program per chunk against MCMC's one loop), about 1e-6 after 120 iterations
    for name in ("scale", "x", "total"):
        np.testing.assert_allclose(ours["posterior"][name].values, np.asarray(theirs[name]), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(ours["sample_stats"]["n_steps"].values, np.asarray(fields["num_steps"]))
    assert set(ours["sample_stats"].data_vars) >= {"accept_rate", "diverging", "n_steps", "tree_depth", "lp"}
    assert ours["observed_data"]["y"].values.ravel().tolist() == [1.3]


def test_driver_nuts_options_are_numpyros_defaults() -> None:
    st = check_settings(target_accept=0.9)
    opts = nuts_kernel_options(st, max_tree_depth=8)
    defaults = inspect.signature(numpyro.infer.NUTS.__init__).parameters
    assert opts.pop("target_accept_prob") == 0.9 and opts.pop("max_tree_depth") == 8  # the settings, an override
    for name, value in opts.items():
        assert defaults[name].default == value, name
    assert defaults["max_tree_depth"].default == nuts_kernel_options(st)["max_tree_depth"]


def test_numpyro_hmc_internals_in_one_module_only() -> None:
    pattern = re.compile(r"numpyro\.infer\.(hmc|hmc_util|util)\b.*import|from numpyro\.infer\.(hmc|hmc_util|util) ")
    users = sorted(
        str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py") if pattern.search(path.read_text())
    )
    assert users == ["_engine/_nuts.py"]


def _dynamic_support_model() -> None:
    top = numpyro.sample("top", dist.HalfNormal(1.0))
    numpyro.sample("u", dist.Uniform(0.0, top))  # a support that depends on a latent value


def _param_model() -> None:
    loc = numpyro.param("loc", 0.5)  # a param site: NumPyro substitutes its traced value into the potential
    scale = numpyro.sample("scale", dist.HalfNormal(1.0))
    numpyro.sample("y", dist.Normal(loc, scale), obs=0.3)


@pytest.mark.parametrize(
    ("model", "staged"), [(_model, True), (_dynamic_support_model, False), (_param_model, False)],
    ids=["static", "dynamic-support", "param-site"],
)
def test_model_initialization_is_one_program_where_it_stands_in_for_numpyros(monkeypatch, model, staged) -> None:
    """The staged start equals NumPyro's eager ``initialize_model``; models it cannot serve fall back."""
    from numpyro.infer.util import initialize_model

    from noiseaware._engine import _nuts

    keys = jax.random.split(jax.random.PRNGKey(3), 2)

    @float64
    def both():  # type: ignore[no-untyped-def]
        eager = initialize_model(keys, model, model_args=(), dynamic_args=True)
        return _nuts.StagedInit(model)(keys, ()), _nuts.model_potential(model, (), init_keys=keys), eager

    got, target, eager = both()
    assert (got is not None) is staged
    for name, z in eager.param_info.z.items():  # the same starts whichever path served
        np.testing.assert_allclose(np.asarray(target.init.z[name]), np.asarray(z), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(target.init.potential_energy, eager.param_info.potential_energy, rtol=1e-10)
    if staged:
        z = {k: v[0] for k, v in eager.param_info.z.items()}
        np.testing.assert_allclose(target.potential(z, ()), eager.potential_fn()(z), rtol=1e-12)
        assert target.observed["y"].tolist() == 1.3


def test_a_model_that_needs_concrete_data_is_served_eagerly() -> None:
    """NumPy on a data argument cannot be traced abstractly (a JAX tracer error): the eager call serves it."""
    from noiseaware._engine import _nuts

    def model(obs: typing.Any) -> None:
        obs = np.asarray(obs)  # NumPy on the data: concrete in NumPyro's eager call only
        scale = numpyro.sample("scale", dist.HalfNormal(1.0))
        numpyro.sample("y", dist.Normal(0.0, scale), obs=obs)

    keys = jax.random.split(jax.random.PRNGKey(3), 2)
    data = (np.array([0.3, -0.2]),)
    staged = _nuts.StagedInit(model)
    assert staged(keys, data) is None and staged.usable is False
    target = _nuts.model_potential(model, data, init_keys=keys, staged_init=staged)
    assert np.all(np.isfinite(np.asarray(target.init.potential_energy)))


def test_a_model_error_is_raised_at_once_not_traced_again_eagerly() -> None:
    """An error of the model's own (not a JAX tracer error) leaves the staged start, after one trace."""
    from noiseaware._engine import _nuts

    calls = []

    def broken() -> None:
        calls.append(1)
        scale = numpyro.sample("scale", dist.HalfNormal(1.0))
        numpyro.sample("y", dist.Normal(jnp.zeros(2), scale), obs=jnp.zeros(3))  # shapes that cannot broadcast

    keys = jax.random.split(jax.random.PRNGKey(3), 2)
    with pytest.raises(ValueError, match=r"broadcast|shape|Incompatible"):
        _nuts.model_potential(broken, (), init_keys=keys)
    assert len(calls) == 1  # NumPyro's prototype trace only; the eager initialize_model never ran


@pytest.fixture
def compiles() -> typing.Iterator[list[str]]:
    """The names of the programs XLA compiles while the test runs (a listener registered for the test only)."""
    names: list[str] = []

    def listen(event: str, duration_secs: float, **kw: str | int) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            names.append(str(kw.get("fun_name")))

    jax.monitoring.register_event_duration_secs_listener(listen)
    yield names
    jax.monitoring.unregister_event_duration_listener(listen)


def _regression_release(seed: int) -> typing.Any:
    import noiseaware as na

    g = np.random.default_rng(seed)
    x = np.clip(g.normal(0.0, 0.4, size=(300, 1)), -1, 1)
    data = np.column_stack([x, np.clip(0.5 * x[:, 0] + 0.2 * g.normal(size=300), -1, 1)])
    return na.privatize(data, statistic="regression", response="x1", bound=1.0, rho=1.0, rng=g)


def _covariance_release(seed: int) -> typing.Any:
    import noiseaware as na

    g = np.random.default_rng(seed)
    return na.privatize(g.uniform(-1, 1, size=(200, 2)), statistic="second_moment", rho=1.0, bound=1.0, rng=g)


@pytest.mark.slow  # make test-full: three fits of each of three models (28 s)
@pytest.mark.parametrize("fit", ["regression", "covariance-moments", "covariance-wishart"])
def test_a_second_release_of_the_same_shape_compiles_nothing_and_uses_its_own_data(
    fit: str, compiles: list[str]
) -> None:
    """The model's data are arguments of cached programs: each release gets its own draws, compiling nothing.

    B is fitted in an empty cache; then A and B again run B's programs. B again gives B's first draws bit for bit
    (nothing of A stays in the programs), and A's draws are not B's (its data are not B's, baked in).
    """
    from noiseaware import covariance, regression
    from noiseaware._engine._numpyro import PROGRAMS

    kw = {"chains": 2, "draws": 40, "warmup": 40, "seed": 3, "check_mixing": False}
    run, make = {
        "regression": (lambda r: regression.fit(r, **kw), _regression_release),
        "covariance-moments": (lambda r: covariance.fit(r, **kw), _covariance_release),
        "covariance-wishart": (lambda r: covariance.fit(r, route="wishart", **kw), _covariance_release),
    }[fit]
    var = "beta" if fit == "regression" else "sigma"
    PROGRAMS.clear()
    fresh_b = run(make(2)).posterior[var].values  # B in an empty cache
    assert {"jit(staged)", "jit(start)", "jit(advance)"} <= set(compiles), compiles  # the listener hears them
    del compiles[:]
    cached_a = run(make(1)).posterior[var].values
    cached_b = run(make(2)).posterior[var].values
    assert not any(name in {"jit(staged)", "jit(start)", "jit(advance)"} for name in compiles), compiles
    assert PROGRAMS.info["hits"] == 2
    np.testing.assert_array_equal(cached_b, fresh_b)  # B's own data, bit for bit, after A's run
    assert not np.allclose(cached_a, fresh_b)


def test_init_strategy_key_is_equal_for_equal_strategies_and_never_shared_by_other_values() -> None:
    """The compiled start is kept per strategy: equal ``partial`` strategies share it, unhashable ones are not kept."""
    from noiseaware._engine import _cache
    from noiseaware._engine._numpyro import strategy_key

    median = numpyro.infer.init_to_median
    assert strategy_key(median(num_samples=15)) == strategy_key(median(num_samples=15))  # two partial objects
    assert strategy_key(median(num_samples=15)) != strategy_key(median(num_samples=16))
    assert strategy_key(None) is None
    a, b = np.zeros(2000), np.zeros(2000)
    b[1000] = 1.0
    first, second = numpyro.infer.init_to_value(values={"x": a}), numpyro.infer.init_to_value(values={"x": b})
    assert repr(first) == repr(second)  # why a repr key was wrong: NumPy elides the middle of a large array
    cache = _cache.ProgramCache()
    assert cache.get(("fit", strategy_key(first)), lambda: "first") == "first"
    assert cache.get(("fit", strategy_key(second)), lambda: "second") == "second"  # built for its own values
