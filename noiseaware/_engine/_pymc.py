"""PyMC runs that cannot end silently short: ``pymc_sample`` and its interrupt guard (engine, private).

PyMC catches ``KeyboardInterrupt`` inside its sampling loops (``pymc.sampling.mcmc._sample`` per
chain and ``_mp_sample`` for worker processes) and returns the draws made so far, cut to a common
length, or raises ``ValueError("Not enough samples to build a trace.")`` when the interrupt came
during warmup. :func:`pymc_sample` wraps ``pm.sample`` so that an interrupted run raises
``KeyboardInterrupt`` instead of returning a partial trace.
"""

from __future__ import annotations

from typing import Any

__all__ = ["InterruptGuard", "pymc_sample"]


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


def pymc_sample(owner: str, *, draws: int, tune: int, chains: int, cores: int, **kwargs: Any) -> Any:
    """``pm.sample(draws=..., tune=..., chains=..., cores=..., **kwargs)`` that re-raises a swallowed interrupt.

    Must be called inside a PyMC model context. Raises ``KeyboardInterrupt`` (naming ``owner`` and the
    iterations each chain ran) if any chain stopped before ``tune + draws`` iterations.
    """
    import pymc as pm

    guard = InterruptGuard(chains, tune + draws, sequential=cores == 1 or chains == 1, owner=owner)
    try:
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=cores, callback=guard, **kwargs)
    except ValueError as exc:
        if "Not enough samples" in str(exc):  # PyMC's answer to an interrupt during warmup
            guard.check(exc)
        raise
    guard.check()
    return idata
