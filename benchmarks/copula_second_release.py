"""copula.fit on a first and a second release of the same shape in one process (issue 10 item 4 / issue 15).

``dirichlet.fit`` and ``dirichlet.dpmcmc`` take the release's numbers as arguments of one cached
program, so a second release of the same shape skips compilation. ``copula.fit`` does not yet: its
potential closes over the release's noisy counts, so every release compiles its programs again. This
script measures what that costs: wall time of fits on release A, then B (same n, p, epsilon, other
data), then A again, in one process.

Usage::

    .venv/bin/python benchmarks/copula_second_release.py [--n 2000] [--p 3] [--draws 300]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import noiseaware as na
from noiseaware.datasets import demo_copula_data


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--p", type=int, default=3)
    ap.add_argument("--draws", type=int, default=300)
    args = ap.parse_args()
    print(f"load before: {os.getloadavg()}")
    rels = []
    for seed in (1, 2):
        x, _, _ = demo_copula_data(seed=seed, n=args.n)
        rels.append(
            na.privatize(x[:, : args.p], statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(seed))
        )
    times = []
    for label, rel in (("A (first)", rels[0]), ("B (same shape)", rels[1]), ("A again", rels[0])):
        t0 = time.perf_counter()
        na.copula.fit(rel, chains=2, draws=args.draws, warmup=args.draws, seed=1, check_mixing=False)
        times.append(time.perf_counter() - t0)
        print(f"| {label} | {times[-1]:.1f} |")
    print(f"B / A = {times[1] / times[0]:.2f}, A again / A = {times[2] / times[0]:.2f}")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
