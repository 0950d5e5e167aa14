"""Extra replications of one p = 2 cell of seed 000 Table 1 (exact grid posterior only, no baselines).

Used to check whether a coverage figure of ``reproduce_copula.py`` that sits far from 95% is chance:
the same simulation, release and grid posterior, on fresh seeds, with coverage by range of the true r.

Run:  .venv/bin/python benchmarks/copula_coverage_check.py --n 200 --eps 1 --reps 4000 --seed 7
"""

from __future__ import annotations

import math

import _study
import numpy as np
import reproduce_copula as rc

import noiseaware as na


def main() -> None:
    ap = _study.parser(__doc__, write=None, reps=4000, seed=7)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--eps", type=float, default=1.0)
    a = ap.parse_args()
    grid = rc.GridPosterior(a.n)
    cover, length, truth = [], [], []
    for h in range(a.reps):
        rng = np.random.default_rng([a.seed, a.n, h])
        x, R = rc.simulate(2, a.n, rng)
        rel = na.privatize(x, statistic="median_pairs", epsilon=a.eps, rng=rng)
        alpha = math.exp(-float(rel.metadata["epsilon_per_pair"]))
        _, lo, hi = grid.summary(float(rel.values[0]), alpha)
        r = float(R[0, 1])
        cover.append(lo <= r <= hi)
        length.append(hi - lo)
        truth.append(r)
    c, t = np.array(cover, dtype=float), np.array(truth)
    se = math.sqrt(0.95 * 0.05 / a.reps)
    print(f"n={a.n} eps={a.eps:g} reps={a.reps} seed={a.seed}: coverage {100 * c.mean():.2f}% "
          f"(z vs 95 = {(c.mean() - 0.95) / se:+.2f}), mean length {np.mean(length):.4f}")
    for lo_r, hi_r in [(-1, -0.8), (-0.8, -0.4), (-0.4, 0), (0, 0.4), (0.4, 0.8), (0.8, 1)]:
        s = (t > lo_r) & (t <= hi_r)
        print(f"  r in ({lo_r:+.1f}, {hi_r:+.1f}]: {int(s.sum()):5d} replications, coverage {100 * c[s].mean():.1f}%")


if __name__ == "__main__":
    _study.main(main)
