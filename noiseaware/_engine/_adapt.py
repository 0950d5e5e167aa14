r"""Step-size adaptation of the package's own Metropolis moves, written once (engine, private).

The joint moves of :func:`noiseaware.augment.sample` and the two random-walk moves of
:func:`noiseaware.dirichlet.dpmcmc` adapt their (log) step sizes during warmup by the dual averaging
of Hoffman & Gelman (2014, §3.2, eq. 6) -- NumPyro's constants -- and freeze them at the averaged
iterate when warmup ends, so that the kept draws come from one fixed, target-invariant transition.
:class:`StepAdaptation` is that state and :func:`adapt_step` its update, for any number of step
sizes at once (a vector of them adapts each towards the same target from its own acceptance
probability).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

__all__ = ["StepAdaptation", "adapt_step", "dual_averaging", "init_adaptation"]

#: Dual-averaging constants of Hoffman & Gelman (2014, §3.2), as in NumPyro's step-size adaptation.
_DA_T0, _DA_KAPPA, _DA_GAMMA = 10.0, 0.75, 0.05


def dual_averaging(i: Any, prob: Any, target: float, g_avg: Any, log_step_avg: Any) -> tuple[Any, Any, Any]:
    r"""One dual-averaging update of a log step size (Hoffman & Gelman 2014, §3.2, eq. 6).

    At iteration ``i`` (0-based, :math:`t=i+1`) with acceptance probability ``prob``:

    .. math:: \bar g_t=(1-\tfrac1{t+t_0})\bar g_{t-1}+\tfrac{\delta-p_t}{t+t_0},\qquad
              x_t=-\frac{\sqrt t}{\gamma}\bar g_t,\qquad
              \bar x_t=t^{-\kappa}x_t+(1-t^{-\kappa})\bar x_{t-1},

    with :math:`t_0=10,\kappa=0.75,\gamma=0.05` (NumPyro's constants) and prox centre
    :math:`\log 1` (the proposal carries its own scale). Returns :math:`(x_t,\bar x_t,\bar g_t)`:
    the new iterate, the weighted average (the step size to freeze after warmup) and the running
    mean of ``target - prob``. Works elementwise on arrays of step sizes.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> x, xbar, g = dual_averaging(jnp.asarray(0), 1.0, 0.3, 0.0, 0.0)  # accepted: step grows
    >>> bool(x > 0)
    True
    """
    t = jnp.asarray(i + 1, dtype=jnp.float64)
    g_avg = (1.0 - 1.0 / (t + _DA_T0)) * g_avg + (target - prob) / (t + _DA_T0)
    x_t = -jnp.sqrt(t) / _DA_GAMMA * g_avg
    w_t = t ** (-_DA_KAPPA)
    return x_t, (1.0 - w_t) * log_step_avg + w_t * x_t, g_avg


class StepAdaptation(NamedTuple):
    """Dual-averaging state of one or more log step sizes (all arrays of one shape)."""

    log_step: Any  # the log step size in use
    x_avg: Any  # weighted average of the iterates (the log step size after warmup)
    g_avg: Any  # running mean of (target - acceptance probability)


def init_adaptation(shape: tuple[int, ...] = ()) -> StepAdaptation:
    """Start: step size 1 (log 0) and empty averages, float64 arrays of ``shape``."""
    zero = jnp.zeros(shape, dtype=jnp.float64)
    return StepAdaptation(zero, zero, zero)


def adapt_step(state: StepAdaptation, i: Any, prob: Any, target: float, warmup: Any) -> StepAdaptation:
    r"""Adapt during warmup, freeze after: the update shared by every adapted Metropolis move.

    At iteration ``i < warmup`` the log step size becomes the dual-averaging iterate :math:`x_t`
    (:func:`dual_averaging`), and at the last warmup iteration (``i + 1 == warmup``) the averaged
    :math:`\bar x_t`; from ``warmup`` on the state is unchanged. ``prob`` is cleaned first (NaN
    counts as 0, values clipped to [0, 1]).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> s = init_adaptation()
    >>> for i in range(200):  # a move whose acceptance falls as exp(log_step) grows
    ...     s = adapt_step(s, jnp.asarray(i), jnp.exp(-jnp.exp(s.log_step)), 0.3, 100)
    >>> round(float(jnp.exp(-jnp.exp(s.log_step))), 1)  # frozen near the target after warmup
    0.3
    """
    prob = jnp.asarray(prob, dtype=jnp.float64)
    prob = jnp.where(jnp.isnan(prob), 0.0, jnp.clip(prob, 0.0, 1.0))
    x_t, x_avg, g_avg = dual_averaging(i, prob, target, state.g_avg, state.x_avg)
    warm = i < warmup
    last = i + 1 >= warmup
    return StepAdaptation(
        jnp.where(warm, jnp.where(last, x_avg, x_t), state.log_step),
        jnp.where(warm, x_avg, state.x_avg),
        jnp.where(warm, g_avg, state.g_avg),
    )
