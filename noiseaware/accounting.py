"""Privacy accounting: composition, conversions and a budget that refuses overspending.

Pure epsilon-DP composes additively under sequential composition and by the maximum under
parallel composition (disjoint inputs) [Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for
Gaussian Copula Correlations*, Prop. 2.4]. rho-zCDP composes additively
[Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via Gaussian Graphical
Models*, Prop. 3.6]. Conversions:

* epsilon-DP implies rho = epsilon**2 / 2 zCDP (Bun & Steinke 2016, Prop. 1.4).
* rho-zCDP implies (rho + 2 sqrt(rho log(1/delta)), delta)-DP [Ferrando et al. (2026), Lemma 3.7].
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
import numbers
import sys
from collections.abc import Iterable
from decimal import Decimal
from fractions import Fraction
from typing import Any, TypeAlias

import numpy as np
from scipy.optimize import minimize_scalar

from . import _validation as v
from ._validation import owned
from .exceptions import NoiseawareTypeError, NoiseawareValueError, PrivacyBudgetError
from .mechanisms import Guarantee

__all__ = [
    "PrivacyBudget",
    "epsilon_to_rho",
    "parallel",
    "sequential",
    "zcdp_delta",
    "zcdp_sequential",
    "zcdp_to_approx_dp",
]

#: What :class:`PrivacyBudget` accepts as an amount: floats (exact binary value, with a rounding
#: allowance), and exact ints, Fractions, Decimals and decimal or ratio strings.
Amount: TypeAlias = float | int | Fraction | Decimal | str | np.floating | np.integer


def _values(name: str, values: Iterable[float], check=v.nonnegative) -> list[float]:
    out = [check(f"{name}[{i}]", x) for i, x in enumerate(values)]
    if not out:
        v.refuse(name, "must hold at least one value", [])
    return out


@owned("sequential")
def sequential(epsilons: Iterable[float]) -> float:
    """Sequential composition of pure epsilon-DP mechanisms: ``sum(epsilons)``.

    Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula Correlations*,
    Proposition 2.4.

    Raises
    ------
    ValueError
        If a value is negative, NaN or infinite, or the list is empty.
    """
    return math.fsum(_values("epsilons", epsilons))


@owned("parallel")
def parallel(epsilons: Iterable[float]) -> float:
    """Parallel composition on disjoint parts of the data: ``max(epsilons)``."""
    return max(_values("epsilons", epsilons))


@owned("zcdp_sequential")
def zcdp_sequential(rhos: Iterable[float]) -> float:
    """Adaptive composition of rho-zCDP mechanisms: ``sum(rhos)`` [Ferrando et al. (2026), Prop. 3.6]."""
    return math.fsum(_values("rhos", rhos))


@owned("epsilon_to_rho")
def epsilon_to_rho(epsilon: float) -> float:
    """epsilon-DP implies (epsilon**2 / 2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    eps = v.nonnegative("epsilon", epsilon)
    return eps * eps / 2.0


def _cks_objective(a: float, rho: float, log_inv_delta: float) -> float:
    return a * rho + (log_inv_delta + (a - 1.0) * math.log1p(-1.0 / a) - math.log(a)) / (a - 1.0)


@owned("zcdp_to_approx_dp")
def zcdp_to_approx_dp(rho: float, delta: float, method: str = "cks20") -> float:
    """The epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP.

    Parameters
    ----------
    rho : float
        zCDP parameter, >= 0.
    delta : float
        Target delta in (0, 1).
    method : {"cks20", "bun_steinke"}
        ``"bun_steinke"``: ``rho + 2 sqrt(rho log(1/delta))`` (Ferrando, Fuentes, Mullins, Musco & Sheldon (2026),
        *Private Adaptive Covariance Estimation via Gaussian Graphical Models*, Lemma 3.7).
        ``"cks20"`` (default): the tighter conversion of Canonne, Kamath & Steinke (2020,
        Corollary 13), minimised over the Renyi order ``a > 1`` numerically; never larger
        than the other.

    Returns
    -------
    float
        epsilon.
    """
    r = v.nonnegative("rho", rho)
    d = v.delta(delta)
    v.choice("method", method, ("cks20", "bun_steinke"))
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


@owned("zcdp_delta")
def zcdp_delta(rho: float, epsilon: float) -> float:
    """The delta of the (epsilon, delta)-DP guarantee implied by rho-zCDP (CKS20, Prop. 12).

    ``delta = inf_{a>1} exp((a-1)(a rho - epsilon)) / (a-1) * (1 - 1/a)**a``, capped at 1.
    """
    r = v.nonnegative("rho", rho)
    e = v.nonnegative("epsilon", epsilon)
    if r == 0.0:
        return 0.0

    def logdelta(t: float) -> float:
        a = 1.0 + math.exp(t)
        return (a - 1.0) * (a * r - e) - math.log(a - 1.0) + a * math.log1p(-1.0 / a)

    res = minimize_scalar(logdelta, bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-12})
    return float(min(1.0, math.exp(min(0.0, res.fun))))


def _exact(name: str, value: Any, rule: str) -> tuple[Fraction, Fraction]:
    """``value`` as an exact rational, with the rounding allowance of a binary float.

    Returns ``(x, u)``: ``x`` is the exact value of ``value``; ``u`` is ``ulp(x)`` in the
    input's own floating-point format when ``value`` is a normal binary float, else 0.
    Non-finite values fail with ``rule``; other types raise a type error.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_):
        raise NoiseawareTypeError(v.message(name, _TYPE_RULE, value))
    if isinstance(value, float | np.floating):
        if not np.isfinite(value):
            v.refuse(name, rule, value)
        if isinstance(value, float):  # float64, including np.float64
            x, ulp = Fraction(value), Fraction(math.ulp(value))
            normal = abs(value) >= sys.float_info.min
        else:  # other NumPy floats: their own precision
            n, d = value.as_integer_ratio()
            x = Fraction(int(n), int(d))
            n, d = np.spacing(abs(value)).as_integer_ratio()
            ulp = Fraction(int(n), int(d))
            normal = bool(abs(value) >= np.finfo(value.dtype).tiny)
        return x, (ulp if normal else Fraction(0))
    if isinstance(value, numbers.Integral | np.integer):
        return Fraction(int(value)), Fraction(0)
    if isinstance(value, numbers.Rational):  # Fraction and friends
        return Fraction(int(value.numerator), int(value.denominator)), Fraction(0)
    if isinstance(value, Decimal):
        if not value.is_finite():
            v.refuse(name, rule, value)
        return Fraction(value), Fraction(0)
    if isinstance(value, str):
        try:
            return Fraction(value), Fraction(0)
        except (ValueError, ZeroDivisionError):
            v.refuse(name, rule + " (as a decimal or ratio string such as '0.1' or '1/3')", value)
    raise NoiseawareTypeError(v.message(name, _TYPE_RULE, value))


_TYPE_RULE = "must be a real number (float, int, Fraction, Decimal, or a string such as '0.1' or '1/3')"


def _plain(x: Fraction) -> float | str:
    """``x`` for messages: a float when exact, else ``'p/q'`` when short, else the nearest float."""
    f = float(x)
    return str(x) if Fraction(f) != x and len(str(x)) <= 21 else f


class PrivacyBudget:
    r"""A privacy budget that refuses overspending, kept in exact rational arithmetic.

    Give exactly one of ``epsilon`` (pure DP, sequential composition [Wang, Feldman & Reiter (2026), *Differentially
    Private Bayesian Inference for Gaussian Copula Correlations*, Prop. 2.4])
    or ``rho`` (zCDP, additive composition [Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive
    Covariance Estimation via Gaussian Graphical Models*, Prop. 3.6]). :meth:`spend` charges an
    amount in the budget's unit and :meth:`charge` a :class:`~noiseaware.mechanisms.Guarantee`;
    both return what remains, and a request that would overspend raises
    :class:`~noiseaware.exceptions.PrivacyBudgetError` naming the requested and the remaining
    budget and leaves the budget unchanged. :meth:`check` asks the same question without
    spending; :meth:`split` gives an exact share of what remains.

    Parameters
    ----------
    epsilon, rho : float, int, Fraction, Decimal or str, optional
        The total budget, > 0. Exactly one must be given. Strings are read exactly
        (``"0.1"`` is one tenth, ``"1/3"`` one third); a float is read as its exact binary value.
    spent : float, int, Fraction, Decimal or str, default 0
        Budget already used elsewhere, in ``[0, total]``; read exactly, with no allowance.

    Attributes
    ----------
    total, spent, remaining : float
        Float views of :attr:`total_exact`, :attr:`spent_exact`, :attr:`remaining_exact`.
    ledger : tuple of (str, float)
        The accepted spends; :attr:`ledger_exact` has the exact amounts.

    Raises
    ------
    NoiseawareValueError
        If both or neither of ``epsilon``/``rho`` are given, the total is not a finite number
        > 0, or ``spent`` is NaN, infinite, negative or larger than the total.
    NoiseawareTypeError
        If an amount is not a real number or a string.

    Notes
    -----
    **Exactness.** The total, every amount and their sums are :class:`fractions.Fraction`\ s; no
    sum is ever rounded. An ``int``, ``Fraction``, ``Decimal`` or string amount is exact. A binary
    float ``x`` (Python ``float`` or NumPy floating) is taken at its exact value ``Fraction(x)``.

    **The one tolerance: the rounding of float amounts.** A float amount usually stands for a
    real number the caller meant (``total / k`` for a ``k``-way split) and differs from it by the
    rounding of one or two floating-point operations. Each float amount ``x`` therefore carries
    an allowance ``u(x)``: one unit in the last place of ``x`` in its own format (``math.ulp(x)``
    for float64, ``numpy.spacing`` for other NumPy floats) when ``x`` is a normal number, and
    0 when ``x`` is subnormal; exact amounts carry none. With ``a_1, ..., a_n`` the amounts
    accepted so far and ``u_1, ..., u_n`` their allowances, a request ``a`` with allowance ``u``
    is accepted if and only if, computed exactly,

    .. math:: a_1 + \dots + a_n + a \le \mathrm{total} + u_1 + \dots + u_n + u,

    that is, if the amounts are consistent with intended amounts, each within its allowance of
    the float given, that do not exceed the total. Consequences:

    * ``k`` spends of the float ``total / k`` always succeed (each is within half an ulp of
      ``total / k``), for every ``k``; so do float pieces that each round an exact partition.
    * The allowance grows only with spends actually made and is relative to their size:
      ``u(x) <= 2**-52 * x`` for float64, so the exact sum of accepted amounts never exceeds
      ``total / (1 - 2**-52)`` (a relative overspend below 2.3e-16), however many requests
      follow. Once an exact total is reached, a request of 1e-15 against a total of 1 is
      refused (its allowance is 2e-31). Float32 amounts get the float32 ulp (``2**-23``).
    * A pure guarantee charged to a rho budget costs ``epsilon**2 / 2`` exactly, with the
      allowance ``epsilon * u + u**2 / 2`` (``u = u(epsilon)``): the largest change of
      ``epsilon**2 / 2`` over the rounding of ``epsilon``, below ``2**-50`` of the cost.

    :attr:`spent_exact` is the exact sum of the accepted amounts, so it can exceed the total by
    at most the accumulated allowance (:attr:`slack`); :attr:`remaining_exact` is
    ``max(0, total - spent)``.

    Examples
    --------
    >>> b = PrivacyBudget(rho=0.5)
    >>> b.spend(0.2)
    0.3
    >>> b.spent
    0.2

    Floats from a split are never refused for rounding; nothing beyond the total is accepted:

    >>> b = PrivacyBudget(epsilon=1.0)
    >>> for _ in range(1225):
    ...     _ = b.spend(1.0 / 1225)
    >>> b.remaining
    0.0
    >>> b.spend(1e-15)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.PrivacyBudgetError: PrivacyBudget: requested epsilon=1e-15 exceeds ...

    Exact amounts and exact shares:

    >>> b = PrivacyBudget(epsilon="0.3")
    >>> b.spend("0.1", "margins")
    0.2
    >>> share = b.split(3)
    >>> share
    Fraction(1, 15)
    >>> for _ in range(3):
    ...     _ = b.spend(share, "pairs")
    >>> b.remaining_exact
    Fraction(0, 1)

    Charging mechanisms' guarantees (a pure one converts to zCDP as ``epsilon**2 / 2``):

    >>> from noiseaware.mechanisms import Guarantee
    >>> z = PrivacyBudget(rho=1.0)
    >>> z.charge(Guarantee(rho=0.5), "counts")
    0.5
    >>> z.charge(Guarantee(epsilon=0.5), "median")
    0.375
    >>> z.check(Guarantee(epsilon=1.0))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.PrivacyBudgetError: PrivacyBudget: requested rho=0.5 exceeds the remaining rho=0.375; ...
    """

    @owned("PrivacyBudget")
    def __init__(self, epsilon: Amount | None = None, rho: Amount | None = None, spent: Amount = 0.0) -> None:
        owner = "PrivacyBudget"
        if (epsilon is None) == (rho is None):
            raise NoiseawareValueError(
                f"{owner}: give exactly one of epsilon or rho; got epsilon={epsilon!r}, rho={rho!r}."
            )
        self._unit = "epsilon" if epsilon is not None else "rho"
        given = epsilon if epsilon is not None else rho
        total, _ = _exact(self._unit, given, "must be a finite number > 0")
        if total <= 0:
            v.refuse(self._unit, "must be a finite number > 0", given)
        used, _ = _exact("spent", spent, "must be finite and >= 0")
        if used < 0:
            v.refuse("spent", "must be >= 0", spent)
        if used > total:
            v.refuse("spent", f"must be <= the total {self._unit}={_plain(total)!r}", spent)
        self._total = total
        self._spent = used
        self._slack = Fraction(0)
        self._log: list[tuple[str, Fraction]] = []

    def __repr__(self) -> str:
        return (
            f"PrivacyBudget({self._unit}={_plain(self._total)!r}, spent={_plain(self._spent)!r}, "
            f"remaining={_plain(self.remaining_exact)!r})"
        )

    # -- views -----------------------------------------------------------------------------
    @property
    def unit(self) -> str:
        """``"epsilon"`` or ``"rho"``."""
        return self._unit

    @property
    def epsilon(self) -> float | None:
        """The total as a float for an epsilon budget, else None."""
        return float(self._total) if self._unit == "epsilon" else None

    @property
    def rho(self) -> float | None:
        """The total as a float for a rho budget, else None."""
        return float(self._total) if self._unit == "rho" else None

    @property
    def total(self) -> float:
        """The budget at creation, as a float."""
        return float(self._total)

    @property
    def total_exact(self) -> Fraction:
        """The budget at creation, exactly."""
        return self._total

    @property
    def spent(self) -> float:
        """What has been spent, as a float (rounded from :attr:`spent_exact`)."""
        return float(self._spent)

    @property
    def spent_exact(self) -> Fraction:
        """The exact sum of the initial ``spent`` and every accepted amount."""
        return self._spent

    @property
    def remaining(self) -> float:
        """What is left to spend, as a float (rounded from :attr:`remaining_exact`)."""
        return float(self.remaining_exact)

    @property
    def remaining_exact(self) -> Fraction:
        """``max(0, total - spent)``, exactly."""
        return max(Fraction(0), self._total - self._spent)

    @property
    def slack(self) -> Fraction:
        """The accumulated rounding allowance of the accepted float amounts (see Notes)."""
        return self._slack

    @property
    def ledger(self) -> tuple[tuple[str, float], ...]:
        """The accepted spends, as ``(label, amount)`` pairs with float amounts."""
        return tuple((label, float(a)) for label, a in self._log)

    @property
    def ledger_exact(self) -> tuple[tuple[str, Fraction], ...]:
        """The accepted spends, as ``(label, amount)`` pairs with exact amounts."""
        return tuple(self._log)

    # -- operations ------------------------------------------------------------------------
    @owned("PrivacyBudget.split")
    def split(self, k: int) -> Fraction:
        """An exact ``1/k`` share of the budget *remaining now*: ``remaining_exact / k``.

        Spending the share ``k`` times uses up exactly what remained.

        Parameters
        ----------
        k : int
            Number of equal parts, >= 1.

        Returns
        -------
        Fraction
            The share, to pass to :meth:`spend` as is (or as ``float(share)``).

        Raises
        ------
        NoiseawareValueError, NoiseawareTypeError
            If ``k`` is not an integer >= 1.
        """
        parts = v.integer("k", k, minimum=1)
        return self.remaining_exact / parts

    @owned("PrivacyBudget.spend")
    def spend(self, amount: Amount, label: str = "") -> float:
        """Spend ``amount`` (in the budget's unit) and return what remains, as a float.

        The request is accepted by the rule in the class Notes (exact sums; float amounts
        carry their own rounding allowance of one ulp).

        Parameters
        ----------
        amount : float, int, Fraction, Decimal or str
            The budget to spend, > 0.
        label : str
            A name for the ledger.

        Raises
        ------
        PrivacyBudgetError
            If the request would overspend; the budget is left unchanged.
        NoiseawareValueError, NoiseawareTypeError
            If ``amount`` is not a finite number > 0 or ``label`` is not a string.
        """
        amt, allowance = _exact("amount", amount, "must be a finite number > 0")
        if amt <= 0:
            v.refuse("amount", "must be a finite number > 0", amount)
        self._record(amt, allowance, _label(label))
        return self.remaining

    @owned("PrivacyBudget.check")
    def check(self, guarantee: Guarantee) -> None:
        """Raise if charging ``guarantee`` would overspend; spend nothing.

        An epsilon budget accepts pure guarantees (``epsilon`` given, ``delta == 0``) at cost
        ``epsilon``. A rho budget accepts a zCDP guarantee at cost ``rho``, or a pure one at
        cost ``epsilon**2 / 2`` (Bun & Steinke 2016, Prop. 1.4).

        Parameters
        ----------
        guarantee : Guarantee
            The guarantee of the release about to be made.

        Raises
        ------
        PrivacyBudgetError
            If the cost exceeds what remains (by the rule in the class Notes).
        NoiseawareValueError
            If the guarantee's kind cannot be charged to this budget (zCDP or approximate DP
            against an epsilon budget; approximate DP without rho against a rho budget).
        NoiseawareTypeError
            If ``guarantee`` is not a :class:`~noiseaware.mechanisms.Guarantee`.
        """
        cost, allowance = self._cost(guarantee)
        self._admit(cost, allowance)

    @owned("PrivacyBudget.charge")
    def charge(self, guarantee: Guarantee, label: str = "") -> float:
        """:meth:`check` ``guarantee``, then spend its cost; return what remains, as a float.

        Parameters
        ----------
        guarantee : Guarantee
            The guarantee of the release being made.
        label : str
            A name for the ledger.

        Raises
        ------
        PrivacyBudgetError, NoiseawareValueError, NoiseawareTypeError
            As :meth:`check`; the budget is left unchanged.
        """
        cost, allowance = self._cost(guarantee)
        self._record(cost, allowance, _label(label))
        return self.remaining

    # -- internals -------------------------------------------------------------------------
    def _cost(self, guarantee: Guarantee) -> tuple[Fraction, Fraction]:
        if not isinstance(guarantee, Guarantee):
            raise NoiseawareTypeError(v.message("guarantee", "must be a Guarantee", guarantee))
        pure = guarantee.epsilon is not None and guarantee.delta == 0.0
        if self._unit == "epsilon":
            if not pure:
                v.refuse(
                    "guarantee",
                    "must be pure epsilon-DP (epsilon given, delta == 0) to be charged to an epsilon budget",
                    guarantee,
                    "Charge zCDP guarantees to a PrivacyBudget(rho=...).",
                )
            return _exact("guarantee.epsilon", guarantee.epsilon, "must be finite")
        if guarantee.rho is not None:
            return _exact("guarantee.rho", guarantee.rho, "must be finite")
        if not pure:
            v.refuse(
                "guarantee",
                "must give rho or be pure epsilon-DP to be charged to a rho budget",
                guarantee,
                "An (epsilon, delta) guarantee implies no rho-zCDP bound.",
            )
        eps, u = _exact("guarantee.epsilon", guarantee.epsilon, "must be finite")
        return eps * eps / 2, eps * u + u * u / 2

    def _admit(self, amount: Fraction, allowance: Fraction) -> None:
        if self._spent + amount > self._total + self._slack + allowance:
            raise PrivacyBudgetError(float(amount), float(self.remaining_exact), self._unit)

    def _record(self, amount: Fraction, allowance: Fraction, label: str) -> None:
        self._admit(amount, allowance)
        self._spent += amount
        self._slack += allowance
        self._log.append((label, amount))


def _label(label: str) -> str:
    if not isinstance(label, str):
        raise NoiseawareTypeError(v.message("label", "must be a string", label))
    return label
