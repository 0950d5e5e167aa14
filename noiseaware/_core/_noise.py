r"""Noise kernels: two-sided geometric and discrete Gaussian, log-pmf, log-cdf and samplers.

All functions take a :class:`~noiseaware._core._backend.Backend` ``bk`` first and contain no
value-dependent Python control flow, so the same code runs eagerly in NumPy, traced in JAX and
symbolically in PyTensor.

Two-sided geometric (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
Correlations*, Definition 2.3, eq. 3):

.. math:: P(K = k) = \frac{1-\alpha}{1+\alpha}\,\alpha^{|k-\mathrm{loc}|},\quad k\in\mathbb{Z}.

One implementation, two parametrisations: every geometric function is written once in
``log_alpha = -1/scale`` (suffix ``_la``), the parameter of the mechanisms and of
:data:`NOISE_LAWS`, exact where ``alpha`` itself rounds to 1 in float64 (``scale = 1e17``). The
``alpha`` form, the likelihoods' parameter (the paper's, and the one a PPL puts a prior on), is a
one-line adapter calling the ``_la`` function with ``log(alpha)``; no formula is written twice.

Discrete Gaussian (Canonne, Kamath & Steinke 2020; Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data Augmentation for
Private Posterior Estimation in R*):

.. math:: P(K = k) = e^{-(k-\mathrm{loc})^2/(2\sigma^2)} / Z(\sigma),\quad
          Z(\sigma) = \sum_{j\in\mathbb{Z}} e^{-j^2/(2\sigma^2)}.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from ._backend import Backend

__all__ = [
    "DG_REJECTION_TRIES",
    "gaussian_from_uniforms",
    "laplace_from_uniforms",
    "randomized_response_from_uniforms",
    "randomized_response_logpmf",
    "rgm_log_normalizer",
    "rgm_logpmf",
    "tgm_from_uniforms",
    "tgm_logcdf",
    "tgm_logpmf",
    "NOISE_LAWS",
    "NoiseLaw",
    "gaussian_logpdf",
    "geometric_from_uniforms_la",
    "geometric_log_normalizer_la",
    "laplace_logpdf",
    "two_sided_geometric_logcdf_la",
    "two_sided_geometric_logpmf_la",
    "alpha_from_epsilon",
    "discrete_gaussian_log_normalizer",
    "discrete_gaussian_logpmf",
    "discrete_gaussian_from_uniforms",
    "discrete_gaussian_variance",
    "geometric_log_normalizer",
    "geometric_from_uniforms",
    "is_integral",
    "two_sided_geometric_icdf",
    "two_sided_geometric_logcdf",
    "two_sided_geometric_logpmf",
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: Half-width of the direct sum used for the discrete Gaussian normalizer when sigma < 1.
_DG_DIRECT_HALF_WIDTH = 12
#: Proposals per discrete Gaussian draw (CKS20 Algorithm 3 with a fixed number of tries).
DG_REJECTION_TRIES = 96


def alpha_from_epsilon(epsilon: float, sensitivity: float = 1.0) -> float:
    """``alpha = exp(-epsilon / sensitivity)`` (Wang et al. 2026, eq. 3).

    Examples
    --------
    >>> round(alpha_from_epsilon(1.0), 6)
    0.367879
    """
    return math.exp(-float(epsilon) / float(sensitivity))


def is_integral(bk: Backend, x: Any) -> Any:
    """Elementwise: ``x`` is a finite integer value."""
    xp = bk.xp
    x = bk.as_float(x)
    return bk.isfinite(x) & bk.eq(xp.floor(x), x)


def geometric_log_normalizer(bk: Backend, alpha: Any) -> Any:
    r"""``log((1 - alpha) / (1 + alpha))``, computed from ``log alpha`` with ``log1mexp``."""
    return geometric_log_normalizer_la(bk, bk.xp.log(alpha))


def geometric_log_normalizer_la(bk: Backend, log_alpha: Any) -> Any:
    r"""``log((1 - alpha) / (1 + alpha))`` from ``log_alpha = -1/scale`` (exact for any scale).

    The mechanisms' parameterization: at ``scale = 1e17`` ``alpha`` rounds to 1 in float64, but
    ``log_alpha = -1e-17`` does not, so the law stays exact there.
    """
    log_alpha = bk.as_float(log_alpha)
    return bk.log1mexp(log_alpha) - bk.xp.log1p(bk.xp.exp(log_alpha))


def two_sided_geometric_logpmf(bk: Backend, value: Any, loc: Any, alpha: Any) -> Any:
    r"""``log P(K = value)`` for ``K = loc + D``, ``D`` two-sided geometric with parameter ``alpha``.

    ``-inf`` where ``value`` is not an integer. ``alpha`` must lie in (0, 1) (checked by the
    front ends).
    """
    return two_sided_geometric_logpmf_la(bk, value, loc, bk.xp.log(alpha))


def two_sided_geometric_logpmf_la(bk: Backend, value: Any, loc: Any, log_alpha: Any) -> Any:
    """:func:`two_sided_geometric_logpmf` with ``log_alpha`` (the form every other caller reaches)."""
    xp = bk.xp
    value = bk.as_float(value)
    log_alpha = bk.as_float(log_alpha)
    ok = is_integral(bk, value)
    d = bk.where(ok, value, 0.0) - loc
    out = geometric_log_normalizer_la(bk, log_alpha) + xp.abs(d) * log_alpha
    return bk.where(ok, out, -np.inf)


def two_sided_geometric_logcdf(bk: Backend, value: Any, loc: Any, alpha: Any) -> Any:
    r"""``log P(K <= value)``.

    With ``d = floor(value) - loc``: ``P = alpha^{-d} / (1 + alpha)`` for ``d < 0`` and
    ``P = 1 - alpha^{d+1} / (1 + alpha)`` for ``d >= 0``.
    """
    return two_sided_geometric_logcdf_la(bk, value, loc, bk.xp.log(alpha))


def two_sided_geometric_logcdf_la(bk: Backend, value: Any, loc: Any, log_alpha: Any) -> Any:
    """:func:`two_sided_geometric_logcdf` with ``log_alpha``; no ``1 - cdf`` cancellation in either tail."""
    xp = bk.xp
    value = bk.as_float(value)
    fin = bk.isfinite(value)
    d = xp.floor(bk.where(fin, value, 0.0)) - loc
    la = bk.as_float(log_alpha)
    l1pa = xp.log1p(xp.exp(la))
    neg = d < 0
    d_neg = bk.where(neg, d, -1.0)
    d_pos = bk.where(neg, 0.0, d)
    left = -d_neg * la - l1pa
    right = bk.log1mexp((d_pos + 1.0) * la - l1pa)
    out = bk.where(neg, left, right)
    out = bk.where(fin, out, bk.where(value > 0, 0.0, -np.inf))
    return out


def two_sided_geometric_icdf(bk: Backend, q: Any, loc: Any, alpha: Any) -> Any:
    r"""Smallest integer ``k`` with ``P(K <= k) >= q``, the inverse of :func:`two_sided_geometric_logcdf`.

    With ``F(loc + d) = alpha^{-d}/(1+alpha)`` for ``d < 0`` and ``1 - alpha^{d+1}/(1+alpha)``
    for ``d >= 0``: ``d = ceil(-log(q (1+alpha)) / log alpha)`` when ``q <= 1/(1+alpha)``, else
    ``d = ceil(log((1-q)(1+alpha)) / log alpha - 1)``; one step of correction on each side
    guards the rounding of the logarithms. ``q`` in (0, 1); ``-inf``/``inf`` at 0/1, NaN outside.
    """
    xp = bk.xp
    q = bk.as_float(q)
    la = xp.log(alpha)
    l1pa = xp.log1p(alpha)
    inner = (q * (1.0 + alpha)) <= 1.0
    q_in = bk.where((q > 0) & (q < 1), q, 0.5)
    d_left = xp.ceil(-(xp.log(q_in) + l1pa) / la)
    d_right = xp.ceil((xp.log1p(-q_in) + l1pa) / la - 1.0)
    d = bk.where(inner, d_left, d_right)

    def cdf(dd: Any) -> Any:
        return xp.exp(two_sided_geometric_logcdf(bk, dd, 0.0, alpha))

    d = bk.where(cdf(d - 1.0) >= q_in, d - 1.0, d)
    d = bk.where(cdf(d) < q_in, d + 1.0, d)
    out = loc + d
    out = bk.where(q <= 0, -np.inf, out)
    out = bk.where(q >= 1, np.inf, out)
    return bk.where((q < 0) | (q > 1) | ~bk.isfinite(q), np.nan, out)


def geometric_from_uniforms(bk: Backend, u1: Any, u2: Any, alpha: Any) -> Any:
    """Two-sided geometric draws from two uniforms on [0, 1): ``G1 - G2``, ``Gi = floor(log(1-Ui)/log alpha)``.

    ``P(Gi >= g) = alpha^g``, so ``Gi`` is geometric on {0, 1, ...} and ``G1 - G2`` has the
    two-sided geometric law. Returns float values (integral).
    """
    return geometric_from_uniforms_la(bk, u1, u2, bk.xp.log(alpha))


def geometric_from_uniforms_la(bk: Backend, u1: Any, u2: Any, log_alpha: Any) -> Any:
    """:func:`geometric_from_uniforms` with ``log_alpha``."""
    xp = bk.xp
    g1 = xp.floor(xp.log1p(-u1) / log_alpha)
    g2 = xp.floor(xp.log1p(-u2) / log_alpha)
    return g1 - g2


def discrete_gaussian_log_normalizer(bk: Backend, sigma: Any) -> Any:
    r"""``log Z(sigma)`` in float64, differentiable in ``sigma``.

    For ``sigma >= 1``, Poisson summation (Jacobi theta) gives
    ``Z = sigma sqrt(2 pi) (1 + 2 sum_{m>=1} q^{m^2})``, ``q = exp(-2 pi^2 sigma^2)``; the terms
    ``m = 1, 2`` are kept and the rest is at most ``2 q^9 / (1 - q) < 1e-76`` (relative).
    For ``sigma < 1`` the direct sum over ``|k| <= 12`` is used; since ``Z >= 1`` the dropped
    tail is at most ``2 exp(-169/2) / (1 - exp(-27/2)) < 4e-37`` (relative). Same rule as
    :func:`noiseaware.mechanisms.discrete_gaussian_log_normalizer` (the release side), written
    here for symbolic ``sigma``.
    """
    xp = bk.xp
    big, s_big, q, k, s_small = _dg_regimes(bk, sigma)
    poisson = xp.log(s_big) + _LOG_SQRT_2PI + xp.log1p(2.0 * (q + q**4))
    direct = bk.logsumexp(-(k * k) / (2.0 * bk.expand(s_small) ** 2), axis=-1)
    return bk.where(big, poisson, direct)


def _dg_regimes(bk: Backend, sigma: Any) -> tuple[Any, Any, Any, Any, Any]:
    """``(sigma >= 1, sigma of the theta form, q, k = -12..12, sigma of the direct sum)``, each branch kept finite."""
    sigma = bk.as_float(sigma)
    big = sigma >= 1.0
    s_big = bk.where(big, sigma, 1.0)
    q = bk.xp.exp(-2.0 * math.pi**2 * s_big * s_big)
    k = bk.as_float(bk.asarray(np.arange(-_DG_DIRECT_HALF_WIDTH, _DG_DIRECT_HALF_WIDTH + 1, dtype=np.float64)))
    return big, s_big, q, k, bk.where(big, 0.5, sigma)


def discrete_gaussian_variance(bk: Backend, sigma: Any) -> Any:
    r"""``Var(D) = E[D^2]`` of the discrete Gaussian, exact in float64.

    The same two regimes as :func:`discrete_gaussian_log_normalizer`.
    ``E[D^2] = sigma^3 d/dsigma log Z(sigma)``. For ``sigma >= 1``, with the theta form of
    ``Z`` and ``q = exp(-2 pi^2 sigma^2)``: ``E[D^2] = sigma^2 - 8 pi^2 sigma^4 (q + 4 q^4) /
    (1 + 2 (q + q^4))`` (dropped terms below ``1e-70`` relative). For ``sigma < 1`` the direct
    sums over ``|k| <= 12``. So ``Var(D) < sigma^2`` always, by at most ``2e-7`` relative at
    ``sigma = 1``.
    """
    xp = bk.xp
    big, s_big, q, k, s_small = _dg_regimes(bk, sigma)
    theta = s_big**2 - 8.0 * math.pi**2 * s_big**4 * (q + 4.0 * q**4) / (1.0 + 2.0 * (q + q**4))
    w = xp.exp(-(k * k) / (2.0 * bk.expand(s_small) ** 2))
    direct = xp.sum(w * k * k, axis=-1) / xp.sum(w, axis=-1)
    return bk.where(big, theta, direct)


def discrete_gaussian_logpmf(bk: Backend, value: Any, loc: Any, sigma: Any) -> Any:
    """``log P(K = value)`` for ``K = loc + D``, ``D`` discrete Gaussian with scale ``sigma``."""
    value = bk.as_float(value)
    ok = is_integral(bk, value)
    d = bk.where(ok, value, 0.0) - loc
    out = -(d * d) / (2.0 * sigma * sigma) - discrete_gaussian_log_normalizer(bk, sigma)
    return bk.where(ok, out, -np.inf)


def discrete_gaussian_from_uniforms(bk: Backend, u: Any, sigma: Any) -> Any:
    r"""Discrete Gaussian draws (centred at 0) from uniforms ``u`` of shape ``(..., T, 3)``.

    CKS20 Algorithm 3 with ``T`` (:data:`DG_REJECTION_TRIES`) proposals in parallel: propose
    ``Y`` two-sided geometric with ``alpha = exp(-1/t)``, ``t = floor(sigma) + 1``, accept with
    probability ``exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))``; return the first accepted proposal.
    The acceptance probability is at least 0.44 for every ``sigma`` (checked numerically over
    ``sigma`` in [0.05, 1000]), so all ``T = 96`` proposals are rejected with probability
    below ``0.56^96 < 1e-24``; in that event the last proposal is returned.
    ``sigma`` must broadcast against ``u[..., 0, 0]``.
    """
    xp = bk.xp
    s = bk.expand(bk.as_float(sigma) + 0.0 * u[..., 0, 0])  # a scalar sigma broadcast to the draws' shape
    t = xp.floor(s) + 1.0
    alpha = xp.exp(-1.0 / t)
    y = geometric_from_uniforms(bk, u[..., 0], u[..., 1], alpha)
    accept = u[..., 2] < xp.exp(-((xp.abs(y) - s * s / t) ** 2) / (2.0 * s * s))
    tries = u.shape[-2]
    # index of the first accepted proposal (tries - 1 if none)
    idx = bk.asarray(np.arange(tries, dtype=np.float64))
    first = xp.min(bk.where(accept, idx, float(tries - 1)), axis=-1)
    pick = bk.eq(idx, bk.expand(first))
    return xp.sum(bk.where(pick, y, 0.0), axis=-1)


def laplace_logpdf(bk: Backend, x: Any, loc: Any, scale: Any) -> Any:
    r"""Laplace log-density ``-log(2 b) - |x - loc| / b`` (the Laplace mechanism's noise; Guo et al. 2022, §2.1)."""
    xp = bk.xp
    return -xp.log(2.0 * scale) - xp.abs(x - loc) / scale


def gaussian_logpdf(bk: Backend, x: Any, loc: Any, sigma: Any) -> Any:
    r"""Normal log-density (the Gaussian mechanism's noise; Ferrando et al. 2026, Prop. 3.4)."""
    z = (x - loc) / sigma
    return -0.5 * z * z - bk.xp.log(sigma) - _LOG_SQRT_2PI


def laplace_from_uniforms(bk: Backend, u: Any, scale: Any) -> Any:
    r"""Laplace noise from one uniform on (0, 1) by its inverse CDF: ``-b sign(u - 1/2) log(1 - 2|u - 1/2|)``."""
    xp = bk.xp
    c = u - 0.5
    return -scale * xp.sign(c) * xp.log1p(-2.0 * xp.abs(c))


def gaussian_from_uniforms(bk: Backend, u: Any, sigma: Any) -> Any:
    r"""Gaussian noise from one uniform on (0, 1) by its inverse CDF ``sigma * Phi^{-1}(u)``."""
    return sigma * bk.ndtri(u)


def randomized_response_logpmf(bk: Backend, output: Any, value: Any, k: Any, p: Any) -> Any:
    r"""k-ary randomized response: ``log P(Y = y | X = x)`` (Warner 1965; Eng et al. 2024, Example 1).

    .. math:: P(y\mid x) = p\,[y = x] + \frac{1-p}{k-1}\,[y \ne x],\qquad y, x \in \{0,\dots,k-1\};

    ``-inf`` for an output outside ``0..k-1``. Parameters: ``k >= 2`` categories, ``p`` in
    ``[1/k, 1)``; the guarantee is ``epsilon = log(p (k-1) / (1-p))``.
    """
    xp = bk.xp
    y = bk.as_float(output)
    x = bk.as_float(value)
    k = bk.as_float(k)  # PyTensor would keep a bare Python float exact in float32 as float32
    p = bk.as_float(p)
    same = xp.log(p)
    diff = xp.log1p(-p) - xp.log(k - 1.0)
    ok = is_integral(bk, y) & (y >= 0) & (y < k)
    return bk.where(ok, bk.where(bk.eq(y, x), same, diff), -np.inf)


def randomized_response_from_uniforms(bk: Backend, u: Any, value: Any, k: Any, p: Any) -> Any:
    """Randomized-response outputs from uniforms ``u`` of shape ``(2, *shape)``.

    Keep ``value`` when ``u[0] < p``; otherwise report ``(value + 1 + floor(u[1] (k-1))) mod k``,
    uniform over the ``k - 1`` other categories.
    """
    xp = bk.xp
    x = bk.as_float(value)
    k = bk.as_float(k)
    shift = 1.0 + xp.floor(u[1] * (k - 1.0))
    return bk.where(u[0] < p, x, xp.mod(x + shift, k))


def tgm_logpmf(bk: Backend, output: Any, value: Any, log_alpha: Any, lower: float, upper: float) -> Any:
    r"""Truncated geometric mechanism (TGM; Wang et al. 2026, §4, S.1): ``S = min(U, max(L, M + K))``.

    For ``L < s < U``, ``P(s | M) = (1-a)/(1+a) a^{|s-M|}``; the end points collect the tails,
    ``P(L | M) = P(K <= L - M)`` and ``P(U | M) = P(K >= U - M) = P(K <= M - U)``, each in closed
    form in log space (:func:`two_sided_geometric_logcdf_la`), so deep tails stay finite. With
    ``L == U`` the law is a point mass. ``lower``/``upper`` are static numbers.
    """
    s = bk.as_float(output)
    m = bk.as_float(value)
    if lower == upper:
        out = 0.0 * (s - m)
    else:
        interior = two_sided_geometric_logpmf_la(bk, s, m, log_alpha)
        at_lower = two_sided_geometric_logcdf_la(bk, lower - m, 0.0, log_alpha)
        at_upper = two_sided_geometric_logcdf_la(bk, m - upper, 0.0, log_alpha)
        out = bk.where(bk.eq(s, lower), at_lower, bk.where(bk.eq(s, upper), at_upper, interior))
    inside = (s >= lower) & (s <= upper) & is_integral(bk, s)
    return bk.where(inside, out, -np.inf)


def tgm_logcdf(bk: Backend, output: Any, value: Any, log_alpha: Any, lower: float, upper: float) -> Any:
    """``log P(S <= s | M)`` of the TGM: ``-inf`` below ``L``, the geometric CDF on ``[L, U)``, 0 from ``U`` on."""
    s = bk.as_float(output)
    m = bk.as_float(value)
    fs = bk.where(bk.isfinite(s), s, 0.0)
    geo = two_sided_geometric_logcdf_la(bk, fs, m, log_alpha)
    return bk.where(s < lower, -np.inf, bk.where(s >= upper, 0.0 * geo, geo))


def tgm_from_uniforms(bk: Backend, u: Any, value: Any, log_alpha: Any, lower: float, upper: float) -> Any:
    """TGM outputs from uniforms ``u`` of shape ``(2, *shape)``: ``clip(M + K, L, U)``."""
    k = geometric_from_uniforms_la(bk, u[0], u[1], log_alpha)
    return bk.xp.clip(bk.as_float(value) + k, lower, upper)


def rgm_log_normalizer(bk: Backend, value: Any, log_alpha: Any, lower: float, upper: float) -> Any:
    r"""``log sum_{l=L}^{U} a'^{|l - M|}`` of the renormalized geometric mechanism, any integer ``M``.

    For ``L <= M <= U`` the sum is ``(1 + a - a^{j+1} - a^{W+1-j}) / (1 - a)`` with ``j = M - L``,
    ``W = U - L``, evaluated as ``(1 - a^{j+1}) + a (1 - a^{W-j})`` (two terms >= 0, no
    cancellation); outside, ``a^{dist} (1 - a^{W+1}) / (1 - a)``.
    """
    xp = bk.xp
    m = bk.as_float(value)
    la = bk.as_float(log_alpha)
    L, U = float(lower), float(upper)
    log1ma = bk.log1mexp(la)
    mm = xp.clip(m, L, U)
    inside = xp.log(-xp.expm1((mm - L + 1.0) * la) - xp.exp(la) * xp.expm1((U - mm) * la)) - log1ma
    edge = bk.log1mexp((U - L + 1.0) * la) - log1ma
    dist = bk.where(m < L, L - m, bk.where(m > U, m - U, 0.0))
    return bk.where((m >= L) & (m <= U), inside, edge + dist * la)


def rgm_logpmf(bk: Backend, output: Any, value: Any, log_alpha: Any, lower: float, upper: float) -> Any:
    r"""Renormalized geometric mechanism (RGM; Wang et al. 2026, Def. S.1): ``a'^{|s-M|} / Z(M)`` on ``L..U``.

    ``log_alpha = -epsilon'/sensitivity`` (eq. S.1's ``epsilon'``); :func:`rgm_log_normalizer`
    gives ``log Z``. With ``L == U`` the law is a point mass.
    """
    s = bk.as_float(output)
    m = bk.as_float(value)
    if lower == upper:
        out = 0.0 * (s - m)
    else:
        out = bk.xp.abs(s - m) * log_alpha - rgm_log_normalizer(bk, m, log_alpha, lower, upper)
    inside = (s >= lower) & (s <= upper) & is_integral(bk, s)
    return bk.where(inside, out, -np.inf)


@dataclass(frozen=True)
class NoiseLaw:
    r"""One noise law of the registry :data:`NOISE_LAWS`: its math, written once.

    Every function takes a :class:`~noiseaware._core._backend.Backend` first and the law's
    parameters last, in the order of :attr:`parameters`, so the same code runs in NumPy, JAX and
    PyTensor. The mechanisms (release side), ``augment``, the workflows and the front ends read
    their densities and draws from here; :meth:`params_of` reads the parameters off a mechanism.

    Attributes
    ----------
    family : str
        The mechanism family (``Mechanism.family``, ``release.mechanism.family``).
    parameter : str
        The first (for additive laws, the only) parameter: ``"log_alpha"`` (two-sided geometric,
        ``-1/scale``), ``"sigma"`` (discrete Gaussian, Gaussian), ``"scale"`` (Laplace).
    integer : bool
        Integer support (pmf) or real line (pdf).
    logpdf : callable
        ``(bk, output, value, *params) -> log P(output | value)``; for an additive law
        ``output = value + noise``.
    logcdf : callable or None
        ``(bk, output, value, *params) -> log P(output' <= output | value)`` where it is cheap and
        exact in both tails; ``None`` otherwise (the reason is in :attr:`rule`).
    parameters : tuple of str
        All parameters, in call order, as attribute names of the mechanism (default
        ``(parameter,)``).
    additive : bool
        ``output = value + noise`` with noise independent of ``value`` (the laws ``Noisy``,
        ``augment``'s additive route and the workflows can use).
    draw : callable or None
        ``(bk, u, value, *params) -> output`` from uniforms on [0, 1) of shape
        ``uniform_shape(shape)``; ``None`` where only the mechanism's own exact sampler draws.
    uniform_shape : callable
        ``shape -> shape of u`` for a draw of ``shape`` outputs.
    rule : str
        The parameter's rule and its guarantee, as a formula (``sensitivity`` is the
        mechanism's).
    guarantee : callable
        ``(sensitivity, *guarantee_params) -> {"epsilon": ...}`` or ``{"rho": ...}``: the guarantee
        the parameters give, written once: every mechanism of the family takes its ``guarantee()``
        from here (:meth:`guarantee_of`).
    guarantee_params : tuple of str
        The mechanism's attributes the guarantee takes, in call order (default :attr:`parameters`;
        ``("scale",)`` for the geometric laws, whose ``log_alpha = -1/scale`` would round).
    """

    family: str
    parameter: str
    integer: bool
    logpdf: Callable[..., Any]
    logcdf: Callable[..., Any] | None = None
    parameters: tuple[str, ...] = ()
    additive: bool = True
    draw: Callable[..., Any] | None = None
    uniform_shape: Callable[[tuple[int, ...]], tuple[int, ...]] = lambda shape: (2, *shape)
    rule: str = ""
    guarantee: Callable[..., dict[str, float]] | None = None
    guarantee_params: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.parameters:
            object.__setattr__(self, "parameters", (self.parameter,))
        if not self.guarantee_params:
            object.__setattr__(self, "guarantee_params", self.parameters)

    def guarantee_of(self, mechanism: Any) -> dict[str, float]:
        """The guarantee of ``mechanism`` (its ``sensitivity`` and :attr:`guarantee_params`) by :attr:`guarantee`."""
        if self.guarantee is None:
            raise NotImplementedError(f"the {self.family} law states no guarantee")
        # randomized response has no sensitivity: each answer is randomized on its own (one record)
        sensitivity = getattr(mechanism, "sensitivity", 1)
        return self.guarantee(sensitivity, *(getattr(mechanism, p) for p in self.guarantee_params))

    def params_of(self, mechanism: Any) -> tuple[Any, ...]:
        """The law's parameters read off ``mechanism`` (floats; bounds and category counts as Python numbers)."""
        return tuple(getattr(mechanism, name) for name in self.parameters)


def _dg_logpdf(bk: Backend, x: Any, loc: Any, sigma: Any) -> Any:
    return discrete_gaussian_logpmf(bk, x, loc, sigma)


def _laplace_logcdf(bk: Backend, x: Any, loc: Any, scale: Any) -> Any:
    xp = bk.xp
    z = (x - loc) / scale
    neg = z < 0
    return bk.where(neg, bk.where(neg, z, 0.0) - math.log(2.0), xp.log1p(-0.5 * xp.exp(-xp.abs(z))))


def _gaussian_logcdf(bk: Backend, x: Any, loc: Any, sigma: Any) -> Any:
    return bk.log_ndtr((x - loc) / sigma)


def _additive_draw(noise: Callable[..., Any]) -> Callable[..., Any]:
    def draw(bk: Backend, u: Any, value: Any, par: Any) -> Any:
        """``value + noise(bk, u, par)``: the released value plus the noise drawn from the uniforms ``u``."""
        return value + noise(bk, u, par)

    return draw


def _geometric_noise(bk: Backend, u: Any, log_alpha: Any) -> Any:
    return geometric_from_uniforms_la(bk, u[0], u[1], log_alpha)


def epsilon_of_scale(sensitivity: float, scale: float) -> float:
    """Pure DP of additive geometric or Laplace noise of ``scale``: ``epsilon = sensitivity / scale``."""
    return sensitivity / scale


def rho_of_sigma(sensitivity: float, sigma: float) -> float:
    """ZCDP of (discrete) Gaussian noise: ``rho = sensitivity**2 / (2 sigma**2)``, inf where it overflows."""
    r = sensitivity / sigma
    return 0.5 * r * r


def rr_log_ratio(p: float, k: int) -> float:
    """``log(p (k-1) / (1-p))`` of randomized response, from the exact rational value of the float ``p``.

    Its absolute value is the guarantee (``p`` within a few ulps of ``1/k`` keeps its tiny privacy loss).
    """
    q = Fraction(p)
    return math.log1p(float(q * (k - 1) / (1 - q) - 1))


def _pure(sensitivity: Any, scale: Any) -> dict[str, float]:
    return {"epsilon": epsilon_of_scale(sensitivity, scale)}


def _zcdp(sensitivity: Any, sigma: Any) -> dict[str, float]:
    return {"rho": rho_of_sigma(sensitivity, sigma)}


def _rr_epsilon(sensitivity: Any, k: Any, p: Any) -> dict[str, float]:
    return {"epsilon": abs(rr_log_ratio(p, k))}


#: The noise laws, one entry per mechanism family whose output law is a closed form: the additive
#: families (geometric, discrete Gaussian, Laplace, Gaussian), randomized response, and the
#: range-preserving maps of Wang et al. (2026) (TGM, BTGM, RGM). The exponential mechanism is a selection
#: rule over scores, not a noise law, and stays in :mod:`noiseaware.mechanisms`.
NOISE_LAWS: dict[str, NoiseLaw] = {
    law.family: law
    for law in (
        NoiseLaw(
            "geometric",
            "log_alpha",
            True,
            two_sided_geometric_logpmf_la,
            two_sided_geometric_logcdf_la,
            draw=_additive_draw(_geometric_noise),
            rule="log_alpha = -1/scale < 0, scale <= 1.02e17; epsilon = sensitivity / scale",
            guarantee=_pure,
            guarantee_params=("scale",),
        ),
        NoiseLaw(
            "discrete_gaussian",
            "sigma",
            True,
            _dg_logpdf,
            draw=_additive_draw(discrete_gaussian_from_uniforms),
            uniform_shape=lambda shape: (*shape, DG_REJECTION_TRIES, 3),
            rule="sigma > 0; rho = sensitivity**2 / (2 sigma**2) (no closed-form CDF: logcdf is None)",
            guarantee=_zcdp,
        ),
        NoiseLaw(
            "laplace",
            "scale",
            False,
            laplace_logpdf,
            _laplace_logcdf,
            draw=_additive_draw(laplace_from_uniforms),
            uniform_shape=lambda shape: tuple(shape),
            rule="scale > 0; epsilon = sensitivity / scale",
            guarantee=_pure,
        ),
        NoiseLaw(
            "gaussian",
            "sigma",
            False,
            gaussian_logpdf,
            _gaussian_logcdf,
            draw=_additive_draw(gaussian_from_uniforms),
            uniform_shape=lambda shape: tuple(shape),
            rule="sigma > 0; rho = sensitivity**2 / (2 sigma**2)",
            guarantee=_zcdp,
        ),
        NoiseLaw(
            "randomized_response",
            "k",
            True,
            randomized_response_logpmf,
            parameters=("k", "p"),
            additive=False,
            draw=randomized_response_from_uniforms,
            rule="k >= 2 categories, p in [1/k, 1); epsilon = log(p (k-1) / (1-p)) (categories: no CDF)",
            guarantee=_rr_epsilon,
        ),
        NoiseLaw(
            "tgm",
            "log_alpha",
            True,
            tgm_logpmf,
            tgm_logcdf,
            parameters=("log_alpha", "lower", "upper"),
            additive=False,
            draw=tgm_from_uniforms,
            rule="log_alpha = -1/scale, integers lower <= upper; epsilon = sensitivity / scale",
            guarantee=_pure,
            guarantee_params=("scale",),
        ),
        NoiseLaw(
            "rgm",
            "log_alpha_prime",
            True,
            rgm_logpmf,
            parameters=("log_alpha_prime", "lower", "upper"),
            additive=False,
            rule=(
                "log_alpha_prime = -epsilon'/sensitivity with epsilon' solving eq. (S.1); epsilon is the target. "
                "No logcdf and no draw from a fixed number of uniforms: the mechanism's exact rejection sampler draws"
            ),
            guarantee=lambda sens, epsilon: {"epsilon": epsilon},  # Theorem S.2: epsilon' is solved for the target
            guarantee_params=("epsilon",),
        ),
    )
}
#: BTGM: the TGM law of the TGM output ``s``; the released value is the posterior mean ``E(M | s)``
#: of eq. (22), a one-to-one map that the mechanism applies (``BTGM.table``).
NOISE_LAWS["btgm"] = replace(
    NOISE_LAWS["tgm"],
    family="btgm",
    rule=(
        "the TGM law of the TGM output s = L..U; the released value is the posterior mean E(M | s) of "
        "eq. (22), a one-to-one map the mechanism applies (BTGM.table); epsilon = sensitivity / scale"
    ),
)
