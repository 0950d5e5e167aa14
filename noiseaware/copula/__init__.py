"""Gaussian copula correlations from DP median two-way tables (seed ``000_3eff9b68025f505f.txt``).

* :func:`fit` -- Bayes-NA (§3): NUTS on the LKJ prior times the composite likelihood of eq. (18),
  in NumPyro or PyMC, with credible intervals and posterior functionals (Supplement S.4).
* :func:`mle_nn` -- MLE-NN (§4, Algorithm S.3) with :func:`nearest_correlation` (Higham 2002).
* Baselines of seed 000 §5: :func:`li_kendall` (seed 003 Algorithm 5) and :func:`asghar_dpc`
  (Asghar et al. 2020 as configured in seed 000 §5: public median cut points, Laplace-noised
  2 x 2 tables, clipping, :func:`tetrachoric` correlations), which makes its own release.
"""

from ._baselines import AsgharResult, asghar_dpc, li_kendall, tetrachoric
from ._fit import CopulaFit, LKJPrior, fit, partial_slope, pointwise_log_likelihood
from ._higham import NearestCorrelationResult, nearest_correlation
from ._mle import MLEResult, eta_from_r, fisher_mean, mle_nn, mle_nn_pair, r_from_eta
from ._synth import (
    DPCopulaFit,
    SyntheticInference,
    combine_synthetic,
    dpcopula_correlation,
    dpcopula_margins,
    fit_dpcopula,
    margin_posterior,
    synthesize,
    synthesize_hybrid,
)

__all__ = [
    "AsgharResult",
    "CopulaFit",
    "DPCopulaFit",
    "LKJPrior",
    "MLEResult",
    "NearestCorrelationResult",
    "asghar_dpc",
    "eta_from_r",
    "fisher_mean",
    "fit",
    "li_kendall",
    "mle_nn",
    "mle_nn_pair",
    "nearest_correlation",
    "partial_slope",
    "pointwise_log_likelihood",
    "r_from_eta",
    "tetrachoric",
    # seed 003 (DPCopula)
    "SyntheticInference",
    "combine_synthetic",
    "dpcopula_correlation",
    "dpcopula_margins",
    "fit_dpcopula",
    "margin_posterior",
    "synthesize",
    "synthesize_hybrid",
]
