"""Categorical mechanisms: k-ary randomized response and the exponential mechanism."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special

from .. import _validation as v
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from . import _opendp
from ._base import Guarantee, Mechanism, register

__all__ = ["ExponentialMechanism", "RandomizedResponse"]


@register
@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    r"""k-ary randomized response on categories ``0..k-1`` (Warner 1965; seed 001 Example 1).

    ``P(y | x) = p`` if ``y == x`` and ``(1 - p) / (k - 1)`` otherwise, which is
    ``epsilon = log(p (k - 1) / (1 - p))``-DP. Seed 001's "two fair coin flips" scheme (keep the
    answer on heads, otherwise report a fresh fair coin) is ``k = 2, p = 3/4``, i.e.
    ``epsilon = log 3`` per answer (:meth:`from_coin_flips`). Secure release uses OpenDP's
    randomized response.

    Parameters
    ----------
    k : int
        Number of categories (>= 2).
    p : float
        Probability of reporting the true category, in ``[1/k, 1)``.

    Examples
    --------
    >>> rr = RandomizedResponse.from_coin_flips(k=2)
    >>> rr.p, round(rr.guarantee().epsilon, 6)
    (0.75, 1.098612)
    """

    k: int
    p: float

    family: ClassVar[str] = "randomized_response"
    output_kind: ClassVar[str] = "category"

    def __post_init__(self) -> None:
        name = type(self).__name__
        k = v.integer(name, "k", self.k, minimum=2)
        p = v.real(name, "p", self.p)
        if not (1.0 / k <= p < 1.0):
            v.fail(name, "p", f"must be in [1/k, 1) = [{1.0 / k:.6g}, 1)", self.p)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "p", p)

    @classmethod
    def from_epsilon(cls, epsilon: float, k: int) -> RandomizedResponse:
        """``p = e^eps / (e^eps + k - 1)``."""
        eps = v.epsilon(cls.__name__, epsilon)
        k = v.integer(cls.__name__, "k", k, minimum=2)
        return cls(k=k, p=1.0 / (1.0 + (k - 1) * math.exp(-eps)))

    @classmethod
    def from_coin_flips(cls, k: int = 2, keep: float = 0.5) -> RandomizedResponse:
        """Keep the true answer with probability ``keep``, else answer uniformly at random."""
        k = v.integer(cls.__name__, "k", k, minimum=2)
        q = v.real(cls.__name__, "keep", keep)
        if not (0.0 <= q < 1.0):
            v.fail(cls.__name__, "keep", "must be in [0, 1)", keep)
        return cls(k=k, p=q + (1.0 - q) / k)

    @property
    def epsilon(self) -> float:
        """``log(p (k-1) / (1-p))``."""
        return math.log(self.p * (self.k - 1)) - math.log1p(-self.p)

    def guarantee(self) -> Guarantee:
        """Pure ``epsilon`` per randomized answer."""
        return Guarantee(epsilon=max(0.0, self.epsilon))

    def transition_matrix(self) -> np.ndarray:
        """``T[x, y] = P(y | x)``."""
        off = (1.0 - self.p) / (self.k - 1)
        return np.full((self.k, self.k), off) + np.eye(self.k) * (self.p - off)

    def log_prob(self, output: Any, value: Any) -> np.ndarray:
        """``log P(output | value)``; ``-inf`` for outputs outside ``0..k-1``."""
        y = np.asarray(output, dtype=np.float64)
        x = np.asarray(value, dtype=np.float64)
        same = np.log(self.p)
        diff = np.log1p(-self.p) - np.log(self.k - 1)
        out = np.where(y == x, same, diff)
        ok = (y >= 0) & (y < self.k) & (y == np.round(y))
        return np.where(ok, out, -np.inf)

    def _check_value(self, value: Any) -> np.ndarray:
        arr = super()._check_value(value)
        if arr.size and (arr.min() < 0 or arr.max() >= self.k):
            raise NoiseawareValueError(
                f"RandomizedResponse: values must be category codes in 0..{self.k - 1}; "
                f"got values in [{arr.min()}, {arr.max()}]."
            )
        return arr

    def _release_secure(self, value: np.ndarray) -> np.ndarray:
        return _opendp.randomized_response(value, self.k, self.p)

    def _release_simulated(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        u = rng.random((2, *value.shape))
        keep = u[0] < self.p
        # uniform over the k - 1 other categories
        shift = 1 + np.floor(u[1] * (self.k - 1)).astype(np.int64)
        return np.where(keep, value, (value + shift) % self.k)


@register
@dataclass(frozen=True)
class ExponentialMechanism(Mechanism):
    r"""Exponential mechanism (McSherry & Talwar 2007; seed 002 Proposition 3.5).

    Selects index ``r`` of a score vector with probability proportional to
    ``exp(epsilon * score_r / (2 * sensitivity))``, where each score changes by at most
    ``sensitivity`` between neighbouring data sets. It is ``epsilon``-DP and
    ``epsilon**2 / 8``-zCDP. Secure release uses OpenDP's report-noisy-max with Gumbel noise of
    scale ``2 * sensitivity / epsilon``, which is exactly this distribution.

    In :meth:`log_prob` and :meth:`release`, ``value`` is the score vector (last axis) and the
    output is an index.

    Parameters
    ----------
    epsilon : float
        Privacy parameter (> 0).
    sensitivity : float
        Sensitivity of every score (> 0).
    """

    epsilon: float
    sensitivity: float = 1.0

    family: ClassVar[str] = "exponential"
    output_kind: ClassVar[str] = "real"

    def __post_init__(self) -> None:
        name = type(self).__name__
        object.__setattr__(self, "epsilon", v.epsilon(name, self.epsilon, warn=False))
        object.__setattr__(self, "sensitivity", v.positive(name, "sensitivity", self.sensitivity))

    @property
    def scale(self) -> float:
        """Gumbel scale ``2 * sensitivity / epsilon``."""
        return 2.0 * self.sensitivity / self.epsilon

    def guarantee(self) -> Guarantee:
        """``epsilon``-DP and ``epsilon**2/8``-zCDP."""
        return Guarantee(epsilon=self.epsilon, rho=self.epsilon**2 / 8.0)

    def log_prob(self, output: Any, value: Any) -> np.ndarray:
        """``log P(output = r | scores)`` with scores on the last axis of ``value``."""
        scores = np.asarray(value, dtype=np.float64)
        logits = scores / self.scale
        logp = logits - special.logsumexp(logits, axis=-1, keepdims=True)
        r = np.asarray(output)
        ok = (r >= 0) & (r < scores.shape[-1]) & (r == np.round(r))
        idx = np.where(ok, r, 0).astype(np.int64)
        picked = np.take_along_axis(np.broadcast_to(logp, (*idx.shape, scores.shape[-1])), idx[..., None], -1)[..., 0]
        return np.where(ok, picked, -np.inf)

    def release(self, value: Any, rng: np.random.Generator | None = None) -> np.ndarray:
        """Select one index per score vector (last axis of ``value``)."""
        scores = v.finite_array("ExponentialMechanism", "scores", value)
        if scores.ndim == 0 or scores.shape[-1] < 1:
            raise NoiseawareValueError("ExponentialMechanism: scores must be a non-empty vector.")
        flat = scores.reshape(-1, scores.shape[-1])
        if rng is None:
            out = np.array([_opendp.gumbel_argmax(row, self.scale) for row in flat], dtype=np.int64)
        else:
            if not isinstance(rng, np.random.Generator):
                raise NoiseawareTypeError(
                    f"ExponentialMechanism.release: rng must be a numpy.random.Generator or None; got rng={rng!r}."
                )
            g = rng.gumbel(size=flat.shape)
            out = np.argmax(flat / self.scale + g, axis=-1).astype(np.int64)
        return out.reshape(scores.shape[:-1])

    def _release_secure(self, value: np.ndarray) -> np.ndarray:  # pragma: no cover - release overridden
        raise NotImplementedError

    def _release_simulated(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError
