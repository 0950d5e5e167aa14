"""The recipe "Adding a statistic" of docs/architecture.md holds for regression.

Read from the source with :mod:`ast` (nothing is executed for the first two checks): regression's
metadata is read through its declaration (:class:`RegressionMetadata`), never by string key, and
only the files the recipe names use the declaration and its reader. The registry holds every
statistic ``privatize`` accepts, each with its schema, and reaches every schema.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import numpy as np
import pytest

from noiseaware._core._regression_release import RegressionMetadata
from noiseaware._privatize import STATISTICS
from noiseaware._privatize._common import REGISTRY
from noiseaware._statistics import SCHEMAS
from noiseaware.exceptions import ReleaseFormatError

ROOT = pathlib.Path(__file__).resolve().parents[1] / "noiseaware"
RECIPE = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")

#: Regression's files, as the recipe names them (relative to noiseaware/).
REGRESSION_FILES = (
    "_core/_regression_release.py",
    "_statistics/_regression.py",
    "_privatize/_regression.py",
    "_core/_regression.py",
    "_core/_specs.py",
    "pymc/_regression.py",
    "numpyro/_regression.py",
    "regression/_estimators.py",
    "regression/_model.py",
    "regression/_fit.py",
    "regression/__init__.py",
)
#: Names bound to the metadata of *other* statistics inside regression's files: the components of a regression
#: release (``c``: its ``regression_eigen`` release, ``pg``: its ``pace_ggm`` release), checked by their own schemas.
#: (A bare mapping is scanned when it is named ``meta`` or ``metadata``; ``_check_eigen`` names the
#: ``regression_eigen`` metadata ``eigen_meta``.)
COMPONENTS = {("_statistics/_regression.py", "c"), ("_statistics/_regression.py", "pg")}
FIELDS = {f.name for f in dataclasses.fields(RegressionMetadata)}


def _metadata_owner(node: ast.expr) -> str | None:
    """``"x"`` for ``x.metadata`` or a bare ``meta``/``metadata``; ``"?"`` for ``a.b[0].metadata``; else None."""
    if isinstance(node, ast.Name) and node.id in ("meta", "metadata"):
        return node.id
    if isinstance(node, ast.Attribute) and node.attr == "metadata":
        return node.value.id if isinstance(node.value, ast.Name) else "?"
    return None


def _string_reads(tree: ast.AST) -> list[tuple[int, str, str]]:
    """``(line, owner, key)`` of each ``owner.metadata[key]``, ``.get(key)`` or ``key in ...metadata``."""
    out = []
    for node in ast.walk(tree):
        target = key = None
        if isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            target, key = node.func.value, node.args[0] if node.args else None
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn):
            target, key = node.comparators[0], node.left
        owner = None if target is None else _metadata_owner(target)
        if owner is not None and isinstance(key, ast.Constant) and isinstance(key.value, str):
            out.append((node.lineno, owner, key.value))
    return out


def test_the_recipe_names_regression_files():
    for rel in REGRESSION_FILES:
        assert (ROOT / rel).is_file(), rel
        name = rel.rsplit("/", 1)[-1]
        assert f"{rel}" in RECIPE or name in RECIPE or rel.split("/")[0] + "/" in RECIPE, rel
    assert "**Adding a statistic**" in RECIPE


def test_no_module_reads_regression_metadata_by_string_key():
    bad = []
    for rel in REGRESSION_FILES:
        for line, owner, key in _string_reads(ast.parse((ROOT / rel).read_text(encoding="utf-8"))):
            if key in FIELDS and (rel, owner) not in COMPONENTS and owner != "?":
                bad.append(f"{rel}:{line} {owner}[{key!r}]")
    assert bad == [], "read RegressionMetadata.from_dict(...) attributes instead: " + ", ".join(bad)


def test_the_scan_finds_a_string_key_read():
    """The scan is not blind: it sees the reads the recipe forbids."""
    src = "meta['shift']\nrel.metadata.get('bounds')\n'rho' in release.metadata\nx.components[0].metadata['rho']\n"
    assert _string_reads(ast.parse(src)) == [(1, "meta", "shift"), (2, "rel", "bounds"), (3, "release", "rho"),
                                             (4, "?", "rho")]


def test_only_the_recipe_files_use_the_declaration():
    users = set()
    for f in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("_regression_release"):
                users.add(f.relative_to(ROOT).as_posix())
    assert users <= set(REGRESSION_FILES), sorted(users - set(REGRESSION_FILES))


def test_one_registry_covers_every_statistic():
    assert set(STATISTICS) == set(REGISTRY)
    for name, entry in REGISTRY.items():
        assert entry.schema is SCHEMAS[name]
        assert STATISTICS[name] is entry.write
    reached = {x for entry in REGISTRY.values() for x in entry.releases}
    assert reached == set(SCHEMAS), sorted(set(SCHEMAS) ^ reached)


def test_a_writer_without_a_schema_is_refused():
    from noiseaware._privatize._common import statistic

    with pytest.raises(TypeError, match="no schema"):
        statistic("not_a_statistic")
    with pytest.raises(TypeError, match="registered twice"):
        statistic("regression")


def test_the_schema_is_the_declaration():
    schema = SCHEMAS["regression"]
    assert schema.declaration is RegressionMetadata
    assert dict(schema.required) == dict(RegressionMetadata.REQUIRED)
    assert dict(schema.optional) == dict(RegressionMetadata.OPTIONAL)


def test_the_declaration_round_trips_a_release():
    import noiseaware as na

    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=(60, 2))
    data = np.column_stack([x, np.clip(x @ [0.5, -0.3], -1, 1)])
    for method in ("ssp", "adassp", "pace_ggm"):
        rel = na.privatize(data, statistic="regression", response="x2", bounds=[(-1, 2), 1.0, 1.0], rho=4.0,
                           method=method, rng=np.random.default_rng(0))
        md = RegressionMetadata.from_dict(rel.metadata)
        assert md.method == method and md.shift == (0.0, 0.5, 0.0, 0.0)
        assert md.to_dict() == {k: list(v) if isinstance(v, tuple) else v for k, v in rel.metadata.items()}
        assert list(md.to_dict()) == list(rel.metadata)  # the writer's order: the JSON bytes


def test_the_declaration_checks_with_the_loader_messages():
    meta = {"method": "ssp", "columns": ["x", "y"], "response": "y", "predictors": ["x"], "intercept": False,
            "bounds": [1.0, 1.0], "clip": False, "entry_order": "?", "scaling": "s"}
    with pytest.raises(ReleaseFormatError, match=r"Release: metadata.entry_order must be "):
        RegressionMetadata.from_dict(meta)
    with pytest.raises(ReleaseFormatError, match=r"unknown key\(s\) \['alpha'\] for statistic 'regression'"):
        RegressionMetadata.from_dict({**meta, "alpha": 0.3})
    meta["entry_order"] = RegressionMetadata.REQUIRED["entry_order"].options[0]
    with pytest.raises(ReleaseFormatError, match=r"scaling is missing \(required for statistic 'regression'\)"):
        RegressionMetadata.from_dict({k: v for k, v in meta.items() if k != "scaling"})
    assert RegressionMetadata.from_dict(meta).to_dict() == meta
