"""Structural checks of every public distribution in both PPLs, over the registry of ``structural.py``.

NumPyro: pytree round trip (a distribution passed through ``jit`` as an argument), ``vmap``
over a batch of parameters, ``infer_shapes``, ``mean``/``variance`` against Monte Carlo.
PyMC: random-variable sizes (the equivalent of ``BaseTestDistributionRandom.check_rv_size``),
support point finite and in the support, logcdf self-consistency. Both: ``from_release`` for
every class, and the completeness of the spec and test registries. No per-class branches.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from noiseaware._core import get_backend
from noiseaware._core._specs import SPECS

from . import structural as st
from .backends import NUMBA_PYTHON_RV
from .cases import CASES, NO_CASE

NB = get_backend("numpy")
entries = [pytest.param(e, id=e.name) for e in st.ENTRIES]
#: |z| above this is a failure: two-sided p = 6.8e-6 per comparison (seeded; a few dozen comparisons)
Z_REJECT = 4.5


def _distributions(module) -> set[str]:
    """The distribution classes a front end exports (its ``__all__`` also has sentinels such as RELEASE_VALUES)."""
    return {name for name in module.__all__ if isinstance(getattr(module, name), type)}


def test_every_public_distribution_has_a_spec_and_registry_entries():
    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    dists = _distributions(nan)
    assert dists == _distributions(nap) == set(SPECS) == set(st.BY_NAME)
    covered = {c.name for c in CASES} | set(NO_CASE)
    assert dists <= covered
    for name in sorted(dists):
        spec = SPECS[name]
        assert spec.name == name and spec.rules and spec.release_args is not None
        assert set(spec.rules) <= set(spec.params), name
        for mod in (nan, nap):
            cls = getattr(mod, name)
            assert callable(getattr(cls, "from_release", None)), (mod.__name__, name)
            assert cls.__doc__ and "Examples" in cls.__doc__, (mod.__name__, name)


# --------------------------------------------------------------------------- NumPyro
@pytest.mark.parametrize("e", entries)
def test_numpyro_pytree_round_trip_and_jit_argument(e):
    import jax

    d = st.numpyro_dist(e)
    leaves, tree = jax.tree_util.tree_flatten(d)
    d2 = jax.tree_util.tree_unflatten(tree, leaves)
    assert type(d2) is type(d)
    assert (d2.batch_shape, d2.event_shape) == (d.batch_shape, d.event_shape)
    want = np.asarray(d.log_prob(e.value))
    np.testing.assert_allclose(np.asarray(d2.log_prob(e.value)), want, rtol=0, atol=1e-12)
    # a distribution is a valid argument of a jitted function (flattened and rebuilt by JAX)
    got = jax.jit(lambda dist, x: dist.log_prob(x))(d, e.value)
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=1e-12)
    assert np.all(np.isfinite(want))


@pytest.mark.parametrize("e", entries)
def test_numpyro_refuses_float32_naming_the_setting(e):
    """With JAX's float64 off, building the law or its log-density raises, never answers in float32."""
    import jax

    from noiseaware.exceptions import NoiseawareValueError

    with jax.enable_x64(False), pytest.raises(NoiseawareValueError, match="jax_enable_x64"):
        st.numpyro_dist(e).log_prob(e.value)


@pytest.mark.parametrize("e", entries)
def test_numpyro_vmap_over_a_batch_of_parameters(e):
    import jax

    pname, thetas = e.batch

    def logp(theta):
        return st.numpyro_dist(e, {**e.params, pname: theta}).log_prob(e.value)

    got = np.asarray(jax.vmap(logp)(thetas))
    want = np.array([float(logp(t)) for t in thetas])
    assert got.shape == (len(thetas),)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    assert len(np.unique(np.round(want, 8))) == len(thetas)  # the parameter matters


@pytest.mark.parametrize("e", [pytest.param(e, id=e.name) for e in st.ENTRIES if e.no_infer_shapes is None])
def test_numpyro_infer_shapes(e):
    d = st.numpyro_dist(e)
    args = {k: np.shape(v) for k, v in d.get_args().items()}
    assert type(d).infer_shapes(**args) == (d.batch_shape, d.event_shape)


@pytest.mark.parametrize("e", entries)
def test_numpyro_moments_against_monte_carlo(e):
    import jax

    d = st.numpyro_dist(e, {**e.params})
    n = 20_000
    x = np.asarray(d.sample(jax.random.PRNGKey(7), (n,)), dtype=np.float64)
    assert x.shape == (n, *d.batch_shape, *d.event_shape)
    mean = np.asarray(d.mean)
    z_mean = (x.mean(0) - mean) / (x.std(0) / math.sqrt(n))
    assert np.max(np.abs(z_mean)) < Z_REJECT, z_mean
    if "variance" in e.moments:
        var = np.asarray(d.variance)
        # standard error of the sample variance from the fourth central moment
        c = x - x.mean(0)
        se = np.sqrt(np.maximum((c**4).mean(0) - c.var(0) ** 2, 0) / n)
        z_var = (c.var(0) - var) / se
        assert np.max(np.abs(z_var)) < Z_REJECT, z_var
        # power: a variance off by 10% is rejected
        assert np.max(np.abs((c.var(0) - 1.1 * var) / se)) > Z_REJECT


# --------------------------------------------------------------------------- PyMC
@pytest.mark.parametrize("e", entries)
def test_pymc_rv_sizes(e):
    import pymc as pm

    base = st.pymc_dist(e)
    event = tuple(int(s) for s in base.shape.eval())[len(base.shape.eval()) - e.event_dim :]
    for size, want in [(None, event), ((), event), (1, (1, *event)), ((2,), (2, *event)), ((2, 3), (2, 3, *event))]:
        rv = st.pymc_dist(e, size=size) if size is not None else base
        assert tuple(rv.shape.eval()) == want, (size, tuple(rv.shape.eval()))
        assert np.shape(pm.draw(rv, random_seed=1)) == want, size


@pytest.mark.parametrize("e", entries)
def test_pymc_support_point_is_finite_and_in_support(e):
    import pymc as pm
    from pymc.distributions.distribution import support_point

    for size in (None, (2,)):
        rv = st.pymc_dist(e, **({} if size is None else {"size": size}))
        sp = support_point(rv).eval()
        assert np.shape(sp) == tuple(rv.shape.eval())
        assert np.all(np.isfinite(sp))
        if size is None:  # in the support: a finite log-density there
            assert np.all(np.isfinite(pm.logp(rv, sp).eval()))


@NUMBA_PYTHON_RV  # the slow cases draw through the default backend
@pytest.mark.parametrize("e", st.params_for("logcdf", [e for e in st.ENTRIES if e.logcdf], lambda e: e.name))
def test_pymc_logcdf_self_consistency(e):
    """``exp(logcdf(k)) - exp(logcdf(k - 1)) == exp(logp(k))`` over the bulk of the law."""
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    rv = st.pymc_dist(e)
    draws = pm.draw(rv, draws=200, random_seed=3)
    k = np.arange(draws.min() - 3, draws.max() + 4)
    kt = pt.as_tensor_variable(k.astype(np.int64))
    # one compiled function for the three graphs (compiling is most of the cost)
    f = pytensor.function([], [pm.logcdf(rv, kt), pm.logcdf(rv, kt - 1), pm.logp(rv, kt)])
    cdf, cdf_prev, pmf = (np.exp(x) for x in f())
    np.testing.assert_allclose(cdf - cdf_prev, pmf, rtol=1e-8, atol=1e-14)
    assert np.all(np.diff(cdf) >= -1e-15)


# --------------------------------------------------------------------------- from_release, both PPLs
def _spec_logp(e, rel):
    """The release's log-density by the spec in NumPy, from the release's own fields."""
    spec = SPECS[e.name]
    args, values = spec.release_args(rel)
    if "p" not in spec.params:  # a composite release's number of variables, not a parameter of these laws
        args.pop("p", None)
    prepared = spec.prepare(**e.release_args, **args)
    return float(np.sum(spec.logp(NB, np.asarray(values, dtype=np.float64), **prepared))), values


@pytest.mark.parametrize("e", entries)
def test_from_release_in_both_ppls(e):
    import pymc as pm
    from numpyro import handlers

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    rel = st.release(e.release)
    params = {**e.params, **e.release_params}
    first_np = () if e.numpyro_first is None else (e.numpyro_first(params),)
    first_pm = () if e.pymc_first is None else (e.pymc_first(params),)
    cls_np = getattr(nan, e.name)
    # from_release(name, release, ...) everywhere; Noisy's base distribution comes after the release
    tr = handlers.trace(handlers.seed(lambda: cls_np.from_release("y", rel, *first_np, **e.release_args), 0))
    site = tr.get_trace()["y"]
    with pm.Model() as model:
        getattr(nap, e.name).from_release("y", rel, *first_pm, **e.release_args)
    obs_pm = np.asarray(model.rvs_to_values[model["y"]].data)
    spec = SPECS[e.name]
    _, values = spec.release_args(rel)
    np.testing.assert_array_equal(np.asarray(site["value"]), values)
    np.testing.assert_array_equal(obs_pm, values)
    assert site["is_observed"]
    lp_np = float(np.sum(site["fn"].log_prob(site["value"])))
    # the latent variables it adds (named in its docstring): the same in both PPLs
    latent_pm = sorted([v.name for v in model.free_RVs] + [v.name for v in model.deterministics])
    latent_np = sorted(k for k, s in tr.get_trace().items() if k != "y" and s["type"] in ("sample", "deterministic"))
    assert latent_pm == latent_np == sorted(e.latent)
    if e.latent:
        assert np.isfinite(lp_np) and np.isfinite(model.compile_logp()(model.initial_point()))
        return
    lp_pm = float(model.compile_logp()({}))
    assert abs(lp_pm - lp_np) < 1e-9
    if spec.logp is not None and spec.prepare is not None:
        want, _ = _spec_logp(e, rel)
        assert abs(lp_np - want) < 1e-9


# ------------------------------------------------ one protocol for LaplaceCensoredDirichletStat
@pytest.mark.parametrize("parameterization", st.params_for("protocol", ["noncentered", "centered"], str))
def test_dirichlet_stat_is_one_distribution_in_both_ppls(parameterization):
    """``observed=`` / ``obs=`` like any other class; same latent sites; the same joint density."""
    import numpyro
    import pymc as pm
    from numpyro.infer.util import log_density

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    alpha, n, a, scale = st.LCDS_ALPHA, 500, 0.01, 0.05
    y = np.array([-1.5, -1.2, -0.7])
    latent = "s_s0_z" if parameterization == "noncentered" else "s_s0"
    point = np.array([0.3, -1.1, 0.4]) if latent == "s_s0_z" else st.LCDS_S0

    def model():
        law = nan.LaplaceCensoredDirichletStat(alpha, n, a, scale).with_latent("s", parameterization=parameterization)
        numpyro.sample("s", law, obs=y)

    def old_model():
        nan.LaplaceCensoredDirichletStat.observe("s", alpha, n, a, scale, y, parameterization=parameterization)

    lp_np, tr = log_density(model, (), {}, {latent: point})
    lp_old, _ = log_density(old_model, (), {}, {latent: point})
    assert abs(float(lp_np) - float(lp_old)) < 1e-12  # the old helper: the same sites, the same density
    with pm.Model() as m:
        nap.LaplaceCensoredDirichletStat("s", alpha, n, a, scale, observed=y, parameterization=parameterization)
    assert [v.name for v in m.observed_RVs] == ["s"]
    lp_pm = float(m.compile_logp()({latent: point}))
    assert abs(lp_pm - float(lp_np)) < 1e-9
    # the joint density, independently: N(s0; mu, Sigma/n) (+ N(z; 0, I) Jacobian-free in z) + Laplace
    s0 = np.asarray(tr["s_s0"]["value"])
    d = nan.LaplaceCensoredDirichletStat(alpha, n, a, scale)
    want = float(d.joint_log_prob(y, s0))
    if latent == "s_s0_z":  # non-centred: the density of z replaces that of s0 (a linear change of variables)
        want += float(np.sum(-0.5 * point**2) - 1.5 * math.log(2 * math.pi))
        want -= float(np.asarray(d.latent.log_prob(s0)))
    assert abs(float(lp_np) - want) < 1e-9


@pytest.mark.slow  # ("protocol", "predictive") in structural.SLOW
def test_dirichlet_stat_predictive_in_both_ppls():
    import jax
    import numpyro
    import pymc as pm
    from numpyro.infer import Predictive

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    alpha, n, a, scale = st.LCDS_ALPHA, 500, 0.01, 0.05

    def model(obs=None):
        numpyro.sample("s", nan.LaplaceCensoredDirichletStat(alpha, n, a, scale).with_latent("s"), obs=obs)

    draws = Predictive(model, num_samples=5)(jax.random.PRNGKey(0))
    assert draws["s"].shape == (5, 3) and draws["s_s0"].shape == (5, 3)
    with pm.Model():
        nap.LaplaceCensoredDirichletStat("s", alpha, n, a, scale, observed=np.array([-1.5, -1.2, -0.7]))
        pp = pm.sample_prior_predictive(5, random_seed=1)
    assert pp.prior_predictive["s"].shape == (1, 5, 3)
    # without its latent the NumPyro law has no log-density (and says so)
    with pytest.raises(ValueError, match="no closed form"):
        nan.LaplaceCensoredDirichletStat(alpha, n, a, scale).log_prob(np.zeros(3))


def test_numpyro_integer_constraint_is_built_on_public_api():
    """``Integer`` subclasses NumPyro's public ``Constraint`` only, and checks every integer, no bound."""
    import numpy as np
    from numpyro.distributions import constraints

    from noiseaware.numpyro._common import Integer, integer

    private = [c.__name__ for c in Integer.__mro__ if c.__module__.startswith("numpyro") and c.__name__.startswith("_")]
    assert private == [] and issubclass(Integer, constraints.Constraint)
    assert integer.is_discrete and integer.event_dim == 0 and integer == Integer()
    got = np.asarray(integer(np.array([-(2.0**60), -3.0, 0.0, 7.0, 2.5, np.inf, np.nan])))
    assert got.tolist() == [True, True, True, True, False, False, False]


def test_pymc_random_variables_are_int64_and_print_as_their_distribution():
    """Each discrete PyMC class's ``RandomVariable`` draws int64 counts and prints under the class's name."""
    import pymc as pm

    import noiseaware.pymc as nap

    classes = {name: getattr(nap, name) for name in _distributions(nap)}
    ops = {name: cls.rv_op for name, cls in classes.items() if issubclass(cls, pm.Discrete)}
    assert len(ops) == 6
    for name, op in ops.items():
        assert op.dtype == "int64", name
        assert op._print_name == (name, f"\\operatorname{{{name}}}"), name
