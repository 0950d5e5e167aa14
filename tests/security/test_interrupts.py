"""Ctrl-C during copula.fit and dirichlet.fit (issue 11): an interrupted fit raises, never returns a partial result.

No real signal is sent: a ``KeyboardInterrupt`` is raised from inside the sampling loop, where a
Ctrl-C lands (PyMC: in the NUTS step; NumPyro: between the chunks of the compiled run).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import noiseaware as na
from noiseaware._engine import InterruptGuard
from noiseaware.copula import fit
from noiseaware.datasets import simulate_gaussian_copula

pm = pytest.importorskip("pymc")


@pytest.fixture(scope="module")
def release_p2() -> na.Release:
    rng = np.random.default_rng(3)
    x = simulate_gaussian_copula(200, np.array([[1.0, 0.4], [0.4, 1.0]]), (stats.norm(), stats.norm()), rng)
    return na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=rng)


def _interrupt_nuts_at(monkeypatch: pytest.MonkeyPatch, call: int) -> list[int]:
    """Make PyMC's NUTS raise KeyboardInterrupt in its ``call``-th step (as a Ctrl-C there would)."""
    calls = [0]
    step = pm.NUTS.step

    def interrupted_step(self, point):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == call:
            raise KeyboardInterrupt
        return step(self, point)

    monkeypatch.setattr(pm.NUTS, "step", interrupted_step)
    return calls


def test_injected_interrupt_reproduces_pymc_partial_trace(monkeypatch) -> None:
    """The injection reproduces the bug: plain pm.sample swallows it and returns fewer draws, no error."""
    _interrupt_nuts_at(monkeypatch, 30)
    with pm.Model():
        pm.Normal("x")
        idata = pm.sample(draws=40, tune=10, chains=1, cores=1, progressbar=False, random_seed=0,
                          compute_convergence_checks=False)
    assert idata.posterior.sizes["draw"] == 19  # 29 iterations recorded, 10 of them warmup


@pytest.mark.parametrize(
    ("call", "chains"),
    [
        (35, 2),  # in chain 0's draws: PyMC would return 15 of 30 draws for one chain
        (8, 1),  # in warmup: PyMC would raise ValueError("Not enough samples to build a trace.")
        (65, 2),  # in chain 1: chain 0 complete, chain 1 cut short
    ],
    ids=["draws", "warmup", "second-chain"],
)
@pytest.mark.slow  # make test-full: a PyMC model compiled per case (28 s for one); the NumPyro ones stay fast
def test_pymc_fit_reraises_keyboard_interrupt(monkeypatch, release_p2, call, chains) -> None:
    calls = _interrupt_nuts_at(monkeypatch, call)
    with pytest.raises(KeyboardInterrupt, match="interrupted") as info:
        fit(release_p2, backend="pymc", chains=chains, draws=30, warmup=20, seed=1, progressbar=False, cores=1,
            nuts_sampler="pymc")
    assert "of 50 iterations" in str(info.value)
    # Ctrl-C stops the fit: a later chain runs one step at most, not its full 50
    assert calls[0] <= call + chains


@pytest.mark.slow  # PyMC compiles the Dirichlet model (make test-slow); the copula PyMC interrupt test stays fast
def test_dirichlet_pymc_fit_reraises_keyboard_interrupt(monkeypatch) -> None:
    from noiseaware import dirichlet

    x = np.random.default_rng(4).dirichlet([2.0, 3.0, 4.0], size=300)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, threshold=0.01)
    _interrupt_nuts_at(monkeypatch, 35)
    with pytest.raises(KeyboardInterrupt, match=r"dirichlet\.fit: PyMC sampling was interrupted"):
        dirichlet.fit(rel, backend="pymc", moments="asymptotic", chains=1, draws=30, warmup=20, seed=1,
                      progressbar=False, cores=1)


def test_guard_flags_any_short_chain() -> None:
    """The check PyMC's multiprocess route relies on (its workers swallow the interrupt too)."""
    guard = InterruptGuard(2, 5, sequential=False)

    class Draw:
        def __init__(self, chain: int) -> None:
            self.chain = chain

    for chain in (0, 1, 0, 1, 0, 1, 0, 1, 0):  # chain 1 stops at 4 of 5
        guard(trace=None, draw=Draw(chain))
    with pytest.raises(KeyboardInterrupt, match="5, 4 of 5"):
        guard.check()
    guard(trace=None, draw=Draw(1))
    guard.check()  # complete: no error
    # sequential chains: a chain that starts while an earlier one is short means PyMC moved on
    seq = InterruptGuard(2, 5, sequential=True)
    seq(trace=None, draw=Draw(0))
    with pytest.raises(KeyboardInterrupt):
        seq(trace=None, draw=Draw(1))


@pytest.mark.parametrize("progressbar", [True, False])
def test_numpyro_fit_propagates_keyboard_interrupt(monkeypatch, release_p2, progressbar) -> None:
    """copula.fit (NumPyro) runs its NUTS in chunks from Python; an interrupt between chunks propagates.

    A single compiled program over all iterations would hold Ctrl-C until the whole run ends; the
    chunked run (the engine's NUTS driver) returns to Python (``after_chunk``) at most ``CHUNKS`` times,
    where the interrupt lands.
    """
    from noiseaware._engine import _nuts

    calls = []

    def interrupted(bar: object, done: int) -> None:
        calls.append(done)
        if len(calls) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(_nuts, "after_chunk", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fit(release_p2, chains=1, draws=20, warmup=20, seed=1, progressbar=progressbar)
    assert calls[:3] == [2, 4, 6]  # 40 iterations in 20 chunks of 2: it stopped after the third
