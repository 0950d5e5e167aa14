"""Reproduce seed 000's Table 1 (coverage / length of Bayes-NA intervals) and Figure 1 (p = 2 MAEs).

Seed ``000_3eff9b68025f505f.txt`` §5. Not run in CI; writes the ``copula`` section of
``docs/reproduction.md``::

    nice -n 10 .venv/bin/python benchmarks/reproduce_copula.py --write docs/reproduction.md

Design for throughput (2 shared cores):

* p = 2: the posterior of ``r`` is one-dimensional, and with ``LKJ(1)`` (uniform on (-1, 1)) it
  is computed *exactly* on a grid of 4000 cells with the exact likelihood of eq. (17) -- a full
  sum over every true count ``t`` of the Fisher noncentral hypergeometric times the geometric
  kernel, no windowing. The log-pmf matrix is built once per ``n``. A few replications per cell
  are cross-checked against ``noiseaware.copula.fit`` (NUTS, NumPyro).
* p = 5: NUTS in NumPyro on ``B`` independent replications at once: one model with a plate over
  replications (``B`` LKJ-Cholesky factors, ``B`` composite likelihoods), compiled once with the
  noisy counts passed as arguments (``jit_model_args=True``) and re-run for every batch. The
  joint posterior is the product of the ``B`` per-replication posteriors, so its marginals are
  exactly the per-replication Bayes-NA posteriors; the diagonal mass matrix adapts per
  coordinate. Split R-hat and bulk ESS per replication and pair are reported.
* Each method gets its own release with budget epsilon, as in the paper's comparisons:
  geometric (Bayes-NA), BTGM (MLE-NN), Laplace on Kendall's tau (Li-Kendall), Laplace on the
  2 x 2 tables at the theoretical medians (Asghar-dpc).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import machine, write_section

import noiseaware as na
from noiseaware.copula import asghar_dpc, li_kendall, mle_nn
from noiseaware.datasets import MIXED_MARGINALS_P5, random_correlation, simulate_gaussian_copula

#: seed 000 §5.1: F1 = Gamma(2, 1), F2 = N(0, 1).
MARGINALS_P2 = (stats.gamma(2.0), stats.norm())

#: seed 000 Table 1 (coverage %, mean length of 95% intervals), 1000 runs per cell.
PAPER_TABLE1: dict[tuple[int, int, float], tuple[float, float]] = {}
_P2_EPS = (0.01, 0.1, 0.5, 1.0, 5.0)
for _n, _cov, _len in [
    (50, (95.3, 94.0, 93.0, 92.4, 93.5), (1.892, 1.813, 1.100, 0.776, 0.613)),
    (100, (94.3, 94.9, 93.6, 92.3, 92.5), (1.889, 1.638, 0.681, 0.504, 0.438)),
    (200, (93.7, 95.2, 94.6, 94.9, 95.0), (1.878, 1.201, 0.415, 0.342, 0.316)),
    (500, (95.1, 94.7, 94.3, 94.9, 95.2), (1.815, 0.596, 0.226, 0.205, 0.199)),
    (1000, (94.6, 93.2, 95.6, 95.5, 96.1), (1.632, 0.317, 0.153, 0.144, 0.142)),
]:
    for _e, _c, _l in zip(_P2_EPS, _cov, _len, strict=True):
        PAPER_TABLE1[(2, _n, _e)] = (_c, _l)
_P5_EPS = (0.1, 0.5, 1.0, 5.0)
for _n, _cov, _len in [
    (200, (94.7, 94.9, 94.9, 93.6), (1.492, 1.326, 1.058, 0.448)),
    (500, (94.8, 95.0, 94.8, 94.2), (1.446, 0.942, 0.601, 0.259)),
    (1000, (94.9, 95.3, 94.4, 93.9), (1.323, 0.590, 0.346, 0.177)),
]:
    for _e, _c, _l in zip(_P5_EPS, _cov, _len, strict=True):
        PAPER_TABLE1[(5, _n, _e)] = (_c, _l)

METHODS = ("Bayes-NA", "MLE-NN (BTGM)", "Li-Kendall", "Asghar-dpc")
BINS = (-1.0, -0.6, -0.2, 0.2, 0.6, 1.0)  # Figure 1: bins of width 0.4


@dataclass
class Cell:
    """Per-replication results of one (p, n, epsilon) setting."""

    p: int
    n: int
    eps: float
    truth: list[list[float]] = field(default_factory=list)  # upper-triangle R per replication
    cover: list[float] = field(default_factory=list)  # fraction of pairs covered per replication
    length: list[float] = field(default_factory=list)  # mean interval length per replication
    est: dict[str, list[list[float]]] = field(default_factory=lambda: {m: [] for m in METHODS})
    rhat_max: float = float("nan")
    ess_min: float = float("nan")

    @property
    def reps(self) -> int:
        return len(self.cover)

    def key(self) -> tuple[int, int, float]:
        return (self.p, self.n, self.eps)


# ------------------------------------------------------------------ data and the baseline releases
def simulate(p: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A data set of the simulation study (n records, p variables) and its true correlation matrix."""
    R = random_correlation(p, rng)  # scaled Wishart, p + 1 df (seed 000 §5); for p = 2, r ~ U(-1, 1)
    marg = MARGINALS_P2 if p == 2 else MIXED_MARGINALS_P5
    return simulate_gaussian_copula(n, R, marg, rng), R


def _baselines(x: np.ndarray, eps: float, rng: np.random.Generator, p: int) -> dict[str, np.ndarray]:
    """MLE-NN (BTGM), Li-Kendall and Asghar-dpc, each on its own release with budget ``eps``."""
    iu = np.triu_indices(p, 1)
    marg = MARGINALS_P2 if p == 2 else MIXED_MARGINALS_P5
    cuts = [round(float(m.median()), 2) for m in marg]  # seed 000 §5: theoretical medians, 2 decimals
    rel_b = na.privatize(x, statistic="median_pairs", epsilon=eps, mechanism="btgm", rng=rng)
    rel_k = na.privatize(x, statistic="kendall_pairs", epsilon=eps, rng=rng)
    return {
        "MLE-NN (BTGM)": mle_nn(rel_b).R[iu],
        "Li-Kendall": li_kendall(rel_k)[iu],
        "Asghar-dpc": asghar_dpc(x, epsilon=eps, thresholds=cuts, rng=rng).R[iu],
    }


# ------------------------------------------------------------------------ p = 2: exact grid posterior
class GridPosterior:
    """Exact posterior of ``r`` for p = 2 under a uniform prior, on ``G`` equal cells of (-1, 1)."""

    def __init__(self, n: int, cells: int = 4000) -> None:
        self.edges = np.linspace(-1.0, 1.0, cells + 1)
        self.r = 0.5 * (self.edges[1:] + self.edges[:-1])
        h = math.ceil(n / 2)
        self.t = np.arange(max(0, 2 * h - n), h + 1, dtype=np.float64)

        def lbinom(a: float, b: np.ndarray) -> np.ndarray:
            return special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(a - b + 1)

        base = lbinom(h, self.t) + lbinom(n - h, h - self.t)  # eq. (10) with exact margins
        a = np.arcsin(self.r)
        eta = 2.0 * (np.log(np.pi + 2 * a) - np.log(np.pi - 2 * a))  # eq. (9)
        w = base[None, :] + eta[:, None] * self.t[None, :]
        self.logpmf = w - special.logsumexp(w, axis=1, keepdims=True)  # (G, T), full support

    def summary(self, t_tilde: float, alpha: float, level: float = 0.95) -> tuple[float, float, float]:
        """Posterior mean and equal-tailed ``level`` interval given the noisy count (eq. 17)."""
        loglik = special.logsumexp(self.logpmf + np.abs(t_tilde - self.t)[None, :] * math.log(alpha), axis=1)
        w = np.exp(loglik - loglik.max())
        w /= w.sum()
        cdf = np.concatenate([[0.0], np.cumsum(w)])
        lo, hi = np.interp([(1 - level) / 2, (1 + level) / 2], cdf, self.edges)
        return float(w @ self.r), float(lo), float(hi)


def run_p2(cell: Cell, reps: int, seed: int) -> None:
    grid = GridPosterior(cell.n)
    for h in range(cell.reps, reps):
        rng = np.random.default_rng([seed, 2, cell.n, round(cell.eps * 1000), h])
        x, R = simulate(2, cell.n, rng)
        rel = na.privatize(x, statistic="median_pairs", epsilon=cell.eps, rng=rng)
        alpha = math.exp(-float(rel.metadata["epsilon_per_pair"]))
        mean, lo, hi = grid.summary(float(rel.values[0]), alpha)
        r = float(R[0, 1])
        cell.truth.append([r])
        cell.cover.append(float(lo <= r <= hi))
        cell.length.append(hi - lo)
        cell.est["Bayes-NA"].append([mean])
        for name, val in _baselines(x, cell.eps, rng, 2).items():
            cell.est[name].append([float(v) for v in val])


def nuts_crosscheck(n: int, eps: float, reps: int, seed: int) -> list[dict[str, float]]:
    """Grid vs ``copula.fit`` (NumPyro NUTS, 4 x 1000 draws) on the first ``reps`` p = 2 replications."""
    from noiseaware.copula import fit

    grid = GridPosterior(n)
    out = []
    for h in range(reps):
        rng = np.random.default_rng([seed, 2, n, round(eps * 1000), h])
        x, _ = simulate(2, n, rng)
        rel = na.privatize(x, statistic="median_pairs", epsilon=eps, rng=rng)
        mean, lo, hi = grid.summary(float(rel.values[0]), math.exp(-float(rel.metadata["epsilon_per_pair"])))
        res = fit(rel, chains=4, draws=1000, warmup=1000, seed=h, progressbar=False)
        lo2, hi2 = na.results.interval(res, 0.95)
        r01 = na.results.draws(res, "R")[:, 0]  # the fit stores R's pairs: p = 2 has the one, R[0, 1]
        sd = float(r01.std())
        out.append(
            {
                "n": n,
                "eps": eps,
                "grid_mean": mean,
                "nuts_mean": float(r01.mean()),
                "grid_lo": lo,
                "nuts_lo": float(lo2[0]),
                "grid_hi": hi,
                "nuts_hi": float(hi2[0]),
                "post_sd": sd,
            }
        )
    return out


# ------------------------------------------------------------------ p = 5: batched NUTS (NumPyro)
class BatchedNUTS:
    """NUTS on ``B`` replications at once (a plate over replications), compiled once per ``n``."""

    def __init__(self, n: int, p: int, batch: int, warmup: int, draws: int) -> None:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import numpyro
        import numpyro.distributions as dist
        from numpyro.infer import MCMC, NUTS

        import noiseaware.numpyro as nan

        self.jax, self.jnp, self.p, self.batch = jax, jnp, p, batch

        def model(t_obs: Any, alpha: Any) -> None:
            with numpyro.plate("rep", t_obs.shape[0]):
                L = numpyro.sample("L", dist.LKJCholesky(p, 1.0))
            R = numpyro.deterministic("R", L @ jnp.swapaxes(L, -1, -2))
            numpyro.sample("t", nan.CompositeCopulaLikelihood(R, n, alpha=alpha[:, None]).to_event(1), obs=t_obs)

        self.mcmc = MCMC(
            NUTS(model), num_warmup=warmup, num_samples=draws, num_chains=1, progress_bar=False, jit_model_args=True
        )

    def run(self, t_obs: np.ndarray, alpha: np.ndarray, key: int) -> np.ndarray:
        """Posterior draws of R, shape (draws, B, p, p)."""
        self.mcmc.run(self.jax.random.PRNGKey(key), t_obs=self.jnp.asarray(t_obs), alpha=self.jnp.asarray(alpha))
        return np.asarray(self.mcmc.get_samples()["R"])


def run_p5_batch(cell: Cell, sampler: BatchedNUTS, seed: int) -> None:
    from numpyro.diagnostics import effective_sample_size, split_gelman_rubin

    p, B = cell.p, sampler.batch
    iu = np.triu_indices(p, 1)
    start = cell.reps
    truths, ts, alphas, base = [], [], [], []
    for h in range(start, start + B):
        rng = np.random.default_rng([seed, p, cell.n, round(cell.eps * 1000), h])
        x, R = simulate(p, cell.n, rng)
        rel = na.privatize(x, statistic="median_pairs", epsilon=cell.eps, rng=rng)
        truths.append(R[iu])
        ts.append(np.asarray(rel.values, dtype=np.int64))
        alphas.append(math.exp(-float(rel.metadata["epsilon_per_pair"])))
        base.append(_baselines(x, cell.eps, rng, p))
    draws = sampler.run(np.array(ts), np.array(alphas), key=start + 7919 * cell.n + round(cell.eps * 1000))
    pairs = draws[:, :, iu[0], iu[1]]  # (D, B, k)
    lo, hi = np.quantile(pairs, [0.025, 0.975], axis=0)
    mean = pairs.mean(axis=0)
    rhat = np.asarray(split_gelman_rubin(pairs[None]))
    ess = np.asarray(effective_sample_size(pairs[None]))
    cell.rhat_max = float(np.nanmax([cell.rhat_max, np.nanmax(rhat)]))
    cell.ess_min = float(np.nanmin([cell.ess_min, np.nanmin(ess)]))
    for b in range(B):
        r = truths[b]
        cell.truth.append([float(v) for v in r])
        cell.cover.append(float(np.mean((lo[b] <= r) & (r <= hi[b]))))
        cell.length.append(float(np.mean(hi[b] - lo[b])))
        cell.est["Bayes-NA"].append([float(v) for v in mean[b]])
        for name, val in base[b].items():
            cell.est[name].append([float(v) for v in val])


# --------------------------------------------------------------------------------------- report
def _cov_row(cell: Cell) -> str:
    c = 100 * np.asarray(cell.cover)
    se = c.std(ddof=1) / math.sqrt(c.size)
    L = np.asarray(cell.length)
    lse = L.std(ddof=1) / math.sqrt(L.size)
    pc, pl = PAPER_TABLE1.get(cell.key(), (float("nan"), float("nan")))
    z = (c.mean() - 95.0) / se if se > 0 else float("nan")
    return (
        f"| {cell.p} | {cell.n} | {cell.eps:g} | {cell.reps} | {c.mean():.1f} ± {se:.1f} | {z:+.1f} | {pc:.1f} "
        f"| {L.mean():.3f} ± {lse:.4f} | {pl:.3f} |"
    )


def _mae_rows(cell: Cell) -> list[str]:
    truth = np.asarray(cell.truth)
    rows = []
    bins = np.digitize(truth[:, 0], BINS[1:-1]) if cell.p == 2 else None
    for m in METHODS:
        err = np.abs(np.asarray(cell.est[m]) - truth).mean(axis=1)  # per replication, eq. (23)
        cells = [f"{err.mean():.3f} ± {err.std(ddof=1) / math.sqrt(err.size):.3f}"]
        if bins is not None:
            for b in range(len(BINS) - 1):
                e = err[bins == b]
                cells.append(f"{e.mean():.3f} ({e.size})" if e.size else "–")
        rows.append(f"| {cell.n} | {cell.eps:g} | {m} | " + " | ".join(cells) + " |")
    return rows


def report(cells: list[Cell], checks: list[dict[str, float]], command: str, minutes: float, note: str) -> str:
    cov_cells = [c for c in cells if c.reps > 1]
    lines = [
        "## Gaussian copula correlations: seed 000 Table 1 and Figure 1 (`benchmarks/reproduce_copula.py`)",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {machine()}; shared with other jobs. Wall time: {minutes:.1f} min.",
        "",
        "Simulation as seed 000 §5: R from a scaled Wishart with p + 1 degrees of freedom (for p = 2,",
        "r ~ U(-1, 1)); marginals Gamma(2, 1), N(0, 1) (p = 2, §5.1) and N(0,1), Exp(1), Gamma(2,1),",
        "Beta(2,5), t_5 (p = 5, §5.2); Bayes-NA with LKJ(1), equal-tailed 95% intervals. p = 2:",
        "exact grid posterior (4000 cells, full-sum likelihood of eq. 17); p = 5: NumPyro NUTS, 1 chain,",
        "1000 warmup + 1000 draws (as §5.1), 50 replications per compiled batch (plate over",
        "replications). Each method has its own release with the whole budget epsilon.",
        "",
        note,
        "",
        "### Table 1: coverage (%) and mean length of 95% intervals for R_jj'",
        "",
        "Monte Carlo standard errors (± 1 s.e.) from the replications actually run; z = (coverage - 95) / s.e.",
        "(for p = 5 the s.e. uses the per-replication coverage of the 10 pairs). The paper's values are",
        "from 1000 runs (their own s.e. about 0.7 points).",
        "",
        "| p | n | epsilon | replications | coverage (ours) | z vs 95 | coverage (paper) | length (ours) "
        "| length (paper) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [_cov_row(c) for c in cov_cells]
    p5 = [c for c in cov_cells if c.p == 5]
    if p5:
        lines += ["", "p = 5 NUTS diagnostics (per replication and pair, single chain, split R-hat / bulk ESS):"]
        for c in p5:
            lines.append(f"n = {c.n}, epsilon = {c.eps:g}: max split R-hat {c.rhat_max:.3f}, min ESS {c.ess_min:.0f}.")
    if checks:
        dm = max(abs(c["grid_mean"] - c["nuts_mean"]) / c["post_sd"] for c in checks)
        de = max(
            max(abs(c["grid_lo"] - c["nuts_lo"]), abs(c["grid_hi"] - c["nuts_hi"])) / c["post_sd"] for c in checks
        )
        lines += [
            "",
            f"Grid vs NUTS cross-check (p = 2, {len(checks)} replications, `copula.fit`, NumPyro, 4 x 1000 draws):",
            f"largest |mean difference| = {dm:.3f} posterior sd, largest |interval-end difference| = {de:.3f}",
            "posterior sd (Monte Carlo error of 4000 NUTS draws is about 0.02-0.05 sd).",
            "",
            "| n | epsilon | grid mean | NUTS mean | grid 95% | NUTS 95% |",
            "|---:|---:|---:|---:|---|---|",
        ]
        for c in checks:
            lines.append(
                f"| {c['n']:.0f} | {c['eps']:g} | {c['grid_mean']:+.4f} | {c['nuts_mean']:+.4f} "
                f"| [{c['grid_lo']:+.3f}, {c['grid_hi']:+.3f}] | [{c['nuts_lo']:+.3f}, {c['nuts_hi']:+.3f}] |"
            )
    hdr = " | ".join(f"[{a:g}, {b:g})" for a, b in itertools.pairwise(BINS))
    lines += [
        "",
        "### Figure 1 (p = 2): MAE of R_12 by method",
        "",
        "MAE (eq. 23) ± s.e. over all replications, then the MAE within bins of the true r of width 0.4",
        "(replications in the bin in parentheses), as Figure 1 groups them. The paper gives these as a",
        "figure only, so there are no numbers to set beside; its claims: Bayes-NA and MLE-NN lowest in",
        "most bins and close to each other; Asghar-dpc's MAE grows towards positive r (clipping at 0",
        "gives a spike at r = -1); Li-Kendall can be slightly better at epsilon = 1 (by about 0.01).",
        "",
        f"| n | epsilon | method | MAE (all) | {hdr} |",
        "|---:|---:|---|---:|" + "---:|" * (len(BINS) - 1),
    ]
    for c in cells:
        if c.p == 2 and c.reps > 1:
            lines += _mae_rows(c)
    if p5:
        lines += [
            "",
            "MAE of R (p = 5, eq. 23, averaged over the 10 pairs), same replications as the coverage rows:",
            "",
            "| n | epsilon | method | MAE |",
            "|---:|---:|---|---:|",
        ]
        for c in p5:
            lines += _mae_rows(c)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps-p2", type=int, default=1000, help="replications per p = 2 cell")
    ap.add_argument("--reps-p5", type=int, default=200, help="target replications per p = 5 cell")
    ap.add_argument("--batch", type=int, default=50, help="p = 5 replications per NUTS batch")
    ap.add_argument("--budget-min", type=float, default=40.0, help="stop starting p = 5 batches after this")
    ap.add_argument("--p2-n", type=int, nargs="+", default=[50, 100, 200, 500, 1000])
    ap.add_argument("--p2-eps", type=float, nargs="+", default=[0.01, 0.1, 1.0])
    ap.add_argument("--p5-n", type=int, nargs="+", default=[500])
    ap.add_argument("--p5-eps", type=float, nargs="+", default=[0.5, 1.0])
    ap.add_argument("--nuts-check", type=int, default=3, help="p = 2 grid-vs-NUTS replications per checked cell")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--write", default=None, help="markdown report to update (section 'copula')")
    ap.add_argument("--raw", default=None, help="also dump per-replication results as JSON here")
    args = ap.parse_args(argv)
    command = "nice -n 10 .venv/bin/python benchmarks/reproduce_copula.py " + " ".join(argv or sys.argv[1:])
    t0 = time.time()
    cells: list[Cell] = []

    def dump() -> None:
        if args.raw:
            Path(args.raw).write_text(json.dumps([c.__dict__ for c in cells]))

    for n in args.p2_n:
        for eps in args.p2_eps:
            c = Cell(2, n, eps)
            cells.append(c)
            run_p2(c, args.reps_p2, args.seed)
            print(f"[{time.time() - t0:7.1f}s] p=2 n={n} eps={eps}: {_cov_row(c)}", flush=True)
    dump()
    checks: list[dict[str, float]] = []
    for n, eps in [(200, 1.0), (1000, 0.1)][: 2 if args.nuts_check > 0 else 0]:
        checks += nuts_crosscheck(n, eps, args.nuts_check, args.seed)
    print(f"[{time.time() - t0:7.1f}s] NUTS cross-check done", flush=True)
    p5 = [Cell(5, n, eps) for n in args.p5_n for eps in args.p5_eps]
    cells += p5
    samplers = {n: BatchedNUTS(n, 5, args.batch, 1000, 1000) for n in args.p5_n}
    batch_s = 0.0
    while any(c.reps < args.reps_p5 for c in p5):
        elapsed = time.time() - t0
        if elapsed + batch_s > 60 * args.budget_min:
            print(f"time budget reached after {elapsed / 60:.1f} min", flush=True)
            break
        c = min(p5, key=lambda c: c.reps)
        tb = time.time()
        run_p5_batch(c, samplers[c.n], args.seed)
        batch_s = max(batch_s, time.time() - tb) if batch_s else time.time() - tb
        print(f"[{time.time() - t0:7.1f}s] p=5 n={c.n} eps={c.eps}: {_cov_row(c)}", flush=True)
        dump()
    minutes = (time.time() - t0) / 60
    short = [c for c in cells if c.reps < (args.reps_p2 if c.p == 2 else args.reps_p5)]
    note = (
        f"Replications run: {args.reps_p2} per p = 2 cell; "
        + ", ".join(f"{c.reps} for (p = 5, n = {c.n}, epsilon = {c.eps:g})" for c in p5)
        + "."
    )
    if short:
        note += " **Fewer than the target** in: " + ", ".join(f"({c.p}, {c.n}, {c.eps:g})" for c in short) + "."
    text = report(cells, checks, command, minutes, note)
    print(text)
    if args.write:
        write_section(args.write, "reproduce_copula", text)
    return 0


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices, compilation cache
    sys.exit(main())
