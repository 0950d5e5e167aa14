"""Speed race: Bayes-NA by noiseaware (NumPyro, PyMC) against the paper's Stan approach (PyStan).

Run:  .venv/bin/python benchmarks/speed_race.py [--write docs/benchmarks.md] [--cases 5820x7,100000x5,1000000x10]

Seed ``000_3eff9b68025f505f.txt`` §3.3 fits Bayes-NA, ``p(R | t~) ∝ LKJ(R | 1) prod_{j<j'} P(t~_jj' | R_jj')``
(eqs. 17-18), in Stan, summing the full support of the noncentral hypergeometric normalizer
(eq. 11) and of the convolution with two-sided geometric noise (eq. 17) at every log-density
evaluation. ``STAN_PROGRAM`` below is that program, written from the equations (log-binomial
constants as transformed data, both sums vectorised with ``log_sum_exp``; nothing windowed).

For each case, one release is made with ``noiseaware.privatize(x, statistic="median_pairs",
epsilon=1, rng=...)`` on data from ``noiseaware.datasets.simulate_gaussian_copula`` and fitted by
every engine, each in a fresh Python process (so JIT / C++ compilation is counted):

- ``numpyro``: ``noiseaware.copula.fit(release, backend="numpyro")`` (plus ``--fit-options``, JSON keywords);
- ``pymc``: ``noiseaware.copula.fit(release, backend="pymc")``;
- ``stan``: ``stan.build(STAN_PROGRAM, data=...)`` then ``posterior.sample(num_chains=4, ...)``.

Every engine runs at the same settings (4 chains x 1000 warmup + 1000 draws by default) in one run.
``--stan-reduced`` lets Stan run fewer iterations where the full run would not finish in a session
(``STAN_REDUCED``); such a run is labelled "reduced run" and no ratio to it is printed, since ESS
per second at unequal settings is not a fair comparison. Reported: wall time including compilation,
the compile time and the wall time without it, the minimum bulk ESS over the p(p-1)/2 correlations,
ESS per second, and ratios to Stan in the same run. Before racing, the Stan log density is checked
against noiseaware's composite log-likelihood plus NumPyro's ``LKJCholesky`` log density at a few R.

Exit code 2 (with a message) when PyStan is not installed: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shlex
import sys
import tempfile
from pathlib import Path

import _study
from _race_report import report, summary_line
from _race_stan import STAN_PROGRAM, worker_check, worker_stan  # noqa: F401 -- STAN_PROGRAM: stan_seeds.py
from _race_workers import (  # noqa: F401 -- load_release, min_bulk_ess: copula_mass.py and others
    FIT_OPTIONS_ENV,
    NOISEAWARE_ONLY_N,
    baseline_tree,
    load_release,
    make_release,
    min_bulk_ess,
    run_worker,
    worker_noiseaware,
)

DEFAULT_CASES = "5820x7,100000x5,1000000x10"
# Stan's (warmup, draws) per chain where the full 1000 + 1000 would not finish in a benchmark session on
# this shared 2-core machine (about 45 minutes at n = 5820 under a load average of 7); used only with
# --stan-reduced (the default runs Stan at the same settings as the other engines).
STAN_REDUCED = {5820: (250, 250), 100000: (100, 100)}
# Time limits (s) per Stan run where the --stan-timeout default is too long for a benchmark session.
STAN_TIMEOUT = {100000: 600.0}


def parse_cases(text: str) -> list[tuple[int, int]]:
    cases = []
    for item in text.split(","):
        n, p = item.lower().split("x")
        cases.append((int(float(n)), int(p)))
    return cases


def main(argv: list[str] | None = None) -> int:
    ap = _study.parser(__doc__, write="str", seed=2026)
    ap.add_argument("--cases", default=DEFAULT_CASES, help="comma-separated NxP cases (default %(default)s)")
    ap.add_argument("--engines", default="numpyro,pymc,stan", help="comma-separated subset of numpyro,pymc,stan")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--stan-timeout", type=float, default=1500.0, help="time limit per Stan run, seconds")
    ap.add_argument("--timeout", type=float, default=1500.0, help="time limit per noiseaware fit, seconds")
    ap.add_argument("--stan-recompile", action="store_true", help="drop httpstan's cached build of the program first")
    ap.add_argument("--stan-reduced", action="store_true", help="let Stan run STAN_REDUCED iterations (no ratios then)")
    ap.add_argument("--stan-full", action="store_true", help="the default (kept for old command lines)")
    ap.add_argument("--baseline", default=None, metavar="REV",
                    help="also race the NumPyro fit of git revision REV (its own code and worker, in a temporary "
                         "worktree) right after this tree's, against the same Stan run")
    ap.add_argument("--baseline-python", default=None, metavar="PYTHON",
                    help="the interpreter of the baseline's worker (default: this one), e.g. .venv-compat/bin/python "
                         "to race the baseline revision on the previous stack (Python 3.11, PyMC 5, JAX 0.10)")
    ap.add_argument("--fit-options", default="{}",
                    help="JSON keywords for the NumPyro fits, e.g. '{\"mass_matrix\": \"dense\"}' (default none)")
    ap.add_argument("--worker", nargs="+", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        kind, release_path, *rest = args.worker
        opts = [int(x) for x in rest]
        if kind == "stan":
            result = worker_stan(release_path, *opts[:4], recompile=bool(opts[4]))
        elif kind == "check":
            result = worker_check(release_path, opts[0])
        else:
            result = worker_noiseaware(kind, release_path, *opts[:4], out_path=args.out)
        Path(args.out).write_text(json.dumps(result))
        return 0

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if "stan" in engines and importlib.util.find_spec("stan") is None:
        print(
            "speed_race: PyStan is not installed, so the Stan side of the race cannot run.\n"
            "Install the benchmark extra:  pip install -e '.[bench]'   (pystan >= 3.10, Linux/macOS), "
            "or run without Stan:  --engines numpyro,pymc",
            file=sys.stderr,
        )
        return 2

    command = "python benchmarks/speed_race.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    tmp = tempfile.mkdtemp(prefix="speed_race_")
    results: dict = {"cases": [], "command": command.strip()}
    recompile = args.stan_recompile
    base = baseline_tree(args.baseline, tmp) if args.baseline else None
    if base is not None:
        results["baseline"] = args.baseline
    for n, p in parse_cases(args.cases):
        rel_path = os.path.join(tmp, f"release_{n}_{p}.json")
        make_release(n, p, args.seed + n + p, rel_path)
        case: dict = {"n": n, "p": p, "k": p * (p - 1) // 2}
        print(f"== n = {n}, p = {p} ({case['k']} pairs), load {_study.Load.now(uptime=False)}", flush=True)
        base_args = [str(args.chains), str(args.draws), str(args.warmup), str(args.seed)]
        use_stan = "stan" in engines and n < NOISEAWARE_ONLY_N
        for eng in engines:
            if eng == "stan":
                if not use_stan:
                    continue
                full = (args.warmup, args.draws)
                warm, dr = STAN_REDUCED.get(n, full) if args.stan_reduced else full
                sargs = [str(args.chains), str(dr), str(warm), str(args.seed), str(int(recompile))]
                limit = args.stan_timeout
                if args.stan_reduced:
                    limit = min(limit, STAN_TIMEOUT.get(n, math.inf))
                res = run_worker(["stan", rel_path, *sargs], limit)
                recompile = False
                if "error" in res:
                    res.update(chains=args.chains, warmup=warm, draws=dr)
                else:
                    res["wall_s"] = res["build_s"] + res["sample_s"]
                    res["compile_s"] = res["build_s"]
                    res["cpu_s"] = res["process_cpu_s"]  # the whole worker: build, sampling processes
                    # httpstan's sampling processes are counted only once the worker has exited and been
                    # reaped, so the sampling's CPU is the worker's total less the build's
                    res["sample_cpu_s"] = res["process_cpu_s"] - res["build_cpu_s"]
                    res["reduced"] = (warm, dr) != (args.warmup, args.draws)
            elif eng == "pymc" and n >= NOISEAWARE_ONLY_N:
                continue
            elif eng == "numpyro":
                # first process: an empty JAX compilation cache (a first-ever fit of this shape); second
                # process: the cache the first one wrote (what every later session fitting this shape gets)
                cache = os.path.join(tmp, f"jax_cache_{n}_{p}")
                env = {"NOISEAWARE_JAX_CACHE": cache, FIT_OPTIONS_ENV: args.fit_options}
                res = run_worker([eng, rel_path, *base_args], args.timeout, env=env)
                case[eng] = res
                print(f"   {eng:8s} {summary_line(res)}", flush=True)
                eng, res = "numpyro_warm", run_worker([eng, rel_path, *base_args], args.timeout, env=env)
                if base is not None:  # the baseline revision, right after, on the same release and load
                    case[eng] = res
                    print(f"   {eng:8s} {summary_line(res)}", flush=True)
                    benv = {**env, "NOISEAWARE_JAX_CACHE": cache + "_base", "PYTHONPATH": str(base)}
                    script = base / "benchmarks" / "speed_race.py"
                    for tag in ("numpyro_base", "numpyro_base_warm"):
                        res = run_worker(["numpyro", rel_path, *base_args], args.timeout, env=benv, script=script,
                                         python=args.baseline_python)
                        case[tag] = res
                        print(f"   {tag:8s} {summary_line(res)}", flush=True)
                    continue
            else:
                res = run_worker([eng, rel_path, *base_args], args.timeout)
            case[eng] = res
            print(f"   {eng:8s} {summary_line(res)}", flush=True)
        if use_stan:  # after the race, so that the first Stan run of the race pays its own C++ build
            chk = run_worker(["check", rel_path, str(args.seed)], None)
            case["check"] = chk
            for row in chk.get("rows", []):
                print(
                    f"   log-density check: Stan {row['stan']:.10f}  noiseaware CL + LKJ "
                    f"{row['composite'] + row['lkj']:.10f}  diff {row['diff']:+.3e}",
                    flush=True,
                )
        results["cases"].append(case)
    text = report(results)
    print(text)
    _study.Run(args, uptime=False).record("speed_race_before_after" if args.baseline else "speed_race", text)
    return 0


if __name__ == "__main__":
    _study.main(main)
