"""Error messages name the public function without threading its name through the math.

* No function of the package takes a parameter named ``owner`` (an AST scan of every ``def`` and
  ``lambda``), except those listed in :data:`ALLOWED` with the reason; the scan is shown to catch
  planted snippets.
* The mechanism that replaces it (:func:`noiseaware._validation.owner_scope`, :func:`owned`,
  :func:`current_owner`): the innermost scope wins and is restored on exit (also after an error),
  the fallback outside any scope is ``"noiseaware"``, and each thread and each asyncio task sees
  its own owner.
* Messages raised through public entry points still name them.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import pathlib
import threading

import numpy as np
import pytest

import noiseaware as na
from noiseaware import _validation as v
from noiseaware.exceptions import NoiseawareValueError, PrivacyWarning

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "noiseaware"

#: ``(path relative to the package, qualified name) -> reason`` for a parameter named ``owner`` that stays.
ALLOWED: dict[tuple[str, str], str] = {
    ("_privatize/_dask.py", "aligned"): (
        "runs as a Dask task on a worker thread, where the caller's context does not follow: the owner is data"
    ),
    ("_privatize/_dask.py", "_df_block"): (
        "runs as a Dask task on a worker thread, where the caller's context does not follow: the owner is data"
    ),
    ("_engine/_mixing.py", "check_mixing"): (
        "public (noiseaware.augment.check_mixing): the caller names the fit its MixingWarning speaks for"
    ),
    ("hierarchy/_split.py", "check_stitched_mixing"): (
        "public (noiseaware.hierarchy.check_stitched_mixing): the caller names the fit its MixingWarning speaks for"
    ),
}


def _qualname(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    names = []
    while node in parents:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Lambda):
            names.append("<lambda>")
        node = parents[node]
    return ".".join(reversed(names))


def owner_params(source: str) -> list[tuple[str, int]]:
    """``(qualified name, line)`` of every ``def`` or ``lambda`` in ``source`` with a parameter named ``owner``."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x is not None)]
            if any(p.arg == "owner" for p in params):
                found.append((_qualname(node, parents), node.lineno))
    return found


def test_no_function_takes_an_owner_parameter() -> None:
    found = {
        (str(f.relative_to(PACKAGE)), name): line
        for f in sorted(PACKAGE.rglob("*.py"))
        for name, line in owner_params(f.read_text("utf-8"))
    }
    unexpected = sorted(f"{path}:{line}: {name}" for (path, name), line in found.items() if (path, name) not in ALLOWED)
    assert not unexpected, "messages read the owner from the context (_validation.current_owner): " + str(unexpected)
    stale = sorted(set(ALLOWED) - set(found))
    assert not stale, f"listed in ALLOWED but no longer take owner: {stale}"
    assert all(reason.strip() for reason in ALLOWED.values())


@pytest.mark.parametrize(
    "snippet",
    [
        "def f(owner, x):\n    pass\n",
        "def f(x, owner: str = 'X'):\n    pass\n",
        "def f(x, *, owner):\n    pass\n",
        "def f(owner, /, x):\n    pass\n",
        "async def f(owner):\n    pass\n",
        "class K:\n    def m(self, owner):\n        pass\n",
        "def outer():\n    def inner(owner):\n        pass\n",
        "g = lambda owner, x: x\n",
    ],
)
def test_the_scan_finds_a_planted_owner_parameter(snippet: str) -> None:
    assert owner_params(snippet)


@pytest.mark.parametrize(
    "snippet",
    [
        "def f(x):\n    owner = current_owner()\n    return owner\n",
        "def f(name):\n    with owner_scope(name):\n        pass\n",
        "def f(owners, owner_name):\n    pass\n",
    ],
)
def test_the_scan_leaves_locals_and_other_names_alone(snippet: str) -> None:
    assert owner_params(snippet) == []


# ----------------------------------------------------------------------------- the mechanism
def test_outside_any_scope_the_owner_is_the_package() -> None:
    assert v.current_owner() == v.DEFAULT_OWNER == "noiseaware"
    assert v.current_owner("Release") == "Release"
    with pytest.raises(NoiseawareValueError, match=r"^noiseaware: x must be a finite number > 0; got x=-1\.0\.$"):
        v.positive("x", -1.0)


def test_the_innermost_scope_wins_and_is_restored() -> None:
    with v.owner_scope("privatize"):
        assert v.current_owner() == "privatize"
        with v.owner_scope("TwoSidedGeometric"):
            assert v.current_owner() == "TwoSidedGeometric"
        assert v.current_owner() == "privatize"
        with pytest.raises(NoiseawareValueError, match=r"^privatize: epsilon "):
            v.epsilon(-1.0)
    assert v.current_owner() == "noiseaware"


def test_a_scope_is_restored_after_an_error() -> None:
    @v.owned("Demo.fit")
    def check(x: float) -> float:
        """Doc of check."""
        return v.positive("x", x)

    with pytest.raises(NoiseawareValueError, match=r"^Demo\.fit: x must be"):
        check(-2.0)
    assert v.current_owner() == "noiseaware"
    with pytest.raises(NoiseawareValueError, match=r"^Demo\.fit: x must be"), v.owner_scope("outer"):
        check(-2.0)
    assert check(2.0) == 2.0
    assert check.__name__ == "check" and check.__doc__ == "Doc of check."
    assert str(inspect.signature(check)) == "(x: 'float') -> 'float'"


def test_a_fallback_owner_yields_to_a_scope_already_set() -> None:
    with v.fallback_owner("Release"):
        assert v.current_owner() == "Release"
    with v.owner_scope("Release.from_json"), v.fallback_owner("Release"):
        assert v.current_owner() == "Release.from_json"


def test_warnings_name_the_current_owner() -> None:
    with pytest.warns(PrivacyWarning, match=r"^privatize: epsilon=8\.0 is above 5"), v.owner_scope("privatize"):
        v.epsilon(8.0)


def test_each_thread_sees_its_own_owner() -> None:
    barrier = threading.Barrier(2)
    seen: dict[str, list[str]] = {}

    def work(name: str) -> None:
        out = seen.setdefault(name, [])
        out.append(v.current_owner())  # a new thread starts outside any scope
        with v.owner_scope(name):
            barrier.wait()  # both scopes are open at once
            out.append(v.current_owner())
            barrier.wait()
        out.append(v.current_owner())

    with v.owner_scope("main"):
        threads = [threading.Thread(target=work, args=(n,)) for n in ("A.fit", "B.fit")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert v.current_owner() == "main"
    assert seen == {n: ["noiseaware", n, "noiseaware"] for n in ("A.fit", "B.fit")}


def test_each_asyncio_task_sees_its_own_owner() -> None:
    async def work(name: str, first: asyncio.Event, second: asyncio.Event) -> list[str]:
        out = []
        with v.owner_scope(name):
            first.set()
            await second.wait()  # the other task runs inside its own scope meanwhile
            out.append(v.current_owner())
        out.append(v.current_owner())
        return out

    async def main() -> list[list[str]]:
        a, b = asyncio.Event(), asyncio.Event()
        return list(await asyncio.gather(work("A.fit", a, b), work("B.fit", b, a)))

    assert asyncio.run(main()) == [["A.fit", "noiseaware"], ["B.fit", "noiseaware"]]


# ----------------------------------------------------------------------------- public entry points
def test_public_entry_points_name_themselves() -> None:
    x = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(NoiseawareValueError, match=r"^privatize: epsilon must be a finite number > 0; got epsilon=-1"):
        na.privatize(x, statistic="median_pairs", epsilon=-1.0)
    with pytest.raises(NoiseawareValueError, match=r"^GeometricMechanism: epsilon must be a finite number > 0"):
        na.mechanisms.GeometricMechanism.from_epsilon(-1.0)
    with pytest.raises(NoiseawareValueError, match=r"^LaplaceMechanism: scale must be a finite number > 0"):
        na.mechanisms.LaplaceMechanism(scale=-1.0, sensitivity=1.0)
    with pytest.raises(NoiseawareValueError, match=r"^zcdp_delta: rho must be"):
        na.accounting.zcdp_delta(-1.0, 1.0)
    assert v.current_owner() == "noiseaware"
