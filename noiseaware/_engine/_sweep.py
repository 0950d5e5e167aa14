r"""Record sweeps of the data-augmentation sampler, in JAX (private).

One sweep updates every confidential record once, in order ``i = 1, ..., n``, by the
Metropolis-within-Gibbs step of Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data Augmentation for Private Posterior
Estimation in R*, §3 (Ju et al. 2022):

1. propose :math:`x_i^* \sim f(\cdot \mid \theta)` (the latent model; the proposal does not
   depend on the current records, so all ``n`` proposals are drawn at once);
2. update the record-additive statistic in O(1):
   :math:`s^* = s - t_i(x_i, s_{dp}) + t_i(x_i^*, s_{dp})`;
3. accept with probability :math:`\min\{1, \eta(s_{dp}\mid s^*) / \eta(s_{dp}\mid s)\}`.

The prior proposal cancels the factor :math:`f(x_i\mid\theta)` of the target, so only the
mechanism density enters the ratio. Two cases:

* aggregate statistic (``per_record=False``): a :func:`jax.lax.scan` over records carries
  ``(s, log eta(s_dp | s))``; each step costs one evaluation of ``log_density`` at a statistic of
  fixed size, whatever ``n`` is. ``s`` is recomputed from the records at the start of each
  sweep, so floating-point drift never accumulates across sweeps.
* record-level mechanism (``per_record=True``; e.g. randomized response):
  :math:`\eta(s_{dp}\mid x) = \prod_i \eta(s_{dp,i}\mid t_i(x_i))`. The acceptance ratio of
  record ``i`` involves record ``i`` alone, so the ``n`` sequential steps are independent and are
  computed in one vectorized pass -- exactly the same transition as the sequential sweep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax, random

__all__ = ["noise_log_density", "record_sweep", "statistic_total"]

#: Records per iteration of the compiled loop (``lax.scan(unroll=...)``).
UNROLL = 1


def _rows(statistic: Callable[..., Any], records: Any, s_dp: Any, per_record: bool, indexed: bool = False) -> Any:
    """``t_i(x_i, s_dp)`` for all records, float64, shape ``(n, *stat_shape)``.

    With ``indexed`` the statistic also receives the record's index ``i`` (``t_i(x_i, s_dp, i)``).
    """
    s_axis = 0 if per_record else None
    if indexed:
        n = jax.tree_util.tree_leaves(records)[0].shape[0]
        t = jax.vmap(statistic, in_axes=(0, s_axis, 0))(records, s_dp, jnp.arange(n))
    else:
        t = jax.vmap(statistic, in_axes=(0, s_axis))(records, s_dp)
    return jnp.asarray(t, dtype=jnp.float64)


def statistic_total(statistic: Callable[..., Any], records: Any, s_dp: Any, indexed: bool = False) -> Any:
    """The confidential statistic ``s = sum_i t_i(x_i, s_dp)`` (aggregate case)."""
    return jnp.sum(_rows(statistic, records, s_dp, False, indexed), axis=0)


def noise_log_density(
    records: Any,
    s_dp: Any,
    *,
    statistic: Callable[..., Any],
    log_density: Callable[[Any, Any], Any],
    per_record: bool,
    indexed: bool = False,
) -> Any:
    """``log eta(s_dp | s)`` with the statistic recomputed from all records (float64 scalar)."""
    t = _rows(statistic, records, s_dp, per_record, indexed)
    if per_record:
        return jnp.sum(jax.vmap(log_density)(s_dp, t))
    return jnp.asarray(log_density(s_dp, jnp.sum(t, axis=0)), dtype=jnp.float64)


def record_sweep(
    key: Any,
    records: Any,
    theta: Any,
    s_dp: Any,
    *,
    latent: Callable[[Any, Any], Any],
    statistic: Callable[..., Any],
    log_density: Callable[[Any, Any], Any],
    per_record: bool,
    indexed: bool = False,
) -> tuple[Any, Any]:
    """One Metropolis-within-Gibbs sweep over all records (see the module docstring).

    Parameters
    ----------
    key : jax.Array
        A JAX random key.
    records : pytree
        Current records; every leaf has leading axis ``n``.
    theta : dict
        Current parameter values, passed to ``latent``.
    s_dp : array
        The privatized statistic (``(n, ...)`` when ``per_record``).
    latent, statistic, log_density, per_record, indexed
        As in :class:`noiseaware.augment.AugmentationModel` (``indexed``: the statistic takes the
        record index as a third argument).

    Returns
    -------
    records : pytree
        The records after the sweep.
    accept_rate : float64 scalar
        Fraction of the ``n`` proposals accepted.
    """
    k_prop, k_u = random.split(key)
    proposal = latent(k_prop, theta)
    n = jax.tree_util.tree_leaves(records)[0].shape[0]
    log_u = jnp.log(random.uniform(k_u, (n,), dtype=jnp.float64))
    t_cur = _rows(statistic, records, s_dp, per_record, indexed)
    t_prop = _rows(statistic, proposal, s_dp, per_record, indexed)
    if per_record:
        ratio = jax.vmap(log_density)(s_dp, t_prop) - jax.vmap(log_density)(s_dp, t_cur)
        accept = log_u < ratio  # NaN (both -inf) rejects
    else:
        s0 = jnp.sum(t_cur, axis=0)
        g0 = jnp.asarray(log_density(s_dp, s0), dtype=jnp.float64)

        def step(carry: Any, inputs: Any) -> Any:
            s, g = carry
            tc, tp, lu = inputs
            s_new = s - tc + tp
            g_new = log_density(s_dp, s_new)
            ok = lu < g_new - g
            return (jnp.where(ok, s_new, s), jnp.where(ok, g_new, g)), ok

        _, accept = lax.scan(step, (s0, g0), (t_cur, t_prop, log_u), unroll=min(UNROLL, n))

    def pick(cur: Any, new: Any) -> Any:
        mask = accept.reshape((n,) + (1,) * (jnp.ndim(cur) - 1))
        return jnp.where(mask, new, cur).astype(jnp.result_type(cur))

    new_records = jax.tree_util.tree_map(pick, records, proposal)
    return new_records, jnp.mean(accept.astype(jnp.float64))
