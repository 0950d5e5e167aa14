"""Backend adapters: one small namespace per array library, so the core math is written once.

Each :class:`Backend` maps the handful of primitives the core needs onto a backend's *stable*
functions: ``logsumexp``, ``log1mexp``, ``gammaln``, ``where`` (``switch`` in PyTensor), gathers
and a gradient stop. JAX and PyTensor are imported only when their backend is first requested,
so importing :mod:`noiseaware._core` never imports them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from scipy import special

__all__ = ["Backend", "get_backend"]


@dataclass(frozen=True)
class Backend:
    """A namespace of array primitives (see module docstring).

    Attributes
    ----------
    name : str
        ``"numpy"``, ``"jax"`` or ``"pytensor"``.
    xp : module
        The array module (``numpy``, ``jax.numpy``, ``pytensor.tensor``) for elementwise
        functions shared by all three (``abs, exp, log, log1p, expm1, floor, sqrt, arcsin,
        minimum, maximum, sum``).
    ndtri, log_ndtr : callable
        The standard normal quantile and log-CDF (SciPy / ``jax.scipy.special``; in PyTensor
        through ``erfcinv`` and ``erfcx``, accurate in the left tail).
    """

    name: str
    xp: Any
    where: Any
    logsumexp: Any
    gammaln: Any
    asarray: Any
    as_int: Any
    as_float: Any
    stop_gradient: Any
    isfinite: Any
    eq: Any
    ndtri: Any = None
    log_ndtr: Any = None

    def log1mexp(self, x: Any) -> Any:
        """``log(1 - exp(x))`` for ``x < 0``, switching between ``log(-expm1 x)`` and ``log1p(-exp x)``."""
        xp = self.xp
        near = x > -math.log(2.0)
        safe_near = self.where(near, x, -1.0)
        safe_far = self.where(near, -1.0, x)
        return self.where(near, xp.log(-xp.expm1(safe_near)), xp.log1p(-xp.exp(safe_far)))

    def arange(self, n: int) -> Any:
        """``0, 1, ..., n-1`` as an int64 constant."""
        return self.asarray(np.arange(n, dtype=np.int64))

    def window(self, table: Any, start: Any, width: int) -> Any:
        """``table[start + 0 .. start + width - 1]`` for each entry of the integer array ``start``.

        JAX uses ``lax.dynamic_slice`` (much faster on CPU than a gather fused into a reduction);
        the others gather with an index array.
        """
        if self.name == "jax":
            import jax

            flat = start.reshape(-1)
            out = jax.vmap(lambda s: jax.lax.dynamic_slice(table, (s,), (width,)))(flat)
            return out.reshape((*start.shape, width))
        return table[self.expand(start) + self.arange(width)]

    def expand(self, x: Any) -> Any:
        """Append a trailing axis of length 1."""
        return x[..., None]


def _numpy_logsumexp(x: Any, axis: int = -1) -> Any:
    with np.errstate(invalid="ignore"):
        return special.logsumexp(x, axis=axis)


@cache
def _numpy() -> Backend:
    return Backend(
        name="numpy",
        xp=np,
        where=np.where,
        logsumexp=_numpy_logsumexp,
        gammaln=special.gammaln,
        asarray=np.asarray,
        as_int=lambda x: np.asarray(x).astype(np.int64),
        as_float=lambda x: np.asarray(x, dtype=np.float64),
        stop_gradient=lambda x: x,
        isfinite=np.isfinite,
        eq=np.equal,
        ndtri=special.ndtri,
        log_ndtr=special.log_ndtr,
    )


def _require_x64() -> None:
    """Raise if JAX runs in float32: the laws' exactness (1e-9 on log-probabilities) needs float64."""
    import jax

    if not jax.config.read("jax_enable_x64"):
        from ..exceptions import NoiseawareValueError

        raise NoiseawareValueError(
            "noiseaware: JAX float64 must be on (jax_enable_x64=True); got jax_enable_x64=False. The noise "
            "laws and Fisher windows are exact only in float64 (float32 loses whole units at counts near 1e7). "
            "Call noiseaware.config.configure() (or numpyro.enable_x64()) at the top of your script, before "
            "any JAX array is made; the package's own fits switch it on for their own duration."
        )


@cache
def _jax() -> Backend:
    import jax
    import jax.numpy as jnp
    from jax.scipy import special as jsp

    def as_float(x: Any) -> Any:
        _require_x64()
        return jnp.asarray(x, dtype=jnp.float64)

    return Backend(
        name="jax",
        xp=jnp,
        where=jnp.where,
        logsumexp=lambda x, axis=-1: jsp.logsumexp(x, axis=axis),
        gammaln=jsp.gammaln,
        asarray=jnp.asarray,
        as_int=lambda x: jnp.asarray(x).astype(jnp.int64),
        as_float=as_float,
        stop_gradient=jax.lax.stop_gradient,
        isfinite=jnp.isfinite,
        eq=jnp.equal,
        ndtri=jsp.ndtri,
        log_ndtr=jsp.log_ndtr,
    )


def _pytensor_log_ndtr(x: Any) -> Any:
    """``log Phi(x)`` without underflow in the left tail: ``log(erfcx(-x/sqrt2)/2) - x**2/2`` for ``x < 0``."""
    import pytensor.tensor as pt

    z = x / math.sqrt(2.0)
    neg = x < 0
    zn = pt.switch(neg, z, 0.0)
    zp = pt.switch(neg, 0.0, z)
    left = pt.log(pt.erfcx(-zn) / 2.0) - zn * zn
    right = pt.log1p(-pt.erfc(zp) / 2.0)
    return pt.switch(neg, left, right)


@cache
def _pytensor() -> Backend:
    import pytensor.tensor as pt
    from pytensor.gradient import disconnected_grad

    return Backend(
        name="pytensor",
        xp=pt,
        where=pt.switch,
        logsumexp=lambda x, axis=-1: pt.logsumexp(x, axis=axis),
        gammaln=pt.gammaln,
        asarray=pt.as_tensor_variable,
        as_int=lambda x: pt.cast(x, "int64"),
        as_float=lambda x: pt.cast(x, "float64"),
        stop_gradient=disconnected_grad,
        isfinite=lambda x: pt.invert(pt.isinf(x)) & pt.invert(pt.isnan(x)),
        eq=pt.eq,
        ndtri=lambda u: -math.sqrt(2.0) * pt.erfcinv(2.0 * u),
        log_ndtr=_pytensor_log_ndtr,
    )


def get_backend(name: str) -> Backend:
    """Return the backend called ``name`` (``"numpy"``, ``"jax"`` or ``"pytensor"``).

    Examples
    --------
    >>> get_backend("numpy").name
    'numpy'
    """
    factories = {"numpy": _numpy, "jax": _jax, "pytensor": _pytensor}
    if name not in factories:
        raise ValueError(f"get_backend: name must be one of {sorted(factories)}; got name={name!r}.")
    return factories[name]()
