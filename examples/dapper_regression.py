"""Eng et al. (2024) §5, Example 3: linear regression from Laplace-noised clamped sufficient statistics.

Confidential data: n = 50 records (x1, x2, y), x ~ N((0.9, -1.17), I_2),
y = -1.79 - 2.89 x1 - 0.66 x2 + e, e ~ N(0, sigma^2 = 2) (the paper's code). Each value is clamped
to [-10, 10] and divided by 10; with xd = (1, x1~, x2~) the record contributes the 9 unique entries
of (xd y~, y~^2, xd xd^T minus its constant corner) and the curator adds Laplace(Delta / epsilon)
noise to each of the 9 sums, Delta = p^2 + 4p + 3 = 15 (p = 2), epsilon = 10.
Prior beta ~ N(0, 4 I_3). The continuous records are latent; theta = beta | records is drawn by NUTS
on the NumPyro model of the complete data inside HMCGibbs. Compares with the naive posterior (noisy
statistics taken as true, the noisy X^T X projected to the nearest positive semi-definite matrix,
Higham 1988) and the confidential-data posterior (the paper's Figures 6-7).

Run:  .venv/bin/python examples/dapper_regression.py [--quick] [--out DIR]
"""

from __future__ import annotations

import time

import _dapper_common as common
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

import noiseaware as na
from noiseaware.augment import AugmentationModel, sample

N, EPSILON, DELTA = 50, 10.0, 15.0
MU = np.array([0.9, -1.17])
BETA = np.array([-1.79, -2.89, -0.66])
SIGMA2, TAU2 = 2.0, 4.0
CLAMP = 10.0
LABELS = ["sum y", "sum x1 y", "sum x2 y", "sum y^2", "sum x1", "sum x1^2", "sum x2", "sum x1 x2", "sum x2^2"]


def regression_model(n: int) -> None:
    """Complete data: beta ~ N(0, tau^2 I); x_i ~ N(mu, I_2); y_i | x_i ~ N(beta_0 + x_i beta_{1:}, sigma^2)."""
    beta = numpyro.sample("beta", dist.Normal(jnp.zeros(3), jnp.sqrt(TAU2)).to_event(1))
    with numpyro.plate("records", n):
        x = numpyro.sample("x", dist.Normal(jnp.asarray(MU), 1.0).to_event(1))
        numpyro.sample("y", dist.Normal(beta[0] + x @ beta[1:], jnp.sqrt(SIGMA2)))


def clamped_statistic(record, s_dp):
    """t_i (dapper's st_f): the 9 unique entries of a record's clamped, scaled sufficient statistics."""
    x = jnp.clip(record["x"], -CLAMP, CLAMP) / CLAMP
    y = jnp.clip(record["y"], -CLAMP, CLAMP) / CLAMP
    xd = jnp.concatenate([jnp.ones(1), x])
    x1, x2 = x[0], x[1]
    return jnp.concatenate([xd * y, jnp.stack([y * y, x1, x1 * x1, x2, x1 * x2, x2 * x2])])


def statistic_of(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xs = np.clip(x, -CLAMP, CLAMP) / CLAMP
    ys = np.clip(y, -CLAMP, CLAMP) / CLAMP
    xd = np.column_stack([np.ones(len(ys)), xs])
    return np.concatenate([xd.T @ ys, [ys @ ys, xs[:, 0].sum(), xs[:, 0] @ xs[:, 0], xs[:, 1].sum(),
                                       xs[:, 0] @ xs[:, 1], xs[:, 1] @ xs[:, 1]]])


def gaussian_posterior(xtx: np.ndarray, xty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """beta | data ~ N(mu_n, Sigma_n), Sigma_n = (X^T X / sigma^2 + I / tau^2)^-1, mu_n = Sigma_n X^T y / sigma^2."""
    cov = np.linalg.inv(xtx / SIGMA2 + np.eye(3) / TAU2)
    return cov @ xty / SIGMA2, cov


def naive_from_noisy(s_dp: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Take the noisy statistic as exact, back on the original scale (valid when nothing was clamped)."""
    s1, _, s3 = s_dp[:3], s_dp[3], s_dp[4:]
    xtx_s = np.array([[n, s3[0], s3[2]], [s3[0], s3[1], s3[3]], [s3[2], s3[3], s3[4]]])
    w, v = np.linalg.eigh(xtx_s)
    projected = bool(w.min() < 0)
    xtx_s = (v * np.maximum(w, 0.0)) @ v.T  # nearest PSD in Frobenius norm (Higham 1988)
    d = np.diag([1.0, CLAMP, CLAMP])
    return *gaussian_posterior(d @ xtx_s @ d, CLAMP * d @ s1), projected


def main(argv: list[str] | None = None) -> dict:
    # Very sticky (Eng et al. 2024, §6; lag-1 autocorrelation ~0.99): the paper's 25,000 draws per chain give a bulk ESS
    # of ~80 per chain; twice that clears the mixing check's 100 per chain.
    p = common.parser(__doc__.splitlines()[0], draws=50000, warmup=1000)
    args = common.finish_args(p.parse_args(argv))
    rng = np.random.default_rng(args.seed)
    x = rng.normal(MU, 1.0, size=(N, 2))
    y = BETA[0] + x @ BETA[1:] + rng.normal(0.0, np.sqrt(SIGMA2), size=N)
    # curator: Laplace(Delta/epsilon) on each of the 9 sums; scale= avoids re-deriving epsilon from a budget
    release = na.privatize(statistic_of(x, y), statistic="vector", mechanism="laplace", scale=DELTA / EPSILON,
                           sensitivity=DELTA, labels=LABELS, n=N, rng=np.random.default_rng(args.seed + 100))
    print(f"linear regression, n = {N}; Laplace noise of scale Delta/epsilon = {DELTA}/{EPSILON} on 9 clamped "
          f"sums ({release.guarantee.describe()})")

    aug = AugmentationModel(statistic=clamped_statistic, model=regression_model, records=["x", "y"], model_args=(N,))
    t0 = time.perf_counter()
    idata = sample(aug, release, draws=args.draws, warmup=args.warmup, chains=args.chains, seed=args.seed,
                   progressbar=args.progressbar)
    elapsed = time.perf_counter() - t0
    beta = np.asarray(idata.posterior["beta"])
    print(f"\nnoise-aware sampler: {args.chains} chains x {args.draws} draws (+{args.warmup} warmup), "
          f"{elapsed:.1f} s with compilation; mean record acceptance "
          f"{float(idata.sample_stats['accept_rate'].mean()):.3f}; "
          f"NUTS divergences {int(idata.sample_stats['diverging'].sum())}")
    names = {"beta": ["beta_0", "beta_1", "beta_2"]}
    common.print_table("noise-aware posterior (data augmentation)", common.summarize({"beta": beta}, names))

    xd = np.column_stack([np.ones(N), x])
    conf_mean, conf_cov = gaussian_posterior(xd.T @ xd, xd.T @ y)
    naive_mean, naive_cov, projected = naive_from_noisy(np.asarray(release.values), N)
    size = beta.shape[0] * beta.shape[1]
    draws = {
        "noise-aware": beta.reshape(-1, 3),
        "naive (noise ignored)": rng.multivariate_normal(naive_mean, naive_cov, size=size),
        "confidential data": rng.multivariate_normal(conf_mean, conf_cov, size=size),
    }
    if projected:
        print("\nnaive: the noisy X^T X was not positive semi-definite; projected to the nearest PSD matrix")
    for j in range(3):
        common.print_table(f"beta_{j} (true {BETA[j]})", common.compare({k: d[:, j] for k, d in draws.items()}))

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for j, ax in enumerate(axes):
        for (label, d), ls in zip(draws.items(), ["-", "--", ":"], strict=True):
            common.density(ax, d[:, j], label, ls=ls)
        ax.axvline(BETA[j], color="k", ls="--", lw=0.8)
        ax.set(title=f"beta_{j} (Eng et al. 2024, Figs. 6-7; dashed: truth)", xlabel=f"beta_{j}")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path = args.out / "dapper_regression.png"
    fig.savefig(path, dpi=110)
    print(f"\nfigure: {path}")
    return {"idata": idata, "draws": draws, "figure": path}


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices
    main()
