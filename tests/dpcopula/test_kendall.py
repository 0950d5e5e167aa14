"""Kendall's tau-a of the dpcopula release: the O(n + K^2) table route and Knight's O(n log n) route
against an O(n^2) brute force, with ties."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from noiseaware._privatize import _dpcopula as dp
from noiseaware._privatize import _kendall, kendall_tau_a


def brute_s(x: np.ndarray, y: np.ndarray) -> int:
    s = 0
    for i, j in itertools.combinations(range(x.size), 2):
        s += int(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]))
    return s


@pytest.mark.parametrize("route", ["table", "knight"])
@pytest.mark.parametrize("levels", [2, 3, 7, 1000])
def test_kendall_s_matches_brute_force_with_ties(route: str, levels: int, monkeypatch: pytest.MonkeyPatch) -> None:
    if route == "knight":
        monkeypatch.setattr(_kendall, "_TABLE_LIMIT", 0)
    rng = np.random.default_rng(levels)
    for n in (2, 3, 17, 120):
        x = rng.integers(0, levels, n)
        y = (x + rng.integers(0, levels, n)) % levels
        assert dp.kendall_s(x, y) == brute_s(x, y)
        assert dp.kendall_s(x, -y) == -brute_s(x, y)


def test_tau_a_is_not_tau_b_under_ties() -> None:
    """The brute force separates tau-a from tau-b (a wrong estimand would be caught)."""
    from scipy import stats

    x = np.array([0, 0, 1, 1, 2, 2, 2])
    y = np.array([0, 1, 1, 1, 2, 2, 0])
    n = x.size
    tau_a = brute_s(x, y) / (n * (n - 1) / 2)
    assert dp.kendall_tau_a_fast(x, y) == pytest.approx(tau_a, abs=1e-15)
    assert abs(stats.kendalltau(x, y).statistic - tau_a) > 0.05


def test_both_routes_agree_at_large_n_with_the_existing_tau_a(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 300, 200_000)
    y = x // 3 + rng.integers(0, 60, x.size)
    s_table = dp.kendall_s(x, y)
    monkeypatch.setattr(_kendall, "_TABLE_LIMIT", 0)
    s_knight = dp.kendall_s(x, y)
    assert s_table == s_knight
    n = x.size
    assert s_table / (n * (n - 1) / 2) == pytest.approx(kendall_tau_a(x.astype(float), y.astype(float)), abs=1e-12)


def test_constant_input_gives_zero() -> None:
    assert dp.kendall_s(np.zeros(5), np.arange(5)) == 0
