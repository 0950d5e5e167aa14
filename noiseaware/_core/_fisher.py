r"""Noisy Fisher noncentral hypergeometric counts: exact, windowed, batched.

Model (seed ``000_3eff9b68025f505f.txt`` §3.1-3.3, eqs. 7-11 and 17): an urn of ``N`` balls,
``K`` marked, ``m`` drawn; the number ``T`` of marked balls drawn follows Fisher's noncentral
hypergeometric law with log odds ratio ``psi``,

.. math:: f_\psi(t) = \frac{w_t e^{\psi t}}{C(\psi)},\qquad
          w_t = \binom{K}{t}\binom{N-K}{m-t},\qquad C(\psi) = \sum_t w_t e^{\psi t},

on ``t = max(0, m-(N-K)), ..., min(K, m)``; the release is ``Y = T + D`` with noise ``D`` of
log-concave pmf ``g`` (two-sided geometric or discrete Gaussian), so

.. math:: \log P(Y = y) = \log \sum_t w_t e^{\psi t} g(y - t) - \log C(\psi).

**Exact windows.** ``f_psi`` is log-concave and so is ``h(t) = w_t e^{psi t} g(y-t)``. The
second difference of ``log w_t`` does not depend on ``psi`` and is at most ``-c`` everywhere,
``c = min_t [log(w_{t}/w_{t+1}) - log(w_{t+1}/w_{t+2})] > 0`` (computed once per data set). At
the mode ``t*`` of a log-concave sequence whose log has curvature at least ``c``,
``h(t* +- j) <= h(t*) exp(-c j (j-1) / 2)``; so the mass outside ``[t* - J, t* + J]`` is at
most ``B(J) = 2 sum_{j>J} exp(-c j (j-1)/2)`` times ``h(t*)``, i.e. *relative* to the sum.
``J`` is the smallest integer with ``B(J) <= 1e-13``: a static window of ``W = 2J + 1`` terms
(``O(sqrt(n))``, independent of epsilon) with a dynamic start at the mode, found by a bisection
with a fixed number of steps on the sign of ``log h(t+1) - log h(t)``. Both sums (numerator and
``C(psi)``) are windowed this way, each relative to the mode of ``f`` so that large constants
cancel exactly. Log-weights are tabulated once per ``(N, K, m)`` by cumulative sums of exact
log-ratios outward from the central mode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .. import _validation as v
from ._backend import Backend
from ._noise import (
    discrete_gaussian_log_normalizer,
    geometric_log_normalizer,
    is_integral,
)

__all__ = [
    "NOISE_KINDS",
    "TAIL_TOLERANCE",
    "FisherTable",
    "copula_log_odds",
    "fisher_logpmf",
    "fisher_sample_from_uniform",
    "fisher_table",
    "noisy_fisher_logpmf",
]

#: Bound on the relative mass dropped by each window.
TAIL_TOLERANCE = 1e-13
#: Noise families supported by :func:`noisy_fisher_logpmf` and their parameter names.
NOISE_KINDS = {"geometric": "alpha", "discrete_gaussian": "sigma"}
_SENTINEL = -1e300


@dataclass(frozen=True, eq=False)
class FisherTable:
    """Constants of one ``(N, K, m)`` urn, computed once per data set.

    Attributes
    ----------
    N, K, m : int
        Urn size, marked balls, balls drawn.
    lo, hi : int
        Support of ``T``: ``max(0, m - (N - K))`` to ``min(K, m)``.
    logw : ndarray, shape (hi - lo + 1,)
        ``log w_t`` up to one additive constant.
    dlog : ndarray, shape (hi - lo + 1,)
        ``log w_{t+1} - log w_t`` for ``t = lo .. hi-1``, then a sentinel ``-1e300``.
    half_width : int
        ``J`` (see module docstring); ``width = min(2J + 1, hi - lo + 1)``.
    width : int
        Static number of terms in each window.
    steps : int
        Bisection steps (enough for the whole support).
    curvature : float
        ``c``, the lower bound on ``-`` the second difference of ``log w``.
    tail_bound : float
        ``B(J)``, the bound on the relative mass left out of each window (0 when the window
        covers the support).
    """

    N: int
    K: int
    m: int
    lo: int
    hi: int
    logw: np.ndarray
    dlog: np.ndarray
    half_width: int
    width: int
    steps: int
    curvature: float
    tail_bound: float

    @property
    def size(self) -> int:
        """Number of support points of ``T``."""
        return self.hi - self.lo + 1


def _log_ratios(N: int, K: int, m: int, lo: int, hi: int) -> np.ndarray:
    """``log(w_{t+1}/w_t) = log((K-t)(m-t)) - log((t+1)(N-K-m+t+1))`` for ``t = lo..hi-1``."""
    t = np.arange(lo, hi, dtype=np.int64)
    num = np.log((K - t).astype(np.float64)) + np.log((m - t).astype(np.float64))
    den = np.log((t + 1).astype(np.float64)) + np.log((N - K - m + t + 1).astype(np.float64))
    return num - den


def _half_width(c: float, tol: float) -> tuple[int, float]:
    """Smallest ``J`` with ``2 sum_{j>J} exp(-c j(j-1)/2) <= tol``, and that bound."""
    jmax = math.ceil(math.sqrt(2.0 * 800.0 / c)) + 3
    j = np.arange(1, jmax + 1, dtype=np.float64)
    terms = np.exp(-c * j * (j - 1.0) / 2.0)
    # tail[J] = sum_{j > J} terms  (J = 0 .. jmax); terms beyond jmax are < e^-800.
    tail = np.concatenate([np.cumsum(terms[::-1])[::-1], [0.0]]) * 2.0
    ok = np.nonzero(tail <= tol)[0]
    J = int(ok[0])
    return J, float(tail[J])


@lru_cache(maxsize=64)
def _fisher_table(N: int, K: int, m: int, windowed: bool) -> FisherTable:
    lo, hi = max(0, m - (N - K)), min(K, m)
    size = hi - lo + 1
    d = _log_ratios(N, K, m, lo, hi)
    # log w relative to the central mode (psi = 0), summed outward for accuracy.
    mode = int(np.searchsorted(-d, 0.0)) if d.size else 0  # first t-index with d <= 0
    logw = np.zeros(size)
    logw[mode + 1 :] = np.cumsum(d[mode:])
    logw[:mode] = -np.cumsum(d[:mode][::-1])[::-1]
    dlog = np.concatenate([d, [_SENTINEL]])
    if size >= 3:
        curv = float(np.min(d[:-1] - d[1:])) * (1.0 - 1e-9)
    else:
        curv = math.inf
    if windowed and size >= 3:
        J, bound = _half_width(curv, TAIL_TOLERANCE)
        width = min(2 * J + 1, size)
        if width == size:
            bound = 0.0
    else:
        J, width, bound = size, size, 0.0
    steps = max(1, math.ceil(math.log2(size + 1)) + 1)
    logw.setflags(write=False)
    dlog.setflags(write=False)
    return FisherTable(N, K, m, lo, hi, logw, dlog, J, width, steps, curv, bound)


def fisher_table(N: Any, K: Any, m: Any, *, windowed: bool = True, owner: str = "NoisyHypergeom") -> FisherTable:
    """Validated, cached :class:`FisherTable` for concrete integers ``0 <= K, m <= N``.

    ``windowed=False`` gives the full-sum table (the window is the whole support); it is the
    baseline of the benchmarks.

    Examples
    --------
    >>> tab = fisher_table(10, 5, 5)
    >>> (tab.lo, tab.hi, tab.width)
    (0, 5, 6)
    """
    N = v.integer(owner, "N", N, minimum=1)
    K = v.integer(owner, "K", K, minimum=0)
    m = v.integer(owner, "m", m, minimum=0)
    if K > N:
        v.fail(owner, "K", f"must be <= N = {N}", K)
    if m > N:
        v.fail(owner, "m", f"must be <= N = {N}", m)
    if N > 2**45:
        v.fail(owner, "N", "must be <= 2**45 (exact integer log-ratios in float64)", N)
    return _fisher_table(N, K, m, bool(windowed))


def copula_log_odds(bk: Backend, r: Any) -> Any:
    r"""Log odds ratio of the median-split 2x2 table, seed 000 eqs. (7)-(9).

    .. math:: \psi(r) = 2\log\frac{\pi + 2\arcsin r}{\pi - 2\arcsin r}.
    """
    xp = bk.xp
    a = 2.0 * xp.arcsin(r)
    return 2.0 * (xp.log(math.pi + a) - xp.log(math.pi - a))


def _bisect(bk: Backend, delta: Any, table: FisherTable, like: Any) -> Any:
    """First ``t`` in ``[lo, hi]`` with ``delta(t) <= 0`` (``hi`` if none); fixed step count.

    ``delta`` must be nonincreasing in ``t`` (log-concavity); ``delta(hi) = -1e300``.
    """
    xp = bk.xp
    zero = bk.as_int(like * 0)
    a = zero + table.lo
    b = zero + table.hi
    for _ in range(table.steps):
        mid = (a + b) // 2
        cond = delta(mid) <= 0
        b = bk.where(cond, mid, b)
        a = bk.where(cond, a, xp.minimum(mid + 1, b))
    return a


def _noise_logkernel(bk: Backend, noise: str, d: Any, par: Any) -> Any:
    if noise == "geometric":
        return bk.xp.abs(d) * bk.xp.log(par)
    return -(d * d) / (2.0 * par * par)


def _noise_lognorm(bk: Backend, noise: str, par: Any) -> Any:
    if noise == "geometric":
        return geometric_log_normalizer(bk, par)
    return -discrete_gaussian_log_normalizer(bk, par)


def _broadcast(bk: Backend, *xs: Any) -> list[Any]:
    zero = xs[0] * 0.0
    for x in xs[1:]:
        zero = zero + x * 0.0
    return [x + zero for x in xs]


def _windows(bk: Backend, table: FisherTable, psi: Any, t0: Any, start: Any) -> tuple[Any, Any]:
    """Support points of a window and ``log w_t - log w_{t0} + (t - t0) psi`` on it."""
    t = bk.expand(start) + bk.arange(table.width)
    logw = bk.asarray(table.logw)
    rel = bk.window(logw, start - table.lo, table.width) - bk.expand(logw[t0 - table.lo])
    return t, rel + bk.as_float(t - bk.expand(t0)) * bk.expand(psi)


def _start(bk: Backend, table: FisherTable, mode: Any) -> Any:
    xp = bk.xp
    return xp.minimum(xp.maximum(mode - table.half_width, table.lo), table.hi - table.width + 1)


def fisher_logpmf(bk: Backend, table: FisherTable, value: Any, log_odds: Any) -> Any:
    """``log f_psi(value)`` (noise-free Fisher noncentral hypergeometric); ``-inf`` off the support."""
    value, psi = _broadcast(bk, bk.as_float(value), bk.as_float(log_odds))
    ok = is_integral(bk, value) & (value >= table.lo) & (value <= table.hi)
    t = bk.stop_gradient(bk.as_int(bk.where(ok, value, float(table.lo))))
    dlog = bk.asarray(table.dlog)
    psi_sg = bk.stop_gradient(psi)
    t0 = bk.stop_gradient(_bisect(bk, lambda s: dlog[s - table.lo] + psi_sg, table, psi))
    _, af = _windows(bk, table, psi, t0, _start(bk, table, t0))
    logw = bk.asarray(table.logw)
    num = logw[t - table.lo] - logw[t0 - table.lo] + bk.as_float(t - t0) * psi
    return bk.where(ok, num - bk.logsumexp(af, axis=-1), -np.inf)


def noisy_fisher_logpmf(bk: Backend, table: FisherTable, value: Any, log_odds: Any, noise: str, par: Any) -> Any:
    r"""``log P(T + D = value)``, the exact marginal of seed 000 eq. (17) with general margins.

    Parameters
    ----------
    bk : Backend
        Array backend.
    table : FisherTable
        Constants of the urn (from :func:`fisher_table`).
    value : array_like
        Observed noisy counts (any integers; ``-inf`` for non-integers).
    log_odds : array_like
        ``psi``; broadcasts with ``value`` and ``par``.
    noise : {"geometric", "discrete_gaussian"}
        Noise family.
    par : array_like
        ``alpha`` in (0, 1) or ``sigma > 0``.
    """
    xp = bk.xp
    value, psi, par = _broadcast(bk, bk.as_float(value), bk.as_float(log_odds), bk.as_float(par))
    ok = is_integral(bk, value)
    y = bk.where(ok, value, 0.0)
    yi = bk.stop_gradient(bk.as_int(y))
    dlog = bk.asarray(table.dlog)
    lo = table.lo
    psi_sg = bk.stop_gradient(psi)
    par_sg = bk.stop_gradient(par)

    def delta_f(s: Any) -> Any:
        return dlog[s - lo] + psi_sg

    def delta_h(s: Any) -> Any:
        step = _noise_logkernel(bk, noise, bk.as_float(yi - s - 1), par_sg) - _noise_logkernel(
            bk, noise, bk.as_float(yi - s), par_sg
        )
        return dlog[s - lo] + psi_sg + step

    t0 = bk.stop_gradient(_bisect(bk, delta_f, table, psi))
    th = bk.stop_gradient(_bisect(bk, delta_h, table, psi))
    _, af = _windows(bk, table, psi, t0, _start(bk, table, t0))
    t, ah = _windows(bk, table, psi, t0, _start(bk, table, th))
    ah = ah + _noise_logkernel(bk, noise, bk.expand(y) - bk.as_float(t), bk.expand(par))
    out = bk.logsumexp(ah, axis=-1) - bk.logsumexp(af, axis=-1) + _noise_lognorm(bk, noise, par)
    del xp
    return bk.where(ok, out, -np.inf)


def fisher_sample_from_uniform(bk: Backend, table: FisherTable, log_odds: Any, u: Any) -> Any:
    """Draws of ``T`` by inversion on the mode window: ``u`` uniform on [0, 1), same shape as ``log_odds``.

    The window holds all but a relative ``table.tail_bound <= 1e-13`` of the mass; that mass
    is never drawn. Returns float values (integral).
    """
    xp = bk.xp
    psi, u = _broadcast(bk, bk.as_float(log_odds), bk.as_float(u))
    dlog = bk.asarray(table.dlog)
    t0 = _bisect(bk, lambda s: dlog[s - table.lo] + psi, table, psi)
    start = _start(bk, table, t0)
    _, af = _windows(bk, table, psi, t0, start)
    p = xp.exp(af - bk.expand(bk.logsumexp(af, axis=-1)))
    cdf = xp.cumsum(p, axis=-1)
    cdf = cdf / cdf[..., -1:]
    idx = xp.sum(bk.as_int(cdf <= bk.expand(u)), axis=-1)
    idx = xp.minimum(idx, table.width - 1)
    return bk.as_float(start + idx)
