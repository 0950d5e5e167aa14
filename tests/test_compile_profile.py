"""``benchmarks/compile_profile.py``: the pytest plugin attributes compilation to the test that caused it.

An inner pytest run (its own process, outside the repository's conftest) loads the plugin on two
tests, one that compiles a JAX program and one that compiles nothing; the record must charge the
compilation to the first only, and the summary must read the record back.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

INNER = '''
import jax
import jax.numpy as jnp


def test_compiles():
    jax.jit(lambda x: jnp.sin(x) * 2.0 + 1.0)(jnp.arange(3.0)).block_until_ready()


def test_compiles_nothing():
    assert sum(range(4)) == 6
'''


def _module():
    spec = importlib.util.spec_from_file_location("compile_profile", BENCHMARKS / "compile_profile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("plugin_args", "process"), [(["-p", "no:xdist"], "main"), (["-n", "1"], "gw0")])
def test_each_compilation_is_charged_to_the_test_that_caused_it(
    tmp_path: Path, plugin_args: list[str], process: str
) -> None:
    """One record per process that ran tests: under xdist the worker's only (the controller's would count twice)."""
    (tmp_path / "test_inner.py").write_text(INNER)
    out = tmp_path / "profile"
    env = dict(os.environ, PYTHONPATH=str(BENCHMARKS), JAX_PLATFORMS="cpu")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin_args,
         "-p", "compile_profile", f"--compile-profile={out}", "test_inner.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in out.iterdir()) == [f"profile_{process}.json"]
    record = json.loads((out / f"profile_{process}.json").read_text())
    compiles = record["tests"]["test_inner.py::test_compiles"]
    idle = record["tests"]["test_inner.py::test_compiles_nothing"]
    assert compiles["compile_n"] >= 1 and compiles["compile"] > 0 and compiles["trace_n"] >= 1
    assert compiles["wall"] >= compiles["compile"]
    assert idle.get("compile_n", 0) == 0 and idle["wall"] > 0
    assert record["programs"]["jit(<lambda>)"][0] >= 1

    summary = _module().summarize(out)
    assert "2 tests" in summary
    assert "test_inner.py" in summary and "jit(<lambda>)" in summary


def test_summary_of_a_directory_without_a_profile_says_so(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no profile_"):
        _module().summarize(tmp_path)
