"""copula.fit (NumPyro) samples in the variables' pivoted order: the reordering leaves the posterior of R unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import noiseaware as na
from noiseaware._engine import group
from noiseaware._engine._reorder import pivot_order, unpermute_cholesky
from noiseaware.copula import _model, fit, functional
from noiseaware.datasets import simulate_gaussian_copula
from noiseaware.exceptions import NoiseawareValueError

pytest.importorskip("numpyro")

#: Variable 1 is nearly a combination of 0 and 2 (smallest eigenvalue 1 - 0.7 * sqrt(2) = 0.01).
R_TRUE = np.array([[1.0, 0.7, 0.0], [0.7, 1.0, 0.7], [0.0, 0.7, 1.0]])


@pytest.fixture(scope="module")
def near_singular() -> na.Release:
    rng = np.random.default_rng(21)
    x = simulate_gaussian_copula(2000, R_TRUE, (stats.norm(),) * 3, rng)
    return na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(22))


def _conditional_variance(R: np.ndarray, j: int, placed: list[int]) -> float:
    if not placed:
        return float(R[j, j])
    S = R[np.ix_(placed, placed)]
    c = R[np.ix_(placed, [j])]
    return float(R[j, j] - (c.T @ np.linalg.solve(S, c))[0, 0])


def test_pivot_order_places_the_largest_conditional_variance_first() -> None:
    """Against the greedy choice computed from the conditional variances R_jj - R_jS R_SS^-1 R_Sj directly."""
    rng = np.random.default_rng(3)
    for p in (3, 5, 8):
        R = na.datasets.random_correlation(p, rng)
        order = pivot_order(R)
        placed: list[int] = []
        for j in order.tolist():
            best = max(_conditional_variance(R, i, placed) for i in range(p) if i not in placed)
            assert _conditional_variance(R, j, placed) == pytest.approx(best, rel=1e-9)
            placed.append(j)
        assert sorted(order.tolist()) == list(range(p))
    np.testing.assert_array_equal(pivot_order(np.eye(4)), np.arange(4))  # ties keep the given order
    np.testing.assert_array_equal(pivot_order(R_TRUE), [0, 2, 1])  # the nearly dependent variable last


def test_reordered_model_has_the_same_likelihood_of_r(near_singular) -> None:
    """Pair (i, j) of the reordered model carries pair (order[i], order[j]) of the release: same log-likelihood."""
    import jax.numpy as jnp

    x = np.random.default_rng(4).standard_normal((3000, 4)) @ np.random.default_rng(5).standard_normal((4, 4))
    rel = na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(6))
    model = _model._numpyro_model(rel, _model.LKJPrior())
    order = np.array([2, 0, 3, 1])  # not its own inverse: a permutation applied the wrong way round differs
    moved = _model._reorder(model, order)
    assert moved is not None and moved.programs is model.programs  # the same compiled programs
    rng = np.random.default_rng(7)
    for _ in range(3):
        R = na.datasets.random_correlation(4, rng)
        given = float(model.loglik_pairs(jnp.asarray(R)))
        assert float(moved.loglik_pairs(jnp.asarray(R[np.ix_(order, order)]))) == pytest.approx(given, rel=1e-12)
        wrong = R[np.ix_(np.argsort(order), np.argsort(order))]
        assert abs(float(moved.loglik_pairs(jnp.asarray(wrong))) - given) > 1e-3 * abs(given)
    # the start point permutes with the data
    np.testing.assert_allclose(
        _model._start_matrix(moved)[np.ix_(np.argsort(order), np.argsort(order))],
        _model._start_matrix(model),
        atol=1e-8,
    )


def test_reorder_refuses_a_permutation_that_leaves_the_pairs() -> None:
    """A model of a subset of the pairs (the pairs are static: other pairs would need other programs)."""
    st = _model._Static(3, 500, ((0, 1), (0, 2)), 1.0)
    data = (np.array([120.0, 130.0]), np.array([0.5, 0.6]))
    model = _model._NumpyroModel(3, data[0], {"n": 500, "alpha": data[1]}, _model._Programs(st), data)
    assert _model._reorder(model, np.array([1, 0, 2])) is None  # (0, 2) would become (1, 2): not released
    swapped = _model._reorder(model, np.array([0, 2, 1]))  # (0, 1) <-> (0, 2)
    assert swapped is not None
    np.testing.assert_array_equal(swapped.data[0], [130.0, 120.0])
    np.testing.assert_array_equal(swapped.data[1], [0.6, 0.5])
    # a pair listed the other way round is the same pair
    st_rev = _model._Static(3, 500, ((1, 0), (0, 2)), 1.0)
    rev = _model._NumpyroModel(3, data[0], {"n": 500, "alpha": data[1]}, _model._Programs(st_rev), data)
    swapped_rev = _model._reorder(rev, np.array([0, 2, 1]))
    assert swapped_rev is not None
    np.testing.assert_array_equal(swapped_rev.data[0], [130.0, 120.0])


def test_unpermuted_cholesky_is_the_release_orders_factor() -> None:
    rng = np.random.default_rng(10)
    order = np.array([3, 0, 4, 1, 2])
    R = np.stack([na.datasets.random_correlation(5, rng) for _ in range(6)]).reshape(2, 3, 5, 5)
    L_moved = np.linalg.cholesky(R[..., order[:, None], order[None, :]])
    L = unpermute_cholesky(L_moved, order)
    np.testing.assert_allclose(L, np.linalg.cholesky(R), atol=1e-12)
    # a singular R (a draw at the boundary): a lower triangular factor all the same, no LinAlgError
    F = np.tril(rng.standard_normal((5, 5)))
    F[-1, -1] = 0.0
    F /= np.linalg.norm(F, axis=1, keepdims=True)
    Ls = unpermute_cholesky(F[None], order)[0]
    pos = np.argsort(order)
    assert np.allclose(np.triu(Ls, 1), 0.0) and np.all(np.diag(Ls) >= 0.0)
    np.testing.assert_allclose(Ls @ Ls.T, (F @ F.T)[np.ix_(pos, pos)], atol=1e-12)


@pytest.mark.slow  # make test-full: two fits of a near-singular release (10 s)
def test_pivoted_fit_samples_the_same_posterior(near_singular) -> None:
    """Pivoted and given orders: draws in the release's order, posterior means equal within Monte Carlo error."""
    cfg = {"chains": 2, "draws": 500, "warmup": 300, "check_mixing": False}
    piv = fit(near_singular, seed=1, **cfg)
    given = fit(near_singular, seed=2, variable_order="given", **cfg)
    assert piv.attrs["noiseaware_variable_order"] == [0, 2, 1]
    assert given.attrs["noiseaware_variable_order"] == [0, 1, 2]
    iu, ju = np.triu_indices(3, 1)
    a, b = (np.asarray(group(f, "posterior")["R"].values).reshape(-1, 3) for f in (piv, given))  # the pairs
    se = np.sqrt(a.var(0) / 250 + b.var(0) / 250)  # at least a quarter of the draws effective
    assert np.all(np.abs(a.mean(0) - b.mean(0)) < 4 * se)
    assert np.all(np.abs(a.mean(0) - R_TRUE[iu, ju]) < 0.1)  # and it is in the right order: 0.7, 0.0, 0.7
    # the posterior keeps only what varies: R's pairs, not its constant diagonal nor a Cholesky factor's zeros
    assert set(group(piv, "posterior").data_vars) == {"R"}
    R = functional(piv, lambda r: r)  # rebuilt from the pairs: a correlation matrix in every draw
    assert np.all(np.linalg.eigvalsh(R)[:, 0] > 0) and np.all(np.diagonal(R, axis1=1, axis2=2) == 1.0)
    # the diagonal preconditioner (large p) keeps the release's order
    diag = fit(near_singular, seed=3, preconditioner="diagonal", **cfg)
    assert diag.attrs["noiseaware_variable_order"] == [0, 1, 2]
    with pytest.raises(NoiseawareValueError, match="variable_order"):
        fit(near_singular, variable_order="sorted", **cfg)
    with pytest.raises(NoiseawareValueError, match="numpyro"):
        fit(near_singular, backend="pymc", variable_order="given", **cfg)
