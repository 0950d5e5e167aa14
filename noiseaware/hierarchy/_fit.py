r"""A noise-aware posterior of the true counts of a hierarchy, with the invariants exact in every draw."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Unpack

import numpy as np

from .. import _validation as v
from .._engine import (
    MixingBlock,
    SamplingOptions,
    check_settings,
    finish_fit,
    group,
    numpyro_nuts,
    pymc_cores,
    pymc_sample,
    sampling_keywords,
    set_group,
)
from .._engine._x64 import float64
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ._record import NoisyHierarchy

__all__ = ["BACKENDS", "PRIORS", "ModelData", "fit", "model", "model_data", "round_to_totals"]

#: The priors of :func:`model`: ``"hierarchical"`` (county and tract effects on tract populations,
#: a cell profile per state) and ``"uniform"`` (uniform over the simplex of each state's cells).
PRIORS = ("hierarchical", "uniform")
#: The samplers of :func:`fit`.
BACKENDS = ("numpyro", "pymc")
#: The sampler block that :func:`fit`'s mixing check names.
_BLOCK = MixingBlock.nuts(
    "NUTS on the relaxed counts of the finest level",
    "counts[u, c] is the true count of cell c in unit u of the finest level.",
)


@dataclass(frozen=True, eq=False)
class ModelData:
    r"""What :func:`model` reads from a release: the tree as index arrays and the measurements.

    Attributes
    ----------
    n_units : tuple of int
        Units per level (three levels or more; the root level carries the exact totals).
    parents : tuple of numpy.ndarray
        The release's parent indices.
    leaf_root : numpy.ndarray
        For each leaf, its root-level ancestor.
    n_cells : int
        Cells per unit.
    index : numpy.ndarray
        Flat positions of the noisy measurements in the concatenation of every level's
        ``(units, 1 + cells)`` table, C order.
    y, sigma : numpy.ndarray
        The noisy measurements and their discrete Gaussian :math:`\sigma`, in ``index`` order.
    totals : numpy.ndarray
        The root-level exact totals (float64).
    """

    n_units: tuple[int, ...]
    parents: tuple[np.ndarray, ...]
    leaf_root: np.ndarray
    n_cells: int
    index: np.ndarray
    y: np.ndarray
    sigma: np.ndarray
    totals: np.ndarray

    def ancestor(self, level: int) -> np.ndarray:
        """For each leaf, the index of its ancestor at ``level``."""
        idx = np.arange(self.n_units[-1])
        for p in reversed(self.parents[level:]):
            idx = p[idx]
        return idx

    def county_root(self) -> np.ndarray:
        """For each unit of level 1 (counties), the index of its root-level ancestor."""
        return np.asarray(self.parents[0])

    @property
    def cells_per_root(self) -> np.ndarray:
        """Leaf cells below each root unit."""
        return np.bincount(self.leaf_root, minlength=self.n_units[0]) * self.n_cells


def model_data(release: NoisyHierarchy) -> ModelData:
    """Read a release for :func:`model`; the root level's totals must be published exactly.

    Raises
    ------
    NoiseawareTypeError
        If ``release`` is not a :class:`NoisyHierarchy`.
    NoiseawareValueError
        If the root totals are not invariants (the posterior allocates them exactly).
    """
    if not isinstance(release, NoisyHierarchy):
        raise NoiseawareTypeError(f"hierarchy.fit: release must be a NoisyHierarchy; got {type(release).__name__}.")
    totals = release.root_totals()
    if totals is None:
        v.fail("hierarchy.fit", "release", "must publish the root level's totals exactly (variance 0)",
               release.variance[0].tolist(), "The posterior allocates these exact totals down the tree.")
    assert totals is not None  # for the type checker: v.fail raised otherwise
    mask = np.concatenate([np.broadcast_to(release.variance[lev] > 0, x.shape).ravel()
                           for lev, x in enumerate(release.values)])
    flat_y = np.concatenate([x.ravel() for x in release.values]).astype(np.float64)
    flat_s = np.concatenate([np.broadcast_to(release.sigma()[lev], x.shape).ravel()
                             for lev, x in enumerate(release.values)])
    index = np.flatnonzero(mask)
    return ModelData(
        n_units=tuple(len(u) for u in release.units), parents=release.parents, leaf_root=release.leaf_parents,
        n_cells=release.n_cells, index=index, y=flat_y[index], sigma=flat_s[index],
        totals=totals.astype(np.float64),
    )


def model(data: ModelData, y: Any = None, totals: Any = None, *, prior: str = "hierarchical") -> None:
    r"""The NumPyro model of the true counts given a hierarchy release; every draw meets the exact totals.

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
    :math:`\sigma_k, \sigma_t \sim \mathrm{HalfNormal}(1)`). It is centred, as suits measurements
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
    """
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    from .._core._backend import get_backend
    from .._core._noise import NOISE_LAWS

    y = jnp.asarray(data.y if y is None else y)
    totals = jnp.asarray(data.totals if totals is None else totals)
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
    # the share of each leaf cell in its root unit, by a segment log-sum-exp
    top = jax.ops.segment_max(jnp.max(logx, axis=1), root, num_segments=n_root)
    mass = jax.ops.segment_sum(jnp.sum(jnp.exp(logx - top[root][:, None]), axis=1), root, num_segments=n_root)
    lse = top + jnp.log(mass)
    # continuity correction: u = x + 1/2 >= 0 allocates T_s + (leaf cells of s) / 2, so that sum(x) = T_s
    mass_u = totals + 0.5 * jnp.asarray(data.cells_per_root)
    counts = numpyro.deterministic("counts", mass_u[root][:, None] * jnp.exp(logx - lse[root][:, None]) - 0.5)
    tables = _tables(data, counts)
    loc = jnp.concatenate([t.ravel() for t in tables])[jnp.asarray(data.index)]
    law = NOISE_LAWS["discrete_gaussian"]
    numpyro.factor("measurements", jnp.sum(law.logpdf(get_backend("jax"), y, loc, jnp.asarray(data.sigma))))


def _tables(data: ModelData, counts: Any) -> list[Any]:
    """Every level's ``(units, 1 + cells)`` table of true counts (total first) from the leaf cells, in JAX."""
    import jax
    import jax.numpy as jnp

    tabs = [counts]
    for lev in range(len(data.n_units) - 2, -1, -1):
        tabs.insert(0, jax.ops.segment_sum(tabs[0], jnp.asarray(data.parents[lev]), num_segments=data.n_units[lev]))
    return [jnp.concatenate([t.sum(axis=1, keepdims=True), t], axis=1) for t in tabs]


#: Relative tolerance of :func:`round_to_totals` on a group's real sum: a draw of :func:`model` meets
#: its total to about 1e-12 relative (float rounding), far inside it.
_SUM_RTOL = 1e-9
#: Tolerance below -1/2 of a draw's cells (float rounding of ``u - 1/2`` with ``u >= 0``).
_FLOOR_ATOL = 1e-9


def _ranks(key: np.ndarray) -> np.ndarray:
    """Per row, each entry's rank in ascending order of ``key`` (ties by position)."""
    order = np.argsort(key, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(key.shape[1])[None, :], axis=1)
    return ranks


def _project(x: np.ndarray, total: int) -> np.ndarray:
    r"""Each row of ``x`` projected onto the simplex :math:`\{q \ge 0, \sum q = T\}`: :math:`q = \max(x - \tau, 0)`.

    The Euclidean projection (Duchi, Shalev-Shwartz, Singer & Chandra 2008, "Efficient projections onto
    the l1-ball for learning in high dimensions", Figure 1): with :math:`u` the row sorted in decreasing
    order, :math:`\tau = (\sum_{j \le \rho} u_j - T)/\rho` for the largest :math:`\rho` with
    :math:`u_\rho > (\sum_{j \le \rho} u_j - T)/\rho`. ``total`` > 0.
    """
    u = -np.sort(-x, axis=1)
    css = np.cumsum(u, axis=1) - total
    ind = np.arange(1, x.shape[1] + 1)
    rho = np.count_nonzero(u * ind > css, axis=1)  # the condition holds for a prefix of j = 1..rho
    tau = np.take_along_axis(css, (rho - 1)[:, None], axis=1) / rho[:, None]
    return np.maximum(x - tau, 0.0)


def _apportion(quota: np.ndarray, totals: np.ndarray) -> np.ndarray:
    r"""Hamilton's largest-remainder apportionment of each row's integer total over its non-negative quotas.

    Each row's integers are the floors of its quotas plus one unit for the cells of largest remainder
    until the row sums to its total. Float rounding can leave a row's quotas off their total by more
    than a cell's worth (totals beyond ``2**53``), so units are added (``D // K`` to every cell, then one
    to the ``D % K`` largest remainders) or taken (from the positive cells of smallest remainder, as many
    rounds as needed) until every row meets its total exactly; no count goes below 0.
    """
    floor = np.floor(quota)
    out = floor.astype(np.int64)
    rem = quota - floor
    k = out.shape[1]
    short = totals - out.sum(axis=1)
    while np.any(short != 0):
        up = short > 0
        if np.any(up):
            rank = _ranks(-rem[up])
            d = short[up][:, None]
            add = d // k + (rank < d % k)
            out[up] += add
            rem[up] -= add
        down = short < 0
        if np.any(down):
            have = out[down] > 0
            rank = _ranks(np.where(have, rem[down], np.inf))
            n_have = have.sum(axis=1, keepdims=True)  # >= 1: the row sums above its total >= 0
            need = -short[down][:, None]
            take = np.minimum(out[down], need // n_have + (rank < need % n_have)) * have
            out[down] -= take
            rem[down] += take
        short = totals - out.sum(axis=1)
    return out


def round_to_totals(counts: Any, groups: Any, totals: Any) -> np.ndarray:
    r"""Non-negative integer counts that sum exactly to each group's integer total, nearest the real draw.

    For each draw and group ``g`` with integer total :math:`T_g`: the draw's cells :math:`x` are
    projected onto the simplex, :math:`q = \max(x - \tau, 0)` with :math:`\tau` such that
    :math:`\sum q = T_g` (the nearest point with non-negative entries and that sum; :math:`q = x`
    when no cell is below 0), and the quotas are apportioned by Hamilton's largest-remainder rule:
    each cell gets :math:`\lfloor q \rfloor`, and the :math:`T_g - \sum \lfloor q \rfloor` cells of
    largest remainder :math:`q - \lfloor q \rfloor` one more. Every count is then
    :math:`\lfloor q \rfloor` or :math:`\lceil q \rceil` (the integer vector of sum :math:`T_g`
    nearest to :math:`q`), at least 0, and the group sums to :math:`T_g` exactly however the mass is
    spread: a few cells may hold all of it and the rest sit at :math:`-1/2`. Where no cell is below
    0, each count is within 1 of its real value.

    Parameters
    ----------
    counts : array_like, shape (..., leaves, cells)
        Real draws, as :func:`model` makes them: finite, each at least :math:`-1/2`, and each draw's
        cells of group ``g`` summing to ``totals[g]`` (to :math:`10^{-9}` relative).
    groups : array_like of int, shape (leaves,)
        The group of each leaf, in ``[0, len(totals))``.
    totals : array_like of int, shape (groups,)
        The groups' integer totals (at least 0); a group without leaves must have total 0.

    Returns
    -------
    numpy.ndarray of int64, shape of ``counts``

    Raises
    ------
    NoiseawareTypeError
        If an argument is not numeric.
    NoiseawareValueError
        If ``counts`` has fewer than 2 axes, a NaN or inf, or a cell below :math:`-1/2`; ``groups``
        does not hold one integer index in range per leaf; ``totals`` are not integers at least 0;
        or a draw's cells do not sum to their group's total (the message gives how far off).

    Examples
    --------
    >>> import numpy as np
    >>> round_to_totals(np.array([[1.4, 1.3], [2.3, 0.0]]), [0, 0], [5]).tolist()
    [[2, 1], [2, 0]]
    >>> round_to_totals(np.array([[6.5, -0.5], [-0.5, -0.5], [-0.5, -0.5]]), [0, 0, 0], [4]).tolist()
    [[4, 0], [0, 0], [0, 0]]
    """
    owner = "round_to_totals"
    x = v.numeric_array(owner, "counts", counts)
    if x.ndim < 2:
        raise NoiseawareValueError(v.message(owner, "counts", "must have shape (..., leaves, cells)", x.shape,
                                             "Pass the draws with their leaf and cell axes last."))
    lead, (n_leaf, n_cell) = x.shape[:-2], x.shape[-2:]
    t = v.integer_array(owner, "totals", totals, booleans=False)
    if t.ndim != 1:
        raise NoiseawareValueError(v.message(owner, "totals", "must be one integer per group (1-D)", t.shape))
    if t.size and int(np.min(t)) < 0:
        raise NoiseawareValueError(v.message(owner, "totals", "must be integers >= 0 (a count of people)",
                                             t.tolist(), limit=200))
    g = v.integer_array(owner, "groups", groups, booleans=False)
    if g.shape != (n_leaf,):
        raise NoiseawareValueError(
            f"{owner}: groups must hold one group index per leaf, shape ({n_leaf},) for counts of shape {x.shape}; "
            f"got groups of shape {g.shape}. Pass the root-level ancestor of each leaf."
        )
    if g.size and (int(np.min(g)) < 0 or int(np.max(g)) >= t.size):
        bad = int(g[(g < 0) | (g >= t.size)][0])
        raise NoiseawareValueError(
            f"{owner}: groups must be indices in [0, {t.size}) (one per entry of totals); got a group index of {bad}."
        )
    flat = x.reshape(-1, n_leaf * n_cell)
    if not np.all(np.isfinite(flat)):
        n_bad = int(flat.size - np.count_nonzero(np.isfinite(flat)))
        raise NoiseawareValueError(
            f"{owner}: counts must be finite; got {n_bad} NaN or inf value(s). A draw with NaN has no integer "
            "counts: check the sampler's output (divergences, a failed chain)."
        )
    if flat.size and float(np.min(flat)) < -0.5 - _FLOOR_ATOL:
        raise NoiseawareValueError(
            f"{owner}: counts must each be >= -1/2 (a real count x stands for the integer whose cell "
            f"[n - 1/2, n + 1/2) holds it); got a count of {float(np.min(flat))!r}."
        )
    cell_group = np.repeat(g, n_cell)
    out = np.zeros(flat.shape, dtype=np.int64)
    for grp in range(t.size):
        cols = np.flatnonzero(cell_group == grp)
        total = int(t[grp])
        if not cols.size:
            if total:
                raise NoiseawareValueError(
                    f"{owner}: totals[{grp}] must be 0, since group {grp} has no leaves; got totals[{grp}]={total}."
                )
            continue
        xs = flat[:, cols]
        sums = xs.sum(axis=1)
        off = np.abs(sums - total)
        tol = _SUM_RTOL * (total + 0.5 * cols.size + 1.0)
        if np.any(off > tol):
            worst = int(np.argmax(off))
            raise NoiseawareValueError(
                f"{owner}: counts must sum to the group totals (each draw's cells of group {grp} to "
                f"totals[{grp}]={total}, to {_SUM_RTOL:g} relative); got a sum of {float(sums[worst])!r} in draw "
                f"{worst}, off by {float(off[worst]):.6g}. Pass draws that meet the totals (as hierarchy.model "
                "draws them) and the totals they were drawn for."
            )
        if total:
            out[:, cols] = _apportion(_project(xs, total), np.full(flat.shape[0], total, dtype=np.int64))
    return out.reshape(*lead, n_leaf, n_cell)


@float64
@sampling_keywords(checked="a leaf cell count of ``counts``")
def fit(
    release: NoisyHierarchy,
    *,
    prior: str = "hierarchical",
    backend: str = "numpyro",
    cores: int | None = None,
    **sampling: Unpack[SamplingOptions],
) -> Any:
    r"""NUTS posterior (NumPyro or PyMC) of the true leaf cell counts of a hierarchy release.

    The model is :func:`model`: the exact root totals allocated down the tree by a hierarchical
    model of tract populations and cell shares, and every noisy measurement through the discrete
    Gaussian law of the noise-law registry (relaxed to real counts; see :func:`model`). Every
    posterior draw of ``counts`` sums to the exact totals up to float rounding, and every draw of
    ``integer_counts`` (:func:`round_to_totals`) sums to them exactly.

    Parameters
    ----------
    release : NoisyHierarchy
        With the root level's totals published exactly.
    {sampling_parameters}
    prior : {"hierarchical", "uniform"}
        The prior of :func:`model`.
    backend : {"numpyro", "pymc"}
        NumPyro NUTS (chains vectorized; :func:`model`) or PyMC NUTS (the same model in PyMC).
    cores : int, optional
        {cores_doc}

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        The host stack's result: returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData
        under ArviZ 0.x), as ``pm.sample`` does. Posterior variables ``counts`` (the relaxed, real
        leaf cell counts, dims ``(chain, draw, leaf, cell)``, coordinates the release's finest units
        and its cell queries) and ``integer_counts`` (their integers of :func:`round_to_totals`),
        both meeting the exact totals in every draw, plus the prior's own variables. ``attrs``: the
        sampler settings (:func:`noiseaware.results.settings`), ``noiseaware_result =
        "hierarchy.fit"``, ``noiseaware_default_var = "counts"``, ``noiseaware_prior``,
        ``noiseaware_backend`` and ``noiseaware_provenance`` (the release's).
        Pooled draws: ``noiseaware.results.draws(fit, "integer_counts")``, shape
        ``(chains * draws, leaves, cells)``.

    Raises
    ------
    NoiseawareValueError, NoiseawareTypeError
        Not a hierarchy release, root totals not exact, or bad sampler settings.

    Examples
    --------
    >>> from noiseaware import hierarchy, results
    >>> sim = hierarchy.synthetic_nmf(1, 2, 2, rng=0)
    >>> res = hierarchy.fit(sim.release, chains=1, draws=100, warmup=100, seed=1)  # doctest: +SKIP
    >>> results.draws(res, "integer_counts").sum(axis=(1, 2))[:3]  # doctest: +SKIP
    array([...])

    (Skipped in the doctest run: compiling NUTS takes seconds; ``tests/hierarchy`` runs it.)
    """
    owner = "hierarchy.fit"
    st = check_settings(owner, **sampling)
    v.choice(owner, "prior", prior, PRIORS)
    v.choice(owner, "backend", backend, BACKENDS)
    cores = pymc_cores(owner, backend, cores)
    data = model_data(release)
    if len(data.n_units) < 3 and prior == "hierarchical":
        v.fail(owner, "release", "must have three levels or more for the hierarchical prior", len(data.n_units),
               "Use prior='uniform'.")
    if backend == "numpyro":
        # the measurements and totals are the model's arguments; the tree shapes the program, so a later
        # release of the same tree (another year, another noise draw) compiles nothing
        key = ("hierarchy", prior, data.n_units, tuple(p.tobytes() for p in data.parents), data.leaf_root.tobytes(),
               data.n_cells, data.index.tobytes(), data.sigma.tobytes())
        idata = numpyro_nuts(partial(model, data, prior=prior), st, data=(data.y, data.totals), cache_key=key)
    else:
        from ._pymc import pymc_model

        with pymc_model(data, prior):
            idata = pymc_sample(owner, st, cores=cores, compute_convergence_checks=False)
    post = group(idata, "posterior")
    dims = post["counts"].dims
    post = post.rename({dims[2]: "leaf", dims[3]: "cell"}).assign_coords(
        leaf=list(release.units[-1]), cell=list(release.queries[1:])
    )
    integer = round_to_totals(np.asarray(post["counts"]), data.leaf_root, release.root_totals())
    post["integer_counts"] = (post["counts"].dims, integer)
    set_group(idata, "posterior", post)
    attrs = {"noiseaware_prior": prior, "noiseaware_backend": backend, "noiseaware_provenance": release.provenance}
    return finish_fit(owner, idata, st, owner=owner, check=["counts"], block=_BLOCK, default_var="counts", attrs=attrs)
