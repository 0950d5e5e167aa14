r"""The package's one NUTS driver: a potential (or a NumPyro model), chains over devices, a chunked run.

Private. Every NUTS fit of the package (``copula.fit``, ``dirichlet.fit``, ``covariance.fit`` and,
through ``copula.fit``, ``fit_dpcopula``) samples with :func:`build_nuts`:

* the target is a potential ``U(z, data)`` on an unconstrained space, the data an *argument* (so that
  one compiled program serves every release of one shape), or a NumPyro model turned into one
  (:func:`model_potential`, NumPyro's ``get_potential_fn`` / ``initialize_model``);
* optionally an affine preconditioner ``z = z_hat + A u`` (``A`` dense or diagonal; its ``z_hat`` and
  ``A`` are arguments too; :mod:`._precondition` computes them), NUTS then running in ``u``;
* the algorithm is NumPyro's (``numpyro.infer.hmc.hmc(algo="NUTS")``: the kernel and the warmup
  adaptation of ``MCMC(NUTS(...))``);
* the chains are cut into groups, one per local device (:func:`~._devices.chain_groups`), by
  ``jax.shard_map``; within a group they run one after the other (``lax.map``) or vectorized
  (``vmap``), and every chain's draws depend on its own key only (the same on any device count);
* the run is two programs, a start and a chunk of iterations, driven from Python
  (:class:`NutsRun`): Ctrl-C lands between chunks, the progress bar moves, and the chunk program
  (the longest compile) can be compiled in a background thread while the caller computes its
  preconditioner;
* the result (:class:`NutsDraws`) holds each kept draw's ``record(z, data)`` and the sample
  statistics in the package's naming (``accept_rate``, ``diverging``, ``n_steps``, ``tree_depth``,
  ``lp``, ``energy``, ``step_size``).

This is the only module of the package that imports ``numpyro.infer.hmc`` or NumPyro's model
utilities (``numpyro.infer.util``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ._x64 import same_float64

__all__ = [
    "CHUNKS",
    "ModelTarget",
    "NutsProgramSpec",
    "NutsDraws",
    "NutsRun",
    "NutsStep",
    "StagedInit",
    "after_chunk",
    "build_nuts",
    "model_potential",
    "nuts_kernel_options",
    "nuts_step",
]

#: Iterations per chunk of a run at most (the run returns to Python after each chunk).
CHUNKS = 20
#: NumPyro's (and Stan's) default maximum tree depth, 2**10 - 1 leapfrog steps per iteration.
MAX_TREE_DEPTH = 10


@dataclass(frozen=True)
class NutsProgramSpec:
    """What shapes a NUTS run's programs (with the potential and the argument shapes): a cache key.

    Not a user's settings (those are :class:`~._settings.SamplingSettings`): the resolved settings
    that shape the compiled programs (the seed is not among them) and the driver's layout choices.

    Attributes
    ----------
    chains, draws, warmup, target_accept
        The run's, as in :class:`~._settings.SamplingSettings` (the seed is an argument of the programs).
    groups : int
        Device groups the chains are cut into (:func:`~._devices.chain_groups`).
    dense_mass : bool or tuple of tuple of str
        NumPyro's ``dense_mass``: a dense mass matrix over everything, or dense blocks over these sites.
    preconditioner : {None, "dense", "diagonal"}
        ``z = z_hat + A u`` with ``A`` a matrix or a vector; None: NUTS runs in ``z``.
    vectorize : bool
        The chains of a group vectorized (``vmap``) instead of one after the other (``lax.map``).
    keys : {"mcmc", "split", "given"}
        Per-chain keys from the run's ``key`` argument: ``"mcmc"`` as ``numpyro.infer.MCMC`` and
        ``HMC.init`` (split per chain, then split again), ``"split"`` one split, ``"given"`` the
        argument is the chains' keys already (leading axis the chains).
    max_tree_depth : int
    """

    chains: int
    draws: int
    warmup: int
    target_accept: float
    groups: int = 1
    dense_mass: bool | tuple[tuple[str, ...], ...] = False
    preconditioner: str | None = None
    vectorize: bool = False
    keys: str = "mcmc"
    max_tree_depth: int = MAX_TREE_DEPTH

    @property
    def total(self) -> int:
        """Iterations per chain, warmup included."""
        return self.warmup + self.draws

    @property
    def chunk(self) -> int:
        """Iterations per chunk (the last chunk is masked past :attr:`total`)."""
        return -(-self.total // min(CHUNKS, self.total))


def nuts_kernel_options(settings: Any, **overrides: Any) -> dict[str, Any]:
    """Keywords of ``numpyro.infer.NUTS`` with the driver's settings (for kernels NumPyro must drive).

    The driver's NUTS is NumPyro's with these options: the target acceptance of ``settings``,
    maximum tree depth :data:`MAX_TREE_DEPTH`, a diagonal mass matrix adapted in warmup
    (regularized), no heuristic initial step size. ``overrides`` (e.g. a user's ``nuts_kwargs``)
    win.
    """
    opts: dict[str, Any] = {
        "target_accept_prob": float(settings.target_accept),
        "max_tree_depth": MAX_TREE_DEPTH,
        "dense_mass": False,
        "adapt_step_size": True,
        "adapt_mass_matrix": True,
        "regularize_mass_matrix": True,
        "find_heuristic_step_size": False,
    }
    opts.update(overrides)
    return opts


@dataclass(frozen=True)
class NutsDraws:
    """The kept draws of a run: ``draws`` (``record``'s pytree) and ``stats``, each ``(chains, draws, ...)``."""

    draws: Any
    stats: dict[str, np.ndarray]


def after_chunk(bar: Any, done: int) -> None:
    """Between two chunks of a run: Python runs here, so Ctrl-C lands; the progress bar moves."""
    if bar is not None:
        bar.update(done - bar.n)


def _affine(pre: tuple[Any, ...], preconditioner: str | None) -> Callable[[Any], Any]:
    if preconditioner is None:
        return lambda u: u
    z_hat, A = pre
    if preconditioner == "dense":
        return lambda u: z_hat + A @ u
    return lambda u: z_hat + A * u


def build_nuts(
    potential: Callable[[Any, Any], Any], record: Callable[[Any, Any], Any], config: NutsProgramSpec
) -> NutsRun:
    """The NUTS run of ``potential`` under ``config``: ``run(key, z0, pe0, grad0, pre, data, bar)``.

    Parameters
    ----------
    potential : callable
        ``(z, data) -> U``, the negative log density on the unconstrained space (a jittable function).
    record : callable
        ``(z, data) -> pytree``: what is kept of each draw (e.g. the constrained values).
    config : NutsProgramSpec
        The run's settings and layout (the cache key of the run, with the potential).

    Returns
    -------
    NutsRun
        Call it with the seed's key, the chains' initial points ``z0`` (in the sampler's
        coordinates: ``u`` under a preconditioner; leading axis the chains), their potential
        ``pe0`` and gradient ``grad0`` there (NumPyro's ``ParamInfo``, so that the start program
        holds no gradient) or None (the start computes them), ``pre = (z_hat, A)`` or ``()``, and
        the data.
    """
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P
    from numpyro.infer.hmc import hmc
    from numpyro.infer.util import ParamInfo

    cfg = config

    def potential_gen(pre: Any, data: Any) -> Callable[[Any], Any]:
        to_z = _affine(pre, cfg.preconditioner)
        return lambda u: potential(to_z(u), data)

    init_kernel, sample_kernel = hmc(potential_fn_gen=potential_gen, algo="NUTS")
    total, size = cfg.total, cfg.chunk
    dense_mass: Any = cfg.dense_mass if isinstance(cfg.dense_mass, bool) else [tuple(b) for b in cfg.dense_mass]

    def start_group(keys: Any, z0: Any, pe0: Any, grad0: Any, pre: Any, data: Any) -> Any:
        """Initial states of the chains of ``keys``/``z0`` (leading axis: chains)."""
        margs = (pre, data)

        def init_one(z: Any, pe: Any, g: Any, k: Any) -> Any:
            return init_kernel(
                z if pe is None else ParamInfo(z, pe, g),
                cfg.warmup,
                step_size=1.0,
                inverse_mass_matrix=None,
                adapt_step_size=True,
                adapt_mass_matrix=True,
                dense_mass=dense_mass,
                target_accept_prob=cfg.target_accept,
                num_steps=None,
                trajectory_length=None,
                max_tree_depth=cfg.max_tree_depth,
                find_heuristic_step_size=False,
                forward_mode_differentiation=False,
                regularize_mass_matrix=True,
                model_args=margs,
                rng_key=k,
            )

        return jax.vmap(init_one)(z0, pe0, grad0, keys)

    def advance(state: Any, first: Any, pre: Any, data: Any) -> Any:
        """``size`` iterations from iteration ``first`` (those at or past ``total`` leave the state alone)."""
        margs = (pre, data)
        to_z = _affine(pre, cfg.preconditioner)

        def step(s: Any) -> Any:
            return sample_kernel(s, model_args=margs)

        def keep(s: Any) -> Any:
            stats = (s.num_steps, s.accept_prob, s.potential_energy, s.diverging, s.energy, s.adapt_state.step_size)
            return record(to_z(s.z), data), stats

        if cfg.vectorize:  # one scan of vectorized steps, as numpyro's MCMC(chain_method="vectorized")
            vstep, vkeep = jax.vmap(step), jax.vmap(keep)

            def collect_all(s: Any, i: Any) -> Any:
                s = lax.cond(i < total, vstep, lambda t: t, s)
                return s, vkeep(s)

            return lax.scan(collect_all, state, first + jnp.arange(size))  # history (iterations, chains, ...)

        def collect(s: Any, i: Any) -> Any:
            s = lax.cond(i < total, step, lambda t: t, s)
            return s, keep(s)

        # The group's chains one after the other (lax.map) by default: a vectorized NUTS step runs every
        # chain's tree to the deepest one's and batches NumPyro's while loops, which lengthens both the
        # compilation and the sampling (docs/architecture.md, "Cores and compile time").
        states, hist = lax.map(lambda s: lax.scan(collect, s, first + jnp.arange(size)), state)
        return states, jax.tree.map(lambda a: jnp.swapaxes(a, 0, 1), hist)

    if cfg.groups > 1:
        mesh = Mesh(np.asarray(jax.local_devices()[: cfg.groups]), ("chains",))
        c, r = P("chains"), P()
        start_group = jax.shard_map(start_group, mesh=mesh, in_specs=(c, c, c, c, r, r), out_specs=c, check_vma=False)
        advance = jax.shard_map(
            advance, mesh=mesh, in_specs=(c, r, r, r), out_specs=(c, P(None, "chains")), check_vma=False
        )

    def start(key: Any, z0: Any, pe0: Any, grad0: Any, pre: Any, data: Any) -> Any:
        keys = key if cfg.keys == "given" else jax.random.split(key, cfg.chains)
        if cfg.keys == "mcmc":  # one key per chain as numpyro's MCMC, then HMC.init's split
            keys = jax.vmap(jax.random.split)(keys)[:, 0]
        return start_group(keys, z0, pe0, grad0, pre, data)

    return NutsRun(jax.jit(start), jax.jit(advance), cfg)


class NutsRun:
    """A NUTS run of :func:`build_nuts`: a start program and a chunk program, run from Python.

    The chunks make the run interruptible (Ctrl-C lands between two chunks, :func:`after_chunk`)
    and move the progress bar; the sequence of kernel steps, hence the draws, is that of one scan
    over all iterations. :meth:`compile_async` compiles both programs ahead of time in a
    background thread (XLA compiles outside Python's lock), e.g. while the caller computes its
    preconditioner on the other core; an error there is raised in the caller's thread.
    """

    def __init__(self, start: Any, advance: Any, config: NutsProgramSpec) -> None:
        self.start, self.advance, self.config = start, advance, config
        self._compiled: tuple[Any, Any] | None = None
        self._thread: Any = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()

    def _compile(self, args: tuple[Any, ...]) -> None:
        import jax
        import jax.numpy as jnp

        try:
            spec = jax.tree.map(lambda a: jax.ShapeDtypeStruct(jnp.shape(a), jnp.result_type(a)), args)
            lowered = self.start.trace(*spec).lower()
            # one compilation at a time, in the caller's thread: XLA's compiler and JAX's persistent cache
            # writes crashed (segfault) when a second thread compiled at the same time under JAX 0.12
            start = lowered.compile()
            pre, data = spec[4:]
            first = jax.ShapeDtypeStruct((), jnp.result_type(int))
            advance = self.advance.trace(lowered.out_info, first, pre, data).lower().compile()
            self._compiled = (start, advance)
        except BaseException as exc:  # re-raised in the caller's thread
            self._error = exc

    def compile_async(self, *args: Any) -> None:
        """Compile both programs for arguments like ``(key, z0, pe0, grad0, pre, data)``, once.

        The arguments may be arrays or ``jax.ShapeDtypeStruct``. Despite the name, the compilation runs in the
        caller's thread: compiling in a background thread beside the caller's own JAX compilations crashed
        XLA (a segfault in the compiler or the persistent cache's write, JAX 0.12).
        """
        with self._lock:
            if self._compiled is not None:
                return
            same_float64(self._compile)(args)

    def _programs(self, args: tuple[Any, ...]) -> tuple[Any, Any]:
        self.compile_async(*args)
        if self._error is not None:
            error, self._error = self._error, None  # a later call tries again
            raise error
        assert self._compiled is not None
        return self._compiled

    def __call__(
        self,
        key: Any,
        z0: Any,
        pe0: Any,
        grad0: Any,
        pre: Any,
        data: Any,
        bar: Any = None,
        check_start: Callable[[bool], None] | None = None,
    ) -> NutsDraws:
        """Run all chains; ``check_start(ok)`` is called once the start is computed (``ok``: all finite)."""
        import jax
        import jax.numpy as jnp

        cfg = self.config
        start, advance = self._programs((key, z0, pe0, grad0, pre, data))
        state = start(key, z0, pe0, grad0, pre, data)
        if check_start is not None:
            leaves = [state.potential_energy, *jax.tree.leaves(state.z_grad)]
            check_start(all(bool(np.all(np.isfinite(np.asarray(x)))) for x in leaves))
        parts = []
        for first in range(0, cfg.total, cfg.chunk):
            state, hist = advance(state, jnp.asarray(first, dtype=jnp.result_type(int)), pre, data)
            parts.append(jax.device_get(hist))
            after_chunk(bar, min(first + cfg.chunk, cfg.total))

        def kept(*xs: Any) -> np.ndarray:  # (iterations, chains, ...) chunks -> (chains, draws, ...)
            return np.swapaxes(np.concatenate(xs)[cfg.warmup : cfg.total], 0, 1)

        draws = jax.tree.map(kept, *[part[0] for part in parts])
        steps, accept, pe, diverging, energy, step_size = (kept(*[p[1][j] for p in parts]) for j in range(6))
        stats = {
            "lp": -pe,
            "n_steps": steps,
            "tree_depth": np.log2(np.maximum(steps, 1)).astype(int) + 1,
            "accept_rate": accept,
            "diverging": diverging,
            "energy": energy,
            "step_size": step_size,
        }
        return NutsDraws(draws, stats)


@dataclass(frozen=True)
class ModelTarget:
    """A NumPyro model as the driver's target: :func:`model_potential`'s answer."""

    potential: Callable[[Any, Any], Any]
    record: Callable[[Any, Any], Any]
    init: Any  # batched ParamInfo (z, potential_energy, z_grad), or None
    observed: dict[str, Any]  # the observed sites' values (an InferenceData's observed_data)


def model_potential(
    model: Callable[..., Any],
    data: tuple[Any, ...],
    *,
    start: dict[str, Any] | None = None,
    init_keys: Any = None,
    init_strategy: Any = None,
    staged_init: StagedInit | None = None,
) -> ModelTarget:
    """A NumPyro model ``model(*data)`` as the driver's ``(potential, record)``, and the chains' start.

    ``potential(z, data)`` and ``record(z, data)`` (the constrained values and the deterministic
    sites of the unconstrained ``z``, a dict) take the data as arguments (NumPyro's
    ``dynamic_args``), so nothing of one call's data stays in a compiled program.

    Either ``start`` (constrained values of every latent site at which the model is traced once for
    its sites and supports; the start is then the caller's, and the third value None) or
    ``init_keys`` (one key per chain: NumPyro's ``initialize_model`` draws each chain's start with
    ``init_strategy`` as ``HMC.init`` does; the third value is its batched ``ParamInfo``
    ``(z, potential_energy, z_grad)``). ``staged_init``: a :class:`StagedInit` of this model and init
    strategy kept by the caller (its compiled program serves every call of the same data shapes);
    by default a new one.
    """
    from numpyro import handlers
    from numpyro.distributions import biject_to
    from numpyro.infer.util import get_potential_fn, initialize_model

    if start is not None:
        trace = handlers.trace(handlers.substitute(handlers.seed(model, 0), data=start)).get_trace(*data)
        inv_transforms = {
            k: biject_to(site["fn"].support)
            for k, site in trace.items()
            if site["type"] == "sample" and not site["is_observed"]
        }
        potential_gen, postprocess_gen = get_potential_fn(model, inv_transforms, replay_model=True, dynamic_args=True)
        init = None
    else:
        staged = (staged_init or StagedInit(model, init_strategy))(init_keys, data)
        if staged is not None:
            potential_gen, postprocess_gen, init, observed = staged
            return ModelTarget(_call(potential_gen), _call(postprocess_gen), init, observed)
        info = initialize_model(init_keys, model, model_args=data, dynamic_args=True, **_init_kwargs(init_strategy))
        potential_gen, postprocess_gen = info.potential_fn, info.postprocess_fn
        init, trace = info.param_info, info.model_trace
    observed = {k: site["value"] for k, site in trace.items() if site["type"] == "sample" and site["is_observed"]}
    return ModelTarget(_call(potential_gen), _call(postprocess_gen), init, observed)


def _init_kwargs(init_strategy: Any) -> dict[str, Any]:
    """``initialize_model``'s keyword for ``init_strategy`` (none: NumPyro's default, ``init_to_uniform``)."""
    return {} if init_strategy is None else {"init_strategy": init_strategy}


def _call(gen: Callable[..., Any]) -> Callable[[Any, Any], Any]:
    """``(z, args) -> gen(*args)(z)``: NumPyro's ``dynamic_args`` functions in the driver's form."""

    def call(z: Any, args: Any) -> Any:
        return gen(*args)(z)

    return call


class StagedInit:
    """NumPyro's ``initialize_model`` of ``model(*data)`` as one compiled program (kept for later calls).

    Run eagerly, ``initialize_model`` traces the model op by op: each new operation shape is an XLA
    compilation of its own (about 40-120 for a fit's model, a third of a small fit's time in a fresh
    process), before the chains' starts are searched in a compiled ``lax.map``. Here the same call
    (the same keys, init strategy and arithmetic, so the same starts up to floating-point order) runs
    inside one ``jax.jit``, compiled once per data shape: a later call with other data of the same
    shapes compiles nothing. Its potential and postprocess functions, built while tracing, are kept
    when they hold no traced value: the model has no ``param`` or ``mutable`` site, no discrete
    latent site, and no latent site's support depends on a traced value (a constraint is a pytree;
    its leaves are checked), and the model can be traced abstractly (no JAX tracer error: a model
    that branches on a value, or calls NumPy on one, is served eagerly). Calling returns None where
    that does not hold, or where a chain found no valid start (NumPyro's eager call then raises its
    own error, with the sites' validation warnings): the caller falls back to the eager
    ``initialize_model``. Any other error while tracing is the model's own and is raised at once.
    """

    def __init__(self, model: Callable[..., Any], init_strategy: Any = None) -> None:
        import jax
        import jax.numpy as jnp
        from numpyro.infer.util import initialize_model

        kwargs = _init_kwargs(init_strategy)
        self._box: dict[str, Any] = {}
        self.usable: bool | None = None  # unknown until the first trace

        def staged(keys: Any, args: tuple[Any, ...]) -> Any:
            info = initialize_model(keys, model, model_args=args, dynamic_args=True, **kwargs)
            self._box["info"] = info
            valid = jnp.all(jnp.isfinite(info.param_info.potential_energy))
            for g in jax.tree_util.tree_leaves(info.param_info.z_grad):
                valid = valid & jnp.all(jnp.isfinite(g))
            observed = {
                k: site["value"]
                for k, site in info.model_trace.items()
                if site["type"] == "sample" and site["is_observed"]
            }
            return info.param_info, valid, observed

        self._staged = jax.jit(staged)

    @staticmethod
    def _closed(trace: Any) -> bool:
        import jax

        for site in trace.values():
            if site["type"] in ("param", "mutable"):
                return False
            if site["type"] == "sample" and not site["is_observed"]:
                support = site["fn"].support
                leaves = jax.tree_util.tree_leaves(support)
                if support.is_discrete or any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
                    return False
        return True

    def __call__(self, init_keys: Any, data: tuple[Any, ...]) -> tuple[Any, Any, Any, dict[str, Any]] | None:
        """``(potential_gen, postprocess_gen, ParamInfo, observed)``, or None: use the eager call."""
        if self.usable is False:
            return None
        import jax

        try:
            param_info, valid, observed = self._staged(init_keys, data)
        except (jax.errors.JAXTypeError, jax.errors.JAXIndexError):
            # a model that needs concrete values (Python control flow on a value, NumPy on a traced
            # array, a value-dependent boolean index): the eager call serves it. Any other error is
            # the model's own, raised here once rather than traced again eagerly.
            self.usable = False
            return None
        info = self._box["info"]
        if self.usable is None:
            self.usable = self._closed(info.model_trace)
        if not self.usable or not bool(valid):
            return None
        return info.potential_fn, info.postprocess_fn, param_info, observed


class NutsStep(NamedTuple):
    """NumPyro's NUTS as one Gibbs step inside another sampler (:func:`nuts_step`)."""

    init_kernel: Callable[..., Any]
    sample_kernel: Callable[..., Any]
    potential_gen: Callable[..., Any]
    postprocess_gen: Callable[..., Any]
    z_shapes: dict[str, Any]


def nuts_step(model: Callable[..., Any], example_args: tuple[Any, ...]) -> NutsStep:
    """NumPyro's NUTS kernel on ``model``, whose arguments are the data a Gibbs step conditions on.

    ``model(*args)`` is traced with ``example_args`` (their shapes and dtypes) and its potential and
    postprocessing are generated per call from the current ``args`` (``dynamic_args=True``), so another
    sampler can alternate its own moves with NUTS steps on ``model``'s parameters given them (the
    integer hierarchy's count sweeps). This module is where the package reaches NumPyro's HMC internals.
    """
    from jax import random
    from numpyro.infer.hmc import hmc
    from numpyro.infer.util import initialize_model

    info = initialize_model(random.PRNGKey(0), model, model_args=example_args, dynamic_args=True)
    init_kernel, sample_kernel = hmc(potential_fn_gen=info.potential_fn, algo="NUTS")
    return NutsStep(init_kernel, sample_kernel, info.potential_fn, info.postprocess_fn, info.param_info.z)
