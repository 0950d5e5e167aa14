"""The code of docs/regression-point.md runs as written and prints what the page shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "regression-point.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_doc_snippet_runs() -> None:
    pytest.importorskip("sklearn")
    assert len(SNIPPETS) == 1
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(SNIPPETS[0], f"{DOC.name}[snippet 0]", "exec"), {"__name__": "__doc_snippet__"})
    lines = out.getvalue().splitlines()
    assert lines[0] == "columns: ('(intercept)', 'age', 'sex') ..."
    assert re.fullmatch(r"adassp: ridge \d+\.\d, test MSE \d+", lines[1])
    assert re.fullmatch(r"pace_ggm: ridge \d+\.\d, test MSE \d+", lines[2])
    assert lines[3] == "OLS (not private): test MSE 3123" and lines[4] == "predicting the mean: test MSE 6191"
