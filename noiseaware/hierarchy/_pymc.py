"""The PyMC form of :func:`noiseaware.hierarchy.model`: the same priors, allocation and likelihood."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core._backend import get_backend
from .._core._noise import NOISE_LAWS

__all__ = ["pymc_model"]


def _segment_sum(values: Any, index: np.ndarray, n: int) -> Any:
    """Sums of the rows of ``values`` by ``index`` (an advanced increment, which accumulates repeated indices)."""
    import pytensor.tensor as pt

    shape = (n,) if values.ndim == 1 else (n, values.shape[1])
    return pt.inc_subtensor(pt.zeros(shape)[index], values)


def pymc_model(data: Any, prior: str = "hierarchical") -> Any:
    r"""A ``pm.Model`` of the leaf cell counts given a hierarchy release's :class:`ModelData`.

    The model of :func:`noiseaware.hierarchy.model` term for term (the hierarchical or uniform
    prior, the continuity-corrected allocation of the exact totals, the discrete Gaussian law of the
    noise-law registry evaluated through the PyTensor backend). The log-sum-exp over each root unit
    subtracts one maximum over all leaf cells (PyTensor has no segment maximum): a root unit whose
    log-rates all lie more than about 700 below the largest would underflow, far outside what the
    priors give.
    """
    import pymc as pm
    import pytensor.tensor as pt

    n_leaf, n_root, C = data.n_units[-1], data.n_units[0], data.n_cells
    root = np.asarray(data.leaf_root)
    with pm.Model() as m:
        if prior == "hierarchical":
            county = data.ancestor(1)
            county_root = data.county_root()
            s_county = pm.HalfNormal("sigma_county", 1.0)
            s_tract = pm.HalfNormal("sigma_tract", 1.0)
            eta = pm.Normal("eta_county", 0.0, s_county, shape=data.n_units[1])
            k_per_root = np.bincount(county_root, minlength=n_root).astype(np.float64)
            eta_c = eta - (_segment_sum(eta, county_root, n_root) / k_per_root)[county_root]
            profile = pm.Dirichlet("profile", np.ones((n_root, C)))
            mean = eta_c[county][:, None] + pt.log(profile)[root]
            logx = pm.Normal("log_rate", mean, s_tract, shape=(n_leaf, C))
        else:
            g = pm.Exponential("g", 1.0, shape=(n_leaf, C))
            logx = pt.log(g)
        top = pt.max(logx)
        lse = top + pt.log(_segment_sum(pt.sum(pt.exp(logx - top), axis=1), root, n_root))
        mass_u = data.totals + 0.5 * data.cells_per_root
        counts = pm.Deterministic("counts", mass_u[root][:, None] * pt.exp(logx - lse[root][:, None]) - 0.5)
        tabs = [counts]
        for lev in range(len(data.n_units) - 2, -1, -1):
            tabs.insert(0, _segment_sum(tabs[0], np.asarray(data.parents[lev]), data.n_units[lev]))
        flat = pt.concatenate([pt.concatenate([t.sum(axis=1, keepdims=True), t], axis=1).ravel() for t in tabs])
        loc = flat[np.asarray(data.index)]
        law = NOISE_LAWS["discrete_gaussian"]
        pm.Potential("measurements", pt.sum(law.logpdf(get_backend("pytensor"), data.y, loc, data.sigma)))
    return m
