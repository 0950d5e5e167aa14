r"""NUTS posterior of :math:`\alpha` under the latent-:math:`S_0` model of Guo et al. (2022) eq. (6) / eq. (4).

The model (Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional Data*, §4.2.4, DPapprox,
and the data-split model 4)

.. math:: \alpha\sim\pi_0,\qquad S_0\mid\alpha\sim N\bigl(\mu(\alpha),\Sigma(\alpha)/n\bigr),\qquad
          s_{L,j}\mid S_0\sim\mathrm{Laplace}(S_{0,j},\ m),

with :class:`~noiseaware.numpyro.LaplaceCensoredDirichletStat` (``moments="asymptotic"``: the
paper's :math:`\psi`/:math:`\psi_1` moments; ``"censored"``: the moments of :math:`\log\max(x_j,a)`,
which remove the bias of a large threshold). The paper samples eq. (6) by the Bernstein-Sheldon
Gibbs sampler; here NUTS samples :math:`(\alpha, S_0)` jointly (non-centred :math:`S_0`).
Priors (Table 1): ``p1`` independent Gamma(1, 0.1) with every part of the release as an
observation; ``p3`` / ``p4`` the Gamma / Gaussian-copula priors elicited from :math:`S_L(D_1,a)`
(:func:`elicit_prior`) with :math:`S_L(D_2,a)` as the observation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._core._dirichlet import SERIES_TERMS, check_censored_threshold, pair_series_terms
from .._core._dirichlet_release import LogMeanPart, logmean_parts
from .._engine import (
    MixingBlock,
    NutsProgramSpec,
    ProgramCache,
    SamplingSettings,
    build_nuts,
    chain_groups,
    check_settings,
    finish_fit,
    from_groups,
    model_potential,
    pymc_cores,
    pymc_sample,
    release_attrs,
)
from .._engine._x64 import float64
from .._validation import owned
from ..exceptions import NoiseawareValueError
from ._boots import GammaCopulaPrior, elicit_prior, p1_prior
from ._result import NO_POINTWISE, PER_PART, prior_attrs

__all__ = ["fit"]

_OWNER = "dirichlet.fit"
_LOG_2PI = math.log(2 * math.pi)
#: A PyMC fit observing several parts: ``pm.sample`` stores no log-likelihood.
_PYMC_PARTS = (
    "none: the PyMC backend stores no log-likelihood (backend='numpyro' stores one term per observed part; "
    "docs/dirichlet.md, 'Model comparison')"
)
#: The sampler block that :func:`fit`'s mixing check names.
_BLOCK = MixingBlock.nuts(
    "NUTS on the Dirichlet parameters alpha (with the latent statistics)",
    "alpha[j] is the concentration of part j.",
)


@owned(_OWNER)
def _prior_and_parts(
    release: Any, prior: Any, prior_draws: int, rng: Any
) -> tuple[GammaCopulaPrior, list[LogMeanPart]]:
    parts = logmean_parts(release)
    if isinstance(prior, GammaCopulaPrior):
        return prior, parts[-1:]
    kind = v.choice("prior", prior, ("p1", "p3", "p4"))
    if kind == "p1":
        return p1_prior(parts[0].d), parts
    if len(parts) != 2:
        raise NoiseawareValueError(
            f"{_OWNER}: prior {kind!r} is elicited from D1, but the release has no split; privatize with "
            "split=... (Guo et al. 2022, §4.2: n1 = 0.25 n), or use prior='p1'."
        )
    return elicit_prior(release, kind, B=prior_draws, rng=rng), parts[-1:]


@dataclass(frozen=True)
class _Static:
    """Everything that shapes the compiled NumPyro program of :func:`fit`; the data are arguments."""

    d: int
    parameterizations: tuple[str, ...]  # one per observed part
    moments: str
    copula: bool
    chains: int
    draws: int
    warmup: int
    target_accept: float
    # the censoring series' length for the parts' thresholds (static: the thresholds are arguments, and a
    # traced threshold would get the 256 terms of any threshold, ~17x the cost at a = 1e-3)
    series_terms: int | None = None
    groups: int = 1  # devices the chains are spread over (_engine.chain_groups)


#: NUTS runs of :func:`fit` (the engine's :class:`~noiseaware._engine._nuts.NutsRun`, :func:`_build_run`),
#: keyed by :class:`_Static`: the engine's cache, 16 runs.
_PROGRAMS = ProgramCache(maxsize=16)
#: Cache statistics, for tests: ``hits`` and ``misses``.
_CACHE_INFO = _PROGRAMS.info


def _model_args(pr: GammaCopulaPrior, parts: list[LogMeanPart]) -> tuple[np.ndarray, ...]:
    """The data of the model as float64 arrays: prior, copula, and the parts stacked on axis 0."""
    f8 = np.float64
    if pr.corr is None:
        prec, logdet = np.zeros((pr.d, pr.d)), f8(0.0)
    else:
        prec = np.linalg.inv(pr.corr) - np.eye(pr.d)
        logdet = f8(np.linalg.slogdet(pr.corr)[1])
    return (
        np.asarray(pr.shape, dtype=f8).reshape(pr.d),
        np.broadcast_to(np.asarray(pr.rate, dtype=f8), (pr.d,)).copy(),
        np.asarray(prec, dtype=f8),
        np.asarray(logdet, dtype=f8),
        np.array([p.n for p in parts], dtype=f8),
        np.array([math.log(p.a) for p in parts], dtype=f8),
        np.array([p.scale for p in parts], dtype=f8),
        np.stack([np.asarray(p.s_l, dtype=f8) for p in parts]),
    )


def _numpyro_model(st: _Static) -> Any:
    """The model of the module docstring with the data as arguments (:func:`_model_args`)."""

    def model(*args: Any) -> None:
        _model_body(st, *args)  # looked up when traced: a test may wrap it to count traces

    return model


def _model_body(
    st: _Static, shape: Any, rate: Any, prec: Any, logdet: Any, n: Any, log_a: Any, scale: Any, s_l: Any
) -> None:
    """The sites of :func:`_numpyro_model` (run only while JAX traces the model)."""
    import jax.numpy as jnp
    import jax.scipy.special as jsp
    import jax.scipy.stats as jst
    import numpyro
    import numpyro.distributions as dist

    from ..numpyro import LaplaceCensoredDirichletStat

    alpha = numpyro.sample("alpha", dist.Gamma(shape, rate).to_event(1))
    if st.copula:
        u = jnp.clip(jsp.gammainc(shape, rate * alpha), 1e-15, 1 - 1e-15)
        z = jst.norm.ppf(u)
        numpyro.factor("copula", -0.5 * z @ prec @ z - 0.5 * logdet)
    numpyro.deterministic("composition", alpha / alpha.sum())
    for i, par in enumerate(st.parameterizations):
        LaplaceCensoredDirichletStat.observe_latent(
            f"s{i}", alpha, n[i], log_a[i], scale[i], s_l[i], moments=st.moments, parameterization=par,
            terms=st.series_terms,
        )


def _build_run(st: _Static, z_start: dict[str, np.ndarray], args: tuple[np.ndarray, ...]) -> Any:
    """The engine's NUTS run of the model: its potential and deterministic sites take the data as arguments.

    One trace (at this call's start) for the sites and their supports; NUTS with one dense mass
    block over all latent sites (``NUTS(dense_mass=True)``), the chains vectorized within a device;
    each kept draw records the constrained values, the deterministic sites and each part's
    log-likelihood.
    """
    values = {k: v[0] for k, v in z_start.items()}
    values["alpha"] = np.exp(values["alpha"])  # Gamma: the unconstrained alpha is log(alpha)
    target = model_potential(_numpyro_model(st), args, start=values)
    parts = len(st.parameterizations)

    def record(z: Any, data: Any) -> Any:
        samples = target.record(z, data)
        loglik = {f"s{i}": _laplace_loglik(samples[f"s{i}_s0"], data[7][i], data[6][i]) for i in range(parts)}
        return samples, loglik

    config = NutsProgramSpec(
        st.chains, st.draws, st.warmup, st.target_accept, groups=st.groups, dense_mass=(tuple(sorted(z_start)),),
        vectorize=True, keys="split",
    )
    return build_nuts(target.potential, record, config)


def _laplace_loglik(s0: Any, s_l: Any, scale: Any) -> Any:
    """``sum_j log Laplace(s_l_j; s0_j, scale)`` over the last axis of ``s0``."""
    import jax.numpy as jnp

    from .._core import get_backend
    from .._core._noise import laplace_logpdf

    return jnp.sum(laplace_logpdf(get_backend("jax"), s_l, s0, scale), axis=-1)


def _z_start(st: _Static, parts: list[LogMeanPart], rng: np.random.Generator) -> dict[str, np.ndarray]:
    r"""Unconstrained starts, shape ``(chains, d)``, of every latent site.

    ``alpha`` starts at :func:`_init_alpha` in every chain; the standardised latent
    :math:`z = L^{-1}(S_0-\mu)` of each part at ``Uniform(-2, 2)`` draws per chain (NumPyro's
    ``init_to_uniform``), and a centred :math:`S_0` at :math:`\mu(\alpha)` plus as many of its
    standard deviations.
    """
    from .._core import _dirichlet as core
    from .._core import get_backend

    alpha0 = _init_alpha(parts)
    z = {"alpha": np.tile(np.log(alpha0), (st.chains, 1))}
    for i, (p, par) in enumerate(zip(parts, st.parameterizations, strict=True)):
        u = rng.uniform(-2.0, 2.0, size=(st.chains, st.d))
        if par == "centered":
            mean, cov = core.logmean_moments(get_backend("numpy"), alpha0, math.log(p.a), st.moments)
            sd = np.sqrt(np.clip(np.diag(cov), 0.0, None) / p.n)
            z[f"s{i}_s0"] = np.asarray(mean, dtype=np.float64) + sd * u
        else:
            z[f"s{i}_s0_z"] = u
    return z


def _sampler(st: _Static, z0: dict[str, np.ndarray], args: tuple[np.ndarray, ...]) -> Any:
    """The NUTS run for ``st``: from :data:`_PROGRAMS`, or built now and cached."""
    return _PROGRAMS.get(st, lambda: _build_run(st, z0, args))


def _series_terms(parts: list[LogMeanPart]) -> int:
    """The censoring series' length for the parts' thresholds, rounded up to 32, 64, 128 or 256.

    Enough terms for every part's threshold (:func:`~noiseaware._core._dirichlet.pair_series_terms`);
    rounded up so that releases with nearby thresholds share one compiled program (every threshold
    up to about a = 0.03 gets 32 terms, against the 256 a traced threshold would get).
    """
    need = max(pair_series_terms(math.log(p.a)) for p in parts)
    return min(SERIES_TERMS, max(32, 1 << (need - 1).bit_length()))


def _fit_numpyro(pr: GammaCopulaPrior, parts: list[LogMeanPart], moments: str, settings: SamplingSettings) -> Any:
    import jax
    import numpyro

    from .. import numpyro as _nan  # noqa: F401  (turns on float64 before any JAX array is made)

    chains, seed = settings.chains, settings.seed
    st = _Static(
        d=pr.d,
        parameterizations=tuple(_parameterization(p) for p in parts),
        moments=moments,
        copula=pr.corr is not None,
        chains=chains,
        draws=settings.draws,
        warmup=settings.warmup,
        target_accept=float(settings.target_accept),
        series_terms=_series_terms(parts),
        groups=chain_groups(chains),
    )
    args = _model_args(pr, parts)
    z0 = _z_start(st, parts, np.random.default_rng([seed, 0x5EED]))
    run = _sampler(st, z0, args)

    def check_start(ok: bool) -> None:
        if not ok:
            raise NoiseawareValueError(
                f"{_OWNER}: the log-density or its gradient is not finite at the start alpha = "
                f"{_init_alpha(parts)!r} (the MLE at the L1 projection of s_L)."
            )

    bar = None
    if settings.progressbar:
        from tqdm.auto import tqdm

        bar = tqdm(total=st.warmup + st.draws, desc=f"NUTS, {chains} chain(s)")
    try:
        out = run(jax.random.PRNGKey(seed), z0, None, None, (), args, bar, check_start)
    finally:
        if bar is not None:
            bar.close()
    samples, loglik = out.draws
    names = ("lp", "diverging", "accept_rate", "n_steps", "tree_depth", "energy", "step_size")
    stats = {k: out.stats[k] for k in names}
    groups: dict[str, Any] = {
        "posterior": {k: np.asarray(x) for k, x in samples.items()},
        "sample_stats": {k: np.asarray(x) for k, x in stats.items()},
        "observed_data": {f"s{i}": np.asarray(p.s_l, dtype=np.float64) for i, p in enumerate(parts)},
    }
    if len(parts) > 1:  # one term per independent part, in one variable: az.loo(fit) needs no var_name
        groups["log_likelihood"] = {"s_l": np.stack([np.asarray(loglik[f"s{i}"]) for i in range(len(parts))], -1)}
    return from_groups(
        groups,
        dims={"alpha": ["part"], "composition": ["part"], "s_l": ["observed_part"]},
        coords={"part": list(range(pr.d)), **({"observed_part": list(range(len(parts)))} if len(parts) > 1 else {})},
        attrs={"inference_library": "numpyro", "inference_library_version": numpyro.__version__},
    )


def _parameterization(p: LogMeanPart) -> str:
    r"""``"centered"`` when the Laplace noise is narrower than :math:`S_0`'s spread, else ``"noncentered"``.

    With little noise (large :math:`n\epsilon_1`) the likelihood pins :math:`S_0`, and a non-centred
    :math:`S_0 = \mu(\alpha) + L z` ties ``z`` to :math:`\alpha` in a narrow ridge (deep NUTS trees).
    """
    from .._core import _dirichlet as core
    from .._core import get_backend

    _, cov = core.logmean_moments(get_backend("numpy"), _init_alpha([p]), math.log(p.a), "asymptotic")
    sd = float(np.median(np.sqrt(np.diag(cov) / p.n)))
    return "centered" if math.sqrt(2.0) * p.scale < sd else "noncentered"


def _init_alpha(parts: list[LogMeanPart]) -> np.ndarray:
    """A start inside the posterior's bulk: :func:`~._boots.start_alpha` at the last part's ``s_l``."""
    from ._boots import start_alpha

    return start_alpha(parts[-1].s_l, upper=500.0)


@owned(_OWNER)
def _fit_pymc(
    pr: GammaCopulaPrior, parts: list[LogMeanPart], moments: str, settings: SamplingSettings, cores: int | None
) -> Any:
    import pymc as pm
    import pytensor.tensor as pt

    from .. import pymc as nap

    d = pr.d
    with pm.Model(coords={"part": list(range(d))}):
        alpha = pm.Gamma("alpha", alpha=pr.shape, beta=pr.rate, dims="part", initval=_init_alpha(parts))
        if pr.corr is not None:
            u = pt.clip(pt.gammainc(pr.shape, pr.rate * alpha), 1e-15, 1 - 1e-15)
            z = -math.sqrt(2.0) * pt.erfcinv(2.0 * u)
            prec = np.linalg.inv(pr.corr) - np.eye(d)
            pm.Potential("copula", -0.5 * pt.dot(z, pt.dot(prec, z)) - 0.5 * float(np.linalg.slogdet(pr.corr)[1]))
        pm.Deterministic("composition", alpha / alpha.sum(), dims="part")
        for i, p in enumerate(parts):
            nap.LaplaceCensoredDirichletStat(
                f"s{i}",
                alpha,
                p.n,
                p.a,
                p.scale,
                observed=p.s_l,
                moments=moments,
                parameterization=_parameterization(p),
            )
        # PyMC's own NUTS, as before: nutpie / NumPyro are checked on the copula and covariance models only
        return pymc_sample(settings, cores=cores, nuts_sampler="pymc", compute_convergence_checks=False)


@float64
@owned(_OWNER)
def fit(
    release: Any,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    prior: str | GammaCopulaPrior = "p1",
    moments: str = "censored",
    backend: str = "numpyro",
    prior_draws: int = 2000,
    cores: int | None = None,
) -> Any:
    r"""NUTS posterior of :math:`\alpha` and of :math:`E[x\mid\alpha]` from a ``dirichlet_logmean`` release.

    Samples :math:`\pi(\alpha, S_0\mid s_L)\propto\prod_j\mathrm{Laplace}(s_{L,j}; S_{0,j}, m)\,
    N(S_0;\mu(\alpha),\Sigma(\alpha)/n)\,\pi_0(\alpha)` (Guo, Barrientos & Peña (2022), *Differentially Private
    Inference for Compositional Data*, eq. 6; eq. 4 with a split) with
    :class:`~noiseaware.numpyro.LaplaceCensoredDirichletStat` (module docstring).

    Parameters
    ----------
    release : Release
        A ``dirichlet_logmean`` release; ``n``, ``a``, the Laplace scale and :math:`s_L` are read
        from it.
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
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when ``alpha`` has bulk ESS below 100
        per chain or R-hat above 1.01 (default True).
    prior : {"p1", "p3", "p4"} or GammaCopulaPrior
        ``p1``: independent Gamma(1, 0.1), every part of the release observed. ``p3`` / ``p4``:
        elicited from ``D1`` of a split release (:func:`elicit_prior`), ``D2`` observed. A
        :class:`GammaCopulaPrior` is used as given with the last part observed.
    moments : {"censored", "asymptotic"}
        Censoring-aware moments (default) or the paper's eq. (6).
    backend : {"numpyro", "pymc"}
        NumPyro NUTS (the package's driver: chains spread over the local devices, vectorized on
        each) or PyMC NUTS.
    prior_draws : int
        DPBoots replicates used to elicit p3 / p4.
    cores : int, optional
        ``backend="pymc"`` with PyMC's own NUTS only: worker processes for the chains. Default
        (None): one per chain up to the CPU count, or 1 (chains in sequence, in-process) when JAX is
        already loaded, since forking a process with JAX's threads running can deadlock. Refused
        with ``backend="numpyro"``.

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        Returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData under ArviZ 0.x), as
        ``pm.sample`` does. ``posterior``: ``alpha`` and ``composition``
        (:math:`E[x\mid\alpha]=\alpha/\sum_j\alpha_j`), dims ``chain, draw, part``, and each
        observed part's latent :math:`S_0` (``s0_s0``, ...; with the non-centred parameterisation
        also its standardised ``s0_s0_z``). ``log_likelihood`` (NumPyro, and only where two or more
        parts are observed: prior ``p1`` on a split release): ``s_l``, dims ``chain, draw,
        observed_part``, one term per observed part, the Laplace density of its :math:`s_L` given the
        sampled :math:`S_0` (the parts are disjoint records with independent noise, so ``az.loo``
        leaves one part out). A fit observing one part stores no ``log_likelihood`` group: the part is
        one noisy vector with no per-record terms, and ArviZ's elpd of its one joint term would
        compare nothing (``az.loo`` answers "log likelihood not found"; ``docs/dirichlet.md``, "Model
        comparison"). ``observed_data``: each observed :math:`s_L`. Root ``attrs``: the sampler
        settings, ``noiseaware_log_likelihood`` (what the group holds, or why there is none),
        ``noiseaware_backend``,
        ``noiseaware_moments``, ``noiseaware_prior`` (read with :func:`prior`),
        ``noiseaware_observed_parts`` (:func:`observed_parts`) and the release
        (:func:`noiseaware.results.release`). Pooled draws: ``noiseaware.results.draws(res, "alpha")``;
        posterior mean: :func:`posterior_mean`.

    Raises
    ------
    TypeError, ValueError
        For a release that is not ``dirichlet_logmean``, p3/p4 without a split, or bad settings.

    Notes
    -----
    With ``backend="numpyro"`` the run is the package's NUTS driver (``docs/architecture.md``,
    "Sampling convention"): two XLA programs (the chains' start, and a chunk of iterations with
    the deterministic sites, run from Python so that Ctrl-C lands between chunks) that take the
    data (the prior's shape, rate and copula, and each part's ``n``, ``a``, scale and
    :math:`s_L`) as arguments. They are compiled on the first call for a configuration -- ``d``,
    the number of observed parts and their parameterisations, ``moments``, whether the prior has
    a copula, ``chains``, ``draws``, ``warmup`` and ``target_accept`` -- and kept in a
    module-level cache of at most 16 runs (least recently used evicted), so later calls
    with the same configuration and other data or seeds skip tracing and compilation (several
    seconds: about 8 s of a 12 s first call for ``moments="asymptotic"``, ``d = 5``, two chains
    of 500 + 1000 iterations, on a busy 2-core machine). The cached program holds no state between
    calls: every call starts its chains afresh and runs its own warmup. The cache is not
    thread-safe.

    With ``backend="pymc"`` and ``moments="censored"`` PyTensor's first compilation of the
    censoring series and its gradient takes about a minute (cached afterwards).

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=2000)
    >>> rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(1))
    >>> res = fit(rel, chains=2, draws=60, warmup=60, seed=0, moments="asymptotic", check_mixing=False)
    >>> na.results.draws(res, "alpha").shape, na.results.draws(res, "composition").shape
    ((120, 3), (120, 3))
    >>> from noiseaware.dirichlet import posterior_mean, prior
    >>> posterior_mean(res).shape, prior(res).corr is None, res.attrs["noiseaware_result"]
    ((3,), True, 'dirichlet.fit')
    """
    parts = logmean_parts(release)  # fail early on a bad release
    moments = v.choice("moments", moments, ("censored", "asymptotic"))
    backend = v.choice("backend", backend, ("numpyro", "pymc"))
    st = check_settings(
        chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing,
    )
    prior_draws = v.integer("prior_draws", prior_draws, minimum=10)
    pr, obs = _prior_and_parts(release, prior, prior_draws, np.random.default_rng(st.seed))
    for p in obs:
        check_censored_threshold(p.a, moments)
    if pr.d != obs[0].d:
        raise NoiseawareValueError(f"{_OWNER}: the prior has d={pr.d} parts but the release has d={obs[0].d}.")
    cores = pymc_cores(backend, cores)
    if backend == "numpyro":
        idata = _fit_numpyro(pr, obs, moments, st)
    else:
        idata = _fit_pymc(pr, obs, moments, st, cores)
    attrs = {
        "noiseaware_backend": backend,
        "noiseaware_moments": moments,
        **prior_attrs(pr, "user" if isinstance(prior, GammaCopulaPrior) else str(prior)),
        "noiseaware_observed_parts": list(range(len(parts)))[-len(obs) :],
        "noiseaware_log_likelihood": (
            NO_POINTWISE if len(obs) == 1 else PER_PART if backend == "numpyro" else _PYMC_PARTS
        ),
        **release_attrs(release),
    }
    return finish_fit(
        "dirichlet.fit", idata, st, check=["alpha"], block=_BLOCK, default_var="alpha", attrs=attrs
    )
