r"""Noise-aware distributions for NumPyro.

A package of thin shells over one spec per distribution (the
parameters and their rules, log-prob assembly, draws, support point, release reading), one
module per family; class and parameter names match :mod:`noiseaware.pymc`.

==============================  ==========================================================
class                           law
==============================  ==========================================================
TwoSidedGeometric(loc, alpha)   ``loc + D``, ``D`` two-sided geometric (Wang et al. 2026, eq. 3)
DiscreteGaussian(loc, sigma)    ``loc + D``, ``D`` discrete Gaussian (CKS20; Eng et al. 2024)
NoisyHypergeom(N, K, m, ...)    Fisher noncentral hypergeometric count + noise (eq. 17)
NoisyTwoWayTable(r, n, alpha)   median-split 2x2 count of a Gaussian copula + noise (eq. 17)
CompositeCopulaLikelihood       all p(p-1)/2 pairs of a correlation matrix (eq. 18)
Noisy(dist, noise)              any discrete base plus integer noise (exact convolution)
RandomizedResponse(probs, p)    a k-ary randomized-response answer given the true category probabilities
LaplaceCensoredDirichletStat    noisy censored Dirichlet mean-log statistic (Guo et al. 2022)
NoisyCovarianceEntries          noisy second-moment entries, moment-matched (Ferrando et al.)
NoisySufficientStatistics       noisy Z^T Z of a linear regression (Bernstein & Sheldon 2019)
==============================  ==========================================================

Equations are those of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference
for Gaussian Copula Correlations*; the Dirichlet statistic is eq. 6 of Guo, Barrientos & Peña
(2022), *Differentially Private Inference for Compositional Data*; the covariance entries are the
measurements of Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance
Estimation via Gaussian Graphical Models*; the discrete Gaussian is Canonne, Kamath & Steinke
(2020), as used by Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data Augmentation for Private
Posterior Estimation in R*.

**Float64.** Exactness (1e-9 absolute on log-probabilities near ``n = 1e6``) needs float64.
Importing this package changes no setting: call :func:`noiseaware.config.configure` (or
``numpyro.enable_x64()``) at the top of your script, before creating JAX arrays; with float64 off
the distributions refuse to run, naming ``jax_enable_x64``.

**Validation.** With ``validate_args=True`` a bad parameter raises ``ValueError`` naming it
(NumPyro's idiom: eagerly, and under ``jit`` for parameters that are concrete); values outside
the support give ``-inf``. ``N``, ``K``, ``m`` and ``n`` are data (they fix the constant tables)
and are always checked at construction.

**Predictive checks.** Every ``from_release`` takes ``obs=``: by default the release's values
are observed; ``obs=None`` leaves the site free, shaped like the release, which is NumPyro's
idiom for :class:`numpyro.infer.Predictive` (an observed site returns its observation in every
draw). Build the model with a flag, e.g. ``def model(predict=False): ...from_release(...,
obs=None if predict else RELEASE_VALUES)``, or pass the observation as a model argument.

Examples
--------
>>> import noiseaware.numpyro as nan
>>> round(float(nan.TwoSidedGeometric(3, epsilon=1.0).log_prob(3)), 6)
-0.771937
"""

from .. import _engine  # noqa: F401 - first: importing the engine loads a NumPyro that ArviZ 1 left as a lazy stub
from ._categorical import RandomizedResponse
from ._common import RELEASE_VALUES  # the default obs of from_release (each module imports _common first)
from ._covariance import NoisyCovarianceEntries
from ._dirichlet import LaplaceCensoredDirichletStat
from ._fisher import CompositeCopulaLikelihood, NoisyHypergeom, NoisyTwoWayTable
from ._integer import DiscreteGaussian, TwoSidedGeometric
from ._noisy import Noisy
from ._regression import NoisySufficientStatistics

__all__ = [
    "RELEASE_VALUES",
    "CompositeCopulaLikelihood",
    "DiscreteGaussian",
    "LaplaceCensoredDirichletStat",
    "Noisy",
    "NoisyCovarianceEntries",
    "NoisyHypergeom",
    "NoisySufficientStatistics",
    "NoisyTwoWayTable",
    "RandomizedResponse",
    "TwoSidedGeometric",
]
