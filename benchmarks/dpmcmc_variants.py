"""Effective draws of ``dirichlet.dpmcmc`` over several releases of one cell, for kernel variants.

A cell's ESS moves a lot from one release to the next (and one run to the next), so a change of
the default kernels is judged here on the mean over ``--releases`` releases of the cell (seeds 0, 1,
...; the same releases for every variant), or on ``--budget-uk`` (the 2-children group of
``examples/budget_uk.py``, with ``--releases`` sampler seeds on the one release). Each variant is
``DEFAULT_SAMPLER`` with fields replaced (``name=value,name=value``; ``""`` is the default), 4 chains
x (500 + 1000) on all local devices, no fallback. Reported per variant: the smallest bulk ESS of alpha
per release, their mean, the mean wall time (compilation excluded) and the ratio. Not run in CI::

    .venv/bin/python benchmarks/dpmcmc_variants.py --n 1500 --d 3 --eps 1 --releases 4 "" "surrogate_steps=40"
    .venv/bin/python benchmarks/dpmcmc_variants.py --budget-uk --releases 2 ""
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dpmcmc_speed import budget_uk_cells, release, run_sampler

from noiseaware.dirichlet import _dpmcmc as M


def sampler(spec: str) -> M._Sampler:
    """``DEFAULT_SAMPLER`` with the fields of ``spec`` (``name=value,...``) replaced."""
    kw = {}
    for item in filter(None, spec.split(",")):
        name, value = item.split("=")
        kw[name] = type(getattr(M.DEFAULT_SAMPLER, name))(value)
    return M.DEFAULT_SAMPLER._replace(**kw)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("variants", nargs="+", help='"" for the default, or name=value,... fields of _Sampler')
    p.add_argument("--n", type=int, default=1500)
    p.add_argument("--d", type=int, default=3)
    p.add_argument("--eps", type=float, default=1.0)
    p.add_argument("--releases", type=int, default=4)
    p.add_argument("--budget-uk", action="store_true", help="the BudgetUK 2-children release, --releases seeds")
    args = p.parse_args(argv)
    if args.budget_uk:
        rel = budget_uk_cells(0)[1][1][1]
        rels = [rel] * args.releases
        print(f"BudgetUK, 2 children (n = {rel.n}), sampler seeds 0..{args.releases - 1}")
    else:
        rels = [release(args.n, args.d, args.eps, s) for s in range(args.releases)]
        print(f"n = {args.n}, d = {args.d}, epsilon = {args.eps}, releases 0..{args.releases - 1}")
    for spec in args.variants:
        runs = [run_sampler(rel, sampler(spec), 4, 1000, 500, s, fallback=None) for s, rel in enumerate(rels)]
        ess, wall = [r["ess"] for r in runs], [r["wall"] for r in runs]
        print(f"{spec or 'default'}: ESS {[round(e) for e in ess]}, mean {np.mean(ess):.0f}; "
              f"mean wall {np.mean(wall):.2f} s; ESS/s {np.mean(ess) / np.mean(wall):.0f}", flush=True)
    return 0


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices, compilation cache
    sys.exit(main())
