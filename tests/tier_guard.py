"""The contributor tier's time guard, a pytest plugin loaded by the root ``conftest.py``.

``make test`` (the tests not marked ``slow``) must stay a five-minute run on a fresh 2-core machine, so no single
test of it may grow large: each may take at most :data:`TIER_TEST_SECONDS` on its own -- setup (a shared fit's
compilation and sampling, charged to the first test that needs it), call and teardown together -- times the load
allowance ``max(1, load / cores)``, the 1-minute load average per core, the highest of those read at the session's
start, at its end and when the test's own reports arrived (a shared 2-core machine at load 4 allows 40 s: other jobs
on the machine slow a test down as much as a larger program would). A test over it fails the session, named with
its time: move it to ``make test-full`` (``@pytest.mark.slow``) or make it smaller. Only a run of the tier
(``-m "not slow"``) is guarded; ``NOISEAWARE_TIER_SECONDS`` sets another budget (``tests/test_tier_guard.py`` uses
it). Doctests, which cannot carry a marker, are put in the full tier here (:data:`FULL_TIER_DOCTESTS`).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

#: Doctests in the full tier (a doctest cannot carry a marker): their examples compile large programs.
FULL_TIER_DOCTESTS = {
    # the DPMCMC samplers compiled (11-16 s each); tests/conftest.py's dpmcmc fit keeps DPMCMC in make test
    "noiseaware.dirichlet._dpmcmc.dpmcmc_batch": "the batched DPMCMC sampler compiled (16 s)",
    "noiseaware.dirichlet._dpmcmc.dpmcmc": "the DPMCMC sampler compiled (11 s)",
    # hierarchy.fit's example runs the integer sampler (6 s); tests/hierarchy/test_integer.py runs it in make test
    "noiseaware.hierarchy._fit.fit": "the integer hierarchy sampler compiled (6 s)",
}

#: Test files whose tests share session fixtures (one compilation of every fit type, ``tests/conftest.py``) and
#: so run on one xdist worker: ``--dist loadfile`` keeps a file on one worker, and these files on the same one.
SHARED_WORKER = {
    "tests/test_arviz.py": "arviz-fits",
    "tests/test_arviz_clean.py": "arviz-fits",
    # the same dirichlet.dpmcmc fit as tests/conftest.py's: the engine's program cache serves it in one worker
    "tests/test_dirichlet_augment_result.py": "arviz-fits",
}

#: Seconds a test of the contributor's tier may take on its own, before the load allowance.
TIER_TEST_SECONDS = 20.0

_durations: dict[str, float] = {}
_loads: dict[str, float] = {}
_load_start: list[float] = []


def _load_per_core() -> float:
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # pragma: no cover - no load average on this platform
        return 0.0


def _budget_seconds() -> float:
    return float(os.environ.get("NOISEAWARE_TIER_SECONDS", TIER_TEST_SECONDS))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    for item in items:
        if item.name in FULL_TIER_DOCTESTS:
            item.add_marker(pytest.mark.slow)


def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    """``--dist loadfile`` with the files of :data:`SHARED_WORKER` as one unit (one worker compiles their fits).

    (``--dist loadgroup`` would do it with markers, but pytest-xdist 3.8 groups by ``item._nodeid``, which pytest 9
    no longer reads, so its groups are silently ignored.)
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedFileScheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return SHARED_WORKER.get(path, path)

    return SharedFileScheduling(config, log)


def pytest_sessionstart(session: Any) -> None:
    _load_start.append(_load_per_core())


def pytest_runtest_logreport(report: Any) -> None:
    # under xdist the controller receives every worker's reports: the guard runs there (and in a plain run)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + float(report.duration)
    _loads[report.nodeid] = max(_loads.get(report.nodeid, 0.0), _load_per_core())


def _guarded(session: Any) -> bool:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return False
    return (session.config.getoption("markexpr", "") or "").replace(" ", "") == "notslow"


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if not _guarded(session):
        return
    session_load = max(1.0, *_load_start, _load_per_core())
    seconds = _budget_seconds()
    allowance = {n: max(session_load, _loads.get(n, 0.0)) for n in _durations}
    over = sorted(((t, n) for n, t in _durations.items() if t > seconds * allowance[n]), reverse=True)
    if not over:
        return
    lines = "\n".join(f"  {t:6.1f} s  (load allowance {allowance[n]:.2f})  {n}" for t, n in over)
    session.config.get_terminal_writer().line(
        f"\ncontributor tier: {len(over)} test(s) over {seconds:g} s x load allowance "
        f"(setup + call + teardown); mark them slow (make test-full) or make them smaller:\n{lines}",
        red=True,
    )
    if session.exitstatus == 0:
        session.exitstatus = 1
