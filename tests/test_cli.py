"""The command line and the package's import footprint."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware.cli import main
from noiseaware.copula import mle_nn
from noiseaware.datasets import demo_copula_data

QUICK = ["--chains", "1", "--draws", "60", "--warmup", "60", "--seed", "0", "--no-progress"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("noiseaware: error: ") and "\n" not in err, err
    assert "Traceback" not in captured.err + captured.out
    return err


def test_demo_prints_truth_beside_both_estimates_then_fit_reads_its_release(capsys, tmp_path) -> None:
    out, png, png2 = tmp_path / "demo.json", tmp_path / "demo.png", tmp_path / "fit.png"
    assert main(["demo", "--n", "300", *QUICK, "--plot", str(png), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Release of 'median_pairs' (n=300)" in text and "1-DP" in text
    assert "separate releases, each with budget epsilon" in text and "BTGM" in text
    _, R, cols = demo_copula_data(n=300)
    # estimate rows carry an interval; release rows (noisy counts, possibly negative) do not
    rows = [line.split() for line in text.splitlines() if re.match(r"^\s+\w+ x \w+\s+[+-]\d.*\[", line)]
    assert len(rows) == 10
    # columns: pair (3 tokens) | truth | Bayes-NA | [lo, | hi] | covers | MLE-NN
    iu, ju = np.triu_indices(5, 1)
    for row, i, j in zip(rows, iu, ju, strict=True):
        assert row[0] == cols[i] and row[2] == cols[j]
        assert float(row[3]) == pytest.approx(R[i, j], abs=5e-4)  # the truth printed is the data set's truth
        lo, hi = float(row[5].strip("[,")), float(row[6].strip("]"))
        assert -1.0 <= lo <= hi <= 1.0 and -1.0 <= float(row[4]) <= 1.0
        truth = float(row[3])
        if min(abs(truth - lo), abs(truth - hi)) > 1e-3:  # printed values are rounded to 3 decimals
            assert row[7] == ("yes" if lo <= truth <= hi else "no")
        assert -1.0 <= float(row[8]) <= 1.0
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert json.loads(out.read_text())["statistic"] == "median_pairs"

    assert main(["fit", str(out), *QUICK, "--level", "0.9", "--plot", str(png2)]) == 0
    text = capsys.readouterr().out
    assert "Bayes-NA posterior" in text and "90% interval" in text and f"wrote {png2}" in text
    fit_rows = [line for line in text.splitlines() if re.match(r"^\s+\w+ x \w+\s+[+-]\d.*\[", line)]
    assert len(fit_rows) == 10
    assert png2.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize("mechanism", ["tgm", "btgm", "rgm"])
def test_fit_on_a_range_preserving_release_runs_mle_nn_and_says_so(capsys, tmp_path, mechanism) -> None:
    x, _, cols = demo_copula_data(n=400)
    rel = na.privatize(x[:, :3], statistic="median_pairs", epsilon=2.0, mechanism=mechanism, columns=cols[:3])
    path = tmp_path / "r.json"
    rel.to_json(path)
    assert main(["fit", str(path), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert f"range-preserving {mechanism.upper()} mechanism" in text and "runs MLE-NN" in text
    expect = mle_nn(rel).R
    printed = [float(line.split()[-1]) for line in text.splitlines() if re.match(r"^\s+\w+ x \w+\s", line)]
    assert printed == pytest.approx(expect[np.triu_indices(3, 1)], abs=6e-4)


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
    assert "non-numeric column(s) ['b']" in _one_line_error(capsys)


def test_fit_bad_files_exit_2_with_one_line(capsys, tmp_path) -> None:
    assert main(["fit", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in _one_line_error(capsys)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["fit", str(bad)]) == 2
    _one_line_error(capsys)
    kend = tmp_path / "k.json"
    na.privatize(np.random.default_rng(0).normal(size=(40, 3)), statistic="kendall_pairs", epsilon=1.0).to_json(kend)
    assert main(["fit", str(kend)]) == 2
    err = _one_line_error(capsys)
    assert "needs a 'median_pairs' release" in err and "statistic='kendall_pairs'" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["fit", "r.json", "--draws", "0"],
        ["fit", "r.json", "--level", "1.5"],
        ["fit", "r.json", "--backend", "stan"],
        ["demo", "--chains", "two"],
        ["fit"],
        ["frobnicate"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, argv) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    _one_line_error(capsys)


def test_import_is_light() -> None:
    code = (
        "import sys, noiseaware; print(sorted(m for m in ('pymc', 'jax', 'pytensor', 'numpyro') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]"


def test_fitting_commands_import_arviz_without_its_banner(tmp_path) -> None:
    """ArviZ 0.23 announces its coming refactor on import (a FutureWarning, once a day): the CLI keeps it quiet."""
    from noiseaware._engine import arviz_major

    quiet = "from noiseaware.cli import _import_arviz_quietly; _import_arviz_quietly(); import arviz; print('ok')"
    # a fresh cache directory: ArviZ 0.23 keeps the day it last warned there
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "a"), "NOISEAWARE_JAX_CACHE": "0"}
    res = subprocess.run([sys.executable, "-W", "error", "-c", quiet], env=env, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "ok" and res.stderr == "", res.stderr
    # not vacuous: the same import without the filter shows the banner under ArviZ 0.x (ArviZ 1 has none)
    env["XDG_CACHE_HOME"] = str(tmp_path / "b")
    plain = subprocess.run([sys.executable, "-c", "import arviz"], env=env, capture_output=True, text=True)
    assert ("ArviZ is undergoing a major refactor" in plain.stderr) is (arviz_major() < 1)
