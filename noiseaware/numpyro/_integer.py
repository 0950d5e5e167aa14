r"""NumPyro shells of :class:`TwoSidedGeometric` and :class:`DiscreteGaussian`.

Specs in :mod:`noiseaware._core._specs`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ._common import BK, INT, RELEASE_VALUES, alpha_arg, f64, integer, noise_from_key, observe  # isort: split

import jax.numpy as jnp
from jax import lax
from numpyro.distributions import constraints
from numpyro.distributions.distribution import Distribution
from numpyro.distributions.util import validate_sample

from .._core import _specs
from .._validation import owner_scope

__all__ = ["DiscreteGaussian", "TwoSidedGeometric"]

_TSG = _specs.SPECS["TwoSidedGeometric"]
_DG = _specs.SPECS["DiscreteGaussian"]


class _IntegerNoise(Distribution):
    """``loc + D`` on the integers, ``D`` the noise of the registry's ``family`` with parameter ``scale_name``.

    The body both integer laws share: exact draws from the registry's sampler, the spec's
    log-pmf, the mean ``loc``, the noise variance, and :meth:`from_release`.
    """

    family: ClassVar[str]
    scale_name: ClassVar[str]
    spec: ClassVar[Any]
    support = integer

    def _init(self, loc: Any, scale: Any, validate_args: bool | None) -> None:
        self.loc = f64(loc)
        setattr(self, self.scale_name, scale)
        batch_shape = lax.broadcast_shapes(jnp.shape(self.loc), jnp.shape(scale))
        super().__init__(batch_shape=batch_shape, validate_args=validate_args)

    @property
    def _scale(self) -> Any:
        return getattr(self, self.scale_name)

    def sample(self, key: Any, sample_shape: tuple[int, ...] = ()) -> Any:
        """``loc`` plus the noise from the registry's exact sampler of the family (integer dtype)."""
        shape = sample_shape + self.batch_shape
        d = noise_from_key(key, self.family, self._scale, shape)
        return (self.loc + d).astype(INT)

    @validate_sample
    def log_prob(self, value: Any) -> Any:
        """Log-pmf; ``-inf`` for non-integers."""
        return self.spec.part("logp")(BK, value, loc=self.loc, **{self.scale_name: self._scale})

    @property
    def mean(self) -> Any:
        """``loc``."""
        return jnp.broadcast_to(self.loc, self.batch_shape)

    @property
    def variance(self) -> Any:
        """The noise variance, exact: ``2 alpha / (1 - alpha)^2``, or just below ``sigma^2`` (discrete Gaussian)."""
        return jnp.broadcast_to(_specs.noise_variance(BK, self.family, self._scale), self.batch_shape)

    @classmethod
    def from_release(cls, name: str, release: Any, loc: Any, *, obs: Any = RELEASE_VALUES, **kwargs: Any) -> Any:
        """``numpyro.sample(name, cls(loc, scale), obs=release.values)``, the noise parameter from the release.

        ``obs=None`` leaves the site unobserved, shaped like the release (for ``Predictive``).
        Raises ``ValueError`` unless the release's mechanism is of the class's family.
        """
        with owner_scope(cls.__name__):
            args, values = cls.spec.release_args(release)
        return observe(name, cls(loc, **args, **kwargs), values, obs)


class TwoSidedGeometric(_IntegerNoise):
    r"""Two-sided geometric (discrete Laplace) distribution on the integers.

    .. math:: P(K = k) = \frac{1-\alpha}{1+\alpha}\,\alpha^{|k-\mathrm{loc}|},\qquad k\in\mathbb{Z},

    the output law of the geometric mechanism (Wang, Feldman & Reiter (2026), *Differentially Private
    Bayesian Inference for Gaussian Copula Correlations*, Definition 2.3, eq. 3) with
    ``alpha = exp(-epsilon / sensitivity)``.

    Parameters
    ----------
    loc : array_like of int
        Centre (the true count).
    alpha : array_like of float, optional
        In (0, 1). Give this or ``epsilon``.
    epsilon : array_like of float, optional
        Privacy loss; ``alpha = exp(-epsilon / sensitivity)``.
    sensitivity : float, default 1
    validate_args : bool, optional

    Examples
    --------
    >>> import noiseaware.numpyro as nan
    >>> d = nan.TwoSidedGeometric(3, epsilon=1.0)
    >>> round(float(d.log_prob(3)), 6)  # log tanh(1/2)
    -0.771937
    """

    arg_constraints: ClassVar[dict[str, Any]] = {
        "loc": integer,
        "alpha": constraints.open_interval(0.0, 1.0),
    }
    family = "geometric"
    scale_name = "alpha"
    spec = _TSG

    def __init__(
        self,
        loc: Any = 0,
        alpha: Any = None,
        *,
        epsilon: Any = None,
        sensitivity: Any = 1.0,
        validate_args: bool | None = None,
    ) -> None:
        with owner_scope(type(self).__name__):
            self._init(loc, alpha_arg(alpha, epsilon, sensitivity), validate_args)

    def cdf(self, value: Any) -> Any:
        """``P(K <= value)`` in closed form."""
        return jnp.exp(self.log_cdf(value))

    def log_cdf(self, value: Any) -> Any:
        """``log P(K <= value)``."""
        return _TSG.part("logcdf")(BK, value, loc=self.loc, alpha=self.alpha)

    def icdf(self, q: Any) -> Any:
        """Smallest integer ``k`` with ``P(K <= k) >= q`` (closed form), as float."""
        from .._core import two_sided_geometric_icdf

        return two_sided_geometric_icdf(BK, q, self.loc, self.alpha)


class DiscreteGaussian(_IntegerNoise):
    r"""Discrete Gaussian distribution on the integers (Canonne, Kamath & Steinke 2020).

    .. math:: P(K = k) = \frac{e^{-(k-\mathrm{loc})^2/(2\sigma^2)}}{Z(\sigma)},\qquad
              Z(\sigma) = \sum_{j\in\mathbb{Z}} e^{-j^2/(2\sigma^2)},

    exactly normalized: Poisson summation for ``sigma >= 1`` and a direct sum for
    ``sigma < 1``, each with a proven bound below 1e-36 on the dropped terms (see
    :func:`noiseaware.mechanisms.discrete_gaussian_log_normalizer`).

    Parameters
    ----------
    loc : array_like of int
    sigma : array_like of float
        Scale (> 0).
    validate_args : bool, optional

    Examples
    --------
    >>> import noiseaware.numpyro as nan
    >>> round(float(nan.DiscreteGaussian(0, 2.0).log_prob(0)), 6)
    -1.612086
    """

    arg_constraints: ClassVar[dict[str, Any]] = {"loc": integer, "sigma": constraints.positive}
    family = "discrete_gaussian"
    scale_name = "sigma"
    spec = _DG

    def __init__(self, loc: Any = 0, sigma: Any = 1.0, *, validate_args: bool | None = None) -> None:
        self._init(loc, f64(sigma), validate_args)
