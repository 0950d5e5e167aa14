r"""Noise-aware posterior of a linear regression from a ``"regression"`` release (Bernstein & Sheldon 2019)."""

from __future__ import annotations

from typing import Any

from .. import _validation as v
from .._core._regression import original_parameters
from .._core._regression_release import RegressionStatistics, read_regression
from .._engine import (
    MixingBlock,
    check_settings,
    finish_fit,
    group,
    numpyro_nuts,
    pymc_cores,
    pymc_sample,
    release_attrs,
    set_group,
)
from .._engine._x64 import float64
from .._validation import owned
from ._model import RegressionPrior, numpyro_model, prior_scales, pymc_model

__all__ = ["BACKENDS", "NO_POINTWISE", "fit"]

BACKENDS = ("numpyro", "pymc")
#: The sampler block that :func:`fit`'s mixing check names.
_BLOCK = MixingBlock.nuts(
    "NUTS on the coefficients and the residual sd",
    "beta[j] is the coefficient of the release's column j (the coordinate 'coefficient' names it).",
    "a residual sd sigma near 0 (a response the covariates explain almost exactly), or two covariates "
    "correlated near +-1 (collinear columns)",
)


#: Why a regression fit stores no ``log_likelihood`` group (its root attribute ``noiseaware_log_likelihood``).
NO_POINTWISE = (
    "none: the release is one vector of correlated noisy sufficient statistics, with as many entries as the model "
    "has parameters, so no split into conditionally independent terms exists and az.loo / az.compare are not "
    "defined for this fit (docs/regression.md, 'Model comparison')"
)


def _posterior(post: Any, st: RegressionStatistics) -> Any:
    r"""The fit's posterior in the data's units, holding only what varies (the module's ``fit`` documents it).

    Both models sample the parameters of the shifted rows :math:`z - s` (the release's units, where the
    default prior sits; with symmetric bounds ``s = 0``); the intercept and ``mu_x`` go back to the
    data's units by :func:`~noiseaware._core._regression.original_parameters`. The covariates' law is
    stored as ``sd_x`` and the correlations ``corr_x`` of the pairs below the diagonal (from ``cov_x``),
    in place of each backend's Cholesky variables, whose constant entries (a unit diagonal, a zero
    upper triangle) have no R-hat and no density to plot.
    """
    import numpy as np

    covariates = list(st.columns[int(st.intercept) : -1])
    d = len(covariates)
    shift = None if st.shift is None or not np.any(st.shift) else np.asarray(st.shift)
    beta, mu_x = original_parameters(post["beta"].values, post["mu_x"].values, shift)
    cov = np.asarray(post["cov_x"].values, dtype=np.float64).reshape(*beta.shape[:2], d, d)
    sd = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))
    rows, cols = np.tril_indices(d, -1)
    corr = cov[..., rows, cols] / (sd[..., rows] * sd[..., cols])
    keep = [name for name in ("sigma", "stats_w") if name in post.data_vars]
    out = post[keep].assign(
        {name: (post[name].dims, np.asarray(post[name].values, dtype=np.float64)) for name in keep}  # host arrays
    ).assign(
        beta=(("chain", "draw", "coefficient"), beta),
        mu_x=(("chain", "draw", "covariate"), mu_x.reshape(*beta.shape[:2], d)),
        sd_x=(("chain", "draw", "covariate"), sd),
        cov_x=(("chain", "draw", "covariate", "covariate_bis"), cov),
    ).assign_coords(coefficient=list(st.predictors), covariate=covariates, covariate_bis=covariates)
    if d > 1:
        pairs = [f"{covariates[i]}, {covariates[j]}" for i, j in zip(rows, cols, strict=True)]
        out = out.assign(corr_x=(("chain", "draw", "covariate_pair"), corr)).assign_coords(covariate_pair=pairs)
    out.attrs = dict(post.attrs)
    return out[["beta", "sigma", "mu_x", "sd_x", *(["corr_x"] if d > 1 else []), "cov_x",
                *(["stats_w"] if "stats_w" in keep else [])]]


def _statistics(release: Any) -> RegressionStatistics:
    if isinstance(release, RegressionStatistics):
        return release
    return read_regression(release)


@float64
@owned("regression.fit")
def fit(
    release: Any,
    prior: RegressionPrior | None = None,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    backend: str = "numpyro",
    cores: int | None = None,
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
    chains : int
        Number of chains (default 4).
    draws : int
        Kept draws per chain (default 1000).
    warmup : int
        Warmup (tuning) iterations per chain, run before the kept draws (default 1000).
    seed : int, optional
        Random seed; drawn from the operating system when omitted. The seed used is recorded in
        ``noiseaware.results.settings(result).seed`` and ``result.attrs["noiseaware_seed"]``, so
        that any run can be repeated.
    progressbar : bool
        Show the sampler's progress bar (default False).
    target_accept : float, optional
        Target acceptance probability, in (0, 1), of NUTS's step size adapted during warmup; default
        (None) 0.8 (``NUTS_TARGET_ACCEPT``, the default of Stan, PyMC and NumPyro).
    check_mixing : bool
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when ``beta`` or ``sigma`` has bulk ESS
        below 100 per chain or R-hat above 1.01 (default True).
    backend : {"numpyro", "pymc"}
        NumPyro NUTS (chains vectorized) or PyMC NUTS.
    cores : int, optional
        ``backend="pymc"`` with PyMC's own NUTS only: worker processes for the chains. Default
        (None): one per chain up to the CPU count, or 1 (chains in sequence, in-process) when JAX is
        already loaded, since forking a process with JAX's threads running can deadlock. Refused
        with ``backend="numpyro"``.

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        The host stack's result: returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData
        under ArviZ 0.x), as ``pm.sample`` does. Posterior variables, **in the data's units**:
        ``beta`` (dimension ``coefficient``, its coordinates the release's columns:
        :func:`coefficients`), ``sigma``, ``mu_x`` and ``sd_x`` (dimension ``covariate``), ``corr_x``
        (the covariates' correlations below the diagonal, dimension ``covariate_pair``; with two or
        more covariates), ``cov_x`` (and ``stats_w`` under Laplace noise). Only what varies is stored,
        so ``az.summary``, ``az.plot_trace`` and ``az.plot_posterior`` / ``az.plot_dist`` run clean.
        ``observed_data``: the released entries ``stats``. No ``log_likelihood`` group: the release is
        one vector of correlated statistics with no pointwise split, so ``az.loo`` and ``az.compare``
        are not defined for this fit (ArviZ answers "log likelihood not found"; the root attribute
        ``noiseaware_log_likelihood`` says why; ``docs/regression.md``, "Model comparison").
        ``attrs``: the sampler settings (:func:`noiseaware.results.settings`),
        ``noiseaware_result = "regression.fit"``, ``noiseaware_default_var = "beta"``,
        ``noiseaware_backend``, ``noiseaware_statistic``, ``noiseaware_noise`` (the release's noise
        family) and, given a :class:`~noiseaware.Release`, the release itself
        (:func:`noiseaware.results.release`). Pooled draws: ``noiseaware.results.draws(fit, "beta")``.

        **Units.** A release of ranges ``(lower, upper)`` holds the statistics of the rows shifted by
        the ranges' mid-points :math:`s = (0, m_x, m_y)`. The model samples the parameters of the
        shifted rows (where the default prior, from the half-widths, sits) and reports them in the
        data's units: the slopes are the same, and the intercept and covariate means are

        .. math:: \beta_0 = \beta'_0 - m_x^\top\beta_{1:} + m_y,\qquad \mu_x = \mu'_x + m_x

        (:math:`\beta'_0` the intercept of the shifted rows; ``cov_x`` and ``sigma`` do not change).
        The prior is thus on the intercept at the ranges' mid-points, like a prior on a centred
        intercept.

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
    st = check_settings(
        chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing,
    )
    v.choice("backend", backend, BACKENDS)
    cores = pymc_cores(backend, cores)
    stats = _statistics(release)
    scales = prior_scales(prior, stats)
    if backend == "numpyro":
        model, data, key = numpyro_model(stats, scales)
        idata = numpyro_nuts(model, st, data=data, cache_key=key)
    else:
        with pymc_model(stats, scales):
            idata = pymc_sample(st, cores=cores)
    set_group(idata, "posterior", _posterior(group(idata, "posterior"), stats))
    attrs = {"noiseaware_backend": backend, "noiseaware_statistic": "regression", "noiseaware_noise": stats.family,
             "noiseaware_log_likelihood": NO_POINTWISE}
    if not isinstance(release, RegressionStatistics):
        attrs.update(release_attrs(release))
    return finish_fit(
        owner, idata, st, check=["beta", "sigma"], block=_BLOCK, default_var="beta", attrs=attrs
    )
