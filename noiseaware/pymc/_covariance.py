r"""PyMC shell of :class:`NoisyCovarianceEntries`.

Math in :mod:`noiseaware._core._covariance`, spec in :mod:`noiseaware._core._specs`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ._common import PT, checked, sized  # isort: split

import pymc as pm
import pytensor.tensor as pt

from .._core import _specs, get_backend
from .._core._covariance import entries_moments, noisy_covariance_entries_logp
from .._core._covariance_release import entry_params
from .._validation import owner_scope

__all__ = ["NoisyCovarianceEntries"]

_NP = get_backend("numpy")
_SPEC = _specs.SPECS["NoisyCovarianceEntries"]


def _logp(value: Any, sigma: Any, precision: Any, *, n: int, rows: np.ndarray, cols: np.ndarray) -> Any:
    lp = noisy_covariance_entries_logp(PT, value, sigma, rows, cols, precision, float(n))
    return checked(lp, _SPEC.rules, {"sigma": pt.allclose(sigma, pt.swapaxes(sigma, -1, -2))})


def _random(
    sigma: Any,
    precision: Any,
    *,
    n: int,
    rows: np.ndarray,
    cols: np.ndarray,
    rng: np.random.Generator | None = None,
    size: Any = None,
) -> np.ndarray:
    sig = np.asarray(sigma, dtype=np.float64)
    lam = np.asarray(precision, dtype=np.float64)
    gen = rng if rng is not None else np.random.default_rng()
    batch = np.broadcast_shapes(sig.shape[:-2], lam.shape[:-1])
    shape = batch if size is None else tuple(np.atleast_1d(size))
    sig = np.broadcast_to(sig, (*shape, *sig.shape[-2:]))
    lam = np.broadcast_to(lam, (*shape, rows.size))
    z = gen.standard_normal((*shape, rows.size))
    out = np.empty((*shape, rows.size))
    for i in np.ndindex(*shape):  # one Cholesky factor per batch element (the core is unbatched)
        mean, cov = entries_moments(_NP, sig[i], rows, cols, float(n))
        out[i] = mean + np.linalg.cholesky(cov + np.diag(1.0 / lam[i])) @ z[i]
    return out


def _support_point(rv: Any, size: Any, sigma: Any, precision: Any, *, rows: np.ndarray, cols: np.ndarray) -> Any:
    """The mean, ``sigma`` at the measured entries."""
    return sized(size, sigma[..., rows, cols] + pt.zeros_like(precision), (rows.size,))


class NoisyCovarianceEntries:
    r"""Noisy entries of :math:`S = X^\top X/n`, :math:`x_i \sim N(0, \Sigma)`, moment-matched (PyMC).

    .. math:: y \sim N\bigl(\Sigma_{\mathcal S},\ \mathrm{diag}(1/\lambda) + C(\Sigma)/n\bigr),\quad
              C_{(jk),(lm)} = \Sigma_{jl}\Sigma_{km} + \Sigma_{jm}\Sigma_{kl}

    (Isserlis; Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via
    Gaussian Graphical Models*, the measurements after Prop. 4.2's combination). Support: real vectors of
    length ``m`` (one per measured entry).

    A ``pm.CustomDist`` whose ``logp`` is the backend-neutral core and whose draws use the NumPy
    core (prior / posterior predictive work). Same parameters as the NumPyro class.

    Parameters
    ----------
    name : str
    sigma : tensor_like, shape (d, d)
        Population covariance (positive definite).
    n : int
    pairs : array of int, shape (m, 2)
    precision : array, shape (m,)
    **kwargs
        Passed to ``pm.CustomDist`` (``observed=...``).

    Raises
    ------
    NoiseawareValueError, NoiseawareTypeError
        Bad ``n``, ``pairs`` or ``precision``.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from noiseaware.pymc import NoisyCovarianceEntries
    >>> with pm.Model() as m:
    ...     y = NoisyCovarianceEntries("y", np.eye(2), n=100, pairs=[[0, 0], [1, 0]], precision=[1e4, 1e4],
    ...                                observed=[1.0, 0.0])
    >>> round(float(m.compile_logp()({})), 4)
    2.4133
    """

    def __new__(cls, name: str, sigma: Any, n: Any, pairs: Any, precision: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
        params, kw = cls._args(sigma, n, pairs, precision)
        return pm.CustomDist(name, *params, **kw, **kwargs)

    @classmethod
    def _args(cls, sigma: Any, n: Any, pairs: Any, precision: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        sig = pt.as_tensor_variable(sigma, dtype="float64")
        d = sig.type.shape[-1] or 0
        with owner_scope(cls.__name__):
            nn, rows, cols, lam = entry_params(n, pairs, precision, int(d))
            kw: dict[str, Any] = {"n": nn, "rows": rows, "cols": cols}
            return (sig, pt.constant(lam)), {
                "logp": partial(_logp, **kw),
                "random": partial(_random, **kw),
                "support_point": partial(_support_point, rows=rows, cols=cols),
                "signature": "(d,d),(m)->(m)",
                "dtype": "float64",
            }

    @classmethod
    def dist(cls, sigma: Any, n: Any, pairs: Any, precision: Any, **kwargs: Any) -> Any:
        """The unnamed distribution (for ``pm.logp`` / ``pm.draw``)."""
        params, kw = cls._args(sigma, n, pairs, precision)
        return pm.CustomDist.dist(*params, **kw, **kwargs)

    @classmethod
    def from_release(cls, name: str, release: Any, sigma: Any, **kwargs: Any) -> Any:
        """Observed entries, ``n``, pairs and precisions from a ``pace_ggm`` / ``second_moment`` release."""
        with owner_scope(cls.__name__):
            args, values = _SPEC.release_args(release)
        kwargs.setdefault("observed", values)
        return cls(name, sigma, **args, **kwargs)
