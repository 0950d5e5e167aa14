r"""PyMC shells of :class:`TwoSidedGeometric` and :class:`DiscreteGaussian`.

Specs in :mod:`noiseaware._core._specs`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ._common import (  # isort: split
    PT,
    CountRV,
    alpha_arg,
    as_float,
    checked,
    noise_from_generator,
    observed_kwargs,
    param_batch,
    shape_of,
    sized,
)

import pymc as pm
import pytensor.tensor as pt

from .._core import _specs
from .._validation import owner_scope

__all__ = ["DiscreteGaussian", "TwoSidedGeometric"]

_TSG = _specs.SPECS["TwoSidedGeometric"]
_DG = _specs.SPECS["DiscreteGaussian"]


def _mode(size: Any, loc: Any, par: Any) -> Any:
    return sized(size, _specs.mode_support_point(PT, loc, par), dtype="int64")


# --------------------------------------------------------------------------- TwoSidedGeometric
class _IntegerNoiseRV(CountRV):
    """RandomVariable ``loc + D`` (inputs ``loc, par``), ``D`` the integer noise of the class's ``family``."""

    signature = "(),()->()"
    family: str

    @classmethod
    def rng_fn(cls, rng: np.random.Generator, loc: Any, par: Any, size: Any) -> np.ndarray:
        """``loc`` plus noise from the package's exact sampler of ``family`` (:func:`noise_from_generator`)."""
        shape = shape_of(size, loc, par)
        noise = noise_from_generator(rng, cls.family, par, shape)
        return np.asarray(np.broadcast_to(loc, shape) + noise).astype(np.int64)


class TwoSidedGeometricRV(_IntegerNoiseRV):
    """RandomVariable of :class:`TwoSidedGeometric` (``loc + G1 - G2`` from two uniforms per draw)."""

    name = "two_sided_geometric"
    family = "geometric"


two_sided_geometric = TwoSidedGeometricRV()


def _tsg_checked(res: Any, alpha: Any) -> Any:
    """``res`` with :class:`TwoSidedGeometric`'s parameter rule (``alpha`` in (0, 1)) checked."""
    return checked(res, _TSG.rules, {"alpha": (alpha > 0, alpha < 1)})


class _IntegerNoise(pm.Discrete):
    """``loc + D`` on the integers, ``D`` integer noise with parameter ``scale_name``: what both laws share."""

    scale_name: ClassVar[str]
    spec: ClassVar[Any]

    @classmethod
    def from_release(cls, name: str, release: Any, loc: Any, **kwargs: Any) -> Any:
        """Observed ``cls(name, loc, scale)`` with the noise parameter and the values from the release.

        The shape is the release's, or follows ``loc``'s when that depends on a ``pm.Data``
        container and equals the release's (predictions for new units after ``pm.set_data``).
        Raises ``ValueError`` unless the release's mechanism is of the class's family.
        """
        with owner_scope(cls.__name__):
            args, values = cls.spec.release_args(release)
        return cls(name, loc=loc, **args, **observed_kwargs(values, kwargs, param_batch(loc, args[cls.scale_name])))


class TwoSidedGeometric(_IntegerNoise):
    r"""Two-sided geometric (discrete Laplace) distribution on the integers.

    .. math:: P(K = k) = \frac{1-\alpha}{1+\alpha}\,\alpha^{|k-\mathrm{loc}|},\qquad k\in\mathbb{Z},

    the output law of the geometric mechanism (Wang, Feldman & Reiter (2026), *Differentially Private
    Bayesian Inference for Gaussian Copula Correlations*, Definition 2.3, eq. 3) with
    ``alpha = exp(-epsilon / sensitivity)``.

    Parameters
    ----------
    loc : tensor_like of int
    alpha : tensor_like of float, optional
        In (0, 1); or give ``epsilon`` (and ``sensitivity``, default 1).
    epsilon, sensitivity : tensor_like of float, optional

    Raises
    ------
    NoiseawareValueError
        Unless exactly one of ``alpha`` and ``epsilon`` is given.

    Examples
    --------
    >>> import pymc as pm, noiseaware.pymc as nap
    >>> x = nap.TwoSidedGeometric.dist(loc=3, epsilon=1.0)
    >>> round(float(pm.logp(x, 3).eval()), 6)
    -0.771937
    """

    rv_op = two_sided_geometric
    scale_name = "alpha"
    spec = _TSG

    @classmethod
    def dist(  # type: ignore[override]
        cls, loc: Any = 0, alpha: Any = None, *, epsilon: Any = None, sensitivity: Any = 1.0, **kwargs: Any
    ) -> Any:
        """Build the random variable; give ``alpha`` or ``epsilon``."""
        with owner_scope(cls.__name__):
            alpha = alpha_arg(alpha, epsilon, sensitivity)
            return super().dist([pt.as_tensor_variable(loc), alpha], **kwargs)

    def support_point(rv: Any, size: Any, loc: Any, alpha: Any) -> Any:
        """The mode, ``loc``."""
        return _mode(size, loc, alpha)

    def logp(value: Any, loc: Any, alpha: Any) -> Any:
        """Log-pmf; ``-inf`` off the integers."""
        return _tsg_checked(_TSG.part("logp")(PT, value, loc=loc, alpha=alpha), alpha)

    def logcdf(value: Any, loc: Any, alpha: Any) -> Any:
        """Closed-form log-CDF."""
        return _tsg_checked(_TSG.part("logcdf")(PT, value, loc=loc, alpha=alpha), alpha)

    def icdf(value: Any, loc: Any, alpha: Any) -> Any:
        """Closed-form inverse CDF: the smallest integer ``k`` with ``P(K <= k) >= value``."""
        from .._core import two_sided_geometric_icdf

        return _tsg_checked(two_sided_geometric_icdf(PT, value, loc, alpha), alpha)


# --------------------------------------------------------------------------- DiscreteGaussian
class DiscreteGaussianRV(_IntegerNoiseRV):
    """RandomVariable of :class:`DiscreteGaussian` (CKS20 rejection sampler, fixed number of proposals)."""

    name = "discrete_gaussian"
    family = "discrete_gaussian"


discrete_gaussian = DiscreteGaussianRV()


class DiscreteGaussian(_IntegerNoise):
    r"""Discrete Gaussian distribution on the integers (Canonne, Kamath & Steinke 2020).

    .. math:: P(K = k) = \frac{e^{-(k-\mathrm{loc})^2/(2\sigma^2)}}{Z(\sigma)},\qquad
              Z(\sigma) = \sum_{j\in\mathbb{Z}} e^{-j^2/(2\sigma^2)},

    exactly normalized: Poisson summation for ``sigma >= 1`` and a direct sum for
    ``sigma < 1``, each with a proven bound below 1e-36 on the dropped terms (see
    :func:`noiseaware.mechanisms.discrete_gaussian_log_normalizer`).

    Parameters
    ----------
    loc : tensor_like of int
    sigma : tensor_like of float
        Scale (> 0).

    Examples
    --------
    >>> import pymc as pm, noiseaware.pymc as nap
    >>> round(float(pm.logp(nap.DiscreteGaussian.dist(0, 2.0), 0).eval()), 6)
    -1.612086
    """

    rv_op = discrete_gaussian
    scale_name = "sigma"
    spec = _DG

    @classmethod
    def dist(cls, loc: Any = 0, sigma: Any = 1.0, **kwargs: Any) -> Any:  # type: ignore[override]
        """Build the random variable."""
        return super().dist([pt.as_tensor_variable(loc), as_float(sigma)], **kwargs)

    def support_point(rv: Any, size: Any, loc: Any, sigma: Any) -> Any:
        """The mode, ``loc``."""
        return _mode(size, loc, sigma)

    def logp(value: Any, loc: Any, sigma: Any) -> Any:
        """Log-pmf; ``-inf`` off the integers."""
        res = _DG.part("logp")(PT, value, loc=loc, sigma=sigma)
        return checked(res, _DG.rules, {"sigma": sigma > 0})


