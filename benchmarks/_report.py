"""Shared helpers for benchmark scripts: machine description and section-wise report writing.

Every benchmark script owns one section of a Markdown report (``docs/benchmarks.md`` or
``docs/reproduction.md``), delimited by ``<!-- begin:NAME -->`` / ``<!-- end:NAME -->`` markers.
``write_section`` replaces that section in place (or appends it), so scripts never clobber each other.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path

HEADERS = {"benchmarks.md": "# Benchmarks\n", "reproduction.md": "# Reproduction of the seed papers' studies\n"}


def machine() -> str:
    """One line describing the CPU, core count, Python and key library versions."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    libs = []
    for name in ("jax", "numpyro", "pymc"):
        mod = sys.modules.get(name)
        if mod is not None:
            libs.append(f"{name} {getattr(mod, '__version__', '?')}")
    return ", ".join([cpu, f"{os.cpu_count()} cores", f"Python {sys.version.split()[0]}", *libs, platform.system()])


def write_section(path: str | os.PathLike[str], name: str, markdown: str) -> None:
    """Replace (or append) the section ``name`` of the Markdown file at ``path`` with ``markdown``."""
    p = Path(path)
    text = p.read_text() if p.exists() else HEADERS.get(p.name, f"# {p.stem}\n")
    begin, end = f"<!-- begin:{name} -->", f"<!-- end:{name} -->"
    block = f"{begin}\n{markdown.strip()}\n{end}"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def load() -> str:
    """The machine's ``uptime`` line (load averages), to record before and after a run."""
    import subprocess

    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def write_run(
    path: str | os.PathLike[str], name: str, title: str, script: str, argv: list[str], loads: tuple[str, str],
    table: str, about: str = "",
) -> None:
    """Write section ``name``: title, exact command, machine, ``about``, load before and after, the table."""
    cmd = " ".join([f".venv/bin/python benchmarks/{script}", *argv])
    head = f"Command: `{cmd}`. Machine: {machine()}." + (f" {about}" if about else "")
    body = [f"## {title}", "", head, "", f"Load: before `{loads[0]}`; after `{loads[1]}`.", "", table]
    write_section(path, name, "\n".join(body))
