r"""Hierarchies of noisy counts with exact totals: Census-style noisy measurement files.

* :class:`NoisyHierarchy` -- the record: a tree of geographies (states > counties > tracts), the
  same queries at every unit (a total and cells that sum to it), integer counts with discrete
  Gaussian noise of published variance per level and query, and totals published exactly
  (invariants); checked on construction and on load (:meth:`NoisyHierarchy.from_json`).
* :func:`synthetic_nmf` -- a seeded generator of NMF-shaped files and their truth, for tests,
  examples and calibration studies.
* :func:`gls` -- the baseline: the generalized least squares estimate with the invariants as
  equality constraints and its variance (Cumings-Menon & Zhuravlev (2024), *Least squares
  estimation for hierarchical data*), in two passes over the tree; :func:`gls_dense` its dense
  reference.
* :func:`fit` -- a noise-aware posterior of the true counts under a hierarchical model of tract
  populations, in NumPyro or PyMC, in which every draw respects the invariants
  (:func:`model` is its NumPyro model, :func:`round_to_totals` the sum-preserving rounding of the
  integer draws). It returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData under
  ArviZ 0.x), read by :mod:`noiseaware.results` (``results.draws(fit, "integer_counts")``), with a
  ``log_likelihood`` group of one term per released measurement (:func:`pointwise_log_likelihood`).
* The hierarchy inside one's own model: :func:`numpyro_counts` (NumPyro) and :func:`pymc_counts`
  (PyMC) turn a model's leaf log-rates into the counts (a ``counts`` site meeting the exact totals)
  and observe the measurements; :func:`pymc_model` builds the default model in PyMC.
* Beyond one machine: :meth:`NoisyHierarchy.split_by_root` cuts a release into one record per root
  unit (exact: the root totals are invariants), :func:`stitch` puts the parts' fits back together,
  and :func:`noiseaware.distributed.fit_hierarchy` runs the parts as Dask tasks.

See ``docs/published-hierarchy.md`` for the user guide.
"""

from ._data import PRIORS, ModelData, model_data
from ._fit import BACKENDS, METHODS, fit, model, numpyro_counts
from ._gls import GLSResult, gls, gls_dense
from ._loglik import pointwise_log_likelihood
from ._pymc import pymc_counts, pymc_model
from ._record import NoisyHierarchy
from ._rounding import round_to_totals
from ._split import PART_DIM, check_stitched_mixing, stitch
from ._synthetic import DEFAULT_VARIANCE, SyntheticNMF, aggregate, synthetic_nmf

__all__ = [
    "BACKENDS",
    "DEFAULT_VARIANCE",
    "METHODS",
    "PART_DIM",
    "PRIORS",
    "GLSResult",
    "ModelData",
    "NoisyHierarchy",
    "SyntheticNMF",
    "aggregate",
    "check_stitched_mixing",
    "fit",
    "gls",
    "gls_dense",
    "model",
    "model_data",
    "numpyro_counts",
    "pointwise_log_likelihood",
    "pymc_counts",
    "pymc_model",
    "round_to_totals",
    "stitch",
    "synthetic_nmf",
]
