r"""PyMC shell of :class:`RandomizedResponse` (spec in :mod:`noiseaware._core._specs`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import PT, CountRV, as_float, checked, observed_kwargs, param_batch, shape_of, sized, spec_draw  # isort: split

import pymc as pm
import pytensor.tensor as pt

from .._core import _specs
from .._validation import owner_scope

__all__ = ["RandomizedResponse"]

_RR = _specs.SPECS["RandomizedResponse"]


class RandomizedResponseRV(CountRV):
    """RandomVariable of :class:`RandomizedResponse` (inputs ``probs[k], p``): category, then the mechanism."""

    name = "randomized_response"
    signature = "(k),()->()"

    @classmethod
    def rng_fn(cls, rng: np.random.Generator, probs: Any, p: Any, size: Any) -> np.ndarray:
        """The spec's draw with NumPy uniforms (three per answer)."""
        probs = np.asarray(probs, dtype=np.float64)
        shape = shape_of(size, probs[..., 0], p)
        return spec_draw(_RR, rng, shape, probs=probs, p=p)


randomized_response = RandomizedResponseRV()


def _static_k(probs: Any) -> int | None:
    k = probs.type.shape[-1] if probs.type.ndim >= 1 else None
    return None if k is None else int(k)


class RandomizedResponse(pm.Discrete):
    r"""The released answer of k-ary randomized response, given the true category probabilities.

    .. math:: P(Y = y \mid \pi) = \sum_{i} \pi_i Q[i, y] = o + (p - o)\,\pi_y,\qquad o = \frac{1-p}{k-1},

    with :math:`Q` the mechanism's transition matrix (truthful with probability ``p``, each other
    category with probability ``o``; Warner 1965; Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data
    Augmentation for Private Posterior Estimation in R*, Example 1). The true category is summed out
    exactly, so NUTS samples the parameters behind ``probs`` directly (no data augmentation). Support
    ``0..k-1``; ``probs`` may come from a softmax (or, with ``k = 2``, logistic) regression.

    Parameters
    ----------
    probs : tensor_like, shape (..., k)
        True category probabilities (rows sum to 1); ``k`` must be static.
    p : tensor_like of float
        Probability of a truthful answer, in ``[1/k, 1)``: read it from the release (:meth:`from_release`).
    k : int, optional
        The number of categories, checked against the last axis of ``probs``.

    Raises
    ------
    NoiseawareValueError
        If ``probs`` has fewer than 2 categories (or not ``k``), or a concrete ``p`` lies outside ``[1/k, 1)``.

    Examples
    --------
    >>> import numpy as np, pymc as pm, noiseaware.pymc as nap
    >>> y = nap.RandomizedResponse.dist(np.array([0.2, 0.8]), p=0.75)
    >>> np.exp(pm.logp(y, np.array([0, 1])).eval()).round(4).tolist()
    [0.35, 0.65]
    """

    rv_op = randomized_response

    @classmethod
    def dist(cls, probs: Any, p: Any, *, k: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Build the random variable; ``k`` (when given) and a concrete ``p`` are checked at once."""
        owner = cls.__name__
        with owner_scope(owner):
            _specs.numeric_parameter("probs", probs)
            _specs.numeric_parameter("p", p)
            probs_t, p_t = as_float(probs), as_float(p)
            k_static = _static_k(probs_t)
            if k_static is None:
                from ..exceptions import NoiseawareValueError

                raise NoiseawareValueError(
                    f"{owner}: the number of categories (the last axis of probs) must be static; got a probs of "
                    f"unknown length {probs_t.type.shape}. Use pt.specify_shape or a fixed design."
                )
            kk = _specs.rr_categories(tuple(1 if s is None else s for s in probs_t.type.shape), k)
            if isinstance(p_t, pt.TensorConstant):
                _specs.rr_check_p(np.asarray(p_t.data), kk)
            return super().dist([probs_t, p_t], **kwargs)

    def support_point(rv: Any, size: Any, probs: Any, p: Any) -> Any:
        """The most probable answer: the most probable true category."""
        return sized(size, pt.argmax(probs, axis=-1), dtype="int64")

    def logp(value: Any, probs: Any, p: Any) -> Any:
        """``log(o + (p - o) probs[value])``; ``-inf`` outside ``0..k-1``."""
        res = _RR.part("logp")(PT, value, probs=probs, p=p)
        k = pt.cast(probs.shape[-1], "float64")
        return checked(
            res,
            _RR.rules,
            {
                "probs": (pt.all(probs >= 0), pt.all(pt.isclose(pt.sum(probs, axis=-1), 1.0))),
                "p": (pt.all(p >= 1.0 / k), pt.all(p < 1.0)),
            },
        )

    @classmethod
    def from_release(cls, name: str, release: Any, probs: Any, *, answer: Any = None, **kwargs: Any) -> Any:
        """Observed ``RandomizedResponse(name, probs, p)`` with ``p``, ``k`` and the answers from the release.

        ``release`` is a ``randomized_response`` release. With several answers per record, ``answer``
        picks one (a column name or index); ``answer=None`` observes all ``(n, q)`` answers.
        """
        with owner_scope(cls.__name__):
            args, values = _RR.release_args(release, answer)
        batch = param_batch(as_float(probs)[..., 0], args["p"])
        return cls(name, probs, **args, **observed_kwargs(values, kwargs, batch))
