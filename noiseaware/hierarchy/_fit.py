r"""A noise-aware posterior of the true counts of a hierarchy, with the invariants exact in every draw."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from .. import _validation as v
from .._engine import (
    MixingBlock,
    check_settings,
    finish_fit,
    group,
    numpyro_nuts,
    pymc_cores,
    pymc_sample,
    set_group,
)
from .._engine._x64 import float64
from .._validation import owned
from ._data import PRIORS, ModelData, as_model_data, model_data
from ._record import NoisyHierarchy
from ._rounding import onto_totals, round_to_totals

__all__ = [
    "BACKENDS", "METHODS", "fit", "model", "numpyro_counts",
]

#: The samplers of :func:`fit`.
BACKENDS = ("numpyro", "pymc")
#: The routes of :func:`fit`: the integer model (default) and the continuous relaxation of :func:`model`.
METHODS = ("integer", "relaxed")
#: The sampler block that :func:`fit`'s mixing check names.
_BLOCK = MixingBlock.nuts(
    "NUTS on the relaxed counts of the finest level",
    "counts[u, c] is the true count of cell c in unit u of the finest level.",
)
#: The sampler block of the integer route, as :func:`fit`'s mixing check names it.
_INTEGER_BLOCK = MixingBlock(
    "the integer count sweep (heat-bath transfers of people between leaf cells of a root unit, then NUTS "
    "on the rate model's parameters given the counts when there is one)",
    "Run more draws (and warmup); every draw is a full sweep over the tree, so the integer counts of a "
    "large file mix in about as many sweeps as a small one's.",
    "counts[j] is leaf cell j in row order (leaf, cell).",
)






def model(data: ModelData, y: Any = None, totals: Any = None, *, prior: str = "hierarchical") -> Any:
    r"""The NumPyro model of the true counts given a hierarchy release; every draw meets the exact totals.

    The prior below gives the leaf cells' log-rates, and :func:`numpyro_counts` allocates the exact
    totals in proportion to their rates and adds the measurements' likelihood: ``model`` is
    ``numpyro_counts(data, log_rate(prior), y, totals)``, and returns the counts.

    **Allocation of the exact totals.** With :math:`T_s` the exact total of root unit ``s``,
    :math:`K_s` its number of leaf cells and :math:`\lambda_{tc} > 0` per leaf cell, the leaf cell
    counts are

    .. math:: x_{tc} = \big(T_s + K_s/2\big)\, \frac{\lambda_{tc}}{\sum_{t' \in s, c'} \lambda_{t'c'}} - \frac12,

    so :math:`\sum_{t \in s, c} x_{tc} = T_s` in every draw (up to float rounding, below
    :math:`10^{-12}` relative; :func:`round_to_totals` gives integer draws that meet it exactly).
    The shift by :math:`1/2` is a continuity correction: the real count :math:`x \ge -1/2` stands
    for the integer :math:`n` whose cell :math:`[n - 1/2, n + 1/2)` holds it, so that a count of 0
    has a whole unit of room, as on the integer lattice (without it, a uniform prior on the simplex
    gives :math:`P(x < 1/2)` about 0.26 where uniform integer allocations give
    :math:`P(n = 0) = 0.37`, for 12 people in 8 cells).

    **Priors.** ``"hierarchical"``: :math:`w_t \pi_{tc} = \lambda_{tc}` with
    :math:`\log \lambda_{tc} \sim N(\eta_{k(t)} + \log p_{s(t)c}, \sigma_t^2)`,
    :math:`\eta_k \sim N(0, \sigma_k^2)` (county and tract effects on tract populations, a cell
    profile per root unit :math:`p_s \sim \mathrm{Dirichlet}(1)`,
    :math:`\sigma_k, \sigma_t \sim \mathrm{HalfNormal}(1)`); the site ``log_rate`` is
    :math:`\log\lambda`, shape ``(leaves, cells)``. It is centred, as suits measurements
    that pin the counts (tract counts of tens measured with noise of a few), and has one direction
    per root unit that the counts do not see (a common shift of its :math:`\log\lambda`), pinned by
    the prior; a per-tract softmax of cell logits would add one such direction per tract and
    lengthened NUTS's trajectories several-fold. ``"uniform"``: :math:`g_{tc} \sim \mathrm{Exp}(1)`,
    :math:`\lambda = g`, i.e. :math:`x + 1/2` uniform on its simplex (the test reference's
    prior). The model needs three levels or more; the second
    level (counties) carries the county effects.

    **Likelihood: a continuous relaxation of the discrete Gaussian.** Each noisy measurement is
    :math:`y \sim \mathcal N_{\mathbb Z}(a^\top s, \sigma^2)`, whose pmf
    :math:`e^{-(y - \mu)^2 / (2\sigma^2)} / Z(\sigma)` is evaluated by the noise-law registry
    (``NOISE_LAWS["discrete_gaussian"]``) at real :math:`\mu`: :math:`Z(\sigma)` does not depend on
    :math:`\mu`, so this is the exact likelihood at every integer :math:`\mu` and its smooth
    interpolation between them, and NUTS can move the counts. The relaxation replaces the sum over
    integer counts by an integral; ``tests/hierarchy`` compares it with the exact posterior over
    integer counts by enumeration on a small tree.

    Parameters
    ----------
    data : ModelData
        From :func:`model_data`.
    y, totals : array_like, optional
        Measurements and exact totals replacing ``data.y`` and ``data.totals`` (same shapes), so
        that one compiled program serves every release of one tree (``jit_model_args=True``).
    prior : {"hierarchical", "uniform"}
        See above.

    Returns
    -------
    jax.Array, shape (leaves, cells)
        The leaf cell counts (the deterministic site ``counts``).
    """
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    n_leaf, n_root, C = data.n_units[-1], data.n_units[0], data.n_cells
    root = jnp.asarray(data.leaf_root)
    if prior == "hierarchical":
        county = jnp.asarray(data.ancestor(1))
        s_county = numpyro.sample("sigma_county", dist.HalfNormal(1.0))
        s_tract = numpyro.sample("sigma_tract", dist.HalfNormal(1.0))
        eta = numpyro.sample("eta_county", dist.Normal(0.0, s_county * jnp.ones(data.n_units[1])).to_event(1))
        profile = numpyro.sample("profile", dist.Dirichlet(jnp.ones((n_root, C))).to_event(1))
        # a common shift of a root unit's eta leaves its counts unchanged: centre it within the root unit, so
        # that the log-rates' own shift is pinned by their prior at sigma_tract / sqrt(cells of the root unit)
        county_root = jnp.asarray(data.county_root())
        k_per_root = jax.ops.segment_sum(jnp.ones_like(eta), county_root, num_segments=n_root)
        eta_c = eta - (jax.ops.segment_sum(eta, county_root, num_segments=n_root) / k_per_root)[county_root]
        mean = eta_c[county][:, None] + jnp.log(profile)[root]
        logx = numpyro.sample("log_rate", dist.Normal(mean, s_tract * jnp.ones((n_leaf, C))).to_event(2))
    else:
        g = numpyro.sample("g", dist.Exponential(jnp.ones((n_leaf, C))).to_event(2))
        logx = jnp.log(g)
    return numpyro_counts(data, logx, y, totals)


@owned("hierarchy.numpyro_counts")
def numpyro_counts(data: ModelData | NoisyHierarchy, log_rate: Any, y: Any = None, totals: Any = None) -> Any:
    r"""The hierarchy as a part of a user's NumPyro model: leaf cell counts from log-rates, and the measurements.

    Call it inside a NumPyro model with the log-rates of the leaf cells, however the model makes
    them (regressed on tract covariates, with priors of one's own). It allocates each root unit's
    exact total :math:`T_s` to its :math:`K_s` leaf cells in proportion to
    :math:`\lambda_{tc} = e^{\texttt{log\_rate}[t, c]}`, with the continuity correction of
    :func:`model`,

    .. math:: x_{tc} = \big(T_s + K_s/2\big)\, \frac{\lambda_{tc}}{\sum_{t' \in s, c'} \lambda_{t'c'}} - \frac12,

    registers them as the deterministic site ``counts`` (every draw meets the exact totals), and
    observes every noisy measurement at the site ``measurements`` (shape ``(measurements,)``, in
    ``data.y``'s order) through the discrete Gaussian of the noise-law registry
    (:class:`noiseaware.numpyro.DiscreteGaussian`'s log-pmf, evaluated at the real counts: the
    relaxation of :func:`model`). The site is observed, so ``numpyro.infer.log_likelihood`` and
    ``az.from_numpyro(mcmc, log_likelihood=True)`` give one term per released measurement
    (``az.loo``). Only the log-rates' differences within a root unit matter: a common shift of a
    root unit's log-rates leaves its counts unchanged, so the model's prior must pin it (an
    intercept with a proper prior does).

    Parameters
    ----------
    data : ModelData or NoisyHierarchy
        From :func:`model_data` (or the release itself, read by :func:`model_data` at each call).
    log_rate : array_like, shape (leaves, cells)
        The log of each leaf cell's rate :math:`\lambda_{tc}` (finite), the leaves in the release's
        order of its finest level. The same site name and shape as the integer route's user model.
    y, totals : array_like, optional
        Measurements and exact totals replacing ``data.y`` and ``data.totals`` (as in :func:`model`).

    Returns
    -------
    jax.Array, shape (leaves, cells)
        The leaf cell counts (real, each at least :math:`-1/2`), also the site ``counts``.

    Raises
    ------
    NoiseawareValueError
        If ``log_rate`` does not have the shape ``(leaves, cells)``, or the release's root totals
        are not exact.
    NoiseawareTypeError
        If ``data`` is neither a :class:`ModelData` nor a :class:`NoisyHierarchy`.

    Examples
    --------
    A covariate slope on the tract log-rates (``x`` one number per tract):

    >>> import jax, jax.numpy as jnp, numpy as np, numpyro, numpyro.distributions as dist
    >>> from numpyro.infer import MCMC, NUTS
    >>> from noiseaware import config, hierarchy
    >>> sim = hierarchy.synthetic_nmf(1, 2, 2, rng=0)
    >>> data = hierarchy.model_data(sim.release)
    >>> x = np.log1p(sim.truth.sum(axis=1))  # a tract covariate
    >>> def my_model():
    ...     a = numpyro.sample("a", dist.Normal(0.0, 2.0).expand([data.n_cells]).to_event(1))
    ...     b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    ...     z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([data.n_units[-1], data.n_cells]).to_event(2))
    ...     log_rate = numpyro.deterministic("log_rate", a + b * x[:, None] + 0.3 * z)
    ...     return hierarchy.numpyro_counts(data, log_rate)
    >>> config.configure()  # doctest: +SKIP
    >>> mcmc = MCMC(NUTS(my_model), num_warmup=200, num_samples=200)  # doctest: +SKIP
    >>> mcmc.run(jax.random.PRNGKey(0))  # doctest: +SKIP

    (Skipped in the doctest run: compiling NUTS takes seconds; ``tests/hierarchy/test_model_part.py``
    runs it.)
    """
    import jax
    import jax.numpy as jnp
    import numpyro

    from ..numpyro import DiscreteGaussian

    data = as_model_data(data)
    n_leaf, n_root, C = data.n_units[-1], data.n_units[0], data.n_cells
    logx = jnp.asarray(log_rate)
    if logx.shape != (n_leaf, C):
        v.refuse("log_rate", f"must have shape ({n_leaf}, {C}) (leaves, cells)",
               logx.shape, "Give one log-rate per leaf cell of the release.")
    y = jnp.asarray(data.y if y is None else y)
    totals = jnp.asarray(data.totals if totals is None else totals)
    root = jnp.asarray(data.leaf_root)
    # the share of each leaf cell in its root unit, by a segment log-sum-exp
    top = jax.ops.segment_max(jnp.max(logx, axis=1), root, num_segments=n_root)
    mass = jax.ops.segment_sum(jnp.sum(jnp.exp(logx - top[root][:, None]), axis=1), root, num_segments=n_root)
    lse = top + jnp.log(mass)
    # continuity correction: u = x + 1/2 >= 0 allocates T_s + (leaf cells of s) / 2, so that sum(x) = T_s
    mass_u = totals + 0.5 * jnp.asarray(data.cells_per_root)
    counts = numpyro.deterministic("counts", mass_u[root][:, None] * jnp.exp(logx - lse[root][:, None]) - 0.5)
    tables = _tables(data, counts)
    loc = jnp.concatenate([t.ravel() for t in tables])[jnp.asarray(data.index)]
    # real loc: the relaxation (the pmf's smooth interpolation between integers), so no integer check on loc
    numpyro.sample("measurements", DiscreteGaussian(loc, jnp.asarray(data.sigma), validate_args=False), obs=y)
    return counts




def _tables(data: ModelData, counts: Any) -> list[Any]:
    """Every level's ``(units, 1 + cells)`` table of true counts (total first) from the leaf cells, in JAX."""
    import jax
    import jax.numpy as jnp

    tabs = [counts]
    for lev in range(len(data.n_units) - 2, -1, -1):
        tabs.insert(0, jax.ops.segment_sum(tabs[0], jnp.asarray(data.parents[lev]), num_segments=data.n_units[lev]))
    return [jnp.concatenate([t.sum(axis=1, keepdims=True), t], axis=1) for t in tabs]












#: :func:`model`, under a name that :func:`fit`'s ``model`` argument does not hide.
_relaxed_model = model


@float64
@owned("hierarchy.fit")
def fit(
    release: NoisyHierarchy,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    method: str = "integer",
    prior: str = "hierarchical",
    model: Callable[[], Any] | None = None,
    sweeps: int = 1,
    backend: str = "numpyro",
    cores: int | None = None,
) -> Any:
    r"""Posterior of the true leaf cell counts of a hierarchy release, every draw meeting the exact totals.

    ``method="integer"`` (the default) samples the integer model itself: non-negative integer leaf
    cell counts, each root unit's summing to its exact total, a prior on them, and the exact
    discrete Gaussian likelihood of every noisy measurement (the noise-law registry's log-pmf at
    integers). Heat-bath moves along lines that keep the totals transfer people between leaf cells of
    one root unit, many at once on disjoint parts of the tree, so every draw meets the totals by
    construction; with a prior on rates, NUTS updates the rates' parameters given the counts in between
    (a Gibbs sampler). See ``docs/published-hierarchy.md`` for the moves and how they mix.
    ``method="relaxed"`` is the continuous relaxation of :func:`model` (NUTS on real counts, then
    :func:`round_to_totals`): an approximation, good for counts of tens and more and off for small
    counts (a cell's posterior mean 0.12 against 0.21 on a tree of 14 people).

    Parameters
    ----------
    release : NoisyHierarchy
        With the root level's totals published exactly.
    chains : int
        Number of chains (default 4).
    draws : int
        Kept draws per chain (default 1000).
    warmup : int
        Warmup (tuning) iterations per chain, run before the kept draws (default 1000).
    seed : int, optional
        Random seed; drawn from the operating system when omitted. The seed used is recorded in
        ``noiseaware.results.settings(result).seed`` and ``result.attrs["noiseaware_seed"]``, so
        that any run can be repeated.
    progressbar : bool
        Show the sampler's progress bar (default False).
    target_accept : float, optional
        Target acceptance probability, in (0, 1), of NUTS's step size adapted during warmup; default
        (None) 0.8 (``NUTS_TARGET_ACCEPT``, the default of Stan, PyMC and NumPyro).
    check_mixing : bool
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when a leaf cell count of ``counts``
        has bulk ESS below 100 per chain or R-hat above 1.01 (default True).
    method : {"integer", "relaxed"}
        The integer model (default) or the continuous relaxation (:func:`model`; ``backend="pymc"``
        needs it).
    prior : {"hierarchical", "dirichlet_multinomial", "uniform"}
        ``"hierarchical"``: counts multinomial given rates per root unit,
        :math:`n_s \mid \lambda \sim \mathrm{Multinomial}(T_s, \lambda_s / \sum\lambda_s)`, with
        the hierarchical prior of :func:`model` on :math:`\log\lambda` (county and tract effects, a
        cell profile per root unit; three levels or more). ``"dirichlet_multinomial"``
        (``method="integer"`` only; three levels or more): the same hierarchy with gamma tract rates
        integrated out, tract populations and each tract's cells nested Dirichlet-multinomials given
        county effects, two concentrations and a cell profile per root unit (posterior variables
        ``nu``, ``kappa``, ``eta_county``, ``sigma_county``, ``profile``); a few continuous parameters
        in place of one log-rate per leaf cell, so it mixes and costs far less at scale
        (``docs/published-hierarchy.md``). ``"uniform"``: uniform over the integer
        compositions of each root total into its leaf cells (``method="relaxed"``: uniform on the
        simplex, :func:`model`).
    model : callable, optional
        ``method="integer"`` only: a NumPyro model, called with no arguments, that samples (or
        computes as ``numpyro.deterministic``) the site ``log_rate`` of shape ``(leaves, cells)``,
        the leaves in the release's order. It replaces ``prior``: the counts are multinomial given
        ``exp(log_rate)`` per root unit, and its parameters are sampled by NUTS given the counts.
        Regress the rates on covariates, or put priors of your own on them. Its continuous sites
        join the posterior.
    sweeps : int
        ``method="integer"`` only: count sweeps per iteration (default 1), each a pass of moves over
        the whole tree; a kept draw every ``sweeps`` sweeps (thinning: for a large file, more
        effective draws per stored draw, and fewer NUTS steps of the rate model per sweep).
    backend : {"numpyro", "pymc"}
        With ``method="relaxed"``: NumPyro NUTS (chains vectorized; :func:`model`) or PyMC NUTS (the
        same model in PyMC). The integer route runs in JAX (NumPyro for its NUTS step).
    cores : int, optional
        ``backend="pymc"`` with PyMC's own NUTS only: worker processes for the chains. Default
        (None): one per chain up to the CPU count, or 1 (chains in sequence, in-process) when JAX is
        already loaded, since forking a process with JAX's threads running can deadlock. Refused
        with ``backend="numpyro"``.

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        The host stack's result: returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData
        under ArviZ 0.x), as ``pm.sample`` does. Integer route: posterior variable ``counts``
        (int64, dims ``(chain, draw, leaf, cell)``, coordinates the release's finest units and its
        cell queries), meeting the exact totals in every draw, plus the rate model's sites
        (``log_rate`` with dims ``(leaf, cell)``); ``sample_stats``: ``accept_rate`` (the mean
        probability that a count move leaves its current point, per sweep), and with rates ``diverging`` and ``n_steps``
        of the NUTS step. Relaxed route: ``counts`` (the relaxed, real leaf cell counts, same dims)
        and ``integer_counts`` (their integers of :func:`round_to_totals`), both meeting the exact
        totals in every draw, plus the prior's own variables. Group
        ``log_likelihood``: ``measurements``, the log-likelihood of each released noisy measurement
        given each draw's ``counts`` (dims ``(chain, draw, measurement)``, labelled
        ``level/unit/query``; :func:`pointwise_log_likelihood`), so ``az.loo(fit)`` and
        ``az.compare`` leave out one measurement at a time, conditional on the latent counts
        (``docs/published-hierarchy.md``); group ``observed_data``: the measurements. ``attrs``: the
        sampler settings (:func:`noiseaware.results.settings`), ``noiseaware_result =
        "hierarchy.fit"``, ``noiseaware_default_var = "counts"``, ``noiseaware_method``,
        ``noiseaware_prior`` (``"model"`` for a user's model), ``noiseaware_backend``,
        ``noiseaware_provenance`` (the release's) and, on the integer route,
        ``noiseaware_programs_compiled`` (0 when a file of the same shape was fitted before in this
        process: its compiled sampler is reused).
        Pooled draws: ``noiseaware.results.draws(fit)``, shape ``(chains * draws, leaves, cells)``.

    Raises
    ------
    NoiseawareValueError, NoiseawareTypeError
        Not a hierarchy release, root totals not exact, bad sampler settings, ``model`` without
        ``method="integer"`` or without a ``log_rate`` site of shape ``(leaves, cells)``, or
        ``backend="pymc"`` with ``method="integer"``.

    Examples
    --------
    >>> from noiseaware import hierarchy, results
    >>> sim = hierarchy.synthetic_nmf(1, 2, 2, rng=0)
    >>> res = hierarchy.fit(sim.release, prior="uniform", chains=2, draws=200, warmup=200, seed=1,
    ...                     check_mixing=False)
    >>> draws = results.draws(res)  # counts: (400, tracts, cells), int64
    >>> bool((draws.sum(axis=(1, 2)) == sim.release.values[0][0, 0]).all())
    True

    A model of one's own for the rates: here a slope on a tract covariate ``x`` (4 tracts, 3 cells).

    >>> import numpy as np, numpyro, numpyro.distributions as dist
    >>> x = np.linspace(-1.0, 1.0, 4)
    >>> def my_rates():
    ...     a = numpyro.sample("a", dist.Normal(0.0, 1.0).expand([3]).to_event(1))
    ...     b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    ...     numpyro.sample("log_rate", dist.Normal(a + b * x[:, None], 0.5).to_event(2))
    >>> res = hierarchy.fit(sim.release, model=my_rates, chains=2, draws=200, warmup=200, seed=1,
    ...                     check_mixing=False)  # doctest: +SKIP
    >>> sorted(results.draws(res, "b").shape)  # doctest: +SKIP
    [400]

    (The second is skipped in the doctest run: compiling the NUTS step takes tens of seconds;
    ``tests/hierarchy/test_integer.py`` runs it.)
    """
    owner = "hierarchy.fit"
    st = check_settings(
        chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing,
    )
    v.choice("method", method, METHODS)
    from ._integer import INTEGER_PRIORS

    v.choice("prior", prior, (*PRIORS, *INTEGER_PRIORS))
    if prior in INTEGER_PRIORS and method != "integer":
        v.refuse("prior", f"must be one of {PRIORS} with method='relaxed' (the relaxation has no {prior!r} form)",
                 prior, "Pass method='integer' (the default).")
    v.choice("backend", backend, BACKENDS)
    if method == "integer" and backend != "numpyro":
        v.refuse("backend", "must be 'numpyro' with method='integer' (the integer sampler runs in JAX)",
               backend, "Pass method='relaxed' for PyMC's NUTS on the relaxation.")
    if model is not None and (method != "integer" or not callable(model)):
        v.refuse("model", "must be a callable NumPyro model, with method='integer'", (method, model),
               "Pass method='integer' (the default) and a model function that samples 'log_rate'.")
    sweeps = v.integer("sweeps", sweeps, minimum=1)
    if sweeps != 1 and method != "integer":
        v.refuse("sweeps", "must be 1 with method='relaxed' (it counts the integer route's sweeps)", sweeps)
    cores = pymc_cores(backend, cores)
    data = model_data(release)
    if len(data.n_units) < 3 and prior != "uniform" and model is None:
        v.refuse("release", "must have three levels or more for the hierarchical prior", len(data.n_units),
               "Use prior='uniform', or a model= of your own.")
    block = _BLOCK
    if method == "integer":
        from ._integer import integer_fit

        idata = integer_fit(release, data, st, prior, model, sweeps)
        block = _INTEGER_BLOCK
    elif backend == "numpyro":
        # the measurements and totals are the model's arguments; the tree shapes the program, so a later
        # release of the same tree (another year, another noise draw) compiles nothing
        key = ("hierarchy", prior, data.n_units, tuple(p.tobytes() for p in data.parents), data.leaf_root.tobytes(),
               data.n_cells, data.index.tobytes(), data.sigma.tobytes())
        idata = numpyro_nuts(partial(_relaxed_model, data, prior=prior), st, data=(data.y, data.totals), cache_key=key)
    else:
        from ._pymc import pymc_model

        with pymc_model(data, prior):
            idata = pymc_sample(st, cores=cores, compute_convergence_checks=False)
    if method == "relaxed":
        post = group(idata, "posterior")
        dims = post["counts"].dims
        post = post.rename({dims[2]: "leaf", dims[3]: "cell"}).assign_coords(
            leaf=list(release.units[-1]), cell=list(release.queries[1:])
        )
        integer = round_to_totals(onto_totals(np.asarray(post["counts"]), data.leaf_root, release.root_totals()),
                                  data.leaf_root, release.root_totals())
        post["integer_counts"] = (post["counts"].dims, integer)
        set_group(idata, "posterior", post)
    _add_log_likelihood(idata, release, data, group(idata, "posterior")["counts"])
    attrs = {"noiseaware_method": method, "noiseaware_prior": "model" if model is not None else prior,
             "noiseaware_backend": backend, "noiseaware_provenance": release.provenance}
    return finish_fit(owner, idata, st, check=["counts"], block=block, default_var="counts", attrs=attrs)




def _add_log_likelihood(idata: Any, release: NoisyHierarchy, data: ModelData, counts: Any) -> None:
    """Put the pointwise log-likelihood of the count draws and the measurements into ``idata``, in place.

    ``log_likelihood["measurements"]`` (dims ``chain, draw, measurement``) from
    :func:`~._loglik.pointwise_log_likelihood` of ``counts`` (real or integer draws), and
    ``observed_data["measurements"]``, both labelled ``level/unit/query`` with the ``level``,
    ``unit`` and ``query`` of each measurement as coordinates.
    """
    import xarray as xr

    from ._loglik import measurement_labels, pointwise_log_likelihood

    labels = measurement_labels(release, data)
    coords = {name: ("measurement", val) for name, val in labels.items()}
    ll = pointwise_log_likelihood(data, np.asarray(counts))
    dims = (*counts.dims[:2], "measurement")
    ds = xr.Dataset({"measurements": (dims, ll)},
                    coords={**{d: counts.coords[d] for d in counts.dims[:2] if d in counts.coords}, **coords})
    set_group(idata, "log_likelihood", ds)
    set_group(idata, "observed_data", xr.Dataset({"measurements": (("measurement",), data.y)}, coords=coords))

