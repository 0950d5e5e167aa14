"""Interval coverage of the noise-aware regression posterior beside the noise-blind one (regression releases).

For each cell (n, rho, d): ``--reps`` replications. Each draws the parameters from the fit's prior
(coefficients ``N(0, 0.1^2)`` for the intercept and ``N(0, 0.5^2)`` for the slopes, ``sigma ~
HalfNormal(0.15)``, covariate means ``N(0, 0.05^2)``, scales ``HalfNormal(0.15)``, LKJ(2)
correlation), simulates ``n`` rows ``x ~ N(mu_x, Sigma_x)``, ``y = u'beta + sigma e`` (clipped to the
bound 1: rare values, but a clipped value breaks the model's linear-Gaussian law, so the coverage of
the replications without a clipped value is reported beside the pooled one), releases
``privatize(..., statistic="regression", method="ssp", bound=1.0, rho=rho)`` (simulation mode), and
fits two NumPyro posteriors of the model of :func:`noiseaware.regression.fit` with that prior:

* noise-aware: :class:`noiseaware.numpyro.NoisySufficientStatistics` with the release's noise scales;
* noise-blind: the same model with the noisy statistics taken as exact (scale 0);

and, beside them, AdaSSP (:func:`noiseaware.regression.adassp`, Wang 2018) on a second release of the
same rows (``method="adassp"``, the same rho) with the interval a user would add to it: the plug-in
normal interval of a ridge estimate, ``coef +- z sd``, ``sd^2 = diag(s^2 A^-1 S A^-1)``, ``A = S + lambda D``,
``S`` the noisy ``X'X``, ``s^2`` the residual variance from the noisy statistics (the noise ignored, as
AdaSSP offers no interval); an interval that cannot be formed (``s^2 <= 0`` or ``A`` singular) misses.

Coverage is the share of central 90% and 95% intervals of every coefficient that contain the
drawn truth; with parameters drawn from the prior it is nominal for a correct model (the
calibration of simulation-based calibration, Talts et al. 2018), whatever the cell's information.
The standard error of a coverage ``c`` over ``R`` replications and ``p`` coefficients is at most
``sqrt(c (1 - c) / R)`` (coefficients of one replication are not independent). NUTS compiles once per
cell and model (the release's entries are the model's argument). Run one cell per process (a process that
ran several cells died of an LLVM "Cannot allocate memory" at its second cell)::

    .venv/bin/python benchmarks/regression_calibration.py --reps 200 --ds 2 --ns 500 --rhos 0.1 \
        --seed-offset 1000000 --write --append

(the study's cell: one chain of 1000 + 1000, the defaults, and seed offset 1000000; at n = 5000, d = 5 it adds
``--skip-blind``).

A long cell can run in chunks, in parallel processes (each its own checkout, as two processes must not write one
raw file), whose rows are then put into one raw file: ``--reps 50 --first-rep 50`` runs replications 50-99 of
the same stream, and chunks tiling ``0 .. R`` are pooled into one row (:func:`pool`).
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import _study
from _regression_study import run_cell
from _regression_table import STUDY_CHAIN, _key, report
from _study import raw_path


def main() -> None:
    ap = _study.parser(__doc__, write="flag", reps=40)
    ap.add_argument("--ns", nargs="*", type=int, default=[500, 5000])
    ap.add_argument("--rhos", nargs="*", type=float, default=[0.01, 0.1, 1.0])
    ap.add_argument("--ds", nargs="*", type=int, default=[2, 5])
    ap.add_argument("--warmup", type=int, default=STUDY_CHAIN[0])
    ap.add_argument("--draws", type=int, default=STUDY_CHAIN[1])
    ap.add_argument("--seed-offset", type=int, default=0,
                    help="added to each cell's seed: an independent replication of a cell (its row records the offset)")
    ap.add_argument("--first-rep", type=int, default=0,
                    help="run replications first-rep .. first-rep + reps - 1 of each cell's stream (a chunk; "
                    "chunks that tile 0 .. R are pooled into one row)")
    ap.add_argument("--skip-blind", action="store_true",
                    help="leave the noise-blind fit out (the noise-aware and AdaSSP results are unchanged)")
    ap.add_argument("--append", action="store_true", help="add to (replace the same cells of) the saved raw rows")
    ap.add_argument("--render-only", action="store_true", help="write the record from the saved raw rows")
    ap.add_argument("--load-note", help="with --render-only: the load during the runs (as the runner recorded it)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    args.write = args.write or args.render_only  # --render-only writes the record
    run = _study.Run(args, uptime=False)
    rows: list[dict[str, Any]] = []
    saved = raw_path("regression_calibration.json")
    if args.append and saved.exists():  # keep the cells of earlier runs; a cell run again replaces its row
        rows = json.loads(saved.read_text())
    if args.render_only:
        report(json.loads(saved.read_text()), run, args.load_note)
        return
    command = ".venv/bin/python benchmarks/regression_calibration.py " + " ".join(sys.argv[1:])
    for d in args.ds:
        for n in args.ns:
            for rho in args.rhos:
                seed = 1000 * n + 10 * d + int(rho * 100) + args.seed_offset
                res = run_cell(n, rho, d, args.reps, args.warmup, args.draws, seed=seed, first=args.first_rep,
                               blind=not args.skip_blind)
                res["command"] = command
                res["seed_offset"] = args.seed_offset
                res["warmup"], res["draws"] = args.warmup, args.draws
                rows = [r for r in rows if _key(r) != _key(res)] + [res]
                print(json.dumps({k: v for k, v in res.items() if k != "per_rep"}), flush=True)
                report(rows, run)  # after every cell: a run cut short keeps its results


if __name__ == "__main__":
    _study.main(main)
