"""Speed of the DPCopula hybrid (seed 003 Algorithm 6) against the plain DPCopula, same data, same run.

n = 10^6 records, 2 small attributes (2 and 5 values: 10 partitions) and 6 large ones on 0..999 from
a Gaussian copula; secure releases (OpenDP samplers). The ratio hybrid / plain is the load-robust
figure (2 shared cores); absolute seconds drift with the load, recorded at start and end.

Run:  .venv/bin/python benchmarks/bench_dpcopula_hybrid.py --write docs/benchmarks.md
"""

from __future__ import annotations

import time

import _study
import numpy as np
import pandas as pd

import noiseaware as na
from noiseaware import copula


def main() -> None:
    ap = _study.parser(__doc__)
    ap.add_argument("--n", type=int, default=1_000_000)
    a = ap.parse_args()
    from scipy import stats

    run = _study.Run(a, uptime=False)
    rng = np.random.default_rng(0)
    R = stats.random_correlation.rvs(np.linspace(0.3, 1.7, 8) * 8 / 8.0, random_state=0)
    z = rng.standard_normal((a.n, 8)) @ np.linalg.cholesky(R).T
    df = pd.DataFrame(np.clip(np.round(500 + 150 * z), 0, 999).astype(np.int64), columns=[f"a{j}" for j in range(8)])
    df["a0"] = (z[:, 0] > 0).astype(np.int64)
    df["a1"] = np.digitize(z[:, 1], [-1.0, -0.3, 0.3, 1.0])
    doms = {c: range(0, 1000) for c in df.columns}
    doms["a0"], doms["a1"] = range(2), range(5)
    times = {}
    t = time.perf_counter()
    hyb = na.privatize(df, statistic="dpcopula", epsilon=1.0, domains=doms, hybrid="auto")
    times["release, hybrid (10 partitions)"] = time.perf_counter() - t
    t = time.perf_counter()
    plain = na.privatize(df, statistic="dpcopula", epsilon=1.0, domains=doms)
    times["release, plain DPCopula"] = time.perf_counter() - t
    t = time.perf_counter()
    copula.synthesize(hyb, a.n, seed=0)
    times["synthesize 10^6 rows, hybrid"] = time.perf_counter() - t
    t = time.perf_counter()
    copula.synthesize(plain, a.n, seed=0)
    times["synthesize 10^6 rows, plain"] = time.perf_counter() - t
    l0, l1 = run.before, run.stop().after
    lines = [
        "## DPCopula hybrid (Algorithm 6) release and synthesis (`benchmarks/bench_dpcopula_hybrid.py`)",
        "",
        "Command: `.venv/bin/python benchmarks/bench_dpcopula_hybrid.py --write docs/benchmarks.md`",
        "",
        f"n = {a.n:,} records, m = 8: two small attributes (2 and 5 values, 10 partitions, picked by "
        f"`hybrid='auto'`) and six on 0..999; epsilon = 1; secure releases. Load average at start {l0}, at end {l1} "
        "(2 shared cores).",
        "",
        "| step | time (s) |",
        "|---|---:|",
        *[f"| {k} | {v:.2f} |" for k, v in times.items()],
        "",
        f"Ratios in this run: release hybrid / plain = "
        f"{times['release, hybrid (10 partitions)'] / times['release, plain DPCopula']:.2f}, "
        "synthesis hybrid / plain = "
        f"{times['synthesize 10^6 rows, hybrid'] / times['synthesize 10^6 rows, plain']:.2f}.",
    ]
    text = "\n".join(lines)
    print(text)
    run.record("dpcopula_hybrid", text)


if __name__ == "__main__":
    _study.main(main)
