"""PyMC route against NumPyro on regression: ``regression.fit`` and a user's ``pm.sample``, same releases, one run.

For each release (Gaussian noise, ``rho = 1``; Laplace noise, ``epsilon = 1``) the NumPyro backend
(``regression.fit(backend="numpyro")``) runs first, then the PyMC backend (``backend="pymc"``,
its default NUTS implementation ``nuts_sampler="auto"``), then a model a user writes with
:class:`noiseaware.pymc.NoisySufficientStatistics` sampled by plain ``pm.sample()`` (PyMC's own
NUTS, its default compile mode: Numba from PyTensor 3, C before; its default ``cores``), all at the
same chains, warmup, draws and seed, with the fit's default prior (every bound is 1, so every
scale is 1). Each route runs twice in the same process: the first call is timed with compilation
(nothing compiled before, JAX's persistent cache off), the second with what the stack keeps in the
process (JAX's in-memory programs; PyTensor's Numba and C caches) -- "excl. compile" is the second
call's wall time, and for ``pm.sample`` also PyMC's own ``sampling_time``. Figures:

* ESS/s: the smallest bulk ESS over the slopes (``beta[1:]``, the intercept left out) divided by
  the call's wall time;
* ratio: the NumPyro fit's ESS/s divided by the row's (the target: at most 3 for the PyMC routes);
* agreement: the largest ``|mean_row - mean_numpyro| / sqrt(mcse_row^2 + mcse_numpyro^2)`` over the
  slopes (under a correct sampler about |N(0, 1)|; above 4.5 is a red flag).

Data: n = 2,000 rows of 4 covariates uniform on [-1, 1] and a response clipped to [-1, 1]
(``statistic="regression"``, ``bound=1``, intercept): 20 released entries of ``Z^T Z``. Run::

    nice .venv/bin/python benchmarks/pymc_regression_speed.py --write
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from typing import Any

import _study
import numpy as np

import noiseaware as na
from noiseaware import regression

D = 4


def releases() -> dict[str, Any]:
    """The two releases of the same data: ``family -> Release``."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.0, 1.0, size=(2000, D))
    y = np.clip(x @ np.array([0.5, -0.3, 0.2, 0.1]) + 0.3 * rng.normal(size=2000), -1.0, 1.0)
    data = np.column_stack([x, y])
    out = {}
    for family, budget in (("gaussian", {"rho": 1.0}), ("laplace", {"epsilon": 1.0})):
        out[family] = na.privatize(data, statistic="regression", response=f"x{D}", bound=1.0,
                                   rng=np.random.default_rng(1), **budget)
    return out


def user_model(release: Any) -> Any:
    """A model as a user writes it: the fit's default prior (all scales 1) and ``NoisySufficientStatistics``."""
    import pymc as pm

    from noiseaware.pymc import NoisySufficientStatistics

    with pm.Model() as model:
        beta = pm.Normal("beta", 0.0, 1.0, shape=D + 1)
        sigma = pm.HalfNormal("sigma", 1.0)
        mu_x = pm.Normal("mu_x", 0.0, 1.0, shape=D)
        chol, _, _ = pm.LKJCholeskyCov("chol_x", n=D, eta=2.0, sd_dist=pm.HalfNormal.dist(1.0, shape=D),
                                       compute_corr=True)
        NoisySufficientStatistics.from_release("stats", release, beta, sigma, mu_x, chol @ chol.T)
    return model


def slopes(res: Any) -> Any:
    """The slopes' draws as an xarray Dataset with one variable ``b`` (chain, draw, k)."""
    import xarray as xr

    b = np.asarray(res.posterior["beta"].values)[..., 1:]
    return xr.Dataset({"b": (("chain", "draw", "k"), b)})


def run_one(route: str, release: Any, args: argparse.Namespace) -> dict[str, Any]:
    """One call of ``route`` (``numpyro``, ``pymc fit``, ``pm.sample``): wall time, ESS and means of the slopes."""
    import arviz as az

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if route == "pm.sample":
            import pymc as pm

            with user_model(release):
                res = pm.sample(draws=args.draws, tune=args.warmup, chains=args.chains, random_seed=args.seed,
                                progressbar=False, compute_convergence_checks=False)
            attrs = {**res.posterior.attrs, **res.attrs}
            used, inner = "pymc", float(attrs.get("sampling_time", np.nan))
        else:
            backend = "numpyro" if route == "numpyro" else "pymc"
            res = regression.fit(release, backend=backend, chains=args.chains, warmup=args.warmup, draws=args.draws,
                                 seed=args.seed, progressbar=False, check_mixing=False)
            used, inner = res.attrs.get("noiseaware_nuts_sampler", "-"), np.nan
    wall = time.perf_counter() - t0
    draws = slopes(res)
    return {"wall": wall, "inner": inner, "ess": float(np.min(az.ess(draws)["b"].values)),
            "mean": draws["b"].mean(("chain", "draw")).values, "mcse": az.mcse(draws)["b"].values, "used": used}


def main(argv: list[str] | None = None) -> int:
    import pytensor

    ap = _study.parser(__doc__, write="flag", seed=1)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args(argv)
    run = _study.Run(args)
    rows, verdicts = [], []
    routes = ("numpyro", "pymc fit", "pm.sample")
    for family, release in releases().items():
        base: dict[str, Any] = {}
        for route in routes:
            first = run_one(route, release, args)
            second = run_one(route, release, args)
            if route == "numpyro":
                base = {"rate": first["ess"] / first["wall"], "rate2": second["ess"] / second["wall"], **first}
            rate, rate2 = first["ess"] / first["wall"], second["ess"] / second["wall"]
            z = float(np.max(np.abs(first["mean"] - base["mean"]) / np.sqrt(first["mcse"] ** 2 + base["mcse"] ** 2)))
            inner = "-" if np.isnan(second["inner"]) else f"{second['inner']:.1f}"
            rows.append(f"| {family} | {route} | {first['used']} | {first['wall']:.1f} | {second['wall']:.1f} | "
                        f"{inner} | {first['ess']:.0f} | {rate:.1f} | {rate2:.1f} | {base['rate'] / rate:.2f} | "
                        f"{base['rate2'] / rate2:.2f} | {'-' if route == 'numpyro' else f'{z:.2f}'} |")
            print(rows[-1], flush=True)
            if route != "numpyro":
                verdicts.append((family, route, first["used"], base["rate"] / rate, base["rate2"] / rate2, z))
    (before, after), avg_before, avg_after = run.stop().loads, run.before.avg, run.after.avg
    table = "\n".join([
        "| noise | route | NUTS | wall s (incl. compile) | wall s (2nd call) | pm.sample sampling_time s | "
        "min bulk ESS (slopes) | ESS/s | ESS/s (2nd call) | NumPyro ESS/s ÷ this | same, 2nd calls | "
        "max agreement z |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", *rows])
    status = []
    for family, route, used, ratio, ratio2, z in verdicts:
        # NumPyro runs first and pays the process's JAX start-up, which favours the routes after it on the first
        # call; on the second call PyMC compiles its model again and NumPyro reuses its program: both are stated
        met = {(True, True): "met on both calls", (True, False): "met with compilation, not on the second call",
               (False, True): "met on the second call only", (False, False): "not met"}[(ratio <= 3.0, ratio2 <= 3.0)]
        status.append(f"Status: {family} noise, {route} (NUTS: {used}): {ratio:.2f}x NumPyro's time per effective "
                      f"draw with compilation, {ratio2:.2f}x on the second call (target <= 3x) — {met}; "
                      f"agreement z {z:.2f}.")
    about = (f"Settings: {args.chains} chains x ({args.warmup} warmup + {args.draws} draws), seed {args.seed}, one "
             f"process under `nice`, each route called twice (the first timed with compilation, JAX cache off). "
             f"PyTensor {pytensor.__version__}, default mode linker "
             f"{type(pytensor.compile.mode.get_default_mode().linker).__name__}; pm.sample at its default cores "
             f"({os.cpu_count()} CPUs). Load average (1, 5, 15 min) at the start and end of the run: "
             f"{', '.join(f'{x:.2f}' for x in avg_before)} -> {', '.join(f'{x:.2f}' for x in avg_after)} "
             f"(a 2-core machine shared with other jobs).")
    print("\n".join(status))
    print(f"load before: {before}\nload after: {after}")
    run.record_run("pymc_regression_speed", "PyMC route on regression at NumPyro's speed",
                   table + "\n\n" + "\n".join(status), about, argv=argv)
    return 0


if __name__ == "__main__":
    _study.main(main, cache=False)  # float64, one XLA device per core; no persistent cache (compiles count)
