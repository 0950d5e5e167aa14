r"""The hierarchy in PyMC: :func:`pymc_counts` (the model part) and :func:`pymc_model` (the whole default model).

The same priors, allocation and likelihood as :func:`noiseaware.hierarchy.model` and
:func:`noiseaware.hierarchy.numpyro_counts`, term for term.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import owned
from ._data import PRIORS, as_model_data

__all__ = ["pymc_counts", "pymc_model"]


def _segment_sum(values: Any, index: np.ndarray, n: int) -> Any:
    """Sums of the rows of ``values`` by ``index`` (an advanced increment, which accumulates repeated indices)."""
    import pytensor.tensor as pt

    shape = (n,) if values.ndim == 1 else (n, values.shape[1])
    return pt.inc_subtensor(pt.zeros(shape)[index], values)


@owned("hierarchy.pymc_counts")
def pymc_counts(data: Any, log_rate: Any) -> Any:
    r"""The hierarchy as a part of a user's PyMC model: leaf cell counts from log-rates, and the measurements.

    Call it inside a ``with pm.Model():`` block with the log-rates of the leaf cells, however the
    model makes them (regressed on tract covariates, with priors of one's own). It allocates each
    root unit's exact total :math:`T_s` to its :math:`K_s` leaf cells in proportion to
    :math:`\lambda_{tc} = e^{\texttt{log\_rate}[t, c]}`, with the continuity correction of
    :func:`noiseaware.hierarchy.model`,

    .. math:: x_{tc} = \big(T_s + K_s/2\big)\, \frac{\lambda_{tc}}{\sum_{t' \in s, c'} \lambda_{t'c'}} - \frac12,

    adds them as the ``pm.Deterministic`` ``counts`` (every draw meets the exact totals), and
    observes every noisy measurement as the variable ``measurements`` (shape ``(measurements,)``, in
    ``data.y``'s order): a :class:`noiseaware.pymc.DiscreteGaussian` around the unit's count of
    the query, its log-pmf the noise-law registry's, evaluated at the real counts (the relaxation
    of :func:`noiseaware.hierarchy.model`). Being an observed variable, it gives
    ``pm.compute_log_likelihood`` one term per released measurement (``az.loo``), and
    ``pm.sample_posterior_predictive`` draws noisy measurements (around the counts truncated toward
    zero to integers, as the class draws for a real ``loc``). Only the log-rates' differences
    within a root unit matter: the model's prior must pin a common shift of a root unit's
    log-rates (an intercept with a proper prior does).

    The log-sum-exp over each root unit subtracts one maximum over all leaf cells (PyTensor has no
    segment maximum): a root unit whose log-rates all lie more than about 700 below the largest
    would underflow.

    Parameters
    ----------
    data : ModelData or NoisyHierarchy
        From :func:`noiseaware.hierarchy.model_data`, or the release itself.
    log_rate : tensor_like, shape (leaves, cells)
        The log of each leaf cell's rate, leaves in the order of the release's finest level.

    Returns
    -------
    pytensor.tensor.TensorVariable, shape (leaves, cells)
        The leaf cell counts (the Deterministic ``counts``).

    Raises
    ------
    NoiseawareValueError
        If ``log_rate`` does not have the static shape ``(leaves, cells)`` (where its shape is known),
        or the release's root totals are not exact.
    NoiseawareTypeError
        If ``data`` is neither a ``ModelData`` nor a ``NoisyHierarchy``.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from noiseaware import hierarchy
    >>> sim = hierarchy.synthetic_nmf(1, 2, 2, rng=0)
    >>> data = hierarchy.model_data(sim.release)
    >>> x = np.log1p(sim.truth.sum(axis=1))  # a tract covariate
    >>> with pm.Model() as m:
    ...     a = pm.Normal("a", 0.0, 2.0, shape=data.n_cells)
    ...     b = pm.Normal("b", 0.0, 1.0)
    ...     z = pm.Normal("z", 0.0, 1.0, shape=(data.n_units[-1], data.n_cells))
    ...     counts = hierarchy.pymc_counts(data, a + b * x[:, None] + 0.3 * z)
    >>> sorted(v.name for v in m.deterministics), [v.name for v in m.observed_RVs]
    (['counts'], ['measurements'])
    """
    import pymc as pm
    import pytensor.tensor as pt

    from ..pymc import DiscreteGaussian

    data = as_model_data(data)
    n_leaf, n_root, C = data.n_units[-1], data.n_units[0], data.n_cells
    logx = pt.as_tensor_variable(log_rate)
    static = tuple(logx.type.shape)
    if logx.ndim != 2 or any(s is not None and s != want for s, want in zip(static, (n_leaf, C), strict=True)):
        v.refuse("log_rate", f"must have shape ({n_leaf}, {C}) (leaves, cells)", static,
               "Give one log-rate per leaf cell of the release.")
    root = np.asarray(data.leaf_root)
    top = pt.max(logx)
    lse = top + pt.log(_segment_sum(pt.sum(pt.exp(logx - top), axis=1), root, n_root))
    mass_u = data.totals + 0.5 * data.cells_per_root
    counts = pm.Deterministic("counts", mass_u[root][:, None] * pt.exp(logx - lse[root][:, None]) - 0.5)
    tabs = [counts]
    for lev in range(len(data.n_units) - 2, -1, -1):
        tabs.insert(0, _segment_sum(tabs[0], np.asarray(data.parents[lev]), data.n_units[lev]))
    flat = pt.concatenate([pt.concatenate([t.sum(axis=1, keepdims=True), t], axis=1).ravel() for t in tabs])
    loc = flat[np.asarray(data.index)]
    DiscreteGaussian("measurements", loc=loc, sigma=data.sigma, observed=data.y)
    return counts


@owned("hierarchy.pymc_model")
def pymc_model(data: Any, prior: str = "hierarchical") -> Any:
    r"""A ``pm.Model`` of the leaf cell counts given a hierarchy release (the PyMC form of ``hierarchy.model``).

    The model of :func:`noiseaware.hierarchy.model` term for term: the ``"hierarchical"`` prior
    (``sigma_county``, ``sigma_tract``, ``eta_county``, ``profile``, and the leaf cells' log-rates
    ``log_rate``, shape ``(leaves, cells)``) or the ``"uniform"`` one (``g``), then
    :func:`pymc_counts` (the Deterministic ``counts`` and the observed ``measurements``).
    ``hierarchy.fit(release, backend="pymc")`` samples it.

    Parameters
    ----------
    data : NoisyHierarchy or ModelData
        The release (with exact root totals) or :func:`~noiseaware.hierarchy.model_data` of it.
    prior : {"hierarchical", "uniform"}
        As in :func:`~noiseaware.hierarchy.model`; the hierarchical prior needs three levels or more.

    Returns
    -------
    pymc.Model

    Raises
    ------
    NoiseawareValueError
        An unknown prior, root totals not exact, or fewer than three levels for the hierarchical prior.
    NoiseawareTypeError
        If ``data`` is neither a ``NoisyHierarchy`` nor a ``ModelData``.

    Examples
    --------
    >>> import pymc as pm
    >>> from noiseaware import hierarchy
    >>> m = hierarchy.pymc_model(hierarchy.synthetic_nmf(1, 2, 2, rng=0).release)
    >>> [v.name for v in m.free_RVs]
    ['sigma_county', 'sigma_tract', 'eta_county', 'profile', 'log_rate']
    >>> with m:  # doctest: +SKIP
    ...     idata = pm.sample()
    ...     pm.compute_log_likelihood(idata)  # one term per released measurement
    """
    import pymc as pm
    import pytensor.tensor as pt

    v.choice("prior", prior, PRIORS)
    data = as_model_data(data)
    if len(data.n_units) < 3 and prior == "hierarchical":
        v.refuse("data", "must have three levels or more for the hierarchical prior", len(data.n_units),
               "Use prior='uniform'.")
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
        pymc_counts(data, logx)
    return m
