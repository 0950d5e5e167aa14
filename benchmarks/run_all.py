"""Run the package's benchmarks in sequence (``make bench``; ``make bench-quick`` for a quick subset).

Each benchmark is a script of its own that compares against its baseline in the same run and records
its figures, with the machine, the load and the command, as ``<results>/<name>.json``
(``benchmarks/_report.py``). ``--results DIR`` (default ``benchmarks/results``, the committed records)
sets where; ``make bench-quick`` uses a scratch directory, so the committed records stay as they are.
After a full run, ``benchmarks/render_docs.py`` renders ``docs/benchmarks.md`` and
``docs/reproduction.md`` from the records. The long reproductions (``reproduce_*.py``) and the Stan side
of the speed race with every case are run by hand (their commands are in the records).

Run: ``.venv/bin/python benchmarks/run_all.py [--quick] [--results DIR] [--only NAME ...]``. The exit code
is 0 when every script succeeded, 1 otherwise; a script that needs an optional extra and exits with
code 2 (e.g. the speed race without PyStan) is reported as skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import _study

HERE = _study.HERE
RESULTS = HERE / "results"

#: name -> argument list (the script first); ``--write <results>`` is appended where ``WRITES``.
BENCHMARKS: dict[str, list[str]] = {
    "distributions": ["bench_distributions.py"],
    "augment": ["bench_augment.py"],
    "speed_race": ["speed_race.py", "--cases", "5820x7"],
    "audit_power": ["audit_power.py"],
    "dpcopula": ["bench_dpcopula.py"],
    "compile_cache": ["compile_cache.py", "--draws", "500", "--warmup", "500"],
    "privatize_dask": ["privatize_dask.py", "--n-mem", "1000000", "--n-parquet", "10000000"],
    "fit_many": ["bench_fit_many.py", "--releases", "6"],
}
#: Scripts that take ``--write``; ``audit_power.py`` prints its table only.
WRITES = {"distributions", "augment", "speed_race", "dpcopula", "compile_cache", "privatize_dask", "fit_many"}

#: ``make bench-quick``: the same scripts at sizes that finish in about two minutes together here.
QUICK: dict[str, list[str]] = {
    "distributions": ["bench_distributions.py", "--full-max", "100000"],
    "augment": ["bench_augment.py", "--short", "200", "--long", "1200", "--repeats", "1", "--numpy-sweeps", "3",
                "--tight-sweeps", "100"],
    "dpcopula": ["bench_dpcopula.py", "--n", "100000"],
}


def main(argv: list[str] | None = None) -> int:
    parser = _study.parser(__doc__, write=None, quick="the quick subset (make bench-quick)")
    parser.add_argument("--results", type=Path, default=RESULTS, help="directory of the records (default: %(default)s)")
    parser.add_argument("--only", nargs="*", help="run only these benchmarks")
    args = parser.parse_args(argv)
    table = QUICK if args.quick else BENCHMARKS
    unknown = sorted(set(args.only or ()) - set(table))
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(table)}")
    names = args.only or list(table)
    results = args.results.resolve()
    env = {**os.environ, "NOISEAWARE_BENCH_RESULTS": str(results)}
    status: dict[str, str] = {}
    t_all = time.perf_counter()
    for name in names:
        cmd = [sys.executable, str(HERE / table[name][0]), *table[name][1:]]
        if name in WRITES:
            cmd += ["--write", str(results)]
        print(f"== {name}: {' '.join(cmd)}", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call(cmd, env=env)
        took = time.perf_counter() - t0
        status[name] = "ok" if rc == 0 else ("skipped (optional extra missing)" if rc == 2 else f"failed ({rc})")
        print(f"== {name}: {status[name]} in {took:.0f} s", flush=True)
    print("\n".join(f"{k:<14} {v}" for k, v in status.items()))
    print(f"records in {results}; {time.perf_counter() - t_all:.0f} s in all")
    return 0 if all(v == "ok" or v.startswith("skipped") for v in status.values()) else 1


if __name__ == "__main__":
    _study.main(main, configure_jax=False)  # each benchmark runs in a process of its own
