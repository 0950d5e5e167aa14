r"""NumPyro shell of :class:`LaplaceCensoredDirichletStat` (Guo et al. 2022, eq. 6; spec in ``_core._specs``)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ._common import BK  # isort: split

import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from jax import random
from numpyro.distributions import constraints
from numpyro.distributions.distribution import Distribution
from numpyro.distributions.util import validate_sample

from .. import _validation as v
from .._core import _dirichlet as core
from .._core import _specs
from .._core._noise import NOISE_LAWS
from .._validation import owner_scope
from ..exceptions import NoiseawareValueError

__all__ = ["LaplaceCensoredDirichletStat"]

_SPEC = _specs.SPECS["LaplaceCensoredDirichletStat"]


def observe_latent(
    name: str,
    alpha: Any,
    n: Any,
    log_a: Any,
    scale: Any,
    obs: Any,
    *,
    moments: str,
    parameterization: str,
    terms: int | None = None,
) -> Any:
    r"""The sites of :meth:`LaplaceCensoredDirichletStat.observe`, without its argument checks.

    ``n``, ``log_a`` (:math:`\log a`) and ``scale`` may be traced JAX scalars and ``obs`` a traced
    ``(d,)`` array, so a model that takes the data as arguments compiles once for all data of one
    shape (:func:`noiseaware.dirichlet.fit`). ``moments``, ``parameterization`` and ``terms`` (the
    censoring series' length for the known threshold, see ``logmean_moments``) are static.
    """
    s0 = _latent_sites(name, alpha, n, log_a, moments, parameterization, terms)
    return numpyro.sample(name, dist.Laplace(s0, scale).to_event(1), obs=obs)


def _latent_sites(
    name: str, alpha: Any, n: Any, log_a: Any, moments: str, parameterization: str, terms: int | None = None
) -> Any:
    """The latent ``S_0`` sites of ``name`` (see :meth:`LaplaceCensoredDirichletStat.with_latent`)."""
    mean, cov = core.logmean_moments(BK, alpha, log_a, moments, terms)
    cov = cov / n
    d = mean.shape[-1]
    if parameterization == "centered":
        return numpyro.sample(f"{name}_s0", dist.MultivariateNormal(mean, covariance_matrix=cov))
    z = numpyro.sample(f"{name}_s0_z", dist.Normal(jnp.zeros(d), 1.0).to_event(1))
    return numpyro.deterministic(f"{name}_s0", mean + jnp.linalg.cholesky(cov) @ z)


class LaplaceCensoredDirichletStat(Distribution):
    r"""Noisy censored mean-log statistic of ``n`` Dirichlet records, Guo et al. (2022) eq. (6).

    .. math:: S_L = S_0 + \varepsilon,\qquad S_0\sim N\!\bigl(\mu(\alpha),\ \Sigma(\alpha)/n\bigr),
              \qquad \varepsilon_j\overset{iid}{\sim}\mathrm{Laplace}(0,\ \text{scale}),

    with ``scale = -d log(a) / (n epsilon_1)`` (Algorithm 1). ``moments="censored"`` (default)
    uses the mean and covariance of :math:`\log\max(x_j, a)` under the Beta marginals
    (Supplement S1), so a large threshold ``a`` does not bias ``alpha``; ``moments="asymptotic"``
    is the paper's uncensored :math:`\mu=\psi(\alpha)-\psi(\alpha_0)`,
    :math:`\Sigma=\mathrm{diag}\,\psi_1(\alpha)-\psi_1(\alpha_0)`.

    **One protocol in both PPLs.** The density of :math:`S_L` is a d-dimensional convolution of
    a correlated Gaussian with independent Laplace noise and has no closed form (its
    off-diagonal covariance is negative, so no one-dimensional mixture represents it).
    Inference therefore keeps :math:`S_0` as a latent variable that NUTS samples, and the
    observed site is the Laplace noise around it, as in the PyMC class:

    .. code-block:: python

        d = LaplaceCensoredDirichletStat(alpha, n, a, scale).with_latent("s")
        numpyro.sample("s", d, obs=s_l)

    :meth:`with_latent` adds the **latent sites** ``{name}_s0_z ~ N(0, I)`` and the
    deterministic ``{name}_s0 = mu + L z`` (``parameterization="noncentered"``, default) or
    ``{name}_s0 ~ MultivariateNormal(mu, Sigma / n)`` (``"centered"``), and returns the law
    given ``s0``, whose :meth:`log_prob` is the Laplace log-density. :meth:`from_release` and
    the older :meth:`observe` do both steps. Without ``s0`` the object is the marginal law of
    :math:`S_L`: :meth:`sample` draws it exactly, :attr:`mean` and :attr:`variance` are exact,
    and :meth:`log_prob` raises (no closed form). :meth:`joint_log_prob` is the closed-form joint
    density and :attr:`latent` the law of :math:`S_0`.

    Parameters
    ----------
    alpha : array_like, shape (d,)
        Dirichlet parameter (> 0), d >= 2.
    n : int
        Number of records behind the statistic.
    a : float
        Censoring threshold in (0, 1).
    scale : float
        Laplace scale of the noise on the mean (> 0).
    s0 : array_like, shape (d,), optional
        The latent :math:`S_0` (see :meth:`with_latent`); given, the law is Laplace(``s0``, scale).
    moments : {"censored", "asymptotic"}
    validate_args : bool, optional

    Raises
    ------
    NoiseawareValueError
        For bad ``n``, ``a``, ``moments``, or ``alpha`` / ``scale`` / ``s0`` of the wrong shape.

    Examples
    --------
    >>> import jax, numpy as np, noiseaware.numpyro as nan
    >>> d = nan.LaplaceCensoredDirichletStat(np.array([2.2, 3.3, 4.4]), n=1000, a=0.01, scale=0.05)
    >>> d.sample(jax.random.PRNGKey(0), (2,)).shape
    (2, 3)
    >>> import numpyro
    >>> from numpyro import handlers
    >>> def model():
    ...     numpyro.sample("s", d.with_latent("s"), obs=np.array([-1.5, -1.1, -0.8]))
    >>> sorted(handlers.trace(handlers.seed(model, 0)).get_trace())
    ['s', 's_s0', 's_s0_z']
    """

    arg_constraints: ClassVar[dict[str, Any]] = {
        "alpha": constraints.independent(constraints.positive, 1),
        "scale": constraints.positive,
    }
    support = constraints.real_vector
    pytree_data_fields = ("alpha", "scale", "s0")
    pytree_aux_fields = ("n", "a", "moments")

    def __init__(
        self,
        alpha: Any,
        n: Any,
        a: Any,
        scale: Any,
        *,
        s0: Any = None,
        moments: str = "censored",
        validate_args: bool | None = None,
    ) -> None:
        owner = type(self).__name__
        with owner_scope(owner):
            self.n, self.a = core.check_statistic_args(n, a, moments)
            self.moments = moments
            self.alpha = BK.as_float(alpha)
            self.scale = BK.as_float(scale)
            if self.alpha.ndim != 1 or self.alpha.shape[0] < 2:
                raise NoiseawareValueError(
                    f"{owner}: alpha must be a vector of d >= 2 parameters; got shape {tuple(self.alpha.shape)}."
                )
            if self.scale.ndim != 0:
                raise NoiseawareValueError(f"{owner}: scale must be a scalar; got shape {tuple(self.scale.shape)}.")
            self.s0 = None if s0 is None else BK.as_float(s0)
            if self.s0 is not None and self.s0.shape != self.alpha.shape:
                raise NoiseawareValueError(
                    f"{owner}: s0 must have the shape {tuple(self.alpha.shape)} of alpha; "
                    f"got shape {tuple(self.s0.shape)}."
                )
            super().__init__(batch_shape=(), event_shape=(self.alpha.shape[0],), validate_args=validate_args)

    @classmethod
    def infer_shapes(cls, alpha: tuple[int, ...] = (), scale: tuple[int, ...] = (), **kwargs: Any) -> tuple[Any, Any]:
        """``(batch_shape, event_shape) = ((), (d,))`` for ``alpha`` of shape ``(d,)`` (unbatched)."""
        return (), (alpha[-1],)

    def _moments(self) -> tuple[Any, Any]:
        mean, cov = core.logmean_moments(BK, self.alpha, math.log(self.a), self.moments)
        return mean, cov / self.n

    @property
    def latent(self) -> Any:
        r"""The law of :math:`S_0`: ``MultivariateNormal(mu(alpha), Sigma(alpha) / n)`` (eq. 6's :math:`p_A`)."""
        mean, cov = self._moments()
        return dist.MultivariateNormal(mean, covariance_matrix=cov)

    def sample(self, key: Any, sample_shape: tuple[int, ...] = ()) -> Any:
        """Draw ``S_0`` from :attr:`latent` (or take the given ``s0``) and add independent Laplace noise."""
        k1, k2 = random.split(key)
        if self.s0 is None:
            s0 = self.latent.sample(k1, sample_shape)
        else:
            s0 = jnp.broadcast_to(self.s0, sample_shape + self.event_shape)
        return s0 + self.scale * random.laplace(k2, s0.shape, dtype=jnp.float64)

    def with_latent(self, name: str, *, parameterization: str = "noncentered") -> LaplaceCensoredDirichletStat:
        r"""Sample the latent :math:`S_0` of site ``name`` in the current model; return the law given it.

        Adds ``{name}_s0_z`` and the deterministic ``{name}_s0`` (non-centred, default) or
        ``{name}_s0`` (centred); ``numpyro.sample(name, law, obs=...)`` then observes ``S_L``.
        """
        with owner_scope(type(self).__name__):
            v.choice("parameterization", parameterization, core.PARAMETERIZATIONS)
            s0 = _latent_sites(name, self.alpha, self.n, math.log(self.a), self.moments, parameterization)
            return type(self)(self.alpha, self.n, self.a, self.scale, s0=s0, moments=self.moments)

    @property
    def mean(self) -> Any:
        r"""``E[S_L] = mu(alpha)`` (the Laplace noise has mean 0), or ``s0`` when given."""
        return self._moments()[0] if self.s0 is None else self.s0

    @property
    def variance(self) -> Any:
        r"""``Var[S_L,j] = Sigma_jj(alpha) / n + 2 scale^2`` (Gaussian part plus Laplace noise).

        Given ``s0``, only the noise: ``2 scale^2``.
        """
        noise = 2.0 * self.scale**2
        if self.s0 is not None:
            return jnp.broadcast_to(noise, self.event_shape)
        _, cov = self._moments()
        return jnp.diagonal(cov, axis1=-2, axis2=-1) + noise

    @validate_sample
    def log_prob(self, value: Any) -> Any:
        """``sum_j log Laplace(value_j | s0_j, scale)`` given the latent ``s0``; raises without it.

        Raises
        ------
        NoiseawareValueError
            Without ``s0``: the marginal density of :math:`S_L` has no closed form.
        """
        if self.s0 is None:
            raise NoiseawareValueError(
                "LaplaceCensoredDirichletStat: the marginal density of S_L has no closed form (a Gaussian convolved "
                "with Laplace noise in d dimensions); sample it as "
                "numpyro.sample(name, law.with_latent(name), obs=...) "
                "(or .from_release / .observe), which adds the latent S_0 that NUTS samples, or use "
                "joint_log_prob(value, s0)."
            )
        return jnp.sum(NOISE_LAWS["laplace"].logpdf(BK, value, self.s0, self.scale), axis=-1)

    def joint_log_prob(self, value: Any, s0: Any) -> Any:
        """``log p(S_L = value, S_0 = s0 | alpha)``: Gaussian law of ``s0`` plus the Laplace noise."""
        mean, cov = self._moments()
        return core.mvn_logpdf(BK, jnp.asarray(s0), mean, cov) + jnp.sum(
            NOISE_LAWS["laplace"].logpdf(BK, jnp.asarray(value), s0, self.scale), axis=-1
        )

    #: :meth:`observe` without its argument checks, for traced arguments (:func:`observe_latent`).
    observe_latent = staticmethod(observe_latent)

    @classmethod
    def observe(
        cls,
        name: str,
        alpha: Any,
        n: Any,
        a: Any,
        scale: Any,
        obs: Any,
        *,
        moments: str = "censored",
        parameterization: str = "noncentered",
    ) -> Any:
        r"""Add the model of eq. (6) to a NumPyro model: latent ``{name}_s0`` and the observed ``name``.

        ``parameterization="noncentered"`` (default) samples ``{name}_s0_z ~ N(0, I)`` and records
        ``{name}_s0 = mu + L z`` as a deterministic site (better when the Laplace noise is at least
        as wide as :math:`\Sigma/n`, the usual case); ``"centered"`` samples ``{name}_s0`` directly.
        Returns the observed value. The same as
        ``numpyro.sample(name, cls(alpha, n, a, scale).with_latent(name), obs=obs)``.
        """
        owner = cls.__name__
        with owner_scope(owner):
            v.choice("parameterization", parameterization, core.PARAMETERIZATIONS)
            law = cls(alpha, n, a, scale, moments=moments)
            d = law.event_shape[0]
            obs = jnp.asarray(obs, dtype=jnp.float64)
            if obs.shape != (d,):
                raise NoiseawareValueError(f"{owner}: obs must have shape ({d},) like alpha; got shape {obs.shape}.")
            return observe_latent(
                name, law.alpha, law.n, math.log(law.a), law.scale, obs,
                moments=moments, parameterization=parameterization,
            )

    @classmethod
    def from_release(cls, name: str, release: Any, alpha: Any, *, part: int | None = None, **kwargs: Any) -> Any:
        """:meth:`observe` with ``S_L``, ``n``, ``a`` and the scale read from a ``dirichlet_logmean`` release.

        ``part`` picks the part of a split release (default: the last, ``D2``; ``0`` is ``D1``).
        """
        with owner_scope(cls.__name__):
            args, values = _SPEC.release_args(release, part)
        return cls.observe(name, alpha, args["n"], args["a"], args["scale"], values, **kwargs)

