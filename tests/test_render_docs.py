"""docs/benchmarks.md and docs/reproduction.md are the rendering of benchmarks/results/*.json."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _render_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_docs", ROOT / "benchmarks" / "render_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_committed_records_render_to_the_committed_docs_byte_for_byte() -> None:
    docs = _render_docs().render()
    assert sorted(docs) == ["benchmarks.md", "reproduction.md"]
    for name, text in docs.items():
        assert (ROOT / "docs" / name).read_text() == text, f"docs/{name} is not the rendering of the records"


def test_a_changed_figure_in_a_record_changes_the_rendered_doc(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(ROOT / "benchmarks" / "results", results, ignore=shutil.ignore_patterns("raw"))
    record = json.loads((results / "speed_race_dense.json").read_text())
    record["headline"][0] = record["headline"][0].replace("58.4x", "12.3x")
    (results / "speed_race_dense.json").write_text(json.dumps(record))
    text = _render_docs().render(results)["benchmarks.md"]
    assert "12.3x Stan's ESS/s" in text
    assert "58.4x Stan's ESS/s" not in text


def test_every_record_is_rendered_with_its_date_and_headline() -> None:
    module = _render_docs()
    records = module.load_records(ROOT / "benchmarks" / "results")
    rendered = "".join(module.render().values())
    for name, record in records.items():
        assert record["date"] and record["headline"], name
        assert f"benchmarks/results/{name}.json" in rendered, name
