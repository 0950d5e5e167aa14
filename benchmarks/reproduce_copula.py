"""Reproduce seed 000's Table 1 (coverage / length of Bayes-NA intervals) and Figure 1 (p = 2 MAEs).

Seed ``000_3eff9b68025f505f.txt`` §5. Not run in CI; writes the ``copula`` section of
``docs/reproduction.md``::

    nice -n 10 .venv/bin/python benchmarks/reproduce_copula.py --write docs/reproduction.md

Design for throughput (2 shared cores):

* p = 2: the posterior of ``r`` is one-dimensional, and with ``LKJ(1)`` (uniform on (-1, 1)) it
  is computed *exactly* on a grid of 4000 cells with the exact likelihood of eq. (17) -- a full
  sum over every true count ``t`` of the Fisher noncentral hypergeometric times the geometric
  kernel, no windowing. The log-pmf matrix is built once per ``n``. A few replications per cell
  are cross-checked against ``noiseaware.copula.fit`` (NUTS, NumPyro).
* p = 5: NUTS in NumPyro on ``B`` independent replications at once: one model with a plate over
  replications (``B`` LKJ-Cholesky factors, ``B`` composite likelihoods), compiled once with the
  noisy counts passed as arguments (``jit_model_args=True``) and re-run for every batch. The
  joint posterior is the product of the ``B`` per-replication posteriors, so its marginals are
  exactly the per-replication Bayes-NA posteriors; the diagonal mass matrix adapts per
  coordinate. Split R-hat and bulk ESS per replication and pair are reported.
* Each method gets its own release with budget epsilon, as in the paper's comparisons:
  geometric (Bayes-NA), BTGM (MLE-NN), Laplace on Kendall's tau (Li-Kendall), Laplace on the
  2 x 2 tables at the theoretical medians (Asghar-dpc).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import _study
from _copula_study import (  # noqa: F401 -- also used by copula_coverage_check.py and the tests
    BatchedNUTS,
    Cell,
    GridPosterior,
    nuts_crosscheck,
    run_p2,
    run_p5_batch,
    simulate,
)
from _copula_tables import _cov_row, report


def main(argv: list[str] | None = None) -> int:
    ap = _study.parser(__doc__, write="str", seed=2026)
    ap.add_argument("--reps-p2", type=int, default=1000, help="replications per p = 2 cell")
    ap.add_argument("--reps-p5", type=int, default=200, help="target replications per p = 5 cell")
    ap.add_argument("--batch", type=int, default=50, help="p = 5 replications per NUTS batch")
    ap.add_argument("--budget-min", type=float, default=40.0, help="stop starting p = 5 batches after this")
    ap.add_argument("--p2-n", type=int, nargs="+", default=[50, 100, 200, 500, 1000])
    ap.add_argument("--p2-eps", type=float, nargs="+", default=[0.01, 0.1, 1.0])
    ap.add_argument("--p5-n", type=int, nargs="+", default=[500])
    ap.add_argument("--p5-eps", type=float, nargs="+", default=[0.5, 1.0])
    ap.add_argument("--nuts-check", type=int, default=3, help="p = 2 grid-vs-NUTS replications per checked cell")
    ap.add_argument("--raw", default=None, help="also dump per-replication results as JSON here")
    args = ap.parse_args(argv)
    command = "nice -n 10 .venv/bin/python benchmarks/reproduce_copula.py " + " ".join(argv or sys.argv[1:])
    run = _study.Run(args, uptime=False)
    cells: list[Cell] = []

    def dump() -> None:
        if args.raw:
            Path(args.raw).write_text(json.dumps([c.__dict__ for c in cells]))

    for n in args.p2_n:
        for eps in args.p2_eps:
            c = Cell(2, n, eps)
            cells.append(c)
            run_p2(c, args.reps_p2, args.seed)
            print(f"[{run.elapsed():7.1f}s] p=2 n={n} eps={eps}: {_cov_row(c)}", flush=True)
    dump()
    checks: list[dict[str, float]] = []
    for n, eps in [(200, 1.0), (1000, 0.1)][: 2 if args.nuts_check > 0 else 0]:
        checks += nuts_crosscheck(n, eps, args.nuts_check, args.seed)
    print(f"[{run.elapsed():7.1f}s] NUTS cross-check done", flush=True)
    p5 = [Cell(5, n, eps) for n in args.p5_n for eps in args.p5_eps]
    cells += p5
    samplers = {n: BatchedNUTS(n, 5, args.batch, 1000, 1000) for n in args.p5_n}
    batch_s = 0.0
    while any(c.reps < args.reps_p5 for c in p5):
        elapsed = run.elapsed()
        if elapsed + batch_s > 60 * args.budget_min:
            print(f"time budget reached after {elapsed / 60:.1f} min", flush=True)
            break
        c = min(p5, key=lambda c: c.reps)
        tb = time.time()
        run_p5_batch(c, samplers[c.n], args.seed)
        batch_s = max(batch_s, time.time() - tb) if batch_s else time.time() - tb
        print(f"[{run.elapsed():7.1f}s] p=5 n={c.n} eps={c.eps}: {_cov_row(c)}", flush=True)
        dump()
    minutes = run.stop().wall / 60
    short = [c for c in cells if c.reps < (args.reps_p2 if c.p == 2 else args.reps_p5)]
    note = (
        f"Replications run: {args.reps_p2} per p = 2 cell; "
        + ", ".join(f"{c.reps} for (p = 5, n = {c.n}, epsilon = {c.eps:g})" for c in p5)
        + "."
    )
    if short:
        note += " **Fewer than the target** in: " + ", ".join(f"({c.p}, {c.n}, {c.eps:g})" for c in short) + "."
    text = report(cells, checks, command, minutes, note)
    print(text)
    run.record("reproduce_copula", text)
    return 0


if __name__ == "__main__":
    _study.main(main)
