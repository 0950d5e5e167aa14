"""MLE-NN (seed 000 §4) and Higham's nearest correlation matrix."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import noiseaware as na
from noiseaware.copula import eta_from_r, fisher_mean, mle_nn, mle_nn_pair, nearest_correlation, r_from_eta
from noiseaware.datasets import demo_copula_data, random_correlation
from noiseaware.exceptions import PrivacyWarning

HIGHAM_A = np.array([[2.0, -1, 0, 0], [-1, 2, -1, 0], [0, -1, 2, -1], [0, 0, -1, 2]])


def _kkt_residual(a: np.ndarray, x: np.ndarray) -> float:
    """Optimality certificate: a - x = diag + (-S) with S PSD and S x = 0 (off-diagonal match)."""
    w, q = np.linalg.eigh(x)
    null = q[:, w < 1e-8]
    off = ~np.eye(a.shape[0], dtype=bool)
    m = (a - x)[off]
    if null.shape[1] == 0:
        return float(np.abs(m).max())
    # least squares for S = null C null^T, C symmetric PSD: here solve for C and check PSD
    k = null.shape[1]
    basis = []
    for i in range(k):
        for j in range(i, k):
            e = np.zeros((k, k))
            e[i, j] = e[j, i] = 1.0
            basis.append((null @ e @ null.T)[off])
    coef, *_ = np.linalg.lstsq(np.array(basis).T, -m, rcond=None)
    c = np.zeros((k, k))
    idx = 0
    for i in range(k):
        for j in range(i, k):
            c[i, j] = c[j, i] = coef[idx]
            idx += 1
    assert np.linalg.eigvalsh(c).min() > -1e-8
    return float(np.abs(m + np.array(basis).T @ coef).max())


def test_higham_example_is_optimal() -> None:
    x = nearest_correlation(HIGHAM_A).matrix
    np.testing.assert_allclose(
        x[0], [1.0, -0.8084, 0.1916, 0.1068], atol=5e-5
    )  # 4-decimal values of the tridiag(-1, 2, -1) example
    assert _kkt_residual(HIGHAM_A, x) < 1e-9


@pytest.mark.parametrize("seed", range(5))
def test_nearest_correlation_properties_on_random_indefinite_input(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = 6
    a = rng.uniform(-1, 1, (p, p))
    a = (a + a.T) / 2
    np.fill_diagonal(a, 1.0)
    res = nearest_correlation(a)
    x = res.matrix
    assert res.converged
    assert np.allclose(x, x.T) and np.allclose(np.diag(x), 1.0)
    assert np.linalg.eigvalsh(x).min() > -1e-10
    assert _kkt_residual(a, x) < 1e-7
    # no random correlation matrix is closer
    d = np.linalg.norm(a - x)
    for _ in range(200):
        assert np.linalg.norm(a - random_correlation(p, rng)) >= d


def test_nearest_correlation_leaves_valid_input_unchanged() -> None:
    r = random_correlation(5, np.random.default_rng(1))
    np.testing.assert_allclose(nearest_correlation(r).matrix, r, atol=1e-12)


@pytest.mark.parametrize(
    "a,match",
    [(np.ones((2, 3)), "square"), (np.array([[1.0, 0.2], [0.3, 1.0]]), "symmetric"), (np.eye(2) * np.nan, "NaN")],
)
def test_nearest_correlation_bad_input(a, match) -> None:
    with pytest.raises(ValueError, match=match):
        nearest_correlation(a)


def test_eta_r_maps_are_inverse_and_match_eq9() -> None:
    r = np.linspace(-0.999, 0.999, 101)
    np.testing.assert_allclose(r_from_eta(eta_from_r(r)), r, atol=1e-12)
    # eq. (9): odds ratio of the quadrant probabilities (eqs. 7-8)
    p11 = 0.25 + np.arcsin(r) / (2 * np.pi)
    p01 = 0.25 - np.arcsin(r) / (2 * np.pi)
    np.testing.assert_allclose(np.exp(eta_from_r(r)), (p11 * p11) / (p01 * p01), rtol=1e-12)


@pytest.mark.parametrize("n", [10, 101, 1000, 5821])
@pytest.mark.parametrize("r", [-0.9, -0.2, 0.0, 0.5, 0.95])
def test_fisher_mean_matches_scipy(n: int, r: float) -> None:
    h = -(-n // 2)
    eta = float(eta_from_r(r))
    ref = stats.nchypergeom_fisher(n, h, h, np.exp(eta)).mean()
    assert fisher_mean(eta, n) == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("n", [200, 201])
def test_mle_nn_pair_solves_eq19_and_handles_boundaries(n: int) -> None:
    h = -(-n // 2)
    tmin = 2 * h - n
    assert mle_nn_pair(tmin, n) == -1.0 and mle_nn_pair(-5, n) == -1.0
    assert mle_nn_pair(h, n) == 1.0 and mle_nn_pair(h + 3, n) == 1.0
    prev = -1.0
    for t in np.linspace(tmin + 0.5, h - 0.5, 25):
        r = mle_nn_pair(t, n)
        assert r > prev
        prev = r
        assert fisher_mean(float(eta_from_r(r)), n) == pytest.approx(t, abs=1e-7)


def test_mle_nn_recovers_R_from_a_btgm_release() -> None:
    x, R, cols = demo_copula_data(seed=3, n=20_000)
    rel = na.privatize(
        x, statistic="median_pairs", epsilon=5.0, mechanism="btgm", columns=cols, rng=np.random.default_rng(0)
    )
    res = mle_nn(rel)
    assert res.columns == tuple(cols)
    assert np.linalg.eigvalsh(res.R).min() > -1e-10
    assert np.abs(res.R - R).max() < 0.06


def test_mle_nn_refuses_other_releases() -> None:
    rel = na.privatize([1, 2], statistic="counts", epsilon=1.0, sensitivity=1)
    with pytest.raises(ValueError, match="median_pairs"):
        mle_nn(rel)


def _tau_a_brute(x: np.ndarray, y: np.ndarray) -> float:
    n = x.size
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i in range(n) for j in range(i + 1, n))
    return float(s) / (n * (n - 1) / 2)


def test_kendall_tau_a_exact_with_ties() -> None:
    from noiseaware._privatize import kendall_tau_a

    rng = np.random.default_rng(2)
    for _ in range(5):
        x = rng.integers(0, 4, 40).astype(float)
        y = x + rng.integers(-2, 3, 40)
        assert kendall_tau_a(x, y) == pytest.approx(_tau_a_brute(x, y), abs=1e-12)


def test_kendall_pairs_release_and_li_kendall() -> None:
    from noiseaware.copula import li_kendall

    x, R, _cols = demo_copula_data(seed=4, n=1500)
    rel = na.privatize(x, statistic="kendall_pairs", epsilon=4.0, rng=np.random.default_rng(1))
    # sensitivity 4/n: substitution neighbours, n public (the seed's 4/(n+1) understates it)
    assert rel.mechanism.family == "laplace" and rel.mechanism.sensitivity == pytest.approx(4 / 1500)
    assert rel.mechanism.scale == pytest.approx(10 * (4 / 1500) / 4.0)
    assert rel.guarantee.epsilon == pytest.approx(4.0)
    with pytest.warns(PrivacyWarning, match="SIMULATION"):
        assert na.Release.from_json(rel.to_json(allow_simulation=True)) == rel
    P = li_kendall(rel)
    assert np.allclose(np.diag(P), 1) and np.linalg.eigvalsh(P).min() > 0
    assert np.abs(P - R).max() < 0.15
    with pytest.raises(ValueError, match="kendall_pairs"):
        li_kendall(na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(0)))
