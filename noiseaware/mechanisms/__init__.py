"""DP mechanisms for the data curator.

One object per mechanism. Each has its exact output law (``log_prob(output, value)``; additive
mechanisms also ``noise_logpmf`` and ``noise_cdf``), its :class:`Guarantee` computed from its
parameters, and two samplers behind ``release(value, rng=None)``: OpenDP's exact samplers by
default, a seeded ``numpy.random.Generator`` simulation when ``rng`` is given.

==============================  ================================================  =========
class                           law                                               guarantee
==============================  ================================================  =========
GeometricMechanism              two-sided geometric (Wang et al. 2026, Def. 2.3)  epsilon
LaplaceMechanism                Laplace                                           epsilon
GaussianMechanism               Gaussian (Ferrando et al. 2026, Prop. 3.4)        rho-zCDP
DiscreteGaussianMechanism       discrete Gaussian (CKS20; Eng et al. 2024)        rho-zCDP
RandomizedResponse              k-ary randomized response (Eng et al. 2024)       epsilon
TruncatedGeometricMechanism     TGM, clamp to [L, U] (Wang et al. 2026, §4)       epsilon
BayesianTruncatedGeometric...   BTGM, posterior mean (Wang et al. 2026, eq. 22)   epsilon
RenormalizedGeometricMechanism  RGM, renormalized on [L, U] (Wang et al., S.1)    epsilon
ExponentialMechanism            exponential mechanism (Ferrando et al. 2026)      both
==============================  ================================================  =========

References: Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian
Copula Correlations*; Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive
Covariance Estimation via Gaussian Graphical Models* (Prop. 3.4, 3.5); Eng, Awan, Gong, Ju & Rao
(2024), *dapper: Data Augmentation for Private Posterior Estimation in R* (Example 1).
"""

from ._additive import (
    DiscreteGaussianMechanism,
    GaussianMechanism,
    GeometricMechanism,
    LaplaceMechanism,
    discrete_gaussian_log_normalizer,
)
from ._base import MECHANISMS, Guarantee, Mechanism, mechanism_from_dict
from ._range import (
    BTGM,
    RGM,
    TGM,
    BayesianTruncatedGeometricMechanism,
    RenormalizedGeometricMechanism,
    TruncatedGeometricMechanism,
    btgm_posterior_mean,
    rgm_epsilon_prime,
)
from ._selection import ExponentialMechanism, RandomizedResponse

#: Alias: the two-sided geometric mechanism is the discrete Laplace mechanism.
DiscreteLaplaceMechanism = GeometricMechanism

__all__ = [
    "BTGM",
    "MECHANISMS",
    "RGM",
    "TGM",
    "BayesianTruncatedGeometricMechanism",
    "DiscreteGaussianMechanism",
    "DiscreteLaplaceMechanism",
    "ExponentialMechanism",
    "GaussianMechanism",
    "GeometricMechanism",
    "Guarantee",
    "LaplaceMechanism",
    "Mechanism",
    "RandomizedResponse",
    "RenormalizedGeometricMechanism",
    "TruncatedGeometricMechanism",
    "btgm_posterior_mean",
    "discrete_gaussian_log_normalizer",
    "mechanism_from_dict",
    "rgm_epsilon_prime",
]
