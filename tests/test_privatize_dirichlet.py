"""privatize(statistic="dirichlet_logmean"): seed 004 Algorithm 1 (DPSS), Theorem 2.

Counts and threshold choice by hand on small matrices; the budget split (epsilon_1 for the
Laplace log-sums, epsilon_2 for the geometric counts, Theorem 2: epsilon_1 + epsilon_2); the
noise laws (seeded goodness-of-fit tests at 1e-4 that also reject a mis-scaled mechanism); the
sensitivities by brute force over neighbouring data sets; the split; JSON; the secure path; bad input.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import noiseaware as na
from noiseaware._privatize import _dirichlet as pd
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError, PrivacyWarning

STAT = "dirichlet_logmean"
CAND = np.array([0.01, 0.1])
# mins: 0.5, 0.005, 0.05, 0.0, 0.2, 0.01 (on the edge a_1: counted in [a_1, a_2)), 0.1 (edge a_2)
X_HAND = np.array([[0.5, 0.5], [0.005, 0.995], [0.05, 0.95], [0.0, 1.0], [0.2, 0.8], [0.01, 0.99], [0.1, 0.9]])


def _data(n=200, alpha=(1.0, 2.0, 3.0), seed=0):
    return np.random.default_rng(seed).dirichlet(alpha, size=n)


def _rel(x, epsilon=1.0, seed=1, **kw):
    return na.privatize(x, statistic=STAT, epsilon=epsilon, rng=np.random.default_rng(seed), **kw)


def _huge(x, **kw):
    """A release with epsilon = 1e6: the noise is negligible (the PrivacyWarning is expected)."""
    with pytest.warns(PrivacyWarning, match="epsilon"):
        return _rel(x, epsilon=1e6, **kw)


def _s0_sums(x, a):
    """n * S_0(D, a) = sum_i log max(x_i, a), by hand (row by row, element by element)."""
    out = np.zeros(x.shape[1])
    for row in x:
        for j, xj in enumerate(row):
            out[j] += math.log(max(xj, a))
    return out


# --------------------------------------------------------------------------- censoring counts
def test_censoring_counts_by_hand():
    # bins [0, 0.01), [0.01, 0.1), [0.1, 1]: mins 0.005, 0.0 | 0.05, 0.01 | 0.5, 0.2, 0.1
    assert pd.censoring_counts(X_HAND, CAND).tolist() == [2, 2, 3]
    # d = 3, one candidate; the count vector always sums to n and has M + 1 entries
    x3 = np.array([[0.2, 0.3, 0.5], [0.001, 0.5, 0.499], [0.3, 0.3, 0.4], [0.6, 0.39, 0.01]])
    assert pd.censoring_counts(x3, np.array([0.25])).tolist() == [3, 1]
    # mins 0.2, 0.001 (on the edge a_2 = 1e-3: counted in [1e-3, 0.02)), 0.3, 0.01
    assert pd.censoring_counts(x3, np.array([1e-4, 1e-3, 0.02, 0.5])).tolist() == [0, 0, 2, 2, 0]
    x = _data(500)
    c = pd.censoring_counts(x, np.asarray(pd.DEFAULT_CANDIDATES))
    mins = x.min(1)
    edges = [0.0, *pd.DEFAULT_CANDIDATES, 1.0]
    ref = [int(np.sum((lo <= mins) & (mins < hi))) for lo, hi in itertools.pairwise(edges)]
    assert c.tolist() == ref and c.sum() == 500 and c.dtype == np.int64


# --------------------------------------------------------------------------- threshold choice
@pytest.mark.parametrize(
    ("counts", "t_c", "index", "rates"),
    [
        ([1, 2, 17, 980], 0.01, 1, [0.001, 0.003, 0.02]),  # the docstring's case
        ([1, 0, 9, 90], 0.01, 1, [0.01, 0.01, 0.1]),  # p <= t_c is inclusive; the largest such l
        ([0, 0, 0, 100], 0.01, 2, [0.0, 0.0, 0.0]),  # every candidate qualifies: the largest, a_M
        ([50, 0, 0, 50], 0.01, 0, [0.5, 0.5, 0.5]),  # none qualifies: the smallest candidate a_1
        ([0, 3, 0, 1], 0.5, 0, [0.0, 0.75, 0.75]),
    ],
)
def test_select_threshold_by_hand(counts, t_c, index, rates):
    l_idx, r = pd.select_threshold(np.array(counts), np.array([1e-3, 1e-2, 0.1]), t_c)
    assert l_idx == index and isinstance(l_idx, int)
    np.testing.assert_allclose(r, rates, rtol=1e-15)


def test_select_threshold_all_zero_counts_uses_the_smallest_candidate():
    l_idx, r = pd.select_threshold(np.zeros(4, dtype=np.int64), np.array([1e-3, 1e-2, 0.1]), 0.01)
    assert l_idx == 0
    assert r.tolist() == [1.0, 1.0, 1.0]


def test_release_threshold_follows_the_noisy_counts():
    # with epsilon_2 huge the geometric noise is 0: the choice is the exact one, by hand
    x = np.array([[0.005, 0.995]] * 2 + [[0.05, 0.95]] * 3 + [[0.5, 0.5]] * 95)
    rel = _huge(x, candidates=[0.1, 0.01], target_rate=0.02)  # unsorted candidates are sorted
    md = rel.metadata
    assert md["candidates"] == (0.01, 0.1)
    assert md["noisy_counts"] == (2, 3, 95)
    assert rel.components[0].values.tolist() == [2, 3, 95]
    np.testing.assert_allclose(md["noisy_rates"], [0.02, 0.05])
    assert md["threshold_index"] == 0 and md["a"] == 0.01  # 0.02 <= t_c < 0.05
    rel = _huge(x, candidates=[0.01, 0.1], target_rate=0.05)
    assert md["a"] == 0.01 and rel.metadata["a"] == 0.1
    rel = _huge(x, candidates=[0.01, 0.1], target_rate=0.01)  # none below: a_1
    assert rel.metadata["threshold_index"] == 0 and rel.metadata["a"] == 0.01
    # the selection is max(0, raw) of the released counts, through select_threshold
    for seed in range(20):
        rel = _rel(_data(60), epsilon=0.5, seed=seed)
        raw = np.asarray(rel.components[0].values)
        clipped = np.maximum(raw, 0)
        assert list(rel.metadata["noisy_counts"]) == clipped.tolist()
        cand = np.asarray(pd.DEFAULT_CANDIDATES)
        l_idx, _ = pd.select_threshold(clipped, cand, 0.01)
        assert rel.metadata["threshold_index"] == l_idx and rel.metadata["a"] == cand[l_idx]


# --------------------------------------------------------------------------- budget (Theorem 2)
@pytest.mark.parametrize("share", [None, 0.1, 0.5])
@pytest.mark.parametrize("split", [None, 0.25])
def test_budget_split_and_theorem_2(share, split):
    x, eps = _data(200), 2.0
    kw = {} if share is None else {"threshold_share": share}
    rel = _rel(x, epsilon=eps, split=split, **kw)
    s = 0.25 if share is None else share
    md = rel.metadata
    assert md["epsilon_2"] == pytest.approx(s * eps, rel=1e-15)
    assert md["epsilon_1"] == pytest.approx((1 - s) * eps, rel=1e-15)
    (counts,) = rel.components
    assert counts.guarantee.epsilon == pytest.approx(md["epsilon_2"], rel=1e-12)
    assert rel.mechanism.guarantee().epsilon == pytest.approx(md["epsilon_1"], rel=1e-12)
    # Theorem 2: epsilon_1 + epsilon_2; a split is parallel composition (disjoint D1, D2), not 2 epsilon_1
    assert rel.guarantee.epsilon == pytest.approx(eps, rel=1e-12)
    assert rel.guarantee.delta == 0.0
    assert rel.composition == ("joint" if split is None else "parallel")
    assert counts.composition == "joint"


def test_fixed_threshold_spends_everything_on_the_laplace_part():
    x = _data(100)
    rel = _rel(x, epsilon=1.5, threshold=0.05)
    assert rel.components == () and rel.metadata["a"] == 0.05
    assert rel.metadata["epsilon_1"] == 1.5 and rel.metadata["epsilon_2"] == 0.0
    assert rel.guarantee.epsilon == pytest.approx(1.5, rel=1e-12)
    assert rel.mechanism.scale == pytest.approx(-3 * math.log(0.05) / 1.5, rel=1e-12)


# --------------------------------------------------------------------------- the Laplace part
@pytest.mark.parametrize("split", [None, 0.25, 40])
def test_laplace_scale_and_units(split):
    x = _data(200)
    rel = _rel(x, epsilon=1.0, split=split, threshold_share=0.4)
    a, n_parts = rel.metadata["a"], rel.metadata["n_parts"]
    d, eps1 = 3, 0.6
    assert rel.mechanism.family == "laplace"
    assert rel.mechanism.sensitivity == pytest.approx(-d * math.log(a), rel=1e-12)
    assert rel.mechanism.scale == pytest.approx(-d * math.log(a) / eps1, rel=1e-12)
    np.testing.assert_allclose(rel.metadata["laplace_scale_logmean"], [rel.mechanism.scale / m for m in n_parts])
    expect = {None: [200], 0.25: [50, 150], 40: [40, 160]}[split]
    assert list(n_parts) == expect and rel.n == 200
    assert rel.shape == ((d,) if split is None else (2, d))
    labels = (
        [("x0",), ("x1",), ("x2",)] if split is None else [(p, c) for p in ("D1", "D2") for c in ("x0", "x1", "x2")]
    )
    assert list(rel.labels) == labels


@pytest.mark.parametrize("zeros", ["error", "censor"])
def test_huge_epsilon_releases_s0_by_hand(zeros):
    x = _data(150, alpha=(0.3, 1.0, 2.0), seed=3)
    if zeros == "censor":
        x[:4] = [[0.0, 0.4, 0.6], [0.0, 0.0, 1.0], [0.3, 0.0, 0.7], [0.5, 0.5, 0.0]]
    rel = _huge(x, zeros=zeros)
    a = rel.metadata["a"]
    # the counts are exact with alpha = exp(-epsilon_2 / 2) ~ 0, so a is the exact selection
    cand = np.asarray(pd.DEFAULT_CANDIDATES)
    exact = pd.censoring_counts(x, cand)
    assert rel.components[0].values.tolist() == exact.tolist()
    assert a == cand[pd.select_threshold(exact, cand, 0.01)[0]]
    sums = _s0_sums(x, a)
    np.testing.assert_allclose(rel.values, sums, rtol=0, atol=1e-3)
    s_l = np.asarray(rel.values) / 150  # S_L(D, a) = values / n
    np.testing.assert_allclose(s_l, sums / 150, rtol=0, atol=1e-5)
    if zeros == "censor":  # a replaced the zeros
        assert np.sum(np.maximum(x, a) == a) >= 5


def test_huge_epsilon_split_parts_partition_the_data():
    x = _data(100, seed=4)
    rel = _huge(x, split=0.3, threshold=0.01)
    assert list(rel.metadata["n_parts"]) == [30, 70]
    v = np.asarray(rel.values)
    np.testing.assert_allclose(v.sum(0), _s0_sums(x, 0.01), atol=1e-3)  # D1 and D2 partition D
    # each part is the log-sum of some n_l records: find them by brute force on a tiny data set
    xs = _data(6, seed=5)
    rel = _huge(xs, split=3, threshold=0.01)
    logx = np.log(np.maximum(xs, 0.01))
    subsets = [
        c for c in itertools.combinations(range(6), 3) if np.allclose(logx[list(c)].sum(0), rel.values[0], atol=1e-3)
    ]
    assert len(subsets) == 1
    rest = sorted(set(range(6)) - set(subsets[0]))
    np.testing.assert_allclose(logx[rest].sum(0), rel.values[1], atol=1e-3)


def test_laplace_noise_law_and_a_mis_scaled_one_is_rejected():
    # 1000 simulated releases of one data set, fixed a: the residuals values - n S_0 are Laplace(scale)
    x, a, eps, k = _data(80, seed=6), 0.01, 0.8, 1000
    rng = np.random.default_rng(7)
    rels = [na.privatize(x, statistic=STAT, epsilon=eps, threshold=a, rng=rng) for _ in range(k)]
    res = np.concatenate([np.asarray(r.values) - _s0_sums(x, a) for r in rels])
    scale = -3 * math.log(a) / eps
    assert all(r.mechanism.scale == pytest.approx(scale) for r in rels[:3])
    assert stats.kstest(res, stats.laplace(scale=scale).cdf).pvalue > 1e-4
    # a mechanism that forgot the factor d, or one 30% too narrow or wide, or noise on the mean, fails the same test
    for wrong in (scale / 3, scale / 1.3, scale * 1.3, scale / 80):
        assert stats.kstest(res, stats.laplace(scale=wrong).cdf).pvalue < 1e-4


# --------------------------------------------------------------------------- the geometric counts
def _geometric_chi2(k, alpha):
    """Chi-square p-value of integer draws against the two-sided geometric pmf (1-a)/(1+a) a^|k|."""
    edges = np.arange(-8, 9)  # cells (-inf, -8], -7, ..., 7, [8, inf)
    pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(np.arange(-7, 8))
    tail = alpha**8 / (1 + alpha)  # P(K >= 8) = P(K <= -8)
    probs = np.concatenate([[tail], pmf, [tail]])
    idx = np.clip(k, -8, 8) - edges[0]
    obs = np.bincount(idx, minlength=probs.size)
    return stats.chisquare(obs, probs * k.size).pvalue


def test_geometric_counts_alpha_and_a_sensitivity_one_mechanism_is_rejected():
    x, eps, share = _data(120, seed=8), 1.6, 0.5
    eps2 = eps * share
    rng = np.random.default_rng(9)
    exact = pd.censoring_counts(x, np.asarray(pd.DEFAULT_CANDIDATES))
    rels = [na.privatize(x, statistic=STAT, epsilon=eps, threshold_share=share, rng=rng) for _ in range(700)]
    geo = rels[0].components[0].mechanism
    assert geo.family == "geometric" and geo.sensitivity == 2
    assert geo.alpha == pytest.approx(math.exp(-eps2 / 2), rel=1e-12)
    noise = np.concatenate([np.asarray(r.components[0].values) - exact for r in rels])
    assert noise.size == 700 * 7
    assert _geometric_chi2(noise, math.exp(-eps2 / 2)) > 1e-4
    # alpha = exp(-epsilon_2) (sensitivity 1 misread) is rejected by the same test
    assert _geometric_chi2(noise, math.exp(-eps2)) < 1e-4


def _neighbours(x, rng):
    """Data sets that differ from x in one record: every record replaced by vertices, edges and random points."""
    d = x.shape[1]
    extra = [np.eye(d)[j] for j in range(d)]
    extra += [np.full(d, 1.0 / d)]
    for lo in (0.0, 1e-7, 5e-6, 5e-5, 5e-4, 0.005, 0.05, 0.2):
        y = np.full(d, lo)
        y[-1] = 1 - lo * (d - 1)
        extra.append(y)
    extra += list(rng.dirichlet(np.full(d, 0.3), size=30))
    for i in range(x.shape[0]):
        for y in extra:
            z = x.copy()
            z[i] = y
            yield z


def test_sensitivities_by_brute_force():
    rng = np.random.default_rng(10)
    cand = np.asarray(pd.DEFAULT_CANDIDATES)
    for d in (2, 3):
        x = rng.dirichlet(np.full(d, 0.5), size=8)
        x[0] = 0.0
        x[0, 0] = 1.0  # a record with zero parts (zeros="censor")
        c0 = pd.censoring_counts(x, cand)
        l1_counts = [int(np.abs(pd.censoring_counts(z, cand) - c0).sum()) for z in _neighbours(x, rng)]
        # moving one record changes the count vector by at most 2 in L1 (two counts by one), and 2 is reached
        assert max(l1_counts) == 2 and set(l1_counts) == {0, 2}
        for a in cand:
            s0 = _s0_sums(x, a)
            l1 = max(np.abs(_s0_sums(z, a) - s0).sum() for z in _neighbours(x, rng))
            assert l1 <= -d * math.log(a) * (1 + 1e-12)
            assert l1 >= -math.log(a)  # the bound is the right order: one coordinate alone moves by -log a


def test_theorem_2_exact_log_ratio_of_the_counts_release():
    # the geometric release of neighbouring count vectors: log-ratio of the output pmf over a grid <= epsilon_2
    rel = _rel(_data(50), epsilon=1.0, threshold_share=0.3)
    geo, eps2 = rel.components[0].mechanism, 0.3
    c = np.array([3, 1, 0, 2, 5, 4, 35])
    c2 = c.copy()
    c2[1] += 1
    c2[4] -= 1  # a moved record (L1 = 2)
    out = np.arange(-15, 50)
    worst = 0.0
    for m in range(c.size):
        for o in out:
            worst = max(worst, abs(float(geo.noise_logpmf(o - c[m]) - geo.noise_logpmf(o - c2[m]))))
    # each differing coordinate contributes at most epsilon_2 / 2; the total over the vector:
    grid = np.array(np.meshgrid(out, out, indexing="ij")).reshape(2, -1)
    lr = (geo.noise_logpmf(grid[0] - c[1]) + geo.noise_logpmf(grid[1] - c[4])) - (
        geo.noise_logpmf(grid[0] - c2[1]) + geo.noise_logpmf(grid[1] - c2[4])
    )
    assert worst == pytest.approx(eps2 / 2, rel=1e-9)
    assert np.max(np.abs(lr)) == pytest.approx(eps2, rel=1e-9)


# --------------------------------------------------------------------------- JSON and the secure path
@pytest.mark.parametrize(
    "kw", [{}, {"split": 0.25}, {"threshold": 0.02}, {"zeros": "censor", "columns": ["a", "b", "c"]}]
)
def test_json_round_trip(kw, tmp_path):
    rel = _rel(_data(100, seed=11), **kw)
    with pytest.warns(PrivacyWarning, match="SIMULATION"):
        back = na.Release.from_json(rel.to_json(allow_simulation=True))
    assert back == rel
    np.testing.assert_array_equal(back.values, rel.values)
    assert back.metadata["a"] == rel.metadata["a"] and back.metadata["n_parts"] == rel.metadata["n_parts"]
    assert back.mechanism == rel.mechanism and back.guarantee.isclose(rel.guarantee)
    assert [c.to_dict() for c in back.components] == [c.to_dict() for c in rel.components]
    p = tmp_path / "rel.json"
    with pytest.warns(PrivacyWarning, match="SIMULATION"):
        rel.to_json(p, allow_simulation=True)
        assert na.Release.from_json(p) == rel
    from noiseaware import dirichlet as nd

    for p1, p2 in zip(nd.parts(rel), nd.parts(back), strict=True):
        assert (p1.n, p1.a, p1.scale) == (p2.n, p2.a, p2.scale)
        np.testing.assert_array_equal(p1.s_l, p2.s_l)


@pytest.mark.parametrize("kw", [{}, {"split": 0.5}])
def test_secure_path(kw):
    x = _data(60, seed=12)
    rel = na.privatize(x, statistic=STAT, epsilon=1.0, **kw)
    assert rel.secure and all(c.secure for c in rel.components)
    assert "simulation" not in rel.metadata
    assert np.all(np.isfinite(rel.values)) and rel.guarantee.epsilon == pytest.approx(1.0)
    assert rel.metadata["a"] in pd.DEFAULT_CANDIDATES
    sim = _rel(x, **kw)
    assert not sim.secure and not sim.components[0].secure and "simulation" in sim.metadata


# --------------------------------------------------------------------------- bad input
_GOOD = np.array([[0.2, 0.8], [0.5, 0.5], [0.3, 0.7], [0.6, 0.4]])


def _with(i, j, value, base=_GOOD):
    x = base.copy()
    x[i, j] = value
    return x


@pytest.mark.parametrize(
    ("x", "kw", "err", "match"),
    [
        (_with(1, 0, 0.0, _with(1, 1, 1.0)), {}, ValueError, r"zero part\(s\).*zeros='censor'"),
        (np.array([[-0.1, 1.1], [0.5, 0.5]]), {}, ValueError, r"non-negative.*row 0 column 0 = -0\.1\."),
        (np.array([[-0.1, 1.1], [0.5, 0.5]]), {"zeros": "censor"}, ValueError, "non-negative"),
        (_with(2, 0, 0.35), {}, ValueError, r"sum to 1 within simplex_tol=1e-06.*row 2 sums to 1\.0(5|49999)"),
        (_with(2, 0, 0.3 + 1e-5), {}, ValueError, "simplex_tol"),
        (_with(2, 0, 0.3 + 1e-7), {"simplex_tol": 0.0}, ValueError, "simplex_tol=0.0"),
        (np.ones((5, 1)), {}, ValueError, "at least two columns"),
        (np.array([[0.5, 0.5]]), {}, ValueError, "at least two rows"),
        (_with(0, 0, np.nan), {}, ValueError, "NaN|finite"),
        (_with(0, 0, np.inf), {}, ValueError, "NaN|finite|inf"),
        (np.array([0.5, 0.5, 0.5]), {}, ValueError, "2-D"),
        (np.array([["a", "b"], ["c", "d"]]), {}, TypeError, "numeric"),
        (_GOOD[:3], {"split": 0.5}, ValueError, r"at least 2 records in each of D1 and D2.*n=3 \(n1=2, n2=1\)"),
        (_GOOD, {"split": 3}, ValueError, r"at least 2 records.*n1=3, n2=1"),
        (_GOOD, {"split": 1}, ValueError, "at least 2 records"),
        (_GOOD, {"split": 0}, ValueError, "split"),
        (_GOOD, {"split": 1.5}, ValueError, r"split must be in \(0, 1\)"),
        (_GOOD, {"split": True}, TypeError, "split"),
        (_GOOD, {"zeros": "drop"}, ValueError, "zeros"),
        (_GOOD, {"simplex_tol": -1.0}, ValueError, "simplex_tol"),
        (_GOOD, {"threshold": 0.0}, ValueError, "threshold"),
        (_GOOD, {"threshold": 1.0}, ValueError, "threshold"),
        (_GOOD, {"threshold": 0.01, "candidates": [0.1]}, ValueError, "do not also give"),
        (_GOOD, {"candidates": [0.1, 1.0]}, ValueError, "candidates"),
        (_GOOD, {"candidates": []}, ValueError, "candidates"),
        (_GOOD, {"candidates": [0.1, 0.1]}, ValueError, "distinct"),
        (_GOOD, {"candidates": [np.nan]}, ValueError, "candidates"),
        (_GOOD, {"target_rate": 0.0}, ValueError, "target_rate"),
        (_GOOD, {"target_rate": 1.0}, ValueError, "target_rate"),
        (_GOOD, {"threshold_share": 1.0}, ValueError, "threshold_share"),
        (_GOOD, {"threshold_share": 0.0}, ValueError, "threshold_share"),
        (_GOOD, {"mechanism": "gaussian"}, ValueError, "mechanism"),
        (_GOOD, {"bogus": 1}, TypeError, "bogus"),
        (_GOOD, {"columns": ["a"]}, ValueError, "columns"),
    ],
)
def test_bad_input(x, kw, err, match):
    with pytest.raises(err, match=match):
        _rel(x, **kw)


@pytest.mark.parametrize(
    ("budget", "err", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "epsilon"),
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"epsilon": float("nan")}, ValueError, "epsilon"),
        ({"epsilon": float("inf")}, ValueError, "epsilon"),
        ({"epsilon": "1"}, TypeError, "epsilon"),
        ({}, ValueError, "epsilon"),
        ({"rho": 0.5}, ValueError, "epsilon"),
    ],
)
def test_bad_budget(budget, err, match):
    with pytest.raises(err, match=match):
        na.privatize(_GOOD, statistic=STAT, rng=np.random.default_rng(0), **budget)


def test_errors_are_noiseaware_errors_and_good_input_is_left_alone():
    with pytest.raises(NoiseawareValueError):
        _rel(_with(2, 0, 0.35))
    with pytest.raises(NoiseawareTypeError):
        _rel(_GOOD, bogus=1)
    # rows within simplex_tol are renormalized, not rejected; the caller's array is not modified
    x = _with(2, 0, 0.3 + 1e-7)
    x0 = x.copy()
    rel = _huge(x, threshold=0.01)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_allclose(rel.values, _s0_sums(x / x.sum(1, keepdims=True), 0.01), atol=1e-4)
