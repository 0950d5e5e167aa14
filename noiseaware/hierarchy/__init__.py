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
  ArviZ 0.x), read by :mod:`noiseaware.results` (``results.draws(fit, "integer_counts")``).

See ``docs/published-hierarchy.md`` for the user guide.
"""

from ._fit import BACKENDS, PRIORS, ModelData, fit, model, model_data, round_to_totals
from ._gls import GLSResult, gls, gls_dense
from ._record import NoisyHierarchy
from ._synthetic import DEFAULT_VARIANCE, SyntheticNMF, aggregate, synthetic_nmf

__all__ = [
    "BACKENDS",
    "DEFAULT_VARIANCE",
    "PRIORS",
    "GLSResult",
    "ModelData",
    "NoisyHierarchy",
    "SyntheticNMF",
    "aggregate",
    "fit",
    "gls",
    "gls_dense",
    "model",
    "model_data",
    "round_to_totals",
    "synthetic_nmf",
]
