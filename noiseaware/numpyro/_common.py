"""Shared plumbing of the NumPyro front end: constraints, parameter conversion, ``from_release``.

Importing it changes no JAX setting: the laws need ``jax_enable_x64`` and say so when it is off
(:func:`noiseaware.config.configure` or ``numpyro.enable_x64()`` turns it on).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
from numpyro.distributions import constraints

from .. import _core
from .._core import _specs
from ..exceptions import NoiseawareValueError

__all__ = ["RELEASE_VALUES"]

BK = _core.get_backend("jax")
INT = jnp.int64


# The windowed sums are a few hundred small operations; jit them once per table so that eager
# calls do not dispatch (and compile) each operation separately. Inside an outer jit they inline.
@partial(jax.jit, static_argnames=("name", "table", "static"))
def spec_logp(name: str, table: Any, static: tuple[tuple[str, Any], ...], value: Any, params: dict[str, Any]) -> Any:
    """``SPECS[name].logp`` in JAX, compiled once per (class, table, static parameters such as the family)."""
    return _specs.SPECS[name].part("logp")(BK, value, table=table, **dict(static), **params)


@partial(jax.jit, static_argnames=("table",))
def fisher_draw(table: Any, log_odds: Any, u: Any) -> Any:
    """Jitted inversion draw of the latent Fisher count."""
    return _core.fisher_sample_from_uniform(BK, table, log_odds, u)


def uniform(key: Any, shape: tuple[int, ...]) -> Any:
    """Float64 uniforms."""
    return jax.random.uniform(key, shape, dtype=jnp.float64)


def noise_from_key(key: Any, family: str, par: Any, shape: tuple[int, ...]) -> Any:
    """Noise of ``shape`` through the spec's uniform transforms."""
    u = uniform(key, _specs.noise_uniform_shape(family, shape))
    return _specs.noise_from_uniforms(BK, family, jnp.broadcast_to(par, shape), u)


#: Default of ``obs`` in every ``from_release``: observe the release's values.
RELEASE_VALUES: Any = type(
    "ReleaseValues",
    (),
    {"__repr__": lambda self: "RELEASE_VALUES", "__doc__": "Default ``obs`` of ``from_release``: the release values."},
)()


def observe(name: str, d: Any, values: Any, obs: Any) -> Any:
    """``numpyro.sample(name, d, obs=...)`` for ``from_release``, shaped like the release.

    ``d`` is expanded to the release's batch shape when its own is smaller (one parameter for
    every cell), so a predictive draw (``obs=None``) has the release's shape. ``obs`` defaults
    to the release's values; ``None`` leaves the site unobserved (NumPyro's idiom for prior and
    posterior predictive checks with :class:`numpyro.infer.Predictive`); any other array is
    observed instead (e.g. a second release of the same shape).
    """
    values = jnp.asarray(values)
    batch = tuple(values.shape[: values.ndim - len(d.event_shape)])
    try:
        shape = tuple(np.broadcast_shapes(batch, d.batch_shape))
    except ValueError:
        raise NoiseawareValueError(
            f"{type(d).__name__}.from_release: the parameters' batch shape {d.batch_shape} does not broadcast "
            f"with the release's shape {batch}."
        ) from None
    if shape != d.batch_shape:
        d = d.expand(shape)
    if obs is RELEASE_VALUES:
        obs = values
    return numpyro.sample(name, d, obs=obs)


class Integer(constraints.Constraint):  # type: ignore[type-arg]
    """All integers (NumPyro's public integer constraints are bounded), on NumPyro's public ``Constraint``."""

    is_discrete = True
    event_dim = 0

    def __call__(self, x: Any) -> Any:
        xp = jnp if isinstance(x, jax.Array | jax.core.Tracer) else np
        finite = xp.isfinite(x)
        return finite & (xp.floor(xp.where(finite, x, 0)) == xp.where(finite, x, 0.5))

    def __repr__(self) -> str:
        return "Integer()"

    def feasible_like(self, prototype: Any) -> Any:
        return jnp.zeros(jnp.shape(prototype))

    def tree_flatten(self) -> Any:
        return (), ((), dict())

    def eq(self, other: object, static: bool = False) -> Any:
        return isinstance(other, Integer)


integer = Integer()


def f64(x: Any) -> Any:
    """float64 parameter; concrete inputs stay NumPy arrays so ``validate_args`` can check them under jit."""
    if isinstance(x, jax.Array | jax.core.Tracer):
        return jnp.asarray(x, dtype=jnp.float64)
    return np.asarray(x, dtype=np.float64)


def _exp(z: Any) -> Any:
    return np.exp(z) if isinstance(z, np.ndarray | np.generic) else jnp.exp(z)


def alpha_arg(owner: str, alpha: Any, epsilon: Any, sensitivity: Any, *, name: str = "epsilon") -> Any:
    """``alpha`` from exactly one of ``alpha`` or ``epsilon`` (:func:`_specs.resolve_alpha`); concrete stays NumPy."""
    return _specs.resolve_alpha(owner, alpha, epsilon, sensitivity, name=name, to_float=f64, exp=_exp)
