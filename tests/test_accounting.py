"""Accounting against published figures and independent implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from noiseaware import accounting as A
from noiseaware.exceptions import PrivacyBudgetError
from noiseaware.mechanisms import _opendp


def test_composition() -> None:
    assert A.sequential([0.5, 0.25, 0.25]) == 1.0
    assert A.parallel([0.5, 0.25, 0.9]) == 0.9
    assert A.zcdp_sequential([0.1, 0.2]) == pytest.approx(0.3)
    # seed 000 §3.2: p(p-1)/2 pairs at eps/(p(p-1)/2) each compose to eps
    p = 10
    k = p * (p - 1) // 2
    assert A.sequential([1.0 / k] * k) == pytest.approx(1.0, rel=1e-15)


def test_epsilon_to_rho() -> None:
    assert A.epsilon_to_rho(1.0) == 0.5
    assert A.epsilon_to_rho(0.2) == pytest.approx(0.02)


def test_seed002_lemma_3_7() -> None:
    # rho + 2 sqrt(rho log(1/delta))
    assert A.zcdp_to_approx_dp(0.5, 1e-5, method="bun_steinke") == pytest.approx(
        0.5 + 2 * math.sqrt(0.5 * math.log(1e5)), rel=1e-15
    )


def test_seed001_footnote_discrete_gaussian_sigma_6_25() -> None:
    """Seed 001 §5 Example 2: sigma = 6.25 on the cell counts is at least as protective as 2 log 3.

    Moving one record between two cells changes two counts by 1: L2 sensitivity sqrt(2),
    rho = 2 / (2 * 6.25^2) = 0.0256; at the Census' delta = 1e-10 the implied epsilon is below
    2 log 3 = 2.197 by both conversions.
    """
    rho = 2 / (2 * 6.25**2)
    assert rho == pytest.approx(0.0256)
    assert A.zcdp_to_approx_dp(rho, 1e-10, method="bun_steinke") < 2 * math.log(3)
    assert A.zcdp_to_approx_dp(rho, 1e-10) < A.zcdp_to_approx_dp(rho, 1e-10, method="bun_steinke")


@pytest.mark.parametrize("rho", [0.01, 0.0256, 0.5, 2.63, 15.29])
@pytest.mark.parametrize("delta", [1e-5, 1e-10])
def test_cks20_conversion_matches_opendp(rho: float, delta: float) -> None:
    """CKS20 Corollary 13 against OpenDP's independent implementation (make_zCDP_to_approxDP)."""
    with _opendp._dp() as dp:  # OpenDP's contrib features on while the measurements are built
        meas = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0)
        conv = dp.c.make_zCDP_to_approxDP(meas)
    # the Gaussian with scale 1 at d_in gives rho = d_in^2 / 2
    theirs = conv.map(math.sqrt(2 * rho)).epsilon(delta)
    ours = A.zcdp_to_approx_dp(rho, delta)
    assert ours == pytest.approx(theirs, rel=1e-6)
    assert ours <= A.zcdp_to_approx_dp(rho, delta, method="bun_steinke")


@pytest.mark.parametrize("rho,eps", [(0.5, 3.0), (2.63, 17.0), (0.05, 1.0)])
def test_delta_and_epsilon_conversions_are_inverse(rho: float, eps: float) -> None:
    d = A.zcdp_delta(rho, eps)
    assert 0 < d < 1
    assert A.zcdp_to_approx_dp(rho, d) == pytest.approx(eps, rel=1e-6)


def test_budget_refuses_overspending_and_names_both_figures() -> None:
    b = A.PrivacyBudget(epsilon=1.0)
    assert b.spend(0.4, "pairs") == pytest.approx(0.6)
    with pytest.raises(PrivacyBudgetError, match=r"requested epsilon=0.7 exceeds the remaining epsilon=0.6") as err:
        b.spend(0.7)
    assert err.value.requested == 0.7 and err.value.remaining == pytest.approx(0.6)
    assert b.remaining == pytest.approx(0.6)  # unchanged by the refused request
    for _ in range(3):
        b.spend(0.2)
    assert b.remaining == 0.0
    assert [lab for lab, _ in b.ledger] == ["pairs", "", "", ""]
    z = A.PrivacyBudget(rho=0.5)
    with pytest.raises(PrivacyBudgetError, match="rho"):
        z.spend(0.6)


def test_budget_split_into_equal_parts_spends_exactly() -> None:
    b = A.PrivacyBudget(epsilon=1.0)
    for _ in range(45):
        b.spend(1.0 / 45)
    with pytest.raises(PrivacyBudgetError):
        b.spend(1e-9)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: A.PrivacyBudget(), "exactly one of epsilon or rho"),
        (lambda: A.PrivacyBudget(epsilon=1.0, rho=1.0), "exactly one of epsilon or rho"),
        (lambda: A.PrivacyBudget(epsilon=-1.0), "epsilon must be a finite number > 0; got epsilon=-1.0"),
        (lambda: A.PrivacyBudget(epsilon=float("nan")), "epsilon must be a finite number > 0"),
        (lambda: A.PrivacyBudget(epsilon=[1.0]), "epsilon must be a real number"),
        (lambda: A.zcdp_to_approx_dp(0.5, 0.0), r"delta must be in \(0, 1\)"),
        (lambda: A.zcdp_to_approx_dp(0.5, 1e-5, method="x"), "method must be one of"),
        (lambda: A.sequential([]), "must hold at least one value"),
        (lambda: A.sequential([0.1, float("inf")]), r"epsilons\[1\] must be a finite number >= 0"),
        (lambda: A.epsilon_to_rho(-0.1), "epsilon must be a finite number >= 0"),
    ],
)
def test_bad_input(call, match) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_epsilon_array_scalar_accepted() -> None:
    assert A.epsilon_to_rho(np.float64(2.0)) == 2.0
