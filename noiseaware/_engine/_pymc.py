"""PyMC runs that cannot end silently short: ``pymc_sample`` and its interrupt guard (engine, private).

PyMC catches ``KeyboardInterrupt`` inside its sampling loops (``pymc.sampling.mcmc._sample`` per
chain and ``_mp_sample`` for worker processes) and returns the draws made so far, cut to a common
length, or raises ``ValueError("Not enough samples to build a trace.")`` when the interrupt came
during warmup. :func:`pymc_sample` wraps ``pm.sample`` so that an interrupted run raises
``KeyboardInterrupt`` instead of returning a partial trace.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ._settings import SamplingSettings

__all__ = ["InterruptGuard", "default_cores", "pymc_sample"]


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

    def __init__(self, chains: int, iterations: int, *, sequential: bool, owner: str = "fit") -> None:
        self.owner = owner
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


def pymc_sample(owner: str, settings: SamplingSettings, *, cores: int | None, **kwargs: Any) -> Any:
    """``pm.sample`` at the run's ``settings`` that re-raises a swallowed interrupt: the package's one call.

    Must be called inside a PyMC model context. ``settings`` gives ``draws``, ``tune`` (its
    ``warmup``), ``chains``, ``random_seed``, ``progressbar`` and ``target_accept``; ``kwargs``
    go to ``pm.sample`` as they are (e.g. ``compute_convergence_checks=False``); ``cores=None`` means
    :func:`default_cores`. Raises
    ``KeyboardInterrupt`` (naming ``owner`` and the iterations each chain ran) if any chain stopped
    before ``warmup + draws`` iterations.
    """
    import pymc as pm

    chains, tune, draws = settings.chains, settings.warmup, settings.draws
    cores = default_cores(chains) if cores is None else cores
    guard = InterruptGuard(chains, tune + draws, sequential=cores == 1 or chains == 1, owner=owner)
    try:
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=settings.seed,
            progressbar=settings.progressbar,
            target_accept=settings.target_accept,
            callback=guard,
            **kwargs,
        )
    except ValueError as exc:
        if "Not enough samples" in str(exc):  # PyMC's answer to an interrupt during warmup
            guard.check(exc)
        raise
    guard.check()
    return idata
