r"""Compositional data under DP: the routes of Guo et al. (2022) from a ``dirichlet_logmean`` release.

The release (:func:`noiseaware.privatize` with ``statistic="dirichlet_logmean"``, Algorithm 1)
carries the noisy censored mean-log statistic :math:`S_L(D,a)` (or :math:`S_L(D_1,a)` and
:math:`S_L(D_2,a)` of a split). Every route reads ``n``, ``a`` and the Laplace scale from it:

* :func:`parts` -- the released parts (``s_l``, ``n``, ``a``, ``scale``, ``epsilon_1``).
* :func:`dirichlet_mle`, :func:`dirichlet_mle_from_stats` -- Minka's fixed point (§2.2).
* :func:`dpboots` -- DPBoots, Algorithm 2, with an exact non-stalling truncated-Laplace draw.
* :func:`dpabc` -- DPABC with priors p1 and p4 (§4.2.3).
* :func:`dpmcmc` -- DPMCMC, the exact posterior of eq. (2) by record-level data augmentation
  (:mod:`noiseaware.augment`) with a joint move of alpha and the records; ``replicates=r`` gives
  DPreMCMC (§4.2.2); :func:`dpmcmc_batch` runs it on many releases of one shape at once.
* :func:`fit` -- NUTS on the latent-:math:`S_0` model of eq. (6) (``moments="asymptotic"``) or its
  censoring-aware form (``"censored"``), priors p1 / p3 / p4, in NumPyro or PyMC.
* :func:`elicit_prior` -- priors p3 / p4 from :math:`S_L(D_1,a)` (§4.2.1).

:func:`fit` and :func:`dpmcmc` return the host stack's own container (an ``xarray.DataTree`` under
ArviZ 1, an ``arviz.InferenceData`` under ArviZ 0.x) with the posterior variables ``alpha`` and
``composition``, read by :mod:`noiseaware.results` (``results.draws(res, "alpha")``, ...) and by
:func:`posterior_mean`, :func:`prior` and :func:`observed_parts` here.
"""

from typing import Any

from .._core._dirichlet_release import LogMeanPart, logmean_parts
from ._abc import ABCResult, dpabc
from ._boots import DPBootsResult, GammaCopulaPrior, dpboots, elicit_prior
from ._dpmcmc import dpmcmc, dpmcmc_batch
from ._fit import fit
from ._mle import DirichletMLEResult, dirichlet_mle, dirichlet_mle_from_stats
from ._result import observed_parts, posterior_mean, prior

# isort: split
# Building blocks of the routes above, importable here but not part of the public surface.
from .._validation import owned
from ._boots import l1_projection, p1_prior, truncated_laplace_range  # noqa: F401
from ._mle import dirichlet_loglik, inverse_digamma  # noqa: F401

__all__ = [
    "ABCResult",
    "DPBootsResult",
    "DirichletMLEResult",
    "GammaCopulaPrior",
    "LogMeanPart",
    "dirichlet_mle",
    "dirichlet_mle_from_stats",
    "dpabc",
    "dpboots",
    "dpmcmc",
    "dpmcmc_batch",
    "elicit_prior",
    "fit",
    "observed_parts",
    "parts",
    "posterior_mean",
    "prior",
]


@owned("noiseaware.dirichlet.parts")
def parts(release: Any) -> list[LogMeanPart]:
    r"""The released parts of a ``dirichlet_logmean`` release: ``[D]`` or ``[D1, D2]``.

    Each :class:`LogMeanPart` has ``s_l`` (:math:`S_L(D_l,a)`, the released log-sums divided by
    :math:`n_l`), ``n``, ``a``, ``scale`` (:math:`-d\log a/(n_l\epsilon_1)`) and ``epsilon_1``.

    Raises
    ------
    TypeError, ValueError
        If ``release`` is not a Laplace ``dirichlet_logmean`` release.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).dirichlet([2.0, 3.0], size=400)
    >>> rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, split=0.25, rng=np.random.default_rng(1))
    >>> [(p.n, p.d) for p in parts(rel)]
    [(100, 2), (300, 2)]
    """
    return logmean_parts(release)


