r"""Linear regression from a private release of its sufficient statistics.

A curator releases ``privatize(df, statistic="regression", response="y", bound=..., rho=...,
method="ssp" | "adassp" | "pace_ggm")``: the unique entries of :math:`Z^\top Z`, ``Z = [1, X, y]``
scaled by public bounds. Here, the analyst's side:

* :func:`read_regression` — the noisy :math:`Z^\top Z` and the per-entry noise scale
  (:class:`RegressionStatistics`), the input of a noise-aware likelihood;
* :func:`fit` — the noise-aware posterior of the coefficients and the residual sd (prior
  :class:`RegressionPrior`), in NumPyro or PyMC; it returns an xarray.DataTree under ArviZ 1 (an
  arviz.InferenceData under ArviZ 0.x), read by :mod:`noiseaware.results` and :func:`coefficients`
  (the coefficients' names); the likelihood ``NoisySufficientStatistics`` of
  :mod:`noiseaware.numpyro` / :mod:`noiseaware.pymc` composes into a user's own model
  (hierarchies, shared coefficients);
* Point estimates (:class:`RegressionEstimateResult`): :func:`adassp` (Wang 2018, *Revisiting
  differentially private linear regression: optimal and adaptive prediction & estimation in unbounded
  domain*, Algorithm 2), :func:`pace_ggm_regression` (Ferrando, Fuentes, Mullins, Musco & Sheldon (2026),
  *Private Adaptive Covariance Estimation via Gaussian Graphical Models*, App. G), and
  :func:`ols_from_statistics` (least squares on the noisy statistics, SSP); :func:`adassp_ridge`.

See ``docs/regression.md`` and ``docs/regression-point.md``.
"""

from .._core._regression_release import RegressionStatistics, read_regression
from ._estimators import RegressionEstimateResult, adassp, adassp_ridge, ols_from_statistics, pace_ggm_regression
from ._fit import fit
from ._model import RegressionPrior
from ._result import coefficients

__all__ = [
    "RegressionEstimateResult",
    "RegressionPrior",
    "RegressionStatistics",
    "adassp",
    "adassp_ridge",
    "coefficients",
    "fit",
    "ols_from_statistics",
    "pace_ggm_regression",
    "read_regression",
]
