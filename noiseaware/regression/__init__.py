r"""Linear regression from a private release of its sufficient statistics.

A curator releases ``privatize(df, statistic="regression", response="y", bound=..., rho=...,
method="ssp" | "adassp" | "pace_ggm")``: the unique entries of :math:`Z^\top Z`, ``Z = [1, X, y]``
scaled by public bounds. Here, the analyst's side:

* :func:`read_regression` — the noisy :math:`Z^\top Z` and the per-entry noise scale
  (:class:`RegressionStatistics`), the input of a noise-aware likelihood;
* :func:`fit` — the noise-aware posterior of the coefficients and the residual sd
  (:class:`RegressionFit`, prior :class:`RegressionPrior`), in NumPyro or PyMC; the likelihood
  ``NoisySufficientStatistics`` of :mod:`noiseaware.numpyro` / :mod:`noiseaware.pymc` composes
  into a user's own model (hierarchies, shared coefficients).

See ``docs/regression.md`` and ``docs/regression-point.md``.
"""

from .._core._regression_release import RegressionStatistics, read_regression
from ._fit import RegressionFit, fit
from ._model import RegressionPrior

__all__ = ["RegressionFit", "RegressionPrior", "RegressionStatistics", "fit", "read_regression"]
