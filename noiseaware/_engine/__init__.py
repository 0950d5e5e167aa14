r"""The sampling engine: one convention, one result type, shared machinery (private).

Every fit of the package builds on these pieces, so that they behave alike:

* :class:`SamplingSettings` / :func:`check_settings` -- the sampler arguments every fit takes,
  keyword-only and with one set of defaults (the dataclass's field defaults: ``chains=4, draws=1000,
  warmup=1000, seed=None, progressbar=False, target_accept=None, check_mixing=True``), spelled out
  in each fit's signature and docs in one wording (:data:`~._settings.SAMPLING_DOC`), validated with
  one message shape;
* :mod:`._host` / :mod:`._result` -- every fit returns the host stack's own container (an
  ``xarray.DataTree`` under ArviZ 1, an ``InferenceData`` under ArviZ 0.x) with its settings in
  ``attrs``; :func:`summary`, :func:`interval`, :func:`draws`, :func:`plot`, :func:`diagnostics`
  and :func:`settings` read it (public as :mod:`noiseaware.results`);
* :func:`check_mixing` -- bulk ESS and R-hat (Vehtari et al. 2021), one
  :class:`~noiseaware.exceptions.MixingWarning` text; :func:`finish_fit` -- the end every fit
  shares (:func:`record_run`, the result, the mixing check when asked);
* :mod:`._adapt` -- dual averaging and the warmup-then-freeze step-size adaptation of the package's
  own Metropolis moves (the joint moves of ``augment`` and ``dirichlet.dpmcmc``); imported on
  demand (it needs JAX);
* :class:`ProgramCache` -- compile once, with the data as arguments; :func:`jit` -- ``jax.jit`` with
  the XLA:CPU options the samplers run fastest with;
* :func:`build_nuts` (:mod:`._nuts`) -- the one NUTS driver: a potential with the data as
  arguments (or a NumPyro model, :func:`model_potential`), chains over devices, a chunked run that
  Ctrl-C interrupts; :func:`numpyro_nuts` runs it on a NumPyro model; :mod:`._precondition`
  (Laplace / diagonal preconditioners), :mod:`._memory` (memory planning) and :mod:`._reorder`
  (variable reordering) are its parts any fit can use;
* :func:`pymc_sample` -- the one ``pm.sample`` call: at a :class:`SamplingSettings`, with the NUTS
  implementation of :func:`nuts_sampler_choice` (nutpie, NumPyro or PyMC's own), and never
  ending silently short on Ctrl-C.

See ``docs/architecture.md`` ("Sampling convention").
"""

from __future__ import annotations

from ._cache import ProgramCache
from ._compile import jit
from ._devices import chain_groups
from ._host import arviz_major, from_groups, group, group_names, has_group, is_result, set_group
from ._mixing import AUGMENTATION_ADVICE, ESS_PER_CHAIN, NUTS_ADVICE, RHAT_MAX, MixingBlock, check_mixing
from ._numpyro import numpyro_nuts, realize_lazy_numpyro
from ._nuts import NutsDraws, NutsProgramSpec, build_nuts, model_potential
from ._pymc import NUTS_SAMPLERS, InterruptGuard, default_cores, nuts_sampler_choice, pymc_cores, pymc_sample
from ._result import (
    diagnostics,
    draws,
    finish_fit,
    fit_kind,
    interval,
    plot,
    record_run,
    release,
    release_attrs,
    settings,
    standard_stats,
    summary,
)
from ._settings import (
    NUTS_TARGET_ACCEPT,
    RWM_TARGET_ACCEPT,
    SamplingSettings,
    check_settings,
)

__all__ = [
    "ESS_PER_CHAIN",
    "NUTS_TARGET_ACCEPT",
    "RHAT_MAX",
    "RWM_TARGET_ACCEPT",
    "NUTS_SAMPLERS",
    "InterruptGuard",
    "NutsProgramSpec",
    "NutsDraws",
    "ProgramCache",
    "SamplingSettings",
    "chain_groups",
    "check_mixing",
    "MixingBlock",
    "NUTS_ADVICE",
    "AUGMENTATION_ADVICE",
    "build_nuts",
    "check_settings",
    "default_cores",
    "finish_fit",
    "pymc_cores",
    "jit",
    "model_potential",
    "numpyro_nuts",
    "nuts_sampler_choice",
    "pymc_sample",
    "record_run",
    "standard_stats",
    "arviz_major",
    "diagnostics",
    "draws",
    "fit_kind",
    "from_groups",
    "group",
    "group_names",
    "has_group",
    "interval",
    "is_result",
    "plot",
    "release",
    "realize_lazy_numpyro",
    "release_attrs",
    "set_group",
    "settings",
    "summary",
]

realize_lazy_numpyro()  # every fit imports the engine before NumPyro: ArviZ 1 may have left a lazy stub
