"""Where the test suite's time goes on compilation: a pytest plugin, and the summary of what it wrote.

On an empty cache most of ``make test``'s time is compilation: XLA compiling JAX programs and the
C compiler building PyTensor's C modules. This plugin attributes both to the test that caused them.
It records, per test:

- its wall time (setup, call and teardown: a fixture's fit counts for the first test that uses it);
- JAX's compilation events (:func:`jax.monitoring.register_event_duration_secs_listener`): tracing,
  lowering to MLIR and the backend compilation, with each backend compilation's program name. On a warm
  persistent cache the "backend compilation" is the cache's retrieval;
- the time in PyTensor's C compiler (``GCC_compiler.compile_str``: one call per C module built; none
  when the module is in PyTensor's compile cache).

Each process that runs tests writes ``<dir>/profile_<worker>.json`` (``profile_gw0.json``, ... under
pytest-xdist, whose controller records nothing; ``profile_main.json`` without it). Run the suite with it, on
empty caches to see the compilation a fresh machine pays::

    rm -rf /tmp/cp && mkdir -p /tmp/cp/xdg /tmp/cp/pt
    XDG_CACHE_HOME=/tmp/cp/xdg PYTENSOR_FLAGS=base_compiledir=/tmp/cp/pt PYTHONPATH=benchmarks \\
        .venv/bin/python -m pytest -p compile_profile --compile-profile=/tmp/cp \\
        -m "not slow" -n 2 --dist loadfile noiseaware tests
    .venv/bin/python benchmarks/compile_profile.py /tmp/cp        # the summary

The summary prints the totals, the files with the most wall time and what they compiled, and the programs
that took longest to compile over the whole run. It measures; it changes nothing in the tests.
"""

from __future__ import annotations

import collections
import json
import time
from pathlib import Path
from typing import Any

#: JAX's duration events, by the last part of their name: what each measures.
JAX_EVENTS = {
    "jaxpr_trace_duration": "trace",
    "jaxpr_to_mlir_module_duration": "lower",
    "backend_compile_duration": "compile",
}
#: A backend compilation at least this long is listed by name in the per-test record.
NAMED_COMPILE_SECS = 0.3


class _Profile:
    """The running process's record: per-test sums, and the named long compilations."""

    def __init__(self) -> None:
        self.test = "<collection>"
        self.per_test: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        self.programs: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
        self.long: list[tuple[str, str, float]] = []

    def jax_event(self, event: str, duration: float, **kwargs: Any) -> None:
        kind = JAX_EVENTS.get(event.rsplit("/", 1)[-1])
        if kind is None:
            return
        row = self.per_test[self.test]
        row[kind] += duration
        row[kind + "_n"] += 1
        if kind == "compile":
            name = str(kwargs.get("fun_name", "?"))
            prog = self.programs[name]
            prog[0] += 1
            prog[1] += duration
            if duration >= NAMED_COMPILE_SECS:
                self.long.append((self.test, name, round(duration, 3)))

    def gcc(self, duration: float) -> None:
        row = self.per_test[self.test]
        row["gcc"] += duration
        row["gcc_n"] += 1

    def dump(self, path: Path) -> None:
        path.write_text(
            json.dumps(
                {
                    "tests": {k: dict(v) for k, v in self.per_test.items()},
                    "programs": {k: v for k, v in self.programs.items()},
                    "long": self.long,
                }
            )
        )


_PROFILE: _Profile | None = None


def _hook_pytensor_compiler(profile: _Profile) -> None:
    """Time PyTensor's C compiler (a static method called once per module it builds)."""
    try:
        from pytensor.link.c import cmodule
    except ImportError:  # no PyTensor: nothing to time
        return
    original = cmodule.GCC_compiler.compile_str

    def compile_str(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            profile.gcc(time.perf_counter() - start)

    cmodule.GCC_compiler.compile_str = staticmethod(compile_str)


# ----------------------------------------------------------------------------- the pytest plugin
def pytest_addoption(parser: Any) -> None:
    parser.addoption(
        "--compile-profile",
        metavar="DIR",
        default=None,
        help="write each pytest process's compile profile to DIR/profile_<worker>.json",
    )


def pytest_configure(config: Any) -> None:
    global _PROFILE
    if not config.getoption("--compile-profile"):
        return
    if getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput"):
        return  # pytest-xdist's controller: the workers run the tests (it sees their reports, not their time)
    import jax.monitoring

    _PROFILE = _Profile()
    jax.monitoring.register_event_duration_secs_listener(_PROFILE.jax_event)
    _hook_pytensor_compiler(_PROFILE)


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    if _PROFILE is not None:
        _PROFILE.test = nodeid
        _PROFILE.per_test[nodeid]["start"] = time.perf_counter()


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    if _PROFILE is not None:
        row = _PROFILE.per_test[nodeid]
        row["wall"] += time.perf_counter() - row.pop("start")
        _PROFILE.test = "<between tests>"


def pytest_sessionfinish(session: Any) -> None:
    if _PROFILE is None:
        return
    out = Path(session.config.getoption("--compile-profile"))
    out.mkdir(parents=True, exist_ok=True)
    worker = getattr(session.config, "workerinput", {}).get("workerid", "main")  # xdist's worker id
    _PROFILE.dump(out / f"profile_{worker}.json")


# ----------------------------------------------------------------------------- the summary
def summarize(directory: Path, top: int = 25) -> str:
    """The run's totals, its heaviest files and its longest compilations, from the plugin's files."""
    tests: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    programs: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    files = sorted(directory.glob("profile_*.json"))
    if not files:
        raise SystemExit(f"no profile_*.json in {directory}")
    for f in files:
        data = json.loads(f.read_text())
        for nodeid, row in data["tests"].items():  # "<collection>" etc. occur in every process
            tests[nodeid].update(row)
        for name, (n, secs) in data["programs"].items():
            programs[name][0] += n
            programs[name][1] += secs
    total: collections.Counter[str] = collections.Counter()
    by_file: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for nodeid, row in tests.items():
        total.update(row)
        by_file[nodeid.split("::")[0]].update(row)
    single = [(n, s) for n, s in programs.values() if s / n < 0.15]
    lines = [
        f"{len(files)} processes, {sum(1 for t in tests if '::' in t)} tests, {total['wall']:.0f} test-seconds",
        f"JAX: tracing {total['trace']:.0f} s ({total['trace_n']:.0f}), lowering {total['lower']:.0f} s "
        f"({total['lower_n']:.0f}), backend compilation {total['compile']:.0f} s ({total['compile_n']:.0f} programs; "
        f"{sum(n for n, _ in single):.0f} of them under 0.15 s on average per name, {sum(s for _, s in single):.0f} s)",
        f"PyTensor C modules built: {total['gcc_n']:.0f}, {total['gcc']:.0f} s in the C compiler",
        "",
        f"{'file':<58} {'wall':>6} {'compile':>8} {'n':>5} {'lower':>6} {'trace':>6} {'gcc':>5} {'n':>4}",
    ]
    for name, row in sorted(by_file.items(), key=lambda kv: -kv[1]["wall"])[:top]:
        lines.append(
            f"{name[:58]:<58} {row['wall']:6.1f} {row['compile']:8.1f} {row['compile_n']:5.0f} {row['lower']:6.1f} "
            f"{row['trace']:6.1f} {row['gcc']:5.1f} {row['gcc_n']:4.0f}"
        )
    lines += ["", f"{'program (backend compilations by name)':<58} {'n':>5} {'seconds':>8}"]
    for name, (n, secs) in sorted(programs.items(), key=lambda kv: -kv[1][1])[:top]:
        lines.append(f"{name[:58]:<58} {n:5.0f} {secs:8.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    import _study  # here, not at the top: the plugin is also loaded from its file (tests/test_compile_profile.py)

    parser = _study.parser(__doc__, write=None)
    parser.add_argument("directory", type=Path, help="the --compile-profile directory of a test run")
    parser.add_argument("--top", type=int, default=25, help="rows per table")
    args = parser.parse_args(argv)
    print(summarize(args.directory, args.top))


if __name__ == "__main__":
    import _study

    _study.main(main, configure_jax=False)
