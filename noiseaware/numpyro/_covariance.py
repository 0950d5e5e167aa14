r"""NumPyro shell of :class:`NoisyCovarianceEntries`.

Math in :mod:`noiseaware._core._covariance`, spec in :mod:`noiseaware._core._specs`.
"""

from __future__ import annotations

from typing import Any

from ._common import BK  # isort: split

import jax.numpy as jnp
import numpy as np
import numpyro
from jax import random
from numpyro.distributions import constraints
from numpyro.distributions.distribution import Distribution

from .._core import _specs
from .._core._covariance import entries_moments, noisy_covariance_entries_logp
from .._core._covariance_release import entry_params
from .._validation import owner_scope

__all__ = ["NoisyCovarianceEntries"]

_SPEC = _specs.SPECS["NoisyCovarianceEntries"]


class NoisyCovarianceEntries(Distribution):
    r"""Noisy entries of :math:`S = X^\top X/n`, :math:`x_i \sim N(0, \Sigma)`, moment-matched (NumPyro).

    .. math:: y \sim N\bigl(\Sigma_{\mathcal S},\ \mathrm{diag}(1/\lambda) + C(\Sigma)/n\bigr),\quad
              C_{(jk),(lm)} = \Sigma_{jl}\Sigma_{km} + \Sigma_{jm}\Sigma_{kl}

    (Isserlis; Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via
    Gaussian Graphical Models*, the measurements after Prop. 4.2's combination). Support: real vectors of
    length ``m`` (one per measured entry).

    Parameters
    ----------
    sigma : array, shape (d, d)
        Population covariance (positive definite; unbatched).
    n : int
        Number of records.
    pairs : array of int, shape (m, 2)
        Measured entries ``(j, k)``, each once.
    precision : array, shape (m,)
        Combined precision :math:`\lambda_{jk}` of each measurement (> 0).

    Raises
    ------
    NoiseawareValueError, NoiseawareTypeError
        Bad ``n``, ``pairs`` or ``precision``.

    Examples
    --------
    >>> import numpy as np, jax.numpy as jnp
    >>> from noiseaware.numpyro import NoisyCovarianceEntries
    >>> dist = NoisyCovarianceEntries(jnp.eye(2), n=100, pairs=[[0, 0], [1, 0]], precision=[1e4, 1e4])
    >>> round(float(dist.log_prob(jnp.array([1.0, 0.0]))), 4)
    2.4133
    """

    arg_constraints: dict[str, Any] = {"sigma": constraints.positive_definite}  # noqa: RUF012
    support = constraints.real_vector
    pytree_data_fields = ("sigma", "precision")
    pytree_aux_fields = ("n", "rows", "cols")

    def __init__(self, sigma: Any, n: Any, pairs: Any, precision: Any, *, validate_args: bool | None = None) -> None:
        import jax

        d = int(np.shape(sigma)[-1]) if np.ndim(sigma) >= 2 else 0
        traced = isinstance(precision, jax.core.Tracer)  # a model argument under jit: checked by shape only
        concrete = np.ones(np.shape(precision)) if traced else precision
        with owner_scope(type(self).__name__):
            self.n, self.rows, self.cols, lam = entry_params(n, pairs, concrete, d)
            self.precision = precision if traced else lam
            self.sigma = BK.as_float(sigma)
            if self.sigma.ndim != 2:
                from ..exceptions import NoiseawareValueError

                raise NoiseawareValueError(
                    f"NoisyCovarianceEntries: sigma must be one (d, d) matrix; got shape {self.sigma.shape}."
                )
            super().__init__(batch_shape=(), event_shape=(self.rows.size,), validate_args=validate_args)

    def _moments(self) -> tuple[Any, Any]:
        mean, cov = entries_moments(BK, self.sigma, self.rows, self.cols, self.n)
        return mean, cov + jnp.diag(1.0 / jnp.asarray(self.precision))

    def log_prob(self, value: Any) -> Any:
        """Multivariate normal log-density of the moment-matched law (class docstring)."""
        return noisy_covariance_entries_logp(
            BK, jnp.asarray(value), self.sigma, self.rows, self.cols, jnp.asarray(self.precision), self.n
        )

    def sample(self, key: Any, sample_shape: tuple[int, ...] = ()) -> Any:
        """Draws ``mean + chol(cov) z``."""
        mean, cov = self._moments()
        z = random.normal(key, (*sample_shape, self.rows.size))
        return mean + z @ jnp.linalg.cholesky(cov).T

    @property
    def mean(self) -> Any:
        """``Sigma`` at the measured entries."""
        return self._moments()[0]

    @classmethod
    def from_release(cls, name: str, release: Any, sigma: Any, **kwargs: Any) -> Any:
        """``numpyro.sample(name, NoisyCovarianceEntries(sigma, ...), obs=y)`` from a covariance release.

        ``n``, the measured entries, their combined measurements and precisions come from
        :func:`noiseaware.covariance.measurements` (``"pace_ggm"`` or ``"second_moment"``).
        """
        with owner_scope(cls.__name__):
            args, values = _SPEC.release_args(release)
        return numpyro.sample(name, cls(sigma, **args, **kwargs), obs=jnp.asarray(values))
