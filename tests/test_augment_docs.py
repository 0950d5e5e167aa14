"""The code snippets of docs/augment.md run as written (and say what they claim)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

#: make test-full: the augment page's snippets fit models (15 s)
pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[1] / "docs" / "augment.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_doc_has_snippets() -> None:
    assert len(SNIPPETS) == 3


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_doc_snippet_runs(index: int) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(SNIPPETS[index], f"{DOC.name}[snippet {index}]", "exec"), {"__name__": "__doc_snippet__"})
    text = out.getvalue()
    if index == 0:
        assert "record acceptance" in text and "mixing problems:" in text
    elif index == 1:
        assert text.startswith("randomized_response 1 (2, 300, 4)")
    else:
        assert text.startswith("geometric 1 (2, 300)")
