"""Range-preserving geometric mechanisms of Wang et al. (2026): TGM, BTGM (eq. 22) and RGM (Def. S.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from scipy import optimize, special

from .. import _validation as v
from .._core import _noise
from .._core._backend import get_backend
from .._validation import owned, owner_scope
from ..exceptions import NoiseawareValueError
from . import _opendp
from ._additive import _derived_scale, geometric_draw, geometric_scale_from_epsilon
from ._base import Mechanism, register

_NB = get_backend("numpy")

__all__ = [
    "BTGM",
    "RGM",
    "TGM",
    "BayesianTruncatedGeometricMechanism",
    "RenormalizedGeometricMechanism",
    "TruncatedGeometricMechanism",
    "btgm_posterior_mean",
    "rgm_epsilon_prime",
]


class _Bounded(Mechanism):
    lower: int
    upper: int
    sensitivity: int
    output_kind: ClassVar[str] = "integer"

    def _init_bounds(self) -> None:
        name = type(self).__name__
        with owner_scope(name):
            lo, hi = v.bounds(self.lower, self.upper, integral=True)
            for key, b in (("lower", lo), ("upper", hi)):
                if abs(b) > v.INT_BOUND:
                    v.refuse(key, f"must lie in [-2**62, 2**62] {v.INT_NOISE_RULE}", b)
            object.__setattr__(self, "lower", int(lo))
            object.__setattr__(self, "upper", int(hi))
            sens = v.integer("sensitivity", self.sensitivity, minimum=1, maximum=v.INT_BOUND)
            object.__setattr__(self, "sensitivity", sens)

    def _support(self) -> np.ndarray:
        return np.arange(self.lower, self.upper + 1, dtype=np.float64)

    def cdf(self, output: Any, value: Any) -> np.ndarray:
        """``P(output' <= output | value)`` by summing the exact law over the finite support."""
        y = np.asarray(output, dtype=np.float64)
        m = np.asarray(value, dtype=np.float64)
        sup = self._support()
        shape = np.broadcast(y, m).shape
        pm = np.exp(self.log_prob(sup, m.reshape(*m.shape, 1)))  # (..., support)
        cum = np.cumsum(pm, axis=-1)
        idx = np.searchsorted(sup, y, side="right") - 1
        picked = np.take_along_axis(
            np.broadcast_to(cum, (*shape, sup.size)), np.broadcast_to(np.clip(idx, 0, None), shape)[..., None], -1
        )[..., 0]
        return np.where(idx < 0, 0.0, np.minimum(picked, 1.0))

    def _check_value(self, value: Any) -> np.ndarray:
        arr = super()._check_value(value)
        if arr.size and (arr.min() < self.lower or arr.max() > self.upper):
            raise NoiseawareValueError(
                f"{type(self).__name__}: the true value must lie in [lower, upper] = "
                f"[{self.lower}, {self.upper}]; got values in [{arr.min()}, {arr.max()}]."
            )
        return arr


@register
@dataclass(frozen=True)
class TruncatedGeometricMechanism(_Bounded):
    r"""Truncated geometric mechanism (TGM; Ghosh et al. 2012; Wang et al. 2026, §4 and S.1).

    Output ``min(U, max(L, M + K))`` with ``K`` two-sided geometric, ``alpha = exp(-1/scale)``.
    Post-processing of the geometric mechanism, hence ``epsilon = sensitivity / scale``-DP. For
    ``L < s < U``, ``P(s | M) = (1-a)/(1+a) a^{|s-M|}``; the end points collect the tails,
    ``P(L | M) = P(K <= L - M)`` and ``P(U | M) = P(K >= U - M)``.

    Parameters
    ----------
    scale : float
        Geometric noise scale (> 0).
    sensitivity : int
        L1 sensitivity (>= 1).
    lower, upper : int
        Output range ``[L, U]`` within ``[-2**62, 2**62]``; the true value must lie in it.

    Raises
    ------
    ValueError
        If ``scale`` breaks the geometric mechanism's rule (at most about ``1.02e17``, so that
        the int64 noise drawn before clamping cannot saturate; a normal float64).

    Notes
    -----
    The end-point masses are computed in closed form in log space
    (:meth:`GeometricMechanism.noise_logcdf`), so every output in ``[L, U]`` has a finite, exact
    log-probability however deep in the tail (e.g. ``-60.31`` for ``U - M = 60`` at
    ``epsilon = 1``, where ``log(1 - cdf)`` gave ``-inf``).
    """

    scale: float
    lower: int
    upper: int
    sensitivity: int = 1

    family: ClassVar[str] = "tgm"

    def __post_init__(self) -> None:
        name = type(self).__name__
        self._init_bounds()
        # the secure release draws int64 geometric noise before clamping: same rule as the geometric
        with owner_scope(name):
            scale = v.noise_scale("scale", self.scale, v.MAX_GEOMETRIC_SCALE, v.INT_NOISE_RULE)
            v.implied_guarantee(
                {"sensitivity": self.sensitivity, "scale": scale},
                "epsilon",
                "sensitivity / scale",
                self.sensitivity / scale,
            )
            object.__setattr__(self, "scale", scale)

    @classmethod
    def from_epsilon(cls, epsilon: float, lower: int, upper: int, sensitivity: int = 1) -> Any:
        """The mechanism with ``alpha = exp(-epsilon / sensitivity)``.

        ``scale = sensitivity / epsilon`` must satisfy the geometric mechanism's rule (at most
        ``2**62 / (65 ln 2)``, about ``1.02e17``, a normal float64).
        """
        with owner_scope(cls.__name__):
            scale, sens = geometric_scale_from_epsilon(epsilon, sensitivity)
            return cls(scale=scale, lower=lower, upper=upper, sensitivity=sens)

    @property
    def alpha(self) -> float:
        """``exp(-1/scale)``."""
        return math.exp(-1.0 / self.scale)

    @property
    def epsilon(self) -> float:
        """``sensitivity / scale`` (post-processing of the geometric mechanism: the guarantee's epsilon)."""
        return _noise.epsilon_of_scale(self.sensitivity, self.scale)

    @property
    def log_alpha(self) -> float:
        """``-1/scale`` (the registry law's parameter; exact where ``alpha`` rounds to 1)."""
        return -1.0 / self.scale

    def _tgm_log_prob(self, s: np.ndarray, m: np.ndarray) -> np.ndarray:
        # the registry's law (NOISE_LAWS["tgm"]): end points collect the tails in closed form
        law = _noise.NOISE_LAWS["tgm"]
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(law.logpdf(_NB, s, m, *law.params_of(self)))

    def log_prob(self, output: Any, value: Any) -> np.ndarray:
        """Exact ``log P(output | value)``."""
        s = np.asarray(output, dtype=np.float64)
        m = np.asarray(value, dtype=np.float64)
        return self._tgm_log_prob(s, m)

    def _clamp(self, x: np.ndarray) -> np.ndarray:
        return np.clip(x, self.lower, self.upper)

    def _release_secure(self, value: np.ndarray) -> np.ndarray:
        return self._clamp(_opendp.discrete_laplace(value, self.scale))

    def _release_simulated(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        law = _noise.NOISE_LAWS[self.family]
        u = rng.random(law.uniform_shape(value.shape))
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.asarray(law.draw(_NB, u, value.astype(np.float64), *law.params_of(self)))  # type: ignore[misc]
        return out.astype(np.int64)


#: Relative tolerance with which :meth:`BTGM.log_prob` matches an output to a table entry.
_BTGM_MATCH_RTOL = 1e-9
#: Smallest relative gap between consecutive BTGM outputs (thousands of float64 ulps).
BTGM_MIN_GAP = 1e-12
#: Largest ``upper - lower`` of a BTGM: its ``W + 1`` outputs are tabulated in memory.
BTGM_MAX_WIDTH = 2**24


@owned("btgm_posterior_mean")
def btgm_posterior_mean(m: Any, alpha: float, lower: int, upper: int) -> np.ndarray:
    r"""Closed-form posterior mean of Wang et al. (2026) eq. (22).

    ``E(M | m)`` under a uniform prior on the integers ``L..U`` when ``m = M + K`` with ``K``
    two-sided geometric(``alpha``). With ``W = U - L`` and ``j = m - L``:

    * ``m < L``: ``L + a/(1-a) (1 - (W+1) a^W + W a^{W+1}) / (1 - a^{W+1})``
    * ``L <= m <= U``: ``L + (j(1-a^2) + a^{j+1} - (W+1) a^{W+1-j} + W a^{W+2-j})
      / ((1-a)(1 + a - a^{j+1} - a^{W+1-j}))``
    * ``m > U``: ``L + (W - (W+1) a + a^{W+1}) / ((1-a)(1 - a^{W+1}))``

    The first and last cases equal the middle one at ``m = L`` and ``m = U``. Eq. (22) cancels
    catastrophically as ``alpha -> 1``; it is evaluated in the equivalent form
    ``L + j + S / Z`` (:func:`_btgm_mean`) whose terms are all computed without cancellation.
    """
    a = v.open_unit("alpha", alpha)
    return _btgm_mean(m, math.log(a), lower, upper)


def _btgm_h(d: float) -> float:
    """``(d - 1 + e^{-d}) / d**2`` for ``0 < d <= 1`` by its Taylor series (error < 1e-19)."""
    return math.fsum((-d) ** (k - 2) / math.factorial(k) for k in range(2, 23))


def _btgm_mean(m: Any, log_alpha: float, lower: int, upper: int) -> np.ndarray:
    r"""``E(M | m)`` for ``alpha = exp(log_alpha)``, accurate for every ``log_alpha < 0``.

    With ``d = -log a``, ``j = clip(m - L, 0, W)``, ``n1 = j``, ``n2 = W - j``: the posterior puts
    weight ``a^{|i - j|}`` on ``L + i``, so ``E(M | m) = L + j + S / Z`` with
    ``Z = 1 + A(n1) + A(n2)``, ``A(n) = sum_{k=1}^n a^k = a (1 - a^n) / (1 - a)``, and
    ``S = B(n2) - B(n1)``, ``B(n) = sum_{k=1}^n k a^k = a c(n) / (1 - a)^2`` where
    ``c(n) = 1 - (n+1) a^n + n a^{n+1} = P(2, n d) + e^{-n d} n (d - 1 + e^{-d})``
    (``P`` the regularized lower incomplete gamma function). Both terms of ``c`` are >= 0, so
    nothing cancels; for ``d <= 1`` numerator and denominator are divided by ``d**2`` so that
    nothing underflows either.
    """
    m = np.asarray(m, dtype=np.float64)
    L, U = float(lower), float(upper)
    W = U - L
    if W == 0:
        return np.full(m.shape, L)
    d = -float(log_alpha)
    a = math.exp(-d)
    j = np.clip(m - L, 0.0, W)
    n1, n2 = j, W - j
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        if d <= 1.0:
            h = _btgm_h(d)
            kd = -math.expm1(-d) / d

            def k_of(x: np.ndarray) -> np.ndarray:  # (1 - e^{-x}) / x
                return np.where(x == 0, 1.0, -np.expm1(-x) / np.where(x == 0, 1.0, x))

            def big_c(n: np.ndarray) -> np.ndarray:  # c(n) / d**2
                x = n * d
                g = np.where(
                    x < 1e-8, 0.5 - x / 3.0 + x * x / 8.0, special.gammainc(2.0, x) / np.where(x == 0, 1.0, x * x)
                )
                return n * n * g + np.exp(-x) * n * h

            num = a * (big_c(n2) - big_c(n1))
            den = kd * kd + a * kd * (n1 * k_of(n1 * d) + n2 * k_of(n2 * d))
        else:
            e1 = -math.expm1(-d)
            log_phi = math.log(d - 1.0 + math.exp(-d))

            def small_c(n: np.ndarray) -> np.ndarray:
                x = n * d
                return special.gammainc(2.0, x) + np.exp(-x + np.log(n) + log_phi)

            num = a * (small_c(n2) - small_c(n1))
            den = e1 * e1 + a * e1 * (-np.expm1(-n1 * d) - np.expm1(-n2 * d))
        return L + j + num / den


@register
@dataclass(frozen=True)
class BayesianTruncatedGeometricMechanism(TruncatedGeometricMechanism):
    r"""Bayesian truncated geometric mechanism (BTGM; Wang et al. 2026, §4.2, eq. 22).

    Outputs the posterior mean ``E(M | m)`` of the true count under a uniform prior on
    ``L..U`` given the geometric-mechanism output ``m`` (:func:`btgm_posterior_mean`). It is a
    strictly increasing function of the TGM output, so its law is TGM's law carried over, and it
    is ``epsilon``-DP by post-processing. Outputs need not be integers. Eq. (22) is evaluated in
    a form without cancellation (:func:`_btgm_mean`); it agrees with an mpmath brute-force
    posterior mean to a few units of ``1e-16 * (U - L)`` for every ``epsilon`` (tested from
    ``1e-9`` to ``700``).

    Raises
    ------
    ValueError
        As :class:`TruncatedGeometricMechanism`; also if ``U - L > 2**24`` (the outputs are
        tabulated) or if consecutive outputs are not finite and more than ``1e-12`` (relative)
        apart -- at tiny ``epsilon`` all posterior means collapse onto ``(L + U) / 2`` and a
        release would no longer determine the TGM output its likelihood needs.
    """

    family: ClassVar[str] = "btgm"
    output_kind: ClassVar[str] = "integer"  # inputs are integers; outputs are reals

    def __post_init__(self) -> None:
        super().__post_init__()
        name = type(self).__name__
        width = self.upper - self.lower
        if width > BTGM_MAX_WIDTH:
            raise NoiseawareValueError(
                f"{name}: upper - lower must be <= {BTGM_MAX_WIDTH} (2**24; the W + 1 outputs are tabulated "
                f"in memory); got upper - lower={width}. Use TGM or RGM for wider ranges."
            )
        tab = self.table
        gaps = np.diff(tab)
        with owner_scope(name):
            if not (np.all(np.isfinite(tab)) and np.all(gaps > BTGM_MIN_GAP * np.maximum(1.0, np.abs(tab[1:])))):
                v.refuse(
                    "scale",
                    "must be small enough (epsilon = sensitivity / scale large enough) that the W + 1 posterior "
                    f"means, the outputs, are finite and increase by more than {BTGM_MIN_GAP:g} (relative) from one "
                    "to the next, so that a release determines the TGM output even where another machine's "
                    "math library rounds the last bits differently",
                    self.scale,
                    f"It gives epsilon={self.epsilon!r}.",
                )

    def _support(self) -> np.ndarray:
        return self.table

    @cached_property
    def table(self) -> np.ndarray:
        """BTGM output for each TGM output ``L..U``."""
        s = np.arange(self.lower, self.upper + 1, dtype=np.float64)
        step = 2**20
        return np.concatenate([self.posterior_mean(s[i : i + step]) for i in range(0, s.size, step)])

    def posterior_mean(self, m: Any) -> np.ndarray:
        """``E(M | m)`` by eq. (22) (:func:`btgm_posterior_mean`, with ``log alpha = -1/scale`` exact)."""
        return _btgm_mean(m, -1.0 / self.scale, self.lower, self.upper)

    def log_prob(self, output: Any, value: Any) -> np.ndarray:
        """``log P(output | value)``: find the TGM output mapping to ``output``, else ``-inf``."""
        y = np.asarray(output, dtype=np.float64)
        m = np.asarray(value, dtype=np.float64)
        tab = self.table
        idx = np.clip(np.searchsorted(tab, y), 0, tab.size - 1)
        # nearest of idx-1, idx
        idx0 = np.clip(idx - 1, 0, tab.size - 1)
        pick = np.where(np.abs(tab[idx0] - y) < np.abs(tab[idx] - y), idx0, idx)
        match = np.abs(tab[pick] - y) <= _BTGM_MATCH_RTOL * np.maximum(1.0, np.abs(y))
        s = self.lower + pick.astype(np.float64)
        return np.where(match, self._tgm_log_prob(s, m), -np.inf)

    def _release_secure(self, value: np.ndarray) -> np.ndarray:
        s = super()._release_secure(value)
        return self.table[(s - self.lower).astype(np.int64)]

    def _release_simulated(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        s = super()._release_simulated(value, rng)
        return self.table[(s - self.lower).astype(np.int64)]


#: Smallest accepted probability that RGM's exact rejection sampler accepts a proposal.
RGM_MIN_ACCEPTANCE = 1e-4


def _rgm_g(eps_p: float, sensitivity: int, width: int) -> float:
    """Log g(eps') of Wang et al. (2026) eq. (S.2), W = U - L = width.

    ``g = (1 + a - a^{d+1} - a^{W+1-d}) / (1 - a^{W+1}) = 1 + (1 - a^d) a (1 - a^{W-d}) / (1 - a^{W+1})``
    with ``a = exp(-eps'/sensitivity)``, ``d = min(sensitivity, ceil(W/2))``; the second form is
    evaluated with ``expm1``/``log1p``, so ``log g`` keeps its relative accuracy as ``eps' -> 0``
    (where ``log g ~ eps' d (W-d) / (sensitivity (W+1))``).
    """
    d = min(sensitivity, math.ceil(width / 2))
    la = -eps_p / sensitivity
    den = math.expm1((width + 1) * la)
    if den == 0.0:
        return 0.0
    ratio = math.expm1((width - d) * la) / den
    return math.log1p(-math.expm1(d * la) * math.exp(la) * ratio)


@owned("rgm_epsilon_prime")
def rgm_epsilon_prime(epsilon: float, sensitivity: int, lower: int, upper: int) -> float:
    """Solve ``eps' + log g(eps') = epsilon`` (Wang et al. 2026, eqs. S.1-S.2) by Brent's method.

    ``0 <= log g(x) <= x`` (``g - 1 <= 1 - a^d <= d x / sensitivity``), so the root lies in
    ``[epsilon / 4, epsilon]`` and is found to relative precision.
    """
    eps = v.positive("epsilon", epsilon)
    width = int(upper) - int(lower)
    if width <= 0:
        return eps

    def f(e: float) -> float:
        return e + _rgm_g(e, sensitivity, width) - eps

    if f(eps) <= 0.0:  # g(eps) = 1, e.g. a range of two values
        return eps
    xtol = max(eps * 2.0**-60, 5e-324)
    return float(optimize.brentq(f, eps / 4.0, eps, xtol=xtol, rtol=4 * np.finfo(float).eps, maxiter=500))


@register
@dataclass(frozen=True)
class RenormalizedGeometricMechanism(_Bounded):
    r"""Renormalized geometric mechanism (RGM; Wang et al. 2026, Definition S.1, Theorem S.2).

    ``P(s | M) = a'^{|s-M|} / sum_{l=L}^{U} a'^{|l-M|}`` on ``s = L..U`` with
    ``a' = exp(-eps'/sensitivity)`` and ``eps'`` solving ``eps' + log g(eps') = epsilon``
    (eqs. S.1-S.2). The solved ``epsilon_prime`` is stored; a record whose stored value
    disagrees with the solution is rejected. Secure release draws OpenDP's exact discrete
    Laplace noise with scale ``sensitivity / eps'`` and rejects draws outside ``[L, U]``,
    which samples the renormalized law exactly (the number of rejections depends on the true
    value; it is not exposed, but a timing observer could see it). With ``L == U`` the law is a
    point mass and nothing is drawn.

    Parameters
    ----------
    epsilon : float
        Target privacy budget.
    lower, upper : int
        Output range.
    sensitivity : int
        L1 sensitivity (>= 1).
    epsilon_prime : float, optional
        The solution of eq. (S.1); computed when omitted.

    Raises
    ------
    ValueError
        If ``sensitivity / epsilon_prime`` breaks the geometric mechanism's rule (at most about
        ``1.02e17``; a normal float64), or, for ``U > L``, if the rejection sampler would accept
        a proposal with probability below :data:`RGM_MIN_ACCEPTANCE` (``1e-4``) for some true
        value: ``(1 - a'**(W+1)) / (1 + a') < 1e-4``, ``W = U - L`` (e.g. ``epsilon = 1e-8``
        with ``W = 10``, where a release would take ~3e7 OpenDP draws).
    """

    epsilon: float
    lower: int
    upper: int
    sensitivity: int = 1
    epsilon_prime: float | None = None

    family: ClassVar[str] = "rgm"

    def __post_init__(self) -> None:
        name = type(self).__name__
        with owner_scope(name):
            eps = v.epsilon(self.epsilon, warn=False)
            self._init_bounds()
            sens = self.sensitivity
            # eps' <= eps: the geometric scale sensitivity / eps' is at least sensitivity / eps
            if not sens / eps <= v.MAX_GEOMETRIC_SCALE:
                v.refuse(
                    "epsilon",
                    f"must be >= sensitivity / {v.MAX_GEOMETRIC_SCALE:.6g} = {sens / v.MAX_GEOMETRIC_SCALE:.6g} "
                    f"(the noise scale sensitivity / epsilon_prime must be <= {v.MAX_GEOMETRIC_SCALE:.6g} "
                    f"{v.INT_NOISE_RULE})",
                    self.epsilon,
                )
            object.__setattr__(self, "epsilon", eps)
            solved = rgm_epsilon_prime(eps, sens, self.lower, self.upper)
            _derived_scale(
                "epsilon",
                self.epsilon,
                "scale = sensitivity / epsilon_prime",
                sens / solved,
                v.MAX_GEOMETRIC_SCALE,
                v.INT_NOISE_RULE,
            )
            width = self.upper - self.lower
            if width >= 1:
                la = -solved / sens
                acceptance = -math.expm1((width + 1) * la) / (1.0 + math.exp(la))
                if not acceptance >= RGM_MIN_ACCEPTANCE:
                    v.refuse(
                        "epsilon",
                        f"must be large enough that the exact rejection sampler accepts a proposal with probability "
                        f">= {RGM_MIN_ACCEPTANCE:g} for every true value, i.e. (1 - a'**(W+1)) / (1 + a') >= "
                        f"{RGM_MIN_ACCEPTANCE:g} with a' = exp(-epsilon_prime / sensitivity) and W = upper - lower",
                        self.epsilon,
                        f"It gives {acceptance:.3g} (W={width}, epsilon_prime={solved!r}).",
                    )
            if self.epsilon_prime is not None:
                given = v.positive("epsilon_prime", self.epsilon_prime)
                if not math.isclose(given, solved, rel_tol=1e-9):
                    v.refuse("epsilon_prime", f"must solve eq. (S.1), i.e. equal {solved!r}", given)
            object.__setattr__(self, "epsilon_prime", solved)

    @classmethod
    def from_epsilon(cls, epsilon: float, lower: int, upper: int, sensitivity: int = 1) -> Any:
        """Same as the constructor (for symmetry with TGM / BTGM)."""
        with owner_scope(cls.__name__):
            return cls(epsilon=v.epsilon(epsilon), lower=lower, upper=upper, sensitivity=sensitivity)

    @property
    def alpha_prime(self) -> float:
        """``exp(-epsilon_prime / sensitivity)``."""
        return math.exp(-float(self.epsilon_prime) / self.sensitivity)  # type: ignore[arg-type]

    @property
    def log_alpha_prime(self) -> float:
        """``-epsilon_prime / sensitivity`` (the registry law's parameter)."""
        return -float(self.epsilon_prime) / self.sensitivity  # type: ignore[arg-type]

    def log_normalizer(self, value: Any) -> np.ndarray:
        """``log sum_{l=L}^{U} a'^{|l - M|}`` for each true value ``M`` (any integer; the registry's law)."""
        m = np.asarray(value, dtype=np.float64)
        return np.asarray(_noise.rgm_log_normalizer(_NB, m, self.log_alpha_prime, self.lower, self.upper))

    def log_prob(self, output: Any, value: Any) -> np.ndarray:
        """Exact ``log P(output | value)`` (the registry's law, ``NOISE_LAWS["rgm"]``)."""
        s = np.asarray(output, dtype=np.float64)
        m = np.asarray(value, dtype=np.float64)
        law = _noise.NOISE_LAWS["rgm"]
        return np.asarray(law.logpdf(_NB, s, m, *law.params_of(self)))

    def _reject(self, value: np.ndarray, draw: Any) -> np.ndarray:
        if self.lower == self.upper:  # the law is a point mass: nothing to draw
            return np.full(value.shape, self.lower, dtype=np.int64)
        out = np.empty(value.size, dtype=np.int64)
        todo = np.arange(value.size)
        flat = value.ravel()
        while todo.size:
            y = np.asarray(draw(flat[todo]), dtype=np.int64)
            ok = (y >= self.lower) & (y <= self.upper)
            out[todo[ok]] = y[ok]
            todo = todo[~ok]
        return out.reshape(value.shape)

    def _release_secure(self, value: np.ndarray) -> np.ndarray:
        scale = self.sensitivity / float(self.epsilon_prime)  # type: ignore[arg-type]
        return self._reject(value, lambda x: _opendp.discrete_laplace(x, scale))

    def _release_simulated(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        la = -float(self.epsilon_prime) / self.sensitivity  # type: ignore[arg-type]

        def draw(x: np.ndarray) -> np.ndarray:
            u = rng.random((2, x.size))
            return x + geometric_draw(u[0], u[1], la)

        return self._reject(value, draw)


TGM = TruncatedGeometricMechanism
BTGM = BayesianTruncatedGeometricMechanism
RGM = RenormalizedGeometricMechanism
