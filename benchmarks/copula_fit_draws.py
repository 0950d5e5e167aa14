"""Posterior draws of copula.fit (NumPyro) at fixed seeds, saved to compare two implementations.

Fits four small releases (dense and diagonal preconditioner, 1 to 3 chains, 100 + 100 iterations,
seed 5) and saves ``R`` and the sample stats to an ``.npz``; ``--compare OTHER.npz`` prints the
largest absolute difference per array. Used to check that compiling once per shape (the counts as
arguments) left the draws unchanged.

Usage::

    .venv/bin/python benchmarks/copula_fit_draws.py OUT.npz [--compare BEFORE.npz]
"""

from __future__ import annotations

import _study
import numpy as np

import noiseaware as na
from noiseaware.datasets import demo_copula_data

CASES = [(400, 2, 2, "auto"), (600, 3, 2, "dense"), (600, 3, 1, "diagonal"), (500, 4, 3, "diagonal")]


def main() -> int:
    ap = _study.parser(__doc__, write=None)
    ap.add_argument("out")
    ap.add_argument("--compare", default=None)
    args = ap.parse_args()
    out = {}
    for n, p, chains, pre in CASES:
        x, _, _ = demo_copula_data(seed=1, n=n)
        rel = na.privatize(x[:, :p], statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(0))
        res = na.copula.fit(rel, chains=chains, draws=100, warmup=100, seed=5, check_mixing=False, preconditioner=pre)
        key = f"{n}_{p}_{chains}_{pre}"
        out[key + "_R"] = na.copula.pair_draws(res)["R"].values  # R's pairs (chain, draw, pair)
        for s in ("lp", "n_steps", "accept_rate", "diverging"):
            out[key + "_" + s] = res["sample_stats"][s].values
    np.savez(args.out, **out)
    if args.compare:
        other = np.load(args.compare)
        for k in sorted(out):
            diff = np.max(np.abs(out[k].astype(float) - other[k].astype(float)))
            print(f"{k}: max |difference| = {diff:.3g}")
    return 0


if __name__ == "__main__":
    _study.main(main)
