"""Render ``docs/benchmarks.md`` and ``docs/reproduction.md`` from the JSON records in ``benchmarks/results``.

The benchmark scripts write their figures as JSON (``benchmarks/_report.py``); this script is the only
writer of the two documents. It is deterministic: the same records give the same bytes, and
``tests/test_render_docs.py`` checks that the committed records render to the committed documents.

Each document has one short section per paper (``reproduction.md``) or per benchmark question
(``benchmarks.md``): what is measured, the headline figures of each record, the paper's values beside
ours where the paper prints them, and for each record its date, machine, load, command and a link to
the record itself (which keeps the whole run report: every table and note of the run).

Run: ``.venv/bin/python benchmarks/render_docs.py`` (writes the documents), ``--check`` (exit 1 when a
document differs from its rendering), ``--results DIR`` to render other records.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # also when loaded from its file (tests/test_render_docs.py)

import _study  # noqa: E402
from _doc_sections import DOCS, Section, Table  # noqa: E402

ROOT = HERE.parent
RESULTS = HERE / "results"


_UPTIME = re.compile(r"\d\d:\d\d:\d\d up .*?load average: ")
_NUM = r"\d+(?:\.\d+)?"
_LOAD = re.compile(
    rf"[Ll]oad(?: average)?s?(?: \([^)]*\))?(?: at the start and end of the run| of| about| at start| at)?:? ?`?"
    rf"({_NUM}(?:(?: |, ){_NUM})*(?: before, {_NUM} after)?(?: ?(?:->|→|-|, at end) ?{_NUM}(?:(?: |, ){_NUM})*)?)"
)


def load_summary(record: dict[str, Any]) -> str:
    """The load figures a record's report states (load averages, before -> after where given), once each."""
    text = " ".join(b.get("text", "") for p in record["parts"] for b in p["blocks"])
    text = _UPTIME.sub("", " ".join(text.split()))
    found: list[str] = []
    for m in _LOAD.finditer(text):
        item = m.group(1).strip(" ,")
        if item not in found:
            found.append(item)
    return "; ".join(found) if found else "not recorded"


def load_records(results: Path) -> dict[str, dict[str, Any]]:
    """All records of ``results`` (``*.json``, not ``raw/``), by name."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(results.glob("*.json"))}


def table_markdown(table: dict[str, Any]) -> list[str]:
    """A table of a record, as Markdown lines."""
    return ["| " + " | ".join(table["columns"]) + " |", "|" + "|".join(table["align"]) + "|",
            *("| " + " | ".join(row) + " |" for row in table["rows"])]


def find_table(record: dict[str, Any], spec: Table) -> dict[str, Any]:
    """The table ``spec`` names in ``record``."""
    part = next(p for p in record["parts"] if p["heading"] == spec.part or spec.part is None)
    return [b["table"] for b in part["blocks"] if "table" in b][spec.index]


def run_line(record: dict[str, Any], link_prefix: str) -> str:
    """Date, machine, load, command(s) and the link to the record, as one bullet."""
    cmds = record.get("commands") or ["(not recorded)"]
    cmd = "`" + cmds[0] + "`" + (f" (and {len(cmds) - 1} more in the record)" if len(cmds) > 1 else "")
    machine = record.get("machine") or "not recorded"
    path = f"benchmarks/results/{record['name']}.json"
    return (f"- `{record['name']}` — {record['date']}; machine: {machine}; load: {load_summary(record)}. "
            f"Command: {cmd}. Record: [`{path}`]({link_prefix}{path}).")


def render_section(section: Section, records: dict[str, dict[str, Any]], link_prefix: str) -> list[str]:
    """One section: title, what is measured, the chosen tables, the headlines, the runs."""
    out = [f"## {section.title}", "", section.about, ""]
    for spec in section.tables:
        table = find_table(records[spec.record], spec)
        out += [f"{spec.caption} (from `{spec.record}`):", "", *table_markdown(table), ""]
    out += ["Headline:", ""]
    for name in section.records:
        out += [f"- {line}" for line in records[name]["headline"]]
    out += ["", "Runs:", ""]
    out += [run_line(records[name], link_prefix) for name in section.records]
    return [*out, ""]


def render(results: Path = RESULTS) -> dict[str, str]:
    """``{file name under docs/: text}`` for both documents, rendered from the records in ``results``."""
    records = load_records(results)
    used = {n for _, _, sections in DOCS.values() for s in sections for n in s.records}
    missing = sorted(used - set(records))
    if missing:
        raise SystemExit(f"render_docs: records missing from {results}: {', '.join(missing)}")
    unused = sorted(set(records) - used)
    if unused:
        raise SystemExit(f"render_docs: records no section renders: {', '.join(unused)} (add them to a Section)")
    docs = {}
    for fname, (title, intro, sections) in DOCS.items():
        lines = [title, "", intro, ""]
        for section in sections:
            lines += render_section(section, records, "../")
        docs[fname] = "\n".join(lines).rstrip("\n") + "\n"
    return docs


def main(argv: list[str] | None = None) -> int:
    ap = _study.parser(__doc__, write=None)
    ap.add_argument("--results", type=Path, default=RESULTS, help="directory of the records (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs", help="directory to write the documents to")
    ap.add_argument("--check", action="store_true", help="exit 1 if a document differs from its rendering")
    args = ap.parse_args(argv)
    stale = []
    for fname, text in render(args.results).items():
        path = args.out / fname
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            args.out.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path}")
    if stale:
        print("not rendered from the records: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    _study.main(main, configure_jax=False)
