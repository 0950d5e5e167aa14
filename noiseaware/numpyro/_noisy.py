r"""NumPyro shell of :class:`Noisy`, the noisy version of any discrete base (math in :mod:`noiseaware._core._noisy`)."""

from __future__ import annotations

import copy
from functools import partial
from typing import Any, ClassVar

from ._common import BK, INT, RELEASE_VALUES, integer, noise_from_key, observe, require_x64  # isort: split

import jax
import jax.numpy as jnp
import numpy as np
from jax import random
from numpyro.distributions import constraints
from numpyro.distributions.batch_util import promote_batch_shape
from numpyro.distributions.distribution import Distribution
from numpyro.distributions.util import validate_sample

from .. import _validation as v
from .._core import _noisy, _specs
from .._validation import current_owner, owner_scope
from ..exceptions import NoiseawareTypeError, NoiseawareValueError

__all__ = ["Noisy"]

_SPEC = _specs.SPECS["Noisy"]


def _noisy_owner_bounds(base: Any) -> tuple[Any, Any]:
    """Support bounds of a scalar discrete base from its constraint (``-inf``/``inf`` when unknown)."""
    support = base.support
    lo = getattr(support, "lower_bound", None)
    hi = getattr(support, "upper_bound", None)
    lo = -np.inf if lo is None else lo
    hi = np.inf if hi is None else hi
    return jnp.asarray(lo, dtype=jnp.float64), jnp.asarray(hi, dtype=jnp.float64)


def _is_multinomial(base: Any) -> bool:
    from numpyro.distributions.discrete import MultinomialLogits, MultinomialProbs

    return isinstance(base, MultinomialProbs | MultinomialLogits)


# One compiled program per (noise spec, base structure): eager calls do not dispatch the window's
# operations one by one; inside an outer jit these inline.
@partial(jax.jit, static_argnames=("spec",))
def _noisy_scalar_logpmf(spec: Any, base: Any, value: Any) -> Any:
    lo, hi = _noisy_owner_bounds(base)
    return _noisy.noisy_logpmf(BK, spec, value, base.log_prob, lo, hi)


@partial(jax.jit, static_argnames=("spec", "total_count"))
def _noisy_multinomial_logpmf(spec: Any, total_count: int, base: Any, value: Any) -> Any:
    from numpyro.distributions.discrete import MultinomialProbs

    if isinstance(base, MultinomialProbs):
        log_p = jnp.log(base.probs)
    else:
        log_p = jax.nn.log_softmax(base.logits, axis=-1)
    return _noisy.noisy_multinomial_logpmf(BK, spec, value, log_p, total_count)


@partial(jax.jit, static_argnames=("spec", "shape"))
def _noisy_noise_draw(spec: Any, shape: tuple[int, ...], key: Any) -> Any:
    """Noise draws of ``shape`` from uniforms (the spec's transforms), compiled once per spec and shape."""
    return noise_from_key(key, spec.family, spec.par, shape)


class Noisy(Distribution):
    r"""The noisy version ``Y = X + D`` of a discrete NumPyro distribution ``X``.

    ``D`` is independent two-sided geometric (``alpha``) or discrete Gaussian (``sigma``) noise,
    one draw per cell, as added by the geometric / discrete Gaussian mechanisms to released
    counts. The log-pmf is the exact convolution

    .. math:: \log P(Y = y) = \operatorname{logsumexp}_k\,[\log P(X = k) + \log g(y - k)]

    over a window of ``2w + 1`` latent counts around ``y`` (shifted into the base's support),
    ``w`` fixed by the concrete noise parameter and ``tol``: relative error at most ``tol`` for
    every observation with ``log p(y) >= -40`` and for any base law, with a proven bound
    (``docs/noisy.md``). A multinomial base (noise on each of its ``K`` cells) is summed exactly
    over the simplex by a dynamic programme, ``O(K (N+1)^2)`` per observation, refused for
    ``N > 999``.

    Parameters
    ----------
    dist : numpyro.distributions.Distribution
        A discrete base (``Poisson``, ``Binomial``, ``NegativeBinomial2``,
        ``NegativeBinomialProbs``, ``ZeroInflatedPoisson``, ``BetaBinomial``, ``Categorical``,
        ``Multinomial``, ...): any distribution with a discrete support and event shape ``()``,
        or a multinomial. Its parameters may be traced (they get gradients); its batch shape is
        the batch shape of the result.
    noise : mapping or Release, optional
        ``{"family": "geometric", "alpha": a}`` (or ``"epsilon"`` and ``"sensitivity"``),
        ``{"family": "discrete_gaussian", "sigma": s}``, or a ``"counts"``
        :class:`~noiseaware.Release` (its mechanism's ``alpha`` / ``sigma``).
    alpha, sigma, epsilon : float, optional
        Shortcuts for ``noise``; give exactly one of ``noise``, ``alpha``, ``sigma``, ``epsilon``
        (``alpha = exp(-epsilon / sensitivity)``). Concrete numbers (they fix the window).
    sensitivity : float, default 1
    tol : float, default 1e-12
    validate_args : bool, optional

    Raises
    ------
    TypeError
        If ``dist`` is not a NumPyro distribution, or ``noise`` has the wrong type.
    ValueError
        For a continuous or multivariate (non-multinomial) base, ``alpha`` outside (0, 1),
        ``sigma <= 0``, a release of another statistic or mechanism, or a multinomial with a
        traced or too large ``total_count``.

    Examples
    --------
    >>> import numpyro.distributions as dist, noiseaware.numpyro as nan
    >>> y = nan.Noisy(dist.Poisson(2.0), alpha=0.5)
    >>> round(float(y.log_prob(3)), 6), float(y.mean), float(y.variance)
    (-1.883327, 2.0, 6.0)
    """

    arg_constraints: ClassVar[dict[str, Any]] = {
        "alpha": constraints.open_interval(0.0, 1.0),
        "sigma": constraints.positive,
    }
    pytree_data_fields = ("base_dist",)
    pytree_aux_fields: tuple[str, ...] = ("spec", "alpha", "sigma", "total_count")

    def __init__(
        self,
        dist: Any,
        noise: Any = None,
        *,
        alpha: Any = None,
        sigma: Any = None,
        epsilon: Any = None,
        sensitivity: Any = 1.0,
        tol: Any = _noisy.DEFAULT_TOL,
        validate_args: bool | None = None,
    ) -> None:
        require_x64()
        owner = type(self).__name__
        with owner_scope(owner):
            self.spec, _ = _noisy.noise_spec(
                noise, alpha=alpha, sigma=sigma, epsilon=epsilon, sensitivity=sensitivity, tol=tol
            )
            self.alpha = self.spec.par if self.spec.family == "geometric" else None
            self.sigma = self.spec.par if self.spec.family == "discrete_gaussian" else None
            self.total_count: int | None = None
            if not isinstance(dist, Distribution):
                raise NoiseawareTypeError(
                    f"{owner}: dist must be a numpyro.distributions.Distribution (the law of the true counts); "
                    f"got dist={dist!r}."
                )
            support = dist.support
            if support is None or not support.is_discrete:
                raise NoiseawareValueError(
                    f"{owner}: dist must be a discrete distribution (integer counts); "
                    f"got dist={type(dist).__name__} with support {support}."
                )
            if _is_multinomial(dist):
                self.total_count = _multinomial_total(dist.total_count)
                _noisy.check_multinomial_size(self.total_count)
            elif dist.event_shape:
                raise NoiseawareValueError(
                    f"{owner}: dist must have event shape () or be a Multinomial; got dist={type(dist).__name__} "
                    f"with event shape {dist.event_shape}."
                )
            self.base_dist = dist
            super().__init__(
                batch_shape=dist.batch_shape, event_shape=dist.event_shape, validate_args=validate_args
            )

    @constraints.dependent_property(is_discrete=True)
    def support(self) -> Any:
        """All integers (each cell, for a multinomial base)."""
        return constraints.independent(integer, 1) if self.event_shape else integer

    def get_args(self) -> dict[str, Any]:
        """The noise parameter that is set (``alpha`` or ``sigma``)."""
        return {k: val for k, val in super().get_args().items() if val is not None}

    def sample(self, key: Any, sample_shape: tuple[int, ...] = ()) -> Any:
        """A base draw plus an independent noise draw per cell."""
        k1, k2 = random.split(key)
        x = self.base_dist.sample(k1, sample_shape)
        shape = sample_shape + self.batch_shape + self.event_shape
        return (jnp.broadcast_to(x, shape) + _noisy_noise_draw(self.spec, shape, k2)).astype(INT)

    @validate_sample
    def log_prob(self, value: Any) -> Any:
        """Exact log-pmf (the windowed convolution above); ``-inf`` for non-integers."""
        if self.total_count is not None:
            return _noisy_multinomial_logpmf(self.spec, self.total_count, self.base_dist, value)
        return _noisy_scalar_logpmf(self.spec, self.base_dist, value)

    def log_cdf(self, value: Any) -> Any:
        """``log P(X + D <= value)`` for a scalar base with a ``cdf`` (e.g. ``Poisson``, ``Geometric``).

        ``logsumexp_{|d| <= w} [log g(d) + log F_X(value - d)]``, a lower bound within relative
        ``tol`` wherever ``log P(Y <= value) >= -40``.
        Raises ``NotImplementedError`` for a multinomial base or a base without a ``cdf``.
        """
        if self.total_count is not None:
            raise NotImplementedError("Noisy: the CDF is defined for scalar bases only (not Multinomial).")
        base = self.base_dist

        def base_logcdf(k: Any) -> Any:
            lo, _ = _noisy_owner_bounds(base)
            inside = k >= lo
            return jnp.where(inside, jnp.log(base.cdf(jnp.where(inside, k, lo))), -jnp.inf)

        try:
            return _noisy.noisy_logcdf(BK, self.spec, value, base_logcdf)
        except NotImplementedError:
            raise NotImplementedError(
                f"Noisy: the base {type(base).__name__} has no cdf, so the noisy version has none either."
            ) from None

    def cdf(self, value: Any) -> Any:
        """``P(X + D <= value)`` (see :meth:`log_cdf`)."""
        return jnp.exp(self.log_cdf(value))

    @property
    def mean(self) -> Any:
        """The base's mean (the noise has mean 0)."""
        return jnp.broadcast_to(self.base_dist.mean, self.batch_shape + self.event_shape)

    @property
    def variance(self) -> Any:
        """The base's variance plus the noise variance (per cell)."""
        return jnp.broadcast_to(self.base_dist.variance + self.spec.variance, self.batch_shape + self.event_shape)

    @classmethod
    def from_release(cls, name: str, release: Any, dist: Any, *, obs: Any = RELEASE_VALUES, **kwargs: Any) -> Any:
        """``numpyro.sample(name, Noisy(dist, noise=release), obs=release.values)``.

        The release must be a ``"counts"`` release with geometric or discrete Gaussian noise;
        each released cell is one observed noisy count. ``dist`` is expanded to the release's
        shape when its batch shape is smaller (e.g. one rate for every cell). ``obs=None`` leaves
        the site unobserved, shaped like the release (for ``Predictive``). The release comes
        second, as in every ``from_release``.
        """
        with owner_scope(cls.__name__):
            args, values = _SPEC.release_args(release)
        return observe(name, cls(dist, **args, **kwargs), values, obs)


@promote_batch_shape.register
def _promote_batch_shape_noisy(d: Noisy) -> Noisy:
    """NumPyro's ``promote_batch_shape`` (``scan`` over a site): the batch shape is the base's, promoted."""
    new = copy.copy(d)
    new.base_dist = promote_batch_shape(d.base_dist)
    new._batch_shape = new.base_dist.batch_shape
    return new


def _multinomial_total(total_count: Any) -> int:
    """The single concrete total count of a multinomial base."""
    owner = current_owner()
    if isinstance(total_count, jax.core.Tracer):
        raise NoiseawareValueError(
            f"{owner}: a multinomial base needs a concrete total_count (it fixes the exact sum over the "
            "simplex); got a traced total_count."
        )
    arr = np.unique(np.asarray(total_count))
    if arr.size != 1:
        raise NoiseawareValueError(
            f"{owner}: a multinomial base needs one total_count for all cells; got total_count={arr.tolist()}."
        )
    return v.integer("total_count", arr.item(), minimum=0)
