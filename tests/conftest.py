"""Fixtures shared by test modules: one small fit of every fit type, made once per test session (worker).

``tests/test_arviz.py`` (every fit straight into ArviZ) and ``tests/test_arviz_clean.py`` (ArviZ's default calls
with warnings as errors) read the same fits through :func:`shared_fit`, so each is sampled, and its programs
compiled, once per worker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import noiseaware as na


def _copula() -> Any:
    from noiseaware import copula
    from noiseaware.datasets import demo_copula_data

    x, _, _ = demo_copula_data(seed=1, n=400)
    rel = na.privatize(x[:, :3], statistic="median_pairs", epsilon=2.0, rng=np.random.default_rng(0))
    return copula.fit(rel, chains=2, draws=60, warmup=60, seed=0, check_mixing=False)


def _dpcopula() -> Any:
    from noiseaware import copula

    cov = [[1, 0.6, 0.3], [0.6, 1, 0.2], [0.3, 0.2, 1]]
    x = np.random.default_rng(0).multivariate_normal([0, 0, 0], cov, size=400)
    doms = [{"lower": -4.0, "upper": 4.0, "bins": 8}] * 3
    rel = na.privatize(
        x, statistic="dpcopula", epsilon=4.0, correlation="median", domains=doms, rng=np.random.default_rng(1)
    )
    return copula.fit_dpcopula(rel, chains=2, draws=60, warmup=60, seed=0, check_mixing=False)


# The Dirichlet fits below have the shapes and settings of the examples in the docstrings of
# ``dirichlet.fit`` and ``dirichlet.dpmcmc``, so they reuse those compiled programs (JAX's in-memory cache in one
# process, the persistent cache across the test workers) instead of compiling their own.
def _dirichlet() -> Any:
    from noiseaware import dirichlet

    x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=500)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(1))
    return dirichlet.fit(rel, chains=2, draws=60, warmup=60, seed=0, moments="asymptotic", check_mixing=False)


def _dpmcmc() -> Any:
    from noiseaware import dirichlet

    x = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=200)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, threshold=1e-3, rng=np.random.default_rng(1))
    return dirichlet.dpmcmc(rel, chains=2, draws=60, warmup=60, seed=0, check_mixing=False)


def _augment() -> Any:
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    from noiseaware.augment import AugmentationModel, mechanism_log_density, sample
    from noiseaware.mechanisms import GeometricMechanism

    n = 20

    def model(n: int) -> None:
        pi = numpyro.sample("pi", dist.Dirichlet(jnp.ones(4)))
        with numpyro.plate("records", n):
            numpyro.sample("x", dist.Categorical(pi))

    aug = AugmentationModel(
        statistic=lambda x, s: jax.nn.one_hot(x, 4),
        log_density=mechanism_log_density(GeometricMechanism(scale=3.0)),
        model=model,
        model_args=(n,),
        posterior=lambda key, x, theta: {"pi": jax.random.dirichlet(key, 1.0 + jnp.bincount(x, length=4))},
    )
    return sample(aug, np.array([10, -2, 5, 6]), chains=2, draws=60, warmup=30, seed=0, check_mixing=False)


def _covariance() -> Any:
    from noiseaware import covariance

    x = np.random.default_rng(0).uniform(-1, 1, size=(400, 2))
    rel = na.privatize(x, statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    return covariance.fit(rel, chains=2, draws=60, warmup=60, seed=1, check_mixing=False)


# The regression fit is that of tests/regression/test_fit.py, release and settings alike: its NUTS program (the
# release's numbers are its arguments) is compiled once in the fast suite; a second fit reuses it from the engine's
# program cache in the same worker, and from JAX's persistent cache in the other.
def _hierarchy() -> Any:
    from noiseaware import hierarchy

    rel = hierarchy.synthetic_nmf(1, 2, 3, rng=2).release
    # the uniform prior: the integer sweep alone (the hierarchical prior adds a NUTS program, make test-full's)
    return hierarchy.fit(rel, prior="uniform", chains=2, draws=300, warmup=300, seed=1, check_mixing=False)


def _regression() -> Any:
    from noiseaware import regression

    g = np.random.default_rng(0)
    x = np.clip(g.normal(0.0, 0.4, size=(3000, 2)), -1, 1)
    y = np.clip(0.1 + x @ [0.5, -0.3] + 0.2 * g.normal(size=3000), -1, 1)
    rel = na.privatize(np.column_stack([x, y]), statistic="regression", response="x2", bound=1.0, rho=1.0,
                       method="ssp", rng=g)
    return regression.fit(rel, chains=2, draws=300, warmup=300, seed=3, check_mixing=False)


#: Each fit (the kind it records in ``attrs["noiseaware_result"]``), and its ``log_likelihood`` group:
#: "pointwise" (one term per released value, what az.loo leaves out), "per part" (one term per independent
#: part of a release: dirichlet.fit observing a split release whole, none here), or None (latent-record
#: samplers, and the one joint observation of correlated entries of the covariance, regression and one-part
#: Dirichlet fits: ``attrs["noiseaware_log_likelihood"]`` says why).
FITS: dict[str, tuple[Callable[[], Any], str | None]] = {
    "copula.fit": (_copula, "pointwise"),
    "copula.fit_dpcopula": (_dpcopula, "pointwise"),
    "dirichlet.fit": (_dirichlet, None),
    "dirichlet.dpmcmc": (_dpmcmc, None),
    "augment.sample": (_augment, None),
    "covariance.fit": (_covariance, None),
    "hierarchy.fit": (_hierarchy, "pointwise"),
    "regression.fit": (_regression, None),
}


@pytest.fixture(scope="session")
def shared_fit() -> Callable[[str], Any]:
    """``shared_fit(kind)``: the fit of :data:`FITS` named ``kind``, made on first use and kept for the session."""
    made: dict[str, Any] = {}

    def get(kind: str) -> Any:
        if kind not in made:
            made[kind] = FITS[kind][0]()
        return made[kind]

    return get
