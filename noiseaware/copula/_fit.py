r"""Bayes-NA: the noise-aware posterior of a Gaussian-copula correlation matrix (Wang et al. 2026, §3).

The posterior of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
Correlations*, §3.2,

.. math:: p(R \mid \tilde{\mathcal T}) \propto \pi(R)\, f_{CL}(\tilde{\mathcal T} \mid R),

with :math:`f_{CL}` the pairwise composite likelihood of eq. (18) (:class:`CompositeCopulaLikelihood`)
and :math:`\pi(R) = \mathrm{LKJ}(R \mid \eta)` (``eta = 1`` as in the paper), sampled by NUTS in
NumPyro or PyMC.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validation as v
from .._engine import (
    MixingBlock,
    NutsProgramSpec,
    SamplingSettings,
    build_nuts,
    chain_groups,
    check_settings,
    from_groups,
    group,
    nuts_sampler_choice,
    pymc_cores,
    pymc_sample,
    record_run,
    release_attrs,
)
from .._engine import check_mixing as _mixing  # fit has a parameter of that name
from .._engine._memory import AUTO_DENSE_MAX_BYTES, MemoryPlan, compiled_bytes, plan_memory
from .._engine._nuts import NutsRun
from .._engine._precondition import FD_MAX_D, diagonal_precondition, fd_hessian, laplace_precondition
from .._engine._reorder import pivot_order, unpermute_cholesky
from .._engine._x64 import float64
from .._validation import current_owner, owned
from ..exceptions import NoiseawareValueError, ReleaseFormatError
from ..release import Release
from ._model import (
    _PROGRAMS,
    _chol_to_unconstrained,
    _cols,
    _dense_program,
    _numpyro_model,
    _NumpyroModel,
    _pairs_log_likelihood,
    _pymc_model,
    _reorder,
    _start_matrix,
    pointwise_log_likelihood,
)
from ._prior import LKJPrior, _as_prior
from ._result import _store_pairs, pair_draws

__all__ = ["LKJPrior", "fit", "pointwise_log_likelihood"]

#: The block the mixing check of the copula fits names (``copula.fit``, ``copula.fit_dpcopula``).
R_BLOCK = MixingBlock.nuts(
    "NUTS on the correlation matrix R",
    "R[j] is the j-th of the p(p-1)/2 free correlations above the diagonal, in row order; the pair of "
    "variables it correlates is named beside it.",
)

_OWNER = "copula.fit"


@owned(_OWNER)
def _check_release(release: Any) -> Release:
    """Fail before any compilation: the release must be a geometric ``median_pairs`` release."""
    from .._core import _release

    _release.composite_params(release)  # raises with the field at fault
    return release

#: ``preconditioner="auto"`` takes the dense Laplace scale while its value/gradient/Hessian program
#: needs at most this, by XLA's own figure for the compiled program (temporaries, arguments and
#: outputs), e.g. 0.27 GB at p = 10, n = 10^6 and 0.7 GB at p = 60, n = 300.
_AUTO_DENSE_MAX_BYTES = AUTO_DENSE_MAX_BYTES
#: Lower bound of the dense program's workspace in float64 numbers per ``d**2``, ``d = p(p-1)/2``:
#: XLA's temporaries measured 28.2-29.0 ``d**2`` at p = 20-80, n = 300 (81 ``d**2`` at p = 20,
#: n = 10^5 and 16,600 ``d**2`` at p = 10, n = 10^6: the likelihood's window adds to it; jax 0.10,
#: CPU). Used to decide without compiling when the dense route is out of reach; otherwise the
#: compiled program's own figure decides.
_DENSE_DOUBLES_PER_D2 = 28
#: Workspace of one gradient of the potential in float64 numbers per pair and window term
#: (``k * width``, ``width`` the likelihood's static window): measured 4.0-4.5, and 4.0-4.9 for the
#: diagonal-curvature program, at p = 10-200, n = 300 to 10^6 (jax 0.10, CPU).
_GRAD_DOUBLES_PER_TERM = 5


@owned(_OWNER)
def _plan_memory(
    backend: str,
    p: int,
    n: int,
    chains: int,
    draws: int,
    warmup: int,
    preconditioner: str = "auto",
    dense_bytes: int | None = None,
) -> MemoryPlan:
    """Choose the preconditioner and estimate the fit's memory; refuse up front if it cannot fit.

    NumPyro, with ``d = k = p(p-1)/2`` and ``W`` the width of the likelihood's window (``n``
    sets it): the dense Laplace preconditioner's program needs ``dense_bytes`` (XLA's figure for
    the compiled program) or, before compiling, at least ``28 d**2`` doubles (88 GB at p = 200;
    the fit died asking for 90 GB); the diagonal one about ``5 k W + 64 p**2``; NUTS ``5 k W`` per
    chain. ``"auto"`` takes the dense one while it needs at most :data:`_AUTO_DENSE_MAX_BYTES`.
    Stored draws: per draw the unconstrained vector twice (sampler and transformed) and three
    ``p x p`` arrays (``L``, ``R`` and a copy). PyMC: per draw and warmup iteration the packed
    vector and ``R`` in the trace, and one copy of the kept draws in the ``InferenceData``. Raises
    :class:`NoiseawareValueError` naming ``p``, the estimate and the limit when it cannot fit.
    """
    d = p * (p - 1) // 2
    if backend == "numpyro":
        from .._core import fisher_table

        h = math.ceil(n / 2)
        terms = d * fisher_table(n, h, h).width
        dense = dense_bytes if dense_bytes is not None else _DENSE_DOUBLES_PER_D2 * 8 * d * d
        diagonal = 8 * (_GRAD_DOUBLES_PER_TERM * terms + 64 * p * p)
        sampler = 8 * _GRAD_DOUBLES_PER_TERM * terms * chains
        stored = 8 * chains * draws * (2 * d + 3 * p * p)
    else:
        preconditioner, dense, diagonal, sampler = "none", 0, 0, 0
        stored = 8 * chains * ((draws + warmup) * (d + p * p) + draws * (d + p * p))
    return plan_memory(
        p,
        preconditioner=preconditioner,
        dense_bytes=dense,
        diagonal_bytes=diagonal,
        sampler_bytes=sampler,
        stored_bytes=stored,
        describe=f"p = {p} ({d} free correlations, n = {n}, {chains} chains x {draws} draws, backend={backend!r})",
        auto_dense_max=_AUTO_DENSE_MAX_BYTES,
    )


def _nuts_run(model: _NumpyroModel, st: SamplingSettings, dense: bool, mass_matrix: str) -> NutsRun:
    """The engine's NUTS run of the model's shape in ``u``, ``z = z_hat + A u`` (``A`` dense or diagonal).

    Compiled once per shape and settings (the cache key); ``z_hat``, ``A`` and the counts are its
    arguments, so a second release of the same shape reuses it. Its compilation (the chunk
    program is a fit's longest compile) starts now in a background thread, on the other core,
    while the caller computes the preconditioner (a no-op once compiled).
    """
    import jax
    import jax.numpy as jnp

    programs, k = model.programs, model.p * (model.p - 1) // 2
    config = NutsProgramSpec(
        st.chains, st.draws, st.warmup, float(st.target_accept), groups=chain_groups(st.chains),
        dense_mass=mass_matrix == "dense", preconditioner="dense" if dense else "diagonal",
    )
    run: NutsRun = _PROGRAMS.get(
        ("nuts", programs.static, config), lambda: build_nuts(programs.potential, programs.record, config)
    )
    f64, c = jnp.float64, st.chains
    run.compile_async(
        jax.ShapeDtypeStruct((2,), jnp.uint32),
        jax.ShapeDtypeStruct((c, k), f64),
        jax.ShapeDtypeStruct((c,), f64),
        jax.ShapeDtypeStruct((c, k), f64),
        (jax.ShapeDtypeStruct((k,), f64), jax.ShapeDtypeStruct((k, k) if dense else (k,), f64)),
        jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), model.data),
    )
    return run


def _numpyro_fit(
    release: Release,
    prior: LKJPrior,
    st: SamplingSettings,
    preconditioner: str = "auto",
    mass_matrix: str = "diagonal",
    variable_order: str = "pivoted",
) -> Any:
    import jax
    import jax.numpy as jnp

    chains, draws, warmup, seed = st.chains, st.draws, st.warmup, st.seed
    model = _numpyro_model(release, prior)
    p, obs, programs = model.p, model.obs, model.programs
    n = int(model.args["n"])
    k = p * (p - 1) // 2
    plan = _plan_memory("numpyro", p, n, chains, draws, warmup, preconditioner)  # refuses before compiling

    compiled: Any = None
    if plan.preconditioner == "dense":
        run = _nuts_run(model, st, True, mass_matrix)
        if k > FD_MAX_D:
            # XLA knows the compiled program's memory before running it: decide (or refuse) on that figure
            compiled = _dense_program(model)
            measured = compiled_bytes(compiled)
            plan = _plan_memory("numpyro", p, n, chains, draws, warmup, preconditioner, dense_bytes=measured)
    dense_route = plan.preconditioner == "dense"

    # With the dense preconditioner, NUTS runs in the variables' pivoted order (the engine's pivot_order
    # of the start point, _reorder): nearly dependent variables last, so that the long tail a
    # near-singular R puts on the canonical partial correlations stays in the last rows instead of
    # reaching every row after it. The posterior of R is the same in any order; at n = 5,820, p = 7
    # (benchmarks/copula_mass.py) it took fewer leapfrog steps for more effective draws. The diagonal
    # route (large p: unmeasured there, and mapping the draws back costs O(p^3) per draw) keeps the
    # release's order.
    start = _start_matrix(model, 10_000 if dense_route else 50)
    order = pivot_order(start) if variable_order == "pivoted" and dense_route else np.arange(p)
    reordered = _reorder(model, order)
    if reordered is None:  # a subset of the pairs: the pivoted order would need other programs
        order = np.arange(p)
    else:
        model = reordered
    z_start = _chol_to_unconstrained(np.linalg.cholesky(start[np.ix_(order, order)]))
    data = model.data
    if compiled is None:
        value_grad: Any = lambda x: programs.value_grad(x, data)  # noqa: E731
        hessian: Any = lambda x: fd_hessian(value_grad, x)  # noqa: E731
    else:
        value_grad = lambda x: compiled(x, data)[:2]  # noqa: E731
        hessian = lambda x: np.asarray(compiled(jnp.asarray(x), data)[2], dtype=np.float64)  # noqa: E731

    # Preconditioning (efficiency only, the posterior is unchanged; the engine's _precondition). At large
    # n the posterior is very concentrated (sd ~ 1e-3 at n = 10^6) with strongly unequal scales in the
    # unconstrained coordinates: started from NumPyro's default init with a unit metric, NUTS spent the
    # warmup at its maximum tree depth (a fit at n = 10^6, p = 10 did not finish in 25 minutes). So NUTS
    # samples u in z = z_hat + A u with z_hat near the mode (per-pair estimates, then Newton steps) and
    # A A^T the inverse Hessian there. Large p: the dense Hessian has d^2 entries and its program
    # ~30 d^2 doubles (90 GB at p = 200), so above a size (see _plan_memory) A is diagonal, from the
    # Hessian's diagonal computed without forming the matrix (the engine's lkj_pairwise_curvature).
    if dense_route:
        z_hat, A = laplace_precondition(value_grad, hessian, z_start)
    else:
        run = _nuts_run(model, st, False, mass_matrix)
        curvature = programs.curvature
        z_hat, A = diagonal_precondition(value_grad, lambda x: curvature(x, data), z_start)
    dense = A.ndim == 2  # the run chosen above has this preconditioner's shape

    # Chains start at independent draws from the Laplace approximation (dispersed at the posterior's
    # own scale, so that R-hat can still flag a chain that does not reach the bulk); their potential
    # and gradient (in u) come from the program just used, so the run's start holds no gradient.
    u0 = np.random.default_rng([seed, 1]).standard_normal((chains, k))
    pe0, grad0 = np.empty(chains), np.empty((chains, k))
    for c in range(chains):
        f, g = (
            np.asarray(a, dtype=np.float64)
            for a in value_grad(jnp.asarray(z_hat + (A @ u0[c] if dense else A * u0[c])))
        )
        pe0[c], grad0[c] = f, (A.T @ g if dense else A * g)
    # A diagonal mass matrix adapted in warmup on top of the (dense) preconditioning A by default:
    # NumPyro's dense adaptation estimates a full p(p-1)/2-dimensional covariance from its first
    # 25-draw window, which for p = 10 (45 dimensions) is rank-deficient and sent the next window's
    # trajectories to the maximum tree depth.
    bar = None
    if st.progressbar:
        from tqdm.auto import tqdm

        bar = tqdm(total=warmup + draws, desc=f"NUTS, {chains} chain(s)")
    try:
        u0j, pe0j, grad0j, z_hatj, Aj = (jnp.asarray(x) for x in (u0, pe0, grad0, z_hat, A))
        out = run(jax.random.PRNGKey(seed), u0j, pe0j, grad0j, (z_hatj, Aj), data, bar)
    finally:
        if bar is not None:
            bar.close()
    L = np.asarray(out.draws)
    if not np.array_equal(order, np.arange(p)):  # chain by chain: one chain's temporaries at a time
        L = np.stack([unpermute_cholesky(chain, order) for chain in L])
    R = _unit_diagonal(L @ np.swapaxes(L, -1, -2))
    cols = _cols(release)
    stats = ("lp", "n_steps", "tree_depth", "accept_rate", "diverging")
    return from_groups(
        {
            "posterior": {"R": R, "L_corr": L},
            "sample_stats": {key: np.asarray(out.stats[key]) for key in stats},
            "observed_data": {"pairs": np.asarray(obs)},
        },
        dims={"R": ["row", "col"], "L_corr": ["row", "col"]},
        coords={"row": cols, "col": cols},
        attrs={
            "noiseaware_preconditioner": "dense" if dense else "diagonal",
            "noiseaware_mass_matrix": mass_matrix,
            "noiseaware_variable_order": [int(i) for i in order],
        },
    )


def _unit_diagonal(R: np.ndarray) -> np.ndarray:
    """``R`` with its diagonal set to exactly 1 (``L L^T`` gives ``1 +- 1e-16``), in place; returns ``R``.

    A constant diagonal is what ArviZ skips as constant; one off by rounding made ArviZ 0.x's
    kernel density of it fail (a zero bandwidth) in ``az.plot_trace``.
    """
    i = np.arange(R.shape[-1])
    R[..., i, i] = 1.0
    return R


@owned(_OWNER)
def _pymc_fit(
    release: Release, prior: LKJPrior, st: SamplingSettings, cores: int | None = None, nuts_sampler: str = "auto"
) -> Any:
    from .._engine import set_group

    with _pymc_model(release, prior):
        idata = pymc_sample(st, cores=cores, nuts_sampler=nuts_sampler, compute_convergence_checks=False)
    post = group(idata, "posterior")
    R = _unit_diagonal(np.array(post["R"].values, dtype=np.float64))
    set_group(idata, "posterior", post.assign(R=post["R"].copy(data=R)))
    return idata


@float64
@owned(_OWNER)
def fit(
    release: Release,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    backend: str = "numpyro",
    prior: Any = None,
    cores: int | None = None,
    preconditioner: str = "auto",
    mass_matrix: str = "diagonal",
    variable_order: str = "pivoted",
    nuts_sampler: str = "auto",
) -> Any:
    r"""Bayes-NA fit of the copula correlation matrix from a ``"median_pairs"`` release.

    Samples :math:`p(R \mid \tilde{\mathcal T}) \propto \mathrm{LKJ}(R \mid \eta)\, f_{CL}(\tilde{\mathcal T}
    \mid R)` (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
    Correlations*, §3.2, eq. 18, Algorithm S.2) with NUTS. The noise
    parameters (``n``, per-pair ``alpha``) and the observed noisy counts come from the release.

    Parameters
    ----------
    release : Release
        A ``"median_pairs"`` release made with the geometric mechanism (the Bayes-NA input; use
        :func:`mle_nn` for TGM / BTGM / RGM releases).
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
        Show the sampler's progress bar (default False). The CLI shows it.
    target_accept : float, optional
        Target acceptance probability, in (0, 1), of NUTS's step size adapted during warmup; default
        (None) 0.8 (``NUTS_TARGET_ACCEPT``, the default of Stan, PyMC and NumPyro).
    check_mixing : bool
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when a free entry of ``R`` has bulk ESS
        below 100 per chain or R-hat above 1.01 (default True).
    backend : {"numpyro", "pymc"}
        NumPyro NUTS or PyMC NUTS. NumPyro runs the chains in groups, one per JAX device, at the same
        time (by default noiseaware gives XLA one CPU device per core; see :mod:`noiseaware.config`,
        "Host devices"), each compiled program cached per shape (across processes only if you turn on JAX's
        compilation cache, :mod:`noiseaware.config`).
    prior : "lkj", float or LKJPrior, optional
        LKJ concentration; default ``LKJ(1)`` as in the paper. For other priors write the model
        with ``CompositeCopulaLikelihood.from_release`` directly.
    cores : int, optional
        ``backend="pymc"`` with PyMC's own NUTS only: worker processes for the chains. Default
        (None): one per chain up to the CPU count, or 1 (chains in sequence, in-process) when JAX is
        already loaded, since forking a process with JAX's threads running can deadlock. Refused
        with ``backend="numpyro"``.
    nuts_sampler : {"auto", "nutpie", "numpyro", "pymc"}
        PyMC only: the NUTS implementation that samples the PyMC model (``pm.sample``'s
        ``nuts_sampler``). ``"auto"`` (default): nutpie when installed (the extra
        ``pip install 'noiseaware[pymc-fast]'``), else NumPyro, else PyMC's own; the same model and
        log-density in each (``docs/benchmarks.md``, "pymc_backend_speed", for their speed).
    preconditioner : {"auto", "dense", "diagonal"}
        NumPyro only; the target is the same, only the sampler's efficiency differs. NUTS runs
        in coordinates ``u`` with ``z = z_hat + A u``, ``z`` the unconstrained LKJ-Cholesky
        vector of ``d = p(p-1)/2`` entries and ``z_hat`` near the posterior mode.

        * ``"dense"``: ``A A^T`` is the inverse Hessian at ``z_hat`` (a Laplace approximation).
          Its program needs at least ``28 d**2`` float64 numbers (88 GB at ``p = 200``), more at
          large ``n``; the compiled program's own memory figure is checked before it runs.
        * ``"diagonal"``: ``A`` is diagonal, from the diagonal of a Gauss-Newton Hessian computed
          without forming the matrix (memory of a few gradients, e.g. 60 MB at ``p = 200``,
          ``n = 300``). Less efficient on concentrated posteriors with correlated coordinates:
          at ``p = 10``, ``n = 10^6`` it gave about a fifth of the dense route's effective
          draws per second; at ``p = 10`` and ``30``, ``n = 5000``, as many or more.
        * ``"auto"`` (default): dense while its program needs at most 1 GiB (about ``p <= 65``
          at ``n = 300``), else diagonal.

        The choice is recorded in the result's ``attrs["noiseaware_preconditioner"]``.
    mass_matrix : {"diagonal", "dense"}
        NumPyro only: the mass matrix NUTS adapts during warmup in the preconditioned coordinates
        ``u`` (NumPyro's ``dense_mass``). ``"dense"`` corrects what the preconditioner left of the
        posterior's correlations and gives more effective draws per draw, at a higher cost per
        draw: at ``n = 5820``, ``p = 7`` (10 seeds, 4 x (1000 + 1000), pivoted order) 0.85
        effective draws per draw against 0.81 on average, but 12.0 leapfrog steps per draw against
        10.6, so fewer effective draws per gradient (``docs/benchmarks.md``, "copula_mass"). With
        ``target_accept=0.9`` it gave 1.02 effective draws per draw there (20 seeds; Stan 0.92 over
        4 seeds) at 14.4 steps: the setting for the most effective draws per draw, not per second.
        Recorded in the result's ``attrs["noiseaware_mass_matrix"]``.
    variable_order : {"pivoted", "given"}
        NumPyro only: the order of the variables in the sampler's LKJ-Cholesky coordinates (the
        posterior of ``R`` is the same in any order; the draws are always in the release's order).
        ``"pivoted"`` (default): with the dense preconditioner, the order of a diagonally pivoted
        Cholesky factorization of the start point, largest conditional variance first, so that
        variables nearly determined by the others come last: a near-singular ``R`` then puts its
        long-tailed canonical partial correlations in the last rows only. ``"given"`` keeps the
        release's order, as do the diagonal preconditioner and releases with a subset of the
        pairs. At ``n = 5820``, ``p = 7`` (smallest eigenvalue of ``R`` 0.003) the pivoted order
        gave 1.45x the effective draws per leapfrog step with the diagonal mass matrix
        (``docs/benchmarks.md``, "copula_mass"). Recorded (``order[i]``: the release's variable
        at place ``i``) in
        the result's ``attrs["noiseaware_variable_order"]``.

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        Returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData under ArviZ 0.x), as ``pm.sample`` does.
        ``posterior``: ``R``, its ``p(p-1)/2`` free entries (dims ``chain, draw, pair``, each pair labelled ``"a x
        b"`` by the release's column names, as :func:`pair_draws`), and nothing constant, so that ArviZ's default
        calls (``az.summary``, ``az.plot_trace``) are clean; the full matrix is ``copula.functional(fit, lambda R:
        R)``; ``sample_stats`` (``accept_rate``, ``diverging``, ...); ``observed_data``: the noisy counts
        ``pairs``; ``log_likelihood``: ``pairs``, one composite-likelihood term per pair
        (:func:`pointwise_log_likelihood`), for ``az.loo``. Root ``attrs``: ``noiseaware_result = "copula.fit"``,
        ``noiseaware_columns``, the sampler settings, ``noiseaware_backend``, ``noiseaware_prior``, the release
        (read with :func:`noiseaware.results.release`) and, NumPyro only, ``noiseaware_preconditioner``,
        ``noiseaware_mass_matrix`` and ``noiseaware_variable_order``. Read it with :mod:`noiseaware.results`
        (``draws``, ``interval``, ``summary``, ``plot``, ``diagnostics``) and the copula's own
        :func:`pair_summary`, :func:`pair_draws`, :func:`functional`, :func:`partial_slope` and
        :func:`plot_pairs`; all work on a copy read back with ``az.from_netcdf``.

    Raises
    ------
    ReleaseFormatError
        If the release is not a geometric ``"median_pairs"`` release.
    ValueError
        For bad sampler settings, or, before anything is compiled or allocated, when the fit's
        estimated memory (preconditioner plus stored draws) exceeds the machine's physical memory
        (or its cgroup limit); the message names ``p``, the estimate and the limit.
    KeyboardInterrupt
        When interrupted (Ctrl-C). PyMC catches the interrupt inside ``pm.sample`` and returns the
        draws made so far; this function detects that (a chain with fewer than ``warmup + draws``
        iterations) and re-raises, so an interrupted fit never passes for a finished one.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> from noiseaware.datasets import demo_copula_data
    >>> x, R, cols = demo_copula_data(seed=1, n=400)
    >>> rel = na.privatize(x[:, :2], statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(0))
    >>> res = fit(rel, chains=2, draws=1000, warmup=500, seed=0, check_mixing=False)
    >>> from noiseaware import copula, results
    >>> results.draws(res).mean(axis=0).shape  # the posterior mean of R's one pair
    (1,)
    >>> copula.functional(res, lambda R: R).mean(axis=0).shape  # of the matrix
    (2, 2)
    >>> list(copula.pair_summary(res).index)
    ['x0 x x1']
    """
    release = _check_release(release)
    backend = v.choice("backend", backend, ("numpyro", "pymc"))
    pr = _as_prior(prior)
    st = check_settings(
        chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing,
    )
    preconditioner = v.choice("preconditioner", preconditioner, ("auto", "dense", "diagonal"))
    mass_matrix = v.choice("mass_matrix", mass_matrix, ("diagonal", "dense"))
    variable_order = v.choice("variable_order", variable_order, ("pivoted", "given"))
    p = int(release.metadata["p"])
    cores = pymc_cores(backend, cores)
    if backend == "numpyro":
        if nuts_sampler != "auto":
            raise NoiseawareValueError(
                f"{_OWNER}: nuts_sampler applies to backend='pymc' only; got nuts_sampler={nuts_sampler!r}."
            )
        idata = _numpyro_fit(release, pr, st, preconditioner, mass_matrix, variable_order)
    else:
        if mass_matrix != "diagonal":
            raise NoiseawareValueError(
                f"{_OWNER}: mass_matrix applies to backend='numpyro' only (PyMC adapts its own); "
                f"got mass_matrix={mass_matrix!r}."
            )
        if preconditioner != "auto":
            raise NoiseawareValueError(
                f"{_OWNER}: preconditioner applies to backend='numpyro' only; got preconditioner={preconditioner!r}."
            )
        if variable_order != "pivoted":
            raise NoiseawareValueError(
                f"{_OWNER}: variable_order applies to backend='numpyro' only; got variable_order={variable_order!r}."
            )
        _plan_memory(backend, p, int(release.n or 0), st.chains, st.draws, st.warmup)  # n: a checked release has it
        idata = _pymc_fit(release, pr, st, cores, nuts_sampler_choice(nuts_sampler))
    cols = tuple(_cols(release))
    if math.comb(len(cols), 2) != release.values.size:
        raise ReleaseFormatError(f"{_OWNER}: release has {release.values.size} values for {len(cols)} columns.")
    _add_log_likelihood(idata, release)
    attrs = {"noiseaware_backend": backend, "noiseaware_prior": f"LKJ(eta={pr.eta:g})", **release_attrs(release)}
    return _finish(_OWNER, idata, st, block=R_BLOCK, attrs=attrs)


def _add_log_likelihood(idata: Any, release: Release) -> None:
    """Put the pairs' pointwise log-likelihood (:func:`_pairs_log_likelihood`) into ``idata`` as its group, in place."""
    from .._engine import set_group

    set_group(idata, "log_likelihood", _pairs_log_likelihood(idata, release))


def _finish(kind: str, idata: Any, st: SamplingSettings, *, block: MixingBlock, attrs: Any) -> Any:
    """The end of a copula fit: :func:`~noiseaware._engine.finish_fit`'s records, and its mixing check on the pairs.

    The check covers the ``p(p-1)/2`` free entries of ``R`` (:func:`pair_draws`), each named by its
    pair of columns: the diagonal of ``R`` is constant and its lower triangle repeats the upper.
    """
    _store_pairs(idata)
    record_run(idata, st, noiseaware_result=kind, noiseaware_default_var="R", **attrs)
    if st.check_mixing:
        view = from_groups({"posterior": pair_draws(idata), "sample_stats": group(idata, "sample_stats")})
        _mixing(view, ["R"], owner=current_owner(), block=block)
    return idata
