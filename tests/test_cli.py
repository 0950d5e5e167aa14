"""The command line and the package's import footprint."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd

from noiseaware.cli import main


def test_demo_prints_release_and_guarantee(capsys, tmp_path) -> None:
    out = tmp_path / "demo.json"
    assert main(["demo", "--n", "200", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Release of 'median_pairs' (n=200)" in text and "1-DP" in text and "true copula correlations" in text
    assert json.loads(out.read_text())["statistic"] == "median_pairs"


def test_release_and_show_commands(capsys, tmp_path) -> None:
    csv = tmp_path / "d.csv"
    pd.DataFrame(np.random.default_rng(0).normal(size=(30, 3)), columns=["a", "b", "c"]).to_csv(csv, index=False)
    out = tmp_path / "r.json"
    assert main(["release", str(csv), "--epsilon", "0.5", "--mechanism", "btgm", "-o", str(out)]) == 0
    assert main(["show", str(out)]) == 0
    text = capsys.readouterr().out
    assert "btgm" in text and "a x b" in text


def test_cli_reports_bad_input_without_traceback(capsys, tmp_path) -> None:
    csv = tmp_path / "d.csv"
    pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}).to_csv(csv, index=False)
    assert main(["release", str(csv), "--epsilon", "1", "-o", str(tmp_path / "r.json")]) == 2
    assert "non-numeric column(s) ['b']" in capsys.readouterr().err


def test_import_is_light() -> None:
    code = (
        "import sys, noiseaware; print(sorted(m for m in ('pymc', 'jax', 'pytensor', 'numpyro') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]"
