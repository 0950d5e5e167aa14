"""Coverage of tract-count intervals (noise-aware posterior beside GLS) and the cost of both at scale.

Two studies of :mod:`noiseaware.hierarchy` on synthetic NMF-shaped files
(:func:`~noiseaware.hierarchy.synthetic_nmf`: states > counties > tracts, a total and three cells
per unit, discrete Gaussian noise of variance 4 (states' cells, counties) and 9 (tracts), state
totals exact):

* ``coverage`` -- ``--reps`` files of one tree (2 states x 3 counties x 4 tracts, 126 noisy
  measurements), a new truth and new noise each time. Ours: central 90% intervals of the integer
  posterior draws (:func:`hierarchy.model` with the hierarchical prior under NumPyro's NUTS,
  compiled once with the measurements as arguments: the model of ``hierarchy.fit``). GLS: the
  normal intervals of :func:`hierarchy.gls`. Coverage of tract totals and cells, and of the cells
  whose true count is at most 5 (near zero, where the discrete noise and non-negativity matter).
* ``scale`` -- for about 10^3 ... 10^6 noisy measurements: the time and peak traced memory
  (``tracemalloc``) of the tree GLS, the time of one gradient of the posterior's log density
  (jitted), and a short NUTS run where it fits; and the GLS of the largest file by state on Dask
  (the states are independent given their exact totals).

Run::

    .venv/bin/python benchmarks/hierarchy_calibration.py coverage --reps 100 --write
    .venv/bin/python benchmarks/hierarchy_calibration.py scale --write
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import tracemalloc
import warnings
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import load, machine, raw_path, results_dir, write_section

from noiseaware import hierarchy

SHAPE = (2, 3, 4)
SIZES = {"1e3": (2, 5, 25), "1e4": (10, 10, 25), "1e5": (50, 20, 25), "1e6": (100, 50, 50)}


def _load_line(before: str, after: str) -> str:
    """The load line of a record: 1-minute load averages before and after, then the two ``uptime`` lines."""
    one = [re.search(r"load average: ([0-9.]+)", u) for u in (before, after)]
    b, a = (m.group(1) if m else "?" for m in one)
    return f"Load average {b} before, {a} after (`uptime` before: `{before}`; after: `{after}`)."


def _covered(lo: np.ndarray, hi: np.ndarray, truth: np.ndarray) -> np.ndarray:
    return (truth >= lo) & (truth <= hi)


def coverage(reps: int, warmup: int, draws: int, write: bool, deadline: float) -> None:
    import jax
    from numpyro.infer import MCMC, NUTS

    load0 = load()
    base = hierarchy.synthetic_nmf(*SHAPE, rng=0).release
    data = hierarchy.model_data(base)
    mcmc = MCMC(NUTS(partial(hierarchy.model, data)), num_warmup=warmup, num_samples=draws, num_chains=1,
                jit_model_args=True, progress_bar=False)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for rep in range(reps):
        if time.perf_counter() - t0 > deadline:
            break
        sim = hierarchy.synthetic_nmf(*SHAPE, rng=1000 + rep)
        rel = sim.release
        d = hierarchy.model_data(rel)
        mcmc.run(jax.random.PRNGKey(rep), y=d.y, totals=d.totals)
        counts = np.asarray(mcmc.get_samples()["counts"])
        ints = hierarchy.round_to_totals(counts, d.leaf_root, rel.root_totals())
        div = int(np.asarray(mcmc.get_extra_fields()["diverging"]).sum())
        tot = ints.sum(axis=2)
        truth_t = np.concatenate([sim.truth.sum(axis=1, keepdims=True), sim.truth], axis=1)  # (tracts, 1 + cells)
        ours = np.concatenate([tot[:, :, None], ints], axis=2)
        lo, hi = np.quantile(ours, 0.05, axis=0, method="lower"), np.quantile(ours, 0.95, axis=0, method="higher")
        glo, ghi = hierarchy.gls(rel).interval(0.9)
        rows.append({
            "rep": rep, "divergences": div, "truth": truth_t.tolist(),
            "ours": _covered(lo, hi, truth_t).tolist(), "gls": _covered(glo, ghi, truth_t).tolist(),
            "ours_width": (hi - lo).tolist(), "gls_width": (ghi - glo).tolist(),
            "gls_below_zero": bool((glo[:, 1:] < 0).any()),
        })
        if (rep + 1) % 5 == 0:
            print(f"rep {rep + 1}: {time.perf_counter() - t0:.0f} s", flush=True)
            report_coverage(rows, load0, write, warmup, draws)
    report_coverage(rows, load0, write, warmup, draws)


def coverage_headline(rows: list[dict[str, Any]]) -> list[str]:
    """The record's headline: 90% coverage and width of tract totals and of cells near zero, ours and GLS."""
    truth = np.array([r["truth"] for r in rows])
    small = truth[:, :, 1:] <= 5

    def fig(method: str, sel: Any, mask: Any = None) -> str:
        cov = np.array([r[method] for r in rows])[sel]
        wid = np.array([r[f"{method}_width"] for r in rows])[sel]
        if mask is not None:
            cov, wid = cov[mask], wid[mask]
        return f"{cov.mean():.3f} (width {wid.mean():.1f})"

    return [f"{len(rows)} replications: 90% coverage of tract totals {fig('ours', np.s_[:, :, 0])} noise-aware, "
            f"{fig('gls', np.s_[:, :, 0])} GLS; cells with true count <= 5: {fig('ours', np.s_[:, :, 1:], small)} "
            f"noise-aware, {fig('gls', np.s_[:, :, 1:], small)} GLS"]


def report_coverage(rows: list[dict[str, Any]], load0: str, write: bool, warmup: int, draws: int) -> None:
    raw = raw_path("hierarchy_calibration.json")
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(rows) + "\n")
    truth = np.array([r["truth"] for r in rows])  # (reps, tracts, 1 + cells)
    table = ["| intervals | method | n intervals | 90% coverage | mean width |", "|---|---|---|---|---|"]
    groups = {
        "tract totals": np.s_[:, :, 0],
        "tract cells": np.s_[:, :, 1:],
    }
    for label, sel in groups.items():
        for method in ("ours", "gls"):
            cov = np.array([r[method] for r in rows])[sel]
            width = np.array([r[f"{method}_width"] for r in rows])[sel]
            table.append(f"| {label} | {method} | {cov.size} | {cov.mean():.3f} | {width.mean():.1f} |")
    small = truth[:, :, 1:] <= 5
    for method in ("ours", "gls"):
        cov = np.array([r[method] for r in rows])[:, :, 1:][small]
        width = np.array([r[f"{method}_width"] for r in rows])[:, :, 1:][small]
        table.append(f"| cells with true count <= 5 | {method} | {cov.size} | {cov.mean():.3f} | {width.mean():.1f} |")
    n_div = sum(r["divergences"] for r in rows)
    below = sum(r["gls_below_zero"] for r in rows)
    cmd = ".venv/bin/python benchmarks/hierarchy_calibration.py " + " ".join(sys.argv[1:])
    se = 1.96 * np.sqrt(0.09 / truth[:, :, 0].size)
    text = "\n".join([
        "## Census-style hierarchy: coverage of 90% intervals for tract counts, noise-aware posterior and GLS",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()}.  ",
        _load_line(load0, load()),
        "",
        f"{len(rows)} replications of a synthetic NMF-shaped file (2 states x 3 counties x 4 tracts, a total and 3 "
        "cells per unit, discrete Gaussian noise of variance 4 at state cells and counties and 9 at tracts, state "
        f"totals exact; 126 noisy measurements), a new truth and new noise each. Ours: NUTS, 1 chain, {warmup} "
        f"warmup + {draws} draws, hierarchical prior, intervals from the integer draws (inclusive); GLS: normal "
        "intervals of `hierarchy.gls`. Coverage is pooled over the replications' tracts; the binomial 95% band "
        f"of a pooled tract-total coverage is +-{se:.3f} if the intervals were independent (they are correlated "
        f"within a replication, so it is wider). Divergent transitions in all runs: {n_div}. Replications where "
        f"a GLS interval for a cell reached below zero: {below} of {len(rows)}.",
        "",
        *table,
        "",
    ])
    if write:
        write_section(results_dir(), "hierarchy_calibration", text, headline=coverage_headline(rows))
    else:
        print(text)


def _grad_seconds(rel: Any) -> tuple[float, float]:
    """Seconds to compile and to evaluate (median of 5) the gradient of the posterior's potential."""
    import jax
    from numpyro.infer.util import initialize_model

    data = hierarchy.model_data(rel)
    init = initialize_model(jax.random.PRNGKey(0), partial(hierarchy.model, data))
    grad = jax.jit(jax.grad(init.potential_fn))
    z = init.param_info.z
    t = time.perf_counter()
    jax.block_until_ready(grad(z))
    compile_s = time.perf_counter() - t
    times = []
    for _ in range(5):
        t = time.perf_counter()
        jax.block_until_ready(grad(z))
        times.append(time.perf_counter() - t)
    return compile_s, float(np.median(times))


def _split_by_state(rel: hierarchy.NoisyHierarchy) -> list[hierarchy.NoisyHierarchy]:
    """One release per state (the states are independent given their exact totals)."""
    out = []
    county_state = rel.parents[0]
    for s in range(len(rel.units[0])):
        counties = np.flatnonzero(county_state == s)
        tracts = np.flatnonzero(np.isin(rel.parents[1], counties))
        remap = np.full(len(rel.units[1]), -1)
        remap[counties] = np.arange(counties.size)
        out.append(hierarchy.NoisyHierarchy(
            levels=rel.levels,
            units=((rel.units[0][s],), tuple(rel.units[1][i] for i in counties),
                   tuple(rel.units[2][i] for i in tracts)),
            parents=(np.zeros(counties.size, dtype=np.int64), remap[rel.parents[1][tracts]]),
            queries=rel.queries, values=(rel.values[0][[s]], rel.values[1][counties], rel.values[2][tracts]),
            variance=rel.variance, secure=rel.secure, simulation=rel.simulation, provenance=rel.provenance,
        ))
    return out


def scale(sizes: list[str], nuts_sizes: list[str], write: bool) -> None:
    import jax
    from numpyro.infer import MCMC, NUTS

    load0 = load()
    rows = []
    for name in sizes:
        sim = hierarchy.synthetic_nmf(*SIZES[name], rng=5)
        rel = sim.release
        tracemalloc.start()
        t = time.perf_counter()
        est = hierarchy.gls(rel)
        gls_s = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        err = float(np.abs(est.mean[-1] - sim.truth).mean())
        compile_s, grad_s = _grad_seconds(rel)
        row = {"size": name, "shape": SIZES[name], "measurements": rel.n_measurements, "tracts": len(rel.units[2]),
               "gls_s": gls_s, "gls_peak_mib": peak, "gls_mae": err, "grad_compile_s": compile_s, "grad_s": grad_s}
        if name in nuts_sizes:
            data = hierarchy.model_data(rel)
            mcmc = MCMC(NUTS(partial(hierarchy.model, data)), num_warmup=200, num_samples=200, num_chains=1,
                        progress_bar=False)
            t = time.perf_counter()
            mcmc.run(jax.random.PRNGKey(1), extra_fields=("num_steps",))
            jax.block_until_ready(mcmc.get_samples())  # the run is dispatched asynchronously
            row["nuts_s"] = time.perf_counter() - t
            row["nuts_steps_mean"] = float(np.asarray(mcmc.get_extra_fields()["num_steps"]).mean())
            from arviz import convert_to_dataset, ess

            c = np.asarray(mcmc.get_samples()["counts"]).sum(axis=2)[None]  # (1 chain, draws, tracts)
            row["nuts_ess_min_tract_total"] = float(ess(convert_to_dataset({"x": c}))["x"].values.min())
        rows.append(row)
        print(json.dumps(row), flush=True)
    dask_row = _dask_gls(sizes[-1])
    report_scale(rows, dask_row, load0, write)


def _dask_gls(name: str) -> dict[str, Any]:
    import dask
    from dask.distributed import Client, LocalCluster

    rel = hierarchy.synthetic_nmf(*SIZES[name], rng=5).release
    parts = _split_by_state(rel)
    t = time.perf_counter()
    serial = [hierarchy.gls(p) for p in parts]
    serial_s = time.perf_counter() - t
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        futures = client.scatter(parts)
        t = time.perf_counter()
        out = client.gather(client.map(hierarchy.gls, futures))
        dask_s = time.perf_counter() - t
    full = hierarchy.gls(rel)
    diff = max(float(np.abs(o.mean[-1] - full.mean[-1][np.asarray(rel.leaf_parents) == s]).max())
               for s, o in enumerate(out))
    del dask, serial
    return {"size": name, "measurements": rel.n_measurements, "states": len(parts), "serial_by_state_s": serial_s,
            "dask_s": dask_s, "max_abs_diff_vs_whole": diff}


def scale_headline(rows: list[dict[str, Any]]) -> list[str]:
    """The record's headline: GLS time and memory and the gradient's time at the largest size."""
    r = rows[-1]
    return [f"{r['measurements']:,} measurements: GLS {r['gls_s']:.2f} s, {r['gls_peak_mib']:.0f} MiB; "
            f"one posterior gradient {1e3 * r['grad_s']:.0f} ms"]


def report_scale(rows: list[dict[str, Any]], dask_row: dict[str, Any], load0: str, write: bool) -> None:
    raw = raw_path("hierarchy_scale.json")
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps({"rows": rows, "dask": dask_row}) + "\n")
    table = ["| noisy measurements | tracts | GLS s | GLS peak MiB | gradient compile s | gradient ms | "
             "NUTS 200+200 s | NUTS steps / draw | min ESS (tract totals) |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        nuts = [f"{r['nuts_s']:.0f}", f"{r['nuts_steps_mean']:.0f}", f"{r['nuts_ess_min_tract_total']:.0f}"] \
            if "nuts_s" in r else ["-", "-", "-"]
        table.append(f"| {r['measurements']:,} | {r['tracts']:,} | {r['gls_s']:.3f} | {r['gls_peak_mib']:.1f} | "
                     f"{r['grad_compile_s']:.1f} | {1e3 * r['grad_s']:.2f} | " + " | ".join(nuts) + " |")
    cmd = ".venv/bin/python benchmarks/hierarchy_calibration.py " + " ".join(sys.argv[1:])
    d = dask_row
    text = "\n".join([
        "## Census-style hierarchy: time and memory of GLS and of the posterior's gradient, 10^3 to 10^6 measurements",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()}.  ",
        _load_line(load0, load()),
        "",
        "Synthetic NMF-shaped files (states x counties x tracts: " + ", ".join(
            f"{r['shape'][0]} x {r['shape'][1]} x {r['shape'][2]}" for r in rows) + "; 4 queries per unit). GLS: "
        "`hierarchy.gls` (two passes over the tree), time and peak memory traced by `tracemalloc`. Gradient: "
        "one jitted gradient of the NumPyro model's potential (`hierarchy.model`, hierarchical prior), compile "
        "time and the median of 5 evaluations; NUTS: one chain of 200 warmup + 200 draws where run.",
        "",
        *table,
        "",
        f"Dask: the {d['measurements']:,}-measurement file split by state ({d['states']} states, independent given "
        f"their exact totals), `hierarchy.gls` mapped over a `LocalCluster` of 2 worker processes: {d['dask_s']:.2f} s "
        f"(the same split run serially in one process: {d['serial_by_state_s']:.2f} s); largest difference from the "
        f"whole-file estimate {d['max_abs_diff_vs_whole']:.1e}.",
        "",
    ])
    if write:
        write_section(results_dir(), "hierarchy_scale", text, headline=scale_headline(rows))
    else:
        print(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("study", choices=["coverage", "scale"])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--deadline", type=float, default=3600.0, help="stop starting replications after this many s")
    ap.add_argument("--sizes", nargs="*", default=list(SIZES))
    ap.add_argument("--nuts-sizes", nargs="*", default=["1e3", "1e4"])
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.study == "coverage":
        coverage(args.reps, args.warmup, args.draws, args.write, args.deadline)
    else:
        scale(args.sizes, args.nuts_sizes, args.write)


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices, compilation cache
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
