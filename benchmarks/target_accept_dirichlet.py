"""dirichlet.fit at the one convention's NUTS target (0.8) against its former default (0.9).

The sampling convention (docs/architecture.md) gives every NUTS fit ``target_accept=0.8``;
``dirichlet.fit`` used 0.9. This runs both targets on the same releases, seeds and settings in one
process and reports, per target: divergences, the smallest bulk ESS of ``alpha``, NUTS steps per
iteration, the sampling time of a second (compiled, cached) call and ESS per second of it.

Usage::

    .venv/bin/python benchmarks/target_accept_dirichlet.py [--draws 500] [--chains 2]
"""

from __future__ import annotations

import time
import warnings

import _study
import numpy as np

import noiseaware as na
from noiseaware.exceptions import MixingWarning

ALPHA3 = np.array([2.2, 3.3, 4.4])


def release(epsilon: float, threshold: float | None, seed: int) -> na.Release:
    x = np.random.default_rng(seed).dirichlet(ALPHA3, size=5000)
    kw = {} if threshold is None else {"threshold": threshold}
    return na.privatize(x, statistic="dirichlet_logmean", epsilon=epsilon, rng=np.random.default_rng(seed + 1), **kw)


def main() -> None:
    ap = _study.parser(__doc__, write=None)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--chains", type=int, default=2)
    args = ap.parse_args()
    run = _study.Run(args, uptime=False)
    print(f"load before: {run.before.avg}")
    cases = [("eps=4, a default", release(4.0, None, 0)), ("eps=1, a=0.05", release(1.0, 0.05, 0))]
    print("| release | target_accept | divergences | min bulk ESS (alpha) | mean NUTS steps | 2nd call s | ESS/s |")
    print("|---|---|---|---|---|---|---|")
    for label, rel in cases:
        for target in (0.8, 0.9):
            kw = dict(
                prior="p1",
                moments="asymptotic",
                chains=args.chains,
                draws=args.draws,
                warmup=args.draws,
                target_accept=target,
                check_mixing=False,
            )
            na.dirichlet.fit(rel, seed=1, **kw)  # compile (cached per target)
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MixingWarning)
                res = na.dirichlet.fit(rel, seed=2, **kw)
            secs = time.perf_counter() - t0
            d = na.results.diagnostics(res)
            steps = float(np.mean(res["sample_stats"]["n_steps"].values))
            print(
                f"| {label} | {target} | {d['divergences']:.0f} | {d['ess_bulk_min']:.0f} | {steps:.1f} | "
                f"{secs:.2f} | {d['ess_bulk_min'] / secs:.0f} |"
            )
    print(f"load after: {run.stop().after.avg}")


if __name__ == "__main__":
    _study.main(main)
