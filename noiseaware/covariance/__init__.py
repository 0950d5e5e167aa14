r"""Private covariance (Ferrando et al. 2026, PACE-GGM): the analyst's side.

A curator releases with ``privatize(X, statistic="pace_ggm", rho=..., bound=B)`` (adaptive
selection and measurement of entries of :math:`X^\top X/n`) or ``statistic="second_moment"``
(SSP: every unique entry). Here:

* :func:`measurements` — every Gaussian measurement of a release, combined per entry
  (precision weighting, Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation
  via Gaussian Graphical Models*, Prop. 4.2); :func:`combine_measurements`.
* :func:`reconstruct` — the paper's point estimate: maximum-entropy PSD reconstruction
  (eq. 2, Algorithm 4, per connected component); :func:`ssp_estimate` for SSP releases.
* Baselines for simulation studies (seeded numpy noise, not secure releases): :func:`diagonal_only`,
  :func:`gauss_cov`, :func:`separate_cov`, :func:`adaptive_cov` (Dong et al. 2022),
  :func:`coinpress` (Biswas et al. 2020).
* Metrics: :func:`frobenius_error`, :func:`mahalanobis_error` (Ferrando et al. 2026, §5).
* :func:`fit` — a noise-aware posterior of the population covariance in NumPyro or PyMC through
  the distribution ``NoisyCovarianceEntries`` (:mod:`noiseaware.numpyro`, :mod:`noiseaware.pymc`),
  or exactly with ``route="wishart"`` (latent Bartlett factor); centred releases
  (``privatize(..., "pace_ggm", center=True)``) add a latent mean. It returns an xarray.DataTree
  under ArviZ 1 (an arviz.InferenceData under ArviZ 0.x), read by :mod:`noiseaware.results`
  (``results.draws(fit, "sigma")``).

See ``docs/covariance.md`` for the user guide and what the paper leaves open.
"""

from ._analysis import (
    Measurements,
    combine_measurements,
    frobenius_error,
    mahalanobis_error,
    measurements,
    reconstruct,
    ssp_estimate,
)
from ._baselines import adaptive_cov, coinpress, diagonal_only, gauss_cov, separate_cov
from ._fit import fit

__all__ = [
    "Measurements",
    "adaptive_cov",
    "coinpress",
    "combine_measurements",
    "diagonal_only",
    "fit",
    "frobenius_error",
    "gauss_cov",
    "mahalanobis_error",
    "measurements",
    "reconstruct",
    "separate_cov",
    "ssp_estimate",
]
