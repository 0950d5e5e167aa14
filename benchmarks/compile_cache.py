"""First vs second *process* fitting the same shape: JAX's persistent compilation cache (issue 15 item 2).

Each measurement is a fresh Python process that loads a ``median_pairs`` release and runs
``noiseaware.copula.fit`` (NumPyro, chain groups on the host devices); the child reports the wall time of the fit
(compilation included) and of the imports. Sequence, all in one run and one fresh cache directory:

1. cache off (``NOISEAWARE_JAX_CACHE=0``), release A: the baseline, every program compiled;
2. cache on, release A, cold cache: compiles and writes the cache;
3. cache on, release A again: a second process, same program: loads from the cache;
4. cache on, release B (other data, same n and p): is the cache of any use for new data?

Run::

    .venv/bin/python benchmarks/compile_cache.py --n 5820 --p 7 --write docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import _study


def child(release_path: str, chains: int, draws: int, warmup: int) -> None:
    t0 = time.perf_counter()
    import noiseaware as na
    import noiseaware.copula

    t1 = time.perf_counter()
    rel = na.Release.from_json(release_path)
    fit = na.copula.fit(rel, chains=chains, draws=draws, warmup=warmup, seed=1, progressbar=False)
    t2 = time.perf_counter()
    import jax

    print(
        json.dumps(
            {
                "import_s": t1 - t0,
                "fit_s": t2 - t1,
                "cache_dir": jax.config.jax_compilation_cache_dir,
                "mean01": float(na.results.draws(fit, "R").mean(axis=0)[0]),  # R's first pair, R[0, 1]
            }
        )
    )


def run_child(release: Path, env_cache: str, args: argparse.Namespace) -> dict:
    env = dict(os.environ, NOISEAWARE_JAX_CACHE=env_cache)
    cmd = [sys.executable, __file__, "--child", str(release), "--chains", str(args.chains)]
    cmd += ["--draws", str(args.draws), "--warmup", str(args.warmup)]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["process_s"] = time.perf_counter() - t0
    return res


def main(argv: list[str] | None = None) -> int:
    ap = _study.parser(__doc__, write="str")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=5820)
    ap.add_argument("--p", type=int, default=7)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=1000)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.chains, args.draws, args.warmup)
        return 0

    import numpy as np

    import noiseaware as na
    from noiseaware.datasets import random_correlation

    warnings.simplefilter("ignore", na.exceptions.PrivacyWarning)  # simulation releases, never published
    with tempfile.TemporaryDirectory(prefix="na-cc-") as tmp:
        tmpd = Path(tmp)
        rels = {}
        for name, seed in (("A", 1), ("B", 2)):
            g = np.random.default_rng(seed)
            x = g.multivariate_normal(np.zeros(args.p), random_correlation(args.p, g), size=args.n)
            rel = na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(seed))
            rels[name] = tmpd / f"release_{name}.json"
            rels[name].write_text(rel.to_json(allow_simulation=True))  # a benchmark, never published
        cache = tmpd / "jaxcache"
        steps = [
            ("cache off, release A", "0", "A"),
            ("cache on (cold), release A", str(cache), "A"),
            ("cache on (warm), release A: second process", str(cache), "A"),
            ("cache on (warm), release B: new data, same shape", str(cache), "B"),
        ]
        rows = []
        for label, env_cache, which in steps:
            load = _study.Load.now(uptime=False).one
            res = run_child(rels[which], env_cache, args)
            files = sum(1 for _ in cache.glob("*")) if cache.exists() else 0
            size = sum(f.stat().st_size for f in cache.glob("*")) if cache.exists() else 0
            rows.append((label, res, load, files, size))
            print(
                f"{label}: fit {res['fit_s']:.1f} s, process {res['process_s']:.1f} s, load {load:.2f}, "
                f"cache {files} files {size / 1e6:.1f} MB",
                flush=True,
            )

    base = rows[0][1]["fit_s"]
    lines = [
        "## Compilation cache: first vs second process (issue 15 item 2)\n",
        f"Command: `.venv/bin/python benchmarks/compile_cache.py --n {args.n} --p {args.p} --chains {args.chains} "
        f"--draws {args.draws} --warmup {args.warmup} --write docs/benchmarks.md`",
        f"Machine: {_study.machine()}; one fresh Python process per row, run in sequence; 1-minute load average "
        "before each row is recorded (the machine is shared).\n",
        f"`noiseaware.copula.fit` (NumPyro, {args.chains} × ({args.warmup} + {args.draws})) on a `median_pairs` "
        f"release, n = {args.n}, p = {args.p}. *fit* is the wall time of the call, compilation included; "
        "*process* adds interpreter start-up and imports.\n",
        "| process | fit (s) | ratio to cache off | process (s) | load | cache files | cache MB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, res, load, files, size in rows:
        lines.append(
            f"| {label} | {res['fit_s']:.1f} | {res['fit_s'] / base:.2f} | {res['process_s']:.1f} | {load:.2f} "
            f"| {files} | {size / 1e6:.1f} |"
        )
    lines.append(
        "\nThe copula fit's programs take the release's counts as arguments, so a new release of the same "
        "shape (last row) finds the same programs in the cache as a rerun of release A; a warm process still "
        "traces its programs and imports NumPyro inside the fit (both in *fit*). *fit* includes a 1-2 s NumPyro "
        "import here (the child imports only `noiseaware.copula`); rows are one process each under the load shown."
    )
    text = "\n".join(lines) + "\n"
    print(text)
    _study.Run(args, uptime=False).record("compile_cache", text)
    return 0


if __name__ == "__main__":
    _study.main(main)
