"""The three dapper examples (seed 001 §5) run end to end in quick mode and write their figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(script: str, tmp_path: Path, *extra: str) -> str:
    res = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), "--quick", "--out", str(tmp_path), *extra],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    return res.stdout


@pytest.mark.parametrize(
    ("script", "extra", "figure"),
    [
        pytest.param("dapper_ucb_rr.py", (), "dapper_ucb_rr_ucb.png", marks=pytest.mark.slow),
        pytest.param(
            "dapper_ucb_dgauss.py",
            ("--data", "dapper", "--theta", "conjugate"),
            "dapper_ucb_dgauss_dapper.png",
            marks=pytest.mark.slow,
        ),
        pytest.param("dapper_regression.py", (), "dapper_regression.png", marks=pytest.mark.slow),
    ],
)
def test_dapper_example_runs(script: str, extra: tuple[str, ...], figure: str, tmp_path: Path) -> None:
    out = run(script, tmp_path, *extra)
    assert "noise-aware posterior" in out and "naive (noise ignored)" in out and "confidential data" in out
    for column in ("mean", "sd", "q5", "q95", "rhat", "ess_bulk"):
        assert column in out
    assert (tmp_path / figure).stat().st_size > 10_000
