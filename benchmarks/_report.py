"""Shared helpers for benchmark scripts: the machine and the JSON result records (``_study`` reads the load).

Every benchmark script writes its figures as one JSON record, ``benchmarks/results/<name>.json``
(``write_section`` / ``write_run`` / ``write_record``); ``benchmarks/render_docs.py`` renders
``docs/benchmarks.md`` and ``docs/reproduction.md`` from those records, so the documents are never
edited by a benchmark. A record holds the run's command, date, machine, load, headline figures and its
report (text, tables and code blocks, in order)::

    {"name": ..., "title": ..., "date": "YYYY-MM-DD", "commands": [...], "machine": ..., "load": [...],
     "headline": [...], "parts": [{"heading": ..., "blocks": [{"text": ...} | {"table": {...}} | {"code": ...}]}]}

The results directory is ``benchmarks/results`` unless the environment variable
``NOISEAWARE_BENCH_RESULTS`` names another (``make bench-quick`` writes to a scratch directory so the
committed records stay as they are).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import shlex
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
#: Raw per-cell / per-replication dumps of the scripts (inputs of the records, never rendered whole).
RAW = RESULTS / "raw"


def results_dir() -> Path:
    """The directory records are written to: ``$NOISEAWARE_BENCH_RESULTS`` or ``benchmarks/results``."""
    return Path(os.environ.get("NOISEAWARE_BENCH_RESULTS") or RESULTS)


def raw_path(filename: str) -> Path:
    """Where a script's raw dump ``filename`` goes: ``raw/`` under the results directory."""
    return results_dir() / "raw" / filename


def machine(versions: tuple[str, ...] | None = None) -> str:
    """One line describing the CPU, core count, Python and key library versions.

    The libraries are JAX, NumPyro and PyMC where this process has imported them; ``versions`` names
    distributions to report instead, imported or not (their installed versions, or "not installed").
    """
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    libs = []
    if versions is not None:
        from importlib.metadata import PackageNotFoundError, version

        for dist in versions:
            try:
                libs.append(f"{dist} {version(dist)}")
            except PackageNotFoundError:
                libs.append(f"{dist} not installed")
    else:
        for name in ("jax", "numpyro", "pymc"):
            mod = sys.modules.get(name)
            if mod is not None:
                libs.append(f"{name} {getattr(mod, '__version__', '?')}")
    return ", ".join([cpu, f"{os.cpu_count()} cores", f"Python {sys.version.split()[0]}", *libs, platform.system()])


# -- Markdown report -> record ------------------------------------------------------------------------


_RULE = re.compile(r"^\|\s*:?-")


def _cells(line: str) -> list[str]:
    s = line.strip()
    s = s[1:] if s.startswith("|") else s
    s = s[:-1] if s.endswith("|") else s
    return [c.strip() for c in s.split("|")]


def parse_blocks(markdown: str) -> list[dict[str, Any]]:
    """Split Markdown into text paragraphs, tables (columns, alignment, rows) and fenced code, in order."""
    out: list[dict[str, Any]] = []
    cur: list[str] = []
    kind = ""

    def flush() -> None:
        nonlocal cur, kind
        if cur and kind == "table":
            out.append({"table": {"columns": _cells(cur[0]), "align": _cells(cur[1]),
                                  "rows": [_cells(r) for r in cur[2:]]}})
        elif cur:
            out.append({"text": "\n".join(cur)})
        cur, kind = [], ""

    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append({"code": "\n".join(lines[i:j + 1])})
            i = j + 1
            continue
        if line.startswith("|") and (kind == "table" or (i + 1 < len(lines) and _RULE.match(lines[i + 1]))):
            if kind != "table":
                flush()
                kind = "table"
            cur.append(line)
        elif not line.strip():
            flush()
        else:
            if kind != "text":
                flush()
                kind = "text"
            cur.append(line)
        i += 1
    flush()
    return out


_COMMAND = re.compile(r"Command[^`:]*:?\s*`([^`]+)`", re.S)
_LOAD = re.compile(r"[Ll]oad( average)?[ :(]")
_HEADLINE = re.compile(
    r"^(Status|Target|Ratios in this run|Composite likelihood|\*\*10,000)|— met|— not met|\bnot met\b")


def fields(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The command(s), machine line and load lines a report states, taken from its text blocks."""
    commands: list[str] = []
    machine_line = ""
    loads: list[str] = []
    for part in parts:
        blocks = part["blocks"]
        for k, block in enumerate(blocks):
            text = block.get("text", "")
            for m in _COMMAND.finditer(text):
                commands.append(" ".join(m.group(1).split()))
            if "Command" in text and "`" not in text.split("Command", 1)[1] and k + 1 < len(blocks) \
                    and "code" in blocks[k + 1]:
                code = blocks[k + 1]["code"].split("\n")[1:-1]
                commands.extend(c for c in code if c.strip())
            for line in text.split("\n"):
                if "Machine:" in line and not machine_line:
                    machine_line = line[line.index("Machine:") + len("Machine:"):].split(". ")[0].strip().rstrip(".")
                if _LOAD.search(line):
                    loads.append(line.strip())
    return {"commands": commands, "machine": machine_line, "load": loads}


def headline_lines(parts: list[dict[str, Any]]) -> list[str]:
    """The status lines of a report (``Status: ...``, ``... — met``), its headline when none is given."""
    out = []
    for part in parts:
        for block in part["blocks"]:
            for line in block.get("text", "").split("\n"):
                line = line.strip().lstrip("-* ").strip()
                if _HEADLINE.search(line):
                    out.append(line)
    return out


def parse_report(markdown: str) -> tuple[str, list[dict[str, Any]]]:
    """``(title, parts)`` of a report: its ``##`` title and its ``###`` parts, each as blocks."""
    title = ""
    parts: list[dict[str, Any]] = []
    heading: str | None = None
    body: list[str] = []
    for line in markdown.strip("\n").split("\n"):
        if line.startswith("## ") and not title and not parts and not any(x.strip() for x in body):
            title = line[3:].strip()
            continue
        if line.startswith("### "):
            parts.append({"heading": heading, "blocks": parse_blocks("\n".join(body))})
            heading, body = line[4:].strip(), []
            continue
        body.append(line)
    parts.append({"heading": heading, "blocks": parse_blocks("\n".join(body))})
    return title, [p for p in parts if p["blocks"] or p["heading"]]


def write_record(name: str, record: dict[str, Any], dest: str | os.PathLike[str] | None = None) -> Path:
    """Write ``record`` as ``<dest or results_dir()>/<name>.json`` (sorted keys, 1-space indent)."""
    path = Path(dest) if dest is not None else results_dir()
    path.mkdir(parents=True, exist_ok=True)
    out = path / f"{name}.json"
    out.write_text(json.dumps({"name": name, **record}, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return out


def record_from_markdown(markdown: str, *, headline: list[str] | None = None) -> dict[str, Any]:
    """A record of a Markdown report: title, parts, and the command/machine/load/headline it states."""
    title, parts = parse_report(markdown)
    command = shlex.join([".venv/bin/python", os.path.relpath(sys.argv[0], HERE.parent), *sys.argv[1:]])
    info = fields(parts)
    return {
        "title": title,
        "date": datetime.date.today().isoformat(),
        "commands": info["commands"] or [command],
        "argv": command,
        "machine": info["machine"] or machine(),
        "load": info["load"],
        "headline": headline if headline is not None else headline_lines(parts),
        "parts": parts,
    }


def write_section(path: str | os.PathLike[str], name: str, markdown: str,
                  headline: list[str] | None = None) -> Path:
    """Record the report ``markdown`` as ``<results>/<name>.json``; returns the file written.

    ``path`` is where the record goes: a directory, or (as in the commands recorded before the
    results were JSON) a Markdown file name, which means the results directory.
    """
    dest = None if str(path).endswith(".md") else path
    out = write_record(name, record_from_markdown(markdown, headline=headline), dest)
    print(f"wrote {out} (render the docs with: .venv/bin/python benchmarks/render_docs.py)")
    return out


def write_run(
    path: str | os.PathLike[str], name: str, title: str, script: str, argv: list[str], loads: tuple[str, str],
    table: str, about: str = "",
) -> Path:
    """Record run ``name``: title, exact command, machine, ``about``, load before and after, the table."""
    cmd = " ".join([f".venv/bin/python benchmarks/{script}", *argv])
    head = f"Command: `{cmd}`. Machine: {machine()}." + (f" {about}" if about else "")
    body = [f"## {title}", "", head, "", f"Load: before `{loads[0]}`; after `{loads[1]}`.", "", table]
    return write_section(path, name, "\n".join(body))
