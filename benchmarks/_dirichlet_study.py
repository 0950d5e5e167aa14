"""The design of reproduce_dirichlet.py: seed 004's cells and methods, data and releases, the metrics, one fit
per method, the raw results file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
from _study import raw_path

ALPHAS = {"a3": (2.2, 3.3, 4.4), "a5": (2.2, 3.3, 4.4, 5.5, 6.6)}


NS = (1000, 5000)


EPSILONS = (0.5, 1.5)


#: Cheap cells first (n = 1000), as the compute budget is small.
CELLS = [f"{a}-{n}-{e}" for n in NS for a in ALPHAS for e in EPSILONS]


METHODS = ("DPBoots", "DPABC_p1", "DPABC_p4", "DPapprox_p1", "DPreMCMC_p1", "DPMCMC_p1", "DPapprox_p1_cens")


DEFAULT_METHODS = METHODS[:-1]


#: DPMCMC_p1 / DPreMCMC_p1 chains by n: shorter at n = 5000, where each iteration costs five times more
#: and the joint move keeps the bulk ESS of alpha in the hundreds.
MCMC = {1000: {"chains": 2, "warmup": 1000, "draws": 1000}, 5000: {"chains": 2, "warmup": 500, "draws": 500}}


#: DPreMCMC_p1 (no joint move, b = n/5 records, so cheaper per iteration and slower to mix): longer chains.
PREMCMC = {1000: {"chains": 2, "warmup": 5000, "draws": 5000}, 5000: {"chains": 2, "warmup": 2500, "draws": 2500}}


NUTS = {"chains": 2, "warmup": 500, "draws": 1000}


PREMCMC_REPLICATES = 5


RESULTS = raw_path("reproduce_dirichlet.json")
PRED_DRAWS, TRUE_DRAWS = 4000, 20000


# ----------------------------------------------------------------------------- data and releases
def parse_cell(cell: str) -> tuple[str, np.ndarray, int, float]:
    """``"a3-1000-0.5"`` -> (name, alpha, n, epsilon)."""
    name, n, eps = cell.split("-")
    return name, np.asarray(ALPHAS[name]), int(n), float(eps)


def make_data(cell: str, i: int) -> tuple[np.ndarray, Any, Any]:
    """Records and the two releases (no split; split 0.25) of data set ``i`` of ``cell``; deterministic."""
    import noiseaware as na

    _, alpha, n, eps = parse_cell(cell)
    ss = np.random.SeedSequence([4, len(alpha), n, round(eps * 100), i])
    g_data, g_full, g_split = (np.random.default_rng(s) for s in ss.spawn(3))
    x = g_data.dirichlet(alpha, size=n)
    full = na.privatize(x, statistic="dirichlet_logmean", epsilon=eps, rng=g_full)
    split = na.privatize(x, statistic="dirichlet_logmean", epsilon=eps, split=0.25, rng=g_split)
    return x, full, split


# ----------------------------------------------------------------------------- metrics
def coverage(draws: np.ndarray, alpha_true: np.ndarray, rng: np.random.Generator) -> float:
    """Seed §5.1: fraction of true records inside the 95% Mahalanobis ellipsoid of the predictive."""
    idx = rng.choice(draws.shape[0], size=PRED_DRAWS, replace=draws.shape[0] < PRED_DRAWS)
    a = np.clip(draws[idx], 1e-3, 1e6)
    g = rng.gamma(a)
    pred = (g / g.sum(1, keepdims=True))[:, :-1]
    mu = pred.mean(0)
    prec = np.linalg.pinv(np.cov(pred.T).reshape(len(mu), len(mu)))

    def m2(z: np.ndarray) -> np.ndarray:
        c = z - mu
        return np.einsum("ij,jk,ik->i", c, prec, c)

    q = np.quantile(m2(pred), 0.95)
    true = rng.dirichlet(alpha_true, size=TRUE_DRAWS)[:, :-1]
    return float(np.mean(m2(true) <= q))


def metrics(draws: np.ndarray, alpha_true: np.ndarray, seed: int) -> dict[str, float]:
    """MSEs of alpha and E[x | alpha] over the draws, squared errors of their means, coverage."""
    draws = draws[np.all(np.isfinite(draws) & (draws > 0), axis=1)]
    comp = draws / draws.sum(1, keepdims=True)
    comp_true = alpha_true / alpha_true.sum()
    return {
        "mse_alpha": float(np.mean((draws - alpha_true) ** 2)),
        "se_alpha": float(np.mean((draws.mean(0) - alpha_true) ** 2)),
        "mse_mean": float(np.mean((comp - comp_true) ** 2)),
        "se_mean": float(np.mean((comp.mean(0) - comp_true) ** 2)),
        "alpha_hat": draws.mean(0).round(4).tolist(),
        "coverage": coverage(draws, alpha_true, np.random.default_rng(seed)),
        "n_draws": int(draws.shape[0]),
    }


def diagnostics(posterior: Any) -> dict[str, float]:
    """Max split R-hat and min bulk ESS of alpha."""
    import arviz as az

    rhat = az.rhat(posterior, var_names=["alpha"])["alpha"].values
    ess = az.ess(posterior, var_names=["alpha"], method="bulk")["alpha"].values
    return {"rhat_max": float(np.max(rhat)), "ess_min": float(np.min(ess))}


# ----------------------------------------------------------------------------- methods
def run_method(method: str, full: Any, split: Any, seed: int) -> tuple[np.ndarray, dict[str, Any]]:
    """Draws of alpha (shape ``(m, d)``) and diagnostics for one method on one data set."""
    from noiseaware import dirichlet as nd
    from noiseaware import results
    from noiseaware.dirichlet import dpmcmc

    if method == "DPBoots":
        return nd.dpboots(full, B=1000, rng=seed).alpha, {}
    if method in ("DPABC_p1", "DPABC_p4"):
        rel = full if method == "DPABC_p1" else split
        res = nd.dpabc(rel, method[-2:], n_sims=10_000, accept=0.1, rng=seed)
        return res.alpha, {"abc_delta": res.delta}
    if method in ("DPMCMC_p1", "DPreMCMC_p1"):
        r = 1 if method == "DPMCMC_p1" else PREMCMC_REPLICATES
        settings = (MCMC if r == 1 else PREMCMC)[int(sum(full.metadata["n_parts"]))]
        idata = dpmcmc(full, seed=seed, replicates=r, check_mixing=False, **settings)
        draws = idata["posterior"]["alpha"].values
        info = diagnostics(results.group(idata, "posterior"))
        info["accept_rate"] = float(np.mean(idata["sample_stats"]["accept_rate"].values))
        info["iterations"] = "{chains} x ({warmup} + {draws})".format(**settings)
        return draws.reshape(-1, draws.shape[-1]), info
    if method in ("DPapprox_p1", "DPapprox_p1_cens"):
        moments = "asymptotic" if method == "DPapprox_p1" else "censored"
        res = nd.fit(full, prior="p1", moments=moments, seed=seed, **NUTS)
        info = diagnostics(results.group(res, "posterior"))
        info["divergences"] = int(np.sum(res["sample_stats"]["diverging"].values))
        return results.draws(res, "alpha"), info
    raise ValueError(f"reproduce_dirichlet: unknown method {method!r}; choose from {METHODS}.")


# ----------------------------------------------------------------------------- results file
def load(path: Path) -> dict[str, Any]:
    """Raw results ``{"runs": {"cell|method|i": record}}``; empty when the file does not exist."""
    if path.exists():
        return json.loads(path.read_text())
    return {"runs": {}}


def save(path: Path, data: dict[str, Any]) -> None:
    """Atomic write (a killed run never leaves a truncated file)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)
