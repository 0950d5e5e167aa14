"""Sphinx configuration of the documentation (`make docs`).

The API reference from the numpydoc docstrings, the Markdown pages of docs/ (MyST), and the getting-started
pages, executed on every build (MyST-NB).
"""

from __future__ import annotations

import importlib
import inspect
import os
import pathlib
import sys
from typing import Any

from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Document and execute the checkout being built, not an installed copy: this process imports it through sys.path,
# the kernels that run the getting-started pages (started in a temporary directory) through PYTHONPATH.
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

import noiseaware  # noqa: E402

project = "noiseaware"
author = "noiseaware developers"
copyright = "noiseaware developers"
release = noiseaware.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]

exclude_patterns = ["_build", "**/.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
root_doc = "index"

# --- API reference --------------------------------------------------------------------------------------------
# One page per public module (docs/api/generated/, written by autosummary from _templates/autosummary/module.rst),
# documenting exactly the names in the module's __all__. The list is the one in api/index.rst.
API_MODULES = [
    line.strip()
    for line in (pathlib.Path(__file__).parent / "api" / "index.rst").read_text().splitlines()
    if line.strip().startswith("noiseaware") and " " not in line.strip()
]


def _api_context() -> dict[str, Any]:
    """Sort each public module's ``__all__`` into kinds, and give each re-exported object one home page.

    An object exported by several public modules (``noiseaware.Release`` is ``noiseaware.release.Release``) is
    documented once, on the page of the public module its ``__module__`` lies under, and linked from the others.
    """
    modules = {name: importlib.import_module(name) for name in API_MODULES}
    owners: dict[int, tuple[Any, list[str]]] = {}
    for modname, module in modules.items():
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                owners.setdefault(id(obj), (obj, []))[1].append(f"{modname}.{name}")
    home: dict[str, str] = {}
    for obj, names in owners.values():
        best = max(names, key=lambda full: _prefix_len(full.rsplit(".", 1)[0], obj.__module__))
        home.update({full: best for full in names if full != best})
    pages: dict[str, dict[str, list[Any]]] = {}
    for modname, module in modules.items():
        kinds = ("table", "classes", "exceptions", "functions", "data", "modules")
        page: dict[str, list[Any]] = {kind: [] for kind in kinds}
        for name in module.__all__:
            obj = getattr(module, name)
            full = f"{modname}.{name}"
            if name.startswith("_"):
                continue
            if inspect.ismodule(obj):
                page["modules"].append(obj.__name__)
                continue
            if not (inspect.isclass(obj) or callable(obj)):
                # Constants are listed with the ``#:`` comment where they are defined, not in the summary table,
                # where autosummary would show the docstring of their type (``str``, ``tuple``).
                page["data"].append({"name": full, "doc": _constant_doc(name, obj)})
                continue
            # autosummary resolves names relative to the page's module and refuses them spelled in full
            target = home.get(full, full)
            page["table"].append("~" + target.removeprefix(f"{modname}."))
            if full in home:
                continue
            if inspect.isclass(obj):
                page["exceptions" if issubclass(obj, BaseException) else "classes"].append(full)
            else:
                page["functions"].append(full)
        pages[modname] = page
    return {"api_pages": pages}


def _constant_doc(name: str, value: Any) -> list[str]:
    """The ``#:`` comment above the constant in the package module that defines it, or none."""
    for modname in sorted(m for m in sys.modules if m == "noiseaware" or m.startswith("noiseaware.")):
        if getattr(sys.modules[modname], name, None) is not value:
            continue
        try:
            docs = ModuleAnalyzer.for_module(modname).find_attr_docs()
        except PycodeError:
            continue
        if ("", name) in docs:
            return [line for line in docs["", name] if line]
    return []


def _prefix_len(modname: str, defined_in: str) -> int:
    """Length of ``modname`` if the object's defining module lies under it (the longest such module wins)."""
    return len(modname) if defined_in == modname or defined_in.startswith(modname + ".") else -1


autosummary_context = _api_context()
autosummary_generate = True
autosummary_ignore_module_all = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False  # the module page lists the members; no per-class autosummary stubs
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# --- Markdown (MyST) and executed pages ------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
# Pages in MyST-NB's text notebook format (docs/getting-started/) run on every build; a failing cell fails it.
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_show_tb = True  # the failing cell's traceback in the build log
nb_execution_timeout = 300  # seconds per cell: a hung cell fails the build
nb_execution_in_temp = True  # files a page writes (release.json) land in a temporary directory
nb_merge_streams = True

# --- HTML -----------------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"noiseaware {release}"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_static_path: list[str] = []
