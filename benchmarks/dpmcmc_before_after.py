"""``dirichlet.dpmcmc`` before and after a change, in one run: effective draws per second.

For each case (n, d, epsilon) one ``dirichlet_logmean`` release is made (simulation mode) and fitted
with the public ``noiseaware.dirichlet.dpmcmc`` by this tree and by a base git revision (its own
code, in a temporary worktree), each in a fresh process with an empty JAX compilation cache, one
after the other on the same release, machine and load. Reported per fit: wall time including
compilation, the wall time of an identical second fit in the same process (compiled programs
reused), the smallest bulk ESS of alpha, ESS per second for both, and the ratio this tree / base.

Run:  .venv/bin/python benchmarks/dpmcmc_before_after.py --baseline 4645e0e [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
import warnings
from pathlib import Path

import _study
import numpy as np

HERE = _study.HERE

ALPHA = {3: [2.0, 3.0, 4.0], 6: [1.5, 2.0, 3.0, 4.0, 5.0, 6.0]}


def worker(release_path: str, chains: int, draws: int, warmup: int, out: str) -> None:
    import noiseaware as na
    import noiseaware.config

    configure = getattr(noiseaware.config, "configure", None)  # revisions before it configured at import
    if configure is not None:
        configure()  # the documented set-up (the cache is off: NOISEAWARE_JAX_CACHE=0, set by the parent)
    import arviz as az

    from noiseaware.dirichlet import dpmcmc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", na.exceptions.PrivacyWarning)
        rel = na.Release.from_json(release_path)
    times, ess = [], []
    for seed in (1, 2):  # the second fit reuses the first one's compiled programs
        t0 = time.perf_counter()
        res = dpmcmc(rel, chains=chains, draws=draws, warmup=warmup, seed=seed, check_mixing=False)
        times.append(time.perf_counter() - t0)
        idata = getattr(res, "idata", res)
        ess.append(float(np.nanmin(np.asarray(az.ess(idata.posterior[["alpha"]], method="bulk")["alpha"]))))
    Path(out).write_text(json.dumps({"wall": times, "ess": ess}))


def main(argv: list[str] | None = None) -> int:
    from speed_race import baseline_tree, run_worker

    ap = _study.parser(__doc__, write="str")
    ap.add_argument("--baseline", default=None, metavar="REV", help="the base git revision (required)")
    ap.add_argument("--cases", default="1500x3x1.0,5000x6x0.5", help="comma-separated NxDxEPS")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--worker", nargs="+", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        rel, chains, draws, warmup = args.worker
        worker(rel, int(chains), int(draws), int(warmup), args.out)
        return 0
    if not args.baseline:
        ap.error("--baseline REV is required")
    import noiseaware as na

    command = "python benchmarks/dpmcmc_before_after.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    tmp = tempfile.mkdtemp(prefix="dpmcmc_ba_")
    base = baseline_tree(args.baseline, tmp)
    rows = []
    for case in args.cases.split(","):
        n, d, eps = case.split("x")
        n, d, eps = int(n), int(d), float(eps)
        x = np.random.default_rng(n + d).dirichlet(ALPHA[d], size=n)
        rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=eps, threshold=1e-3,
                           rng=np.random.default_rng(n + d + 1))
        path = os.path.join(tmp, f"rel_{n}_{d}.json")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", na.exceptions.PrivacyWarning)
            rel.to_json(path, allow_simulation=True)
        wargs = [path, str(args.chains), str(args.draws), str(args.warmup)]
        for who, script, env in (
            ("this tree", HERE / "dpmcmc_before_after.py", {"NOISEAWARE_JAX_CACHE": "0"}),
            (f"at {args.baseline}", HERE / "dpmcmc_before_after.py", {"NOISEAWARE_JAX_CACHE": "0",
                                                                       "PYTHONPATH": str(base)}),
        ):
            la0 = _study.Load.now(uptime=False)
            res = run_worker(wargs, 1800, env=env, script=script)
            res.update(who=who, n=n, d=d, eps=eps, load=f"{la0} -> {_study.Load.now(uptime=False)}")
            rows.append(res)
            print(who, n, d, eps, res, flush=True)
    lines = [
        f"Command: `{command}`",
        f"Settings: {args.chains} chains x ({args.warmup} warmup + {args.draws} draws), JAX's persistent cache "
        "off (every program compiles in each process); ESS = smallest bulk ESS of alpha.",
        "",
        "| n | d | epsilon | code | wall incl. compile (s) | ESS | ESS/s incl. compile | wall, 2nd fit (s) "
        "| ESS/s, 2nd fit | load |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['n']:,} | {r['d']} | {r['eps']} | {r['who']} | {r['error']} | | | | | |")
            continue
        w, e = r["wall"], r["ess"]
        lines.append(
            f"| {r['n']:,} | {r['d']} | {r['eps']} | {r['who']} | {w[0]:.1f} | {e[0]:.0f} | {e[0] / w[0]:.1f} "
            f"| {w[1]:.1f} | {e[1] / w[1]:.1f} | {r['load']} |"
        )
    ok = [r for r in rows if "error" not in r]
    headline = []
    for a, b in zip(ok[::2], ok[1::2], strict=False):
        r1 = (a["ess"][0] / a["wall"][0]) / (b["ess"][0] / b["wall"][0])
        r2 = (a["ess"][1] / a["wall"][1]) / (b["ess"][1] / b["wall"][1])
        same = "identical draws" if a["ess"] == b["ess"] else "different draws"
        headline.append(
            f"n = {a['n']:,}, d = {a['d']}, epsilon = {a['eps']}: this tree / {args.baseline} ESS per second "
            f"{r1:.2f}x including compilation, {r2:.2f}x for the second fit ({same})"
        )
    lines += ["", *[f"- {h}." for h in headline]]
    text = "\n".join(lines)
    print(text)
    _study.Run(args, uptime=False).record("dpmcmc_before_after", text, headline=headline)
    return 0


if __name__ == "__main__":
    _study.main(main, configure_jax=False)  # the worker configures, also at a revision before configure()
