"""The scale study of hierarchy_calibration.py: time and memory of GLS and of the posterior's gradient, GLS on Dask."""

from __future__ import annotations

import json
import sys
import time
import tracemalloc
from functools import partial
from typing import Any

import _study
import numpy as np
from _hierarchy_coverage import header
from _study import raw_path

from noiseaware import hierarchy

SIZES = {"1e3": (2, 5, 25), "1e4": (10, 10, 25), "1e5": (50, 20, 25), "1e6": (100, 50, 50)}


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


def scale(sizes: list[str], nuts_sizes: list[str], run: _study.Run) -> None:
    import jax
    from numpyro.infer import MCMC, NUTS

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
    report_scale(rows, dask_row, run)


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


def report_scale(rows: list[dict[str, Any]], dask_row: dict[str, Any], run: _study.Run) -> None:
    run.stop()
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
        *header("Census-style hierarchy: time and memory of GLS and of the posterior's gradient, 10^3 to 10^6 "
                "measurements", cmd, run),
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
    if not run.record("hierarchy_scale", text, headline=scale_headline(rows)):
        print(text)
