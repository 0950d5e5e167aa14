"""``privatize(..., budget=...)``: the whole guarantee is charged, exactly, before any noise is drawn."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import noiseaware as na
from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import NoiseawareTypeError, PrivacyBudgetError, UtilityWarning
from noiseaware.mechanisms import Mechanism

RNG = np.random.default_rng(5)
CALLS: dict[str, Any] = {
    "median_pairs": (RNG.normal(size=(40, 3)), {"epsilon": 0.9}),
    "kendall_pairs": (RNG.normal(size=(40, 3)), {"epsilon": 0.9}),
    "counts": (np.array([4, 5, 6]), {"epsilon": 0.9, "sensitivity": 1}),
    "counts_dg": (np.array([4, 5, 6]), {"rho": 0.4, "sensitivity": 1}),
    "vector": (np.array([0.5, 1.5]), {"epsilon": 0.9, "sensitivity": 1.0}),
    "randomized_response": (np.array([[0, 1], [1, 0]]), {"epsilon": 0.9, "categories": 2}),
    "dirichlet_logmean": (RNG.dirichlet([2, 3, 4], size=100), {"epsilon": 0.9}),
    "dirichlet_logmean_fixed": (RNG.dirichlet([2, 3, 4], size=100), {"epsilon": 0.9, "threshold": 0.01}),
    "dpcopula": (RNG.integers(0, 5, (60, 3)), {"epsilon": 0.9, "domains": [range(5)] * 3}),
    "dpcopula_hybrid": (RNG.integers(0, 5, (60, 3)), {"epsilon": 0.9, "domains": [range(5)] * 3, "hybrid": ["x0"]}),
    "pace_ggm": (RNG.uniform(-1, 1, size=(60, 4)), {"rho": 0.4, "bound": 1.0}),
    "pace_ggm_centred": (RNG.uniform(-1, 1, size=(60, 4)), {"rho": 0.4, "bound": 1.0, "center": True}),
    "second_moment": (RNG.uniform(-1, 1, size=(60, 4)), {"rho": 0.4, "bound": 1.0}),
}


def _statistic(key: str) -> str:
    return key.removesuffix("_dg").removesuffix("_fixed").removesuffix("_centred").removesuffix("_hybrid")


@pytest.fixture
def draws(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every noise draw made through any mechanism."""
    seen: list[str] = []
    original = Mechanism.release

    def spy(self: Mechanism, value: Any, rng: Any = None) -> Any:
        seen.append(self.family)
        return original(self, value, rng=rng)

    monkeypatch.setattr(Mechanism, "release", spy)
    return seen


@pytest.mark.parametrize("key", sorted(CALLS))
def test_budget_is_charged_exactly_the_release_guarantee(key: str, draws: list[str]) -> None:
    data, kw = CALLS[key]
    budget = PrivacyBudget(rho=1.0) if "rho" in kw else PrivacyBudget(epsilon=1.0)
    rel = na.privatize(data, statistic=_statistic(key), budget=budget, **kw)
    unit = "rho" if "rho" in kw else "epsilon"
    assert budget.spent == pytest.approx(getattr(rel.guarantee, unit), rel=1e-12)
    assert len(budget.ledger) == 1 and budget.ledger[0][0] == rel.statistic
    assert draws  # noise was drawn after the charge


@pytest.mark.parametrize("key", sorted(CALLS))
def test_overspend_is_refused_before_any_noise(key: str, draws: list[str]) -> None:
    data, kw = CALLS[key]
    budget = PrivacyBudget(rho=0.3) if "rho" in kw else PrivacyBudget(epsilon=0.5)
    with pytest.raises(PrivacyBudgetError, match="exceeds the remaining"):
        na.privatize(data, statistic=_statistic(key), budget=budget, **kw)
    assert draws == []
    assert budget.spent == 0.0 and budget.ledger == ()


def test_many_pairs_use_the_whole_budget_exactly() -> None:
    # p = 50: 1225 pairs at epsilon/1225 each; the float split must not be refused at the end
    x = np.random.default_rng(1).normal(size=(3000, 50))
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.warns(UtilityWarning):  # 1225 pairs: noise sd 1,700 against counts <= 1,500
        rel = na.privatize(x, statistic="median_pairs", epsilon=1.0, budget=budget)
    assert rel.values.size == 1225
    with pytest.raises(PrivacyBudgetError):
        na.privatize(np.array([1, 2]), statistic="counts", epsilon=1e-9, sensitivity=1, budget=budget)


def test_sequence_of_releases_draws_down_one_budget() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    x = np.random.default_rng(2).normal(size=(60, 3))
    na.privatize(x, statistic="median_pairs", epsilon=0.4, budget=budget)
    na.privatize(x, statistic="kendall_pairs", epsilon=0.6, budget=budget)
    assert budget.remaining == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(PrivacyBudgetError):
        na.privatize(x, statistic="kendall_pairs", epsilon=1e-6, budget=budget)


def test_budget_must_be_a_privacy_budget() -> None:
    with pytest.raises(NoiseawareTypeError, match="budget"):
        na.privatize(np.array([1, 2]), statistic="counts", epsilon=1.0, sensitivity=1, budget=1.0)


def test_noise_that_swamps_every_count_warns() -> None:
    # p = 200 at epsilon = 1: 19,900 pairs, noise sd about 28,000 against counts <= 150
    x = np.random.default_rng(3).normal(size=(300, 200))
    with pytest.warns(UtilityWarning, match="almost no information"):
        rel = na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(0))
    assert rel.values.size == 19900
    # a sensible release does not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        na.privatize(x[:, :5], statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(0))


@pytest.mark.parametrize(
    ("data", "kw"),
    [
        (np.array([1, 2]), {"statistic": "counts", "epsilon": 1e-300, "sensitivity": 1}),
        (np.random.default_rng(0).normal(size=(30, 3)), {"statistic": "median_pairs", "epsilon": 1e-300}),
        (
            np.random.default_rng(0).normal(size=(30, 3)),
            {"statistic": "median_pairs", "epsilon": 1e-300, "mechanism": "rgm"},
        ),
    ],
)
def test_unrepresentable_noise_is_refused_naming_the_callers_epsilon(data, kw) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(na.exceptions.NoiseawareValueError, match=r"epsilon=1e-300"):
        na.privatize(data, budget=budget, **kw)
    assert budget.spent == 0.0


@pytest.mark.parametrize("candidates", [["a"], [[0.1], [0.2, 0.3]], [0.1, float("nan")], [0.0, 0.5], [0.2, 0.2]])
def test_bad_dirichlet_candidates_are_named(candidates) -> None:
    x = np.random.default_rng(0).dirichlet([1, 2, 3], size=50)
    with pytest.raises((na.exceptions.NoiseawareValueError, na.exceptions.NoiseawareTypeError), match="candidates"):
        na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, candidates=candidates)
