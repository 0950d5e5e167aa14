r"""Noise-aware distributions for PyMC.

A package of thin shells over one spec per distribution (the
parameters and their rules, log-prob assembly, draws, support point, release reading), one
module per family; class and parameter names match :mod:`noiseaware.numpyro`. Each discrete
distribution is a PyTensor ``RandomVariable`` (draws by the NumPy core, so prior and posterior
predictive sampling work) and a ``pymc.Discrete`` subclass with ``logp`` (and ``logcdf`` where
cheap); :class:`LaplaceCensoredDirichletStat` and :class:`NoisyCovarianceEntries` are
``pm.CustomDist`` variables.

=============================  ==========================================================
class                          law
=============================  ==========================================================
TwoSidedGeometric              ``loc + D``, ``D`` two-sided geometric
DiscreteGaussian               ``loc + D``, ``D`` discrete Gaussian
NoisyHypergeom                 Fisher noncentral hypergeometric count + noise
NoisyTwoWayTable               median-split 2x2 count of a Gaussian copula + noise
CompositeCopulaLikelihood      all p(p-1)/2 pairs of a correlation matrix
Noisy                          any discrete base plus integer noise (exact convolution)
RandomizedResponse             a k-ary randomized-response answer given the true category probabilities
LaplaceCensoredDirichletStat   noisy censored Dirichlet mean-log statistic
NoisyCovarianceEntries         noisy second-moment entries, moment-matched
NoisySufficientStatistics      noisy Z^T Z of a linear regression
=============================  ==========================================================

The laws and their references are those of :mod:`noiseaware.numpyro`.

Bad parameters raise ``pymc.logprob.utils.ParameterValueError`` carrying the rule (PyMC's
``check_parameters`` idiom); values outside the support give ``-inf``. ``N``, ``K``, ``m`` and
``n`` are data: they must be concrete integers, as they fix a table computed once per data set.

**Predictive checks.** ``pm.sample_prior_predictive`` and ``pm.sample_posterior_predictive``
draw every variable, observed ones included, so models built with ``from_release`` work as they
are. ``from_release(..., observed=None)`` gives a free variable shaped like the release (the
counterpart of NumPyro's ``obs=None``); any other ``observed=`` replaces the release's values.

**Backends.** The log-densities are PyTensor graphs, compiled by whichever backend runs the
model: C (PyTensor 2.x's default), Numba (PyTensor 3's default) or JAX (``nuts_sampler="numpyro"``
or ``"nutpie"``). The draws are the package's exact samplers in NumPy, called once per random
variable node: the C backend calls them from Python, and PyTensor 3's Numba backend from its
object mode, saying so once per compiled function (``UserWarning: Numba will use object mode to
run <name>_rv{...}'s perform method``), as it does for PyMC's own ``pm.CustomDist(random=...)``.
The draws are the same; ``backend="c"`` in PyMC 6's ``pm.sample_posterior_predictive`` (and
``pm.draw``, ``pm.sample_prior_predictive``) compiles them without the notice.
:class:`LaplaceCensoredDirichletStat` draws through PyTensor graphs, on every backend.

Importing this package silences two notices that are not about noiseaware's use of PyTensor:
ArviZ's import-time ``FutureWarning`` about its refactor, and PyTensor's one-time "could not
link to a BLAS" ``UserWarning`` (no operation here uses BLAS); the BLAS probe is resolved at
import so it does not fire later.

Examples
--------
>>> import pymc as pm, noiseaware as na
>>> with pm.Model() as model:
...     r = pm.Uniform("r", -1, 1)
...     t = na.NoisyTwoWayTable("t", r=r, n=1001, alpha=0.9, observed=[260])
>>> round(float(model.compile_logp()({"r_interval__": 0.0})), 4)
-5.1924
"""

from . import _common  # noqa: F401  (first: the filtered imports of PyMC and PyTensor)
from ._categorical import RandomizedResponse
from ._covariance import NoisyCovarianceEntries
from ._dirichlet import LaplaceCensoredDirichletStat
from ._fisher import CompositeCopulaLikelihood, NoisyHypergeom, NoisyTwoWayTable
from ._integer import DiscreteGaussian, TwoSidedGeometric
from ._noisy import Noisy
from ._regression import NoisySufficientStatistics

__all__ = [
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
