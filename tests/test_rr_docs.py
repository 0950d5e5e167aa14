"""The code snippets of docs/randomized-response.md run as written, without a warning, and say what they claim."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "randomized-response.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def _run(index: int) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # pytest turns every warning into an error
        exec(compile(SNIPPETS[index], f"{DOC.name}[snippet {index}]", "exec"), {"__name__": "__doc_snippet__"})
    return out.getvalue()


def _b1_mean(text: str) -> float:
    m = re.search(r"b1: mean (-?\d+\.\d+)", text)
    assert m is not None, text
    return float(m.group(1))


def test_doc_has_two_snippets() -> None:
    assert len(SNIPPETS) == 2


def test_numpyro_logistic_regression_example() -> None:
    text = _run(0)
    lo, hi = (float(x) for x in re.search(r"interval \((-?\d+\.\d+), (-?\d+\.\d+)\)", text).groups())  # type: ignore[union-attr]
    assert lo < 1.0 < hi, text  # the slope of the simulation is covered
    assert 0.5 < _b1_mean(text) < 1.6, text


@pytest.mark.slow  # PyTensor compiles NUTS
def test_pymc_logistic_regression_example() -> None:
    assert 0.5 < _b1_mean(_run(1)) < 1.6
