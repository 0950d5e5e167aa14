"""The code snippets of docs/published-hierarchy.md run as written (and print what they claim)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from noiseaware.exceptions import PrivacyWarning

DOC = Path(__file__).resolve().parents[2] / "docs" / "published-hierarchy.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_doc_has_snippets() -> None:
    assert len(SNIPPETS) == 2


@pytest.mark.slow  # make test-full: the page's snippets, one of them a fit (10 s)
@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_doc_snippet_runs(index: int) -> None:
    out = io.StringIO()
    # the first snippet writes and reads a synthetic (simulated) file: both warn, as for a simulated release
    warns = pytest.warns(PrivacyWarning, match="SIMULATION") if index == 0 else contextlib.nullcontext()
    with contextlib.redirect_stdout(out), warns:
        exec(compile(SNIPPETS[index], f"{DOC.name}[snippet {index}]", "exec"), {"__name__": "__doc_snippet__"})
    lines = out.getvalue().splitlines()
    if index == 0:
        assert lines[0] == "('state', 'county', 'tract') ('total', 'a', 'b', 'c') 126 {'state': {'total': [1019, 906]}}"
        assert lines[1] == "True (24, 4)"
    else:
        assert lines == ["True (600, 6, 3)", "True"]
