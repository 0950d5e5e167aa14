r"""DPABC: rejection ABC for :math:`\alpha` from a ``dirichlet_logmean`` release (Guo et al. 2022, §4.2.3).

Draw :math:`\tilde\alpha\sim\pi_0`, simulate ``n`` records :math:`\tilde D` from
:math:`\mathrm{Dirichlet}(\tilde\alpha)`, release them as the curator did,
:math:`S_L(\tilde D,a)=S_0(\tilde D,a)+\mathrm{Laplace}(0, m)^d` with :math:`m=-d\log a/(n\epsilon_1)`,
and keep :math:`\tilde\alpha` when :math:`\|S_L(\tilde D,a)-s_L\|_2<\delta`. As in the paper,
:math:`\delta` is set (Pritchard et al. 1999) so that a fixed fraction (``accept``, 0.1 in the
seed) of the proposals is kept: the accepted draws are the ``accept * n_sims`` nearest ones.
Priors: ``"p1"`` (independent Gamma(1, 0.1), model 3 on the whole data) and ``"p4"`` (the
Gaussian-copula data-split prior elicited from :math:`S_L(D_1,a)`, model 4 on :math:`D_2`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._core._dirichlet_release import LogMeanPart, logmean_parts, select_part
from .._validation import owned
from ..exceptions import NoiseawareValueError
from ._boots import GammaCopulaPrior, _simulate_stats, elicit_prior, p1_prior

__all__ = ["ABCResult", "dpabc"]

_OWNER = "dpabc"


@dataclass(frozen=True)
class ABCResult:
    r"""Accepted ABC draws (returned by :func:`dpabc`).

    Attributes
    ----------
    alpha : numpy.ndarray, shape (k, d)
        Accepted draws of :math:`\alpha` (approximate posterior sample).
    delta : float
        The tolerance :math:`\delta` (largest accepted distance).
    distances : numpy.ndarray, shape (k,)
    prior : GammaCopulaPrior
    part : LogMeanPart
        The release part the distances refer to.
    n_sims : int
    """

    alpha: np.ndarray
    delta: float
    distances: np.ndarray
    prior: GammaCopulaPrior
    part: LogMeanPart
    n_sims: int

    @property
    def composition(self) -> np.ndarray:
        r"""Draws of :math:`E[x\mid\alpha]=\alpha/\sum_j\alpha_j`, shape (k, d)."""
        return self.alpha / self.alpha.sum(-1, keepdims=True)


    @property
    def posterior_mean(self) -> np.ndarray:
        """Mean of the accepted draws of alpha."""
        return np.asarray(self.alpha.mean(axis=0))


@owned(_OWNER)
def dpabc(
    release: Any,
    prior: str | GammaCopulaPrior = "p4",
    *,
    n_sims: int = 10_000,
    accept: float = 0.1,
    prior_draws: int = 2000,
    rng: Any = None,
    chunk: int = 2_000_000,
) -> ABCResult:
    r"""Rejection ABC posterior of :math:`\alpha` (Guo et al. 2022, §4.2.3, DPABC\ :sub:`p1`, DPABC\ :sub:`p4`).

    Parameters
    ----------
    release : Release
        A ``dirichlet_logmean`` release. ``prior="p1"`` uses the whole data (or ``D2`` of a split
        release); ``"p4"`` needs a split release (``privatize(..., split=0.25)``): the prior comes
        from ``D1`` (:func:`elicit_prior`), the distances from ``D2``.
    prior : {"p1", "p4"} or GammaCopulaPrior
        The prior; a :class:`GammaCopulaPrior` is used as given, with the last part.
    n_sims : int
        Proposals simulated (each a data set of ``n`` records).
    accept : float
        Fraction of proposals kept (0.1 in Guo et al. 2022).
    prior_draws : int
        DPBoots replicates used to elicit p4.
    rng : numpy.random.Generator or int, optional
        Random source (a seed or a Generator).
    chunk : int
        Records simulated at once (memory bound).

    Returns
    -------
    ABCResult

    Raises
    ------
    TypeError, ValueError
        For a release that is not ``dirichlet_logmean``, p4 without a split, or bad settings.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=1000)
    >>> rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, split=0.25, rng=np.random.default_rng(1))
    >>> res = dpabc(rel, "p4", n_sims=1000, prior_draws=200, rng=2)
    >>> res.alpha.shape
    (100, 3)
    """
    n_sims = v.integer("n_sims", n_sims, minimum=1)
    accept = v.open_unit("accept", accept)
    prior_draws = v.integer("prior_draws", prior_draws, minimum=10)
    chunk = v.integer("chunk", chunk, minimum=1)
    keep = max(1, round(accept * n_sims))
    gen = np.random.default_rng(rng)
    parts = logmean_parts(release)
    if isinstance(prior, GammaCopulaPrior):
        pr = prior
    else:
        kind = v.choice("prior", prior, ("p1", "p4"))
        if kind == "p1":
            pr = p1_prior(parts[-1].d)
        else:
            if len(parts) != 2:
                raise NoiseawareValueError(
                    f"{_OWNER}: prior 'p4' is elicited from D1, but the release has no split; privatize with "
                    "split=... (Guo et al. 2022, §4.2: n1 = 0.25 n), or use prior='p1'."
                )
            pr = elicit_prior(release, "p4", B=prior_draws, rng=gen)
    p = select_part(release, None)
    if pr.d != p.d:
        raise NoiseawareValueError(f"{_OWNER}: the prior has d={pr.d} parts but the release has d={p.d}.")
    alpha = pr.sample(n_sims, gen)
    alpha = np.maximum(alpha, 1e-300)
    sims = _simulate_stats(alpha, p.n, p.a, gen, chunk) + gen.laplace(0.0, p.scale, size=(n_sims, p.d))
    dist = np.sqrt(((sims - p.s_l) ** 2).sum(axis=1))
    order = np.argsort(dist)[:keep]
    return ABCResult(
        alpha=alpha[order], delta=float(dist[order[-1]]), distances=dist[order], prior=pr, part=p, n_sims=n_sims
    )
