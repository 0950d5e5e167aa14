r"""Latent-variable models behind :func:`noiseaware.covariance.fit` (exact Wishart route, centring).

The exact latent-Wishart route (Bartlett factor) and the moment-matched route with a latent mean
(centred releases).

Model (both backends, math in :mod:`noiseaware._core._covariance`):

* :math:`\Sigma = \mathrm{diag}(s) R\, \mathrm{diag}(s)`, :math:`R \sim \mathrm{LKJ}(\eta)`,
  :math:`s_j \sim \mathrm{HalfNormal}(B)`, :math:`L = \mathrm{diag}(s)\,\mathrm{chol}(R)`; records
  :math:`x_i \sim N(\mu, \Sigma)` iid.
* Uncentred release (``S = X^T X / n``, mean known to be 0): :math:`nS \sim \mathrm{Wishart}(n, \Sigma)`.
* Centred release (the curator released a noisy mean :math:`z = \bar x + N(0, \sigma_m^2 I)` and
  measured :math:`S_c = \frac1n\sum_i (x_i - c)(x_i - c)^\top` with :math:`c = \mathrm{clip}(z, -B, B)`):
  :math:`S_c = C + \delta\delta^\top`, :math:`\delta = \bar x - c`, where :math:`nC \sim
  \mathrm{Wishart}(n - 1, \Sigma)` is independent of :math:`\bar x \sim N(\mu, \Sigma/n)` (normal
  sampling theory). :math:`\mu_j \sim N(0, B^2)`; :math:`\bar x = \mu + L\xi/\sqrt n`, :math:`\xi \sim N(0, I)`.
* ``route="wishart"``: :math:`nS` (or :math:`nC`) through the Bartlett factor, :math:`A_{ii}^2 =
  k_i u_i`, :math:`u_i \sim \mathrm{Gamma}(k_i/2, \mathrm{rate}=k_i/2)` (so :math:`A_{ii}^2 \sim
  \chi^2(k_i)`, :math:`k_i = \nu - i + 1`; scaled to mean 1 for the sampler), :math:`A_{ij} \sim
  N(0, 1)`; measurements :math:`y_e \sim N(S_e, 1/\lambda_e)` exactly.
* ``route="moments"``: the normal approximation of :math:`S` (or :math:`C`) with its exact first two
  moments (Isserlis), :class:`NoisyCovarianceEntries`'s law; with centring the mean is
  :math:`\frac{n-1}{n}\Sigma_{\mathcal S} + (\delta\delta^\top)_{\mathcal S}` and the covariance
  :math:`\frac{n-1}{n^2} C(\Sigma)`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import get_backend
from .._core._covariance import (
    bartlett_dof,
    bartlett_entries,
    gaussian_entries_logp,
    noisy_covariance_entries_logp,
)
from .._engine import SamplingSettings, numpyro_nuts, pymc_sample
from .._validation import owned
from ._analysis import Measurements

__all__ = ["fit_numpyro_latent", "fit_pymc_latent"]


def _dims(m: Measurements) -> tuple[int, int, float, np.ndarray, np.ndarray, bool]:
    centred = m.center is not None
    nu = m.n - 1 if centred else m.n
    return m.d, nu, float(m.n), m.pairs[:, 0].copy(), m.pairs[:, 1].copy(), centred


def numpyro_model(m: Measurements, route: str, eta: float) -> tuple[Any, tuple[Any, ...], tuple[Any, ...]]:
    """The NumPyro model of the module docstring: ``(model, data, cache_key)`` for ``numpyro_nuts``.

    ``model(y, mean_obs, center)`` takes the release's measurements (the noisy mean and the centre
    are zeros, unused, for an uncentred release); everything else it uses is in ``cache_key``.
    """
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    import noiseaware.numpyro  # noqa: F401  (enables float64 in JAX)

    jx = get_backend("jax")
    d, nu, n, rows, cols, centred = _dims(m)
    b = m.bound if m.data_bound is None else m.data_bound
    k = bartlett_dof(nu, d)
    lam = np.asarray(m.precision, dtype=np.float64)
    mean_sigma = float(m.mean_sigma) if centred and m.mean_sigma is not None else 1.0

    def model(y: Any, mean_obs: Any, center: Any) -> None:
        s = numpyro.sample("scale", dist.HalfNormal(b * jnp.ones(d)).to_event(1))
        lr = numpyro.sample("corr_chol", dist.LKJCholesky(d, eta))
        low = s[:, None] * lr
        sigma = numpyro.deterministic("sigma", low @ low.T)
        shift = 0.0
        if centred:
            mu = numpyro.sample("mu", dist.Normal(jnp.zeros(d), b).to_event(1))
            xi = numpyro.sample("xbar_std", dist.Normal(jnp.zeros(d), 1.0).to_event(1))
            xbar = numpyro.deterministic("xbar", mu + low @ xi / math.sqrt(n))
            numpyro.sample("mean_obs", dist.Normal(xbar, mean_sigma).to_event(1), obs=mean_obs)
            delta = xbar - center
            shift = delta[rows] * delta[cols]
        if route == "wishart":
            u = numpyro.sample("bartlett_u", dist.Gamma(jnp.asarray(k / 2.0), jnp.asarray(k / 2.0)).to_event(1))
            z = numpyro.sample("bartlett_normal", dist.Normal(jnp.zeros(d * (d - 1) // 2), 1.0).to_event(1))
            ent = bartlett_entries(jx, low, jnp.sqrt(u * jnp.asarray(k)), z, rows, cols, n, d)
            numpyro.factor("y", gaussian_entries_logp(jx, y, ent + shift, jnp.asarray(lam)))
        else:
            sig_c = sigma * (nu / n)  # E[S] (E[C] = (n-1)/n Sigma when centred)
            # Isserlis: Cov(C) = nu/n^2 C(Sigma) = C(sig_c)/nu
            numpyro.factor("y", noisy_covariance_entries_logp(jx, y - shift, sig_c, rows, cols, jnp.asarray(lam),
                                                              float(nu)))

    zeros = np.zeros(d)
    data = (
        np.asarray(m.y, dtype=np.float64),
        np.asarray(m.mean_values, dtype=np.float64) if centred else zeros,
        np.asarray(m.center, dtype=np.float64) if centred else zeros,
    )
    key = ("covariance", route, d, float(nu), n, rows.tobytes(), cols.tobytes(), centred, float(b), float(eta),
           lam.tobytes(), mean_sigma)
    return model, data, key


def fit_numpyro_latent(m: Measurements, route: str, st: SamplingSettings, eta: float) -> Any:
    """The engine's NUTS on :func:`numpyro_model`, started at NumPyro's ``init_to_median``.

    Returns the host stack's result (an xarray.DataTree under ArviZ 1, an arviz.InferenceData under
    ArviZ 0.x), built by the engine's ``numpyro_nuts``; :func:`noiseaware.covariance.fit` finishes it.
    """
    import numpyro

    model, data, key = numpyro_model(m, route, eta)
    start = numpyro.infer.init_to_median(num_samples=15)
    return numpyro_nuts(model, st, data=data, cache_key=key, init_strategy=start)


def pymc_model(m: Measurements, route: str, eta: float) -> Any:
    """The PyMC model of the module docstring (a ``pm.Model``)."""
    import pymc as pm
    import pytensor.tensor as pt

    import noiseaware.pymc  # noqa: F401  (the package's PyMC import-time settings)

    ptb = get_backend("pytensor")
    d, nu, n, rows, cols, centred = _dims(m)
    b = m.bound if m.data_bound is None else m.data_bound
    k = bartlett_dof(nu, d)
    y = pt.constant(np.asarray(m.y, dtype=np.float64))
    lam = pt.constant(np.asarray(m.precision, dtype=np.float64))
    with pm.Model() as model:
        chol, _, _ = pm.LKJCholeskyCov("chol", n=d, eta=eta, sd_dist=pm.HalfNormal.dist(b, shape=d), compute_corr=True)
        sigma = pm.Deterministic("sigma", chol @ chol.T)
        shift: Any = 0.0
        if centred:
            mu = pm.Normal("mu", 0.0, b, shape=d)
            xi = pm.Normal("xbar_std", 0.0, 1.0, shape=d)
            xbar = pm.Deterministic("xbar", mu + chol @ xi / math.sqrt(n))
            pm.Normal("mean_obs", xbar, m.mean_sigma, observed=np.asarray(m.mean_values))
            delta = xbar - pt.constant(np.asarray(m.center))
            shift = delta[rows] * delta[cols]
        if route == "wishart":
            u = pm.Gamma("bartlett_u", alpha=k / 2.0, beta=k / 2.0, shape=d)
            z = pm.Normal("bartlett_normal", 0.0, 1.0, shape=d * (d - 1) // 2)
            ent = bartlett_entries(ptb, chol, pt.sqrt(u * pt.constant(k)), z, rows, cols, n, d)
            pm.Potential("y", gaussian_entries_logp(ptb, y, ent + shift, lam))
        else:
            sig_c = sigma * (nu / n)
            pm.Potential("y", noisy_covariance_entries_logp(ptb, y - shift, sig_c, rows, cols, lam, float(nu)))
    return model


@owned("covariance.fit")
def fit_pymc_latent(
    m: Measurements, route: str, st: SamplingSettings, eta: float, cores: int | None, nuts_sampler: str = "auto"
) -> Any:
    """NUTS on :func:`pymc_model` through the package's ``pymc_sample`` (``nuts_sampler``: its implementation).

    Returns ``pm.sample``'s own result (an xarray.DataTree under ArviZ 1, an arviz.InferenceData
    under ArviZ 0.x); :func:`noiseaware.covariance.fit` finishes it.
    """
    with pymc_model(m, route, eta):
        return pymc_sample(st, cores=cores, nuts_sampler=nuts_sampler)
