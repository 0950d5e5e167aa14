r"""Linear regression from a private release of its sufficient statistics.

A curator releases ``privatize(df, statistic="regression", response="y", bound=..., rho=...,
method="ssp" | "adassp" | "pace_ggm")``: the unique entries of :math:`Z^\top Z`, ``Z = [1, X, y]``
scaled by public bounds. Here, the analyst's side:

* :func:`read_regression` — the noisy :math:`Z^\top Z` and the per-entry noise scale
  (:class:`RegressionStatistics`), the input of a noise-aware likelihood.

See ``docs/regression-point.md``.
"""

from .._core._regression_release import RegressionStatistics, read_regression

__all__ = ["RegressionStatistics", "read_regression"]
