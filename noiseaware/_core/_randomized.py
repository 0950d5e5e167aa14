r"""The law of a randomized-response answer given the true category probabilities (math once).

k-ary randomized response (Warner 1965; Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data Augmentation
for Private Posterior Estimation in R*, Example 1) reports the true category ``x`` with probability
``p`` and each of the ``k - 1`` others with probability ``(1 - p)/(k - 1)``: the transition matrix
``Q[x, y] = P(Y = y | X = x)`` of :func:`~noiseaware._core._noise.randomized_response_logpmf`. With the
true category drawn from ``probs`` (``X ~ Categorical(probs)``), the released answer is categorical with

.. math::

    P(Y = y \mid \pi) = \sum_{i=0}^{k-1} \pi_i Q[i, y] = o + (p - o)\,\pi_y,
    \qquad o = \frac{1 - p}{k - 1},

since :math:`\sum_i \pi_i = 1`. Records are independent, so ``n`` answers have the product of these
terms, and the counts of the answers are :math:`\mathrm{Multinomial}(n, o + (p - o)\pi)`. The latent
true categories are summed out exactly: no data augmentation is needed.

In log space, :math:`\log P(Y=y) = \operatorname{logaddexp}(\log o, \log(p - o) + \log \pi_y)`, finite
for every ``p < 1`` (``o > 0``) and with a finite gradient in :math:`\pi` where :math:`\pi_y > 0`.
"""

from __future__ import annotations

from typing import Any

from ._backend import Backend
from ._noise import is_integral, randomized_response_from_uniforms

__all__ = ["randomized_response_answer_draw", "randomized_response_answer_logp", "randomized_response_answer_probs"]


def _k(bk: Backend, probs: Any) -> Any:
    """The number of categories (the last axis of ``probs``) as a float64 of the backend."""
    return bk.as_float(probs.shape[-1])


def randomized_response_answer_probs(bk: Backend, probs: Any, p: Any) -> Any:
    r"""``P(Y = y | probs) = o + (p - o) probs_y`` for every ``y`` (last axis), ``o = (1 - p)/(k - 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware._core import get_backend
    >>> randomized_response_answer_probs(get_backend("numpy"), np.array([0.2, 0.8]), 0.75).tolist()
    [0.35, 0.65]
    """
    probs = bk.as_float(probs)
    p = bk.expand(bk.as_float(p))
    off = (1.0 - p) / (_k(bk, probs) - 1.0)
    return off + (p - off) * probs


def randomized_response_answer_logp(bk: Backend, value: Any, *, probs: Any, p: Any) -> Any:
    r"""``log P(Y = value | probs)`` of a randomized-response answer; ``-inf`` outside ``0..k-1``.

    Parameters
    ----------
    bk : Backend
        The array backend (NumPy, JAX or PyTensor).
    value : array_like
        Released category codes, shape broadcasting with ``probs.shape[:-1]``.
    probs : array_like, shape (..., k)
        True category probabilities (each row sums to 1).
    p : array_like
        Probability of a truthful answer, in ``[1/k, 1)`` (broadcasts with ``probs.shape[:-1]``).
    """
    xp = bk.xp
    probs = bk.as_float(probs)
    p = bk.as_float(p)
    k = _k(bk, probs)
    off = (1.0 - p) / (k - 1.0)
    y = bk.as_float(value)
    onehot = bk.eq(bk.as_float(xp.arange(probs.shape[-1])), bk.expand(y))
    # pi_y, by a one-hot sum (the same in the three backends); out-of-range codes give 0 and are masked below
    pi_y = xp.sum(bk.where(onehot, probs, 0.0), axis=-1)
    lp = xp.log(off + (p - off) * pi_y)
    ok = is_integral(bk, y) & (y >= 0) & (y < k)
    return bk.where(ok, lp, -float("inf"))


def randomized_response_answer_draw(
    bk: Backend, uniform: Any, shape: tuple[int, ...], *, probs: Any, p: Any
) -> Any:
    """Answers of ``shape``: the true category by inversion of ``probs``, then the mechanism's own draw.

    Three uniforms per answer: one for the category, two for randomized response (the noise
    registry's :func:`~noiseaware._core._noise.randomized_response_from_uniforms`), so the answers are
    drawn by the same law as the curator's simulated releases (the registry's ``randomized_response`` draw).
    """
    xp = bk.xp
    probs = bk.as_float(probs)
    k = probs.shape[-1]
    probs = xp.broadcast_to(probs, (*shape, k))
    u = uniform((3, *shape))
    cum = xp.cumsum(probs, axis=-1)[..., : k - 1]
    x = xp.sum(bk.as_float(cum <= bk.expand(u[0])), axis=-1)
    return randomized_response_from_uniforms(bk, u[1:], x, float(k), xp.broadcast_to(bk.as_float(p), shape))
