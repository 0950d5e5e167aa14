"""PyMC runs that cannot end silently short: ``pymc_sample``, its NUTS implementation and its interrupt guard.

PyMC catches ``KeyboardInterrupt`` inside its sampling loops (``pymc.sampling.mcmc._sample`` per
chain and ``_mp_sample`` for worker processes) and returns the draws made so far, cut to a common
length, or raises ``ValueError("Not enough samples to build a trace.")`` when the interrupt came
during warmup; nutpie returns the draws made so far too. :func:`pymc_sample` wraps ``pm.sample``
so that an interrupted run raises ``KeyboardInterrupt`` instead of returning a partial trace.

``pm.sample(nuts_sampler=...)`` runs the same PyMC model with another NUTS implementation: nutpie
(Rust, the optional extra ``pip install 'noiseaware[pymc-fast]'``) or NumPyro (through PyMC's JAX
conversion of the model's log-density). :func:`nuts_sampler_choice` picks the fastest installed
one by default (``docs/benchmarks.md``, "pymc_backend_speed").
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .. import _validation as v
from .._validation import current_owner
from ..exceptions import NoiseawareValueError
from ._settings import SamplingSettings

__all__ = [
    "NUTS_SAMPLERS",
    "InterruptGuard",
    "default_cores",
    "nuts_sampler_choice",
    "pymc_cores",
    "pymc_sample",
]

#: The NUTS implementations ``pymc_sample`` can run a PyMC model with (``"auto"``: the fastest installed).
NUTS_SAMPLERS = ("auto", "nutpie", "numpyro", "pymc")
#: nutpie compiles the model's log-density and gradient through PyTensor's JAX backend: its default
#: (Numba) compiles the covariance model many times slower (docs/benchmarks.md, "PyMC backend at NumPyro's speed").
NUTPIE_KWARGS = {"backend": "jax", "gradient_backend": "jax"}


class InterruptGuard:
    """``pm.sample`` callback that turns an interrupt PyMC swallowed back into ``KeyboardInterrupt``.

    PyMC catches ``KeyboardInterrupt`` inside its sampling loops (``pymc.sampling.mcmc._sample``
    per chain and ``_mp_sample`` for worker processes) and returns the draws made so far, cut to a
    common length, or raises ``ValueError("Not enough samples to build a trace.")`` when the
    interrupt came during warmup. The guard counts the iterations each chain reports to the
    callback; :meth:`check` raises ``KeyboardInterrupt`` if any chain stopped short. With chains
    run one after another in-process, PyMC moves on to the next chain after an interrupt; the
    guard then interrupts each later chain at its first iteration so that Ctrl-C stops the fit
    at once.
    """

    def __init__(self, chains: int, iterations: int, *, sequential: bool) -> None:
        self.owner = current_owner()
        self.iterations = iterations
        self.counts = [0] * chains
        self.sequential = sequential
        self.interrupted = False

    def __call__(self, *, trace: Any, draw: Any) -> None:
        chain = int(draw.chain)
        self.counts[chain] += 1
        if self.sequential and any(c < self.iterations for c in self.counts[:chain]):
            self.interrupted = True  # an earlier chain stopped short: PyMC swallowed an interrupt
        if self.interrupted:
            raise KeyboardInterrupt

    def check(self, cause: BaseException | None = None) -> None:
        """Raise ``KeyboardInterrupt`` if sampling stopped before every chain finished."""
        if self.interrupted or any(c < self.iterations for c in self.counts):
            done = ", ".join(str(c) for c in self.counts)
            raise KeyboardInterrupt(
                f"{self.owner}: PyMC sampling was interrupted; the chains ran {done} of {self.iterations} "
                "iterations (warmup + draws) each, so no result is returned."
            ) from cause


def default_cores(chains: int) -> int:
    """PyMC's worker processes when the caller gave none: one per chain up to the CPU count, or 1 next to JAX.

    Forking a process in which JAX has started its threads can deadlock, and "spawn" re-runs an
    unguarded ``__main__`` script: the chains then run one after another in-process.
    """
    return 1 if "jax" in sys.modules else min(chains, os.cpu_count() or 1)


def pymc_cores(backend: str, cores: int | None) -> int | None:
    """The fits' one reading of ``cores`` (``_settings.CORES_DOC``): checked for PyMC, refused for NumPyro.

    None stays None: :func:`pymc_sample` reads it as :func:`default_cores`. A value other than None
    with ``backend="numpyro"`` raises :class:`~noiseaware.exceptions.NoiseawareValueError` (NumPyro
    vectorizes the chains in one process; a silently ignored ``cores`` would mislead).
    """
    if cores is None:
        return None
    if backend != "pymc":
        raise NoiseawareValueError(f"{current_owner()}: cores applies to backend='pymc' only; got cores={cores!r}.")
    return v.integer("cores", cores, minimum=1)


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def nuts_sampler_choice(nuts_sampler: str = "auto") -> str:
    """The NUTS implementation of a PyMC run: ``nuts_sampler`` checked, ``"auto"`` resolved.

    ``"auto"`` is nutpie when it is installed, else NumPyro (a dependency of the package), else
    PyMC's own NUTS. All three sample the same log-density (``tests/test_pymc_samplers.py`` checks
    each against an exact grid posterior and the NumPyro backend); ``docs/benchmarks.md``, "PyMC
    backend at NumPyro's speed", compares their times per effective draw.

    Raises
    ------
    NoiseawareValueError
        For a name not in :data:`NUTS_SAMPLERS`, or ``"nutpie"`` when nutpie is not installed
        (the message names the extra that installs it).

    Examples
    --------
    >>> nuts_sampler_choice("pymc")
    'pymc'
    """
    from .. import _validation as v
    from ..exceptions import NoiseawareValueError

    owner = current_owner()
    v.choice("nuts_sampler", nuts_sampler, NUTS_SAMPLERS)
    if nuts_sampler == "auto":
        return next(name for name in ("nutpie", "numpyro", "pymc") if name == "pymc" or _installed(name))
    if nuts_sampler != "pymc" and not _installed(nuts_sampler):
        raise NoiseawareValueError(
            f"{owner}: nuts_sampler={nuts_sampler!r} needs the {nuts_sampler} package, which is not installed; "
            "install it (pip install 'noiseaware[pymc-fast]') or use nuts_sampler='auto'."
        )
    return nuts_sampler


def pymc_sample(
    settings: SamplingSettings, *, cores: int | None, nuts_sampler: str = "auto", **kwargs: Any
) -> Any:
    """``pm.sample`` at the run's ``settings`` that re-raises a swallowed interrupt: the package's one call.

    Must be called inside a PyMC model context. ``settings`` gives ``draws``, ``tune`` (its
    ``warmup``), ``chains``, ``random_seed``, ``progressbar`` and ``target_accept``; ``kwargs``
    go to ``pm.sample`` as they are (e.g. ``compute_convergence_checks=False``); ``cores=None`` means
    :func:`default_cores` (PyMC's own NUTS only; nutpie runs its chains in threads and NumPyro
    vectorizes them). ``nuts_sampler`` is ``pm.sample``'s: ``"auto"`` (default, the fastest
    installed, :func:`nuts_sampler_choice`), ``"nutpie"`` (its JAX backend), ``"numpyro"`` or
    ``"pymc"``; the implementation used is recorded in ``idata.attrs["noiseaware_nuts_sampler"]``.
    Raises ``KeyboardInterrupt`` (naming the current owner and the iterations each chain ran) if any chain
    stopped before ``warmup + draws`` iterations.
    """
    import pymc as pm

    sampler = nuts_sampler_choice(nuts_sampler)
    chains, tune, draws = settings.chains, settings.warmup, settings.draws
    common = {
        "draws": draws,
        "tune": tune,
        "chains": chains,
        "random_seed": settings.seed,
        "progressbar": settings.progressbar,
        "target_accept": settings.target_accept,
        **kwargs,
    }
    if sampler != "pymc":
        if sampler == "nutpie":
            import pymc.sampling.jax  # registers PyMC's JAX conversions of its Ops (LKJCorr's check)

            common = _with_nutpie_backend(common)
        idata = pm.sample(nuts_sampler=sampler, **common)
        _check_complete(idata, chains, draws)
        idata.attrs["noiseaware_nuts_sampler"] = sampler
        return idata
    cores = default_cores(chains) if cores is None else cores
    guard = InterruptGuard(chains, tune + draws, sequential=cores == 1 or chains == 1)
    try:
        idata = pm.sample(cores=cores, callback=guard, **common)
    except ValueError as exc:
        if "Not enough samples" in str(exc):  # PyMC's answer to an interrupt during warmup
            guard.check(exc)
        raise
    guard.check()
    idata.attrs["noiseaware_nuts_sampler"] = "pymc"
    return idata


def _with_nutpie_backend(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``pm.sample``'s keywords ``kwargs`` with nutpie's backends set to :data:`NUTPIE_KWARGS` (JAX).

    PyMC >= 6 takes them as ``pm.sample(backend="jax", compile_kwargs={"gradient_backend": "jax"})``
    and deprecates ``nuts_sampler_kwargs`` (``FutureWarning``); PyMC 5 has no ``backend`` argument and
    reads both from ``nuts_sampler_kwargs``. Told apart by ``pm.sample``'s signature.
    """
    import inspect

    import pymc as pm

    out = dict(kwargs)
    if "backend" in inspect.signature(pm.sample).parameters:  # PyMC >= 6
        out["backend"] = NUTPIE_KWARGS["backend"]
        out["compile_kwargs"] = {**out.get("compile_kwargs", {}), "gradient_backend": NUTPIE_KWARGS["gradient_backend"]}
    else:  # PyMC 5
        out["nuts_sampler_kwargs"] = {**out.get("nuts_sampler_kwargs", {}), **NUTPIE_KWARGS}
    return out


def _check_complete(idata: Any, chains: int, draws: int) -> None:
    """Raise ``KeyboardInterrupt`` if an external sampler returned fewer chains or draws than asked.

    A chain cut short in a trace padded to a common length shows as non-finite draws: NUTS draws
    are finite, so any NaN in the posterior counts as an interrupted run too.
    """
    import numpy as np

    from ._host import group

    owner = current_owner()
    post = group(idata, "posterior")
    sizes = post.sizes
    finite = all(bool(np.all(np.isfinite(np.asarray(x, dtype=float)))) for x in post.data_vars.values())
    if sizes.get("chain") != chains or sizes.get("draw") != draws or not finite:
        raise KeyboardInterrupt(
            f"{owner}: sampling was interrupted; it returned {sizes.get('chain')} chains of {sizes.get('draw')} draws "
            f"where {chains} of {draws} were asked{'' if finite else ', some of them not finite'}, so no result is "
            "returned."
        )
