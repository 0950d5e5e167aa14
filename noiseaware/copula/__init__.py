"""Gaussian copula correlations from DP median two-way tables (seed ``000_3eff9b68025f505f.txt``).

Available now: MLE-NN (§4, Algorithm S.3), Higham's nearest correlation matrix and the
Li-Kendall baseline (seed 003 Algorithm 5). The
Bayes-NA ``fit`` workflow builds on the noise-aware distributions of :mod:`noiseaware.pymc` and
:mod:`noiseaware.numpyro`.
"""

from ._baselines import li_kendall
from ._higham import NearestCorrelationResult, nearest_correlation
from ._mle import MLEResult, eta_from_r, fisher_mean, mle_nn, mle_nn_pair, r_from_eta

__all__ = [
    "MLEResult",
    "NearestCorrelationResult",
    "eta_from_r",
    "fisher_mean",
    "li_kendall",
    "mle_nn",
    "mle_nn_pair",
    "nearest_correlation",
    "r_from_eta",
]
