"""Examples run as documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_curator_example_runs() -> None:
    res = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "curator_release.py")], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    assert "round-tripped pairs.json" in res.stdout and "remaining: 0.0" in res.stdout
