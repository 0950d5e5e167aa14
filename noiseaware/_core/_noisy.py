r"""Noisy discrete laws ``Y = X + D``: the exact convolution, written once for every backend.

``X`` is any integer-valued base law of the host PPL (Poisson, binomial, negative binomial,
zero-inflated, beta-binomial, categorical, ...; its log-pmf is supplied by the front end as a
function of integer points) and ``D`` is independent integer noise with a symmetric,
unimodal pmf ``g``: two-sided geometric (``alpha``; Wang, Feldman & Reiter (2026), *Differentially Private Bayesian
Inference for Gaussian Copula Correlations*,
Definition 2.3, eq. 3) or discrete Gaussian (``sigma``; Canonne, Kamath & Steinke 2020). The
noise law is read from the one registry in :mod:`noiseaware._core._noise`; nothing here
re-implements it.

.. math:: P(Y = y) = \sum_{k} P(X = k)\, g(y - k).

**The window.** The sum runs over a window of fixed width ``W = 2w + 1`` with a dynamic start:
``[y - w, y + w]``, shifted (never shrunk) to stay inside the base's support ``[lb, ub]`` when
the support is known (``start = max(min(max(y - w, lb), ub - W + 1), lb)``; if the support has
at most ``W`` points the window covers all of it and the sum is exact). Every omitted ``k`` is a
support point with ``|y - k| > w``. The half-width ``w`` depends only on the concrete noise
parameter and ``tol``: the smallest ``w >= 0`` with

.. math:: \tau(w) := P(|D| > w) \le \mathrm{tol}\cdot e^{-M},\qquad M = 40
          \ (:data:`LOG_FLOOR` = -M),

where ``tau`` is bounded as follows (both proofs are elementary):

* two-sided geometric, ``g(d) = (1-a)/(1+a) a^{|d|}``: exactly
  ``tau(w) = 2 (1-a)/(1+a) sum_{d>w} a^d = 2 a^{w+1} / (1 + a)``;
* discrete Gaussian, ``g(d) = f(d)/Z``, ``f(x) = exp(-x^2/(2 s^2))``: with ``c = w + 1``,
  ``f`` decreasing on ``[0, inf)`` gives ``sum_{d>=c} f(d) <= f(c) + int_c^inf f <= f(c)
  (1 + s^2/c)`` (Mills' ratio), and ``Z >= 1`` (the ``d = 0`` term) and
  ``Z = 2 sum_{d>=0} f(d) - 1 >= 2 int_0^inf f - 1 = s sqrt(2 pi) - 1``, so
  ``tau(w) <= 2 f(c) (1 + s^2/c) / max(1, s sqrt(2 pi) - 1)``.

**What the window guarantees.** Let ``p`` be the exact pmf and ``p_hat`` the windowed sum.
Because ``g`` is symmetric and nonincreasing in ``|d|``, every omitted term has
``g(y - k) <= g(w + 1)``, and ``g(w + 1) <= P(D >= w + 1) = tau(w)/2``. Hence, for *every*
``y`` and *every* base law (no log-concavity needed):

1. ``0 <= p(y) - p_hat(y) <= g(w+1) P(X outside the window) <= tau(w)/2`` (absolute);
2. relative error ``(p - p_hat)/p <= tau(w) / (2 p(y)) <= tol`` whenever
   ``log p(y) >= -M = -40``: every observation with a log-likelihood above -40 is computed to
   relative accuracy ``tol`` (``|log p - log p_hat| <= tol/(1 - tol)``);
3. summed over all ``y``, ``sum_y (p - p_hat) <= tau(w) <= tol e^-M``: the windowed law is a
   sub-probability whose missing mass is at most that (the model-averaged relative error);
4. a computable certificate for any ``y``: ``(p - p_hat)/p <= g(w+1)/p_hat(y)``
   (:func:`log_error_bound`).

No fixed-width window can do better uniformly: for geometric noise, Poisson ``X`` with mean
``mu = 1e6`` and ``y = 0``, the terms ``P(X = k) a^k`` are spread over ``sqrt(mu a)`` values of
``k`` far from ``y``; such an observation has ``log p(y) ~ -mu (1 - a)``, far below the floor,
and ``p_hat`` is then only a lower bound (absolute error below ``tol e^-40 / 2``). A window
centred at the base's mass instead of at ``y`` would need a width that grows with the base's
parameters, which are not concrete in a model.

**Multinomial bases** (``X`` a vector of ``K`` cell counts with total ``N``, independent noise
on each cell) use no truncation at all: the sum over the simplex
``{k : k_j >= 0, sum_j k_j = N}`` is evaluated exactly by a dynamic programme over the cells,
``F_j(s) = logsumexp_{t <= s} [F_{j-1}(s - t) + t log p_j - log t! + log g(y_j - t)]``, then
``log p(y) = log N! + F_K(N)``: ``O(K (N+1)^2)`` operations and ``O((N+1)^2)`` memory per
observed vector (instead of the ``C(N+K-1, K-1)`` terms of the simplex). It is refused above
``(N+1)^2 > MAX_DP_CELLS`` (``N > 999``) with an error rather than approximated.

All functions take a :class:`~noiseaware._core._backend.Backend` first and contain no
value-dependent Python control flow.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import current_owner
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ._backend import Backend, get_backend
from ._noise import (
    alpha_from_epsilon,
    discrete_gaussian_logpmf,
    is_integral,
    two_sided_geometric_logpmf,
)
from ._record import ReleaseRecord, as_release

__all__ = [
    "DEFAULT_TOL",
    "FAMILIES",
    "LOG_FLOOR",
    "MAX_DP_CELLS",
    "MAX_EPSILON_RATIO",
    "MAX_WIDTH",
    "MIN_ALPHA",
    "MIN_SIGMA",
    "NoiseSpec",
    "half_width",
    "log_error_bound",
    "noise_logpmf",
    "noise_spec",
    "noisy_logcdf",
    "noisy_logpmf",
    "noisy_multinomial_logpmf",
    "release_noise",
    "tail_bound",
]

#: Noise families and the name of their parameter.
FAMILIES = {"geometric": "alpha", "discrete_gaussian": "sigma"}
#: Default relative tolerance.
DEFAULT_TOL = 1e-12
#: ``-M``: observations with ``log p(y) >= LOG_FLOOR`` are computed to relative accuracy ``tol``.
LOG_FLOOR = -40.0
#: Widest window accepted (terms per observation).
MAX_WIDTH = 1_000_001
#: Largest ``(N + 1)^2`` accepted for the exact multinomial dynamic programme.
MAX_DP_CELLS = 1_000_000
#: Smallest geometric ``alpha`` accepted: the smallest normal float64 (``alpha = exp(-epsilon / sensitivity)``,
#: so ``epsilon / sensitivity <= -log(MIN_ALPHA)``, about 708.4). Below it ``alpha`` underflows (to a
#: subnormal or to 0, where ``log alpha`` fails); the noise is then ``D = 0`` with probability above
#: ``1 - 2 MIN_ALPHA``, so a noise-free model (the base distribution alone) is the right one.
MIN_ALPHA = v.TINY
#: Largest ``epsilon / sensitivity`` accepted: ``-log(MIN_ALPHA)`` (about 708.4).
MAX_EPSILON_RATIO = -math.log(MIN_ALPHA)
#: Smallest discrete Gaussian ``sigma`` accepted: ``d**2 / (2 sigma**2)`` must stay finite in float64
#: for every ``|d| <= 41`` that the window, the variance and the normaliser evaluate (``sigma**2 = 1e-300``
#: gives at most ``8.5e302``). Below ``sigma = 0.03`` the noise is already 0 in float64 except for
#: ``log P``, which stays exact.
MIN_SIGMA = 1e-150
_NEGLIGIBLE = "Such noise is negligible in float64: model the counts with the base distribution itself."
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _log_tail_geometric(alpha: float, w: int) -> float:
    """``log P(|D| > w) = log(2 alpha^(w+1) / (1 + alpha))`` (exact)."""
    return math.log(2.0) + (w + 1) * math.log(alpha) - math.log1p(alpha)


def _log_tail_dgauss(sigma: float, w: int) -> float:
    """Log of the proven bound ``2 f(c)(1 + s^2/c) / max(1, s sqrt(2 pi) - 1)``, ``c = w + 1``."""
    c = w + 1.0
    z_low = max(1.0, sigma * math.exp(_LOG_SQRT_2PI) - 1.0)
    return math.log(2.0) - c * c / (2.0 * sigma * sigma) + math.log1p(sigma * sigma / c) - math.log(z_low)


#: ``log`` of the tail bound of each family, as a function of ``(par, w)``.
_LOG_TAIL = {"geometric": _log_tail_geometric, "discrete_gaussian": _log_tail_dgauss}


def tail_bound(family: str, par: float, w: int) -> float:
    """A proven upper bound on ``P(|D| > w)`` (exact for the geometric family; module docstring).

    Examples
    --------
    >>> round(tail_bound("geometric", 0.5, 3), 6)  # 2 * 0.5**4 / 1.5
    0.083333
    """
    return math.exp(_LOG_TAIL[family](par, w))


def half_width(family: str, par: float, tol: float = DEFAULT_TOL) -> int:
    """Smallest ``w >= 0`` with ``tail_bound(family, par, w) <= tol * exp(LOG_FLOOR)``.

    Examples
    --------
    >>> half_width("geometric", math.exp(-1.0))  # about (log(2/(1+a)) + 27.6 + 40) / 1
    68
    >>> half_width("discrete_gaussian", 2.0)
    23
    """
    target = math.log(tol) + LOG_FLOOR
    log_tail = _LOG_TAIL[family]
    if family == "geometric":  # log_tail(w) = target solved for w
        w = max(0, math.ceil((target - math.log(2.0) + math.log1p(par)) / math.log(par)) - 1)
    else:  # the root of the Gaussian factor, a little below the smallest w
        w = max(0, math.floor(par * math.sqrt(-2.0 * target)) - 2)
    while w > 0 and log_tail(par, w - 1) <= target:  # rounding guard
        w -= 1
    while log_tail(par, w) > target:
        w += 1
    return w


@dataclass(frozen=True)
class NoiseSpec:
    """A concrete noise law and the constants of its window (computed once).

    Attributes
    ----------
    family : {"geometric", "discrete_gaussian"}
    par : float
        ``alpha`` in (0, 1) or ``sigma > 0``.
    tol : float
        Relative tolerance for observations with ``log p >= LOG_FLOOR``.
    half_width : int
        ``w``; the window has ``width = 2 w + 1`` terms.
    tail : float
        The proven bound on ``P(|D| > w)`` (``<= tol * exp(LOG_FLOOR)``).
    log_g_next : float
        ``log g(w + 1)``, the largest omitted noise probability (for :func:`log_error_bound`).
    variance : float
        ``Var D``: ``2 alpha / (1 - alpha)^2``, or the discrete Gaussian's by a direct sum.
    """

    family: str
    par: float
    tol: float
    half_width: int
    tail: float
    log_g_next: float
    variance: float

    @property
    def width(self) -> int:
        """Number of terms in each window, ``2 w + 1``."""
        return 2 * self.half_width + 1

    @property
    def param_name(self) -> str:
        """``"alpha"`` or ``"sigma"``."""
        return FAMILIES[self.family]


def _np_noise_logpmf(family: str, par: float, d: np.ndarray) -> np.ndarray:
    return np.asarray(noise_logpmf(get_backend("numpy"), family, par, np.asarray(d, dtype=np.float64), 0.0))


@lru_cache(maxsize=256)
def _make_spec(family: str, par: float, tol: float) -> NoiseSpec:
    w = half_width(family, par, tol)
    if 2 * w + 1 > MAX_WIDTH:
        raise NoiseawareValueError(
            f"Noisy: the exact window for {FAMILIES[family]}={par!r} (tol={tol!r}) has {2 * w + 1} terms per "
            f"observation, more than {MAX_WIDTH}; the noise is too wide for an exact convolution. "
            "Use a larger tol, or a continuous approximation outside noiseaware."
        )
    tail = tail_bound(family, par, w)
    log_g_next = float(_np_noise_logpmf(family, par, np.array(w + 1.0)))
    if family == "geometric":
        var = 2.0 * par / (1.0 - par) ** 2
    else:
        # terms beyond |d| > 40 sigma + 40 are below exp(-800) relative: negligible in float64
        L = math.ceil(40.0 * par) + 40
        d = np.arange(-L, L + 1, dtype=np.float64)
        var = float(np.sum(d * d * np.exp(_np_noise_logpmf(family, par, d))))
    return NoiseSpec(family, par, tol, w, tail, log_g_next, var)


def _family_param(family: str, par: Any, name: str | None = None) -> float:
    """``alpha`` in ``[MIN_ALPHA, 1)`` or ``sigma`` in ``[MIN_SIGMA, inf)``, or a named error."""
    name = name or FAMILIES[family]
    if family == "geometric":
        a = v.open_unit(name, par)
        if a < MIN_ALPHA:
            v.refuse(name, f"must be >= {MIN_ALPHA!r} (the smallest normal float64)", par, _NEGLIGIBLE)
        return a
    s = v.positive(name, par)
    if s < MIN_SIGMA:
        v.refuse(name, f"must be >= {MIN_SIGMA!r} (so that d**2 / (2 sigma**2) is finite)", par, _NEGLIGIBLE)
    return s


def _alpha_from_epsilon(epsilon: Any, sensitivity: Any) -> float:
    """``alpha = exp(-epsilon / sensitivity)``, refused (naming both) when it would be below :data:`MIN_ALPHA`."""
    eps = v.positive("epsilon", epsilon)
    sens = v.positive("sensitivity", sensitivity)
    ratio = eps / sens
    if not ratio <= MAX_EPSILON_RATIO:
        raise NoiseawareValueError(
            f"{current_owner()}: epsilon / sensitivity must be <= {MAX_EPSILON_RATIO:.6g} so that alpha = "
            f"exp(-epsilon / sensitivity) is a normal float64 (>= {MIN_ALPHA!r}); got epsilon={epsilon!r}, "
            f"sensitivity={sensitivity!r} (epsilon / sensitivity = {ratio!r}). {_NEGLIGIBLE}"
        )
    return alpha_from_epsilon(eps, sens)


def release_noise(release: Any) -> tuple[str, float, np.ndarray]:
    """``(family, alpha or sigma, values)`` of a ``"counts"`` release with integer noise.

    Reads only the public attributes ``statistic``, ``mechanism.family``, ``mechanism.alpha`` /
    ``mechanism.sigma`` and ``values``.

    Raises
    ------
    TypeError
        If ``release`` is not a :class:`noiseaware.Release`.
    ValueError
        If its statistic is not ``"counts"`` or its mechanism family is not geometric or
        discrete_gaussian.
    """
    release = as_release(release)
    if release.statistic != "counts":
        raise NoiseawareValueError(
            f"{current_owner()}: the release's statistic must be 'counts' (noisy cell counts); got "
            f"statistic={release.statistic!r}. Use the likelihood made for that statistic."
        )
    fam = release.mechanism.family
    if fam not in FAMILIES:
        raise NoiseawareValueError(
            f"{current_owner()}: the release's mechanism family must be one of {list(FAMILIES)}; got family={fam!r}."
        )
    mech: Any = release.mechanism
    par = float(mech.alpha) if fam == "geometric" else float(mech.sigma)
    par = _family_param(fam, par, f"the release's mechanism.{FAMILIES[fam]}")
    return fam, par, np.asarray(release.values)


_SYMBOLIC_MODULES = ("jax", "jaxlib", "pytensor", "pymc")


def known_constant(name: str, value: Any) -> Any:
    """``value`` unchanged, or a named error if it is a sampled, traced or symbolic tensor.

    A release's noise parameters (``alpha``, ``sigma``, ``epsilon``, ``sensitivity``) are public and
    fixed by the curator: they are data of the likelihood, never a parameter to sample. JAX arrays and
    tracers, and PyTensor / PyMC variables, are refused with that rule (a PyTensor constant is unwrapped).

    Examples
    --------
    >>> known_constant("sigma", 2.0)
    2.0
    """
    module = type(value).__module__ or ""
    if module.split(".")[0] not in _SYMBOLIC_MODULES:
        return value
    if type(value).__name__ == "TensorConstant":
        return np.asarray(value.data)
    raise NoiseawareTypeError(
        f"{current_owner()}: {name} must be a known constant: the noise scale of a release is public and fixed by the "
        f"curator, not a parameter to sample or trace; got a {type(value).__name__} ({name}={value!r}). "
        "Pass the published value as a Python float, or the release itself (noise=release, or from_release)."
    )


def noise_spec(
    noise: Any = None,
    *,
    alpha: Any = None,
    sigma: Any = None,
    epsilon: Any = None,
    sensitivity: Any = 1.0,
    tol: Any = DEFAULT_TOL,
) -> tuple[NoiseSpec, np.ndarray | None]:
    """Parse the noise arguments of ``Noisy``: the spec and, for a release, its values.

    Exactly one of ``noise`` (a mapping ``{"family": "geometric", "alpha": a}``,
    ``{"family": "geometric", "epsilon": e, "sensitivity": s}``,
    ``{"family": "discrete_gaussian", "sigma": s}``, a :class:`NoiseSpec`, or a ``"counts"``
    :class:`~noiseaware.Release`), ``alpha``, ``epsilon`` (with ``sensitivity``) or ``sigma``.
    Every parameter must be a concrete number (it fixes the window width). ``alpha`` must be at
    least :data:`MIN_ALPHA` (so ``epsilon / sensitivity <= MAX_EPSILON_RATIO``, about 708.4) and
    ``sigma`` at least :data:`MIN_SIGMA`: smaller noise underflows float64, and is negligible
    anyway, so the error says to use the base distribution alone.

    Examples
    --------
    >>> spec, _ = noise_spec({"family": "geometric", "alpha": 0.5})
    >>> spec.family, spec.par, spec.width
    ('geometric', 0.5, 195)
    """
    alpha, sigma, epsilon, sensitivity = (
        known_constant(k, x)
        for k, x in (("alpha", alpha), ("sigma", sigma), ("epsilon", epsilon), ("sensitivity", sensitivity))
    )
    if isinstance(noise, Mapping):
        noise = {k: known_constant(f"noise[{k!r}]", x) for k, x in noise.items()}
    tol_f = v.real("tol", tol)
    if not (0.0 < tol_f < 1e-3):
        v.refuse("tol", "must be in (0, 1e-3)", tol)
    given = {
        k: x
        for k, x in (("noise", noise), ("alpha", alpha), ("sigma", sigma), ("epsilon", epsilon))
        if x is not None
    }
    if len(given) != 1:
        raise NoiseawareValueError(
            f"{current_owner()}: give exactly one of noise, alpha, epsilon or sigma; got "
            f"{', '.join(f'{k}={x!r}' for k, x in given.items()) or 'none of them'}."
        )
    values = None
    if noise is None:
        if alpha is not None:
            family, par = "geometric", _family_param("geometric", alpha)
        elif sigma is not None:
            family, par = "discrete_gaussian", _family_param("discrete_gaussian", sigma)
        else:
            par = _alpha_from_epsilon(epsilon, sensitivity)
            family = "geometric"
    elif isinstance(noise, NoiseSpec):
        family, par = noise.family, _family_param(noise.family, noise.par)
    elif isinstance(noise, Mapping):
        family, par = _spec_from_mapping(noise)
    elif isinstance(noise, ReleaseRecord):
        family, par, values = release_noise(noise)
    else:
        raise NoiseawareTypeError(
            f"{current_owner()}: noise must be a mapping such as {{'family': 'geometric', 'alpha': 0.5}} or a "
            f"noiseaware.Release; got noise={noise!r}."
        )
    return _make_spec(family, float(par), tol_f), values


def _spec_from_mapping(noise: Mapping[str, Any]) -> tuple[str, float]:
    keys = set(noise)
    family = noise.get("family")
    if family not in FAMILIES:
        raise NoiseawareValueError(
            f"{current_owner()}: noise['family'] must be one of {list(FAMILIES)}; got noise={dict(noise)!r}."
        )
    if family == "geometric":
        if keys == {"family", "alpha"}:
            return family, _family_param(family, noise["alpha"])
        if keys in ({"family", "epsilon"}, {"family", "epsilon", "sensitivity"}):
            return family, _alpha_from_epsilon(noise["epsilon"], noise.get("sensitivity", 1.0))
        allowed = "'alpha', or 'epsilon' (and 'sensitivity')"
    else:
        if keys == {"family", "sigma"}:
            return family, _family_param(family, noise["sigma"])
        allowed = "'sigma'"
    raise NoiseawareValueError(
        f"{current_owner()}: a {family!r} noise mapping takes 'family' and {allowed}; got keys {sorted(keys)}."
    )


# --------------------------------------------------------------------------- math
def noise_logpmf(bk: Backend, family: str, par: Any, value: Any, loc: Any) -> Any:
    """``log g(value - loc)`` from the noise registry (:mod:`noiseaware._core._noise`)."""
    if family == "geometric":
        return two_sided_geometric_logpmf(bk, value, loc, par)
    return discrete_gaussian_logpmf(bk, value, loc, par)


def _safe_lse(bk: Backend, x: Any, axis: int) -> Any:
    """``log sum exp`` along ``axis`` that returns ``-inf`` (not NaN) when every term is ``-inf``."""
    xp = bk.xp
    m = bk.stop_gradient(xp.max(x, axis=axis, keepdims=True))
    m = bk.where(bk.isfinite(m), m, 0.0)
    return xp.log(xp.sum(xp.exp(x - m), axis=axis)) + xp.sum(m, axis=axis)


def _f64(bk: Backend, x: float) -> Any:
    """A float64 constant (PyTensor would store a bare Python float as float32 when exact there)."""
    return bk.asarray(np.asarray(x, dtype=np.float64))


def _lead(bk: Backend, arr: np.ndarray, ndim: int) -> Any:
    """A constant vector laid along a new leading axis, followed by ``ndim`` unit axes."""
    return bk.asarray(np.asarray(arr).reshape((arr.shape[0],) + (1,) * ndim))


def noisy_logpmf(
    bk: Backend,
    spec: NoiseSpec,
    value: Any,
    base_logpmf: Callable[[Any], Any],
    lower: Any = -np.inf,
    upper: Any = np.inf,
) -> Any:
    r"""``log P(X + D = value)`` by the windowed sum of the module docstring.

    Parameters
    ----------
    bk : Backend
        Array backend.
    spec : NoiseSpec
        The noise law and its window (from :func:`noise_spec`).
    value : array_like
        Observed noisy counts; ``-inf`` for non-integers.
    base_logpmf : callable
        ``k -> log P(X = k)`` for an int64 array ``k`` of shape ``(W, *value.shape)`` whose
        entries lie in ``[lower, upper]``; must broadcast the base's parameters against it.
    lower, upper : array_like
        Known support bounds of ``X`` (``-inf``/``inf`` if unknown; points outside the support
        must then get ``-inf`` from ``base_logpmf``).

    Examples
    --------
    >>> from scipy import stats
    >>> spec, _ = noise_spec(alpha=0.5)
    >>> lp = noisy_logpmf(get_backend("numpy"), spec, np.array([3.0]), lambda k: stats.poisson.logpmf(k, 2.0), 0.0)
    >>> round(float(lp[0]), 6)
    -1.883327
    """
    xp = bk.xp
    value = bk.as_float(value)
    ok = is_integral(bk, value)
    y = bk.stop_gradient(bk.where(ok, value, 0.0))
    lo = bk.stop_gradient(bk.as_float(lower))
    hi = bk.stop_gradient(bk.as_float(upper))
    W = spec.width
    start = xp.maximum(xp.minimum(xp.maximum(y - spec.half_width, lo), hi - (W - 1)), lo)
    k = start[None] + _lead(bk, np.arange(W, dtype=np.float64), start.ndim)
    inside = (k >= lo) & (k <= hi)
    k_safe = xp.minimum(xp.maximum(k, lo), hi)
    base = base_logpmf(bk.as_int(k_safe))
    terms = bk.where(inside, base, -np.inf) + noise_logpmf(bk, spec.family, _f64(bk, spec.par), y, k)
    out = _safe_lse(bk, terms, axis=0)
    return bk.where(ok, out, -np.inf)


def noisy_logcdf(bk: Backend, spec: NoiseSpec, value: Any, base_logcdf: Callable[[Any], Any]) -> Any:
    r"""``log P(X + D <= value)`` as ``logsumexp_{|d| <= w} [log g(d) + log F_X(value - d)]``.

    The omitted terms ``sum_{|d| > w} g(d) F_X(value - d)`` lie in ``[0, tau(w)]``, so the
    result is a lower bound within ``tau(w) <= tol e^-40`` absolute, i.e. within relative
    ``tol`` wherever ``log P(Y <= value) >= -40``. ``base_logcdf`` gets a float array of shape
    ``(W, *value.shape)``.
    """
    value = bk.as_float(value)
    fin = bk.isfinite(value)
    y = bk.stop_gradient(bk.xp.floor(bk.where(fin, value, 0.0)))
    d = np.arange(-spec.half_width, spec.half_width + 1, dtype=np.float64)
    log_g = _lead(bk, _np_noise_logpmf(spec.family, spec.par, d), y.ndim)
    out = _safe_lse(bk, log_g + base_logcdf(y[None] - _lead(bk, d, y.ndim)), axis=0)
    return bk.where(fin, out, bk.where(value > 0, 0.0, -np.inf))


def log_error_bound(spec: NoiseSpec, logp_hat: Any) -> Any:
    """``log g(w+1) - log p_hat``: a bound on ``log((p - p_hat)/p)`` valid for every ``y``."""
    return spec.log_g_next - logp_hat


def check_multinomial_size(N: int) -> None:
    """Refuse ``(N+1)^2 > MAX_DP_CELLS`` (the exact dynamic programme would be too large)."""
    if (N + 1) ** 2 > MAX_DP_CELLS:
        raise NoiseawareValueError(
            f"{current_owner()}: an exact noisy multinomial with total count N={N} needs (N+1)^2 = {(N + 1) ** 2} "
            f"terms per cell and observation, more than {MAX_DP_CELLS} (N <= {math.isqrt(MAX_DP_CELLS) - 1}); "
            "refusing rather than approximating. Model the cells as independent noisy Poisson counts instead."
        )


@lru_cache(maxsize=32)
def _dp_tables(N: int) -> tuple[np.ndarray, np.ndarray]:
    s = np.arange(N + 1)
    diff = s[:, None] - s[None, :]
    return np.maximum(diff, 0).astype(np.int64), diff >= 0


def noisy_multinomial_logpmf(bk: Backend, spec: NoiseSpec, value: Any, log_p: Any, N: int) -> Any:
    r"""``log P(X + D = value)``, ``X ~ Multinomial(N, p)`` over the last axis, iid noise per cell.

    Exact (no truncation): the dynamic programme of the module docstring over the ``K`` cells.
    ``log_p`` (``(..., K)``, the log cell probabilities; ``-inf`` allowed) broadcasts against
    ``value`` (``(..., K)``); ``N`` is a concrete integer. ``-inf`` if any cell of ``value`` is
    not an integer.

    Examples
    --------
    >>> spec, _ = noise_spec(alpha=0.5)
    >>> lp = noisy_multinomial_logpmf(get_backend("numpy"), spec, np.array([2.0, 1.0]), np.log([0.5, 0.5]), 3)
    >>> round(float(lp), 6)
    -2.874868
    """
    xp = bk.xp
    value = bk.as_float(value)
    ok = xp.all(is_integral(bk, value), axis=-1)
    y = bk.stop_gradient(bk.where(is_integral(bk, value), value, 0.0))
    lp = xp.maximum(bk.as_float(log_p), _f64(bk, -1e300))
    K = int(np.shape(value)[-1]) if bk.name != "pytensor" else int(value.type.shape[-1])
    t = bk.asarray(np.arange(N + 1, dtype=np.float64))
    log_fact = bk.gammaln(t + 1.0)

    def cell(j: int) -> Any:  # (..., N+1): t log p_j - log t! + log g(y_j - t)
        yj = bk.expand(y[..., j])
        return t * bk.expand(lp[..., j]) - log_fact + noise_logpmf(bk, spec.family, _f64(bk, spec.par), yj, t)

    idx_np, tri_np = _dp_tables(N)
    idx, tri = bk.asarray(idx_np), bk.asarray(tri_np)
    f = cell(0)
    for j in range(1, K - 1):
        a = cell(j)
        m = xp.take(f, idx, axis=-1) + a[..., None, :]
        f = _safe_lse(bk, bk.where(tri, m, -np.inf), axis=-1)
    if K >= 2:
        last = f[..., ::-1] + cell(K - 1)
        out = _safe_lse(bk, last, axis=-1)
    else:
        out = f[..., N]
    out = out + _f64(bk, math.lgamma(N + 1.0))
    return bk.where(ok, out, -np.inf)
