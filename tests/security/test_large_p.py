"""copula.fit at large p (issue 11): diagonal preconditioning within memory, or a refusal up front.

A p = 200 release (19,900 pairs) used to die in the dense Hessian of the Laplace preconditioner
(``RESOURCE_EXHAUSTED: Out of memory allocating 90225225976 bytes``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import noiseaware as na
from noiseaware import copula
from noiseaware._engine import _memory
from noiseaware._engine._memory import compiled_bytes
from noiseaware.copula import LKJPrior, _fit, _model, fit
from noiseaware.datasets import random_correlation, simulate_gaussian_copula
from noiseaware.exceptions import NoiseawareValueError, NoiseawareWarning

P_LARGE = 200


@pytest.fixture(scope="module")
def release_p200() -> na.Release:
    x = np.random.default_rng(0).standard_normal((300, P_LARGE))
    with warnings.catch_warnings():  # the noise swamps the counts at this budget per pair
        warnings.simplefilter("ignore", NoiseawareWarning)
        return na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(1))


def test_plan_at_p200_is_diagonal_and_fits(monkeypatch) -> None:
    plan = _fit._plan_memory("numpyro", P_LARGE, 300, chains=4, draws=1000, warmup=1000)
    assert plan.preconditioner == "diagonal"
    assert plan.preconditioner_bytes < 100 * 2**20  # ~57 MB: a few gradients' workspace
    assert plan.total_bytes < 6 * 2**30  # dominated by the 4 x 1000 stored draws of R and L
    assert plan.limit_bytes is None or plan.total_bytes < plan.limit_bytes
    # the dense route's lower bound alone is the 88-90 GB of the report
    monkeypatch.setattr(_memory, "memory_limit", lambda: None)
    dense = _fit._plan_memory("numpyro", P_LARGE, 300, 1, 10, 10, "dense")
    assert dense.preconditioner_bytes > 85e9


@pytest.mark.parametrize(
    ("p", "dense_bytes", "expected"),
    [
        (2, None, "dense"),
        (66, None, "dense"),  # lower bound 28 d^2 doubles = 1.03 GB <= 1 GiB: compile and measure
        (67, None, "diagonal"),  # lower bound above 1 GiB: not even compiled
        (10, 2**31, "diagonal"),  # the compiled program's figure decides (large n can do this)
        (10, 2**29, "dense"),
        (1000, None, "diagonal"),
    ],
)
def test_auto_choice_threshold(monkeypatch, p, dense_bytes, expected) -> None:
    monkeypatch.setattr(_memory, "memory_limit", lambda: None)
    assert _fit._plan_memory("numpyro", p, 300, 1, 1, 1, dense_bytes=dense_bytes).preconditioner == expected
    assert _fit._plan_memory("numpyro", p, 300, 1, 1, 1, "dense").preconditioner == "dense"
    assert _fit._plan_memory("numpyro", p, 300, 1, 1, 1, "diagonal").preconditioner == "diagonal"


def test_auto_takes_diagonal_when_dense_would_not_fit(monkeypatch) -> None:
    monkeypatch.setattr(_memory, "memory_limit", lambda: 2**28)
    assert _fit._plan_memory("numpyro", 10, 300, 1, 10, 10, dense_bytes=2**29).preconditioner == "diagonal"


def test_refused_up_front_with_the_reason(monkeypatch, release_p200) -> None:
    monkeypatch.setattr(_memory, "memory_limit", lambda: 16 * 2**30)
    # dense at p = 200 cannot fit: refused before anything is compiled, pointing at the diagonal route
    with pytest.raises(NoiseawareValueError, match=r"p = 200 .*needs about .*GiB.*limit is 16 GiB.*'diagonal'"):
        fit(release_p200, preconditioner="dense", progressbar=False)
    # so little memory that even the diagonal route (or PyMC's trace) cannot hold the draws
    monkeypatch.setattr(_memory, "memory_limit", lambda: 64 * 2**20)
    diagonal_refused = r"p = 200 .*diagonal preconditioner .*limit is 64 MiB.*fewer chains"
    with pytest.raises(NoiseawareValueError, match=diagonal_refused):
        fit(release_p200, chains=4, draws=1000, progressbar=False)
    with pytest.raises(NoiseawareValueError, match=r"p = 200 .*backend='pymc'.*limit is 64 MiB"):
        fit(release_p200, backend="pymc", chains=4, draws=1000, progressbar=False)


def test_preconditioner_option_is_checked(release_p200) -> None:
    with pytest.raises(NoiseawareValueError, match="preconditioner"):
        fit(release_p200, preconditioner="full")
    with pytest.raises(NoiseawareValueError, match="numpyro"):
        fit(release_p200, backend="pymc", preconditioner="diagonal")


@pytest.mark.slow  # long; moved out of the fast suite to keep it under 10 minutes
def test_p200_setup_gradient_and_curvature_within_estimate(release_p200) -> None:
    """Everything the diagonal route computes before sampling, at p = 200, against XLA's own memory figures."""
    import jax
    import jax.numpy as jnp

    model = _model._numpyro_model(release_p200, LKJPrior())
    z = jnp.asarray(_model._start_point(model, higham_iter=50))
    value_grad = jax.jit(jax.value_and_grad(model.potential)).lower(z).compile()
    f, g = value_grad(z)
    assert np.isfinite(float(f)) and g.shape == (P_LARGE * (P_LARGE - 1) // 2,) and bool(jnp.all(jnp.isfinite(g)))
    curvature = _model._diagonal_curvature(model).lower(z).compile()
    h = np.asarray(curvature(z))
    assert h.shape == g.shape and np.all(np.isfinite(h))
    plan = _fit._plan_memory("numpyro", P_LARGE, 300, 1, 10, 10)
    for program, estimate in ((value_grad, plan.sampler_bytes), (curvature, plan.preconditioner_bytes)):
        measured = compiled_bytes(program)
        if measured is not None:
            assert measured <= estimate


def test_dense_route_measures_its_compiled_program() -> None:
    """The dense route's figure is XLA's, and the lower bound used before compiling is below it (p = 20)."""
    rng = np.random.default_rng(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseawareWarning)
        rel = na.privatize(rng.standard_normal((300, 20)), statistic="median_pairs", epsilon=1.0, rng=rng)
    measured = compiled_bytes(_model._dense_program(_model._numpyro_model(rel, LKJPrior())))
    if measured is None:  # pragma: no cover - backend without memory analysis
        pytest.skip("no XLA memory analysis on this backend")
    assert _fit._DENSE_DOUBLES_PER_D2 * 8 * 190**2 <= measured < 2 * _fit._DENSE_DOUBLES_PER_D2 * 8 * 190**2


@pytest.mark.slow  # make test-full: two curvature programs compiled at p = 200 (7.5 s)
def test_diagonal_curvature_equals_dense_gauss_newton_diagonal() -> None:
    """The structured O(p^2)-memory diagonal equals diag(H_prior) + diag(J^T W J) formed densely."""
    import jax
    import jax.numpy as jnp

    p = 5
    rng = np.random.default_rng(p)
    x = simulate_gaussian_copula(2000, random_correlation(p, rng), [stats.norm()] * p, rng)
    rel = na.privatize(x, statistic="median_pairs", epsilon=3.0, rng=rng)
    model = _model._numpyro_model(rel, LKJPrior(1.5))
    z = jnp.asarray(0.5 * rng.standard_normal(p * (p - 1) // 2))
    got = np.asarray(_model._diagonal_curvature(model)(z))

    pi, pj = np.asarray(model.args["pairs"]).T

    def r_of_z(q):  # type: ignore[no-untyped-def]
        L = model.to_chol(q)
        return (L @ L.T)[pi, pj]

    def loglik_r(r):  # type: ignore[no-untyped-def]
        return model.loglik_pairs(jnp.eye(p).at[pi, pj].set(r).at[pj, pi].set(r))

    J = np.asarray(jax.jit(jax.jacfwd(r_of_z))(z))
    Hr = np.asarray(jax.jit(jax.hessian(loglik_r))(r_of_z(z)))
    np.testing.assert_allclose(Hr, np.diag(np.diag(Hr)), atol=1e-12)  # one-pair terms: diagonal in r
    w = np.maximum(-np.diag(Hr), 0.0)
    H_prior = np.asarray(jax.jit(jax.hessian(model.prior_potential))(z))
    expected = np.diag(H_prior) + np.einsum("ak,a,ak->k", J, w, J)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.slow  # long; moved out of the fast suite to keep it under 10 minutes
def test_diagonal_route_matches_exact_posterior() -> None:
    """The diagonal route samples the same target: p = 2 against the exact grid posterior (seed 000 §3.1)."""
    import arviz as az

    from tests.test_copula_fit import _grid_posterior, _grid_summary

    rng = np.random.default_rng(7)
    x = simulate_gaussian_copula(400, np.array([[1.0, 0.45], [0.45, 1.0]]), (stats.norm(), stats.expon()), rng)
    rel = na.privatize(x, statistic="median_pairs", epsilon=0.3, rng=rng)
    res = fit(rel, chains=2, draws=600, warmup=200, seed=3, progressbar=False, preconditioner="diagonal")
    assert res.attrs["noiseaware_preconditioner"] == "diagonal"
    exact_mean, _ = _grid_summary(*_grid_posterior(float(rel.values[0]), 400, float(rel.mechanism.alpha)))
    mcse = float(np.ravel(az.mcse(copula.pair_draws(res))["R"].values)[0])
    mean01 = float(na.results.draws(res, "R").mean(axis=0)[0])  # the fit stores R's one pair
    assert abs(mean01 - exact_mean) < 5 * mcse + 1e-3  # |z| > 5: p < 1e-6


@pytest.mark.slow
def test_diagonal_route_matches_dense_route() -> None:
    """Same target, other preconditioner: the two routes agree within Monte Carlo error (p = 3, ~25 s)."""
    import arviz as az

    rng = np.random.default_rng(11)
    R = random_correlation(3, rng)
    x = simulate_gaussian_copula(3000, R, (stats.norm(), stats.gamma(2), stats.t(5)), rng)
    rel = na.privatize(x, statistic="median_pairs", epsilon=2.0, rng=rng)
    fits = {
        pre: fit(
            rel, chains=2, draws=400, warmup=200, seed=4, progressbar=False, preconditioner=pre, check_mixing=False
        )
        for pre in ("dense", "diagonal")
    }
    assert fits["diagonal"].attrs["noiseaware_preconditioner"] == "diagonal"
    assert fits["dense"].attrs["noiseaware_preconditioner"] == "dense"
    a, b = (copula.pair_draws(fits[k]) for k in ("dense", "diagonal"))
    se = np.hypot(az.mcse(a)["R"].values, az.mcse(b)["R"].values)
    diff = np.abs(a["R"].mean(("chain", "draw")).values - b["R"].mean(("chain", "draw")).values)
    assert np.all(diff < 5 * se)  # |z| > 5 has probability < 1e-6 per pair under correct samplers
    assert float(az.rhat(b)["R"].max()) < 1.05


@pytest.mark.slow
def test_short_fit_at_p200(release_p200) -> None:
    """The whole route at p = 200: about 45 s on 2 shared cores (~1.1 GB resident), so marked slow."""
    # 10 draws cannot mix by the package's standard (ESS >= 100 per chain): the route is what is tested
    res = fit(release_p200, chains=1, warmup=10, draws=10, seed=0, progressbar=False, check_mixing=False)
    assert res.attrs["noiseaware_preconditioner"] == "diagonal"
    pairs = na.results.draws(res, "R")  # what the fit stores: the p(p-1)/2 pairs
    assert pairs.shape == (10, P_LARGE * (P_LARGE - 1) // 2)
    R = copula.functional(res, lambda r: r)  # the matrix, rebuilt by the reader
    assert R.shape == (10, P_LARGE, P_LARGE)
    assert np.all(np.isfinite(R))
    np.testing.assert_allclose(np.diagonal(R, axis1=1, axis2=2), 1.0, atol=1e-10)


@pytest.mark.slow
def test_pymc_model_at_p200_builds_and_differentiates(release_p200) -> None:
    """PyMC at p = 200 has no such blow-up: build, compile and one log-density + gradient.

    Measured: build 16 s, compile 63 s, one evaluation 0.2 s, 0.55 GB resident (2 shared cores).
    """
    model = _model._pymc_model(release_p200, LKJPrior())
    fn = model.logp_dlogp_function(ravel_inputs=True)
    fn.set_extra_values({})
    point = model.initial_point()
    x0 = np.concatenate([np.ravel(point[v.name]) for v in fn._grad_vars])
    logp, grad = fn(x0)
    assert np.isfinite(logp) and grad.shape == (P_LARGE * (P_LARGE - 1) // 2,) and np.all(np.isfinite(grad))
