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
from .. import _validation as v
from .._core import _specs
from .._core._backend import _require_x64
from .._validation import current_owner, owner_scope
from ..exceptions import NoiseawareValueError

__all__ = ["RELEASE_VALUES"]

BK = _core.get_backend("jax")


def require_x64() -> None:
    """Raise :class:`NoiseawareValueError` naming ``jax_enable_x64`` if JAX runs in float32.

    The float64 converters (:func:`f64`, ``BK.as_float``) check this themselves; :class:`Noisy`, which
    makes no float64 array of its own before its compiled log-pmf, calls it first. JAX would only
    warn and truncate to float32. In float32, NUTS on a regression release of 5,000 rows (d = 5) left a
    chain stuck at its start (a step size of ~1e-7) where the same chain in float64 mixed.
    """
    _require_x64()


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

#: The pattern that works inside ``scan``: named in the errors and in ``docs/gallery.md``.
SCAN_PATTERN = (
    "pass the release's values through the scan's xs and observe each step's slice, "
    "{cls}.from_release(name, release, ..., obs=y_t), or equivalently "
    "numpyro.sample(name, {cls}(..., noise=release), obs=y_t) for Noisy"
)


def in_scan() -> bool:
    """Whether the caller runs inside the body of :func:`numpyro.contrib.control_flow.scan`.

    The scan marks each site of its body with the step index (``infer["_scan_current_index"]``,
    through :class:`numpyro.handlers.infer_config`); this asks the active handlers for that mark.
    """
    from numpyro.handlers import infer_config
    from numpyro.primitives import _PYRO_STACK

    probe = {"type": "sample", "name": "", "infer": {}, "kwargs": {}}
    for handler in _PYRO_STACK:
        if isinstance(handler, infer_config):
            try:
                if "_scan_current_index" in handler.config_fn(probe):
                    return True
            except Exception:  # a user's config_fn that needs other message fields: not scan's
                continue
    return False


def _one_step_shapes(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The release's batch shape with one axis removed (the shapes of one step of a scan over that axis)."""
    return [shape[:k] + shape[k + 1 :] for k in range(len(shape))]


def observe(name: str, d: Any, values: Any, obs: Any) -> Any:
    """``numpyro.sample(name, d, obs=...)`` for ``from_release``, shaped like the release, as the host PPL shapes it.

    ``d`` is expanded to the release's batch shape when its own is smaller (one parameter for
    every cell), so a predictive draw (``obs=None``) has the release's shape. ``obs`` defaults
    to the release's values; ``None`` leaves the site unobserved (NumPyro's idiom for prior and
    posterior predictive checks with :class:`numpyro.infer.Predictive`); any other array is
    observed instead (e.g. a second release of the same shape).

    Inside :class:`numpyro.plate` the release's axes must be the plates' axes (a plate's ``dim``
    counts from the right of the release's batch shape); a subsampled plate observes its
    subsample of the release (:func:`numpyro.subsample`). Inside
    :func:`numpyro.contrib.control_flow.scan` a step observes one slice of the release, given as
    ``obs`` (from the scan's ``xs``); the default, the whole release, is refused there, since every
    step would observe every step's values. With ``obs=None`` a step draws one slice, shaped like
    the release with its leading axis removed (the first axis whose removal fits the parameters).
    Under :func:`jax.vmap` shapes are per example and nothing changes.
    """
    owner = f"{type(d).__name__}.from_release"
    with owner_scope(owner):
        values = jnp.asarray(values)
        event = len(d.event_shape)
        scanning = in_scan()
        if obs is RELEASE_VALUES and scanning:
            raise NoiseawareValueError(
                f"{owner}: inside numpyro's scan every step would observe the whole release (shape "
                f"{values.shape}), once per step; {SCAN_PATTERN.format(cls=type(d).__name__)}."
            )
        try:
            full = numpyro.subsample(values, event_dim=event) if not scanning else values
        except ValueError as err:
            raise NoiseawareValueError(
                f"{owner}: the release's batch shape {values.shape[: values.ndim - event]} does not fit the enclosing "
                f"plates ({err}); put each plate on the release's axis of its size (dim counts from the right: a "
                f"release of shape (T, S) takes plate('t', T, dim=-2) and plate('s', S, dim=-1))."
            ) from None
        release_batch = tuple(full.shape[: full.ndim - event])
        if obs is RELEASE_VALUES:
            obs, target = full, release_batch
        elif obs is None:
            target = release_batch if not scanning else _step_shape(release_batch, d.batch_shape)
        else:
            obs_batch = tuple(jnp.shape(obs)[: jnp.ndim(obs) - event])
            allowed = _one_step_shapes(release_batch) if scanning else [release_batch]
            if obs_batch not in allowed:
                where = "one step of the release (its shape with one axis removed)" if scanning else "the release"
                raise NoiseawareValueError(
                    f"{owner}: obs must have the batch shape of {where}, {' or '.join(map(str, allowed)) or '()'}; "
                    f"got obs with batch shape {obs_batch}."
                )
            target = obs_batch
        try:
            shape = tuple(np.broadcast_shapes(target, d.batch_shape))
        except ValueError:
            shape = None
        if shape != target:
            raise NoiseawareValueError(
                f"{owner}: the parameters' batch shape {d.batch_shape} does not broadcast with the release's shape "
                f"{target}."
            )
        if shape != d.batch_shape:
            d = d.expand(shape)
        return numpyro.sample(name, d, obs=obs)


def promote_batch_shape_optional(d: Any) -> Any:
    """NumPyro's ``promote_batch_shape`` (used by ``scan``) for a law whose unused parameter is ``None``.

    The default reads every parameter of ``arg_constraints``; ``NoisyHypergeom`` sets one of
    ``alpha`` and ``sigma``, and the other is ``None``, which is skipped here.
    """
    import copy

    shapes = [d.batch_shape]
    for attr_name, constraint in d.arg_constraints.items():
        attr = getattr(d, attr_name)
        if attr is None:
            continue
        shapes.append(jnp.shape(attr)[: max(0, jnp.ndim(attr) - constraint.event_dim)])
    new = copy.copy(d)
    new._batch_shape = tuple(jnp.broadcast_shapes(*shapes))
    return new


def _step_shape(release_batch: tuple[int, ...], batch: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of one scan step's draw: the release's with the first axis removed that fits ``batch``."""
    owner = current_owner()
    for step in _one_step_shapes(release_batch):
        try:
            if tuple(np.broadcast_shapes(step, batch)) == step:
                return step
        except ValueError:
            continue
    raise NoiseawareValueError(
        f"{owner}: inside numpyro's scan a step draws one slice of the release (shape {release_batch} with one axis "
        f"removed); the parameters' batch shape {batch} fits none of them."
    )


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
    """float64 parameter; concrete inputs stay NumPy arrays so ``validate_args`` can check them under jit.

    Raises :class:`NoiseawareValueError` naming ``jax_enable_x64`` when JAX runs in float32 (as the JAX
    backend's ``as_float`` does): every float64 parameter of the NumPyro laws passes through one of the two.
    """
    _require_x64()
    if isinstance(x, jax.Array | jax.core.Tracer):
        return jnp.asarray(x, dtype=jnp.float64)
    return np.asarray(x, dtype=np.float64)


def _exp(z: Any) -> Any:
    return np.exp(z) if isinstance(z, np.ndarray | np.generic) else jnp.exp(z)


def alpha_arg(alpha: Any, epsilon: Any, sensitivity: Any, *, name: str = "epsilon") -> Any:
    """``alpha`` from exactly one of ``alpha`` or ``epsilon`` (:func:`_specs.resolve_alpha`); concrete stays NumPy."""
    return _specs.resolve_alpha(alpha, epsilon, sensitivity, name=name, to_float=f64, exp=_exp)


def pair_alpha_arg(alpha: Any, epsilon_per_pair: Any, epsilon: Any) -> Any:
    """``alpha`` of a pair's count from ``alpha`` or ``epsilon_per_pair``; the total ``epsilon`` is refused.

    See :func:`noiseaware._validation.no_total_epsilon` for why the per-pair budget has its own name.
    """
    v.no_total_epsilon(epsilon)
    return alpha_arg(alpha, epsilon_per_pair, 1.0, name="epsilon_per_pair")
