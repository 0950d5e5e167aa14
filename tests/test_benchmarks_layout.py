"""The benchmarks share one set-up, ``benchmarks/_study.py``, and each study stays a short script.

- Every script of ``benchmarks/`` (a module whose name does not start with ``_``) has at most
  :data:`MAX_LINES` lines and imports ``_study``; a long study is split by concern into underscore
  modules beside it.
- Only ``_study`` builds a command line (``argparse.ArgumentParser``) or adds the shared options
  (``--write``, ``--quick``, ``--seed``, ``--reps``), and only it reads the load (``os.getloadavg``,
  ``/proc/loadavg``, ``uptime``); only ``_report`` describes the machine (``platform``, ``/proc/cpuinfo``).
- Every benchmark that ``run_all.py`` runs (``BENCHMARKS`` and ``QUICK``) is an existing script.

The modules are parsed with :mod:`ast`, not imported (no JAX, no noiseaware).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
MAX_LINES = 250
SHARED = "_study"
#: The only module that describes the machine (``_study`` re-exports its ``machine``).
MACHINE = "_report"
SHARED_OPTIONS = frozenset({"--write", "--quick", "--seed", "--reps"})
LOAD_STRINGS = ("/proc/loadavg", "uptime")


def _imports_shared(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == SHARED for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == SHARED:
            return True
    return False


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def problems(path: Path) -> list[str]:
    """What in the benchmark module ``path`` breaks the layout, as ``"name:line: what"`` (empty: none)."""
    name = path.stem
    source = path.read_text()
    tree = ast.parse(source, str(path))
    found: list[str] = []
    if not name.startswith("_"):
        lines = len(source.splitlines())
        if lines > MAX_LINES:
            found.append(f"{name}:{lines}: {lines} lines, more than {MAX_LINES}: split it by concern into "
                         "underscore modules")
        if not _imports_shared(tree):
            found.append(f"{name}:1: does not import the shared set-up {SHARED}")
    if name == SHARED:
        return found
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call):
            call = _call_name(node)
            if call == "ArgumentParser":
                found.append(f"{name}:{line}: builds its own ArgumentParser; use {SHARED}.parser")
            elif (call == "add_argument" and node.args and isinstance(node.args[0], ast.Constant)
                  and node.args[0].value in SHARED_OPTIONS):
                found.append(f"{name}:{line}: adds the shared option {node.args[0].value}; use {SHARED}.parser")
        elif "getloadavg" in (getattr(node, "attr", None), getattr(node, "id", None)) or (
            isinstance(node, ast.ImportFrom) and any(a.name == "getloadavg" for a in node.names)
        ):
            found.append(f"{name}:{line}: reads the load itself; use {SHARED}.Run or {SHARED}.Load")
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and (node.value in LOAD_STRINGS or node.value.startswith("/proc/loadavg"))):
            found.append(f"{name}:{line}: reads the load itself ({node.value!r}); use {SHARED}.Run or {SHARED}.Load")
        elif name != MACHINE and (
            (isinstance(node, ast.Import) and any(a.name == "platform" for a in node.names))
            or (isinstance(node, ast.ImportFrom) and node.module == "platform")
            or (isinstance(node, ast.Constant) and node.value == "/proc/cpuinfo")
        ):
            found.append(f"{name}:{line}: describes the machine itself; use {SHARED}.machine")
    return found


def run_all_tables(path: Path = BENCHMARKS / "run_all.py") -> dict[str, dict[str, list[str]]]:
    """``run_all.py``'s ``BENCHMARKS`` and ``QUICK`` tables, read from its source."""
    tables: dict[str, dict[str, list[str]]] = {}
    for node in ast.parse(path.read_text()).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id in ("BENCHMARKS", "QUICK") and node.value is not None:
            tables[target.id] = ast.literal_eval(node.value)
    return tables


def missing_scripts(tables: dict[str, dict[str, list[str]]], directory: Path = BENCHMARKS) -> list[str]:
    """The run_all entries whose script (the first item of the argument list) does not exist."""
    return [f"{table}[{name!r}]: {args[0] if args else '(no script)'}"
            for table, entries in tables.items() for name, args in entries.items()
            if not args or not (directory / args[0]).is_file()]


MODULES = sorted(BENCHMARKS.glob("*.py"))


def test_modules_found() -> None:
    names = {p.stem for p in MODULES}
    assert {SHARED, MACHINE, "run_all", "render_docs", "speed_race"} <= names, sorted(names)
    assert sum(not n.startswith("_") for n in names) >= 30, sorted(names)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_module_follows_the_layout(path: Path) -> None:
    assert not problems(path), problems(path)


def test_run_all_names_existing_scripts() -> None:
    tables = run_all_tables()
    assert set(tables) == {"BENCHMARKS", "QUICK"} and all(tables.values()), tables
    assert not missing_scripts(tables)


# ------------------------------------------------------------------------------- the checks can fail
_GOOD = '''"""A study."""
import _study


def main() -> int:
    args = _study.parser(__doc__, reps=3).parse_args()
    with _study.Run(args) as run:
        pass
    run.record("x", "## x")
    return 0
'''


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (_GOOD + "\n" * (MAX_LINES - _GOOD.count("\n") + 1), "more than 250"),
        ('"""A study."""\nimport numpy as np\n', "does not import the shared set-up"),
        (_GOOD + "import argparse\nap = argparse.ArgumentParser()\n", "ArgumentParser"),
        (_GOOD + "from argparse import ArgumentParser\nap = ArgumentParser()\n", "ArgumentParser"),
        (_GOOD + "ap = _study.parser(None)\nap.add_argument('--seed', type=int)\n", "shared option --seed"),
        (_GOOD + "ap = _study.parser(None)\nap.add_argument(\"--write\", action='store_true')\n", "--write"),
        (_GOOD + "import os\nx = os.getloadavg()[0]\n", "reads the load"),
        (_GOOD + "from os import getloadavg\n", "reads the load"),
        (_GOOD + "from pathlib import Path\nx = Path('/proc/loadavg').read_text()\n", "reads the load"),
        (_GOOD + "import subprocess\nx = subprocess.run(['uptime'])\n", "reads the load"),
        (_GOOD + "import platform\nx = platform.machine()\n", "describes the machine"),
        (_GOOD + "x = open('/proc/cpuinfo').read()\n", "describes the machine"),
    ],
)
def test_checker_rejects_a_planted_violation(tmp_path: Path, source: str, expected: str) -> None:
    path = tmp_path / "planted_study.py"
    path.write_text(source)
    found = problems(path)
    assert any(expected in p for p in found), found


def test_checker_rejects_violations_in_underscore_modules_too(tmp_path: Path) -> None:
    path = tmp_path / "_helper.py"
    path.write_text("import os\nx = os.getloadavg()\n" + "\n" * 300)  # long and without _study: allowed here
    assert [p.split(": ", 1)[1][:24] for p in problems(path)] == ["reads the load itself; u"]


def test_checker_accepts_a_short_study(tmp_path: Path) -> None:
    path = tmp_path / "short_study.py"
    path.write_text(_GOOD)
    assert problems(path) == []


def test_run_all_check_catches_a_missing_script(tmp_path: Path) -> None:
    (tmp_path / "there.py").write_text(_GOOD)
    tables = {"BENCHMARKS": {"a": ["there.py"], "b": ["gone.py", "--n", "3"]}, "QUICK": {"c": []}}
    assert missing_scripts(tables, tmp_path) == ["BENCHMARKS['b']: gone.py", "QUICK['c']: (no script)"]
