"""copula.fit on a first and a second release of the same shape: in one process, and across processes.

``copula.fit`` (NumPyro) keeps one set of compiled programs per shape (``p``, ``n``, pairs, LKJ
``eta`` and the run's settings) in the engine's ``ProgramCache``, with the release's noisy counts,
its per-pair ``alpha`` and the preconditioner's ``z_hat``, ``A`` as *arguments*. So

* in one process, a second release of the same shape compiles nothing: fits of release A, then B
  (same n, p, epsilon, other data), then A again -- B should take about as long as "A again". Printed
  per fit: seconds, XLA compilations and traces to a jaxpr during the fit (counted by a
  ``jax.monitoring`` listener; the committed record counted the engine's cache entries and the
  potential's traces through the package's private modules, before the benchmarks kept to the
  public API);
* across processes, JAX's persistent compilation cache (``noiseaware.config``) holds programs that do
  not depend on the data, so a second process fitting *another* release of the same shape loads them
  instead of compiling (``--processes``: two child processes share a fresh ``XDG_CACHE_HOME``).

Usage::

    .venv/bin/python benchmarks/copula_second_release.py [--n 2000] [--p 3] [--draws 300]
    .venv/bin/python benchmarks/copula_second_release.py --processes [--n 2000] [--p 3] [--draws 300]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import _study
import numpy as np


def _release(seed: int, n: int, p: int):  # type: ignore[no-untyped-def]
    import noiseaware as na
    from noiseaware.datasets import demo_copula_data

    x, _, _ = demo_copula_data(seed=seed, n=n)
    return na.privatize(x[:, :p], statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(seed))


def _fit(rel, draws: int) -> float:  # type: ignore[no-untyped-def]
    import noiseaware as na

    t0 = time.perf_counter()
    na.copula.fit(rel, chains=2, draws=draws, warmup=draws, seed=1, check_mixing=False)
    return time.perf_counter() - t0


#: JAX's monitoring events of a backend (XLA) compilation and of a trace to a jaxpr (``jax.monitoring``).
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"


def one_process(args: argparse.Namespace) -> None:
    import jax

    counts = {COMPILE_EVENT: 0, TRACE_EVENT: 0}

    def count(event: str, duration: float, **kwargs: object) -> None:
        if event in counts:
            counts[event] += 1

    jax.monitoring.register_event_duration_secs_listener(count)
    rels = [_release(seed, args.n, args.p) for seed in (1, 2)]
    times = []
    for label, rel in (("A (first)", rels[0]), ("B (same shape)", rels[1]), ("A again", rels[0])):
        before = dict(counts)
        times.append(_fit(rel, args.draws))
        print(f"| {label} | {times[-1]:.1f} | {counts[COMPILE_EVENT] - before[COMPILE_EVENT]} | "
              f"{counts[TRACE_EVENT] - before[TRACE_EVENT]} |")
    a, b, again = times
    print(f"B / A = {b / a:.2f}, A again / A = {again / a:.2f}, B / A again = {b / again:.2f}")


def child(args: argparse.Namespace) -> None:
    t_start = time.perf_counter()
    rel = _release(args.child, args.n, args.p)
    t0 = time.perf_counter()
    import noiseaware.numpyro  # noqa: F401  (JAX and NumPyro, timed apart from the fit)

    t_import = time.perf_counter() - t0
    t_fit = _fit(rel, args.draws)
    print(json.dumps({"import_s": t_import, "fit_s": t_fit, "process_s": time.perf_counter() - t_start}))


def processes(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache, "NOISEAWARE_JAX_CACHE": "1"}
        env.pop("JAX_COMPILATION_CACHE_DIR", None)
        out = []
        for label, seed in (("first process, release A, empty cache", 1), ("second process, release B", 2)):
            cmd = [sys.executable, __file__, "--child", str(seed), "--n", str(args.n), "--p", str(args.p)]
            cmd += ["--draws", str(args.draws)]
            t0 = time.perf_counter()
            res = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            r = json.loads(res.stdout.strip().splitlines()[-1])
            out.append(r)
            print(f"| {label} | {r['fit_s']:.1f} | {r['import_s']:.1f} | {wall:.1f} |")
        print(f"second / first: fit {out[1]['fit_s'] / out[0]['fit_s']:.2f}")


def main() -> None:
    ap = _study.parser(__doc__, write=None)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--p", type=int, default=3)
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--processes", action="store_true", help="first vs second process with the persistent cache")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args)
        return
    run = _study.Run(args, uptime=False)
    print(f"load before: {run.before.avg}")
    if args.processes:
        processes(args)
    else:
        one_process(args)
    print(f"load after: {run.stop().after.avg}")


if __name__ == "__main__":
    _study.main(main)
