"""noiseaware: noise-aware Bayesian inference for differentially private releases.

Curator side: :func:`privatize` computes a statistic and releases it with exact DP noise as a
self-describing :class:`Release`. Analyst side: noise-aware likelihoods for PyMC
(:mod:`noiseaware.pymc`) and NumPyro (:mod:`noiseaware.numpyro`) read their noise parameters
from the release.

``import noiseaware`` is light: it imports neither PyMC nor JAX. Distribution names at the top
level (``noiseaware.TwoSidedGeometric``, ...) resolve lazily to the PyMC front end.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import accounting, mechanisms
from ._privatize import censoring_counts, kendall_tau_a, median_split_indicators, privatize
from ._version import __version__
from .exceptions import NoiseawareError, PrivacyBudgetError, ReleaseFormatError
from .mechanisms import Guarantee
from .release import Release

#: Names resolved lazily from :mod:`noiseaware.pymc` on first access.
_LAZY_PYMC = (
    "TwoSidedGeometric",
    "DiscreteGaussian",
    "NoisyHypergeom",
    "NoisyTwoWayTable",
    "CompositeCopulaLikelihood",
    "LaplaceCensoredDirichletStat",
    "Noisy",
    "NoisyCovarianceEntries",
    "RandomizedResponse",
    "NoisySufficientStatistics",
)

__all__ = [
    "Guarantee",
    "NoiseawareError",
    "PrivacyBudgetError",
    "Release",
    "ReleaseFormatError",
    "__version__",
    "accounting",
    "censoring_counts",
    "kendall_tau_a",
    "mechanisms",
    "median_split_indicators",
    "privatize",
]


#: Subpackages resolved lazily on first access (``noiseaware.copula.fit(...)`` after ``import noiseaware``).
_LAZY_MODULES = (
    "augment",
    "config",
    "copula",
    "covariance",
    "dirichlet",
    "distributed",
    "hierarchy",
    "numpyro",
    "pymc",
    "regression",
    "results",
)


def __getattr__(name: str) -> Any:
    if name in _LAZY_PYMC:
        module = importlib.import_module(".pymc", __name__)
        try:
            return getattr(module, name)
        except AttributeError:
            raise AttributeError(f"noiseaware.{name} is not available in this version of noiseaware.pymc") from None
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'noiseaware' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(_LAZY_PYMC) | set(_LAZY_MODULES))
