"""Categorical mechanisms: k-ary randomized response and the exponential mechanism."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import special

from .. import _validation as v
from .._core import _noise
from .._core._backend import get_backend
from .._validation import owned, owner_scope
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from . import _opendp
from ._base import Guarantee, Mechanism, register, round_noise_up

__all__ = ["ExponentialMechanism", "RandomizedResponse"]

_NB = get_backend("numpy")


#: Largest number of categories of :class:`RandomizedResponse` (OpenDP's sampler holds all k in memory).
RR_MAX_CATEGORIES = 2**20


def _check_k(k: Any) -> int:
    out = v.integer("k", k, minimum=2)
    if out > RR_MAX_CATEGORIES:
        v.refuse("k", f"must be an integer <= {RR_MAX_CATEGORIES} (OpenDP's sampler lists all k categories)", k)
    return out


_rr_log_ratio = _noise.rr_log_ratio


def _rr_epsilon(p: float, k: int) -> float:
    """The guarantee of randomized response with truth probability ``p``: ``|log(p (k-1) / (1-p))|``."""
    return abs(_rr_log_ratio(p, k))


@register
@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    r"""k-ary randomized response on categories ``0..k-1`` (Warner 1965; Eng et al. 2024, Example 1).

    ``P(y | x) = p`` if ``y == x`` and ``(1 - p) / (k - 1)`` otherwise, which is
    ``epsilon = log(p (k - 1) / (1 - p))``-DP. The "two fair coin flips" scheme of Eng, Awan, Gong, Ju & Rao
    (2024), *dapper: Data Augmentation for Private Posterior Estimation in R* (keep the
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
        with owner_scope(name):
            k = _check_k(self.k)
            p = v.real("p", self.p)
            if not (1.0 / k <= p < 1.0):
                v.refuse("p", f"must be in [1/k, 1) = [{1.0 / k:.6g}, 1)", self.p)
            object.__setattr__(self, "k", k)
            object.__setattr__(self, "p", p)

    @classmethod
    def from_epsilon(cls, epsilon: float, k: int) -> RandomizedResponse:
        """``p = e^eps / (e^eps + k - 1)``; refused when ``p`` rounds to 1 in float64.

        ``p`` is rounded toward ``1/k`` (one float at a time) so that
        the epsilon recomputed from it never exceeds the request.

        Examples
        --------
        >>> RandomizedResponse.from_epsilon(1.0 / 7, k=3).guarantee().epsilon <= 1.0 / 7
        True
        """
        with owner_scope(cls.__name__):
            eps = v.epsilon(epsilon)
            k = _check_k(k)
            p = 1.0 / (1.0 + (k - 1) * math.exp(-eps))
            if p < 1.0:
                p = round_noise_up("epsilon", eps, p, 1.0 / k, lambda q: _rr_epsilon(q, k))
            if not p < 1.0:
                v.refuse(
                    "epsilon",
                    f"must be small enough that p = e**epsilon / (e**epsilon + k - 1) < 1 in float64 (about "
                    f"epsilon <= log(k - 1) + 36.7 = {math.log(k - 1) + 53 * math.log(2.0):.4g} for k={k})",
                    epsilon,
                )
            return cls(k=k, p=p)

    @classmethod
    def from_coin_flips(cls, k: int = 2, keep: float = 0.5) -> RandomizedResponse:
        """Keep the true answer with probability ``keep``, else answer uniformly at random."""
        with owner_scope(cls.__name__):
            k = v.integer("k", k, minimum=2)
            k = _check_k(k)
            q = v.real("keep", keep)
            if not (0.0 <= q < 1.0):
                v.refuse("keep", "must be in [0, 1)", keep)
            return cls(k=k, p=q + (1.0 - q) / k)

    @property
    def epsilon(self) -> float:
        """``log(p (k-1) / (1-p))``, from the exact rational value of the float ``p``.

        The ratio is formed exactly (:class:`fractions.Fraction`), so ``p`` within a few ulps of
        ``1/k`` does not lose the (tiny) privacy loss to cancellation.
        """
        return _rr_log_ratio(self.p, self.k)

    def transition_matrix(self) -> np.ndarray:
        """``T[x, y] = P(y | x)``."""
        off = (1.0 - self.p) / (self.k - 1)
        return np.full((self.k, self.k), off) + np.eye(self.k) * (self.p - off)

    def log_prob(self, output: Any, value: Any) -> np.ndarray:
        """``log P(output | value)``; ``-inf`` for outputs outside ``0..k-1`` (the registry's law)."""
        law = _noise.NOISE_LAWS["randomized_response"]
        y = np.asarray(output, dtype=np.float64)
        x = np.asarray(value, dtype=np.float64)
        return np.asarray(law.logpdf(_NB, y, x, *law.params_of(self)))

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
        law = _noise.NOISE_LAWS["randomized_response"]
        u = rng.random(law.uniform_shape(value.shape))
        out = law.draw(_NB, u, value, *law.params_of(self))  # type: ignore[misc]
        return np.asarray(out).astype(np.int64)


@register
@dataclass(frozen=True)
class ExponentialMechanism(Mechanism):
    r"""Exponential mechanism (McSherry & Talwar 2007; Ferrando et al. 2026, Proposition 3.5).

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
        with owner_scope(name):
            eps = v.epsilon(self.epsilon, warn=False)
            sens = v.noise_scale("sensitivity", self.sensitivity, math.inf, "")
            v.implied_guarantee({"epsilon": eps}, "rho", "epsilon**2 / 8", eps * eps / 8.0)
            scale = 2.0 * sens / eps
            if not (math.isfinite(scale) and scale >= v.TINY):
                raise NoiseawareValueError(
                    f"{name}: epsilon and sensitivity must give a Gumbel scale 2 * sensitivity / epsilon in "
                    f"[{v.TINY!r}, {sys.float_info.max!r}] (a finite, normal float64); got epsilon={eps!r}, "
                    f"sensitivity={sens!r} (scale={scale!r})."
                )
            object.__setattr__(self, "epsilon", eps)
            object.__setattr__(self, "sensitivity", sens)

    @classmethod
    def from_rho(cls, rho: float, sensitivity: float = 1.0) -> ExponentialMechanism:
        """The mechanism with ``epsilon = sqrt(8 rho)``, rounded down so that ``epsilon**2 / 8 <= rho``.

        Examples
        --------
        >>> m = ExponentialMechanism.from_rho(0.1 / 3)
        >>> m.guarantee().rho <= 0.1 / 3
        True
        """
        with owner_scope(cls.__name__):
            r = v.positive("rho", rho)
            eps = math.sqrt(8.0 * r)
            if 0.0 < eps < math.inf:
                eps = round_noise_up("rho", r, eps, 0.0, lambda e: e * e / 8.0)
            return cls(epsilon=eps, sensitivity=sensitivity)

    @property
    def scale(self) -> float:
        """Gumbel scale ``2 * sensitivity / epsilon``."""
        return 2.0 * self.sensitivity / self.epsilon

    def guarantee(self) -> Guarantee:
        """``epsilon``-DP and ``epsilon**2/8``-zCDP."""
        return Guarantee(epsilon=self.epsilon, rho=self.epsilon * self.epsilon / 8.0)

    def log_prob(self, output: Any, value: Any) -> np.ndarray:
        """``log P(output = r | scores)`` with scores on the last axis of ``value``."""
        scores = np.asarray(value, dtype=np.float64)
        # shift by the maximum first: logits <= 0, so a tiny scale gives -inf, never inf - inf
        with np.errstate(over="ignore", invalid="ignore"):
            logits = (scores - np.max(scores, axis=-1, keepdims=True)) / self.scale
        logp = logits - special.logsumexp(logits, axis=-1, keepdims=True)
        r = np.asarray(output)
        ok = (r >= 0) & (r < scores.shape[-1]) & (r == np.round(r))
        idx = np.where(ok, r, 0).astype(np.int64)
        picked = np.take_along_axis(np.broadcast_to(logp, (*idx.shape, scores.shape[-1])), idx[..., None], -1)[..., 0]
        return np.where(ok, picked, -np.inf)

    @owned("ExponentialMechanism")
    def release(self, value: Any, rng: np.random.Generator | None = None) -> np.ndarray:
        """Select one index per score vector (last axis of ``value``)."""
        scores = v.finite_array("scores", value)
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
