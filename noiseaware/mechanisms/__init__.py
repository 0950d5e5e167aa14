"""DP mechanisms for the data curator.

One object per mechanism. Each has its exact output law (``log_prob(output, value)``; additive
mechanisms also ``noise_logpmf`` and ``noise_cdf``), its :class:`Guarantee` computed from its
parameters, and two samplers behind ``release(value, rng=None)``: OpenDP's exact samplers by
default, a seeded ``numpy.random.Generator`` simulation when ``rng`` is given.

==============================  ==============================================  ===========
class                           law                                             guarantee
==============================  ==============================================  ===========
GeometricMechanism              two-sided geometric (seed 000 Def. 2.3)          epsilon
LaplaceMechanism                Laplace                                          epsilon
GaussianMechanism               Gaussian (seed 002 Prop. 3.4)                    rho-zCDP
DiscreteGaussianMechanism       discrete Gaussian (CKS20; seed 001)              rho-zCDP
RandomizedResponse              k-ary randomized response (seed 001 Ex. 1)       epsilon
TruncatedGeometricMechanism     TGM, clamp to [L, U] (seed 000 §4)               epsilon
BayesianTruncatedGeometric...   BTGM, posterior mean (seed 000 eq. 22)           epsilon
RenormalizedGeometricMechanism  RGM, renormalized on [L, U] (seed 000 S.1)       epsilon
ExponentialMechanism            exponential mechanism (seed 002 Prop. 3.5)       both
==============================  ==============================================  ===========
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
