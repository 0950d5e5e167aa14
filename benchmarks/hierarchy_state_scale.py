"""A state-sized NMF (about 10^5 noisy measurements) to a posterior with `hierarchy.fit`'s default route.

One synthetic file of 1 state x 100 counties x 250 tracts with a total and 3 cells per unit (100,400 noisy
measurements, 75,000 leaf cells), fitted by `hierarchy.fit` (the integer route; `--prior`, default its default) with
the public API only; reported: the wall time including compilation, the smallest bulk ESS (ArviZ `ess`) of the
tract totals, the load (`os.getloadavg`) before and after, and a second file of the same shape (new truth, new
noise) fitted with the programs of the first, its time and whether anything compiled (the integer sampler's
program cache counters). Target (issue 45, item 3): ESS >= 400 in <= 10 minutes on a 2-core machine.

Run::

    nice .venv/bin/python benchmarks/hierarchy_state_scale.py --write
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

import _study
import numpy as np
from _study import machine

from noiseaware import hierarchy


def tract_total_ess(res: Any) -> tuple[float, float]:
    """Smallest and median bulk ESS of the tract totals (sum of a tract's cell counts) over the draws."""
    import arviz as az

    from noiseaware.results import from_groups

    counts = np.asarray(res["posterior"]["counts"] if not hasattr(res, "posterior") else res.posterior["counts"])
    totals = counts.sum(axis=3).astype(np.float64)
    ess = np.asarray(az.ess(from_groups({"posterior": {"t": totals}}), method="bulk")["t"])
    return float(np.min(ess)), float(np.median(ess))


def one_fit(shape: tuple[int, int, int], rng: int, args: argparse.Namespace) -> dict[str, Any]:
    rel = hierarchy.synthetic_nmf(*shape, cells=("a", "b", "c"), rng=rng).release
    with _study.Run(args, uptime=False) as run:
        prior = {} if args.prior is None else {"prior": args.prior}
        res = hierarchy.fit(rel, chains=args.chains, draws=args.draws, warmup=args.warmup, sweeps=args.sweeps,
                            seed=rng, check_mixing=False, **prior)
    wall, cpu, la0, la1 = run.wall, run.cpu, run.before.avg, run.after.avg
    ess_min, ess_med = tract_total_ess(res)
    counts = np.asarray(res["posterior"]["counts"])
    return {
        "measurements": int(rel.n_measurements), "leaf_cells": int(counts.shape[2] * counts.shape[3]),
        "wall_s": wall, "cpu_s": cpu, "ess_min_tract_total": ess_min, "ess_median_tract_total": ess_med,
        "compiled": int(res.attrs["noiseaware_programs_compiled"]),
        "reused": int(res.attrs["noiseaware_programs_compiled"] == 0),
        "totals_exact": bool(np.all(counts.sum(axis=(2, 3)) == rel.root_totals()[0])),
        "accept_rate": float(np.asarray(res["sample_stats"]["accept_rate"]).mean()),
        "load_before": la0, "load_after": la1,
    }


def main() -> None:
    ap = _study.parser(__doc__, write="flag")
    ap.add_argument("--shape", nargs=3, type=int, default=[1, 100, 250])
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--sweeps", type=int, default=5)
    ap.add_argument("--prior", default=None, help="hierarchy.fit's prior (default: its own default)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    shape = tuple(args.shape)
    study = _study.Run(args)
    first = one_fit(shape, 1, args)  # type: ignore[arg-type]
    print(first, flush=True)
    second = one_fit(shape, 2, args)  # type: ignore[arg-type]
    print(second, flush=True)
    up0, up1 = study.stop().loads
    met = first["ess_min_tract_total"] >= 400 and first["wall_s"] <= 600
    rows = ["| file | noisy measurements | wall s (compile included) | CPU s | min / median bulk ESS, tract totals | "
            "programs compiled | load (1 min) before -> after |", "|---|---|---|---|---|---|---|"]
    for name, r in (("first", first), ("second, same shape", second)):
        rows.append(f"| {name} | {r['measurements']:,} | {r['wall_s']:.0f} | {r['cpu_s']:.0f} | "
                    f"{r['ess_min_tract_total']:.0f} / "
                    f"{r['ess_median_tract_total']:.0f} | {r['compiled']} | "
                    f"{r['load_before'][0]:.1f} -> {r['load_after'][0]:.1f} |")
    cmd = "nice .venv/bin/python benchmarks/hierarchy_state_scale.py " + " ".join(sys.argv[1:])
    text = "\n".join([
        "## Census-style hierarchy: a state of 10^5 measurements with the integer route",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()}.  ",
        f"Load: before `{up0}`; after `{up1}`.",
        "",
        f"`hierarchy.fit` (integer counts, prior {args.prior or 'the default'!r}) on `synthetic_nmf{shape}` "
        f"with 3 cells, "
        f"{args.chains} chains x ({args.warmup} warmup + {args.draws} draws), {args.sweeps} count sweeps per draw. "
        f"Every draw met the exact total: {first['totals_exact'] and second['totals_exact']}. Mean acceptance of "
        f"the count moves {first['accept_rate']:.2f}. Target (ESS >= 400 in <= 10 min): "
        f"{'met' if met else 'missed'}.",
        "",
        *rows,
        "",
    ])
    headline = [f"{first['measurements']:,} measurements: {first['wall_s']:.0f} s with compilation, smallest "
                f"tract-total ESS {first['ess_min_tract_total']:.0f}; a second file of the same shape "
                f"{second['wall_s']:.0f} s, {second['compiled']} programs compiled"]
    if not study.record("hierarchy_state_scale", text, headline=headline):
        print(text)


if __name__ == "__main__":
    _study.main(main, configure_jax=False)
