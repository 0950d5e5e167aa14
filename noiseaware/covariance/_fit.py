r"""Noise-aware posterior of the population covariance from a ``pace_ggm`` / ``second_moment`` release."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validation as v
from .._engine import (
    MixingBlock,
    SamplingSettings,
    check_settings,
    finish_fit,
    numpyro_nuts,
    nuts_sampler_choice,
    pymc_cores,
    pymc_sample,
    release_attrs,
)
from .._engine._x64 import float64
from .._validation import owned
from ..exceptions import NoiseawareValueError
from ..release import Release
from ._analysis import measurements

__all__ = ["BACKENDS", "ROUTES", "fit"]


BACKENDS = ("numpyro", "pymc")
ROUTES = ("moments", "wishart")
#: The sampler block that :func:`fit`'s mixing check names.
_BLOCK = MixingBlock.nuts(
    "NUTS on the covariance matrix sigma",
    "sigma[j] is entry j of the d x d matrix in row order (sigma[i * d + k] is row i, column k).",
)


@float64
@owned("covariance.fit")
def fit(
    release: Release,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    backend: str = "numpyro",
    eta: float = 1.0,
    cores: int | None = None,
    route: str = "moments",
    nuts_sampler: str = "auto",
) -> Any:
    r"""NUTS posterior of the population covariance :math:`\Sigma` given a covariance release.

    Model: :math:`\Sigma = \mathrm{diag}(s)\,R\,\mathrm{diag}(s)`, :math:`R \sim \mathrm{LKJ}(\eta)`,
    :math:`s_j \sim \mathrm{HalfNormal}(B)` (``B`` the release's bound, so :math:`\Sigma_{jj} \le B^2`
    is a priori typical), records :math:`x_i \sim N(0, \Sigma)`, and the measurements of the
    release through :class:`NoisyCovarianceEntries` (moment-matched: :math:`y \sim
    N(\Sigma_{\mathcal S}, \mathrm{diag}(1/\lambda) + C(\Sigma)/n)`, with ``n``, the measured
    entries, their precision-weighted values and precisions read from the release).

    **The selection step's information is not used.** The likelihood of a PACE-GGM transcript
    is :math:`\prod_t P(r_t \mid S, \text{past})\, N(z_t; S_{r_t}, \sigma_t^2)`; the selection
    factors are softmaxes of :math:`\epsilon_t |S - \hat\Sigma^{(t-1)}| / (2\Delta)` and depend on
    :math:`S` — on unmeasured entries too — so the selection is *not* ignorable in Rubin's sense
    (it is not "missing at random": which entry is measured depends on unobserved values). This
    fit conditions on the selected entries as if they had been fixed in advance, which keeps the
    measurement factors exact but discards the selection factors. What is lost is bounded: each
    selection factor is :math:`\epsilon_t/(2\Delta)`-Lipschitz in every score, so its Fisher
    information about any linear functional of :math:`S` is at most :math:`\epsilon_t^2/(4\Delta^2)
    = 2\rho_{sel,t}/\Delta^2`, the same order as one measurement's :math:`1/\sigma_t^2 =
    2\rho_{meas,t}/\Delta^2`, but spread over all :math:`d(d+1)/2` entries. The calibration study
    (``benchmarks/covariance_calibration.py``, ``docs/covariance.md``) measures the effect on
    interval coverage. For ``second_moment`` releases there is no selection and nothing is lost.

    Parameters
    ----------
    release : Release
        ``"pace_ggm"`` or ``"second_moment"``.
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
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when an entry of ``sigma`` has bulk ESS
        below 100 per chain or R-hat above 1.01 (default True).
    backend : {"numpyro", "pymc"}
        NumPyro NUTS (chains vectorized) or PyMC NUTS.
    eta : float
        LKJ concentration (> 0).
    cores : int, optional
        ``backend="pymc"`` with PyMC's own NUTS only: worker processes for the chains. Default
        (None): one per chain up to the CPU count, or 1 (chains in sequence, in-process) when JAX is
        already loaded, since forking a process with JAX's threads running can deadlock. Refused
        with ``backend="numpyro"``.
    route : {"moments", "wishart"}
        ``"moments"`` (default): the moment-matched normal law of the entries of ``S``
        (:class:`NoisyCovarianceEntries`). ``"wishart"``: exact — ``nS ~ Wishart(n, Sigma)`` as
        a latent Bartlett factor (``A_ii^2 ~ chi2(n - i + 1)``, ``A_ij ~ N(0, 1)``,
        ``nS = L A A^T L^T``) and ``y ~ N(S entries, 1/lambda)``; adds ``d(d+1)/2`` latent
        variables (see ``docs/covariance.md`` for when the moment-matched route is accurate
        enough). Centred releases (``center=True``) add a latent population mean and sample mean
        in both routes.
    nuts_sampler : {"auto", "nutpie", "numpyro", "pymc"}
        PyMC only: the NUTS implementation that samples the PyMC model (``pm.sample``'s
        ``nuts_sampler``). ``"auto"`` (default): nutpie when installed (the extra
        ``pip install 'noiseaware[pymc-fast]'``), else NumPyro, else PyMC's own; the same model and
        log-density in each (``docs/benchmarks.md``, "pymc_backend_speed", for their speed).

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        The host stack's result: returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData
        under ArviZ 0.x), as ``pm.sample`` does. Posterior variable ``sigma`` (``d x d``), plus the
        model's own variables (the scales and the Cholesky factor of the correlation; ``mu`` and
        ``xbar`` for a centred release; the Bartlett factor's ``bartlett_u``, ``bartlett_normal`` on
        the Wishart route). ``attrs``: the sampler settings (:func:`noiseaware.results.settings`),
        ``noiseaware_result = "covariance.fit"``, ``noiseaware_default_var = "sigma"``,
        ``noiseaware_backend``, ``noiseaware_route``, ``noiseaware_statistic``,
        ``noiseaware_selection`` and the release (:func:`noiseaware.results.release`). Pooled draws:
        ``noiseaware.results.draws(fit, "sigma")``, shape ``(chains * draws, d, d)``.

    Raises
    ------
    NoiseawareValueError, NoiseawareTypeError
        Not a covariance release, or bad sampler settings.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> from noiseaware import covariance
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=(500, 2))
    >>> rel = na.privatize(x, statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    >>> res = covariance.fit(rel, chains=1, draws=50, warmup=50, seed=1, check_mixing=False)  # doctest: +SKIP
    >>> na.results.draws(res, "sigma").shape  # doctest: +SKIP
    (50, 2, 2)

    (Skipped in the doctest run: compiling NUTS takes tens of seconds; ``tests/covariance`` runs it.)
    """
    owner = "covariance.fit"
    st = check_settings(
        chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing,
    )
    v.choice("backend", backend, BACKENDS)
    eta = v.positive("eta", eta)
    v.choice("route", route, ROUTES)
    cores = pymc_cores(backend, cores)
    if backend == "numpyro" and nuts_sampler != "auto":
        raise NoiseawareValueError(
            f"{owner}: nuts_sampler applies to backend='pymc' only; got nuts_sampler={nuts_sampler!r}."
        )
    sampler = nuts_sampler_choice(nuts_sampler)
    m = measurements(release)
    if route == "wishart" or m.center is not None:
        from ._wishart import fit_numpyro_latent, fit_pymc_latent

        if backend == "numpyro":
            idata = fit_numpyro_latent(m, route, st, eta)
        else:
            idata = fit_pymc_latent(m, route, st, eta, cores, sampler)
    elif backend == "numpyro":
        idata = _fit_numpyro(m, st, eta)
    else:
        idata = _fit_pymc(m, st, eta, cores, sampler)
    _drop_constant_factors(idata)
    attrs = {
        "noiseaware_backend": backend,
        "noiseaware_route": route,
        "noiseaware_statistic": release.statistic,
        "noiseaware_selection": "not used (conditioned on the selected entries); see fit's docstring",
        **release_attrs(release),
    }
    return finish_fit(owner, idata, st, check=["sigma"], block=_BLOCK, default_var="sigma", attrs=attrs)


#: Posterior variables of the samplers' LKJ parameterizations with constant entries: NumPyro's Cholesky factor of
#: the correlation matrix (first row ``(1, 0, ...)``, zeros above the diagonal) and PyMC's correlation matrix
#: (unit diagonal). Both are functions of ``sigma``; kept, they fail or warn in ArviZ's default calls.
_CONSTANT_FACTORS = ("corr_chol", "chol_corr")


def _drop_constant_factors(idata: Any) -> None:
    """Keep in the posterior only what varies: drop :data:`_CONSTANT_FACTORS` (``sigma`` determines them), in place."""
    from .._engine import group, set_group

    post = group(idata, "posterior")
    drop = [name for name in _CONSTANT_FACTORS if name in post.data_vars]
    if drop:
        rest = post.drop_vars(drop)
        used = {d for var in rest.data_vars.values() for d in var.dims}
        unused = [c for c in rest.coords if c in rest.dims and c not in used]  # the dropped variables' own dims
        set_group(idata, "posterior", rest.drop_vars(unused))


def _fit_numpyro(m: Any, st: SamplingSettings, eta: float) -> Any:
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    from ..numpyro import NoisyCovarianceEntries  # enables float64 in JAX on import

    d, b = m.d, m.bound

    n, pairs, precision = m.n, np.asarray(m.pairs), np.asarray(m.precision, dtype=np.float64)

    def model(y: Any) -> None:
        s = numpyro.sample("scale", dist.HalfNormal(b * jnp.ones(d)).to_event(1))
        lr = numpyro.sample("corr_chol", dist.LKJCholesky(d, eta))
        low = s[:, None] * lr
        sigma = numpyro.deterministic("sigma", low @ low.T)
        numpyro.sample("y", NoisyCovarianceEntries(sigma, n, pairs, precision), obs=y)

    # the release's entries are the model's argument; the rest shapes it (a later release like it compiles nothing)
    key = ("covariance", "moments", d, float(b), float(eta), float(n), pairs.tobytes(), precision.tobytes())
    return numpyro_nuts(model, st, data=(np.asarray(m.y, dtype=np.float64),), cache_key=key)


@owned("covariance.fit")
def _fit_pymc(m: Any, st: SamplingSettings, eta: float, cores: int | None, nuts_sampler: str = "auto") -> Any:
    import pymc as pm

    from ..pymc import NoisyCovarianceEntries

    d, b = m.d, m.bound
    with pm.Model():
        chol, _, _ = pm.LKJCholeskyCov("chol", n=d, eta=eta, sd_dist=pm.HalfNormal.dist(b, shape=d), compute_corr=True)
        sigma = pm.Deterministic("sigma", chol @ chol.T)
        NoisyCovarianceEntries("y", sigma, m.n, m.pairs, m.precision, observed=np.asarray(m.y))
        return pymc_sample(st, cores=cores, nuts_sampler=nuts_sampler)
