"""Backend-neutral math for the noise-aware distributions (private).

Every log-density is written once here, as functions of a :class:`Backend` (NumPy+SciPy,
``jax.numpy``, ``pytensor.tensor``); :mod:`noiseaware.pymc` and :mod:`noiseaware.numpyro` are
thin front ends. Importing this package imports neither JAX nor PyTensor. The package exports the
names its users read through it; everything else is imported from its module.
"""

from ._backend import Backend, get_backend
from ._fisher import (
    concrete_sizes,
    copula_log_odds,
    fisher_logpmf,
    fisher_sample_from_uniform,
    fisher_table,
    median_split_table,
    noisy_fisher_logpmf,
)
from ._noise import NOISE_LAWS, discrete_gaussian_logpmf, geometric_from_uniforms, two_sided_geometric_icdf

__all__ = [
    "NOISE_LAWS",
    "Backend",
    "concrete_sizes",
    "copula_log_odds",
    "discrete_gaussian_logpmf",
    "fisher_logpmf",
    "fisher_sample_from_uniform",
    "fisher_table",
    "geometric_from_uniforms",
    "get_backend",
    "median_split_table",
    "noisy_fisher_logpmf",
    "two_sided_geometric_icdf",
]
