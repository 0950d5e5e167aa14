"""The four parts of regression_diagnostics.py: the model's moments, the exact posterior, rows against
the normal law, chain length."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from _regression_study import SCALES, draw_truth, make_mcmc, released_entries
from _study import raw_path

import noiseaware as na
from noiseaware.regression import read_regression

#: The study's cell under diagnosis, and its seed (``regression_calibration.main``'s rule).
CELL = {"n": 5000, "d": 2, "rho": 0.1}


def _model_law(th: dict[str, np.ndarray], n: int, d: int) -> Any:
    """The model's law of the true statistics given the parameters: ``NoisySufficientStatistics`` without noise."""
    from noiseaware.numpyro import NoisySufficientStatistics

    return NoisySufficientStatistics(th["beta"], th["sigma"], th["mu_x"], th["cov_x"], n=float(n),
                                     scale=np.zeros((d + 2,) * 2))


def _law_draws(law: Any, rng: np.random.Generator, size: tuple[int, ...] = ()) -> np.ndarray:
    import jax

    return np.asarray(law.sample(jax.random.PRNGKey(int(rng.integers(2**31))), size))


def _seed(n: int, d: int, rho: float, offset: int) -> int:
    return 1000 * n + 10 * d + int(rho * 100) + offset


def _noise_scale(n: int, d: int, rho: float) -> np.ndarray:
    """The per-entry noise sd of an ``ssp`` release of ``n`` rows, ``d`` covariates, bound 1 (data-free)."""
    x = np.random.default_rng(0).uniform(-0.1, 0.1, size=(n, d + 1))
    rel = na.privatize(x, statistic="regression", response=f"x{d}", bound=1.0, rho=rho, rng=np.random.default_rng(1))
    return np.asarray(read_regression(rel).scale)


def _hits(draws: np.ndarray, beta: np.ndarray) -> dict[str, list[bool]]:
    out = {}
    for level, q in (("90", 0.05), ("95", 0.025)):
        lo, hi = np.quantile(draws, [q, 1.0 - q], axis=0)
        out[level] = ((lo <= beta) & (beta <= hi)).tolist()
    return out


def part_moments(truths: int = 4, n: int = 2000, datasets: int = 1000, seed: int = 7) -> dict[str, Any]:
    """z-scores of (simulated mean - model mean), and simulated / model standard deviations, per entry.

    The model's mean is the distribution's ``mean``; its standard deviation is that of 20 times as many
    draws of the model's law (``sample``) as there are simulated data sets.
    """
    d = CELL["d"]
    rows, cols = released_entries(d)
    rng = np.random.default_rng(seed)
    z_max, ratios = [], []
    for _ in range(truths):
        th = draw_truth(rng, d)
        law = _model_law(th, n, d)
        sims = np.empty((datasets, rows.size))
        for k in range(datasets):
            x = rng.multivariate_normal(th["mu_x"], th["cov_x"], size=n)
            y = th["beta"][0] + x @ th["beta"][1:] + th["sigma"] * rng.normal(size=n)
            z = np.column_stack([np.ones(n), x, y])
            sims[k] = (z.T @ z)[rows, cols]
        sd = sims.std(axis=0, ddof=1)
        z_max.append(float(np.max(np.abs(sims.mean(axis=0) - np.asarray(law.mean)) / (sd / np.sqrt(datasets)))))
        ratios.extend((sd / _law_draws(law, rng, (20 * datasets,)).std(axis=0, ddof=1)).tolist())
    return {"truths": truths, "n": n, "datasets": datasets, "entries": int(rows.size), "max_abs_z": z_max,
            "sd_ratio_min": min(ratios), "sd_ratio_max": max(ratios)}


def exact_quantiles(stats: np.ndarray, n: int, d: int, qs: list[float]) -> np.ndarray:
    r"""Quantiles ``(len(qs), d + 1)`` of each coefficient's exact posterior given exact ``Z'Z`` (with intercept).

    The study's prior: :math:`\beta \sim N(0, \mathrm{diag}(s^2))`, :math:`\sigma \sim \mathrm{HalfNormal}`.
    Given :math:`\sigma`, :math:`\beta` is normal with precision :math:`A = X'X/\sigma^2 + \mathrm{diag}(s^{-2})`
    and mean :math:`A^{-1}X'y/\sigma^2`; :math:`\log\sigma` is integrated on an 801-point grid of
    :math:`\pm 24/\sqrt{2n}` around its mode (the weights at the ends are checked to be negligible). The
    covariates' law does not enter: given exact statistics it factors out of the coefficients' posterior.
    """
    from scipy import optimize
    from scipy import stats as st

    p = d + 1
    xtx, xty, yty = stats[:p, :p], stats[:p, p], stats[p, p]
    prior_prec = np.diag(1.0 / np.array([SCALES["intercept"]] + [SCALES["slope"]] * d) ** 2)

    def given(sig: float) -> tuple[float, np.ndarray, np.ndarray]:
        a = xtx / sig**2 + prior_prec
        m = np.linalg.solve(a, xty / sig**2)
        lp = (st.halfnorm.logpdf(sig, scale=SCALES["sigma"]) - n * np.log(sig) - yty / (2 * sig**2)
              + 0.5 * m @ a @ m - np.sum(np.log(np.diag(np.linalg.cholesky(a)))))
        return float(lp), m, np.diag(np.linalg.inv(a))

    mode = optimize.minimize_scalar(lambda ls: -(given(np.exp(ls))[0] + ls), bounds=(np.log(1e-6), np.log(3.0)),
                                    method="bounded", options={"xatol": 1e-10}).x
    grid = mode + np.linspace(-1.0, 1.0, 801) * 24.0 / np.sqrt(2.0 * n)
    vals = [given(np.exp(g)) for g in grid]
    logw = np.array([v[0] for v in vals]) + grid  # d sigma = sigma d log sigma
    w = np.exp(logw - logw.max())
    w /= w.sum()
    if w[0] > 1e-12 or w[-1] > 1e-12:
        raise RuntimeError(f"exact_quantiles: the sigma grid is too narrow (end weights {w[0]:.1e}, {w[-1]:.1e})")
    means, variances = np.array([v[1] for v in vals]), np.array([v[2] for v in vals])
    out = np.empty((len(qs), p))
    for j in range(p):
        sd = np.sqrt(variances[:, j])
        lo, hi = means[:, j].min() - 12 * sd.max(), means[:, j].max() + 12 * sd.max()
        for i, q in enumerate(qs):
            out[i, j] = optimize.brentq(
                lambda b: float(np.sum(w * st.norm.cdf((b - means[:, j]) / sd))) - q, lo, hi, xtol=1e-12)
    return out


def part_exact() -> dict[str, Any]:
    """Closed-form posterior on the study's near-noiseless side row, beside its recorded NUTS intervals."""
    n, d, rho = 5000, 2, 10000.0
    saved = json.loads(raw_path("regression_calibration.json").read_text())
    chunks = sorted((r for r in saved if r["rho"] == rho and r["n"] == n and r["d"] == d), key=lambda r: r["first_rep"])
    if not chunks:
        raise SystemExit("part exact: the calibration study's rho = 10000 side row is not in its raw file")
    nuts = {lv: np.array([[c == "1" for c in h] for r in chunks for h in r["per_rep"][f"aware{lv}"]])
            for lv in ("90", "95")}
    reps = len(nuts["95"])
    rng = np.random.default_rng(_seed(n, d, rho, 0))  # the study's stream: same parameters, same rows
    exact: dict[str, list[list[bool]]] = {"90": [], "95": []}
    for _ in range(reps):
        th = draw_truth(rng, d)
        x = rng.multivariate_normal(th["mu_x"], th["cov_x"], size=n)
        y = th["beta"][0] + x @ th["beta"][1:] + th["sigma"] * rng.normal(size=n)
        z = np.column_stack([np.ones(n), np.clip(np.column_stack([x, y]), -1.0, 1.0)])  # the study clips
        q = exact_quantiles(z.T @ z, n, d, [0.025, 0.05, 0.95, 0.975])
        b = th["beta"]
        exact["95"].append(((q[0] <= b) & (b <= q[3])).tolist())
        exact["90"].append(((q[1] <= b) & (b <= q[2])).tolist())
    ex95 = np.array(exact["95"])
    return {
        "n": n, "d": d, "rho": rho, "reps": reps,
        "exact90": float(np.mean(exact["90"])), "exact95": float(ex95.mean()),
        "nuts90": float(nuts["90"].mean()), "nuts95": float(nuts["95"].mean()),
        "nuts_divergences": int(sum(r["aware_divergences"] for r in chunks)),
        "nuts_miss_exact_hit95": int(np.sum(~nuts["95"] & ex95)),
        "nuts_hit_exact_miss95": int(np.sum(nuts["95"] & ~ex95)),
    }


def part_paired(reps: int = 200, warmup: int = 250, offset: int = 400000) -> dict[str, Any]:
    """Coverage with statistics from simulated rows and from the model's normal law, same parameters and noise."""
    import jax

    n, d, rho = CELL["n"], CELL["d"], CELL["rho"]
    seed = _seed(n, d, rho, offset)
    r_truth, r_data, r_noise = (np.random.default_rng([seed, k]) for k in range(3))
    rows, cols = released_entries(d)
    scale = _noise_scale(n, d, rho)
    run = make_mcmc(d, n, scale, warmup, warmup)
    hits: dict[str, dict[str, list[list[bool]]]] = {m: {"90": [], "95": []} for m in ("rows", "normal")}
    for r in range(reps):
        th = draw_truth(r_truth, d)
        x = r_data.multivariate_normal(th["mu_x"], th["cov_x"], size=n)
        y = th["beta"][0] + x @ th["beta"][1:] + th["sigma"] * r_data.normal(size=n)
        z = np.column_stack([np.ones(n), x, y])
        noise = r_noise.normal(size=rows.size) * scale[rows, cols]
        for mode, stats in (("rows", (z.T @ z)[rows, cols]), ("normal", _law_draws(_model_law(th, n, d), r_data))):
            beta_draws, _ = run(jax.random.PRNGKey(seed + r), stats + noise)
            for level, h in _hits(np.asarray(beta_draws), th["beta"]).items():
                hits[mode][level].append(h)
    out: dict[str, Any] = {"n": n, "d": d, "rho": rho, "reps": reps, "chain": [warmup, warmup], "seed_offset": offset}
    for mode, by_level in hits.items():
        for level, h in by_level.items():
            out[f"{mode}{level}"] = float(np.mean(h))
    both = np.array(hits["rows"]["95"]) == np.array(hits["normal"]["95"])
    out["agree95"] = float(both.mean())
    return out


def part_chains(reps: int = 200, lengths: tuple[int, ...] = (250, 1000), offset: int = 500000) -> dict[str, Any]:
    """Statistics from the model's own normal law; one chain of each length (warm-up = draws) on the same data."""
    import jax

    n, d, rho = CELL["n"], CELL["d"], CELL["rho"]
    seed = _seed(n, d, rho, offset)
    r_truth, r_data = (np.random.default_rng([seed, k]) for k in range(2))
    rows, cols = released_entries(d)
    scale = _noise_scale(n, d, rho)
    runs = {w: make_mcmc(d, n, scale, w, w) for w in lengths}
    hits: dict[int, dict[str, list[list[bool]]]] = {w: {"90": [], "95": []} for w in lengths}
    divergences = dict.fromkeys(lengths, 0)
    for r in range(reps):
        th = draw_truth(r_truth, d)
        obs = _law_draws(_model_law(th, n, d), r_data) + r_data.normal(size=rows.size) * scale[rows, cols]
        for w, run in runs.items():
            beta_draws, n_div = run(jax.random.PRNGKey(seed + r), obs)
            divergences[w] += int(n_div)
            for level, h in _hits(np.asarray(beta_draws), th["beta"]).items():
                hits[w][level].append(h)
    out: dict[str, Any] = {"n": n, "d": d, "rho": rho, "reps": reps, "seed_offset": offset}
    for w in lengths:
        out[f"chain{w}"] = {level: float(np.mean(h)) for level, h in hits[w].items()} | {"divergences": divergences[w]}
    return out
