"""The simulation of reproduce_copula.py: seed 000's Table 1 and designs, the exact grid posterior at p = 2,
batched NUTS at p = 5, and the baseline releases."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special, stats

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
