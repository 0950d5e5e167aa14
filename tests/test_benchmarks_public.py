"""Every script under ``benchmarks/`` uses the public API of ``noiseaware`` only.

A benchmark that imports a private module or name (one starting with ``_`` below ``noiseaware``)
or reaches into one by attribute (``na.copula._fit``, ``getattr(module, "_x")``) keeps
benchmark-only code alive inside the package and breaks when the package's internals move.
Benchmark-only variants live in ``benchmarks/`` itself. The scripts are parsed with :mod:`ast`,
not imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
PACKAGE = "noiseaware"


def _private(name: str) -> bool:
    """``_x`` is private; a dunder (``__version__``) is not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _chain(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None when the chain does not start at a plain name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def private_uses(source: str, filename: str = "<string>") -> list[str]:
    """Each use of a private ``noiseaware`` module or name in ``source``, as ``"line: what"``.

    Names bound by ``import noiseaware...`` and ``from noiseaware... import ...`` are followed
    (anywhere in the file, functions included); an attribute chain or a ``getattr`` with a constant
    name rooted at one of them is checked component by component.
    """
    tree = ast.parse(source, filename)
    bound: set[str] = set()  # local names that refer to noiseaware or something inside it
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] != PACKAGE:
                    continue
                bad = [p for p in parts[1:] if _private(p)]
                if bad:
                    found.append(f"{node.lineno}: import {a.name}")
                bound.add(a.asname or parts[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != PACKAGE:
                continue
            if any(_private(p) for p in parts[1:]):
                found.append(f"{node.lineno}: from {node.module} import ...")
            for a in node.names:
                if _private(a.name):
                    found.append(f"{node.lineno}: from {node.module} import {a.name}")
                bound.add(a.asname or a.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = _chain(node)
            if chain and chain[0] in bound and _private(node.attr):
                found.append(f"{node.lineno}: {'.'.join(chain)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2):
            target, name = node.args[0], node.args[1]
            chain = _chain(target)
            if (chain and chain[0] in bound and isinstance(name, ast.Constant) and isinstance(name.value, str)
                    and _private(name.value)):
                found.append(f"{node.lineno}: {node.func.id}({'.'.join(chain)}, {name.value!r})")
    return sorted(set(found), key=lambda s: int(s.split(":")[0]))


SCRIPTS = sorted(BENCHMARKS.rglob("*.py"))


def test_scripts_found() -> None:
    assert len(SCRIPTS) >= 20, [p.name for p in SCRIPTS]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_benchmark_uses_public_api(path: Path) -> None:
    uses = private_uses(path.read_text(), str(path))
    assert not uses, (
        f"benchmarks/{path.relative_to(BENCHMARKS)}: must call only noiseaware's public API; got private uses "
        f"{uses}. Move benchmark-only code into benchmarks/, or make a name public that users also need."
    )


@pytest.mark.parametrize(
    "source",
    [
        "import noiseaware._core",
        "import noiseaware.copula._fit as f",
        "from noiseaware._engine._compile import xla_defaults",
        "from noiseaware.dirichlet import _dpmcmc as M",
        "from noiseaware.copula import fit, _model",
        "import noiseaware as na\nna.copula._fit.laplace_precondition = None",
        "import noiseaware as na\nx = na._core.get_backend('jax')",
        "from noiseaware import copula\ncopula._PROGRAMS.clear()",
        "def f():\n    import noiseaware.dirichlet as d\n    return d._dpmcmc._run",
        "import noiseaware.config\ngetattr(noiseaware.config, '_private', None)",
        "from noiseaware.copula import fit\nfit._cache",
    ],
)
def test_checker_rejects_private_use(source: str) -> None:
    assert private_uses(source)


@pytest.mark.parametrize(
    "source",
    [
        "import noiseaware as na\nna.copula.fit\nna.__version__",
        "from noiseaware.dirichlet import dpmcmc\nimport noiseaware.config\nnoiseaware.config.configure()",
        "import speed_race as sr\nsr._helper('x')",  # a benchmark's own helper module
        "from _report import load",  # benchmarks/_report.py is not the package
        "import numpy as np\nnp._NoValue",
        "import noiseaware.config\ngetattr(noiseaware.config, 'configure', None)",
    ],
)
def test_checker_accepts_public_use(source: str) -> None:
    assert private_uses(source) == []
