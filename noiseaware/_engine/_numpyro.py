"""NUTS on a NumPyro model function, through the package's one driver (:mod:`._nuts`)."""

from __future__ import annotations

import functools
import importlib.util
import sys
from collections.abc import Callable, Hashable
from typing import Any

from ._cache import ProgramCache
from ._settings import SamplingSettings

__all__ = ["PROGRAMS", "numpyro_nuts", "realize_lazy_numpyro"]


def realize_lazy_numpyro() -> None:
    """Load NumPyro now if another package registered it lazily and it has not loaded yet.

    ArviZ 1 registers ``numpyro`` in ``sys.modules`` as a lazy module (``lazy_loader``) when ArviZ is
    imported. Importing a NumPyro submodule (``numpyro.distributions``) while that stub is unloaded
    leaves the package half built (``numpyro.distributions`` without its ``distribution`` attribute, so
    ``numpyro.factor`` fails). Touching an attribute of the stub runs NumPyro's own ``__init__`` first.
    Nothing is imported when NumPyro is not registered at all, so importing the engine stays light.
    """
    mod = sys.modules.get("numpyro")
    if mod is not None and isinstance(mod, getattr(importlib.util, "_LazyModule", ())):
        mod.__version__  # the attribute access executes the lazy module

#: The compiled initialization and NUTS programs of :func:`numpyro_nuts` fits given a ``cache_key``.
PROGRAMS = ProgramCache(maxsize=16)


def numpyro_nuts(
    model: Callable[..., None],
    settings: SamplingSettings,
    *,
    data: tuple[Any, ...] = (),
    cache_key: Hashable | None = None,
    init_strategy: Any = None,
) -> Any:
    """NUTS on ``model(*data)`` (a NumPyro model) at ``settings``, as the host's result (:func:`~._host.from_groups`).

    The run of ``numpyro.infer.MCMC(NUTS(model, target_accept_prob=...), chain_method="vectorized")``:
    the same per-chain keys (the seed's key split per chain, then as ``HMC.init`` does), each chain's
    start drawn by ``init_strategy`` (NumPyro's default ``init_to_uniform`` when None) through
    ``initialize_model`` (compiled as one program, :class:`~._nuts.StagedInit`), and NumPyro's NUTS
    kernel and warmup adaptation -- driven by :func:`~._nuts.build_nuts` (chains over the local
    devices, vectorized within a device, a chunked run that Ctrl-C interrupts). The posterior holds
    every latent and deterministic site; the sample statistics are named as every fit's
    (``accept_rate``, ``diverging``, ``n_steps``, ``tree_depth``, ``lp``); the observed sites are the
    ``observed_data`` group. No ``log_likelihood`` group (the covariance fits observe one joint vector
    of correlated entries, so there is no pointwise log-likelihood for ``az.loo`` to leave out).

    ``data`` are the model's arguments: arrays, never constants of the compiled programs. With a
    ``cache_key`` (hashable: everything that shapes ``model`` besides ``data``, e.g. the sizes and the
    noise family; the caller guarantees that one key means one model function of ``data``) the
    programs are kept in :data:`PROGRAMS` with the settings and the data's shapes, and a later fit
    of the same key, settings and shapes -- another release of the same size -- compiles nothing.
    """
    import jax
    import numpy as np
    import numpyro

    from ._devices import chain_groups
    from ._nuts import NutsProgramSpec, StagedInit, build_nuts, model_potential

    chains = settings.chains
    key = jax.random.PRNGKey(settings.seed)
    chain_keys = jax.random.split(key, chains) if chains > 1 else key[None]  # MCMC.run's keys
    pair = jax.vmap(jax.random.split)(chain_keys)  # HMC.init: (the kernel's key, the initial point's key)
    config = NutsProgramSpec(
        chains, settings.draws, settings.warmup, float(settings.target_accept), groups=chain_groups(chains),
        dense_mass=(), vectorize=True, keys="given",  # NUTS(model)'s structured form of dense_mass=False
    )

    def build() -> dict[str, Any]:
        return {"init": StagedInit(model, init_strategy), "run": None}  # the run: built at the first call

    if cache_key is None:
        entry = build()
    else:
        shapes = tuple((np.shape(a), np.result_type(a).str) for a in jax.tree.leaves(data))
        entry = PROGRAMS.get((cache_key, config, shapes, strategy_key(init_strategy)), build)
    target = model_potential(model, data, init_keys=pair[:, 1], init_strategy=init_strategy, staged_init=entry["init"])
    if entry["run"] is None:
        entry["run"] = build_nuts(target.potential, target.record, config)
    run = entry["run"]
    bar = None
    if settings.progressbar:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.total, desc=f"NUTS, {chains} chain(s)")
    try:
        init = target.init
        out = run(pair[:, 0], init.z, init.potential_energy, init.z_grad, (), data, bar)
    finally:
        if bar is not None:
            bar.close()
    stats = {k: out.stats[k] for k in ("lp", "n_steps", "tree_depth", "accept_rate", "diverging", "step_size")}
    from ._host import from_groups

    groups: dict[str, Any] = {"posterior": {k: np.asarray(x) for k, x in out.draws.items()}, "sample_stats": stats}
    if target.observed:
        groups["observed_data"] = {k: np.asarray(x) for k, x in target.observed.items()}
    return from_groups(
        groups, attrs={"inference_library": "numpyro", "inference_library_version": numpyro.__version__}
    )


def strategy_key(init_strategy: Any) -> Hashable:
    """What of an init strategy keys the compiled start: equal for equal strategies, unhashable if unknown.

    NumPyro's strategies are ``functools.partial`` objects made anew by each call
    (``init_to_median(num_samples=15)``), which compare by identity; the key is their function and
    arguments instead, so a second fit with an equal strategy reuses the compiled start. Arguments
    that cannot be hashed (``init_to_value(values={...})``) make the key unhashable, and
    :class:`~._cache.ProgramCache` then builds the programs for that call only: never a start kept
    for other values (a ``repr`` key would be, as NumPy shortens the ``repr`` of a large array).
    """
    if isinstance(init_strategy, functools.partial):
        keywords = tuple(sorted(init_strategy.keywords.items()))
        return ("partial", strategy_key(init_strategy.func), init_strategy.args, keywords)
    return init_strategy
