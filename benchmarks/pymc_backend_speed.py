"""PyMC backend against NumPyro backend: ``copula.fit`` and ``covariance.fit`` on the same problems, one run.

For each problem the NumPyro backend (``backend="numpyro"``) runs first, then the PyMC backend
(``backend="pymc"``) with each NUTS implementation that is installed (``nuts_sampler="nutpie"``,
``"numpyro"``, ``"pymc"``; ``"auto"``, the default, is the first installed of these), at the same
chains, warmup, draws and seed. Each fit is timed from the call to its return, compilation
included (a fresh process: nothing compiled before; JAX's persistent compilation cache off).
Figures:

* ESS/s: the smallest bulk ESS over the fit's free parameters (the unique entries of ``sigma``;
  the off-diagonal correlations of ``R``) divided by the fit's wall time;
* ratio: the NumPyro backend's ESS/s divided by the row's (the target: at most 3 for the PyMC
  backend's default);
* agreement: the largest ``|mean_row - mean_numpyro| / sqrt(mcse_row^2 + mcse_numpyro^2)`` over the
  free parameters (under a correct sampler about |N(0, 1)|; above 4.5 is a red flag).

Problems: covariance, d = 3, a ``pace_ggm`` release (n = 2,000, rho = 1, bound 1); copula,
p = 3, a ``median_pairs`` release (n = 500, epsilon = 1). Run::

    .venv/bin/python benchmarks/pymc_backend_speed.py --write
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import warnings
from typing import Any

import _study
import numpy as np

import noiseaware as na
from noiseaware import copula, covariance
from noiseaware.datasets import demo_copula_data

SAMPLERS = [s for s in ("nutpie", "numpyro", "pymc") if s == "pymc" or importlib.util.find_spec(s) is not None]


def problems() -> dict[str, tuple[Any, Any]]:
    """The releases: ``name -> (fit function, release)``."""
    rng = np.random.default_rng(0)
    cov = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, -0.3], [0.2, -0.3, 1.0]]) * 0.09
    x = np.clip(rng.multivariate_normal(np.zeros(3), cov, size=2000), -1.0, 1.0)
    cov_rel = na.privatize(x, statistic="pace_ggm", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    xc, _, _ = demo_copula_data(seed=1, n=500)
    cop_rel = na.privatize(xc[:, :3], statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(2))
    return {"covariance d=3": (covariance.fit, cov_rel), "copula p=3": (copula.fit, cop_rel)}


def free_draws(name: str, res: Any) -> Any:
    """The fit's free parameters as an xarray Dataset with one variable (chain, draw, k)."""
    import xarray as xr

    if name.startswith("copula"):
        return copula.pair_draws(res)
    s = res.posterior["sigma"]
    d = s.shape[-1]
    cols = [s.values[..., j, k] for j in range(d) for k in range(j + 1)]
    return xr.Dataset({"R": (("chain", "draw", "k"), np.stack(cols, axis=-1))})


def run_one(fit: Any, release: Any, backend: str, sampler: str | None, args: argparse.Namespace) -> dict[str, Any]:
    import arviz as az

    kw: dict[str, Any] = {"nuts_sampler": sampler} if sampler else {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fit(release, backend=backend, chains=args.chains, warmup=args.warmup, draws=args.draws, seed=args.seed,
                  progressbar=False, check_mixing=False, **kw)
    wall = time.perf_counter() - t0
    draws = free_draws("copula" if fit is copula.fit else "covariance", res)
    ess = az.ess(draws)["R"].values
    mcse = az.mcse(draws)["R"].values
    mean = draws["R"].mean(("chain", "draw")).values
    return {"wall": wall, "ess": float(np.min(ess)), "mean": mean, "mcse": mcse,
            "used": res.attrs.get("noiseaware_nuts_sampler", "-")}


def main(argv: list[str] | None = None) -> int:
    ap = _study.parser(__doc__, write="flag", seed=1)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args(argv)
    run = _study.Run(args)
    rows = []
    verdicts = []
    for pname, (fit, release) in problems().items():
        base = run_one(fit, release, "numpyro", None, args)
        base_rate = base["ess"] / base["wall"]
        rows.append(f"| {pname} | numpyro | - | {base['wall']:.1f} | {base['ess']:.0f} | {base_rate:.1f} | 1.00 | - |")
        print(rows[-1], flush=True)
        for sampler in SAMPLERS:
            r = run_one(fit, release, "pymc", sampler, args)
            rate = r["ess"] / r["wall"]
            z = float(np.max(np.abs(r["mean"] - base["mean"]) / np.sqrt(r["mcse"] ** 2 + base["mcse"] ** 2)))
            ratio = base_rate / rate
            rows.append(f"| {pname} | pymc | {sampler} | {r['wall']:.1f} | {r['ess']:.0f} | {rate:.1f} | "
                        f"{ratio:.2f} | {z:.2f} |")
            print(rows[-1], flush=True)
            if sampler == SAMPLERS[0]:
                verdicts.append((pname, sampler, ratio, z))
    (before, after), avg_before, avg_after = run.stop().loads, run.before.avg, run.after.avg
    table = "\n".join(["| problem | backend | nuts_sampler | wall s (incl. compile) | min bulk ESS | ESS/s | "
                       "NumPyro ESS/s ÷ this | max agreement z |",
                       "|---|---|---|---:|---:|---:|---:|---:|", *rows])
    status = []
    for pname, sampler, ratio, z in verdicts:
        met = "met" if ratio <= 3.0 else "not met"
        status.append(f"Status: {pname}, PyMC backend with its default (nuts_sampler='auto' = {sampler}): "
                      f"{ratio:.2f}x the NumPyro backend's time per effective draw (target <= 3x) — {met}; "
                      f"agreement z {z:.2f}.")
    about = (f"Settings: {args.chains} chains x ({args.warmup} warmup + {args.draws} draws), seed {args.seed}, one "
             f"process, each fit timed from call to return with compilation (JAX cache off). Samplers installed: "
             f"{', '.join(SAMPLERS)}. 'max agreement z': largest |mean difference| / combined MCSE against the "
             f"NumPyro backend over the free parameters (about |N(0,1)| if both sample the same posterior). "
             f"Load average (1, 5, 15 min) at the start and end of the run: "
             f"{', '.join(f'{x:.2f}' for x in avg_before)} -> {', '.join(f'{x:.2f}' for x in avg_after)} "
             f"(a 2-core machine shared with other jobs).")
    print("\n".join(status))
    print(f"load before: {before}\nload after: {after}")
    run.record_run("pymc_backend_speed", "PyMC backend at NumPyro's speed",
                   table + "\n\n" + "\n".join(status), about, argv=argv)
    return 0


if __name__ == "__main__":
    _study.main(main, cache=False)  # float64, one XLA device per core; no persistent cache (compiles count)
