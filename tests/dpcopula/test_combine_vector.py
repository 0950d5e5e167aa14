"""combine_synthetic for vector estimands: Reiter's (2005) multivariate rules, by hand and by a coverage study."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from noiseaware.copula import SyntheticVectorInferenceResult, combine_synthetic
from noiseaware.exceptions import NoiseawareValueError

Q = np.array([[1.0, 2.0], [1.4, 1.5], [0.6, 2.6], [1.2, 2.1], [0.9, 1.8]])
U = np.array([[[0.02, 0.004], [0.004, 0.03]]] * 3 + [[[0.03, -0.002], [-0.002, 0.05]]] * 2)


def _by_hand(q: np.ndarray, u: np.ndarray, q0: np.ndarray, rule: str) -> dict[str, float | np.ndarray]:
    """The rules written out with loops (no shared code with the implementation)."""
    M, k = q.shape
    qbar = sum(q[i] for i in range(M)) / M
    B = sum(np.outer(q[i] - qbar, q[i] - qbar) for i in range(M)) / (M - 1)
    Ubar = sum(u[i] for i in range(M)) / M
    t = k * (M - 1)
    d = qbar - q0
    if rule == "fully":
        T = (1 + 1 / M) * B - Ubar
        r = (1 + 1 / M) * np.trace(np.linalg.inv(Ubar) @ B) / k
        S = d @ np.linalg.inv((r - 1) * Ubar) @ d / k
        w = 4 + (t - 4) * (1 - (1 - 2 / t) / r) ** 2
    else:
        T = B / M + Ubar
        r = np.trace(np.linalg.inv(Ubar) @ B) / (k * M)
        S = d @ np.linalg.inv((1 + r) * Ubar) @ d / k
        w = 4 + (t - 4) * (1 + (1 - 2 / t) / r) ** 2
    return {"qbar": qbar, "B": B, "Ubar": Ubar, "T": T, "r": r, "S": S, "w": w, "p": stats.f.sf(S, k, w)}


@pytest.mark.parametrize("rule", ["fully", "partially"])
def test_vector_rules_by_hand(rule: str) -> None:
    q0 = np.array([1.0, 2.0])
    ref = _by_hand(Q, U, q0, rule)
    res = combine_synthetic(Q, U, rule=rule)
    assert isinstance(res, SyntheticVectorInferenceResult) and res.m == 5
    np.testing.assert_allclose(res.estimate, ref["qbar"], rtol=1e-12)
    np.testing.assert_allclose(res.between, ref["B"], rtol=1e-12)
    np.testing.assert_allclose(res.within, ref["Ubar"], rtol=1e-12)
    np.testing.assert_allclose(res.covariance, ref["T"], rtol=1e-12)
    w = res.wald_test(q0)
    assert w.ratio == pytest.approx(ref["r"], rel=1e-12) and w.statistic == pytest.approx(ref["S"], rel=1e-12)
    assert w.df_num == 2 and w.df_den == pytest.approx(ref["w"], rel=1e-12)
    assert w.p_value == pytest.approx(ref["p"], rel=1e-10)
    # each component is the scalar rule on its column (and its variance)
    for j in range(2):
        one = combine_synthetic(Q[:, j], U[:, j, j], rule=rule)
        c = res.component(j)
        assert (c.estimate, c.variance, c.df) == pytest.approx((one.estimate, one.variance, one.df), rel=1e-12)
    lo, hi = res.interval(0.9)
    assert lo[1] == pytest.approx(res.component(1).interval(0.9)[0])
    assert hi[0] == pytest.approx(res.component(0).interval(0.9)[1])


def test_one_component_wald_is_the_squared_t_statistic() -> None:
    q = Q[:, :1]
    res = combine_synthetic(q, U[:, :1, :1])
    scalar = combine_synthetic(q[:, 0], U[:, 0, 0])
    assert res.wald_test(0.5).statistic == pytest.approx((scalar.estimate - 0.5) ** 2 / scalar.variance, rel=1e-12)


def test_the_issue_case_gives_per_component_results() -> None:
    """(20, 3) estimates with (20, 3) variances were once pooled into one scalar: now three components."""
    rng = np.random.default_rng(3)
    q = np.array([0.94, -1.99, 0.46]) + 0.3 * rng.standard_normal((20, 3))
    u = np.full((20, 3), 0.01)
    res = combine_synthetic(q, u)
    assert isinstance(res, SyntheticVectorInferenceResult)
    np.testing.assert_allclose(res.estimate, q.mean(axis=0))
    assert res.variances.shape == res.df.shape == (3,)
    with pytest.raises(NoiseawareValueError, match=r"covariance matrix.*variances only"):
        res.wald_test()


@pytest.mark.parametrize(
    ("q", "u", "match"),
    [
        (np.zeros((20, 3)), np.ones(20), r"need variances of shape \(20, 3\) or covariance matrices"),
        (np.zeros((20, 3)), np.ones((3, 20)), "the transpose"),
        (np.zeros(20), np.ones((20, 3)), r"must have shape \(20,\)"),
        (np.zeros((4, 2, 2)), np.ones((4, 2, 2)), r"must have shape \(M,\) or \(M, p\)"),
        (np.zeros((1, 2)), np.ones((1, 2)), "at least 2"),
        (np.zeros((3, 2)), np.array([[[1.0, 0.5], [0.0, 1.0]]] * 3), "symmetric"),
        (np.zeros((3, 2)), -np.ones((3, 2)), ">= 0"),
    ],
)
def test_ambiguous_or_bad_shapes_are_refused(q, u, match) -> None:
    with pytest.raises(NoiseawareValueError, match=match):
        combine_synthetic(q, u)


def test_wald_null_shape() -> None:
    with pytest.raises(NoiseawareValueError, match=r"null must be a number or have shape \(2,\)"):
        combine_synthetic(Q, U).wald_test([0.0, 0.0, 0.0])


def test_fully_synthetic_wald_test_has_its_size_and_the_imputation_rule_does_not() -> None:
    """Population N_3(mu, Sigma); posterior mu | D ~ N(ybar, Sigma/n); M = 10 copies of n rows each.

    Seeded, 4,000 replications: the Wald test at Q0 = mu rejects at 5%: the rate is 0.055 at this seed
    (binomial sd 0.0035; the F reference is an approximation, so the band [0.03, 0.075] is kept wide
    rather than tuned). The multiple-imputation rule T = Ubar + (1 + 1/M) B (Li, Raghunathan & Rubin
    1991's D1) on the same draws rejects at 0.0005: the check fails for the wrong rule. The per-component
    t intervals cover each true component at least at the nominal rate (small df: conservative).
    """
    rng = np.random.default_rng(1)
    reps, n, M, k = 4000, 100, 10, 3
    mu = np.array([1.0, -2.0, 0.5])
    sigma = np.array([[1.0, 0.6, 0.3], [0.6, 2.0, -0.5], [0.3, -0.5, 1.5]])
    chol = np.linalg.cholesky(sigma)

    def z(*shape: int) -> np.ndarray:
        return rng.standard_normal((*shape, k)) @ chol.T

    ybar = mu + z(reps) / np.sqrt(n)
    qs = ybar[:, None, :] + z(reps, M) / np.sqrt(n) + z(reps, M) / np.sqrt(n)  # posterior draw + synthetic mean
    u = np.broadcast_to(sigma / n, (M, k, k))
    p_rule, p_mi, covered = [], [], np.zeros(k)
    t = k * (M - 1)
    for i in range(reps):
        res = combine_synthetic(qs[i], u)
        p_rule.append(res.wald_test(mu).p_value)
        lo, hi = res.interval(0.95)
        covered += (lo <= mu) & (mu <= hi)
        d = res.estimate - mu
        r = (1 + 1 / M) * np.trace(np.linalg.solve(res.within, res.between)) / k
        stat = d @ np.linalg.solve(res.within, d) / (k * (1 + r))
        p_mi.append(stats.f.sf(stat, k, 4 + (t - 4) * (1 + (1 - 2 / t) / r) ** 2))
    size, size_mi = np.mean(np.array(p_rule) < 0.05), np.mean(np.array(p_mi) < 0.05)
    assert 0.03 < size < 0.075, size
    assert size_mi < 0.01, size_mi
    assert np.all(covered / reps > 0.95 - 4.5 * np.sqrt(0.95 * 0.05 / reps)), covered / reps
