r"""PyMC shell of :class:`NoisySufficientStatistics`.

Math in :mod:`noiseaware._core._regression`, spec in :mod:`noiseaware._core._specs`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ._common import PT, checked, sized  # isort: split

import pymc as pm
import pytensor.tensor as pt

from .._core import _specs, get_backend
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

__all__ = ["NoisySufficientStatistics"]

_NP = get_backend("numpy")
_SPEC = _specs.SPECS["NoisySufficientStatistics"]


def _logp(value: Any, beta: Any, sigma: Any, mu_x: Any, cov_x: Any, noise: Any, *latent: Any,
          layout: StatisticsLayout) -> Any:
    params = RegressionParameters(beta, sigma, mu_x, cov_x)
    if latent:
        lp = laplace_statistics_logp(PT, value, latent_statistics(PT, latent[0], params, layout), noise)
    else:
        lp = gaussian_statistics_logp(PT, value, params, layout, noise)
    return checked(lp, _SPEC.rules, {"sigma": sigma > 0, "cov_x": pt.allclose(cov_x, cov_x.T)})


def _draw_one(params: RegressionParameters, noise: Any, latent: Any, z: Any, e: Any, layout: StatisticsLayout) -> Any:
    if latent is None:
        mean, cov = sum_moments(_NP, params, layout)
        t = mean + np.linalg.cholesky(cov) @ z
    else:
        t = latent_statistics(_NP, latent, params, layout)
    return t + noise * e


def _random(
    beta: Any, sigma: Any, mu_x: Any, cov_x: Any, noise: Any, *latent: Any,
    rng: np.random.Generator | None = None, size: Any = None, layout: StatisticsLayout, family: str,
) -> np.ndarray:
    gen = rng if rng is not None else np.random.default_rng()
    m = layout.rows.size
    arrs = [np.asarray(a, dtype=np.float64) for a in (beta, sigma, mu_x, cov_x, noise, *latent)]
    batch = np.broadcast_shapes(arrs[0].shape[:-1], arrs[1].shape, arrs[2].shape[:-1], arrs[3].shape[:-2])
    shape = batch if size is None else tuple(np.atleast_1d(size))
    z = gen.standard_normal((*shape, m))
    e = gen.standard_normal((*shape, m)) if family == "gaussian" else gen.laplace(size=(*shape, m))
    cores = [
        np.broadcast_to(arrs[0], (*shape, arrs[0].shape[-1])),
        np.broadcast_to(arrs[1], shape),
        np.broadcast_to(arrs[2], (*shape, arrs[2].shape[-1])),
        np.broadcast_to(arrs[3], (*shape, *arrs[3].shape[-2:])),
    ]
    lat = np.broadcast_to(arrs[5], (*shape, m)) if latent else None
    out = np.empty((*shape, m))
    for i in np.ndindex(*shape):  # the core is unbatched
        params = RegressionParameters(*(c[i] for c in cores))
        out[i] = _draw_one(params, arrs[4], None if lat is None else lat[i], z[i], e[i], layout)
    return out


def _support_point(rv: Any, size: Any, beta: Any, sigma: Any, mu_x: Any, cov_x: Any, noise: Any, *latent: Any,
                   layout: StatisticsLayout) -> Any:
    """The mean of the true statistics (the noise has mean 0); parameters broadcast to ``size`` are one law."""
    beta, sigma, mu_x, cov_x = (a[(0,) * (a.ndim - nd)] if a.ndim > nd else a
                                for a, nd in ((beta, 1), (sigma, 0), (mu_x, 1), (cov_x, 2)))
    latent = tuple(w[(0,) * (w.ndim - 1)] if w.ndim > 1 else w for w in latent)
    params = RegressionParameters(beta, sigma, mu_x, cov_x)
    mean = latent_statistics(PT, latent[0], params, layout) if latent else sum_moments(PT, params, layout)[0]
    return sized(size, mean, (layout.rows.size,))


class NoisySufficientStatistics:
    r"""Noisy entries of :math:`Z^\top Z` of a linear regression, given its parameters (PyMC).

    The law of :class:`noiseaware.numpyro.NoisySufficientStatistics` (Bernstein & Sheldon (2019),
    *Differentially Private Bayesian Linear Regression*: normal approximation with exact moments;
    the release's Gaussian noise marginalized exactly, its Laplace noise given latent statistics).
    A ``pm.CustomDist`` whose ``logp`` is the backend-neutral core and whose draws use the NumPy
    core. With ``family="laplace"`` and no ``latent``, the constructor adds the latent variable
    ``{name}_w ~ N(0, I)`` (the true statistics' standard normal coordinates).

    Parameters
    ----------
    name : str
    beta, sigma, mu_x, cov_x : tensor_like
        As in the NumPyro class: coefficients ``(p,)`` (intercept first), residual sd, covariate mean
        ``(d_x,)`` and covariance ``(d_x, d_x)``; the only positional parameters after ``name``, the rest
        are keyword-only.
    n : int
    scale : array, shape (k, k)
    intercept : bool
    family : {"gaussian", "laplace"}
    latent : tensor_like, shape (m,), optional
    shift : array, shape (k,), optional
        The public mid-points of the columns' ranges, as in the NumPyro class: ``beta``, ``mu_x`` and
        ``cov_x`` stay in the data's units; :meth:`from_release` reads it from the release.
    **kwargs
        Passed to ``pm.CustomDist`` (``observed=...``).

    Raises
    ------
    NoiseawareValueError, NoiseawareTypeError
        Bad ``n``, ``scale``, ``intercept`` or ``family``.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from noiseaware.pymc import NoisySufficientStatistics
    >>> with pm.Model() as m:
    ...     t = NoisySufficientStatistics("t", np.array([0.5]), 1.0, np.zeros(1), np.eye(1), n=10,
    ...                                   scale=np.ones((2, 2)), intercept=False, observed=[10.0, 5.0, 12.0])
    >>> round(float(m.compile_logp()({})), 4)
    -7.0388
    """

    def __new__(  # type: ignore[misc]
        cls, name: str, beta: Any, sigma: Any, mu_x: Any, cov_x: Any, *, n: Any, scale: Any, intercept: bool = True,
        family: str = "gaussian", latent: Any = None, shift: Any = None, **kwargs: Any,
    ) -> Any:
        with owner_scope(cls.__name__):
            _, rows, *_ = statistics_params(n, scale, intercept, family)
            if family == "laplace" and latent is None:
                latent = pm.Normal(f"{name}_w", 0.0, 1.0, shape=rows.size)
            params, kw = cls._args(beta, sigma, mu_x, cov_x, n=n, scale=scale, intercept=intercept, family=family,
                                   latent=latent, shift=shift)
            return pm.CustomDist(name, *params, **kw, **kwargs)

    @classmethod
    def _args(
        cls, beta: Any, sigma: Any, mu_x: Any, cov_x: Any, *, n: Any, scale: Any, intercept: Any, family: Any,
        latent: Any, shift: Any,
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        with owner_scope(cls.__name__):
            nn, rows, cols, noise, icpt, fam = statistics_params(n, scale, intercept, family)
            layout = StatisticsLayout(float(nn), rows, cols, icpt)
            params = [pt.as_tensor_variable(a, dtype="float64") for a in (beta, sigma, mu_x, cov_x)]
            sh = shift_param(shift, int(np.max(rows)) + 1, icpt)
            params[0], params[2] = centred_parameters(PT, params[0], params[2], sh)  # the shifted rows' parameters
            params.append(pt.constant(noise))
            sig = "(p),(),(d),(d,d),(m)"
            if fam == "laplace" and latent is not None:
                params.append(pt.as_tensor_variable(latent, dtype="float64"))
                sig += ",(m)"
            return tuple(params), {
                "logp": partial(_logp, layout=layout),
                "random": partial(_random, layout=layout, family=fam),
                "support_point": partial(_support_point, layout=layout),
                "signature": sig + "->(m)",
                "dtype": "float64",
            }

    @classmethod
    def dist(
        cls, beta: Any, sigma: Any, mu_x: Any, cov_x: Any, *, n: Any, scale: Any, intercept: bool = True,
        family: str = "gaussian", latent: Any = None, shift: Any = None, **kwargs: Any,
    ) -> Any:
        """The unnamed distribution (for ``pm.logp`` / ``pm.draw``); Laplace noise needs ``latent`` here."""
        params, kw = cls._args(beta, sigma, mu_x, cov_x, n=n, scale=scale, intercept=intercept, family=family,
                               latent=latent, shift=shift)
        if family == "laplace" and latent is None:
            from ..exceptions import NoiseawareValueError

            raise NoiseawareValueError(
                "NoisySufficientStatistics.dist: with Laplace noise latent= must be given (the true statistics' "
                "standard normal coordinates); the named constructor adds it as {name}_w."
            )
        return pm.CustomDist.dist(*params, **kw, **kwargs)

    @classmethod
    def from_release(cls, name: str, release: Any, beta: Any, sigma: Any, mu_x: Any, cov_x: Any, **kwargs: Any) -> Any:
        """Observed entries, ``n``, intercept, noise family and scales from a regression release (``ssp`` / ``adassp``).

        With Laplace noise the latent ``{name}_w ~ N(0, I)`` is added (as in NumPyro). The release's shift
        is read too: ``beta``, ``mu_x``, ``cov_x`` are in the data's units.
        """
        with owner_scope(cls.__name__):
            args, values = _SPEC.release_args(release)
        kwargs.setdefault("shift", args.pop("shift"))
        kwargs.setdefault("observed", values)
        return cls(name, beta, sigma, mu_x, cov_x, **args, **kwargs)
