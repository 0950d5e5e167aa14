"""The import graph of the package: one way, no cycle (docs/architecture.md).

Read from the source with :mod:`ast` (no import is executed), including imports inside functions,
so a lazy import cannot hide a cycle or an upward dependency.
"""

from __future__ import annotations

import ast
import collections
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "noiseaware"

_DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _layers(text: str) -> dict[str, int]:
    """``{unit: layer}`` from the table of the section ``## Layers`` of docs/architecture.md (its only copy).

    Each row is ``| layer | `unit`, `unit` | what |``; a module may import its own layer or lower ones.
    """
    lines = text.splitlines()
    start = lines.index("## Layers") + 1
    out: dict[str, int] = {}
    for line in lines[start:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].isdigit():
            for unit in cells[1].split(","):
                out[unit.strip().strip("`")] = int(cells[0])
    return out


#: Layers, lowest first, read from docs/architecture.md.
LAYERS: dict[str, int] = _layers(_DOC.read_text(encoding="utf-8"))


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for f in ROOT.rglob("*.py"):
        rel = f.relative_to(ROOT.parent).with_suffix("").parts
        out[".".join(rel[:-1] if rel[-1] == "__init__" else rel)] = f
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()

    def resolve(t: str) -> str:
        while t and t not in mods:
            t = t.rsplit(".", 1)[0] if "." in t else ""
        return t

    edges: dict[str, set[str]] = collections.defaultdict(set)
    for mod, f in mods.items():
        pkg = mod if f.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = pkg.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                if base.startswith("noiseaware"):
                    targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("noiseaware")]
            for t in targets:
                t = resolve(t)
                # importing a.b.c runs the __init__ of a.b too: an edge to every enclosing package
                parts = t.split(".")
                for k in range(2, len(parts) + 1):
                    anc = ".".join(parts[:k])
                    if anc in mods and anc != mod and not mod.startswith(anc + "."):
                        edges[mod].add(anc)
    return edges


def _unit(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def test_every_unit_has_a_layer():
    """The table of docs/architecture.md names every unit of the package, and no unit that is gone."""
    units = {_unit(m) for m in _modules()}
    assert units <= set(LAYERS), sorted(units - set(LAYERS))
    stale = sorted(set(LAYERS) - units)
    assert stale == [], f"docs/architecture.md's layer table names units that do not exist: {stale}"


def test_the_layer_table_is_parsed_as_documented():
    text = (
        "## Layers\n\n| layer | units | what |\n|---|---|---|\n| 0 | `a`, `_b` | x |\n| 3 | `c` | y |\n\n"
        "## Next\n| 4 | `d` | z |\n"
    )
    assert _layers(text) == {"a": 0, "_b": 0, "c": 3}
    assert LAYERS["_core"] < LAYERS["mechanisms"] < LAYERS["release"] < LAYERS["pymc"] < LAYERS["copula"]


def test_no_import_cycle():
    assert _cycles(_graph()) == []


def test_imports_go_one_way():
    bad = sorted(
        f"{a} -> {b}" for a, targets in _graph().items() for b in targets if LAYERS[_unit(b)] > LAYERS[_unit(a)]
    )
    assert bad == [], bad


def test_the_checks_can_fail():
    """A made-up upward edge and a made-up cycle are caught by the same helpers."""
    edges = _graph()
    edges["noiseaware._core._specs"].add("noiseaware.release")
    assert any(LAYERS[_unit(b)] > LAYERS[_unit(a)] for a, targets in edges.items() for b in targets)
    edges["noiseaware.mechanisms._additive"].add("noiseaware._core._specs")
    assert _cycles(edges)


# ----------------------------------------------------------------------------- private imports
#: The shared internals: packages whose private modules any package of the layers above may import.
SHARED_INTERNALS = frozenset({"_core", "_engine"})


def _private_imports(root: pathlib.Path = ROOT) -> list[str]:
    """Imports of another unit's private module or private name, outside :data:`SHARED_INTERNALS`.

    ``from ..augment._sweep import x`` (a private module of another package) and ``from .._io import _write``
    (a private name of another unit) are reported; ``from .._io import atomic_write`` and ``from .._core._noise
    import NOISE_LAWS`` are not.
    """
    out = []
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root.parent).with_suffix("").parts
        mod = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        pkg = mod if f.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                parts = pkg.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            target = base.split(".")
            if target[0] != root.name or len(target) < 2 or target[1] == _unit(mod) or target[1] in SHARED_INTERNALS:
                continue
            private = [p for p in target[2:] if p.startswith("_")]
            private += [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            if private:
                out.append(f"{mod}: from {base} import {', '.join(a.name for a in node.names)}")
    return out


def test_no_private_import_across_packages():
    """A unit reaches another only through its public names (the shared internals excepted)."""
    assert _private_imports() == [], "import a public name, or move the shared code to _core or _engine"


def test_the_private_import_check_can_fail(tmp_path: pathlib.Path):
    root = tmp_path / "noiseaware"
    for d in ("a", "b", "_core"):
        (root / d).mkdir(parents=True)
        (root / d / "__init__.py").write_text("", encoding="utf-8")
    (root / "_io.py").write_text("", encoding="utf-8")
    (root / "a" / "_x.py").write_text(
        "from ..b._y import f\nfrom .._io import _w, w\nfrom .._core._z import g\nfrom ._own import h\n",
        encoding="utf-8",
    )
    assert _private_imports(root) == [
        "noiseaware.a._x: from noiseaware.b._y import f",
        "noiseaware.a._x: from noiseaware._io import _w, w",
    ]


@pytest.mark.parametrize(
    "path",
    [
        "copula.fit",
        "dirichlet.fit",
        "dirichlet.dpmcmc",
        "augment.sample",
        "covariance.fit",
        "pymc.NoisyHypergeom",
        "numpyro.CompositeCopulaLikelihood",
        "copula.synthesize",
        "privatize",
    ],
)
def test_public_names_reachable_after_import(path):
    import importlib

    na = importlib.import_module("noiseaware")
    obj = na
    for part in path.split("."):
        obj = getattr(obj, part)
    assert callable(obj)


# ----------------------------------------------------------------------------- module size
#: Longest module, in lines, unless docs/architecture.md names it (with its reason) under "Long modules".
MAX_LINES = 800


def _long_modules_allowed(text: str) -> dict[str, str]:
    """``{path: reason}`` from the "Long modules" list of docs/architecture.md.

    The list is the section ``## Long modules``; each entry is one line ``- `noiseaware/x.py`: reason``.
    """
    lines = text.splitlines()
    try:
        start = lines.index("## Long modules") + 1
    except ValueError:
        return {}
    out: dict[str, str] = {}
    for line in lines[start:]:
        if line.startswith("## "):
            break
        if line.startswith("- `"):
            path, _, reason = line[3:].partition("`:")
            out[path] = reason.strip()
    return out


def _too_long(allowed: dict[str, str], root: pathlib.Path = ROOT) -> list[str]:
    out = []
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root.parent).as_posix()
        n = len(f.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES and not allowed.get(rel):
            out.append(f"{rel}: {n} lines")
    return out


def test_no_module_over_800_lines_unless_named_in_the_docs():
    """Modules by concern: none over :data:`MAX_LINES` lines unless docs/architecture.md says why."""
    allowed = _long_modules_allowed(_DOC.read_text(encoding="utf-8"))
    assert _too_long(allowed) == [], "split the module or name it, with its reason, under '## Long modules'"
    stale = sorted(p for p in allowed if not (ROOT.parent / p).is_file())
    assert stale == [], f"docs/architecture.md names modules that do not exist: {stale}"


def test_the_size_check_can_fail(tmp_path: pathlib.Path):
    """A module one line over the limit is reported unless listed with a reason; the list is parsed as documented."""
    pkg = tmp_path / "noiseaware" / "sub"
    pkg.mkdir(parents=True)
    (pkg / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    (pkg / "short.py").write_text("x = 1\n" * MAX_LINES, encoding="utf-8")
    root = tmp_path / "noiseaware"
    assert _too_long({}, root) == [f"noiseaware/sub/long.py: {MAX_LINES + 1} lines"]
    assert _too_long({"noiseaware/sub/long.py": ""}, root) != []  # named without a reason
    assert _too_long({"noiseaware/sub/long.py": "one algorithm"}, root) == []
    text = "## Long modules\n\n- `noiseaware/a.py`: why\n- `noiseaware/b.py`:\n\n## Next\n- `noiseaware/c.py`: no\n"
    assert _long_modules_allowed(text) == {"noiseaware/a.py": "why", "noiseaware/b.py": ""}


# ----------------------------------------------------------------------------- function size
#: Most lines of code a function may have (its body without the docstring, blank lines and comments), and most
#: positional parameters (``self``/``cls`` not counted), unless docs/architecture.md names it under "Long functions".
MAX_FUNCTION_LINES = 80
MAX_POSITIONAL = 8


def _function_sizes(root: pathlib.Path = ROOT) -> dict[str, tuple[int, int]]:
    """``{"path qualname": (lines of code, positional parameters)}`` of every function under ``root``."""
    out: dict[str, tuple[int, int]] = {}
    for f in sorted(root.rglob("*.py")):
        text = f.read_text(encoding="utf-8")
        lines = text.splitlines()
        rel = f.relative_to(root).as_posix()

        def visit(node: ast.AST, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    visit(child, f"{prefix}{child.name}.")
                elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    body = child.body
                    if isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                        body = body[1:]
                    code = 0
                    if body:
                        span = lines[body[0].lineno - 1 : body[-1].end_lineno]
                        code = sum(1 for s in span if s.strip() and not s.strip().startswith("#"))
                    args = [*child.args.posonlyargs, *child.args.args]
                    pos = len(args) - (1 if args and args[0].arg in ("self", "cls") else 0)
                    out[f"{rel} {prefix}{child.name}"] = (code, pos)
                    visit(child, f"{prefix}{child.name}.")

        visit(ast.parse(text), "")
    return out


def _long_functions_allowed(text: str) -> dict[str, str]:
    """``{"path qualname": reason}`` from the list under ``## Long functions`` of docs/architecture.md.

    Each entry is one line ``- `path` `qualname` (size): reason``, ``path`` relative to ``noiseaware/``.
    """
    lines = text.splitlines()
    start = lines.index("## Long functions") + 1
    out: dict[str, str] = {}
    for line in lines[start:]:
        if line.startswith("## "):
            break
        if line.startswith("- `"):
            parts = line[3:].split("`")
            if len(parts) >= 4:
                out[f"{parts[0]} {parts[2]}"] = line.partition(":")[2].strip()
    return out


def _over_limits(sizes: dict[str, tuple[int, int]], allowed: dict[str, str]) -> list[str]:
    return [
        f"{k}: {code} lines of code, {pos} positional parameters"
        for k, (code, pos) in sizes.items()
        if (code > MAX_FUNCTION_LINES or pos > MAX_POSITIONAL) and not allowed.get(k)
    ]


def test_functions_do_one_thing():
    """No function over the limits unless docs/architecture.md names it with its reason; no stale entry."""
    sizes = _function_sizes()
    allowed = _long_functions_allowed(_DOC.read_text(encoding="utf-8"))
    assert _over_limits(sizes, allowed) == [], "split the function, or name it with its reason under 'Long functions'"
    stale = sorted(
        k for k in allowed if k not in sizes or (sizes[k][0] <= MAX_FUNCTION_LINES and sizes[k][1] <= MAX_POSITIONAL)
    )
    assert stale == [], f"docs/architecture.md names functions that no longer exist or are within the limits: {stale}"


def test_the_function_size_check_can_fail(tmp_path: pathlib.Path):
    pkg = tmp_path / "noiseaware"
    pkg.mkdir()
    long_body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES + 1))
    (pkg / "m.py").write_text(
        'def long():\n    """Doc.\n\n    More doc.\n    """\n' + long_body
        + "\n\ndef fine(a, b):\n    # a comment\n\n    return a\n\n\n"
        + "class K:\n    def many(self, a, b, c, d, e, f, g, h, i):\n        return a\n",
        encoding="utf-8",
    )
    sizes = _function_sizes(pkg)
    assert sizes["m.py long"] == (MAX_FUNCTION_LINES + 1, 0) and sizes["m.py fine"] == (1, 2)
    assert sizes["m.py K.many"] == (1, 9)
    assert sorted(_over_limits(sizes, {})) == [
        "m.py K.many: 1 lines of code, 9 positional parameters",
        f"m.py long: {MAX_FUNCTION_LINES + 1} lines of code, 0 positional parameters",
    ]
    text = "## Long functions\n\n- `m.py` `long` (81): one algorithm\n- `m.py` `K.many` (9):\n\n## Next\n"
    assert _over_limits(sizes, _long_functions_allowed(text)) == [
        "m.py K.many: 1 lines of code, 9 positional parameters"
    ]
