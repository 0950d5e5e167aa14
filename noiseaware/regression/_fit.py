r"""Noise-aware posterior of a linear regression from a ``"regression"`` release (Bernstein & Sheldon 2019)."""

from __future__ import annotations

from typing import Any, Unpack

from .. import _validation as v
from .._core._regression_release import RegressionStatistics, read_regression
from .._engine import (
    MixingBlock,
    SamplingOptions,
    check_settings,
    finish_fit,
    group,
    numpyro_nuts,
    pymc_cores,
    pymc_sample,
    release_attrs,
    sampling_keywords,
    set_group,
)
from .._engine._x64 import float64
from ._model import RegressionPrior, numpyro_model, prior_scales, pymc_model

__all__ = ["BACKENDS", "fit"]

BACKENDS = ("numpyro", "pymc")
#: The sampler block that :func:`fit`'s mixing check names.
_BLOCK = MixingBlock.nuts(
    "NUTS on the coefficients and the residual sd",
    "beta[j] is the coefficient of the release's column j (the coordinate 'coefficient' names it).",
)


def _statistics(owner: str, release: Any) -> RegressionStatistics:
    if isinstance(release, RegressionStatistics):
        return release
    return read_regression(release)


@float64
@sampling_keywords(checked="``beta`` or ``sigma``")
def fit(
    release: Any,
    prior: RegressionPrior | None = None,
    *,
    backend: str = "numpyro",
    cores: int | None = None,
    **sampling: Unpack[SamplingOptions],
) -> Any:
    r"""NUTS posterior of :math:`\beta, \sigma` (and the covariates' law) given a regression release.

    Model: the prior :class:`RegressionPrior`; covariates :math:`x_i \sim N(\mu_x, \Sigma_x)`,
    :math:`y_i \mid x_i \sim N(u_i^\top\beta, \sigma^2)`; the released entries of :math:`Z^\top Z`
    through :class:`~noiseaware.numpyro.NoisySufficientStatistics` (the normal approximation of the
    sufficient statistics of Bernstein & Sheldon (2019), *Differentially Private Bayesian Linear
    Regression*, with exact moments; the release's Gaussian noise marginalized exactly, its Laplace
    noise through latent statistics ``stats_w``). ``n``, the intercept, the noise family and every
    entry's scale are read from the release. The clipping of rows to the bounds is not modelled.

    Parameters
    ----------
    release : Release or RegressionStatistics
        A ``"regression"`` release of method ``"ssp"`` or ``"adassp"`` (``"pace_ggm"`` is refused:
        its adaptively chosen entries have no fixed noise law), or its
        :func:`~noiseaware.regression.read_regression` record.
    prior : RegressionPrior, optional
        Default: the scales from the release's public bounds.
    {sampling_parameters}
    backend : {"numpyro", "pymc"}
        NumPyro NUTS (chains vectorized) or PyMC NUTS.
    cores : int, optional
        {cores_doc}

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        The host stack's result: returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData
        under ArviZ 0.x), as ``pm.sample`` does. Posterior variables ``beta`` (dimension
        ``coefficient``, its coordinates the release's columns: :func:`coefficients`), ``sigma``,
        ``mu_x``, ``cov_x`` (and ``stats_w`` under Laplace noise); ``observed_data`` the released
        entries ``stats``. ``attrs``: the sampler settings (:func:`noiseaware.results.settings`),
        ``noiseaware_result = "regression.fit"``, ``noiseaware_default_var = "beta"``,
        ``noiseaware_backend``, ``noiseaware_statistic``, ``noiseaware_noise`` (the release's noise
        family) and, given a :class:`~noiseaware.Release`, the release itself
        (:func:`noiseaware.results.release`). Pooled draws: ``noiseaware.results.draws(fit, "beta")``.

    Raises
    ------
    NoiseawareValueError, NoiseawareTypeError
        Not a regression release (or a ``pace_ggm`` one), a bad prior, or bad sampler settings.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> from noiseaware import regression
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, size=(2000, 1))
    >>> data = np.column_stack([x, np.clip(0.5 * x[:, 0] + 0.2 * rng.normal(size=2000), -1, 1)])
    >>> rel = na.privatize(data, statistic="regression", response="x1", bound=1.0, rho=1.0, rng=rng)
    >>> res = regression.fit(rel, chains=1, draws=200, warmup=200, seed=1)  # doctest: +SKIP
    >>> regression.coefficients(res)  # doctest: +SKIP
    ('(intercept)', 'x0')
    >>> na.results.draws(res, "sigma").shape  # doctest: +SKIP
    (200,)

    (Skipped in the doctest run: compiling NUTS takes tens of seconds; ``tests/regression`` runs it.)
    """
    owner = "regression.fit"
    st = check_settings(owner, **sampling)
    v.choice(owner, "backend", backend, BACKENDS)
    cores = pymc_cores(owner, backend, cores)
    stats = _statistics(owner, release)
    scales = prior_scales(owner, prior, stats)
    if backend == "numpyro":
        model, data, key = numpyro_model(stats, scales)
        idata = numpyro_nuts(model, st, data=data, cache_key=key)
    else:
        with pymc_model(stats, scales):
            idata = pymc_sample(owner, st, cores=cores)
    post = group(idata, "posterior")
    beta_dim = post["beta"].dims[-1]
    post = post.rename({beta_dim: "coefficient"}).assign_coords(coefficient=list(stats.predictors))
    set_group(idata, "posterior", post)
    attrs = {"noiseaware_backend": backend, "noiseaware_statistic": "regression", "noiseaware_noise": stats.family}
    if not isinstance(release, RegressionStatistics):
        attrs.update(release_attrs(release))
    return finish_fit(
        owner, idata, st, owner=owner, check=["beta", "sigma"], block=_BLOCK, default_var="beta", attrs=attrs
    )
