"""The power map's exponent of dpmcmc's joint move (noiseaware.dirichlet._power_map).

Independent references: the score against central differences of the law of the standardized
power computed from scipy's Gamma density; its mean zero (any score's) by Monte Carlo; the table
against a fresh optimisation; the information's minimum against a grid.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

from noiseaware._core._backend import get_backend
from noiseaware.dirichlet import _power_map as pm


def _log_q(lam: float, z: np.ndarray, p: float) -> np.ndarray:
    """log density of z = (g^p - m) / s under Gamma(e^lam), by change of variables with scipy's pdf."""
    a = math.exp(lam)
    m = math.exp(special.gammaln(a + p) - special.gammaln(a))
    s = math.sqrt(math.exp(special.gammaln(a + 2 * p) - special.gammaln(a)) - m * m)
    u = m + s * z
    g = u ** (1.0 / p)
    return stats.gamma.logpdf(g, a) + np.log(s / p) + (1.0 / p - 1.0) * np.log(u)


@pytest.mark.parametrize(("alpha", "p"), [(0.3, 0.05), (1.0, 1 / 3), (2.0, 0.23), (6.0, 0.3)])
def test_score_matches_central_differences_and_has_mean_zero(alpha: float, p: float) -> None:
    rng = np.random.default_rng(0)
    g = rng.gamma(alpha, size=200_000)
    y = np.log(g)
    score = pm.map_score(alpha, p, y)
    m = math.exp(special.gammaln(alpha + p) - special.gammaln(alpha))
    s = math.sqrt(math.exp(special.gammaln(alpha + 2 * p) - special.gammaln(alpha)) - m * m)
    z = (g[:50] ** p - m) / s
    h = 1e-6
    fd = (_log_q(math.log(alpha) + h, z, p) - _log_q(math.log(alpha) - h, z, p)) / (2 * h)
    np.testing.assert_allclose(score[:50], fd, rtol=1e-5, atol=1e-6)
    # a score has mean zero: within 5 Monte Carlo standard errors
    assert abs(score.mean()) < 5 * score.std() / math.sqrt(score.size)
    # and its mean square is the information (quadrature against Monte Carlo)
    info = pm.map_information(alpha, p)
    assert abs(np.mean(score**2) - info) < 5 * np.std(score**2) / math.sqrt(score.size)


def test_a_wrong_score_is_caught_by_the_mean_zero_check() -> None:
    alpha, p = 1.5, 0.2
    g = np.random.default_rng(1).gamma(alpha, size=200_000)
    wrong = pm.map_score(alpha, p, np.log(g)) + alpha * (special.digamma(alpha) - special.digamma(alpha + p))
    assert abs(wrong.mean()) > 5 * wrong.std() / math.sqrt(wrong.size)


@pytest.mark.parametrize("k", [3, 13, 20])
def test_table_knots_are_the_optimum(k: int) -> None:
    a, p = pm.POWER_TABLE[k]
    assert a == pytest.approx(float(pm.table_shapes()[k]), rel=1e-5)
    assert p == pytest.approx(pm.optimal_power(a), rel=1e-3)
    # the optimum beats its neighbours on a grid and the cube-root rule it replaced
    for q in (0.8 * p, 1.25 * p, min(max(a, 0.03), 1.0) / 3.0):
        assert pm.map_information(a, p) <= pm.map_information(a, q)


def test_information_falls_against_the_cube_root_rule_where_it_matters() -> None:
    for a, factor in [(0.5, 5.0), (1.0, 10.0), (1.5, 5.0), (2.0, 3.0)]:
        cube = min(a, 1.0) / 3.0
        assert pm.map_information(a, pm.power(a)) * factor < pm.map_information(a, cube)


def test_power_jax_matches_numpy_and_is_continuous_past_the_table() -> None:
    a = np.array([0.005, 0.02, 0.1, 0.77, 1.0, 3.3, 43.0887, 43.09, 100.0, 1e4])
    np.testing.assert_allclose(np.asarray(pm.power(jnp.asarray(a), get_backend("jax"))), pm.power(a), rtol=1e-12)
    last = pm.POWER_TABLE[-1][0]
    assert float(pm.power(last * (1 + 1e-9))) == pytest.approx(float(pm.power(last)), rel=1e-8)
    assert np.all(np.diff(pm.power(np.geomspace(0.02, 1e4, 200))) > 0)
    assert float(pm.power(1e6)) == pytest.approx(1 / 3, rel=1e-6)
