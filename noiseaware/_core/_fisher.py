r"""Noisy Fisher noncentral hypergeometric counts: exact, windowed, batched.

Model (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula Correlations*,
§3.1-3.3, eqs. 7-11 and 17): an urn of ``N`` balls,
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
``J`` is the smallest integer with ``B(J) <= 1e-13`` (``O(sqrt(n))``, independent of epsilon).

**Modes in closed form.** The mode of ``f_psi`` is ``t* = ceil(x*)``, where ``x*`` is the root
in ``(lo - 1, hi]`` of ``e^psi (K - x)(m - x) = (x + 1)(x + 1 + N - K - m)`` (the continuous
version of ``w_{t+1} e^psi / w_t = 1``; Liao & Rosen 2001, Fog 2008). It is evaluated as a
distance from the end of the support the mode is pushed to (``hi - u`` for ``psi >= 0``,
``lo - 1 + v`` for ``psi < 0``): there the quadratic has only positive coefficients, so the
rationalised root has a relative error of a few units in the last place, an absolute error below
``1e-2`` for ``N <= 2**45``, and ``|ceil(x_hat) - t*| <= 1``. For two-sided geometric noise with
``alpha = e^-eps``, ``log h(t+1) - log h(t)`` is ``D(t) + eps`` below ``y`` and ``D(t) - eps``
from ``y`` on (``D(t) = log(w_{t+1}/w_t) + psi``), so the mode of ``h`` is
``clip(y, mode f_{psi-eps}, mode f_{psi+eps})``, again within 1 of its estimate. (For discrete
Gaussian noise the mode of ``h`` is found by a bisection with a fixed number of steps on the sign
of ``log h(t+1) - log h(t)``, which is exact.) Each window is therefore the static
``W = 2(J + 1) + 1`` terms starting at ``estimate - J - 1`` (clamped to the support): it contains
``[t* - J, t* + J]`` for the exact mode ``t*``, so the dropped mass of each sum is at most
``B(J) <= 1e-13`` relative, and the log-probability is within ``2e-13`` (plus rounding) of the
full sum.

**One pass, closed-form gradient.** Each window sum is taken relative to its (estimated) mode,
so no max-reduction is needed: every term is at most ``e^|D|`` of that mode term and the sum is
at least 1. The gradients are expectations under the windowed tilted laws computed in the same
pass: ``d/dpsi = E_h[T] - E_f[T]``, ``d/dalpha = E_h[|y - T|] / alpha`` (geometric),
``d/dsigma = E_h[(y - T)^2] / sigma^3`` (discrete Gaussian, plus the normalizer term). Under JAX
they are attached with ``jax.custom_jvp`` (they are themselves differentiable); other backends
differentiate the same expressions automatically. Log-weights are tabulated once per
``(N, K, m)`` by cumulative sums of exact log-ratios outward from the central mode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import current_owner
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ._backend import Backend
from ._noise import (
    discrete_gaussian_log_normalizer,
    geometric_log_normalizer,
    is_integral,
)

__all__ = [
    "TAIL_TOLERANCE",
    "FisherTable",
    "concrete_sizes",
    "copula_log_odds",
    "fisher_logpmf",
    "fisher_mean_var",
    "fisher_mode",
    "fisher_sample_from_uniform",
    "fisher_table",
    "median_split_table",
    "noisy_fisher_logcdf",
    "noisy_fisher_logpmf",
]

#: Bound on the relative mass dropped by each window.
TAIL_TOLERANCE = 1e-13
_SENTINEL = -1e300
#: Extra terms on each side of a window: the closed-form mode is within 1 of the exact one.
_SLACK = 1


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
        ``J`` (see module docstring); ``width = min(2(J + 1) + 1, hi - lo + 1)``.
    width : int
        Static number of terms in each window.
    steps : int
        Bisection steps (enough for the whole support; discrete Gaussian noise only).
    curvature : float
        ``c``, the lower bound on ``-`` the second difference of ``log w``.
    tail_bound : float
        ``B(J)``, the bound on the relative mass left out of each window (0 when the window
        covers the support).
    offset : int or ndarray
        Where each urn's ``log w`` starts in ``logw`` (0 for one urn).
    batched : bool
        True for a batch of urns of different sizes (:func:`fisher_table` with array
        arguments): ``N, K, m, lo, hi, offset`` are then integer arrays of one shape, ``logw``
        and ``dlog`` the urns' tables one after the other (padded by ``width`` entries), and
        ``half_width``, ``width``, ``steps`` the largest over the urns. A window of an urn
        smaller than ``width`` covers its whole support; its points beyond ``hi`` are masked.
    """

    N: Any  # int, or an int64 array for a batched table (also K, m, lo, hi)
    K: Any
    m: Any
    lo: Any
    hi: Any
    logw: np.ndarray
    dlog: np.ndarray
    half_width: int
    width: int
    steps: int
    curvature: float
    tail_bound: float
    offset: Any = 0
    batched: bool = False

    @property
    def size(self) -> Any:
        """Number of support points of ``T`` (an array for a batched table)."""
        return self.hi - self.lo + 1

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the batch of urns (``()`` for one urn)."""
        return tuple(np.shape(self.N))


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


#: Largest support of ``T`` a table is built for (checked before any allocation).
MAX_SUPPORT = 2**26
#: Bytes the table and its temporaries take per support point (float64 log-ratios, cumsum, int64 index).
_BYTES_PER_POINT = 48


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
        width = min(2 * (J + _SLACK) + 1, size)
        if width == size:
            bound = 0.0
    else:
        J, width, bound = size, size, 0.0
    steps = max(1, math.ceil(math.log2(size + 1)) + 1)
    logw.setflags(write=False)
    dlog.setflags(write=False)
    return FisherTable(N, K, m, lo, hi, logw, dlog, J, width, steps, curv, bound)


@lru_cache(maxsize=32)
def _fisher_batch(Ns: tuple[int, ...], Ks: tuple[int, ...], ms: tuple[int, ...], shape: tuple[int, ...]) -> FisherTable:
    """One table for a batch of urns (see :class:`FisherTable`, ``batched``)."""
    singles = [_fisher_table(N, K, m, True) for N, K, m in zip(Ns, Ks, ms, strict=True)]
    # J from the urns that need a window; an urn whose support fits in its window keeps it whole
    J = max((t.half_width for t in singles if t.width < t.size), default=0)
    width = max(t.width for t in singles)
    sizes = np.array([t.size for t in singles], dtype=np.int64)
    offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    pad = np.zeros(width)
    logw = np.concatenate([*(t.logw for t in singles), pad])
    dlog = np.concatenate([*(t.dlog for t in singles), pad + _SENTINEL])
    logw.setflags(write=False)
    dlog.setflags(write=False)

    def arr(xs: Any) -> np.ndarray:
        out = np.array(list(xs), dtype=np.int64).reshape(shape)
        out.setflags(write=False)
        return out

    return FisherTable(
        N=arr(Ns),
        K=arr(Ks),
        m=arr(ms),
        lo=arr(t.lo for t in singles),
        hi=arr(t.hi for t in singles),
        logw=logw,
        dlog=dlog,
        half_width=J,
        width=width,
        steps=max(t.steps for t in singles),
        curvature=min(t.curvature for t in singles),
        tail_bound=max(t.tail_bound for t in singles),
        offset=arr(offset),
        batched=True,
    )


def _is_traced(x: Any) -> bool:
    """True for a JAX tracer or a symbolic PyTensor variable (values unknown until run time)."""
    mod = type(x).__module__
    return mod.startswith(("jax", "pytensor")) and not isinstance(x, np.ndarray | np.generic)


def _static_sizes(**sizes: Any) -> dict[str, Any]:
    """Concrete integer sizes, or an error that says why they must be concrete."""
    owner = current_owner()
    out = {}
    for name, x in sizes.items():
        if _is_traced(x):
            try:
                x = np.asarray(x)  # a concrete jax.Array converts; a tracer does not
            except Exception:
                raise NoiseawareTypeError(
                    f"{owner}: {name} must be concrete (an int or an array of ints), not traced; got {name}={x!r}. "
                    f"{name} fixes the static window of each exact sum (its width, O(sqrt {name}), is an array "
                    "shape, which JAX must know before tracing). Close over it, or mark it static "
                    "(jax.jit(..., static_argnames=...)); arrays of different sizes are fine."
                ) from None
        out[name] = x
    return out


def concrete_sizes(name: str, x: Any, minimum: int = 0) -> Any:
    """A size argument (``n``, ``N``, ``K``, ``m``) as an ``int`` or an int64 array of sizes.

    Raises ``TypeError`` for a value traced under ``jax.jit`` (saying why it must be concrete) and
    for non-integers; ``ValueError`` for an entry below ``minimum``.
    """
    x = _static_sizes(**{name: x})[name]
    if np.ndim(x) == 0:
        return v.integer(name, x.item() if isinstance(x, np.ndarray | np.generic) else x, minimum=minimum)
    arr = v.integer_array(name, x)
    if arr.size == 0:
        v.refuse(name, "must not be empty", arr.tolist())
    if np.any(arr < minimum):
        v.refuse(name, f"must hold integers >= {minimum}", arr.tolist())
    arr.setflags(write=False)
    return arr


def fisher_table(N: Any, K: Any, m: Any, *, windowed: bool = True) -> FisherTable:
    """Validated, cached :class:`FisherTable` for concrete integers ``0 <= K, m <= N``.

    ``N``, ``K``, ``m`` may be arrays (broadcast together): a batch of urns of different sizes
    in one table (``batched``; e.g. counties of different sizes). ``windowed=False`` gives the
    full-sum table (the window is the whole support; one urn only); it is the baseline of the
    benchmarks.

    Raises
    ------
    TypeError
        For non-integers, or sizes traced under ``jax.jit`` (they fix static window widths).
    ValueError
        Unless ``0 <= K, m <= N``, ``1 <= N <= 2**45``, and the support is at most
        :data:`MAX_SUPPORT` points.

    Examples
    --------
    >>> tab = fisher_table(10, 5, 5)
    >>> (tab.lo, tab.hi, tab.width)
    (0, 5, 6)
    >>> tabs = fisher_table([10, 301], [5, 151], [5, 151])
    >>> tabs.shape, tabs.hi.tolist(), tabs.width
    ((2,), [5, 151], 71)
    """
    sizes = _static_sizes(N=N, K=K, m=m)
    N, K, m = sizes["N"], sizes["K"], sizes["m"]
    if any(np.ndim(x) > 0 for x in (N, K, m)):
        return _batch_table(N, K, m, windowed)
    N = v.integer("N", N, minimum=1)
    K = v.integer("K", K, minimum=0)
    m = v.integer("m", m, minimum=0)
    if K > N:
        v.refuse("K", f"must be <= N = {N}", K)
    if m > N:
        v.refuse("m", f"must be <= N = {N}", m)
    if N > 2**45:
        v.refuse("N", "must be <= 2**45 (exact integer log-ratios in float64)", N)
    size = min(K, m) - max(0, m - (N - K)) + 1
    if size > MAX_SUPPORT:
        v.refuse(
            "N",
            f"gives a support of {size:,} points for T, whose table would need about "
            f"{_BYTES_PER_POINT * size / 2**30:,.1f} GiB; at most {MAX_SUPPORT:,} points (N up to about "
            f"{2 * MAX_SUPPORT:,} for a median split) are supported",
            N,
        )
    return _fisher_table(N, K, m, bool(windowed))


def _batch_table(N: Any, K: Any, m: Any, windowed: bool) -> FisherTable:
    if not windowed:
        raise NoiseawareValueError(f"{current_owner()}: windowed=False is for one urn; got arrays of sizes.")
    arrs = [v.integer_array(name, x) for name, x in (("N", N), ("K", K), ("m", m))]
    try:
        shape = tuple(np.broadcast_shapes(*(a.shape for a in arrs)))
    except ValueError:
        raise NoiseawareValueError(
            f"{current_owner()}: N, K and m must broadcast together; got shapes {[a.shape for a in arrs]}."
        ) from None
    if math.prod(shape) == 0:
        raise NoiseawareValueError(f"{current_owner()}: sizes must not be empty; got shape {shape}.")
    Nb, Kb, mb = (np.broadcast_to(a, shape).reshape(-1) for a in arrs)
    for Ni, Ki, mi in set(zip(Nb.tolist(), Kb.tolist(), mb.tolist(), strict=True)):
        fisher_table(Ni, Ki, mi)  # validates each urn (and warms the cache)
    return _fisher_batch(tuple(Nb.tolist()), tuple(Kb.tolist()), tuple(mb.tolist()), shape)


def median_split_table(n: Any, *, per_pair: bool = False) -> FisherTable:
    """The table of the median-split 2x2 count: ``N = n``, ``K = m = ceil(n/2)`` (Wang et al. 2026, §3.1).

    ``n`` an int or an array of sizes (:func:`concrete_sizes`); ``per_pair=True`` gives an array
    of sizes a trailing axis, to broadcast over the pairs of a composite likelihood.
    """
    n = concrete_sizes("n", n, minimum=1)
    h = (n + 1) // 2
    if per_pair and np.ndim(n):
        n, h = n[..., None], h[..., None]
    return fisher_table(n, h, h)


def copula_log_odds(bk: Backend, r: Any) -> Any:
    r"""Log odds ratio of the median-split 2x2 table, Wang et al. (2026) eqs. (7)-(9).

    .. math:: \psi(r) = 2\log\frac{\pi + 2\arcsin r}{\pi - 2\arcsin r}.
    """
    xp = bk.xp
    a = 2.0 * xp.arcsin(r)
    return 2.0 * (xp.log(math.pi + a) - xp.log(math.pi - a))


def fisher_mode(bk: Backend, table: FisherTable, log_odds: Any) -> Any:
    r"""Closed-form mode of Fisher's noncentral hypergeometric law, within 1 of the exact mode.

    The exact mode is ``ceil(x*)`` with ``x*`` the root in ``(lo - 1, hi]`` of
    ``e^psi (K - x)(m - x) = (x + 1)(x + 1 + L)``, ``L = N - K - m``. With ``s = e^-|psi|``:
    for ``psi >= 0``, ``x* = hi - u`` where ``(1 - s) u^2 + (a + s(P + Q)) u - s P Q = 0``,
    ``P = hi + 1``, ``Q = hi + 1 + L``, ``a = K + m - 2 hi``; for ``psi < 0``, ``x* = lo - 1 + v``
    with the same equation for ``P = K - lo + 1``, ``Q = m - lo + 1``, ``a = 2 lo + L`` (one of
    the two products in each bracket vanishes at the end of the support, which is why the
    linear coefficient is positive). The positive root ``2 s P Q / (b + sqrt(b^2 + 4 (1-s) s P Q))``
    has only positive terms, hence a few ulps of relative error: ``|x_hat - x*| < 1e-2`` for
    ``N <= 2**45``, so ``|ceil(x_hat) - ceil(x*)| <= 1``. Returns integers clamped to the support;
    constant time, no loop. Not differentiable (integer valued).

    Examples
    --------
    >>> from noiseaware._core import get_backend
    >>> int(fisher_mode(get_backend("numpy"), fisher_table(10, 5, 5), 0.0))  # 2 and 3 are both modes
    2
    """
    xp = bk.xp
    lo, hi, K, m = (_f(x) for x in (table.lo, table.hi, table.K, table.m))
    L = _f(table.N) - K - m
    psi = bk.as_float(log_odds)
    # invalid parameters (NaN log-odds) must still index inside the table; the caller masks them
    psi = bk.where(bk.isfinite(psi), psi, 0.0)
    pos = psi >= 0
    a = xp.abs(psi)
    s = xp.exp(-a)
    one_m_s = -xp.expm1(-a)
    pq = bk.where(pos, (hi + 1) * (hi + 1 + L), (K - lo + 1) * (m - lo + 1))
    p_plus_q = bk.where(pos, 2 * hi + 2 + L, K + m - 2 * lo + 2)
    lin = bk.where(pos, K + m - 2 * hi, 2 * lo + L)
    b = lin + s * p_plus_q
    spq = s * pq
    root = 2.0 * spq / xp.maximum(b + xp.sqrt(b * b + 4.0 * one_m_s * spq), 1e-300)  # 0/0 -> 0
    x = bk.where(pos, hi - root, (lo - 1) + root)
    t = xp.minimum(xp.maximum(xp.ceil(x), lo), hi)
    return bk.as_int(bk.stop_gradient(t))


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


def _f(x: Any) -> Any:
    """A table's integer constant as a float (an array for a batched table)."""
    return np.asarray(x, dtype=np.float64) if np.ndim(x) else float(x)


def _index(table: FisherTable, t: Any) -> Any:
    """Position of support point ``t`` in ``table.logw``."""
    return table.offset + t - table.lo


def _broadcast(bk: Backend, *xs: Any, table: FisherTable | None = None) -> list[Any]:
    """Broadcast to a common shape (with a batched table's shape); the zeros carry no gradient."""
    zero = xs[0] * 0.0
    for x in xs[1:]:
        zero = zero + x * 0.0
    if table is not None and table.batched:
        zero = zero + np.zeros(table.shape)
    zero = bk.stop_gradient(zero)
    return [x + zero for x in xs]


def _start(bk: Backend, table: FisherTable, center: Any) -> Any:
    """Window start for an estimated mode ``center`` (within 1 of the exact mode)."""
    xp = bk.xp
    # (the outer max only binds for an urn of a batch smaller than the window: start at lo)
    return xp.maximum(xp.minimum(center - (table.half_width + _SLACK), table.hi - table.width + 1), table.lo)


def _windows(bk: Backend, table: FisherTable, psi: Any, t0: Any, start: Any) -> tuple[Any, Any, Any]:
    """Support points ``t`` of a window, ``k = t - t0`` (float) and ``log w_t - log w_{t0} + k psi``."""
    logw = bk.asarray(table.logw)
    t = bk.expand(start) + bk.arange(table.width)
    k = bk.as_float(t - bk.expand(t0))
    rel = bk.window(logw, table.offset + start - table.lo, table.width) - bk.expand(logw[_index(table, t0)])
    rel = rel + k * bk.expand(psi)
    if table.batched:  # points past the end of a small urn's support
        rel = bk.where(t <= bk.expand(bk.asarray(table.hi)), rel, -np.inf)
    return t, k, rel


def _h_mode(bk: Backend, table: FisherTable, noise: str, y: Any, yi: Any, psi: Any, par: Any) -> Any:
    """Mode of ``h(t) = w_t e^{psi t} g(y - t)`` (within 1; exact for discrete Gaussian noise)."""
    xp = bk.xp
    if noise == "geometric":
        eps = -xp.log(par)
        below = bk.as_float(fisher_mode(bk, table, psi - eps))
        above = bk.as_float(fisher_mode(bk, table, psi + eps))
        mode = xp.minimum(xp.maximum(y, below), above)
        return bk.as_int(bk.where(bk.isfinite(mode), mode, below))
    dlog = bk.asarray(table.dlog)
    lo = table.lo

    def delta_h(s: Any) -> Any:
        step = _noise_logkernel(bk, noise, bk.as_float(yi - s - 1), par) - _noise_logkernel(
            bk, noise, bk.as_float(yi - s), par
        )
        return dlog[table.offset + s - lo] + psi + step

    return _bisect(bk, delta_h, table, psi)


def _noisy_parts(bk: Backend, table: FisherTable, noise: str, y: Any, psi: Any, par: Any) -> dict[str, Any]:
    """The pieces of ``log sum_t h(t) - log C(psi)`` and of its gradient (one pass per window).

    ``y`` integral floats (``0`` where the observation is off the lattice), ``psi``, ``par``
    broadcast to one shape. Returns ``ref`` (``log h`` at its estimated mode, relative to
    ``w_{t0} e^{psi t0}``), the positive terms ``eh``/``ef`` of the two windows relative to their
    modes, ``kh``/``kf`` (``t - t0``) and ``d`` (``y - t`` on the numerator window).
    """
    xp = bk.xp
    yi = bk.stop_gradient(bk.as_int(y))
    psi_sg = bk.stop_gradient(psi)
    par_sg = bk.stop_gradient(par)
    t0 = fisher_mode(bk, table, psi_sg)
    th = bk.stop_gradient(_h_mode(bk, table, noise, bk.stop_gradient(y), yi, psi_sg, par_sg))
    _, kf, af = _windows(bk, table, psi, t0, _start(bk, table, t0))
    t_h, kh, ah = _windows(bk, table, psi, t0, _start(bk, table, th))
    d = bk.expand(y) - bk.as_float(t_h)
    ah = ah + _noise_logkernel(bk, noise, d, bk.expand(par))
    logw = bk.asarray(table.logw)
    dth = bk.as_float(th - t0)
    ref = (
        logw[_index(table, th)]
        - logw[_index(table, t0)]
        + dth * psi
        + _noise_logkernel(bk, noise, y - bk.as_float(th), par)
    )
    return {
        "ref": ref,
        "eh": xp.exp(ah - bk.expand(ref)),
        "ef": xp.exp(af),
        "kh": kh,
        "kf": kf,
        "d": d,
    }


def _value(bk: Backend, p: dict[str, Any]) -> tuple[Any, Any, Any]:
    xp = bk.xp
    sh = xp.sum(p["eh"], axis=-1)
    sf = xp.sum(p["ef"], axis=-1)
    return p["ref"] + xp.log(sh) - xp.log(sf), sh, sf


@lru_cache(maxsize=128)
def _jax_ratio(table: FisherTable, noise: str) -> Any:
    """``(y, psi, par) -> log sum_t h(t) - log C(psi)`` with a closed-form JVP (JAX only)."""
    import jax
    import jax.numpy as jnp
    from jax.custom_derivatives import SymbolicZero

    from ._backend import get_backend

    bk = get_backend("jax")

    @jax.custom_jvp
    def ratio(y: Any, psi: Any, par: Any) -> Any:
        return _value(bk, _noisy_parts(bk, table, noise, y, psi, par))[0]

    def _jvp(primals: Any, tangents: Any) -> Any:
        y, psi, par = primals
        ty, tpsi, tpar = tangents
        p = _noisy_parts(bk, table, noise, y, psi, par)
        out, sh, sf = _value(bk, p)
        eh, d = p["eh"], p["d"]
        tan = jnp.zeros_like(out)
        if not isinstance(tpsi, SymbolicZero):
            g = jnp.sum(eh * p["kh"], axis=-1) / sh - jnp.sum(p["ef"] * p["kf"], axis=-1) / sf
            tan = tan + g * tpsi
        if not isinstance(tpar, SymbolicZero):
            if noise == "geometric":
                g = jnp.sum(eh * jnp.abs(d), axis=-1) / (sh * par)
            else:
                g = jnp.sum(eh * d * d, axis=-1) / (sh * par**3)
            tan = tan + g * tpar
        if not isinstance(ty, SymbolicZero):
            if noise == "geometric":
                g = jnp.sum(eh * jnp.sign(d), axis=-1) * jnp.log(par) / sh
            else:
                g = -jnp.sum(eh * d, axis=-1) / (sh * par * par)
            tan = tan + g * ty
        return out, tan

    ratio.defjvp(_jvp, symbolic_zeros=True)
    return ratio


def fisher_logpmf(bk: Backend, table: FisherTable, value: Any, log_odds: Any) -> Any:
    """``log f_psi(value)`` (noise-free Fisher noncentral hypergeometric); ``-inf`` off the support."""
    xp = bk.xp
    value, psi = _broadcast(bk, bk.as_float(value), bk.as_float(log_odds), table=table)
    ok = is_integral(bk, value) & (value >= _f(table.lo)) & (value <= _f(table.hi))
    t = bk.stop_gradient(bk.as_int(bk.where(ok, value, _f(table.lo))))
    t0 = fisher_mode(bk, table, bk.stop_gradient(psi))
    _, _, af = _windows(bk, table, psi, t0, _start(bk, table, t0))
    logw = bk.asarray(table.logw)
    num = logw[_index(table, t)] - logw[_index(table, t0)] + bk.as_float(t - t0) * psi
    return bk.where(ok, num - xp.log(xp.sum(xp.exp(af), axis=-1)), -np.inf)


def noisy_fisher_logpmf(bk: Backend, table: FisherTable, value: Any, log_odds: Any, noise: str, par: Any) -> Any:
    r"""``log P(T + D = value)``, the exact marginal of Wang et al. (2026) eq. (17) with general margins.

    Two static windows of ``table.width`` terms (module docstring): dropped mass at most
    ``table.tail_bound <= 1e-13`` relative in each sum. Under JAX the gradient with respect to
    ``log_odds``, ``par`` and ``value`` is the closed-form expectation computed in the same pass
    (``jax.custom_jvp``).

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

    Examples
    --------
    >>> from noiseaware._core import get_backend
    >>> tab = fisher_table(1000, 500, 500)
    >>> round(float(noisy_fisher_logpmf(get_backend("numpy"), tab, 260, 0.3, "geometric", 0.5)), 6)
    -3.593740
    """
    value, psi, par = _broadcast(bk, bk.as_float(value), bk.as_float(log_odds), bk.as_float(par), table=table)
    ok = is_integral(bk, value)
    y = bk.where(ok, value, 0.0)
    if bk.name == "jax":
        ratio = _jax_ratio(table, noise)(y, psi, par)
    else:
        ratio = _value(bk, _noisy_parts(bk, table, noise, y, psi, par))[0]
    return bk.where(ok, ratio + _noise_lognorm(bk, noise, par), -np.inf)


def fisher_sample_from_uniform(bk: Backend, table: FisherTable, log_odds: Any, u: Any) -> Any:
    """Draws of ``T`` by inversion on the mode window: ``u`` uniform on [0, 1), same shape as ``log_odds``.

    The window holds all but a relative ``table.tail_bound <= 1e-13`` of the mass; that mass
    is never drawn. Returns float values (integral).
    """
    xp = bk.xp
    psi, u = _broadcast(bk, bk.as_float(log_odds), bk.as_float(u), table=table)
    t0 = fisher_mode(bk, table, psi)
    start = _start(bk, table, t0)
    _, _, af = _windows(bk, table, psi, t0, start)
    p = xp.exp(af)
    cdf = xp.cumsum(p, axis=-1)
    cdf = cdf / cdf[..., -1:]
    idx = xp.sum(bk.as_int(cdf <= bk.expand(u)), axis=-1)
    idx = xp.minimum(idx, table.width - 1)
    return bk.as_float(start + idx)


def fisher_mean_var(bk: Backend, table: FisherTable, log_odds: Any) -> tuple[Any, Any]:
    r"""``E[T]`` and ``Var[T]`` of Fisher's noncentral hypergeometric law, from the mode window.

    The window holds all but a relative ``table.tail_bound <= 1e-13`` of the mass (and of the
    first two moments' mass near the mode; the dropped tail points lie within the support, so
    the moments are off by at most ``1e-13 (hi - lo)^2`` absolute). Differentiable in
    ``log_odds`` (``dE[T]/dpsi = Var[T]``).
    """
    xp = bk.xp
    (psi,) = _broadcast(bk, bk.as_float(log_odds), table=table)
    t0 = fisher_mode(bk, table, bk.stop_gradient(psi))
    _, k, af = _windows(bk, table, psi, t0, _start(bk, table, t0))
    w = xp.exp(af)
    w = w / bk.expand(xp.sum(w, axis=-1))
    mk = xp.sum(w * k, axis=-1)
    var = xp.sum(w * (k - bk.expand(mk)) ** 2, axis=-1)
    return bk.as_float(t0) + mk, var


def noisy_fisher_logcdf(bk: Backend, table: FisherTable, value: Any, log_odds: Any, alpha: Any) -> Any:
    r"""``log P(T + D <= value)`` for two-sided geometric noise ``D``: exact windowed sum.

    .. math:: P(T + D \le y) = \sum_t f_\psi(t)\, G(y - t),

    ``G`` the closed-form geometric CDF. ``h(t) = w_t e^{\psi t} G(y - t)`` is log-concave in
    ``t`` with the curvature of ``log w_t`` (``log G`` is concave), so the window of the
    log-pmf works unchanged: centred at the mode of ``h`` (found by bisection on the sign of
    ``log h(t+1) - log h(t)``, exact), it drops at most ``table.tail_bound`` of the sum
    (relative), in the far left tail too. ``value = +inf`` gives 0, ``-inf`` gives ``-inf``.
    """
    from ._noise import two_sided_geometric_logcdf

    xp = bk.xp
    value, psi, par = _broadcast(bk, bk.as_float(value), bk.as_float(log_odds), bk.as_float(alpha), table=table)
    fin = bk.isfinite(value)
    y = xp.floor(bk.where(fin, value, 0.0))
    psi_sg = bk.stop_gradient(psi)
    t0 = fisher_mode(bk, table, psi_sg)
    dlog = bk.asarray(table.dlog)

    def log_g(t: Any) -> Any:
        return two_sided_geometric_logcdf(bk, y - bk.as_float(t), 0.0, bk.stop_gradient(par))

    def delta_h(s: Any) -> Any:
        return dlog[table.offset + s - table.lo] + psi_sg + log_g(s + 1) - log_g(s)

    th = bk.stop_gradient(_bisect(bk, delta_h, table, psi_sg))
    _, _, af = _windows(bk, table, psi, t0, _start(bk, table, t0))
    t_h, _, ah = _windows(bk, table, psi, t0, _start(bk, table, th))
    ah = ah + two_sided_geometric_logcdf(bk, bk.expand(y) - bk.as_float(t_h), 0.0, bk.expand(par))
    out = bk.logsumexp(ah, axis=-1) - bk.logsumexp(af, axis=-1)
    out = xp.minimum(out, 0.0)
    return bk.where(fin, out, bk.where(value > 0, 0.0, -np.inf))
