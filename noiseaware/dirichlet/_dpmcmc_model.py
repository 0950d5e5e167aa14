r"""The model of :func:`noiseaware.dirichlet.dpmcmc`: the prior on alpha and the initial values (module private)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist

from .. import _validation as v
from .._core._dirichlet_release import LogMeanPart
from .._validation import owned
from ..exceptions import NoiseawareTypeError
from ._boots import start_alpha

__all__ = ["P1_RATE", "P1_SHAPE"]

_OWNER = "dpmcmc"
_ALPHA = "alpha"
#: Prior p1 of Guo et al. (2022) §4.2.1: independent Gamma(shape 1, rate 0.1).
P1_SHAPE = 1.0
P1_RATE = 0.1


# ----------------------------------------------------------------------------- prior
@owned(_OWNER)
def _prior_logdensity(prior: Any, d: int) -> tuple[Callable[[Any], Any], str]:
    """``alpha -> log pi_0(alpha)`` (a JAX scalar) and a description of the prior."""
    if prior is None:
        p1 = dist.Gamma(P1_SHAPE, P1_RATE)
        return (lambda alpha: jnp.sum(p1.log_prob(alpha))), f"p1: independent Gamma({P1_SHAPE:g}, {P1_RATE:g})"
    if isinstance(prior, dist.Distribution):
        shape = tuple(prior.batch_shape) + tuple(prior.event_shape)
        try:
            ok = jnp.broadcast_shapes(shape, (d,)) == (d,)
        except ValueError:
            ok = False
        if not ok:
            v.refuse(
                "prior",
                f"must be a NumPyro distribution over alpha of shape ({d},) (batch or event shape broadcastable "
                f"to ({d},))",
                f"{type(prior).__name__} with batch_shape={prior.batch_shape}, event_shape={prior.event_shape}",
            )
        return (lambda alpha: jnp.sum(prior.log_prob(alpha))), f"user: {type(prior).__name__}"
    if callable(prior):
        return (lambda alpha: jnp.sum(jnp.asarray(prior(alpha), dtype=jnp.float64))), "user: log-density function"
    raise NoiseawareTypeError(
        v.message(
            "prior",
            "must be None (p1), a NumPyro distribution over alpha, or a function alpha -> log density",
            prior,
        )
    )


# ----------------------------------------------------------------------------- initial values
@owned(_OWNER)
def _initial_values(init: Any, part: LogMeanPart, chains: int, seed: int) -> list[dict[str, Any]]:
    d = part.d
    if init is None:
        base = start_alpha(part.s_l, upper=1e4)
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(chains):
            a0 = base * np.exp(rng.normal(0.0, 0.2, d))
            out.append({_ALPHA: a0})
        return out
    dicts = [init] * chains if isinstance(init, Mapping) else init
    if not isinstance(dicts, list | tuple) or not all(isinstance(x, Mapping) for x in dicts):
        raise NoiseawareTypeError(v.message("init", "must be a dict {'alpha': ...} or a list of them", init))
    if len(dicts) != chains:
        v.refuse("init", f"must give one dict or one per chain ({chains})", f"{len(dicts)} dicts")
    out = []
    for x in dicts:
        if set(x) != {_ALPHA}:
            v.refuse("init", "must name exactly the parameter 'alpha'", sorted(x))
        a0 = v.finite_array("init['alpha']", x[_ALPHA], remedy="Give finite starting values > 0, or no init.")
        if a0.shape != (d,) or np.any(a0 <= 0):
            v.refuse("init['alpha']", f"must have shape ({d},) with positive entries", a0.tolist())
        out.append({_ALPHA: a0})
    return out
