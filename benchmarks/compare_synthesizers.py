"""DPCopula and the noise-aware synthesizer against AIM, MST (smartnoise-synth) and PrivBayes (DataSynthesizer).

Same data-generating process, epsilon and bins as ``dpcopula_coverage.py`` (n = 2000, epsilon = 1, a
Gaussian copula with rho = 0.5; x1 integer 0..99, x2 on [-4, 4] cut into 40 cells), and the same
confidential data sets: replication h draws them from ``default_rng([seed, 1, h])`` exactly as that
study does, so its noise-aware and DPCopula intervals (``benchmarks/results/raw/dpcopula_coverage.jsonl``) are
for the very same data and are read from there (the NUTS fit takes a minute a replication).

Each third-party tool runs in its own virtual environment under ``.bench-envs/`` (created here when
missing: ``python -m venv`` + ``pip install`` of a pinned version), because their pins clash with
ours (smartnoise-synth 1.0.8 needs opendp 0.8-era smartnoise-sql and opacus 0.14 with torch). The
tools see the cells as categorical integer codes (x2's 40 cells; x1's values) and infer the
categories present from the data; DPCopula's domains are stated (its empty cells get noise too).

Metrics per replication and method (one synthetic copy of n rows for every method but the
noise-aware one):

* range queries (seed 003 §5): 200 random axis-aligned boxes over (x1 cell, x2 cell), relative
  error ``|A_syn - A| / max(A, s)``, ``s = 0.05% n`` (here 1), mean over the boxes;
* OLS slope of x2 (cell centre) on x1: does the naive 95% interval of the one copy cover the
  confidential-data slope? (noise-aware: the RRR fully synthetic interval over M = 20 copies, read
  from the coverage study's file.)

Results are appended per replication to a JSON lines file (an interrupted run keeps what it has);
``--summary`` prints the table for docs/reproduction.md.

Run (default --out: benchmarks/results/raw/compare_synthesizers.jsonl)::

    nice .venv/bin/python benchmarks/compare_synthesizers.py --reps 45
    .venv/bin/python benchmarks/compare_synthesizers.py --summary
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import _study
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RAW = ROOT / "benchmarks" / "results" / "raw"
ENVS = {"mst": "smartnoise", "aim": "smartnoise", "privbayes": "datasynth"}
PINS = {"smartnoise": "smartnoise-synth==1.0.8", "datasynth": "DataSynthesizer==0.1.13"}
W2 = 8.0 / 40


def ensure_env(name: str) -> Path:
    """The python of ``.bench-envs/<name>``, creating the environment if needed."""
    py = ROOT / ".bench-envs" / name / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(py.parent.parent)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", PINS[name]], check=True)
    return py


def codes_of(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    return np.column_stack([x1, np.minimum(((x2 + 4.0) / W2).astype(np.int64), 39)])


def slope_ci(c: np.ndarray) -> tuple[float, float, float]:
    x = c[:, 0].astype(np.float64)
    y = -4.0 + W2 * (c[:, 1] + 0.5)
    xc = x - x.mean()
    sxx = float(np.dot(xc, xc))
    if sxx == 0:
        return float("nan"), float("nan"), float("nan")
    b = float(np.dot(xc, y - y.mean()) / sxx)
    r = y - y.mean() - b * xc
    se = float(np.sqrt(np.dot(r, r) / (x.size - 2) / sxx))
    return b, b - 1.96 * se, b + 1.96 * se


def range_error(conf: np.ndarray, syn: np.ndarray, boxes: np.ndarray, s: float) -> float:
    """Mean relative error of the box counts, syn rescaled to the confidential n."""
    scale = conf.shape[0] / max(syn.shape[0], 1)
    errs = []
    for lo1, hi1, lo2, hi2 in boxes:
        a = np.sum((conf[:, 0] >= lo1) & (conf[:, 0] <= hi1) & (conf[:, 1] >= lo2) & (conf[:, 1] <= hi2))
        b = scale * np.sum((syn[:, 0] >= lo1) & (syn[:, 0] <= hi1) & (syn[:, 1] >= lo2) & (syn[:, 1] <= hi2))
        errs.append(abs(b - a) / max(a, s))
    return float(np.mean(errs))


def run_tool(tool: str, c: np.ndarray, eps: float, seed: int, n: int) -> tuple[np.ndarray | None, dict]:
    import pandas as pd

    py = ensure_env(ENVS[tool])
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        pd.DataFrame({"x1": c[:, 0], "x2": c[:, 1]}).to_csv(src, index=False)
        cmd = [
            str(py),
            str(ROOT / "benchmarks" / "_synth_worker.py"),
            tool,
            "--eps",
            str(eps),
            "--seed",
            str(seed),
            "--n",
            str(n),
            str(src),
            str(dst),
        ]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if p.returncode != 0:
            return None, {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"rc {p.returncode}"}
        info = json.loads(p.stdout.strip().splitlines()[-1])
        return pd.read_csv(dst).to_numpy().astype(np.int64), info


def main() -> None:
    ap = _study.parser(__doc__, write=None, reps=45, seed=2024)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--rho", type=float, default=0.5)
    ap.add_argument("--tools", default="mst,aim,privbayes")
    ap.add_argument("--coverage", type=Path, default=RAW / "dpcopula_coverage.jsonl")
    ap.add_argument("--out", type=Path, default=RAW / "compare_synthesizers.jsonl")
    ap.add_argument("--summary", action="store_true")
    a = ap.parse_args()
    if a.summary:
        summarize(a.out)
        return
    import pandas as pd

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from dpcopula_coverage import DOMAINS, population

    import noiseaware as na
    from noiseaware import copula

    cov = {}
    if a.coverage.exists():
        cov = {r["rep"]: r for r in map(json.loads, a.coverage.open())}
    done = sum(1 for _ in a.out.open()) if a.out.exists() else 0
    for h in range(done, a.reps):
        rng = np.random.default_rng([a.seed, 1, h])
        x1, x2 = population(a.n, a.rho, rng)  # the coverage study's data set h
        c = codes_of(x1, x2)
        b_conf = slope_ci(c)[0]
        qr = np.random.default_rng([a.seed, 9, h])
        boxes = np.column_stack(
            [np.sort(qr.integers(0, 100, (200, 2)), axis=1), np.sort(qr.integers(0, 40, (200, 2)), axis=1)]
        )
        s = 0.0005 * a.n
        row: dict = {"rep": h, "b_conf": b_conf, "methods": {}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rel = na.privatize(
                pd.DataFrame({"x1": x1, "x2": x2}),
                statistic="dpcopula",
                epsilon=a.eps,
                correlation="median",
                domains=DOMAINS,
                rng=np.random.default_rng([a.seed, 5, h]),
            )
        t0 = time.time()
        one = copula.synthesize(rel, a.n, seed=np.random.default_rng([a.seed, 6, h]))
        oc = codes_of(one["x1"].to_numpy(), one["x2"].to_numpy())
        b, lo, hi = slope_ci(oc)
        row["methods"]["dpcopula"] = {
            "range_error": range_error(c, oc, boxes, s),
            "slope": b,
            "ci": [lo, hi],
            "seconds": time.time() - t0,
            "version": na.__version__,
        }
        if h in cov and abs(cov[h]["b_conf"] - float(np.polyfit(x1, x2, 1)[0])) < 1e-9:
            row["methods"]["noise_aware"] = {
                "ci": cov[h]["noise_aware"],
                "b_conf": cov[h]["b_conf"],
                "source": str(a.coverage.name),
            }
        for tool in [t for t in a.tools.split(",") if t]:
            syn, info = run_tool(tool, c, a.eps, int(rng.integers(2**31)), a.n)
            if syn is None:
                row["methods"][tool] = info
                continue
            b, lo, hi = slope_ci(syn)
            row["methods"][tool] = {"range_error": range_error(c, syn, boxes, s), "slope": b, "ci": [lo, hi], **info}
        with a.out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(
            f"rep {h}: "
            + ", ".join(f"{k} {v.get('range_error', v.get('error', '-'))}" for k, v in row["methods"].items()),
            flush=True,
        )
    summarize(a.out)


def summarize(path: Path) -> None:
    rows = [json.loads(line) for line in path.open()]
    print(f"replications: {len(rows)}")
    print(
        "| method | version | mean range-query relative error | slope CI covers confidential slope | "
        "mean CI length | seconds per fit+sample |"
    )
    print("|---|---|---|---|---|---|")
    names = sorted(
        {k for r in rows for k in r["methods"]},
        key=lambda k: ["noise_aware", "dpcopula", "aim", "mst", "privbayes"].index(k),
    )
    for k in names:
        ok = [r for r in rows if k in r["methods"] and "ci" in r["methods"][k]]
        errs = [r["methods"][k]["error"] for r in rows if "error" in r["methods"].get(k, {})]
        if not ok:
            print(f"| {k} | - | failed: {errs[0] if errs else '?'} | | | |")
            continue
        m = [r["methods"][k] for r in ok]
        target = [x.get("b_conf", r["b_conf"]) for x, r in zip(m, ok, strict=True)]  # raw x2 for noise_aware
        cover = np.array([x["ci"][0] <= t <= x["ci"][1] for x, t in zip(m, target, strict=True)], dtype=float)
        se_c = np.sqrt(max(cover.mean() * (1 - cover.mean()), 1e-12) / len(cover))
        re = [x["range_error"] for x in m if "range_error" in x]
        re_txt = f"{np.mean(re):.3f} ± {np.std(re, ddof=1) / np.sqrt(len(re)):.3f}" if len(re) > 1 else "-"
        secs = [x["seconds"] for x in m if "seconds" in x]
        print(
            f"| {k} | {m[0].get('version', '-')} | {re_txt} | {cover.mean():.3f} ± {se_c:.3f} ({len(cover)}) | "
            f"{np.mean([x['ci'][1] - x['ci'][0] for x in m]):.4f} | {np.mean(secs) if secs else float('nan'):.1f} |"
        )


if __name__ == "__main__":
    _study.main(main)
