"""PrivacyBudget in exact arithmetic (issue 11, item 4).

Regression tests for three defects of the float budget: the last of k equal float spends of
total/k refused for k = 1225, 4950, 19900; unlimited spends of 1e-15 accepted after exhaustion;
a negative initial ``spent`` that enlarged the budget. Then the exact API: Fraction/str amounts,
``split``, ``check``/``charge`` of guarantees, refusals that change nothing, and a seeded
property test over random partitions of the budget.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError, PrivacyBudgetError
from noiseaware.mechanisms import Guarantee


def _state(b: PrivacyBudget) -> tuple:
    return (b.spent_exact, b.remaining_exact, b.slack, b.ledger_exact, b.spent, b.remaining)


# -- defect 1: k equal float spends of total/k --------------------------------------------------


@pytest.mark.parametrize("k", [1225, 4950, 19900])
def test_k_equal_float_spends_of_total_over_k_all_succeed(k: int) -> None:
    # p(p-1)/2 pairs for p = 50, 100, 200 (seed 000 §3.2); the old float budget refused the last one.
    b = PrivacyBudget(epsilon=1.0)
    for i in range(k):
        b.spend(1.0 / k, f"pair {i}")
    assert len(b.ledger) == k
    assert b.remaining < 1e-15
    # the exact sum is within the accumulated rounding of the pieces, on either side of 1
    assert abs(b.spent_exact - 1) <= b.slack
    with pytest.raises(PrivacyBudgetError):
        b.spend(1e-15)


@pytest.mark.parametrize("total", [1.0, 0.1, 3.7, 1e-3])
@pytest.mark.parametrize("k", [3, 7, 45, 1225])
def test_equal_float_splits_of_other_totals(total: float, k: int) -> None:
    b = PrivacyBudget(epsilon=total)
    for _ in range(k):
        b.spend(total / k)
    assert b.spent_exact <= b.total_exact + b.slack
    with pytest.raises(PrivacyBudgetError):
        b.spend(total * 1e-12)


# -- defect 2: spends after exhaustion --------------------------------------------------------


def _exhaust_in_one(b: PrivacyBudget) -> None:
    b.spend(1.0)


def _exhaust_in_1225(b: PrivacyBudget) -> None:
    for _ in range(1225):
        b.spend(1.0 / 1225)


def _exhaust_exactly(b: PrivacyBudget) -> None:
    for _ in range(3):
        b.spend(Fraction(1, 3))


@pytest.mark.parametrize("exhaust", [_exhaust_in_one, _exhaust_in_1225, _exhaust_exactly])
def test_exhausted_budget_refuses_the_first_tiny_spend(exhaust) -> None:
    b = PrivacyBudget(epsilon=1.0)
    exhaust(b)
    before = (b.spent, b.remaining, b.ledger)
    first_refusal = None
    for i in range(10**6):  # the old budget accepted all 10**6 of these
        try:
            b.spend(1e-15)
        except PrivacyBudgetError:
            first_refusal = i
            break
    assert first_refusal == 0
    assert (b.spent, b.remaining, b.ledger) == before
    assert b.spent_exact <= 1 + b.slack


def test_overspend_is_bounded_relative_to_the_total_whatever_follows() -> None:
    """The allowance of a float amount x is ulp(x) <= 2**-52 x, so the accepted sum stays below total/(1 - 2**-52)."""
    b = PrivacyBudget(epsilon=1.0)
    b.spend(1.0)  # allowance ulp(1.0) = 2**-52
    accepted = 0
    for _ in range(1000):
        try:
            b.spend(2.0**-53)
        except PrivacyBudgetError:
            break
        accepted += 1
    assert accepted == 2  # 2 * 2**-53 fits in 2**-52 + 2 * 2**-105; a third does not
    assert b.spent_exact <= Fraction(1) / (1 - Fraction(1, 2**52))
    with pytest.raises(PrivacyBudgetError):
        b.spend(1e-20)  # ulp(1e-20) is ~1.5e-36: nothing more gets through
    # exact amounts carry no allowance at all
    e = PrivacyBudget(epsilon=1)
    e.spend(1)
    with pytest.raises(PrivacyBudgetError):
        e.spend(Fraction(1, 10**300))


def test_subnormal_amounts_carry_no_allowance() -> None:
    b = PrivacyBudget(epsilon=1)
    b.spend(1)
    with pytest.raises(PrivacyBudgetError):
        b.spend(5e-324)  # ulp(5e-324) == 5e-324; an allowance equal to the amount would admit it


# -- defect 3: the initial spent ----------------------------------------------------------------


@pytest.mark.parametrize(
    "spent,match",
    [
        (-5, r"^PrivacyBudget: spent must be >= 0; got spent=-5\.$"),
        (-1e-300, r"spent must be >= 0; got spent=-1e-300\."),
        (float("nan"), r"spent must be finite and >= 0; got spent=nan\."),
        (float("inf"), r"spent must be finite and >= 0; got spent=inf\."),
        (float("-inf"), r"spent must be finite and >= 0; got spent=-inf\."),
        (1.5, r"spent must be <= the total epsilon=1.0; got spent=1.5\."),
        (Fraction(3, 2), r"spent must be <= the total epsilon=1.0"),
        ("x", r"spent must be finite and >= 0"),
    ],
)
def test_initial_spent_is_validated(spent, match) -> None:
    with pytest.raises(NoiseawareValueError, match=match):
        PrivacyBudget(epsilon=1, spent=spent)


def test_negative_spent_cannot_enlarge_the_budget() -> None:
    with pytest.raises(NoiseawareValueError):
        b = PrivacyBudget(epsilon=1, spent=-5)
        b.spend(6)  # the old budget accepted this


def test_initial_spent_counts_exactly() -> None:
    b = PrivacyBudget(epsilon=1.0, spent=0.25)
    assert b.remaining_exact == Fraction(3, 4)
    b = PrivacyBudget(epsilon=1.0, spent=1.0)
    assert b.remaining == 0.0
    with pytest.raises(PrivacyBudgetError):
        b.spend(1e-15)
    with pytest.raises(NoiseawareTypeError, match="spent must be a real number"):
        PrivacyBudget(epsilon=1, spent=None)


# -- exact amounts -----------------------------------------------------------------------------


def test_decimal_strings_and_fractions_are_exact() -> None:
    b = PrivacyBudget(epsilon="1")
    for _ in range(10):
        b.spend("0.1")
    assert b.spent_exact == 1 and b.remaining_exact == 0 and b.slack == 0
    with pytest.raises(PrivacyBudgetError):
        b.spend(Fraction(1, 10**40))
    t = PrivacyBudget(rho="1/3")
    assert t.total_exact == Fraction(1, 3)
    t.spend(Fraction(1, 9), "a")
    t.spend("2/9", "b")
    assert t.remaining_exact == 0
    assert t.ledger_exact == (("a", Fraction(1, 9)), ("b", Fraction(2, 9)))
    assert t.ledger == (("a", 1 / 9), ("b", 2 / 9))


def test_float_amounts_are_taken_at_their_exact_binary_value() -> None:
    b = PrivacyBudget(epsilon=1)
    b.spend(0.1)
    assert b.spent_exact == Fraction(0.1) != Fraction(1, 10)
    assert b.slack == Fraction(math.ulp(0.1))
    # an exact decimal budget of 0.3 with three float spends of 0.1: within their rounding
    c = PrivacyBudget(epsilon="0.3")
    for _ in range(3):
        c.spend(0.1)
    assert c.spent_exact > Fraction(3, 10)  # 3 * Fraction(0.1) exceeds 3/10 by 1.7e-17 ...
    assert c.spent_exact - Fraction(3, 10) <= c.slack  # ... less than 3 ulp(0.1)


def test_numpy_scalars() -> None:
    b = PrivacyBudget(epsilon=np.float64(1.0))
    for _ in range(3):
        b.spend(np.float32(1) / np.float32(3))  # rounded in float32: allowance is the float32 ulp
    assert b.slack == 3 * Fraction(float(np.spacing(np.float32(1 / 3))))
    with pytest.raises(PrivacyBudgetError):
        b.spend(np.float32(1e-3))
    c = PrivacyBudget(epsilon=np.int64(2))
    assert c.spend(np.array(1.5)) == 0.5


@pytest.mark.parametrize(
    "amount,err,match",
    [
        (0, NoiseawareValueError, "amount must be a finite number > 0; got amount=0"),
        (-0.1, NoiseawareValueError, "amount must be a finite number > 0"),
        (float("nan"), NoiseawareValueError, "amount must be a finite number > 0; got amount=nan"),
        (float("inf"), NoiseawareValueError, "amount must be a finite number > 0"),
        ("0.1.2", NoiseawareValueError, "amount must be a finite number > 0"),
        ("nan", NoiseawareValueError, "amount must be a finite number > 0"),
        ("1/0", NoiseawareValueError, "amount must be a finite number > 0"),
        (True, NoiseawareTypeError, "amount must be a real number"),
        (None, NoiseawareTypeError, "amount must be a real number"),
        ([0.1], NoiseawareTypeError, "amount must be a real number"),
    ],
)
def test_bad_amounts_change_nothing(amount, err, match) -> None:
    b = PrivacyBudget(epsilon=1.0)
    b.spend(0.5, "first")
    before = _state(b)
    with pytest.raises(err, match=match):
        b.spend(amount)
    assert _state(b) == before


@pytest.mark.parametrize("total", ["0", "-1", 0, -1.0, float("inf"), "inf"])
def test_bad_totals(total) -> None:
    with pytest.raises(NoiseawareValueError, match="must be a finite number > 0"):
        PrivacyBudget(epsilon=total)
    with pytest.raises(NoiseawareValueError, match="must be a finite number > 0"):
        PrivacyBudget(rho=total)


def test_float_views_and_error_message_print_plain_numbers() -> None:
    b = PrivacyBudget(epsilon="1/3")
    b.spend(Fraction(1, 9))
    assert type(b.spent) is float and type(b.remaining) is float and type(b.total) is float
    assert b.epsilon == pytest.approx(1 / 3) and b.rho is None
    with pytest.raises(PrivacyBudgetError) as err:
        b.spend(Fraction(1, 3))
    assert type(err.value.requested) is float and type(err.value.remaining) is float
    assert err.value.requested == 1 / 3 and err.value.remaining == 2 / 9
    assert err.value.unit == "epsilon"
    assert "Fraction" not in str(err.value)
    assert "requested epsilon=0.3333333333333333 exceeds the remaining epsilon=0.2222222222222222" in str(err.value)
    assert "Fraction" not in repr(b)


# -- split ------------------------------------------------------------------------------------


def test_split_is_an_exact_share_of_what_remains() -> None:
    b = PrivacyBudget(epsilon=1.0)
    assert b.split(3) == Fraction(1, 3)
    b.spend("0.25")  # exact: no rounding allowance
    share = b.split(45)
    assert share == Fraction(3, 4) / 45
    for _ in range(45):
        b.spend(share)
    assert b.remaining_exact == 0 and b.spent_exact == 1
    with pytest.raises(PrivacyBudgetError):
        b.spend(Fraction(1, 10**30))
    assert b.split(7) == 0
    d = PrivacyBudget(rho="0.1")
    assert d.split(3) == Fraction(1, 30)
    assert d.split(np.int64(2)) == Fraction(1, 20)


@pytest.mark.parametrize("k,err", [(0, ValueError), (-2, ValueError), (1.5, TypeError), ("3", TypeError)])
def test_split_bad_k(k, err) -> None:
    with pytest.raises(err, match=r"PrivacyBudget\.split: k must be an integer"):
        PrivacyBudget(epsilon=1).split(k)


def test_float_of_a_split_is_also_accepted() -> None:
    b = PrivacyBudget(epsilon=0.7)
    share = float(b.split(19))
    for _ in range(19):
        b.spend(share)
    assert b.remaining < 1e-15


# -- check and charge -------------------------------------------------------------------------


def test_check_and_charge_on_an_epsilon_budget() -> None:
    b = PrivacyBudget(epsilon=1.0)
    g = Guarantee(epsilon=0.4)
    assert b.check(g) is None
    assert b.spent_exact == 0 and b.ledger == ()  # check spends nothing
    assert b.charge(g, "pairs") == pytest.approx(0.6)
    assert b.ledger_exact == (("pairs", Fraction(0.4)),)
    before = _state(b)
    with pytest.raises(PrivacyBudgetError, match=r"requested epsilon=0.7 exceeds the remaining epsilon=0.6") as err:
        b.check(Guarantee(epsilon=0.7))
    assert err.value.requested == 0.7 and err.value.remaining == pytest.approx(0.6)
    with pytest.raises(PrivacyBudgetError):
        b.charge(Guarantee(epsilon=0.7))
    assert _state(b) == before
    # the exponential mechanism is both epsilon-DP and zCDP: charged its epsilon here
    assert b.charge(Guarantee(epsilon=0.6, rho=0.045), "exp") == 0.0
    assert b.charge(Guarantee(epsilon=0.0), "free") == 0.0


@pytest.mark.parametrize(
    "g,match",
    [
        (Guarantee(rho=0.1), "must be pure epsilon-DP"),
        (Guarantee(epsilon=0.1, delta=1e-6), "must be pure epsilon-DP"),
        (Guarantee(epsilon=0.1, delta=1e-6, rho=0.01), "must be pure epsilon-DP"),
    ],
)
def test_epsilon_budget_refuses_other_kinds(g: Guarantee, match: str) -> None:
    b = PrivacyBudget(epsilon=1.0)
    b.spend(0.5)
    before = _state(b)
    for call in (b.check, b.charge):
        with pytest.raises(NoiseawareValueError, match=match) as err:
            call(g)
        assert not isinstance(err.value, PrivacyBudgetError)
    assert _state(b) == before


def test_check_and_charge_on_a_rho_budget() -> None:
    b = PrivacyBudget(rho=1.0)
    assert b.charge(Guarantee(rho=0.5), "counts") == 0.5
    # a pure guarantee costs epsilon**2 / 2, exactly
    assert b.charge(Guarantee(epsilon=0.5), "median") == 0.375
    assert b.ledger_exact[-1] == ("median", Fraction(1, 8))
    # an approximate guarantee that carries rho is charged its rho
    assert b.charge(Guarantee(epsilon=3.0, delta=1e-6, rho=0.125), "gauss") == 0.25
    before = _state(b)
    with pytest.raises(PrivacyBudgetError, match=r"requested rho=0.5 exceeds the remaining rho=0.25"):
        b.check(Guarantee(epsilon=1.0))
    with pytest.raises(NoiseawareValueError, match="must give rho or be pure epsilon-DP"):
        b.charge(Guarantee(epsilon=0.1, delta=1e-6))
    assert _state(b) == before
    assert b.charge(Guarantee(rho=0.25)) == 0.0


def test_pure_guarantee_from_a_rounded_square_root_fits_its_rho_budget() -> None:
    """epsilon = sqrt(2 rho) rounded: epsilon**2/2 may exceed rho exactly, but only within the rounding of epsilon."""
    rng = np.random.default_rng(20260511)
    over = 0
    for rho in 10.0 ** rng.uniform(-4, 1, size=300):
        eps = math.sqrt(2 * rho)
        over += Fraction(eps) ** 2 / 2 > Fraction(rho)
        b = PrivacyBudget(rho=rho)
        assert b.charge(Guarantee(epsilon=eps)) < 1e-15 * rho
        with pytest.raises(PrivacyBudgetError):
            PrivacyBudget(rho=rho).check(Guarantee(epsilon=eps * (1 + 1e-9)))
    assert over > 0  # the allowance is needed: without it some of these would be refused


def test_check_needs_a_guarantee() -> None:
    b = PrivacyBudget(epsilon=1)
    for bad in (0.1, {"epsilon": 0.1}, None):
        with pytest.raises(NoiseawareTypeError, match="guarantee must be a Guarantee"):
            b.check(bad)  # type: ignore[arg-type]
        with pytest.raises(NoiseawareTypeError):
            b.charge(bad)  # type: ignore[arg-type]
    with pytest.raises(NoiseawareTypeError, match="label must be a string"):
        b.charge(Guarantee(epsilon=0.1), label=None)  # type: ignore[arg-type]
    assert b.ledger == ()


# -- property test: random partitions ---------------------------------------------------------


def _random_partition(rng: np.random.Generator) -> tuple[float, list[Fraction]]:
    total = float(10.0 ** rng.uniform(-3, 1))
    k = int(np.exp(rng.uniform(0, math.log(2000))))
    w = [int(x) for x in rng.integers(1, 1000, size=k)]
    W = sum(w)
    pieces = [Fraction(total) * wi / W for wi in w]
    assert sum(pieces) == Fraction(total)  # exact by construction
    return total, pieces


def test_random_partitions_into_float_pieces_are_accepted() -> None:
    rng = np.random.default_rng(11)
    for _ in range(200):
        total, pieces = _random_partition(rng)
        unit = "epsilon" if rng.random() < 0.5 else "rho"
        b = PrivacyBudget(**{unit: total})
        for p in pieces:
            b.spend(float(p))  # each rounded to nearest: off by at most half an ulp
        assert b.remaining <= 1e-15 * total
        assert b.spent_exact <= b.total_exact / (1 - Fraction(1, 2**52))


def test_random_partitions_with_one_piece_one_percent_too_big_are_refused() -> None:
    rng = np.random.default_rng(12)
    for _ in range(200):
        total, pieces = _random_partition(rng)
        j = int(rng.integers(len(pieces)))
        pieces[j] = pieces[j] * Fraction(101, 100)
        b = PrivacyBudget(epsilon=total)
        refused_at = None
        for i, p in enumerate(pieces):
            spent, slack = b.spent_exact, b.slack
            try:
                b.spend(float(p))
            except PrivacyBudgetError:
                assert (b.spent_exact, b.slack, len(b.ledger_exact)) == (spent, slack, i)  # unchanged
                refused_at = i
                break
        assert refused_at is not None
        assert b.spent_exact <= b.total_exact
