r"""NumPyro shell of :class:`NoisySufficientStatistics`.

Math in :mod:`noiseaware._core._regression`, spec in :mod:`noiseaware._core._specs`.
"""

from __future__ import annotations

from typing import Any

from ._common import BK, RELEASE_VALUES, observe  # isort: split

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax import random
from numpyro.distributions import constraints
from numpyro.distributions.distribution import Distribution

from .._core import _specs
from .._core._regression import (
    RegressionParameters,
    StatisticsLayout,
    centred_parameters,
    gaussian_statistics_logp,
    laplace_statistics_logp,
    latent_statistics,
    shift_param,
    statistics_params,
    sum_moments,
)
from .._validation import owner_scope
from ..exceptions import NoiseawareValueError

__all__ = ["NoisySufficientStatistics"]

_SPEC = _specs.SPECS["NoisySufficientStatistics"]


class NoisySufficientStatistics(Distribution):
    r"""Noisy entries of :math:`Z^\top Z` of a linear regression, given its parameters (NumPyro).

    Rows :math:`z_i = (u_i, y_i)`, :math:`u_i = (1, x_i)` with an intercept, :math:`x_i \sim N(\mu_x,
    \Sigma_x)`, :math:`y_i \mid x_i \sim N(u_i^\top\beta, \sigma^2)`; the released entries
    :math:`\tilde M_e = M_e + \eta_e` (``e = (a, b)``, ``a >= b``, all but the public ``(0, 0) = n``)
    with independent noise of the release's family and scale. The true statistics follow the normal
    approximation of Bernstein & Sheldon (2019), *Differentially Private Bayesian Linear Regression*,
    with exact (Isserlis) moments, :math:`M \approx N(n\mu_t, n\Sigma_t)`:

    .. math::

        \text{Gaussian noise:}\quad \tilde M \sim N(n\mu_t,\ n\Sigma_t + \mathrm{diag}(s^2));\qquad
        \text{Laplace noise:}\quad \tilde M_e \mid M \sim \mathrm{Laplace}(M_e, s_e),\
        M = n\mu_t + \mathrm{chol}(n\Sigma_t)\,w.

    With Laplace noise the law needs ``latent`` (the standard normal ``w``); :meth:`from_release`
    adds it as the site ``{name}_w ~ N(0, I)``. Support: real vectors, one entry per released entry
    of the lower triangle, row by row, ``(0, 0)`` left out with an intercept.

    Parameters
    ----------
    beta : array, shape (p,)
        Coefficients of ``u`` (the intercept first when ``intercept``), ``p = k - 1``. ``beta``,
        ``sigma``, ``mu_x`` and ``cov_x`` are the only positional parameters; the rest are keyword-only.
    sigma : float
        Residual standard deviation (> 0).
    mu_x : array, shape (d_x,)
        Mean of the covariates.
    cov_x : array, shape (d_x, d_x)
        Covariance of the covariates (positive definite).
    n : int
        Number of records (public).
    scale : array, shape (k, k)
        The release's per-entry noise scale (0 marks an exact entry).
    intercept : bool
        Whether ``Z``'s first column is the constant 1.
    family : {"gaussian", "laplace"}
        The noise family.
    latent : array, shape (m,), optional
        Standard normal coordinates ``w`` of the true statistics (Laplace noise only).
    shift : array, shape (k,), optional
        The public mid-points :math:`s` of the columns' ranges (``RegressionStatistics.shift``; 0 for
        the intercept): the released entries are those of the shifted rows :math:`z - s`, while
        ``beta``, ``mu_x`` and ``cov_x`` stay in the data's units (the law centres them:
        :math:`\beta'_0 = \beta_0 + m_x^\top\beta_{1:} - m_y`, :math:`\mu'_x = \mu_x - m_x`).
        :meth:`from_release` reads it from the release; ``None``: no shift.

    Raises
    ------
    NoiseawareValueError, NoiseawareTypeError
        Bad ``n``, ``scale``, ``intercept`` or ``family``; a Laplace law's density without ``latent``.

    Examples
    --------
    >>> import numpy as np, jax.numpy as jnp
    >>> from noiseaware.numpyro import NoisySufficientStatistics
    >>> d = NoisySufficientStatistics(jnp.array([0.5]), 1.0, jnp.zeros(1), jnp.eye(1), n=10,
    ...                               scale=np.ones((2, 2)), intercept=False)
    >>> round(float(d.log_prob(jnp.array([10.0, 5.0, 12.0]))), 4)
    -7.0388
    """

    arg_constraints: dict[str, Any] = {  # noqa: RUF012
        "sigma": constraints.positive,
        "cov_x": constraints.positive_definite,
    }
    support = constraints.real_vector
    pytree_data_fields = ("beta", "sigma", "mu_x", "cov_x", "noise", "latent")
    pytree_aux_fields = ("n", "rows", "cols", "intercept", "family", "shift")

    def __init__(
        self,
        beta: Any,
        sigma: Any,
        mu_x: Any,
        cov_x: Any,
        *,
        n: Any,
        scale: Any,
        intercept: bool = True,
        family: str = "gaussian",
        latent: Any = None,
        shift: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        with owner_scope(type(self).__name__):
            nn, self.rows, self.cols, noise, self.intercept, self.family = statistics_params(
                n, scale, intercept, family
            )
            sh = shift_param(shift, int(np.max(self.rows)) + 1, self.intercept)
            self.shift = None if sh is None else tuple(float(x) for x in sh)  # static (hashable) pytree aux data
            self.n = float(nn)
            self.noise = jnp.asarray(noise)
            self.beta = BK.as_float(beta)
            self.sigma = BK.as_float(sigma)
            self.mu_x = BK.as_float(mu_x)
            self.cov_x = BK.as_float(cov_x)
            self.latent = None if latent is None else BK.as_float(latent)
            k = int(np.max(self.rows)) + 1
            d_x = k - 1 - int(self.intercept)
            shapes = {"beta": (self.beta.shape, (k - 1,)), "mu_x": (self.mu_x.shape, (d_x,)),
                      "cov_x": (self.cov_x.shape, (d_x, d_x)), "sigma": (self.sigma.shape, ())}
            for name, (got, want) in shapes.items():
                if tuple(got) != want:
                    raise NoiseawareValueError(
                        f"NoisySufficientStatistics: {name} must have shape {want} for a {k} x {k} moment matrix "
                        f"(unbatched; use a plate or vmap for groups); got shape {tuple(got)}."
                    )
            super().__init__(batch_shape=(), event_shape=(self.rows.size,), validate_args=validate_args)

    def _params(self) -> RegressionParameters:
        """The parameters of the shifted rows (the released entries' units): ``beta``, ``mu_x`` centred."""
        beta, mu_x = centred_parameters(BK, self.beta, self.mu_x, None if self.shift is None else np.array(self.shift))
        return RegressionParameters(beta, self.sigma, mu_x, self.cov_x)

    def _layout(self) -> StatisticsLayout:
        return StatisticsLayout(self.n, self.rows, self.cols, self.intercept)

    def _moments(self) -> tuple[Any, Any]:
        return sum_moments(BK, self._params(), self._layout())

    def _statistics(self) -> Any:
        return latent_statistics(BK, self.latent, self._params(), self._layout())

    def log_prob(self, value: Any) -> Any:
        """The Gaussian marginal, or the Laplace noise given the latent statistics (class docstring)."""
        value = jnp.asarray(value)
        if self.family == "gaussian":
            return gaussian_statistics_logp(BK, value, self._params(), self._layout(), self.noise)
        if self.latent is None:
            raise NoiseawareValueError(
                "NoisySufficientStatistics: with Laplace noise the log-density needs latent= (the true statistics' "
                "standard normal coordinates); use NoisySufficientStatistics.from_release(name, release, ...), "
                "which adds the site {name}_w."
            )
        return laplace_statistics_logp(BK, value, self._statistics(), self.noise)

    def sample(self, key: Any, sample_shape: tuple[int, ...] = ()) -> Any:
        """True statistics from the normal law (or the latent's), plus the release's noise."""
        k1, k2 = random.split(key)
        shape = (*sample_shape, self.rows.size)
        if self.latent is None:
            mean, cov = self._moments()
            t = mean + random.normal(k1, shape) @ jnp.linalg.cholesky(cov).T
        else:
            t = jnp.broadcast_to(self._statistics(), shape)
        if self.family == "gaussian":
            return t + self.noise * random.normal(k2, shape)
        return t + self.noise * random.laplace(k2, shape)

    @property
    def mean(self) -> Any:
        """``n`` times the mean of one row's products (the noise has mean 0)."""
        return self._moments()[0] if self.latent is None else self._statistics()

    @classmethod
    def from_release(
        cls, name: str, release: Any, beta: Any, sigma: Any, mu_x: Any, cov_x: Any, *, obs: Any = RELEASE_VALUES,
        **kwargs: Any,
    ) -> Any:
        """``numpyro.sample(name, NoisySufficientStatistics(...), obs=...)`` from a regression release.

        ``n``, the intercept, the noise family and scales and the observed entries come from the
        release (:func:`noiseaware.regression.read_regression`; methods ``"ssp"`` and
        ``"adassp"``), and the shift of its ranges: ``beta``, ``mu_x``, ``cov_x`` are in the data's units.
        With Laplace noise it first adds the latent site ``{name}_w ~ N(0, I)``.
        """
        with owner_scope(cls.__name__):
            args, values = _SPEC.release_args(release)
        kwargs.setdefault("shift", args.pop("shift"))
        if args["family"] == "laplace" and kwargs.get("latent") is None:
            m = int(np.size(values))
            kwargs["latent"] = numpyro.sample(f"{name}_w", dist.Normal(jnp.zeros(m), 1.0).to_event(1))
        return observe(name, cls(beta, sigma, mu_x, cov_x, **args, **kwargs), values, obs)
