"""Privacy accounting: composition, conversions and a budget that refuses overspending.

Pure epsilon-DP composes additively under sequential composition and by the maximum under
parallel composition (disjoint inputs) [seed 000, Prop. 2.4]. rho-zCDP composes additively
[seed 002, Prop. 3.6]. Conversions:

* epsilon-DP implies rho = epsilon**2 / 2 zCDP (Bun & Steinke 2016, Prop. 1.4).
* rho-zCDP implies (rho + 2 sqrt(rho log(1/delta)), delta)-DP [seed 002, Lemma 3.7].
* rho-zCDP implies (epsilon, delta)-DP with the tighter conversion of Canonne, Kamath &
  Steinke (2020, "The Discrete Gaussian for Differential Privacy", Corollary 13)::

      epsilon(delta) = inf_{a > 1}  a*rho + (log(1/delta) + (a-1) log(1 - 1/a) - log(a)) / (a-1)

Examples
--------
>>> from noiseaware import accounting
>>> accounting.sequential([0.5, 0.25, 0.25])
1.0
>>> round(accounting.zcdp_to_approx_dp(0.5, 1e-5, method="bun_steinke"), 6)
5.298526
>>> budget = accounting.PrivacyBudget(epsilon=1.0)
>>> budget.spend(0.4)
0.6
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from scipy.optimize import minimize_scalar

from . import _validation as v
from .exceptions import NoiseawareValueError, PrivacyBudgetError

__all__ = [
    "PrivacyBudget",
    "epsilon_to_rho",
    "parallel",
    "sequential",
    "zcdp_delta",
    "zcdp_sequential",
    "zcdp_to_approx_dp",
]


def _values(owner: str, name: str, values: Iterable[float], check=v.nonnegative) -> list[float]:
    out = [check(owner, f"{name}[{i}]", x) for i, x in enumerate(values)]
    if not out:
        v.fail(owner, name, "must hold at least one value", [])
    return out


def sequential(epsilons: Iterable[float]) -> float:
    """Sequential composition of pure epsilon-DP mechanisms: ``sum(epsilons)``.

    Seed ``000_3eff9b68025f505f.txt`` Proposition 2.4.

    Raises
    ------
    ValueError
        If a value is negative, NaN or infinite, or the list is empty.
    """
    return math.fsum(_values("sequential", "epsilons", epsilons))


def parallel(epsilons: Iterable[float]) -> float:
    """Parallel composition on disjoint parts of the data: ``max(epsilons)``."""
    return max(_values("parallel", "epsilons", epsilons))


def zcdp_sequential(rhos: Iterable[float]) -> float:
    """Adaptive composition of rho-zCDP mechanisms: ``sum(rhos)`` [seed 002, Prop. 3.6]."""
    return math.fsum(_values("zcdp_sequential", "rhos", rhos))


def epsilon_to_rho(epsilon: float) -> float:
    """epsilon-DP implies (epsilon**2 / 2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    eps = v.nonnegative("epsilon_to_rho", "epsilon", epsilon)
    return eps * eps / 2.0


def _cks_objective(a: float, rho: float, log_inv_delta: float) -> float:
    return a * rho + (log_inv_delta + (a - 1.0) * math.log1p(-1.0 / a) - math.log(a)) / (a - 1.0)


def zcdp_to_approx_dp(rho: float, delta: float, method: str = "cks20") -> float:
    """The epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP.

    Parameters
    ----------
    rho : float
        zCDP parameter, >= 0.
    delta : float
        Target delta in (0, 1).
    method : {"cks20", "bun_steinke"}
        ``"bun_steinke"``: ``rho + 2 sqrt(rho log(1/delta))`` (seed 002 Lemma 3.7).
        ``"cks20"`` (default): the tighter conversion of Canonne, Kamath & Steinke (2020,
        Corollary 13), minimised over the Renyi order ``a > 1`` numerically; never larger
        than the other.

    Returns
    -------
    float
        epsilon.
    """
    owner = "zcdp_to_approx_dp"
    r = v.nonnegative(owner, "rho", rho)
    d = v.delta(owner, delta)
    v.choice(owner, "method", method, ("cks20", "bun_steinke"))
    simple = r + 2.0 * math.sqrt(r * math.log(1.0 / d))
    if method == "bun_steinke" or r == 0.0:
        return simple if r > 0 else 0.0
    lid = math.log(1.0 / d)
    # Search over log(a - 1); the objective is unimodal in a (CKS20 §2.3).
    res = minimize_scalar(
        lambda t: _cks_objective(1.0 + math.exp(t), r, lid),
        bounds=(-30.0, 30.0),
        method="bounded",
        options={"xatol": 1e-12, "maxiter": 1000},
    )
    best = float(res.fun)
    # a = 1 + sqrt(log(1/delta)/rho) is the optimum of the simpler bound; use it as a guard.
    guard = _cks_objective(1.0 + math.sqrt(lid / r), r, lid)
    return max(0.0, min(best, guard, simple))


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The delta of the (epsilon, delta)-DP guarantee implied by rho-zCDP (CKS20, Prop. 12).

    ``delta = inf_{a>1} exp((a-1)(a rho - epsilon)) / (a-1) * (1 - 1/a)**a``, capped at 1.
    """
    owner = "zcdp_delta"
    r = v.nonnegative(owner, "rho", rho)
    e = v.nonnegative(owner, "epsilon", epsilon)
    if r == 0.0:
        return 0.0

    def logdelta(t: float) -> float:
        a = 1.0 + math.exp(t)
        return (a - 1.0) * (a * r - e) - math.log(a - 1.0) + a * math.log1p(-1.0 / a)

    res = minimize_scalar(logdelta, bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-12})
    return float(min(1.0, math.exp(min(0.0, res.fun))))


@dataclass
class PrivacyBudget:
    """A privacy budget that refuses overspending.

    Give exactly one of ``epsilon`` (pure DP, sequential composition) or ``rho`` (zCDP).
    :meth:`spend` subtracts and returns what remains; a request larger than what remains
    raises :class:`~noiseaware.exceptions.PrivacyBudgetError` naming both figures and
    leaves the budget unchanged.

    Examples
    --------
    >>> b = PrivacyBudget(rho=0.5)
    >>> b.spend(0.2)
    0.3
    >>> b.spent
    0.2
    """

    epsilon: float | None = None
    rho: float | None = None
    spent: float = 0.0
    _log: list[tuple[str, float]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if (self.epsilon is None) == (self.rho is None):
            raise NoiseawareValueError(
                f"PrivacyBudget: give exactly one of epsilon or rho; got epsilon={self.epsilon!r}, rho={self.rho!r}."
            )
        if self.epsilon is not None:
            self.epsilon = v.positive("PrivacyBudget", "epsilon", self.epsilon)
        if self.rho is not None:
            self.rho = v.positive("PrivacyBudget", "rho", self.rho)

    @property
    def unit(self) -> str:
        """``"epsilon"`` or ``"rho"``."""
        return "epsilon" if self.epsilon is not None else "rho"

    @property
    def total(self) -> float:
        """The budget at creation."""
        return float(self.epsilon if self.epsilon is not None else self.rho)  # type: ignore[arg-type]

    @property
    def remaining(self) -> float:
        """What is left to spend."""
        return max(0.0, self.total - self.spent)

    def spend(self, amount: float, label: str = "") -> float:
        """Spend ``amount`` (in the budget's unit) and return what remains.

        A relative slack of 1e-12 absorbs floating-point rounding of splits such as
        ``total / k`` spent ``k`` times.
        """
        amt = v.positive("PrivacyBudget.spend", "amount", amount)
        if amt > self.remaining * (1.0 + 1e-12) + 1e-15:
            raise PrivacyBudgetError(amt, self.remaining, self.unit)
        self.spent = min(self.total, self.spent + amt)
        self._log.append((label, amt))
        return self.remaining

    @property
    def ledger(self) -> tuple[tuple[str, float], ...]:
        """The spends so far, as ``(label, amount)`` pairs."""
        return tuple(self._log)
