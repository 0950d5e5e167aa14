"""The prior of ``copula.fit``: LKJ on the correlation matrix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import _validation as v
from .._validation import owned
from ..exceptions import NoiseawareValueError

__all__ = ["LKJPrior"]

_OWNER = "copula.fit"


@dataclass(frozen=True)
class LKJPrior:
    r"""LKJ prior on the correlation matrix, :math:`\pi(R) \propto \det(R)^{\eta - 1}`.

    ``eta = 1`` (the default, Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian
    Copula Correlations*, §3.2) is uniform over correlation matrices; larger ``eta``
    shrinks towards the identity, ``eta < 1`` favours strong correlations. For ``p = 2`` and
    ``eta = 1`` it is the uniform prior on ``R_12`` in (-1, 1) (Wang et al. 2026, §3.1).

    Parameters
    ----------
    eta : float
        Concentration, > 0.
    """

    eta: float = 1.0

    @owned("LKJPrior")
    def __post_init__(self) -> None:
        v.positive("eta", self.eta)


def _as_prior(prior: Any) -> LKJPrior:
    if prior is None or (isinstance(prior, str) and prior.lower() == "lkj"):
        return LKJPrior()
    if isinstance(prior, LKJPrior):
        return prior
    if isinstance(prior, int | float) and not isinstance(prior, bool):
        return LKJPrior(float(prior))
    raise NoiseawareValueError(
        f"{_OWNER}: prior must be 'lkj', an LKJPrior(eta) or a positive float eta; got prior={prior!r}. "
        "For other priors, write the model yourself with CompositeCopulaLikelihood.from_release."
    )
