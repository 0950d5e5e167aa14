"""copula.fit (NumPyro): one set of compiled programs per shape, reused for a new release without stale data."""

from __future__ import annotations

import numpy as np
import pytest

import noiseaware as na
from noiseaware import results
from noiseaware._engine import NutsProgramSpec, group
from noiseaware._engine._nuts import NutsRun
from noiseaware._engine._precondition import fd_hessian
from noiseaware.copula import _model, fit
from noiseaware.datasets import demo_copula_data

pytest.importorskip("numpyro")

# The shape and settings of the ``fits`` fixture of tests/test_copula_fit.py (n = 400, p = 2, 2 chains,
# 1000 + 500 iterations): in the fast suite its programs are compiled once there and this module only
# samples (run alone, the first fit below compiles them, about 20 s on 2 loaded cores).
N, P = 400, 2
CFG = {"chains": 2, "draws": 1000, "warmup": 500, "check_mixing": False}


def _release(seed: int) -> na.Release:
    x, _, _ = demo_copula_data(seed=seed, n=N)
    return na.privatize(x[:, :P], statistic="median_pairs", epsilon=0.3, rng=np.random.default_rng(seed))


@pytest.fixture
def traces(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the Python traces of the potential (its body runs only while JAX traces it)."""
    count = [0]
    potential = _model._potential

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        count[0] += 1
        return potential(*args, **kwargs)

    monkeypatch.setattr(_model, "_potential", counted)
    return count


def _numbers(traces: list[int]) -> tuple[int, int, int]:
    return len(_model._PROGRAMS), _model._CACHE_INFO["misses"], traces[0]


@pytest.mark.slow  # make test-full: two fits (4 s)
def test_second_release_of_the_same_shape_compiles_nothing(traces: list[int]) -> None:
    a, b = _release(11), _release(12)
    assert a.n == b.n and not np.array_equal(a.values, b.values)  # same shape, other counts
    fa = fit(a, seed=4, **CFG)
    after_a = _numbers(traces)
    fb = fit(b, seed=4, **CFG)
    # no new program, no cache miss, and the potential was not traced again (so nothing was compiled)
    assert _numbers(traces) == after_a
    assert _model._CACHE_INFO["hits"] >= 2  # the model and the NUTS run (the Hessian is by differences at p = 2)
    # not stale: B's draws are B's -- another target than A's, the counts of B observed
    assert not np.allclose(results.draws(fa), results.draws(fb))
    np.testing.assert_array_equal(group(fb, "observed_data")["pairs"].values, np.asarray(b.values, dtype=float))


def test_other_n_is_another_shape() -> None:
    """``n`` fixes the Fisher table (support and window width), so it is part of the key."""
    model_a = _model._numpyro_model(_release(11), _model.LKJPrior())
    x, _, _ = demo_copula_data(seed=13, n=N + 1)
    c = na.privatize(x[:, :P], statistic="median_pairs", epsilon=0.3, rng=np.random.default_rng(13))
    model_c = _model._numpyro_model(c, _model.LKJPrior())
    assert model_a.programs is not model_c.programs
    assert model_a.programs is _model._numpyro_model(_release(12), _model.LKJPrior()).programs


def test_start_point_transform_is_numpyros_inverse() -> None:
    """The start point's NumPy inverse of ``CorrCholeskyTransform`` (no program compiled) is NumPyro's."""
    import jax
    import jax.numpy as jnp
    from numpyro.distributions import constraints
    from numpyro.distributions.transforms import biject_to

    to_chol = biject_to(constraints.corr_cholesky)
    # NumPyro's transform, jitted: one small program per size instead of each operation compiled on its own
    inverse, forward = jax.jit(lambda v: to_chol.inv(v)), jax.jit(lambda v: to_chol(v))
    rng = np.random.default_rng(5)
    for p in (2, 3, 7):
        L = np.linalg.cholesky(na.datasets.random_correlation(p, rng))
        z = _model._chol_to_unconstrained(L)
        np.testing.assert_allclose(z, np.asarray(inverse(jnp.asarray(L))), rtol=0, atol=1e-12)
        np.testing.assert_allclose(np.asarray(forward(jnp.asarray(z))), L, rtol=0, atol=1e-12)


@pytest.mark.slow  # make test-full: jax.hessian of a p = 4 copula model compiled (5 s)
def test_difference_hessian_matches_the_compiled_hessian() -> None:
    """Central differences of the exact gradient (dense preconditioner up to d = 105) against jax.hessian."""
    import jax.numpy as jnp

    x, _, _ = demo_copula_data(seed=3, n=2000)
    rel = na.privatize(x[:, :4], statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(3))
    model = _model._numpyro_model(rel, _model.LKJPrior())
    z = _model._start_point(model)
    exact = np.asarray(_model._dense_program(model)(jnp.asarray(z), model.data)[2])
    approx = fd_hessian(lambda v: model.programs.value_grad(v, model.data), z)
    assert np.abs(approx - exact).max() <= 1e-6 * np.abs(exact).max()
    # and it is not vacuous: a Hessian off by 1% in one entry pair is caught by the same bound
    wrong = exact.copy()
    wrong[0, 1] = wrong[1, 0] = exact[0, 1] + 0.01 * np.abs(exact).max()
    assert np.abs(wrong - approx).max() > 1e-6 * np.abs(exact).max()


def test_background_compile_errors_reach_the_caller() -> None:
    """A failure while compiling the NUTS run in its background thread is raised in the fit's thread."""
    import jax

    def broken(*args):
        raise ZeroDivisionError("no program")

    run = NutsRun(jax.jit(broken), jax.jit(broken), NutsProgramSpec(chains=1, draws=1, warmup=1, target_accept=0.8))
    args = (np.zeros(2, np.uint32), np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1)), (np.zeros(1), np.ones(1)))
    with pytest.raises(ZeroDivisionError, match="no program"):
        run(*args, (np.zeros(1), np.ones(1)))
