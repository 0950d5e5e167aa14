"""ESS per draw and per second of ``copula.fit``: diagonal vs dense mass-matrix adaptation (issue 15 item 1).

``copula.fit`` (NumPyro) samples in the coordinates of its Laplace preconditioner and lets NumPyro
adapt a *diagonal* mass matrix on top. Issue 15 asks for "a mass matrix that gives at least Stan's
ESS per draw". This script runs the NHANES-size case of ``speed_race.py`` (n = 5,820, p = 7, the
same simulated release, 4 x (1000 + 1000)) for several seeds with the diagonal adaptation and
with NumPyro's dense adaptation (``copula.fit(..., mass_matrix="dense")``), in the variables' pivoted
order (``variable_order="pivoted"``, the default) and in the release's order (``"given"``), each
setting in its own process, and reports per seed: min bulk ESS of the correlations, ESS per draw,
mean leapfrog steps (and effective draws per 1000 leapfrog steps, i.e. per 1000 gradients), and
the wall time of the fit (the first seed of a process includes compilation and is left out of the
means). ``--target-accept`` sets NUTS's step-size target of
every fit (default 0.8, ``copula.fit``'s). Not run in CI::

    .venv/bin/python benchmarks/copula_mass.py --seeds 10 --write docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import _study
import numpy as np


def worker(dense: bool, seeds: int, release_path: str, target_accept: float = 0.8, order: str = "pivoted") -> None:
    """Fit the release for seeds 0 .. seeds-1 in this process; a JSON line per fit."""
    import speed_race as sr

    from noiseaware.copula import fit, pair_draws

    rel = sr.load_release(release_path)
    for s in range(seeds):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = fit(rel, chains=4, draws=1000, warmup=1000, seed=s, progressbar=False,
                      mass_matrix="dense" if dense else "diagonal", target_accept=target_accept,
                      variable_order=order)
        wall = time.perf_counter() - t0
        r = np.asarray(pair_draws(res)["R"].values)  # (chain, draw, pair): R's pairs in row order
        ess, _ = sr.min_bulk_ess(r)
        steps = float(np.asarray(res["sample_stats"]["n_steps"]).mean())
        print(json.dumps({"dense": dense, "order": order, "seed": s, "wall": wall, "ess": ess, "leapfrog": steps}),
              flush=True)


def main(argv: list[str] | None = None) -> int:
    p = _study.parser(__doc__)
    p.add_argument("--seeds", type=int, default=7)
    p.add_argument("--target-accept", type=float, default=0.8,
                   help="NUTS step-size target of every fit (copula.fit's default 0.8)")
    p.add_argument("--variable-order", nargs="+", choices=["pivoted", "given"], default=["pivoted", "given"],
                   help="copula.fit's variable_order values to run (default both)")
    p.add_argument("--mass-matrix", nargs="+", choices=["diag", "dense"], default=["diag", "dense"],
                   help="mass-matrix adaptations to run (default both)")
    p.add_argument("--case", help="another release: N,P,SEED for speed_race.make_release(N, P, SEED) "
                   "(default: speed_race.py's n = 5820, p = 7 release); not with --write")
    p.add_argument("--worker", choices=["diag", "dense"], help=argparse.SUPPRESS)
    p.add_argument("--release", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.case and args.write:
        p.error("--write records the default release only")
    if args.worker:
        worker(args.worker == "dense", args.seeds, args.release, args.target_accept, args.variable_order[0])
        return 0
    import jax  # noqa: F401 -- for the versions machine() reports
    import numpyro  # noqa: F401
    import speed_race as sr

    run = _study.Run(args)
    rows: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "release.json")
        case = tuple(int(x) for x in args.case.split(",")) if args.case else (5820, 7, 2026 + 5820 + 7)
        R = sr.make_release(*case, path)  # default: speed_race.py's release for this case
        print(f"release n, p, seed = {case}: smallest eigenvalue of R {np.linalg.eigvalsh(R)[0]:.4f}")
        for order in args.variable_order:
            for kind in args.mass_matrix:
                out = subprocess.run(
                    [sys.executable, __file__, "--worker", kind, "--seeds", str(args.seeds), "--release", path,
                     "--target-accept", str(args.target_accept), "--variable-order", order],
                    capture_output=True, text=True, check=True,
                ).stdout
                name = f"{kind}, {order} order"
                rows[name] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
                for r in rows[name]:
                    print(name, r, flush=True)
    load0, load1 = run.stop().loads
    draws = 4000
    lines = [
        "| adaptation, variable order | ESS per draw, seeds 0.. | min-max | mean | mean leapfrog "
        "| ESS per 1000 leapfrog steps | mean wall s (seeds >= 1) | mean ESS per s (seeds >= 1) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, rs in rows.items():
        epd = np.array([r["ess"] / draws for r in rs])
        later = rs[1:]
        wall = float(np.mean([r["wall"] for r in later]))
        eps = float(np.mean([r["ess"] / r["wall"] for r in later]))
        lines.append(
            f"| {kind} | {', '.join(f'{x:.2f}' for x in epd)} | {epd.min():.2f}-{epd.max():.2f} | {epd.mean():.2f} "
            f"| {np.mean([r['leapfrog'] for r in rs]):.1f} "
            f"| {1000 * np.mean([r['ess'] / (draws * r['leapfrog']) for r in rs]):.1f} | {wall:.2f} | {eps:.0f} |"
        )
    table = "\n".join(lines)
    print(f"load before: {load0}\nload after: {load1}\n\n{table}")
    about = ("n = 5,820, p = 7 (speed_race.py's release), 4 x (1000 + 1000), NumPyro; "
             "ESS = min bulk ESS over the 21 correlations.")
    run.record_run("copula_mass", "copula.fit: diagonal vs dense mass adaptation (issue 15 item 1)", table,
                   about=about, argv=argv, script="copula_mass.py")
    return 0


if __name__ == "__main__":
    _study.main(main)
