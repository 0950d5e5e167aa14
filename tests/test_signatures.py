"""Signatures and docstrings are written in the source: nothing patches them at import, and they do not drift.

* No module of the package assigns ``__signature__`` or ``__doc__`` (nor ``setattr``s them), and no
  docstring holds a ``{placeholder}`` line for code to fill in: what ``inspect.signature``, a type
  checker, an editor and the API reference read is the ``def`` and the docstring as written.
* Every fit (a function of the package that calls ``check_settings``) spells out the seven sampler
  settings (``SamplingSettings.names()``) as keyword-only parameters with the defaults and types of
  ``check_settings`` (``SamplingSettings.defaults()``), passes each to
  ``check_settings`` by name, and documents each in the one wording of ``_engine._settings.SAMPLING_DOC``
  (per fit: its sampler's ``target_accept`` default, what ``check_mixing`` checks, one sentence of its own).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
import re

import pytest
from numpydoc.docscrape import FunctionDoc

from noiseaware._engine import _settings
from noiseaware._engine._settings import CORES_DOC, SAMPLER_DOC, SAMPLING_DOC, TARGET_DOC, SamplingSettings

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "noiseaware"
PATCHED = {"__signature__", "__doc__"}
_PLACEHOLDER = re.compile(r"^\s*\{\w+\}\s*$")


# ----------------------------------------------------------------------------- (a) nothing patched at import
def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return [t for target in node.targets for t in ast.walk(target) if isinstance(t, ast.expr)]
    if isinstance(node, ast.AnnAssign | ast.AugAssign):
        return [node.target]
    return []


def patch_violations(source: str, name: str = "<source>") -> list[str]:
    """Assignments to ``__signature__`` / ``__doc__`` and ``{placeholder}``-only docstring lines in ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        for t in _targets(node):
            if isinstance(t, ast.Attribute) and t.attr in PATCHED:
                out.append(f"{name}:{node.lineno}: assigns {t.attr}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in PATCHED
        ):
            out.append(f"{name}:{node.lineno}: setattr {node.args[1].value}")
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False) or ""
            out += [f"{name}:{getattr(node, 'lineno', 1)}: placeholder line {line.strip()}"
                    for line in doc.splitlines() if _PLACEHOLDER.match(line)]
    return out


def test_no_module_patches_a_signature_or_a_docstring() -> None:
    found = [v for f in sorted(PACKAGE.rglob("*.py")) for v in patch_violations(f.read_text("utf-8"), str(f))]
    assert not found, found


@pytest.mark.parametrize(
    "snippet",
    [
        "def f(**kw):\n    pass\nf.__signature__ = None\n",
        "import inspect\ndef g(fn):\n    fn.__signature__: object = inspect.signature(fn)\n    return fn\n",
        "def f():\n    pass\nf.__doc__ = 'x'\n",
        "def f():\n    pass\nf.__doc__ += 'x'\n",
        "def f():\n    pass\nsetattr(f, '__signature__', None)\n",
        "def f():\n    pass\na, f.__doc__ = 1, 'x'\n",
        'def f():\n    """Summary.\n\n    Parameters\n    ----------\n    {sampling_parameters}\n    """\n',
        'class K:\n    """Summary.\n\n    {noisy_law}\n    """\n',
    ],
)
def test_the_patch_check_fails_on_a_planted_patch(snippet: str, tmp_path: pathlib.Path) -> None:
    planted = tmp_path / "m.py"
    planted.write_text(snippet, encoding="utf-8")
    assert len(patch_violations(planted.read_text("utf-8"), "m.py")) == 1


def test_the_patch_check_passes_ordinary_code() -> None:
    ok = 'def f(x, *, chains: int = 4):\n    """Summary ``{x}``.\n\n    {x} and more.\n    """\n    doc = {}\n'
    assert patch_violations(ok) == []


# ----------------------------------------------------------------------------- (b) the fits' signatures
def _check_settings_call(fn: ast.FunctionDef) -> ast.Call | None:
    calls = [
        c for c in ast.walk(fn)
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "check_settings"
    ]
    return calls[0] if calls else None


def _fits() -> list[tuple[str, str, ast.FunctionDef, ast.Call]]:
    """``(module, name, def, check_settings call)`` of every top-level function of the package that calls it."""
    out = []
    for f in sorted(PACKAGE.rglob("*.py")):
        if f.parent.name == "_engine":
            continue
        for node in ast.parse(f.read_text("utf-8")).body:
            if isinstance(node, ast.FunctionDef) and (call := _check_settings_call(node)) is not None:
                module = ".".join(f.relative_to(PACKAGE.parent).with_suffix("").parts)
                out.append((module, node.name, node, call))
    return out


#: Functions that call ``check_settings`` on settings they forward to a fit, with the reason.
FORWARDERS = {"noiseaware.distributed.fit_hierarchy": "forwards **fit_kwargs to hierarchy.fit (checked there)"}
FITS = [fit for fit in _fits() if f"{fit[0]}.{fit[1]}" not in FORWARDERS]
IDS = [f"{m.split('.')[1]}.{n}" for m, n, _, _ in FITS]
NAMES = SamplingSettings.names()


def test_the_fits_are_found() -> None:
    found = {f"{m}.{n}" for m, n, _, _ in _fits()}
    assert set(FORWARDERS) <= found
    assert {
        "noiseaware.copula._fit.fit", "noiseaware.copula._dpcopula_fit.fit_dpcopula", "noiseaware.dirichlet._fit.fit",
        "noiseaware.dirichlet._dpmcmc.dpmcmc", "noiseaware.dirichlet._dpmcmc.dpmcmc_batch",
        "noiseaware.augment._sample.sample", "noiseaware.covariance._fit.fit", "noiseaware.regression._fit.fit",
        "noiseaware.hierarchy._fit.fit",
    } <= found


def test_the_settings_type_holds_the_defaults() -> None:
    assert NAMES == ("chains", "draws", "warmup", "seed", "progressbar", "target_accept", "check_mixing")
    assert SamplingSettings.defaults() == {
        "chains": 4, "draws": 1000, "warmup": 1000, "seed": None, "progressbar": False, "target_accept": None,
        "check_mixing": True,
    }
    assert set(SAMPLING_DOC) == set(NAMES)
    assert tuple(inspect.signature(_settings.check_settings).parameters)[:7] == NAMES
    assert not {"DEFAULTS", "SETTING_NAMES", "SamplingOptions", "sampling_keywords"} & set(dir(_settings))


@pytest.mark.parametrize(("module", "name", "node", "call"), FITS, ids=IDS)
def test_each_fit_spells_out_the_settings(module: str, name: str, node: ast.FunctionDef, call: ast.Call) -> None:
    fn = getattr(importlib.import_module(module), name)
    params = inspect.signature(fn).parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()), name
    kw_only = [p for p in params.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert tuple(p.name for p in kw_only[: len(NAMES)]) == NAMES, name
    types = {n: inspect.signature(_settings.check_settings).parameters[n].annotation for n in NAMES}
    for p in kw_only[: len(NAMES)]:
        assert p.default == SamplingSettings.defaults()[p.name] and type(p.default) is type(
            SamplingSettings.defaults()[p.name]
        ), (name, p.name, p.default)
        assert p.annotation == types[p.name], (name, p.name, p.annotation)
    # the signature is the def itself (the float64 decorator only wraps it)
    assert inspect.signature(inspect.unwrap(fn)) == inspect.signature(fn)
    # each setting reaches check_settings under its own name
    passed = {k.arg: k.value.id for k in call.keywords if isinstance(k.value, ast.Name)}
    assert all(passed.get(n) == n for n in NAMES), (name, passed)


# ----------------------------------------------------------------------------- (c) the fits' docstrings
def _template(text: str, sampler: str) -> re.Pattern[str]:
    """The canonical entry as a pattern: ``{checked}`` any phrase, then at most the fit's own sentence(s)."""
    parts = re.split(r"(\{\w+\})", text)
    fill = {"{sampler}": re.escape(SAMPLER_DOC[sampler]), "{target}": re.escape(TARGET_DOC[sampler]),
            "{checked}": r"\S.*?"}
    body = "".join(fill[p] if p in fill else re.escape(p) for p in parts)
    return re.compile(rf"{body}(?: [A-Z`:].*)?")


def _entries(fn: object, doc: str | None = None) -> dict[str, tuple[str, str]]:
    out = {}
    for p in FunctionDoc(fn, doc=doc)["Parameters"]:
        for n in p.name.replace(" ", "").split(","):
            out[n] = (p.type, " ".join(" ".join(p.desc).split()))
    return out


def _sampler_of(entries: dict[str, tuple[str, str]]) -> str:
    text = entries["target_accept"][1]
    found = [s for s in TARGET_DOC if TARGET_DOC[s] in text and SAMPLER_DOC[s] in text]
    assert len(found) == 1, text
    return found[0]


@pytest.mark.parametrize(("module", "name", "node", "call"), FITS, ids=IDS)
def test_each_fit_documents_the_settings_in_the_one_wording(
    module: str, name: str, node: ast.FunctionDef, call: ast.Call
) -> None:
    fn = getattr(importlib.import_module(module), name)
    entries = _entries(fn)
    sampler = _sampler_of(entries)
    for setting in NAMES:
        kind, text = SAMPLING_DOC[setting]
        assert setting in entries, (name, setting)
        assert entries[setting][0] == kind, (name, setting, entries[setting][0])
        assert _template(text, sampler).fullmatch(entries[setting][1]), (name, setting, entries[setting][1])
    # the documented default target is the one check_settings is given
    target = {k.arg: k.value for k in call.keywords}.get("default_target")
    given = target.id if isinstance(target, ast.Name) else "NUTS_TARGET_ACCEPT"
    assert given == {"nuts": "NUTS_TARGET_ACCEPT", "rwm": "RWM_TARGET_ACCEPT"}[sampler], (name, given)
    if "cores" in inspect.signature(fn).parameters:
        assert entries["cores"] == ("int, optional", CORES_DOC), name


def test_the_wording_check_fails_on_a_drifted_entry() -> None:
    good = _settings.setting_doc("draws")
    assert _template(SAMPLING_DOC["draws"][1], "nuts").fullmatch(good)
    assert _template(SAMPLING_DOC["draws"][1], "nuts").fullmatch(_settings.setting_doc("draws", note="Per chain."))
    assert not _template(SAMPLING_DOC["draws"][1], "nuts").fullmatch(good.replace("1000", "500"))
    rwm = _settings.setting_doc("target_accept", sampler="rwm")
    assert _template(SAMPLING_DOC["target_accept"][1], "rwm").fullmatch(rwm)
    assert not _template(SAMPLING_DOC["target_accept"][1], "nuts").fullmatch(rwm)
    checked = _settings.setting_doc("check_mixing", checked="``alpha``")
    assert _template(SAMPLING_DOC["check_mixing"][1], "nuts").fullmatch(checked)
    assert not _template(SAMPLING_DOC["check_mixing"][1], "nuts").fullmatch(checked.replace("R-hat", "Rhat"))


def test_the_written_entries_are_what_sampling_doc_renders() -> None:
    """The helper for writing a new fit's docstring gives the entries the check accepts."""

    def new_fit(x: int, *, chains: int = 4) -> None:
        pass

    doc = "Summary.\n\nParameters\n----------\nx : int\n    X.\n" + _settings.sampling_doc("", checked="``x``")
    entries = _entries(new_fit, doc)
    assert _sampler_of(entries) == "nuts"
    for setting in NAMES:
        assert _template(SAMPLING_DOC[setting][1], "nuts").fullmatch(entries[setting][1]), setting
