r"""NumPyro shell of :class:`RandomizedResponse` (spec in :mod:`noiseaware._core._specs`)."""

from __future__ import annotations

from typing import Any, ClassVar

from ._common import BK, INT, RELEASE_VALUES, f64, observe, uniform  # isort: split

import jax.numpy as jnp
from jax import lax
from numpyro.distributions import constraints
from numpyro.distributions.distribution import Distribution
from numpyro.distributions.util import validate_sample

from .._core import _specs
from .._core._randomized import randomized_response_answer_probs
from .._validation import owner_scope

__all__ = ["RandomizedResponse"]

_RR = _specs.SPECS["RandomizedResponse"]


class RandomizedResponse(Distribution):
    r"""The released answer of k-ary randomized response, given the true category probabilities.

    .. math:: P(Y = y \mid \pi) = \sum_{i} \pi_i Q[i, y] = o + (p - o)\,\pi_y,\qquad o = \frac{1-p}{k-1},

    with :math:`Q` the mechanism's transition matrix (truthful with probability ``p``, each other
    category with probability ``o``; Warner 1965; Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data
    Augmentation for Private Posterior Estimation in R*, Example 1). The true category is summed out
    exactly, so NUTS samples the parameters behind ``probs`` directly (no data augmentation). Support
    ``0..k-1``; ``probs`` may come from a softmax (or, with ``k = 2``, logistic) regression.

    Parameters
    ----------
    probs : array_like, shape (..., k)
        True category probabilities (rows sum to 1).
    p : float or array_like
        Probability of a truthful answer, in ``[1/k, 1)``: read it from the release (:meth:`from_release`).
    k : int, optional
        The number of categories, checked against the last axis of ``probs`` (``from_release`` passes
        the release's).
    validate_args : bool, optional

    Raises
    ------
    NoiseawareValueError
        If ``probs`` has fewer than 2 categories (or not ``k``), or a concrete ``p`` lies outside ``[1/k, 1)``.

    Examples
    --------
    >>> import numpy as np, noiseaware.numpyro as nan
    >>> d = nan.RandomizedResponse(np.array([0.2, 0.8]), p=0.75)
    >>> np.exp(d.log_prob(np.array([0, 1]))).round(4).tolist()
    [0.35, 0.65]
    """

    arg_constraints: ClassVar[dict[str, Any]] = {
        "probs": constraints.simplex,
        "p": constraints.open_interval(0.0, 1.0),
    }
    pytree_aux_fields: tuple[str, ...] = ("_k",)

    def __init__(self, probs: Any, p: Any, *, k: Any = None, validate_args: bool | None = None) -> None:
        owner = type(self).__name__
        with owner_scope(owner):
            _specs.numeric_parameter("probs", probs)
            _specs.numeric_parameter("p", p)
            self.probs, self.p = f64(probs), f64(p)
            self._k = _specs.rr_categories(jnp.shape(self.probs), k)
            _specs.rr_check_p(self.p, self._k)
            batch_shape = lax.broadcast_shapes(jnp.shape(self.probs)[:-1], jnp.shape(self.p))
            super().__init__(batch_shape=batch_shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        """The category codes ``0..k-1``."""
        return constraints.integer_interval(0, self._k - 1)

    def sample(self, key: Any, sample_shape: tuple[int, ...] = ()) -> Any:
        """The true category by inversion of ``probs``, then the mechanism's draw (three uniforms per answer)."""
        shape = sample_shape + self.batch_shape
        draw = _RR.part("draw")(BK, lambda s: uniform(key, s), shape, probs=self.probs, p=self.p)
        return draw.astype(INT)

    @validate_sample
    def log_prob(self, value: Any) -> Any:
        """``log(o + (p - o) probs[value])``; ``-inf`` outside ``0..k-1``."""
        return _RR.part("logp")(BK, value, probs=self.probs, p=self.p)

    def answer_probs(self) -> Any:
        """``P(Y = y)`` for every category ``y`` (last axis), shape ``batch_shape + (k,)``."""
        return randomized_response_answer_probs(BK, self.probs, self.p)

    @property
    def mean(self) -> Any:
        """``sum_y y P(Y = y)`` (of the code)."""
        a = self.answer_probs()
        return jnp.broadcast_to(jnp.sum(a * jnp.arange(self._k), axis=-1), self.batch_shape)

    @property
    def variance(self) -> Any:
        """``sum_y y^2 P(Y = y) - mean^2`` (of the code)."""
        a = self.answer_probs()
        codes = jnp.arange(self._k)
        m = jnp.sum(a * codes, axis=-1)
        return jnp.broadcast_to(jnp.sum(a * codes**2, axis=-1) - m**2, self.batch_shape)

    def enumerate_support(self, expand: bool = True) -> Any:
        """``0..k-1`` along a new leading axis (for enumeration)."""
        values = jnp.arange(self._k).reshape((self._k,) + (1,) * len(self.batch_shape))
        if expand:
            values = jnp.broadcast_to(values, (self._k, *self.batch_shape))
        return values

    has_enumerate_support = True

    @classmethod
    def from_release(
        cls, name: str, release: Any, probs: Any, *, answer: Any = None, obs: Any = RELEASE_VALUES, **kwargs: Any
    ) -> Any:
        """``numpyro.sample(name, RandomizedResponse(probs, p), obs=answers)``, ``p`` and answers from the release.

        ``release`` is a ``randomized_response`` release; ``k`` (its categories) must be the last axis of
        ``probs``. With several answers per record, ``answer`` picks one (a column name or index);
        ``answer=None`` observes all ``(n, q)`` answers (``probs`` then broadcasts to ``(n, q, k)``).
        ``obs=None`` leaves the site unobserved, shaped like the answers (for ``Predictive``).
        """
        with owner_scope(cls.__name__):
            args, values = _RR.release_args(release, answer)
        return observe(name, cls(probs, **args, **kwargs), values, obs)

