"""The PyMC log-density of ``NoisySufficientStatistics``: exact, differentiable, and a small graph that runs fast.

Four covariates with an intercept (a 6 x 6 moment matrix, 20 released entries), Gaussian and Laplace
noise. The values are checked against the NumPy core and NumPyro to 1e-10 at random points, the
gradients against central differences of the NumPy core; the compiled log-density and gradient
must hold no ``Scan`` and few nodes, and one evaluation of both must take well under the time that
made ``pm.sample`` on this law take minutes (a 56 ms gradient under PyTensor 2's C backend with
threaded OpenBLAS on a loaded 2-core machine, ``benchmarks/pymc_regression_speed.py``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from noiseaware._core import get_backend
from noiseaware._core._regression import (
    RegressionParameters,
    StatisticsLayout,
    gaussian_statistics_logp,
    laplace_statistics_logp,
    latent_statistics,
    released_entries,
    sum_moments,
)

#: make test-full: the law's PyMC graph compiled per noise family (35 s and 14 s from empty caches, Numba); the
#: regression law's exactness in both PPLs stays in make test (tests/regression/test_distribution.py)
pytestmark = pytest.mark.slow

NP = get_backend("numpy")
D, N = 4, 2000.0
ROWS, COLS = released_entries(D + 2, True)
M = ROWS.size
SCALE = np.full((D + 2, D + 2), 3.0)
SCALE[0, 0] = 0.0
NOISE = SCALE[ROWS, COLS]
LAYOUT = StatisticsLayout(N, ROWS, COLS, True)
CORR = 0.7 * np.eye(D) + 0.3


def _point(rng: np.random.Generator) -> dict[str, np.ndarray]:
    a = rng.normal(size=(D, D)) * 0.3
    return {
        "beta": rng.normal(size=D + 1) * 0.5,
        "sigma": np.array(0.2 + rng.uniform()),
        "mu_x": rng.normal(size=D) * 0.2,
        "cov_x": a @ a.T + 0.3 * np.eye(D),
        "w": rng.normal(size=M),
    }


def _params(p: dict[str, np.ndarray]) -> RegressionParameters:
    return RegressionParameters(p["beta"], p["sigma"], p["mu_x"], p["cov_x"])


def _observed() -> np.ndarray:
    p = _point(np.random.default_rng(0))
    mean, cov = sum_moments(NP, _params(p), LAYOUT)
    return mean + np.linalg.cholesky(cov) @ p["w"] + NOISE * np.random.default_rng(1).normal(size=M)


OBS = _observed()


def _numpy_logp(family: str, p: dict[str, np.ndarray]) -> float:
    if family == "gaussian":
        return float(gaussian_statistics_logp(NP, OBS, _params(p), LAYOUT, NOISE))
    return float(laplace_statistics_logp(NP, OBS, latent_statistics(NP, p["w"], _params(p), LAYOUT), NOISE))


def _pymc_functions(family: str) -> tuple[Any, list[str]]:
    """``f(beta, sigma, mu_x, cov_x[, w]) -> [logp, *grads]`` of the law alone, compiled in PyTensor's default mode."""
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    from noiseaware.pymc import NoisySufficientStatistics

    names = ["beta", "sigma", "mu_x", "cov_x"] + (["w"] if family == "laplace" else [])
    ins = {"beta": pt.vector("beta"), "sigma": pt.scalar("sigma"), "mu_x": pt.vector("mu_x"),
           "cov_x": pt.matrix("cov_x"), "w": pt.vector("w")}
    latent = ins["w"] if family == "laplace" else None
    rv = NoisySufficientStatistics.dist(ins["beta"], ins["sigma"], ins["mu_x"], ins["cov_x"], n=N, scale=SCALE,
                                        intercept=True, family=family, latent=latent)
    lp = pm.logp(rv, OBS).sum()
    grads = pytensor.grad(lp, [ins[k] for k in names])
    return pytensor.function([ins[k] for k in names], [lp, *grads]), names


@pytest.fixture(scope="module", params=["gaussian", "laplace"])
def compiled(request: Any) -> tuple[str, Any, list[str]]:
    fn, names = _pymc_functions(request.param)
    return request.param, fn, names


def test_logp_equals_numpy_core_and_numpyro(compiled: tuple[str, Any, list[str]]) -> None:
    import jax
    import jax.numpy as jnp

    from noiseaware.numpyro import NoisySufficientStatistics as NumpyroLaw

    family, fn, names = compiled
    laplace = family == "laplace"

    def numpyro_logp(beta: Any, sigma: Any, mu_x: Any, cov_x: Any, w: Any) -> Any:
        law = NumpyroLaw(beta, sigma, mu_x, cov_x, n=N, scale=SCALE, intercept=True, family=family,
                         latent=w if laplace else None)
        return law.log_prob(jnp.asarray(OBS))

    rng = np.random.default_rng(7)
    with jax.enable_x64(True):
        ref_fn = jax.jit(numpyro_logp)
        for _ in range(3):
            p = _point(rng)
            want = _numpy_logp(family, p)
            got = float(fn(*(p[k] for k in names))[0])
            ref = float(ref_fn(*(jnp.asarray(p[k]) for k in ("beta", "sigma", "mu_x", "cov_x", "w"))))
            assert got == pytest.approx(want, rel=1e-10, abs=1e-10)
            assert ref == pytest.approx(want, rel=1e-10, abs=1e-10)


def test_gradient_equals_finite_differences(compiled: tuple[str, Any, list[str]]) -> None:
    family, fn, names = compiled
    p = _point(np.random.default_rng(11))
    grads = dict(zip(names, fn(*(p[k] for k in names))[1:], strict=True))
    for name in names:
        x = np.atleast_1d(p[name]).astype(np.float64)
        for idx in np.ndindex(x.shape):
            h = 1e-5 * max(1.0, abs(x[idx]))
            up, down = x.copy(), x.copy()
            up[idx] += h
            down[idx] -= h
            shape = np.shape(p[name])
            fd = (_numpy_logp(family, {**p, name: up.reshape(shape)})
                  - _numpy_logp(family, {**p, name: down.reshape(shape)})) / (2 * h)
            g = np.atleast_1d(grads[name])[idx]
            if name == "cov_x" and idx[0] != idx[1]:
                continue  # PyTensor's gradient in a symmetric matrix's entry is taken entry-wise: checked below
            assert g == pytest.approx(fd, rel=1e-5, abs=1e-6), (family, name, idx)
    # cov_x enters symmetrically: a symmetric perturbation's directional derivative is the sum of both entries
    g = np.asarray(grads["cov_x"])
    for i, j in [(0, 1), (1, 3), (2, 3)]:
        e = np.zeros((D, D))
        e[i, j] = e[j, i] = 1e-5
        fd = (_numpy_logp(family, {**p, "cov_x": p["cov_x"] + e}) - _numpy_logp(family, {**p, "cov_x": p["cov_x"] - e}))
        assert g[i, j] + g[j, i] == pytest.approx(fd / 2e-5, rel=1e-5, abs=1e-6), (family, i, j)


def _median_ms(fn: Any, args: list[Any], repeats: int = 100) -> float:
    """Median time of ``fn(*args)``; under PyTensor's C linker with one BLAS thread, as docs/regression.md advises.

    PyTensor 2's C backend runs the Cholesky gradient's ``SolveTriangular`` in Python through SciPy, on
    OpenBLAS with its default threads, which on a loaded machine costs 10-100x more than one thread
    (``benchmarks/pymc_regression_speed.py``); PyTensor 3's Numba backend does not call it.
    """
    import pytensor
    from threadpoolctl import threadpool_limits

    linker = type(pytensor.compile.mode.get_default_mode().linker).__name__
    with threadpool_limits(limits=1 if linker != "NumbaLinker" else None, user_api="blas"):
        fn(*args)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def _check_small_and_fast(what: str, nodes: list[Any], median_ms: float) -> None:
    """No ``Scan``, fewer than 400 nodes, and under 5 ms (100x the Numba figure, 10x the C one with one BLAS thread)."""
    import pytensor
    from pytensor.scan.op import Scan

    assert not any(isinstance(a.op, Scan) for a in nodes), what
    assert len(nodes) < 400, (what, len(nodes))
    linker = type(pytensor.compile.mode.get_default_mode().linker).__name__
    assert median_ms < 5.0, f"{what}: logp and gradient took {median_ms:.2f} ms (median of 100) under {linker}"


def test_law_logp_and_gradient_small_and_fast(compiled: tuple[str, Any, list[str]]) -> None:
    """The law's log-density and gradient, compiled in the default mode: one small graph, well under 5 ms.

    Measured: about 0.05 ms for value and gradient under PyTensor 3's Numba backend (about 140
    nodes); under PyTensor 2's C backend 0.5 ms with one OpenBLAS thread and 5-56 ms with
    OpenBLAS's default threads on a loaded 2-core machine (PyTensor's Python ``SolveTriangular`` in
    the Cholesky gradient), which is what made ``pm.sample`` on this law take minutes.
    """
    family, fn, names = compiled
    p = _point(np.random.default_rng(3))
    _check_small_and_fast(family, fn.maker.fgraph.toposort(), _median_ms(fn, [p[k] for k in names]))


def _user_model(family: str) -> Any:
    import pymc as pm

    from noiseaware.pymc import NoisySufficientStatistics

    with pm.Model() as model:
        beta = pm.Normal("beta", 0.0, 1.0, shape=D + 1)
        sigma = pm.HalfNormal("sigma", 1.0)
        mu_x = pm.Normal("mu_x", 0.0, 1.0, shape=D)
        sd_x = pm.HalfNormal("sd_x", 1.0, shape=D)  # the covariates' covariance, free (an LKJ prior adds compile time)
        cov_x = (sd_x[:, None] * CORR) * sd_x[None, :]
        NoisySufficientStatistics("stats", beta, sigma, mu_x, cov_x, n=N, scale=SCALE, intercept=True, family=family,
                                  observed=OBS)
    return model


@pytest.mark.slow  # make test-full: PyMC compiles the whole model's logp and gradient (35-50 s each at load 6)
@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_model_logp_and_gradient_small_and_fast(family: str) -> None:
    """What ``pm.sample`` evaluates at every leapfrog step, priors included: the same bounds as the law's."""
    model = _user_model(family)
    fn = model.logp_dlogp_function(ravel_inputs=True) if _takes_ravel(model) else model.logp_dlogp_function()
    fn.set_extra_values({})
    x = np.concatenate([np.ravel(v) for v in model.initial_point().values()])
    _check_small_and_fast(f"{family} model", fn._pytensor_function.maker.fgraph.toposort(), _median_ms(fn, [x]))


def _takes_ravel(model: Any) -> bool:
    import inspect

    return "ravel_inputs" in inspect.signature(model.logp_dlogp_function).parameters
