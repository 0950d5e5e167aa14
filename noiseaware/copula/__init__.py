"""Gaussian copula correlations from DP median two-way tables (seed ``000_3eff9b68025f505f.txt``).

* :func:`fit` -- Bayes-NA (§3): NUTS on the LKJ prior times the composite likelihood of eq. (18),
  in NumPyro or PyMC, with credible intervals and posterior functionals (Supplement S.4).
* :func:`mle_nn` -- MLE-NN (§4, Algorithm S.3) with :func:`nearest_correlation` (Higham 2002).
* Baseline: :func:`li_kendall` (seed 003 Algorithm 5).
"""

from ._baselines import li_kendall
from ._fit import CopulaFit, LKJPrior, fit, partial_slope
from ._higham import NearestCorrelationResult, nearest_correlation
from ._mle import MLEResult, eta_from_r, fisher_mean, mle_nn, mle_nn_pair, r_from_eta

__all__ = [
    "CopulaFit",
    "LKJPrior",
    "MLEResult",
    "NearestCorrelationResult",
    "eta_from_r",
    "fisher_mean",
    "fit",
    "li_kendall",
    "mle_nn",
    "mle_nn_pair",
    "nearest_correlation",
    "partial_slope",
    "r_from_eta",
]
