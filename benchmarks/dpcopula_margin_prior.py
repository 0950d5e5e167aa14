"""Which margin prior lets the noise-aware DPCopula margins carry the spread of the data? (issue 14 item 2)

The coverage study (``dpcopula_coverage.py``) finds the noise-aware slope biased by about -8%. The
OLS slope of x2 on x1 from a Gaussian-copula synthetic copy is about ``r * sd(x2) / sd(x1)``, so a
margin posterior that inflates the spread of x1 (prior mass in its empty tails) shrinks the slope.
This script isolates the margins: same data-generating process as the coverage study (n = 2000,
epsilon = 1, ratio 8, so the margins' geometric alpha = exp(-(8/9)/4) = 0.80; x1 on 0..99, x2 on
[-4, 4] in 40 cells), the noisy histograms drawn exactly as the release draws them (two-sided
geometric, numpy simulation), and for each margin prior the posterior of

    q = sd(x2) / sd(x1)    (from the posterior draws of both margins' cell probabilities)

against the data's own q: relative bias of the posterior mean and coverage of the central 95%
posterior interval; and the **margin-induced slope bias**: with the copula held at the truth
(Gaussian, rho), the OLS slope of 20,000 rows drawn through each posterior draw's margins (the
inverse-CDF map of ``copula.synthesize``, cell centres) over the same slope drawn through the
data's own histograms, common random numbers — the part of the slope's bias that the margins cause,
including the loss of Pearson correlation from spurious tail mass. No NUTS: seconds per replication.

Run:  nice .venv/bin/python benchmarks/dpcopula_margin_prior.py --reps 40  (--out: benchmarks/results/raw/...)
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import _study
import numpy as np

from noiseaware.copula import margin_posterior

PRIORS: list[float | str] = [1.0, 0.5, 0.2, 0.1, 0.05, 0.01, "hierarchical"]


def two_sided_geometric(alpha: float, size: int, rng: np.random.Generator) -> np.ndarray:
    p = 1.0 - alpha
    return rng.geometric(p, size) - rng.geometric(p, size)


def moments(pi: np.ndarray, mids: np.ndarray, within: float) -> np.ndarray:
    """Standard deviation of each drawn margin (cell mass at the cell's centre plus uniform within-cell spread)."""
    mean = pi @ mids
    return np.sqrt(pi @ mids**2 - mean**2 + within)


def implied_slope(p1: np.ndarray, p2: np.ndarray, u: np.ndarray, mids1: np.ndarray, mids2: np.ndarray) -> float:
    """OLS slope of x2 on x1 for rows (F1^-1(u1), F2^-1(u2)) through the cell probabilities p1, p2."""
    x1 = mids1[np.minimum(np.searchsorted(np.cumsum(p1) / p1.sum(), u[:, 0], side="right"), p1.size - 1)]
    x2 = mids2[np.minimum(np.searchsorted(np.cumsum(p2) / p2.sum(), u[:, 1], side="right"), p2.size - 1)]
    xc = x1 - x1.mean()
    return float(np.dot(xc, x2 - x2.mean()) / np.dot(xc, xc))


def main() -> None:
    ap = _study.parser(__doc__, write=None, reps=200, seed=7)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--rho", type=float, default=0.5)
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/raw/dpcopula_margin_prior.json"))
    a = ap.parse_args()
    eps1 = a.eps * 8 / 9
    alpha = float(np.exp(-eps1 / 4.0))
    mids1 = np.arange(100.0)
    w2 = 8.0 / 40
    mids2 = -4.0 + w2 * (np.arange(40) + 0.5)
    res: dict[str, list[list[float]]] = {str(p): [] for p in PRIORS}
    from scipy import special

    zz = np.random.default_rng([a.seed, 99]).multivariate_normal([0.0, 0.0], [[1.0, a.rho], [a.rho, 1.0]], 20000)
    u = special.ndtr(zz)
    t0 = time.time()
    for h in range(a.reps):
        rng = np.random.default_rng([a.seed, h])
        z = rng.multivariate_normal([0.0, 0.0], [[1.0, a.rho], [a.rho, 1.0]], size=a.n)
        x1 = np.clip(np.round(50 + 15 * z[:, 0]), 0, 99).astype(np.int64)
        x2 = np.clip(z[:, 1], -4.0, 4.0)
        c2 = np.minimum(((x2 + 4.0) / w2).astype(np.int64), 39)
        q_data = float(np.std(x2) / np.std(x1))
        y1 = np.bincount(x1, minlength=100) + two_sided_geometric(alpha, 100, rng)
        y2 = np.bincount(c2, minlength=40) + two_sided_geometric(alpha, 40, rng)
        b_true = implied_slope(
            np.bincount(x1, minlength=100) * 1.0, np.bincount(c2, minlength=40) * 1.0, u, mids1, mids2
        )
        for p in PRIORS:
            p1 = margin_posterior(y1, alpha, n=a.n, draws=a.draws, prior=p, seed=rng)
            p2 = margin_posterior(y2, alpha, n=a.n, draws=a.draws, prior=p, seed=rng)
            q = moments(p2, mids2, w2**2 / 12) / moments(p1, mids1, 0.0)
            lo, hi = np.quantile(q, [0.025, 0.975])
            bs = [implied_slope(p1[d], p2[d], u, mids1, mids2) for d in range(0, a.draws, max(1, a.draws // 50))]
            res[str(p)].append([float(q.mean() / q_data - 1.0), float(lo <= q_data <= hi), np.mean(bs) / b_true - 1.0])
    out = {
        "command": f"benchmarks/dpcopula_margin_prior.py --reps {a.reps} --n {a.n} --eps {a.eps} --seed {a.seed}",
        "alpha": alpha,
        "seconds": time.time() - t0,
        "rows": {},
    }
    print(
        "| prior a0 | relative bias of sd(x2)/sd(x1) | its 95% interval covers the data's | margin-induced slope bias |"
    )
    print("|---|---|---|---|")
    for p, rows in res.items():
        r = np.array(rows)
        bias, cov = r[:, 0].mean(), r[:, 1].mean()
        se_b, se_c = r[:, 0].std(ddof=1) / np.sqrt(len(r)), np.sqrt(cov * (1 - cov) / len(r))
        sb, se_s = r[:, 2].mean(), r[:, 2].std(ddof=1) / np.sqrt(len(r))
        out["rows"][p] = {  # type: ignore[index]
            "bias": bias,
            "bias_se": se_b,
            "coverage": cov,
            "coverage_se": se_c,
            "slope_bias": sb,
            "slope_bias_se": se_s,
        }
        print(f"| {p} | {bias:+.4f} ± {se_b:.4f} | {cov:.3f} ± {se_c:.3f} | {sb:+.4f} ± {se_s:.4f} |")
    a.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    _study.main(main)
