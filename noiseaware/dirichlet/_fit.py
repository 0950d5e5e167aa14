r"""NUTS posterior of :math:`\alpha` under the latent-:math:`S_0` model of seed 004 eq. (6) / eq. (4).

The model (seed ``004_f9e752609791d825.txt`` §4.2.4, DPapprox, and the data-split model 4)

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
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validation as v
from .._core._dirichlet_release import LogMeanPart, logmean_parts
from ..exceptions import NoiseawareValueError
from ._boots import GammaCopulaPrior, elicit_prior, p1_prior

if TYPE_CHECKING:  # pragma: no cover
    import arviz

__all__ = ["DirichletFit", "fit"]

_OWNER = "dirichlet.fit"
_LOG_2PI = math.log(2 * math.pi)


@dataclass
class DirichletFit:
    r"""Posterior of :math:`\alpha` from :func:`fit`.

    Attributes
    ----------
    idata : arviz.InferenceData
        Posterior with variables ``alpha`` and ``mean`` (:math:`E[x\mid\alpha]=\alpha/\sum_j\alpha_j`),
        dims ``chain, draw, part``, plus the latent ``s*_s0`` sites.
    prior : GammaCopulaPrior
    parts : list of LogMeanPart
        The observed release parts.
    backend, moments : str
    """

    idata: arviz.InferenceData
    prior: GammaCopulaPrior
    parts: list[LogMeanPart]
    backend: str
    moments: str

    def _pooled(self, name: str) -> np.ndarray:
        x = np.asarray(self.idata["posterior"][name].values, dtype=np.float64)
        return x.reshape(-1, x.shape[-1])

    @property
    def alpha(self) -> np.ndarray:
        """Posterior draws of alpha pooled over chains, shape ``(chains * draws, d)``."""
        return self._pooled("alpha")

    @property
    def mean_composition(self) -> np.ndarray:
        r"""Posterior draws of :math:`E[x\mid\alpha]`, shape ``(chains * draws, d)``."""
        return self._pooled("mean")

    @property
    def posterior_mean(self) -> np.ndarray:
        """Posterior mean of alpha, shape ``(d,)``."""
        return np.asarray(self.alpha.mean(axis=0))

    def interval(self, level: float = 0.95, of: str = "alpha") -> tuple[np.ndarray, np.ndarray]:
        """Equal-tailed credible interval of ``alpha`` or ``mean`` at ``level``: ``(lower, upper)``."""
        level = v.open_unit("DirichletFit.interval", "level", level)
        of = v.choice("DirichletFit.interval", "of", of, ("alpha", "mean"))
        q = np.quantile(self._pooled(of), [(1 - level) / 2, (1 + level) / 2], axis=0)
        return q[0], q[1]


def _prior_and_parts(
    release: Any, prior: Any, prior_draws: int, rng: Any
) -> tuple[GammaCopulaPrior, list[LogMeanPart]]:
    parts = logmean_parts(_OWNER, release)
    if isinstance(prior, GammaCopulaPrior):
        return prior, parts[-1:]
    kind = v.choice(_OWNER, "prior", prior, ("p1", "p3", "p4"))
    if kind == "p1":
        return p1_prior(parts[0].d), parts
    if len(parts) != 2:
        raise NoiseawareValueError(
            f"{_OWNER}: prior {kind!r} is elicited from D1, but the release has no split; privatize with "
            "split=... (seed 004 §4.2: n1 = 0.25 n), or use prior='p1'."
        )
    return elicit_prior(release, kind, B=prior_draws, rng=rng), parts[-1:]


def _numpyro_model(pr: GammaCopulaPrior, parts: list[LogMeanPart], moments: str) -> Any:
    import jax.numpy as jnp
    import jax.scipy.special as jsp
    import jax.scipy.stats as jst
    import numpyro
    import numpyro.distributions as dist

    from .. import numpyro as nan  # first: turns on float64

    shape, rate = jnp.asarray(pr.shape), jnp.asarray(pr.rate)
    prec = None if pr.corr is None else jnp.asarray(np.linalg.inv(pr.corr) - np.eye(pr.d))
    logdet = 0.0 if pr.corr is None else float(np.linalg.slogdet(pr.corr)[1])

    def model() -> None:
        alpha = numpyro.sample("alpha", dist.Gamma(shape, rate).to_event(1))
        if prec is not None:
            u = jnp.clip(jsp.gammainc(shape, rate * alpha), 1e-15, 1 - 1e-15)
            z = jst.norm.ppf(u)
            numpyro.factor("copula", -0.5 * z @ prec @ z - 0.5 * logdet)
        numpyro.deterministic("mean", alpha / alpha.sum())
        for i, p in enumerate(parts):
            nan.LaplaceCensoredDirichletStat.observe(
                f"s{i}", alpha, p.n, p.a, p.scale, p.s_l, moments=moments, parameterization=_parameterization(p)
            )

    return model


def _fit_numpyro(
    pr: GammaCopulaPrior,
    parts: list[LogMeanPart],
    moments: str,
    chains: int,
    draws: int,
    warmup: int,
    seed: int,
    progressbar: bool,
    target_accept: float,
) -> Any:
    import arviz as az
    import jax
    from numpyro.infer import MCMC, NUTS, init_to_value

    from .. import numpyro as _nan  # noqa: F401  (turns on float64 before any JAX array is made)

    init = {"alpha": jax.numpy.asarray(_init_alpha(parts))}
    mcmc = MCMC(
        NUTS(
            _numpyro_model(pr, parts, moments),
            target_accept_prob=target_accept,
            dense_mass=True,
            init_strategy=init_to_value(values=init),
        ),
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        chain_method="vectorized" if chains > 1 else "sequential",
        progress_bar=progressbar,
    )
    mcmc.run(jax.random.PRNGKey(seed))
    return az.from_numpyro(mcmc, dims={"alpha": ["part"], "mean": ["part"]})


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
    """A start inside the posterior's bulk: the MLE at the L1 projection of the last part's ``s_l``."""
    from ._boots import l1_projection
    from ._mle import dirichlet_mle_from_stats

    s = l1_projection(parts[-1].s_l) - 1e-3
    return np.clip(dirichlet_mle_from_stats(s).alpha, 0.05, 500.0)


def _fit_pymc(
    pr: GammaCopulaPrior,
    parts: list[LogMeanPart],
    moments: str,
    chains: int,
    draws: int,
    warmup: int,
    seed: int,
    progressbar: bool,
    target_accept: float,
    cores: int | None,
) -> Any:
    import pymc as pm
    import pytensor.tensor as pt

    from .. import pymc as nap

    if cores is None:
        cores = 1 if "jax" in sys.modules else min(chains, os.cpu_count() or 1)
    d = pr.d
    with pm.Model(coords={"part": list(range(d))}):
        alpha = pm.Gamma("alpha", alpha=pr.shape, beta=pr.rate, dims="part", initval=_init_alpha(parts))
        if pr.corr is not None:
            u = pt.clip(pt.gammainc(pr.shape, pr.rate * alpha), 1e-15, 1 - 1e-15)
            z = -math.sqrt(2.0) * pt.erfcinv(2.0 * u)
            prec = np.linalg.inv(pr.corr) - np.eye(d)
            pm.Potential("copula", -0.5 * pt.dot(z, pt.dot(prec, z)) - 0.5 * float(np.linalg.slogdet(pr.corr)[1]))
        pm.Deterministic("mean", alpha / alpha.sum(), dims="part")
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
        return pm.sample(
            draws=draws,
            tune=warmup,
            chains=chains,
            cores=cores,
            random_seed=seed,
            progressbar=progressbar,
            target_accept=target_accept,
            compute_convergence_checks=False,
        )


def fit(
    release: Any,
    *,
    prior: str | GammaCopulaPrior = "p1",
    moments: str = "censored",
    backend: str = "numpyro",
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    prior_draws: int = 2000,
    progressbar: bool = False,
    target_accept: float = 0.9,
    cores: int | None = None,
) -> DirichletFit:
    r"""NUTS posterior of :math:`\alpha` and of :math:`E[x\mid\alpha]` from a ``dirichlet_logmean`` release.

    Samples :math:`\pi(\alpha, S_0\mid s_L)\propto\prod_j\mathrm{Laplace}(s_{L,j}; S_{0,j}, m)\,
    N(S_0;\mu(\alpha),\Sigma(\alpha)/n)\,\pi_0(\alpha)` (seed 004 eq. 6; eq. 4 with a split) with
    :class:`~noiseaware.numpyro.LaplaceCensoredDirichletStat` (module docstring).

    Parameters
    ----------
    release : Release
        A ``dirichlet_logmean`` release; ``n``, ``a``, the Laplace scale and :math:`s_L` are read
        from it.
    prior : {"p1", "p3", "p4"} or GammaCopulaPrior
        ``p1``: independent Gamma(1, 0.1), every part of the release observed. ``p3`` / ``p4``:
        elicited from ``D1`` of a split release (:func:`elicit_prior`), ``D2`` observed. A
        :class:`GammaCopulaPrior` is used as given with the last part observed.
    moments : {"censored", "asymptotic"}
        Censoring-aware moments (default) or the paper's eq. (6).
    backend : {"numpyro", "pymc"}
        NumPyro NUTS (chains vectorized) or PyMC NUTS.
    chains : int
        Number of chains.
    draws : int
        Kept draws per chain.
    warmup : int
        Warmup (tuning) iterations per chain.
    seed : int, optional
        Random seed (drawn from the OS when omitted; recorded in ``idata.attrs``).
    prior_draws : int
        DPBoots replicates used to elicit p3 / p4.
    progressbar : bool
        Show the sampler's progress bar.
    target_accept : float
        NUTS target acceptance probability.
    cores : int, optional
        PyMC only: worker processes (default: 1 when JAX is loaded, else one per chain).

    Returns
    -------
    DirichletFit

    Raises
    ------
    TypeError, ValueError
        For a release that is not ``dirichlet_logmean``, p3/p4 without a split, or bad settings.

    Notes
    -----
    With ``backend="pymc"`` and ``moments="censored"`` PyTensor's first compilation of the
    censoring series and its gradient takes about a minute (cached afterwards).

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=2000)
    >>> rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(1))
    >>> res = fit(rel, chains=1, draws=100, warmup=100, seed=0, moments="asymptotic")
    >>> res.alpha.shape, res.mean_composition.shape
    ((100, 3), (100, 3))
    """
    parts = logmean_parts(_OWNER, release)  # fail early on a bad release
    del parts
    moments = v.choice(_OWNER, "moments", moments, ("censored", "asymptotic"))
    backend = v.choice(_OWNER, "backend", backend, ("numpyro", "pymc"))
    chains = v.integer(_OWNER, "chains", chains, minimum=1)
    draws = v.integer(_OWNER, "draws", draws, minimum=1)
    warmup = v.integer(_OWNER, "warmup", warmup, minimum=0)
    prior_draws = v.integer(_OWNER, "prior_draws", prior_draws, minimum=10)
    target_accept = v.open_unit(_OWNER, "target_accept", target_accept)
    if seed is None:
        import secrets

        seed = secrets.randbits(31)
    seed = v.integer(_OWNER, "seed", seed, minimum=0)
    pr, obs = _prior_and_parts(release, prior, prior_draws, np.random.default_rng(seed))
    if pr.d != obs[0].d:
        raise NoiseawareValueError(f"{_OWNER}: the prior has d={pr.d} parts but the release has d={obs[0].d}.")
    if backend == "numpyro":
        if cores is not None:
            raise NoiseawareValueError(f"{_OWNER}: cores applies to backend='pymc' only; got cores={cores!r}.")
        idata = _fit_numpyro(pr, obs, moments, chains, draws, warmup, seed, progressbar, target_accept)
    else:
        if cores is not None:
            cores = v.integer(_OWNER, "cores", cores, minimum=1)
        idata = _fit_pymc(pr, obs, moments, chains, draws, warmup, seed, progressbar, target_accept, cores)
    idata.attrs.update({"noiseaware_seed": int(seed), "noiseaware_moments": moments})
    return DirichletFit(idata=idata, prior=pr, parts=obs, backend=backend, moments=moments)
