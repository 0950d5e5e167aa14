"""Baselines of seed 000 §5: Asghar-dpc (and its tetrachoric step), plus a slow coverage check of Bayes-NA."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import noiseaware as na
from noiseaware.copula import asghar_dpc, tetrachoric
from noiseaware.copula._baselines import _asghar_cells, _asghar_pair
from noiseaware.datasets import MIXED_MARGINALS_P5, random_correlation, simulate_gaussian_copula

CUTS_P5 = [round(float(m.median()), 2) for m in MIXED_MARGINALS_P5]


def _scipy_orthant(a: float, b: float, r: float) -> float:
    """Independent reference: P(Z1 > a, Z2 > b) = Phi2(-a, -b; r) by SciPy."""
    return float(stats.multivariate_normal(mean=[0, 0], cov=[[1, r], [r, 1]]).cdf([-a, -b]))


@pytest.mark.parametrize(("p1", "p2", "r"), [(0.5, 0.5, 0.3), (0.3, 0.7, -0.6), (0.2, 0.45, 0.85), (0.6, 0.6, -0.1)])
def test_tetrachoric_inverts_the_bivariate_normal_orthant(p1: float, p2: float, r: float) -> None:
    a, b = stats.norm.ppf(1 - p1), stats.norm.ppf(1 - p2)
    p11 = _scipy_orthant(a, b, r)
    assert tetrachoric(p11, p1, p2) == pytest.approx(r, abs=2e-4)  # SciPy's cdf is accurate to ~1e-5


def test_tetrachoric_at_the_median_is_eq7_inverted_and_clamps_at_the_bounds() -> None:
    for q in np.linspace(0.01, 0.49, 13):
        assert tetrachoric(q, 0.5, 0.5) == pytest.approx(math.sin(2 * math.pi * (q - 0.25)), abs=1e-9)
    assert tetrachoric(0.0, 0.5, 0.5) == -1.0
    assert tetrachoric(0.5, 0.5, 0.5) == 1.0
    assert tetrachoric(0.05, 0.3, 0.8) == -1.0  # below max(0, p1 + p2 - 1) = 0.1
    assert tetrachoric(0.31, 0.3, 0.8) == 1.0  # above min(p1, p2)


def test_tetrachoric_rejects_non_proportions() -> None:
    with pytest.raises(ValueError, match=r"tetrachoric: p1 must be a proportion in \[0, 1\]; got p1=1.2"):
        tetrachoric(0.2, 1.2, 0.5)
    with pytest.raises(ValueError, match="must be finite"):
        tetrachoric(float("nan"), 0.5, 0.5)


def test_asghar_dpc_recovers_R_on_large_n_and_epsilon() -> None:
    rng = np.random.default_rng(11)
    R = random_correlation(5, rng)
    x = simulate_gaussian_copula(40_000, R, MIXED_MARGINALS_P5, rng)
    res = asghar_dpc(x, epsilon=5.0, thresholds=CUTS_P5, rng=np.random.default_rng(12))
    # sampling sd of a tetrachoric r at n = 40000 is < 0.01; Laplace scale 2k/eps = 4 counts is negligible
    assert np.abs(res.R - R).max() < 0.035
    assert np.allclose(np.diag(res.R), 1.0) and np.linalg.eigvalsh(res.R).min() > -1e-10
    # and it is not the trivial answer: a wrong sign convention would fail this
    iu = np.triu_indices(5, 1)
    assert np.corrcoef(res.R[iu], R[iu])[0, 1] > 0.99


def test_asghar_dpc_privacy_budget_is_accounted() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 4))
    eps = 0.8
    res = asghar_dpc(x, epsilon=eps, thresholds=np.zeros(4), rng=rng)
    rel = res.release
    k = 6
    assert rel.statistic == "vector" and rel.composition == "joint" and rel.values.shape == (4 * k,)
    assert rel.mechanism.family == "laplace"
    assert rel.mechanism.sensitivity == pytest.approx(2 * k)
    assert rel.mechanism.scale == pytest.approx(2 * k / eps)  # = Lap(2 / (eps / k)) per table
    assert rel.guarantee.epsilon == pytest.approx(eps) and rel.guarantee.delta == 0.0
    assert rel.secure is False and rel.n == 300
    assert rel.labels[0] == ("x0", "x1", "hi,hi") and rel.labels[-1] == ("x2", "x3", "lo,lo")


def test_asghar_cells_sensitivity_is_two_per_table_under_substitution() -> None:
    """The claimed joint L1 sensitivity 2k, checked by substituting records (tight, never exceeded)."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(60, 4))
    cuts = np.array([0.0, 0.1, -0.2, 0.3])
    base = _asghar_cells(x, cuts)
    worst = 0
    for _ in range(300):
        y = x.copy()
        y[rng.integers(60)] = rng.normal(scale=2.0, size=4)
        worst = max(worst, int(np.abs(_asghar_cells(y, cuts) - base).sum()))
    assert worst == 2 * 6
    assert (base.sum(axis=1) == 60).all()


def test_asghar_dpc_secure_release_uses_the_exact_sampler() -> None:
    x = np.random.default_rng(1).normal(size=(50, 2))
    res = asghar_dpc(x, epsilon=1.0, thresholds=[0.0, 0.0])
    assert res.release.secure is True and res.release.guarantee.epsilon == pytest.approx(1.0)
    assert -1.0 <= res.R[0, 1] <= 1.0


def test_asghar_clipping_gives_the_spike_at_minus_one() -> None:
    # seed 000 §5.1: a high-high cell pushed below 0 is clipped, and the estimate is -1
    assert _asghar_pair(np.array([-3.0, 50.0, 48.0, 2.0])) == -1.0
    assert _asghar_pair(np.array([-1.0, -2.0, -3.0, -4.0])) == 0.0  # nothing left: no information
    assert _asghar_pair(np.array([25.0, 25.0, 25.0, 25.0])) == pytest.approx(0.0, abs=1e-9)
    # a clipped-away margin (a constant variable) fits every r; no NaN, no solver failure
    assert _asghar_pair(np.array([0.19, 32.3, -1.06, -1.0])) == 0.0
    assert tetrachoric(0.2, 1.0, 0.2) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"epsilon": 0.0, "thresholds": [0, 0]}, ValueError, "asghar_dpc: epsilon"),
        ({"epsilon": 1.0, "thresholds": [0.0]}, ValueError, r"one public cut point per column \(2\)"),
        ({"epsilon": 1.0, "thresholds": [0.0, float("nan")]}, ValueError, "thresholds"),
        ({"epsilon": 1.0, "thresholds": ["a", "b"]}, ValueError, "thresholds must be numbers"),
    ],
)
def test_asghar_dpc_bad_arguments(kwargs, err, match) -> None:
    x = np.random.default_rng(2).normal(size=(20, 2))
    with pytest.raises(err, match=match):
        asghar_dpc(x, rng=np.random.default_rng(0), **kwargs)


def test_asghar_dpc_bad_data() -> None:
    x = np.random.default_rng(2).normal(size=(20, 2))
    x[3, 1] = np.nan
    with pytest.raises(ValueError, match="asghar_dpc"):
        asghar_dpc(x, epsilon=1.0, thresholds=[0, 0])
    with pytest.raises(ValueError, match="at least two columns"):
        asghar_dpc(np.zeros((10, 1)), epsilon=1.0, thresholds=[0])


# ------------------------------------------------------------------ slow: a tiny coverage study
def _reproduce_module():
    import importlib
    import sys
    from pathlib import Path

    bench = str(Path(__file__).resolve().parents[1] / "benchmarks")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    return importlib.import_module("reproduce_copula")


@pytest.mark.slow
def test_bayes_na_p2_coverage_is_nominal_and_the_noise_naive_posterior_is_not() -> None:
    """Seed 000 Table 1 in miniature (p = 2, n = 200): r ~ U(-1, 1) is the prior, so exact posterior
    intervals cover exactly 95% over replications. 300 replications: P(covered < 268) = 3e-5."""
    rc = _reproduce_module()
    cell = rc.Cell(2, 200, 0.1)
    rc.run_p2(cell, 300, seed=7)
    assert sum(cell.cover) >= 268
    # power: ignoring the noise (alpha -> 0, the noisy count taken as the true one) under-covers badly
    grid = rc.GridPosterior(200)
    naive = 0
    for h in range(300):
        rng = np.random.default_rng([7, 2, 200, 100, h])
        x, R = rc.simulate(2, 200, rng)
        rel = na.privatize(x, statistic="median_pairs", epsilon=0.1, rng=rng)
        _, lo, hi = grid.summary(float(rel.values[0]), 1e-300)
        naive += lo <= R[0, 1] <= hi
    assert naive < 240


@pytest.mark.slow
def test_bayes_na_p5_batched_nuts_coverage() -> None:
    """The p = 5 path of the reproduction (batched NUTS, composite likelihood): 20 replications."""
    rc = _reproduce_module()
    cell = rc.Cell(5, 200, 5.0)
    sampler = rc.BatchedNUTS(200, 5, 20, 300, 300)
    rc.run_p5_batch(cell, sampler, seed=3)
    assert cell.reps == 20 and cell.rhat_max < 1.1
    assert np.mean(cell.cover) >= 0.85
