r"""PyMC shell of :class:`LaplaceCensoredDirichletStat` (Guo et al. 2022, eq. 6; spec in ``_core._specs``)."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from ._common import PT, checked  # isort: split

import pymc as pm
import pytensor.tensor as pt
from pytensor.tensor.linalg import cholesky

from .. import _validation as v
from .._core import _dirichlet as core
from .._core import _specs
from .._core._noise import NOISE_LAWS
from .._validation import owner_scope
from ..exceptions import NoiseawareValueError

__all__ = ["LaplaceCensoredDirichletStat"]

_SPEC = _specs.SPECS["LaplaceCensoredDirichletStat"]


def _moments(alpha: Any, n: int, a: float, moments: str) -> tuple[Any, Any]:
    """Mean and covariance of ``S_0``; a bad ``alpha`` raises ``ParameterValueError`` when evaluated."""
    alpha = pt.as_tensor_variable(alpha, dtype="float64")
    alpha = checked(alpha, _SPEC.rules, {"alpha": (pt.all(alpha > 0), pt.all(pt.lt(alpha, np.inf)))})
    mean, cov = core.logmean_moments(PT, alpha, math.log(a), moments)
    return mean, cov / n


def _checked_scale(scale: Any) -> Any:
    """``scale`` as a tensor that raises ``ParameterValueError`` (PyMC's idiom) when it is not > 0."""
    scale = pt.as_tensor_variable(scale, dtype="float64")
    return checked(scale, _SPEC.rules, {"scale": pt.all(scale > 0)})


def _check(n: Any, a: Any, scale: Any, moments: str) -> tuple[int, float, Any]:
    nn, aa = core.check_statistic_args(n, a, moments)
    if isinstance(scale, int | float | np.floating | np.integer):
        scale = v.positive("scale", scale)
    return nn, aa, scale


def _laplace_logp(value: Any, s0: Any, scale: Any) -> Any:
    """``sum_j log Laplace(value_j | s0_j, scale)``: the noise of eq. (6) given the latent ``S_0``."""
    lp = NOISE_LAWS["laplace"].logpdf(PT, value, s0, scale)
    return checked(pt.sum(lp, axis=-1), _SPEC.rules, {"scale": pt.all(scale > 0)})


def _conditional_graph(s0: Any, scale: Any, size: Any) -> Any:
    """``s0`` plus Laplace(0, scale) noise as a PyTensor graph (draws compiled by every backend, Numba included)."""
    from pymc.distributions.shape_utils import rv_size_is_none

    shape = s0.shape if rv_size_is_none(size) else pt.concatenate([size, s0.shape[-1:]])
    return s0 + pm.Laplace.dist(0.0, pt.shape_padright(scale), shape=shape)


def _marginal_graph(alpha: Any, scale: Any, size: Any, *, n: int, a: float, moments: str) -> Any:
    mean, cov = _moments(alpha, n, a, moments)
    s0 = pm.MvNormal.dist(mu=mean, cov=cov, size=size)
    return s0 + pm.Laplace.dist(0.0, _checked_scale(scale), shape=s0.shape)


class LaplaceCensoredDirichletStat:
    r"""Noisy censored mean-log statistic of ``n`` Dirichlet records, Guo et al. (2022) eq. (6), for PyMC.

    .. math:: S_L = S_0 + \varepsilon,\qquad S_0\sim N\!\bigl(\mu(\alpha),\ \Sigma(\alpha)/n\bigr),
              \qquad \varepsilon_j\overset{iid}{\sim}\mathrm{Laplace}(0,\ \text{scale}),

    with ``scale = -d log(a) / (n epsilon_1)`` (Algorithm 1). ``moments="censored"`` (default)
    uses the mean and covariance of :math:`\log\max(x_j, a)` under the Beta marginals
    (Supplement S1), so a large threshold ``a`` does not bias ``alpha``; ``moments="asymptotic"``
    is the paper's uncensored :math:`\mu=\psi(\alpha)-\psi(\alpha_0)`,
    :math:`\Sigma=\mathrm{diag}\,\psi_1(\alpha)-\psi_1(\alpha_0)`.

    **One protocol in both PPLs.** ``LaplaceCensoredDirichletStat(name, alpha, n, a, scale,
    observed=...)`` is a distribution like any other: ``name`` is an observed ``pm.CustomDist``
    with ``logp`` and draws (prior and posterior predictive work; ``observed=None`` gives a free
    variable). The density of :math:`S_L` has no closed form, so the variable is the Laplace
    noise around its **latent variables**, which are added to the model under these names:

    - ``{name}_s0_z`` ~ N(0, I) and the deterministic ``{name}_s0 = mu + L z`` (default,
      ``parameterization="noncentered"``), or
    - ``{name}_s0`` ~ MvNormal(mu, Sigma / n) (``parameterization="centered"``).

    The NumPyro class has the same latent sites (its
    :meth:`~noiseaware.numpyro.LaplaceCensoredDirichletStat.with_latent`).
    :meth:`dist` without ``s0`` is the marginal law of :math:`S_L` for forward draws
    (``pm.draw``; PyMC cannot derive its ``logp``); with ``s0`` it is the conditional law.
    :meth:`joint_logp` is the closed-form joint density.

    Parameters
    ----------
    name : str
    alpha : tensor_like, shape (d,)
        Dirichlet parameter (static length d >= 2).
    n : int
    a : float
        Censoring threshold in (0, 1).
    scale : tensor_like
        Laplace scale of the noise on the mean.
    observed : array_like, shape (d,), optional
    moments : {"censored", "asymptotic"}
    parameterization : {"noncentered", "centered"}
    **kwargs
        Passed to ``pm.CustomDist``.

    Returns
    -------
    TensorVariable
        The variable ``name`` of law Laplace(``{name}_s0``, scale).

    Raises
    ------
    NoiseawareValueError
        For bad ``n``, ``a``, ``scale``, ``moments``, ``parameterization``, or ``observed`` not a
        finite vector of length d.

    Examples
    --------
    >>> import numpy as np, pymc as pm, noiseaware.pymc as nap
    >>> with pm.Model() as m:
    ...     alpha = pm.Gamma("alpha", 1.0, 0.1, shape=3)
    ...     _ = nap.LaplaceCensoredDirichletStat("s", alpha, n=1000, a=0.01, scale=0.05,
    ...                                          observed=np.array([-1.5, -1.1, -0.8]))
    >>> sorted(m.named_vars), [v.name for v in m.observed_RVs]
    (['alpha', 's', 's_s0', 's_s0_z'], ['s'])
    """

    def __new__(  # type: ignore[misc]
        cls,
        name: str,
        alpha: Any,
        n: Any,
        a: Any,
        scale: Any,
        *,
        observed: Any = None,
        moments: str = "censored",
        parameterization: str = "noncentered",
        **kwargs: Any,
    ) -> Any:
        owner = cls.__name__
        with owner_scope(owner):
            nn, aa, scale = _check(n, a, scale, moments)
            v.choice("parameterization", parameterization, core.PARAMETERIZATIONS)
            alpha = pt.as_tensor_variable(alpha, dtype="float64")
            d = alpha.type.shape[-1] if alpha.ndim == 1 else None
            if observed is not None:
                obs = v.finite_array(
                    "observed", observed, remedy="Pass the release's values, or use from_release."
                )
                if d is None:
                    d = obs.shape[-1] if obs.ndim == 1 else None
                if obs.ndim != 1 or d is None or obs.shape[0] != d or d < 2:
                    raise NoiseawareValueError(
                        f"{owner}: observed must be a vector of length d >= 2 matching alpha; "
                        f"got shape {obs.shape} and alpha of type {alpha.type}."
                    )
                kwargs["observed"] = obs
            if d is None or d < 2:
                raise NoiseawareValueError(
                    f"{owner}: alpha must be a vector with a static length d >= 2 (or give observed); "
                    f"got alpha of type {alpha.type}."
                )
            s0 = cls.latent(name, alpha, nn, aa, d=d, moments=moments, parameterization=parameterization)
            return pm.CustomDist(name, s0, _checked_scale(scale), **cls._conditional_kwargs(), **kwargs)

    @staticmethod
    def latent(
        name: str,
        alpha: Any,
        n: int,
        a: float,
        *,
        d: int,
        moments: str = "censored",
        parameterization: str = "noncentered",
    ) -> Any:
        """Add the latent ``S_0`` of ``name`` to the model (``{name}_s0_z`` / ``{name}_s0``) and return it."""
        mean, cov = _moments(alpha, n, a, moments)
        if parameterization == "centered":
            return pm.MvNormal(f"{name}_s0", mu=mean, cov=cov, shape=(d,))
        z = pm.Normal(f"{name}_s0_z", 0.0, 1.0, shape=(d,))
        # In compiled model graphs PyMC turns the check into -inf (its check_bounds idiom): a bad
        # alpha then gives logp = -inf rather than NaN.
        alpha = pt.as_tensor_variable(alpha, dtype="float64")
        s0 = checked(mean + cholesky(cov) @ z, _SPEC.rules, {"alpha": pt.all(alpha > 0)})
        return pm.Deterministic(f"{name}_s0", s0)

    @staticmethod
    def _conditional_kwargs() -> dict[str, Any]:
        return {"logp": _laplace_logp, "dist": _conditional_graph, "signature": "(d),()->(d)"}

    @classmethod
    def dist(
        cls, alpha: Any, n: Any, a: Any, scale: Any, *, s0: Any = None, moments: str = "censored", **kwargs: Any
    ) -> Any:
        """The law of ``S_L``: marginal (forward draws only) without ``s0``; Laplace(``s0``, scale) with it."""
        with owner_scope(cls.__name__):
            nn, aa, scale = _check(n, a, scale, moments)
            if s0 is not None:
                s0 = pt.as_tensor_variable(s0, dtype="float64")
                return pm.CustomDist.dist(s0, _checked_scale(scale), **cls._conditional_kwargs(), **kwargs)
            graph = partial(_marginal_graph, n=nn, a=aa, moments=moments)
            alpha = pt.as_tensor_variable(alpha, dtype="float64")
            scale = pt.as_tensor_variable(scale, dtype="float64")
            return pm.CustomDist.dist(alpha, scale, dist=graph, signature="(d),()->(d)", **kwargs)

    @classmethod
    def joint_logp(
        cls, value: Any, s0: Any, alpha: Any, n: Any, a: Any, scale: Any, *, moments: str = "censored"
    ) -> Any:
        """``log p(S_L = value, S_0 = s0 | alpha)`` as a PyTensor expression."""
        with owner_scope(cls.__name__):
            nn, aa, scale = _check(n, a, scale, moments)
            mean, cov = _moments(alpha, nn, aa, moments)
            value = pt.as_tensor_variable(value, dtype="float64")
            s0 = pt.as_tensor_variable(s0, dtype="float64")
            return core.mvn_logpdf(PT, s0, mean, cov) + _laplace_logp(value, s0, _checked_scale(scale))

    @classmethod
    def from_release(cls, name: str, release: Any, alpha: Any, *, part: int | None = None, **kwargs: Any) -> Any:
        """The model with ``S_L``, ``n``, ``a`` and the scale read from a ``dirichlet_logmean`` release.

        ``part`` picks the part of a split release (default: the last, ``D2``; ``0`` is ``D1``).
        ``observed=None`` leaves ``name`` free (for predictive checks).
        """
        with owner_scope(cls.__name__):
            args, values = _SPEC.release_args(release, part)
        kwargs.setdefault("observed", values)
        return cls(name, alpha, **args, **kwargs)
