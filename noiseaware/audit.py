r"""Empirical differential-privacy audit of a mechanism's sampler.

For neighbouring inputs ``x`` and ``x'`` and an output event ``S``, any epsilon-DP mechanism
satisfies ``P(S | x) <= e^epsilon P(S | x')``. Drawing many outputs at both inputs and
bounding both probabilities with Clopper-Pearson intervals gives a lower confidence bound

.. math:: \hat\epsilon_{lo} = \log \frac{\text{lower}(P(S|x))}{\text{upper}(P(S|x'))}

on the privacy loss actually delivered by the sampler. A correct epsilon-DP sampler gives
``epsilon_lower <= epsilon`` except with probability at most ``beta``; a sampler whose noise is
too small gives ``epsilon_lower > epsilon`` once enough draws are taken.

Examples
--------
>>> import numpy as np
>>> from noiseaware.mechanisms import GeometricMechanism
>>> m = GeometricMechanism.from_epsilon(1.0)
>>> res = audit_epsilon(m, 1, 0, lambda y: y >= 1, draws=20_000, rng=np.random.default_rng(0))
>>> res.epsilon_lower <= 1.0
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from . import _validation as v
from ._validation import owned
from .mechanisms import Mechanism

__all__ = ["AuditResult", "audit_epsilon", "clopper_pearson"]


def clopper_pearson(k: int, n: int, beta: float) -> tuple[float, float]:
    """Two one-sided ``1 - beta`` Clopper-Pearson bounds for a binomial proportion ``k / n``."""
    lo = 0.0 if k == 0 else float(stats.beta.ppf(beta, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.isf(beta, k + 1, n - k))
    return lo, hi


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_epsilon`.

    Attributes
    ----------
    epsilon_lower : float
        Lower confidence bound (level ``1 - 2 beta``) on the privacy loss on the event.
    epsilon_hat : float
        Point estimate ``log(p_x / p_x')``.
    p_x, p_xprime : float
        Empirical event frequencies at the two inputs.
    draws : int
        Draws per input.
    beta : float
        Error probability of each one-sided bound.
    """

    epsilon_lower: float
    epsilon_hat: float
    p_x: float
    p_xprime: float
    draws: int
    beta: float


@owned("audit_epsilon")
def audit_epsilon(
    mechanism: Mechanism,
    x: Any,
    x_prime: Any,
    event: Callable[[np.ndarray], np.ndarray],
    *,
    draws: int = 100_000,
    beta: float = 1e-6,
    rng: np.random.Generator | None = None,
) -> AuditResult:
    """Lower-bound the privacy loss of ``mechanism`` between ``x`` and ``x_prime`` on ``event``.

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism whose sampler is audited.
    x, x_prime : scalar or array
        Neighbouring inputs (for the exponential mechanism: score vectors).
    event : callable
        Maps an array of outputs to a boolean array (membership in ``S``). Choose it without
        looking at the draws, e.g. where the claimed privacy loss is largest.
    draws : int
        Samples per input.
    beta : float
        Error probability of each Clopper-Pearson bound.
    rng : numpy.random.Generator, optional
        Audit the simulation sampler with this generator; by default the secure sampler.

    Returns
    -------
    AuditResult
    """
    n = v.integer("draws", draws, minimum=10)
    b = v.open_unit("beta", beta)

    def sample(val: Any) -> np.ndarray:
        arr = np.asarray(val)
        if mechanism.family == "exponential":
            reps = np.broadcast_to(arr, (n, *arr.shape))
        else:
            reps = np.full(n, arr.item() if arr.ndim == 0 else arr)
        return np.asarray(mechanism.release(reps, rng=rng))

    k1 = int(np.count_nonzero(event(sample(x))))
    k2 = int(np.count_nonzero(event(sample(x_prime))))
    lo1, _ = clopper_pearson(k1, n, b)
    _, hi2 = clopper_pearson(k2, n, b)
    eps_lo = math.log(lo1 / hi2) if lo1 > 0 else -math.inf
    eps_hat = math.log(k1 / k2) if k1 > 0 and k2 > 0 else math.nan
    return AuditResult(eps_lo, eps_hat, k1 / n, k2 / n, n, b)
