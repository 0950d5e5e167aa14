"""The public surface: what every public module exports, and what its user-facing text may name."""

from __future__ import annotations
import __future__

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

import noiseaware

PACKAGE = Path(noiseaware.__file__).resolve().parent


def _public_modules() -> list[str]:
    names = ["noiseaware"]
    for info in pkgutil.walk_packages([str(PACKAGE)], "noiseaware."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return sorted(names)


PUBLIC_MODULES = _public_modules()


def _doc_comment(module: ModuleType, name: str) -> bool:
    """Whether ``name`` is assigned in a noiseaware source file under a ``#:`` comment (Sphinx's data docs)."""
    for path in PACKAGE.rglob("*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.startswith((f"{name} =", f"{name}: ")) and i > 0 and lines[i - 1].startswith("#:"):
                return True
    return False


def _sentinel_doc(obj: object) -> bool:
    """Whether ``obj`` is an instance of a noiseaware class with its own docstring (a documented sentinel)."""
    cls = type(obj)
    return cls.__module__.startswith("noiseaware") and bool(cls.__dict__.get("__doc__"))


def test_public_modules_are_found():
    for name in ("noiseaware.copula", "noiseaware.dirichlet", "noiseaware.numpyro", "noiseaware.pymc"):
        assert name in PUBLIC_MODULES
    assert not [m for m in PUBLIC_MODULES if "._" in m]


@pytest.mark.parametrize("modname", PUBLIC_MODULES)
def test_every_public_name_exists_is_public_and_documented(modname):
    module = importlib.import_module(modname)
    names = module.__all__
    assert len(names) == len(set(names)), f"{modname}.__all__ lists a name twice"
    problems = []
    for name in names:
        if not hasattr(module, name):
            problems.append(f"{name}: listed but missing")
            continue
        obj = getattr(module, name)
        if name == "annotations" or isinstance(obj, __future__._Feature):
            problems.append(f"{name}: a __future__ feature, not an API")
        elif name.startswith("_") and name != "__version__":
            problems.append(f"{name}: private name")
        elif isinstance(obj, ModuleType):
            if not obj.__name__.startswith("noiseaware.") or "._" in obj.__name__ or not obj.__doc__:
                problems.append(f"{name}: module {obj.__name__} is private or undocumented")
        elif inspect.isclass(obj) or inspect.isroutine(obj):
            own = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
            if not obj.__module__.startswith("noiseaware"):
                problems.append(f"{name}: re-exported from {obj.__module__}")
            elif not own or not own.strip() or own.startswith(f"{obj.__name__}("):  # dataclass's generated doc
                problems.append(f"{name}: no docstring")
        elif name != "__version__" and not _doc_comment(module, name) and not _sentinel_doc(obj):
            problems.append(f"{name}: data without a #: comment")
    assert not problems, f"{modname}: " + "; ".join(problems)


@pytest.mark.parametrize("modname", ["noiseaware.numpyro", "noiseaware.pymc"])
def test_front_ends_have_no_stray_names(modname):
    """Tab completion on a front end shows its distributions, not ``annotations`` or typing helpers."""
    module = importlib.import_module(modname)
    public = {n for n in vars(module) if not n.startswith("_")}
    assert "annotations" not in public
    assert public - set(module.__all__) == set()


def test_workflow_all_lists_user_entry_points_only():
    """Fits, estimators, baselines and results; building blocks stay importable, out of ``__all__``."""
    import noiseaware.copula as copula
    import noiseaware.dirichlet as dirichlet

    helpers = {
        copula: ("eta_from_r", "r_from_eta", "fisher_mean", "mle_nn_pair", "tetrachoric", "dpcopula_correlation",
                 "dpcopula_margins"),
        dirichlet: ("inverse_digamma", "l1_projection", "dirichlet_loglik", "p1_prior", "truncated_laplace_range"),
    }
    for module, names in helpers.items():
        for name in names:
            assert name not in module.__all__
            assert callable(getattr(module, name))
    for name in ("fit", "mle_nn", "nearest_correlation", "li_kendall", "asghar_dpc", "fit_dpcopula", "synthesize"):
        assert name in copula.__all__
    for name in ("fit", "dpmcmc", "dpboots", "dpabc", "dirichlet_mle", "elicit_prior", "parts"):
        assert name in dirichlet.__all__


def test_all_is_a_literal_list_in_every_public_module():
    """``__all__`` is written out (tools and readers see it without importing)."""
    for modname in PUBLIC_MODULES:
        module = importlib.import_module(modname)
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        assigned = [
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)
        ]
        assert len(assigned) == 1 and isinstance(assigned[0], ast.List), modname


# ----------------------------------------------------------------------------- user-facing text
#: Internal names of the five papers' text files (``docs/references.md`` maps them to citations).
SEED_FILE = re.compile(r"\b00[0-4]_[0-9a-f]{16}(\.txt)?\b")
FORBIDDEN = {
    "an internal paper name ('seed 00x')": re.compile(r"\b[Ss]eeds?\s+`*00[0-4](?!\d)"),
    "a paper's internal file name": SEED_FILE,
    "project history ('issue N')": re.compile(r"\b[Ii]ssue\s+#?\d+"),
    "project history ('previous stop')": re.compile(r"\b(previous|this|last) stop\b"),
}
#: A private path in text: ``noiseaware._x`` or ``noiseaware.sub._x``, or a relative ``._x`` cross-reference.
PRIVATE_PATH = re.compile(r"noiseaware(?:\.\w+)*\._\w+|:(?:mod|func|class|data):`~?\._\w+")


def test_package_text_cites_papers_not_internal_names_or_history():
    """No 'seed 00x', seed file name, 'issue N' or 'previous stop' anywhere in noiseaware/ (code and comments)."""
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for what, pattern in FORBIDDEN.items():
                if pattern.search(line):
                    problems.append(f"{path.relative_to(PACKAGE.parent)}:{lineno}: {what}: {line.strip()[:100]}")
    assert not problems, "\n".join(problems)


def test_forbidden_patterns_catch_what_they_name():
    assert FORBIDDEN["an internal paper name ('seed 00x')"].search("(seed 004 eq. 6)")
    assert FORBIDDEN["an internal paper name ('seed 00x')"].search("seed ``000_3eff9b68025f505f.txt``")
    assert SEED_FILE.search("see 001_310683b496f39172.txt §3")
    assert FORBIDDEN["project history ('issue N')"].search("# the default kernels (issue 15 item 3)")
    assert FORBIDDEN["project history ('previous stop')"].search("#: The default of the previous stop")
    assert not FORBIDDEN["an internal paper name ('seed 00x')"].search("seed=0, the seed used")


def _public_docs() -> list[tuple[str, str]]:
    docs = []
    for modname in PUBLIC_MODULES:
        module = importlib.import_module(modname)
        docs.append((modname, module.__doc__ or ""))
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isroutine(obj)):
                continue
            docs.append((f"{modname}.{name}", obj.__doc__ or ""))
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    fn = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                    docs.append((f"{modname}.{name}.{attr}", getattr(fn, "__doc__", None) or ""))
    return docs


def test_public_docstrings_name_no_private_path_or_missing_module():
    """A user reading ``help()`` on anything public is not sent to a private module or one that does not exist."""
    problems = []
    for where, doc in _public_docs():
        for match in PRIVATE_PATH.finditer(doc):
            problems.append(f"{where}: {match.group()}")
        for match in re.finditer(r":mod:`~?(noiseaware[\w.]*)`", doc):
            if importlib.util.find_spec(match.group(1)) is None:
                problems.append(f"{where}: {match.group(1)} does not exist")
    assert not problems, "\n".join(problems)


def test_citations_in_docstrings_name_authors_year_and_title():
    """The first mention of each paper in the package is a citation a user can look up."""
    text = " ".join(" ".join(p.read_text(encoding="utf-8").split()) for p in PACKAGE.rglob("*.py"))
    for authors, title in (
        ("Wang, Feldman & Reiter (2026)", "Differentially Private Bayesian Inference for Gaussian Copula Correlations"),
        ("Eng, Awan, Gong, Ju & Rao (2024)", "dapper: Data Augmentation for Private Posterior Estimation in R"),
        ("Ferrando, Fuentes, Mullins, Musco & Sheldon (2026)", "Private Adaptive Covariance Estimation via Gaussian"),
        ("Li, Xiong & Jiang (2014)", "Differentially Private Synthesization of Multi-Dimensional Data using Copula"),
        ("Guo, Barrientos & Peña (2022)", "Differentially Private Inference for Compositional Data"),
    ):
        assert f"{authors}, *{title}" in text


# ----------------------------------------------------------------------------- packaging
def test_packaging_metadata_is_modern_and_single_sourced():
    """SPDX license string with its file, py.typed shipped, and the version read from one module."""
    import tomllib

    root = PACKAGE.parent
    meta = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    project = meta["project"]
    assert project["license"] == "BSD-3-Clause"  # a string (PEP 639), not the deprecated {text = ...} table
    assert project["license-files"] == ["LICENSE"] and "BSD 3-Clause" in (root / "LICENSE").read_text()
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]  # forbidden beside an SPDX string
    assert "Typing :: Typed" in project["classifiers"]
    assert any(r.startswith("setuptools>=77") for r in meta["build-system"]["requires"])
    assert (PACKAGE / "py.typed").is_file() and "py.typed" in meta["tool"]["setuptools"]["package-data"]["noiseaware"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "noiseaware._version.__version__"}
    from noiseaware._version import __version__

    assert noiseaware.__version__ == __version__
