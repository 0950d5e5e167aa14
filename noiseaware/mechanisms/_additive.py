"""Additive noise mechanisms: geometric (discrete Laplace), Laplace, Gaussian, discrete Gaussian."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
from scipy import special

from .. import _validation as v
from .._core import _noise
from .._core._backend import get_backend
from .._validation import owned, owner_scope
from ..exceptions import NoiseawareValueError
from . import _opendp
from ._base import Mechanism, register, round_noise_up

__all__ = [
    "DiscreteGaussianMechanism",
    "GaussianMechanism",
    "GeometricMechanism",
    "LaplaceMechanism",
    "discrete_gaussian_log_normalizer",
]


_NB = get_backend("numpy")
#: The noise laws (one registry, :data:`noiseaware._core._noise.NOISE_LAWS`): every density here is read from it.
_LAWS = _noise.NOISE_LAWS


class _Additive(Mechanism):
    """output = value + noise, noise independent of value; integer or real as the family's noise law."""

    additive: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.output_kind = "integer" if _LAWS[cls.family].integer else "real"

    def noise_logpmf(self, k: Any) -> np.ndarray:
        """``log P(noise = k)`` (a log-density for the continuous laws) from the registry's law of ``family``.

        ``-inf`` off the support (non-integers for the integer laws); the law's parameters are read
        off the mechanism (``log_alpha``, ``scale`` or ``sigma``).
        """
        law = _LAWS[self.family]
        with np.errstate(over="ignore"):
            return np.asarray(law.logpdf(_NB, np.asarray(k, dtype=np.float64), 0.0, *law.params_of(self)))

    def log_prob(self, output: Any, value: Any) -> np.ndarray:
        """``log P(output | value) = noise log-density at output - value``."""
        out = np.asarray(output, dtype=np.float64)
        val = np.asarray(value, dtype=np.float64)
        return self.noise_logpmf(out - val)


def _derived_scale(
    name: str,
    value: float,
    scale_name: str,
    scale: float,
    maximum: float,
    rule: str,
    *,
    minimum: float = v.TINY,
    why_min: str = "the smallest normal float64",
) -> None:
    """For ``from_epsilon`` / ``from_rho``: check the derived noise scale, naming the caller's parameter."""
    if not scale <= maximum:
        v.refuse(
            name,
            f"must be large enough that {scale_name} <= {maximum:.6g} {rule}",
            value,
            f"It gives {scale_name.split(' =')[0]}={scale!r}.",
        )
    if not scale >= minimum:
        v.refuse(
            name,
            f"must be small enough that {scale_name} >= {minimum!r} ({why_min})",
            value,
            f"It gives {scale_name.split(' =')[0]}={scale!r}.",
        )


#: ``sensitivity**2 / (2 sigma**2)`` without OverflowError (the registry's formula of the guarantee).
_rho = _noise.rho_of_sigma


def _check_scale(mech: Any, sens: float, maximum: float, rule: str) -> None:
    """Check ``mech.scale`` and the epsilon ``sensitivity / scale`` it implies; store both (``sens`` checked)."""
    name = type(mech).__name__
    with owner_scope(name):
        scale = v.noise_scale("scale", mech.scale, maximum, rule)
        v.implied_guarantee({"sensitivity": sens, "scale": scale}, "epsilon", "sensitivity / scale", sens / scale)
        object.__setattr__(mech, "scale", scale)
        object.__setattr__(mech, "sensitivity", sens)


def geometric_draw(u1: np.ndarray, u2: np.ndarray, log_alpha: float) -> np.ndarray:
    """Two-sided geometric noise from two uniforms (the registry's transform), as int64."""
    return np.asarray(_noise.geometric_from_uniforms_la(_NB, u1, u2, log_alpha)).astype(np.int64)


def geometric_scale_from_epsilon(epsilon: Any, sensitivity: Any) -> tuple[float, int]:
    """``(scale, sensitivity)`` with ``scale = sensitivity / epsilon``, checked against the geometric rule.

    The scale is rounded up (one float at a time) so that the
    recomputed ``sensitivity / scale`` never exceeds ``epsilon``.

    Shared by every mechanism built on two-sided geometric noise (geometric, TGM, BTGM): the scale
    must be a normal float64 at most ``2**62 / (65 ln 2)``, and the
    error names ``epsilon``, the argument the caller gave.
    """
    eps = v.epsilon(epsilon)
    sens = v.integer("sensitivity", sensitivity, minimum=1, maximum=v.INT_BOUND)
    scale = round_noise_up("epsilon", eps, sens / eps, math.inf, lambda b: sens / b)
    _derived_scale(
        "epsilon", epsilon, "scale = sensitivity / epsilon", scale, v.MAX_GEOMETRIC_SCALE, v.INT_NOISE_RULE
    )
    return scale, sens


@register
@dataclass(frozen=True)
class GeometricMechanism(_Additive):
    r"""Two-sided geometric (discrete Laplace) mechanism.

    Adds integer noise with

    .. math:: P(K = k) = \frac{1-\alpha}{1+\alpha}\,\alpha^{|k|},\qquad
              \alpha = e^{-1/\text{scale}} = e^{-\epsilon/\Delta},\quad k\in\mathbb{Z},

    Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula Correlations*,
    Definition 2.3 / eq. (3) and Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional
    Data*, §2.1. It is ``epsilon = sensitivity / scale`` DP for integer
    queries of L1 sensitivity ``sensitivity``. Secure release uses OpenDP's exact discrete
    Laplace sampler.

    Parameters
    ----------
    scale : float
        Noise scale (> 0); ``alpha = exp(-1/scale)``.
    sensitivity : int
        L1 sensitivity of the (integer) query, in ``[1, 2**62]``.

    Raises
    ------
    ValueError
        If ``scale > 2**62 / (65 ln 2)`` (about ``1.02e17``):
        then ``P(|noise| >= 2**62)`` could exceed ``2**-64`` and the int64 output could saturate.
        Also if ``scale`` is not a normal float64 or ``epsilon = sensitivity / scale`` is not a
        finite float > 0. ``release`` refuses true values with ``|value| > 2**62``.

    Examples
    --------
    >>> m = GeometricMechanism.from_epsilon(1.0)
    >>> round(m.alpha, 6)
    0.367879
    >>> float(np.exp(m.noise_logpmf(0)))  # (1 - a) / (1 + a)
    0.46211715726000974
    """

    scale: float
    sensitivity: int = 1

    family: ClassVar[str] = "geometric"

    def __post_init__(self) -> None:
        with owner_scope(type(self).__name__):
            sens = v.integer("sensitivity", self.sensitivity, minimum=1, maximum=v.INT_BOUND)
            _check_scale(self, sens, v.MAX_GEOMETRIC_SCALE, v.INT_NOISE_RULE)

    @classmethod
    def from_epsilon(cls, epsilon: float, sensitivity: int = 1) -> GeometricMechanism:
        """The mechanism with ``alpha = exp(-epsilon / sensitivity)``.

        Raises ``ValueError`` when ``scale = sensitivity / epsilon`` exceeds
        ``2**62 / (65 ln 2)`` (about ``1.02e17``, so that the int64
        output cannot saturate: ``P(|noise| >= 2**62) < 2**-64``) or is not a normal float64.
        """
        with owner_scope(cls.__name__):
            scale, sens = geometric_scale_from_epsilon(epsilon, sensitivity)
            return cls(scale=scale, sensitivity=sens)

    @classmethod
    def from_alpha(cls, alpha: float, sensitivity: int = 1) -> GeometricMechanism:
        """The mechanism with the given ``alpha`` in (0, 1)."""
        with owner_scope(cls.__name__):
            a = v.open_unit("alpha", alpha)
            return cls(scale=-1.0 / math.log(a), sensitivity=sensitivity)

    @property
    def alpha(self) -> float:
        r"""``exp(-1/scale)``: the noise law per unit of the integer output, :math:`P(D=k)\propto\alpha^{|k|}`.

        This is the ``alpha`` the likelihoods take (``TwoSidedGeometric``, ``NoisyHypergeom``,
        ``NoisyTwoWayTable``, ``CompositeCopulaLikelihood``, ``Noisy``), whatever the
        sensitivity: ``scale = sensitivity / epsilon`` so ``alpha = exp(-epsilon / sensitivity)``
        (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula Correlations*,
        eq. 3). For a ``median_pairs`` release it is per pair:
        ``alpha = exp(-metadata["epsilon_per_pair"])``, not ``exp(-epsilon)`` of the total.

        Examples
        --------
        >>> from noiseaware.mechanisms import GeometricMechanism
        >>> round(GeometricMechanism.from_epsilon(0.5).alpha, 6)
        0.606531
        """
        return math.exp(-1.0 / self.scale)

    @property
    def log_alpha(self) -> float:
        """``-1/scale``."""
        return -1.0 / self.scale

    @property
    def epsilon(self) -> float:
        """``sensitivity / scale`` (the guarantee's epsilon)."""
        return _noise.epsilon_of_scale(self.sensitivity, self.scale)

    def noise_cdf(self, k: Any) -> np.ndarray:
        """``P(K <= k)``: ``a^{-floor(k)}/(1+a)`` below 0, ``1 - a^{floor(k)+1}/(1+a)`` otherwise."""
        k = np.floor(np.asarray(k, dtype=np.float64))
        a = self.alpha
        with np.errstate(over="ignore", invalid="ignore"):
            neg = np.exp(np.abs(k) * self.log_alpha) / (1.0 + a)
            pos = 1.0 - np.exp((k + 1.0) * self.log_alpha) / (1.0 + a)
        return np.where(k < 0, neg, pos)

    def noise_logcdf(self, k: Any) -> np.ndarray:
        r"""``log P(K <= k)`` in closed form, finite for every finite ``k``.

        With ``d = floor(k)`` and ``log a = -1/scale``: ``|d| log a - log(1 + a)`` for ``d <= 0``
        and ``log1p(-a^{d+1} / (1 + a))`` for ``d >= 0``. There is no ``1 - cdf`` cancellation, so
        deep tails keep their exact value (e.g. ``-60.31`` rather than ``-inf``).

        Examples
        --------
        >>> g = GeometricMechanism(scale=1.0)
        >>> float(g.noise_logcdf(-60))  # -60 - log(1 + e**-1)
        -60.31326168751822
        """
        k = np.asarray(k, dtype=np.float64)
        law = _LAWS["geometric"].logcdf
        assert law is not None  # the geometric law has a closed-form CDF (not user input)
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.asarray(law(_NB, k, 0.0, self.log_alpha))
        return np.where(np.isnan(k), np.nan, out)

    def _release_secure(self, value: np.ndarray) -> np.ndarray:
        return _opendp.discrete_laplace(value, self.scale)

    def _release_simulated(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        u = rng.random((2, *value.shape))
        return value + geometric_draw(u[0], u[1], self.log_alpha)


@register
@dataclass(frozen=True)
class LaplaceMechanism(_Additive):
    r"""Continuous Laplace mechanism, density :math:`\frac{1}{2b} e^{-|x|/b}`.

    ``epsilon = sensitivity / scale`` for queries of L1 sensitivity ``sensitivity``. The secure
    release uses OpenDP's float Laplace measurement, which samples the Laplace distribution on a
    fine lattice with exact arithmetic (so it resists the floating-point attacks on naive
    samplers); the log-density modelled here is the continuous one.

    Parameters
    ----------
    scale : float
        Laplace scale ``b`` (> 0).
    sensitivity : float
        L1 sensitivity (> 0).

    Raises
    ------
    ValueError
        If ``scale > 2**1000 / (64 ln 2)`` (about ``2.4e299``; then ``P(|noise| >= 2**1000)``
        could exceed ``2**-64`` and the output overflow), if ``scale`` or ``sensitivity`` is not
        a normal float64, or if ``epsilon`` is not a finite float > 0. ``release`` refuses true
        values with ``|value| > 2**1000``.
    """

    scale: float
    sensitivity: float = 1.0

    family: ClassVar[str] = "laplace"

    def __post_init__(self) -> None:
        with owner_scope(type(self).__name__):
            sens = v.noise_scale("sensitivity", self.sensitivity, math.inf, "")
            _check_scale(self, sens, v.MAX_LAPLACE_SCALE, v.REAL_NOISE_RULE)

    @classmethod
    def from_epsilon(cls, epsilon: float, sensitivity: float = 1.0) -> LaplaceMechanism:
        """The mechanism with ``scale = sensitivity / epsilon`` (rounded up: its epsilon never exceeds the request).

        Raises ``ValueError`` when the scale exceeds
        ``2**1024 / (64 ln 2)`` (about ``2.4e299``, so that
        ``P(|noise| >= 2**1000) < 2**-64``) or is not a normal float64.
        """
        with owner_scope(cls.__name__):
            eps = v.epsilon(epsilon)
            sens = v.noise_scale("sensitivity", sensitivity, math.inf, "")
            scale = round_noise_up("epsilon", eps, sens / eps, math.inf, lambda b: sens / b)
            _derived_scale(
                "epsilon",
                epsilon,
                "scale = sensitivity / epsilon",
                scale,
                v.MAX_LAPLACE_SCALE,
                v.REAL_NOISE_RULE,
            )
            return cls(scale=scale, sensitivity=sens)

    @property
    def epsilon(self) -> float:
        """``sensitivity / scale`` (the guarantee's epsilon)."""
        return _noise.epsilon_of_scale(self.sensitivity, self.scale)

    noise_logpdf = _Additive.noise_logpmf  # the same law, by its name for a density

    def noise_cdf(self, x: Any) -> np.ndarray:
        """CDF of the noise."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(over="ignore"):
            half_tail = 0.5 * np.exp(-np.abs(x) / self.scale)
        return np.where(x < 0, half_tail, 1.0 - half_tail)

    def _release_secure(self, value: np.ndarray) -> np.ndarray:
        return _opendp.laplace(value, self.scale)

    def _release_simulated(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return value + rng.laplace(0.0, self.scale, size=value.shape)


@register
@dataclass(frozen=True)
class GaussianMechanism(_Additive):
    r"""Gaussian mechanism, noise :math:`N(0, \sigma^2)`.

    ``rho = sensitivity**2 / (2 sigma**2)``-zCDP for queries of L2 sensitivity ``sensitivity``
    (Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via Gaussian
    Graphical Models*, Proposition 3.4). Secure release via OpenDP's float
    Gaussian measurement.

    Parameters
    ----------
    sigma : float
        Noise standard deviation (> 0).
    sensitivity : float
        L2 sensitivity (> 0).

    Raises
    ------
    ValueError
        If ``sigma > 2**1000 / sqrt(130 ln 2)`` (about ``1.1e300``; Gaussian tail bound
        ``2 exp(-t**2 / (2 sigma**2)) <= 2**-64`` at ``t = 2**1000``), if ``sigma`` or
        ``sensitivity`` is not a normal float64, or if ``rho`` is not a finite float > 0.
        ``release`` refuses true values with ``|value| > 2**1000``.
    """

    sigma: float
    sensitivity: float = 1.0

    family: ClassVar[str] = "gaussian"

    def __post_init__(self) -> None:
        _check_sigma(self, v.MAX_GAUSSIAN_SIGMA, v.REAL_NOISE_RULE)

    @classmethod
    def from_rho(cls, rho: float, sensitivity: float = 1.0) -> GaussianMechanism:
        """The mechanism with ``sigma = sensitivity / sqrt(2 rho)``."""
        with owner_scope(cls.__name__):
            sigma, sens = _sigma_from_rho(rho, sensitivity, v.MAX_GAUSSIAN_SIGMA, v.REAL_NOISE_RULE)
            return cls(sigma=sigma, sensitivity=sens)

    @property
    def rho(self) -> float:
        """``sensitivity**2 / (2 sigma**2)``."""
        return _rho(self.sensitivity, self.sigma)

    noise_logpdf = _Additive.noise_logpmf  # the same law, by its name for a density

    def noise_cdf(self, x: Any) -> np.ndarray:
        """CDF of N(0, sigma^2)."""
        return special.ndtr(np.asarray(x, dtype=np.float64) / self.sigma)

    def _release_secure(self, value: np.ndarray) -> np.ndarray:
        return _opendp.gaussian(value, self.sigma)

    def _release_simulated(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return value + rng.normal(0.0, self.sigma, size=value.shape)


#: Smallest discrete Gaussian sigma: sigma**2 (in its normalizer and sampler) must be a normal float64.
_MIN_DG_SIGMA = math.sqrt(v.TINY)
_WHY_MIN_DG_SIGMA = "so that sigma**2 is a normal float64"


def _check_sigma(mech: Any, maximum: float, rule: str, minimum: float = v.TINY, why_min: str = "") -> None:
    name = type(mech).__name__
    with owner_scope(name):
        sens = v.noise_scale("sensitivity", mech.sensitivity, math.inf, "")
        sigma = v.noise_scale("sigma", mech.sigma, maximum, rule, minimum=minimum, why_min=why_min)
        v.implied_guarantee(
            {"sensitivity": sens, "sigma": sigma}, "rho", "sensitivity**2 / (2 sigma**2)", _rho(sens, sigma)
        )
        object.__setattr__(mech, "sigma", sigma)
        object.__setattr__(mech, "sensitivity", sens)


def _sigma_from_rho(
    rho: Any, sensitivity: Any, maximum: float, rule: str, minimum: float = v.TINY, why_min: str = ""
) -> tuple[float, float]:
    """``sigma = sensitivity / sqrt(2 rho)`` rounded up to the first float64 whose rho is within the request.

    Refused (naming rho) when not representable.
    """
    r = v.positive("rho", rho)
    sens = v.noise_scale("sensitivity", sensitivity, math.inf, "")
    sigma = sens / (math.sqrt(2.0) * math.sqrt(r))
    if 0.0 < sigma < math.inf:  # rounded up: the recomputed rho never exceeds the request
        sigma = round_noise_up("rho", r, sigma, math.inf, lambda s: _rho(sens, s))
    _derived_scale(
        "rho",
        rho,
        "sigma = sensitivity / sqrt(2 rho)",
        sigma,
        maximum,
        rule,
        minimum=minimum,
        why_min=why_min or "the smallest normal float64",
    )
    return sigma, sens


@owned("discrete_gaussian_log_normalizer")
def discrete_gaussian_log_normalizer(sigma: float) -> float:
    r"""``log Z(sigma)``, ``Z = sum_{k in Z} exp(-k^2 / (2 sigma^2))``, to float64 precision.

    For ``sigma >= 1`` Poisson summation (Jacobi's theta identity) gives

    .. math:: Z = \sigma\sqrt{2\pi}\,\bigl(1 + 2\textstyle\sum_{m\ge1} e^{-2\pi^2\sigma^2 m^2}\bigr);

    the terms ``m = 1, 2`` are summed and the rest is below ``3 e^{-18 pi^2} < 1e-76``.
    For ``sigma < 1`` the direct sum over ``|k| <= 12``; the dropped tail is at most
    ``2 e^{-169/2} / (1 - e^{-27/2}) < 4e-37`` (relative, as ``Z >= 1``). One normaliser for
    the release side and the likelihoods, which call the same function on concrete ``sigma``
    (tested against mpmath).

    Examples
    --------
    >>> round(discrete_gaussian_log_normalizer(2.0), 10)
    1.6120857138
    """
    s = v.positive("sigma", sigma)
    return float(_noise.discrete_gaussian_log_normalizer(_NB, s))


@lru_cache(maxsize=32)
def _dg_left_cdf_table(sigma: float) -> tuple[int, np.ndarray]:
    """Cumulative probabilities P(K <= k) for k = -W..0, W = ceil(10 sigma) + 2."""
    W = math.ceil(10.0 * sigma) + 2
    k = np.arange(-W, 1, dtype=np.float64)
    logp = -(k**2) / (2.0 * sigma * sigma) - discrete_gaussian_log_normalizer(sigma)
    return W, np.cumsum(np.exp(logp))


@register
@dataclass(frozen=True)
class DiscreteGaussianMechanism(_Additive):
    r"""Discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020; Eng et al. 2024, §4).

    .. math:: P(K = k) = \frac{e^{-k^2/(2\sigma^2)}}{\sum_{j\in\mathbb{Z}} e^{-j^2/(2\sigma^2)}},
              \quad k\in\mathbb{Z},

    exactly normalized by :func:`discrete_gaussian_log_normalizer`. For integer queries of L2
    sensitivity ``sensitivity`` it is ``rho = sensitivity**2 / (2 sigma**2)``-zCDP (CKS20
    Theorem 4). Secure release uses OpenDP's exact discrete Gaussian sampler.

    Parameters
    ----------
    sigma : float
        Scale (> 0); not exactly the standard deviation.
    sensitivity : float
        L2 sensitivity (> 0).

    Raises
    ------
    ValueError
        If ``sigma > 2**62 / sqrt(130 ln 2)`` (about ``4.86e17``): the discrete Gaussian is
        sigma-subgaussian (CKS20), so ``P(|noise| >= 2**62) <= 2 exp(-2**124 / (2 sigma**2))``,
        which must stay below ``2**-64`` for the int64 output not to saturate. Also if
        ``sigma < sqrt(2.2e-308)`` (``sigma**2`` subnormal), if ``sensitivity`` is not a normal
        float64, or if ``rho`` is not a finite float > 0. ``release`` refuses ``|value| > 2**62``.

    Examples
    --------
    >>> m = DiscreteGaussianMechanism(sigma=6.25)
    >>> round(m.rho, 6)
    0.0128
    """

    sigma: float
    sensitivity: float = 1.0

    family: ClassVar[str] = "discrete_gaussian"

    def __post_init__(self) -> None:
        _check_sigma(self, v.MAX_DISCRETE_GAUSSIAN_SIGMA, v.INT_NOISE_RULE, _MIN_DG_SIGMA, _WHY_MIN_DG_SIGMA)

    @classmethod
    def from_rho(cls, rho: float, sensitivity: float = 1.0) -> DiscreteGaussianMechanism:
        """The mechanism with ``sigma = sensitivity / sqrt(2 rho)``."""
        with owner_scope(cls.__name__):
            sigma, sens = _sigma_from_rho(
                rho,
                sensitivity,
                v.MAX_DISCRETE_GAUSSIAN_SIGMA,
                v.INT_NOISE_RULE,
                _MIN_DG_SIGMA,
                _WHY_MIN_DG_SIGMA,
            )
            return cls(sigma=sigma, sensitivity=sens)

    @property
    def rho(self) -> float:
        """``sensitivity**2 / (2 sigma**2)``."""
        return _rho(self.sensitivity, self.sigma)

    def noise_cdf(self, k: Any) -> np.ndarray:
        """``P(K <= k)`` from an exact cumulative table (symmetry for k >= 0)."""
        k = np.floor(np.asarray(k, dtype=np.float64))
        W, table = _dg_left_cdf_table(self.sigma)

        def left(x: np.ndarray) -> np.ndarray:  # x <= 0
            idx = np.clip(x + W, -1, W).astype(np.int64)
            return np.where(idx < 0, 0.0, table[np.clip(idx, 0, W)])

        neg = left(np.minimum(k, 0.0))
        pos = 1.0 - left(np.minimum(-k - 1.0, 0.0))
        return np.where(k <= 0, neg, pos)

    def _release_secure(self, value: np.ndarray) -> np.ndarray:
        return _opendp.discrete_gaussian(value, self.sigma)

    def _release_simulated(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # CKS20 Algorithm 3: discrete Laplace proposal with t = floor(sigma) + 1, Bernoulli accept.
        sigma2 = self.sigma**2
        t = math.floor(self.sigma) + 1
        la = -1.0 / t
        out = np.empty(value.size, dtype=np.int64)
        filled = 0
        while filled < value.size:
            m = max(16, 2 * (value.size - filled))
            u = rng.random((3, m))
            # proposals kept in float64 until accepted: far proposals may exceed int64
            y = np.floor(np.log1p(-u[0]) / la) - np.floor(np.log1p(-u[1]) / la)
            with np.errstate(over="ignore"):
                accept = u[2] < np.exp(-((np.abs(y) - sigma2 / t) ** 2) / (2.0 * sigma2))
            take = y[accept][: value.size - filled]
            if take.size and np.max(np.abs(take)) > v.INT_BOUND:  # probability < 2**-64 per draw
                raise NoiseawareValueError(
                    f"{type(self).__name__}: a simulated noise draw exceeded 2**62 in magnitude; refusing to "
                    "return a value the modelled law does not describe."
                )
            out[filled : filled + take.size] = take.astype(np.int64)
            filled += take.size
        return value + out.reshape(value.shape)
