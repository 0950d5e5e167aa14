"""Gaussian copula correlations from DP median two-way tables (Wang et al. 2026).

* :func:`fit` -- Bayes-NA (§3): NUTS on the LKJ prior times the composite likelihood of eq. (18),
  in NumPyro or PyMC. It returns the host stack's own container (an ``xarray.DataTree`` under
  ArviZ 1, an ``arviz.InferenceData`` under ArviZ 0.x), read by :mod:`noiseaware.results` and by
  the functions of ``R`` here: :func:`pair_summary` (one row per pair), :func:`pair_draws`,
  :func:`functional`, :func:`partial_slope` (Supplement S.4) and :func:`plot_pairs` (Figure 3).
* :func:`mle_nn` -- MLE-NN (§4, Algorithm S.3) with :func:`nearest_correlation` (Higham 2002).
* Baselines of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
  Correlations*, §5: :func:`li_kendall` (Li, Xiong & Jiang (2014), *Differentially Private Synthesization of
  Multi-Dimensional Data using Copula Functions*, Algorithm 5) and :func:`asghar_dpc`
  (Asghar et al. 2020 as configured in Wang et al. (2026) §5: public median cut points, Laplace-noised
  2 x 2 tables, clipping, :func:`tetrachoric` correlations), which makes its own release.
"""

from ._baselines import AsgharResult, asghar_dpc, li_kendall
from ._combine import SyntheticInferenceResult, SyntheticVectorInferenceResult, WaldTestResult, combine_synthetic
from ._dpcopula_fit import fit_dpcopula, margin_draws
from ._fit import LKJPrior, fit, pointwise_log_likelihood
from ._higham import NearestCorrelationResult, nearest_correlation
from ._margins import margin_posterior
from ._mle import MLEResult, mle_nn
from ._result import functional, pair_draws, pair_summary, partial_slope, plot_pairs
from ._synth import cell_codes, synthesize, synthesize_hybrid

# isort: split
# Building blocks of the routes above, importable here but not part of the public surface.
from ._baselines import tetrachoric  # noqa: F401
from ._dpcopula_release import dpcopula_correlation, dpcopula_margins  # noqa: F401
from ._mle import eta_from_r, fisher_mean, mle_nn_pair, r_from_eta  # noqa: F401

__all__ = [
    "AsgharResult",
    "LKJPrior",
    "MLEResult",
    "NearestCorrelationResult",
    "asghar_dpc",
    "fit",
    "functional",
    "li_kendall",
    "mle_nn",
    "nearest_correlation",
    "pair_draws",
    "pair_summary",
    "partial_slope",
    "plot_pairs",
    "pointwise_log_likelihood",
    # Li et al. (2014) (DPCopula)
    "SyntheticInferenceResult",
    "cell_codes",
    "SyntheticVectorInferenceResult",
    "WaldTestResult",
    "combine_synthetic",
    "fit_dpcopula",
    "margin_draws",
    "margin_posterior",
    "synthesize",
    "synthesize_hybrid",
]


