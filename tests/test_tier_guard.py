"""The contributor tier's time guard (tests/tier_guard.py) fails a run whose test is over budget, and only then."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUDGET = 0.2


def _over_budget() -> float:
    """A sleep well over the budget at today's load allowance (the guard scales the budget by load per core)."""
    allowance = max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    return min(4 * BUDGET * allowance, 15.0)

TESTS = """
import time
import pytest

def test_quick():
    pass

def test_long():
    time.sleep(SLEEP)

@pytest.mark.slow
def test_long_but_slow():
    time.sleep(SLEEP)
"""


def _run(tmp_path: pathlib.Path, sleep: float, *args: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_inner.py"
    test.write_text(TESTS.replace("SLEEP", repr(sleep)))
    env = {**os.environ, "NOISEAWARE_TIER_SECONDS": str(BUDGET)}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p", "tests.tier_guard", str(test), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )


def test_a_tier_test_over_budget_fails_the_run(tmp_path: pathlib.Path) -> None:
    out = _run(tmp_path, _over_budget(), "-m", "not slow")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "2 passed" in out.stdout and f"contributor tier: 1 test(s) over {BUDGET:g} s" in out.stdout
    assert "test_inner.py::test_long" in out.stdout and "test_quick" not in out.stdout.split("contributor tier")[1]


def test_within_budget_or_outside_the_tier_passes(tmp_path: pathlib.Path) -> None:
    assert _run(tmp_path, 0.0, "-m", "not slow").returncode == 0
    full = _run(tmp_path, _over_budget(), "-m", "slow")  # make test-full is not guarded
    assert full.returncode == 0 and "contributor tier" not in full.stdout


def test_the_allowance_is_the_load_while_the_test_ran(monkeypatch) -> None:
    """A test that ran while the machine was busy gets that load's allowance; one on a quiet machine does not."""
    from types import SimpleNamespace

    from tests import tier_guard as g

    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("NOISEAWARE_TIER_SECONDS", raising=False)
    monkeypatch.setattr(g, "_durations", {"busy": 30.0, "quiet": 30.0})
    monkeypatch.setattr(g, "_loads", {"busy": 2.0, "quiet": 0.5})  # load per core when each test's reports came
    monkeypatch.setattr(g, "_load_start", [0.5])
    monkeypatch.setattr(g, "_load_per_core", lambda: 0.5)  # quiet again at the end
    lines: list[str] = []
    writer = SimpleNamespace(line=lambda text, **kw: lines.append(text))
    config = SimpleNamespace(getoption=lambda name, default="": "not slow", get_terminal_writer=lambda: writer)
    session = SimpleNamespace(config=config, exitstatus=0)
    g.pytest_sessionfinish(session, 0)
    assert session.exitstatus == 1
    text = "\n".join(lines)
    assert "quiet" in text and "busy" not in text  # 30 s > 20 s x 1; 30 s < 20 s x 2
