"""Backend-neutral math for the noise-aware distributions (private).

Every log-density is written once here, as functions of a :class:`Backend` (NumPy+SciPy,
``jax.numpy``, ``pytensor.tensor``); :mod:`noiseaware.pymc` and :mod:`noiseaware.numpyro` are
thin front ends. Importing this package imports neither JAX nor PyTensor.
"""

from ._backend import Backend, get_backend
from ._fisher import (
    TAIL_TOLERANCE,
    FisherTable,
    concrete_sizes,
    copula_log_odds,
    fisher_logpmf,
    fisher_mean_var,
    fisher_sample_from_uniform,
    fisher_table,
    median_split_table,
    noisy_fisher_logcdf,
    noisy_fisher_logpmf,
)
from ._noise import (
    DG_REJECTION_TRIES,
    NOISE_LAWS,
    NoiseLaw,
    alpha_from_epsilon,
    discrete_gaussian_from_uniforms,
    discrete_gaussian_log_normalizer,
    discrete_gaussian_logpmf,
    discrete_gaussian_variance,
    geometric_from_uniforms,
    geometric_log_normalizer,
    is_integral,
    two_sided_geometric_icdf,
    two_sided_geometric_logcdf,
    two_sided_geometric_logpmf,
)

__all__ = [
    "DG_REJECTION_TRIES",
    "NOISE_LAWS",
    "TAIL_TOLERANCE",
    "Backend",
    "FisherTable",
    "NoiseLaw",
    "alpha_from_epsilon",
    "copula_log_odds",
    "discrete_gaussian_from_uniforms",
    "discrete_gaussian_log_normalizer",
    "concrete_sizes",
    "discrete_gaussian_logpmf",
    "discrete_gaussian_variance",
    "fisher_logpmf",
    "fisher_mean_var",
    "fisher_sample_from_uniform",
    "fisher_table",
    "geometric_from_uniforms",
    "geometric_log_normalizer",
    "get_backend",
    "is_integral",
    "median_split_table",
    "noisy_fisher_logcdf",
    "noisy_fisher_logpmf",
    "two_sided_geometric_icdf",
    "two_sided_geometric_logcdf",
    "two_sided_geometric_logpmf",
]
