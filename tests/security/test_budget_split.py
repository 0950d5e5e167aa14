"""k equal releases of total/k all fit one PrivacyBudget, for every mechanism and every statistic.

Calibration computes a noise parameter from the budget asked for in floating point; the
guarantee recomputed from that parameter used to land an ulp or two above the request
(``requested rho=0.10000000000000002``), so the last of k releases of total/k was refused, and
statistics that split their budget composed their parts' guarantees to slightly more than asked.
The rule tested here: the guarantee a mechanism or release records never exceeds the request, so
k requests that add up to the total are all accepted and the ledger never exceeds the total.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware._privatize import STATISTICS
from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import UtilityWarning
from noiseaware.mechanisms import (
    MECHANISMS,
    BayesianTruncatedGeometricMechanism,
    DiscreteGaussianMechanism,
    ExponentialMechanism,
    GaussianMechanism,
    GeometricMechanism,
    LaplaceMechanism,
    RandomizedResponse,
    RenormalizedGeometricMechanism,
    TruncatedGeometricMechanism,
)

KS = range(1, 51)


def _equal_share(total: float, k: int) -> float:
    """The largest float64 r with k * r <= total exactly: k equal requests that add up to at most the total."""
    exact = Fraction(total) / k
    r = float(exact)
    return r if Fraction(r) <= exact else math.nextafter(r, 0.0)


# ----------------------------------------------------------------------------- mechanisms
#: Every way a mechanism is calibrated from a budget: family -> (unit, calibrate(request) -> mechanism).
CALIBRATIONS = {
    "geometric": ("epsilon", [lambda e, s=s: GeometricMechanism.from_epsilon(e, sensitivity=s) for s in (1, 2, 6)]),
    "laplace": ("epsilon", [lambda e, s=s: LaplaceMechanism.from_epsilon(e, sensitivity=s) for s in (1.0, 0.3, 4 / 7)]),
    "tgm": ("epsilon", [lambda e: TruncatedGeometricMechanism.from_epsilon(e, 0, 20, sensitivity=3)]),
    "btgm": ("epsilon", [lambda e: BayesianTruncatedGeometricMechanism.from_epsilon(e, 0, 20)]),
    "rgm": ("epsilon", [lambda e: RenormalizedGeometricMechanism.from_epsilon(e, 0, 20)]),
    "gaussian": ("rho", [lambda r, s=s: GaussianMechanism.from_rho(r, sensitivity=s) for s in (1.0, 0.3, 4 / 7)]),
    "discrete_gaussian": ("rho", [lambda r, s=s: DiscreteGaussianMechanism.from_rho(r, s) for s in (1, 2.5)]),
    "randomized_response": ("epsilon", [lambda e, k=k: RandomizedResponse.from_epsilon(e, k) for k in (2, 3, 4, 7)]),
    "exponential": ("rho", [lambda r, s=s: ExponentialMechanism.from_rho(r, sensitivity=s) for s in (1.0, 0.5)]),
}


def test_every_mechanism_has_a_calibration_case():
    assert set(CALIBRATIONS) == set(MECHANISMS)


@pytest.mark.parametrize("family", sorted(CALIBRATIONS))
@pytest.mark.parametrize("total", [0.3, 1.0, 0.7, 2.0 / 3.0])
def test_k_mechanisms_of_total_over_k_fit_the_budget(family, total):
    unit, makers = CALIBRATIONS[family]
    for make in makers:
        for k in KS:
            for request in (total / k, _equal_share(total, k)):  # what a user types; an exact split
                mech = make(request)
                g = getattr(mech.guarantee(), unit)
                assert g <= request, (family, k, request, g)
                budget = PrivacyBudget(**{unit: total})
                for _ in range(k):
                    budget.charge(mech.guarantee(), label=family)  # never refused
                assert budget.spent_exact <= k * Fraction(request)
                if request == _equal_share(total, k):
                    assert budget.spent_exact <= budget.total_exact


@pytest.mark.parametrize(
    ("make", "total", "k"),
    [
        (lambda r: DiscreteGaussianMechanism.from_rho(r), 0.3, 3),
        (lambda r: GaussianMechanism.from_rho(r), 0.3, 3),
        (lambda e: RandomizedResponse.from_epsilon(e, 3), 1.0, 7),
    ],
    ids=["discrete_gaussian", "gaussian", "randomized_response"],
)
def test_reported_cases_calibrate_within_the_request(make, total, k):
    mech = make(total / k)
    g = mech.guarantee()
    assert (g.rho if g.rho is not None else g.epsilon) <= total / k


def test_a_request_finer_than_float64_is_refused_by_name():
    # no float64 p near 1/3 gives |log(2p / (1 - p))| <= 5e-324: refused, not understated
    with pytest.raises(na.exceptions.NoiseawareValueError, match=r"epsilon must be large enough .* got epsilon=5e-324"):
        RandomizedResponse.from_epsilon(5e-324, 3)
    assert RandomizedResponse.from_epsilon(5e-324, 2).guarantee().epsilon == 0.0  # p = 1/2 exactly


# ----------------------------------------------------------------------------- statistics
_RNG = np.random.default_rng(0)
_X = _RNG.normal(size=(30, 3))
_COMP = _RNG.dirichlet([2.0, 2.0, 2.0], size=30)
_CODES = _RNG.integers(0, 4, size=(30, 3))
_TABLE = pd.DataFrame(_CODES, columns=["a", "b", "c"])
_DOMAINS = {"a": range(4), "b": range(4), "c": range(4)}

#: name -> (data, statistic, unit, options); every statistic and every budget split it makes.
CASES = {
    "median_pairs/geometric": (_X, "median_pairs", "epsilon", {"mechanism": "geometric"}),
    "median_pairs/tgm": (_X, "median_pairs", "epsilon", {"mechanism": "tgm"}),
    "median_pairs/btgm": (_X, "median_pairs", "epsilon", {"mechanism": "btgm"}),
    "median_pairs/rgm": (_X, "median_pairs", "epsilon", {"mechanism": "rgm"}),
    "kendall_pairs": (_X, "kendall_pairs", "epsilon", {}),
    "counts/geometric": (np.array([3, 4, 5]), "counts", "epsilon", {"sensitivity": 1}),
    "counts/discrete_gaussian": (np.array([3, 4, 5]), "counts", "rho", {"sensitivity": 1}),
    "vector/laplace": (np.array([0.3, 0.4]), "vector", "epsilon", {"sensitivity": 1.0}),
    "vector/gaussian": (np.array([0.3, 0.4]), "vector", "rho", {"sensitivity": 1.0}),
    "randomized_response": (_CODES, "randomized_response", "epsilon", {"categories": 4}),
    "dirichlet_logmean": (_COMP, "dirichlet_logmean", "epsilon", {}),
    "dirichlet_logmean/threshold": (_COMP, "dirichlet_logmean", "epsilon", {"threshold": 0.01}),
    "dpcopula/kendall": (_TABLE, "dpcopula", "epsilon", {"domains": _DOMAINS}),
    "dpcopula/mle": (_TABLE, "dpcopula", "epsilon", {"domains": _DOMAINS, "correlation": "mle", "blocks": 3}),
    "dpcopula/median": (_TABLE, "dpcopula", "epsilon", {"domains": _DOMAINS, "correlation": "median"}),
    "dpcopula/hybrid": (_TABLE, "dpcopula", "epsilon", {"domains": _DOMAINS, "hybrid": ["c"]}),
    "second_moment": (_X, "second_moment", "rho", {"bound": 3.0}),
    "pace_ggm": (_X[:, :2], "pace_ggm", "rho", {"bound": 3.0}),
    "pace_ggm/center": (_X[:, :2], "pace_ggm", "rho", {"bound": 3.0, "center": True}),
    "regression/ssp": (_X[:, :3], "regression", "rho", {"bound": 3.0, "response": "x2"}),
    "regression/laplace": (_X[:, :3], "regression", "epsilon", {"bound": 3.0, "response": "x2"}),
    "regression/adassp": (_X[:, :3], "regression", "rho", {"bound": 3.0, "response": "x2", "method": "adassp"}),
    # method="pace_ggm" splits rho as adassp does (rho / 3, then fit_sum for the rest) and hands the rest to
    # the pace_ggm statistic, whose own split is the case "pace_ggm" (50 x 25 releases of it would add 30 s)
}


def test_every_statistic_has_a_case():
    assert {case[1] for case in CASES.values()} == set(STATISTICS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_k_releases_of_total_over_k_fit_one_budget(name):
    data, statistic, unit, options = CASES[name]
    total = 0.3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UtilityWarning)  # tiny budgets swamp the counts; not the point here
        for k in KS:
            request = _equal_share(total, k)
            budget = PrivacyBudget(**{unit: total})
            for j in range(k):
                rel = na.privatize(
                    data, statistic, budget=budget, rng=np.random.default_rng(j), **{unit: request}, **options
                )
                assert getattr(rel.guarantee, unit) <= request, (name, k, getattr(rel.guarantee, unit), request)
            assert budget.spent_exact <= budget.total_exact, (name, k)


@pytest.mark.parametrize(
    ("data", "statistic", "unit", "total", "k", "options"),
    [
        (np.array([3, 4, 5]), "counts", "rho", 0.3, 3, {"sensitivity": 1}),
        (np.array([0.3, 0.4]), "vector", "rho", 0.3, 3, {"sensitivity": 1.0}),
        (_X, "second_moment", "rho", 0.3, 3, {"bound": 3.0}),
        (_CODES[:, :1] % 2, "randomized_response", "epsilon", 1.0, 7, {"categories": 2}),
    ],
    ids=["counts/discrete_gaussian", "vector/gaussian", "second_moment", "randomized_response"],
)
def test_reported_releases_of_total_over_k_are_all_accepted(data, statistic, unit, total, k, options):
    budget = PrivacyBudget(**{unit: total})
    for j in range(k):  # the last one was refused: "requested rho=0.10000000000000002"
        na.privatize(data, statistic, budget=budget, rng=np.random.default_rng(j), **{unit: total / k}, **options)
    assert len(budget.ledger) == k


@pytest.mark.parametrize(
    ("data", "statistic", "options"),
    [
        (_X[:, :2], "median_pairs", {}),
        (_X[:, :2], "kendall_pairs", {}),
        (_COMP, "dirichlet_logmean", {"threshold": 0.01}),
        (_TABLE, "dpcopula", {"domains": _DOMAINS}),
        (_TABLE, "dpcopula", {"domains": _DOMAINS, "hybrid": ["c"]}),
    ],
    ids=["median_pairs", "kendall_pairs", "dirichlet_logmean", "dpcopula", "dpcopula/hybrid"],
)
def test_a_large_epsilon_warns_once_not_once_per_share(data, statistic, options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        na.privatize(data, statistic, epsilon=50.0, rng=np.random.default_rng(0), **options)
    privacy = [w for w in caught if issubclass(w.category, na.exceptions.PrivacyWarning)]
    assert len(privacy) == 1 and str(privacy[0].message).startswith("privatize: epsilon=50.0")
