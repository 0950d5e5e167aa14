"""A Census-style hierarchy split by state and fitted on Dask: 10^5 and 10^6 measurements on a LocalCluster.

`noiseaware.distributed.fit_hierarchy` splits a synthetic NMF-shaped file by root unit (state), fits each state
with `hierarchy.fit` (integer route) as a Dask task and stitches the parts into one result. Files:
`synthetic_nmf(1, 100, 250)` (100,403 noisy measurements) and `synthetic_nmf(10, 100, 250)` (1,004,030), 3 cells.
Each file runs on a fresh `LocalCluster` of 2 worker processes, 1 thread each, configured with
`noiseaware.config.configure(host_devices=None, cache=False)` (float64; the persistent compilation cache off, so
that each worker compiles the state's shape once, in the figures). Short runs: 1 chain, 50 warmup + 50 draws,
`sweeps=1`, `check_mixing=False` -- a measure of cost, not a posterior to use (the integer route's mixing:
`hierarchy_state_scale`). Reported: wall time on the client (split, tasks, transfer of the parts' results,
stitching), each part's time on its worker (the first part on each worker compiles), the steady time per sweep per
10^5 measurements, peak RSS (`VmHWM`) of each worker and of the client, and the load.

Run::

    nice .venv/bin/python benchmarks/hierarchy_dask.py --write
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import Any

import _study
import numpy as np
from _study import machine

from noiseaware import hierarchy
from noiseaware.distributed import fit_hierarchy


def _peak_rss_mib() -> float:
    """This process's peak resident set size, MiB: ``VmHWM`` of ``/proc/self/status`` (Linux).

    Not ``getrusage``'s ``ru_maxrss``, which a worker process inherits from the client that spawned it
    (preserved across ``execve``); ``VmHWM`` belongs to the process's own address space.
    """
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _configure_worker() -> None:
    from noiseaware.config import configure

    configure(host_devices=None, cache=False)


def one_file(shape: tuple[int, int, int], prior: str, args: argparse.Namespace) -> dict[str, Any]:
    from distributed import Client, LocalCluster

    rel = hierarchy.synthetic_nmf(*shape, cells=("a", "b", "c"), rng=1).release
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    try:
        client.run(_configure_worker)
        rss0 = client.run(_peak_rss_mib)
        t0 = time.perf_counter()
        res = fit_hierarchy(rel, client=client, prior=prior, chains=1, warmup=args.warmup, draws=args.draws,
                            sweeps=1, seed=1, check_mixing=False)
        wall = time.perf_counter() - t0
        rss = client.run(_peak_rss_mib)
    finally:
        client.close()
        cluster.close()
    counts = np.asarray(res["posterior"]["counts"] if not hasattr(res, "posterior") else res.posterior["counts"])
    secs = [float(s) for s in res.attrs["noiseaware_part_seconds"]]
    workers = [str(w) for w in res.attrs["noiseaware_part_workers"]]
    first = {w: workers.index(w) for w in set(workers)}  # each worker's first part compiles
    steady = [s for i, s in enumerate(secs) if i not in first.values()]
    part_meas = rel.n_measurements / shape[0]
    sweeps = args.warmup + args.draws
    # steady parts (no compilation); a file of one part per worker has none: its time, compile included, bounds it
    per_sweep = float(np.median(steady) if steady else min(secs)) / sweeps / (part_meas / 1e5)
    root = rel.root_totals()
    leaf_root = rel.leaf_parents
    exact = all(bool(np.all(counts[0][:, leaf_root == s].sum(axis=(1, 2)) == root[s])) for s in range(shape[0]))
    return {
        "shape": shape, "prior": prior, "measurements": int(rel.n_measurements), "parts": shape[0],
        "per_sweep_bound": not steady,
        "wall_s": wall, "part_s": secs, "first_part_s": sorted(secs[i] for i in first.values()),
        "steady_part_s": float(np.median(steady)) if steady else float("nan"), "per_sweep_per_1e5": per_sweep,
        "worker_rss_mib": sorted(rss.values()), "worker_rss_start_mib": sorted(rss0.values()),
        "client_rss_mib": _peak_rss_mib(), "totals_exact": exact, "leaf_cells": int(counts.shape[2] * counts.shape[3]),
    }


def main() -> None:
    ap = _study.parser(__doc__, write="flag")
    ap.add_argument("--runs", nargs="+", default=["uniform:1", "uniform:10", "hierarchical:1"],
                    help="prior:states, one file each")
    ap.add_argument("--counties", type=int, default=100)
    ap.add_argument("--tracts", type=int, default=250)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--draws", type=int, default=50)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    study = _study.Run(args)
    rows_data = []
    for run in args.runs:
        prior, n = run.split(":")
        r = one_file((int(n), args.counties, args.tracts), prior, args)
        print(r, flush=True)
        rows_data.append(r)
    up0, up1 = study.stop().loads
    total = study.wall
    rows = ["| prior | file | noisy measurements | parts | wall s (client, compile included) | first part on each "
            "worker s (compiles) | later parts s (median) | s per sweep per 10^5 measurements (<=: no later part, "
            "compilation included) | peak RSS per worker "
            "MiB | client peak RSS MiB |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows_data:
        rows.append(f"| {r['prior']} | `synthetic_nmf{r['shape']}` | {r['measurements']:,} | {r['parts']} | "
                    f"{r['wall_s']:.0f} | {' / '.join(f'{s:.0f}' for s in r['first_part_s'])} | "
                    f"{r['steady_part_s']:.1f} | {'<= ' if r['per_sweep_bound'] else ''}{r['per_sweep_per_1e5']:.3f} | "
                    f"{' / '.join(f'{m:.0f}' for m in r['worker_rss_mib'])} | {r['client_rss_mib']:.0f} |")
    growth = []
    for prior in dict.fromkeys(r["prior"] for r in rows_data):
        rs = [r for r in rows_data if r["prior"] == prior]
        if len(rs) == 2:
            a, b = rs
            growth.append(f"`{prior}`: measurements x{b['measurements'] / a['measurements']:.1f}, wall time "
                          f"x{b['wall_s'] / a['wall_s']:.1f}, peak worker RSS x"
                          f"{max(b['worker_rss_mib']) / max(a['worker_rss_mib']):.2f}, client peak RSS x"
                          f"{b['client_rss_mib'] / a['client_rss_mib']:.2f}.")
    cmd = "nice .venv/bin/python benchmarks/hierarchy_dask.py " + " ".join(sys.argv[1:])
    text = "\n".join([
        "## Census-style hierarchy on Dask: split by state, 10^5 and 10^6 measurements",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()}.  ",
        f"Load: before `{up0}`; after `{up1}`. Whole run {total:.0f} s.  ",
        f"Load (1 min): {study.before.one:.2f} before, {study.after.one:.2f} after.",
        "",
        "`noiseaware.distributed.fit_hierarchy` (one `hierarchy.fit` task per state, integer route, results stitched "
        "on the client) on a fresh `LocalCluster` of 2 worker processes x 1 thread per file, persistent compilation "
        f"cache off; 1 chain x ({args.warmup} warmup + {args.draws} draws), 1 sweep per draw, mixing not checked "
        "(a cost measurement, not a usable posterior). `prior=\"uniform\"` is the exact split; the default "
        "`\"hierarchical\"` prior (per-state scales: an approximation) adds a NUTS step per sweep and was run at 10^5 "
        "only (at 10^6 its 10 parts would take about 10 x 160 s / 2 workers, past the run's 12-minute budget). "
        "The client's peak RSS is cumulative over the run (one process). Every stitched draw met every state's "
        "exact total: "
        f"{all(r['totals_exact'] for r in rows_data)}.",
        "",
        *rows,
        "",
        "Growth from 10^5 to 10^6: " + " ".join(growth),
        "",
    ])
    headline = [f"{r['prior']}, {r['measurements']:,} measurements in {r['parts']} part(s) on 2 workers: "
                f"{r['wall_s']:.0f} s, {'<= ' if r['per_sweep_bound'] else ''}{r['per_sweep_per_1e5']:.3f} s per "
                f"sweep per 10^5 measurements{' (compilation included)' if r['per_sweep_bound'] else ''}, peak "
                f"worker RSS {max(r['worker_rss_mib']):.0f} MiB" for r in rows_data]
    if not study.record("hierarchy_dask", text, headline=headline):
        print(text)


if __name__ == "__main__":
    _study.main(main, configure_jax=False)  # each worker is configured (_configure_worker)
