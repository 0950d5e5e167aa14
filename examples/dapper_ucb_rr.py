"""Eng et al. (2024) §5, Example 1: UC Berkeley admissions under randomized response (two fair coin flips).

Every applicant's two answers (male?, admitted?) are randomized: keep the answer on heads, else
report a fresh fair coin -- P(truth) = 3/4 per answer, log 3-DP per answer, 2 log 3 per applicant.
The latent records are the applicants' true cells (male&admitted, male&rejected,
female&admitted, female&rejected) with probabilities pi; theta | records is the conjugate
Dirichlet(1 + counts) draw (dapper's post_f). Compares the noise-aware posterior of the odds ratio
(odds of admission, male / female) with the naive one that treats the noisy answers as true and
with the confidential-data posterior (the paper's Figures 1-3).

Run:  .venv/bin/python examples/dapper_ucb_rr.py [--data ucb|dapper] [--quick] [--out DIR]
"""

from __future__ import annotations

import _dapper_common as common
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist

import noiseaware as na
from noiseaware.augment import AugmentationModel
from noiseaware.datasets import ucb_admissions
from noiseaware.mechanisms import RandomizedResponse

CELLS = ["pi_11 (M,adm)", "pi_10 (M,rej)", "pi_01 (F,adm)", "pi_00 (F,rej)"]
BITS = np.array([[1, 1], [1, 0], [0, 1], [0, 0]])  # cell -> (male, admitted), dapper's order
#: The paper's published randomized table for its 400 applicants (§5, Example 1), cells in BITS order.
SEED001_NOISY = np.array([104, 120, 74, 102])


def table_model(n: int) -> None:
    """Complete data: pi ~ Dirichlet(1), each applicant's cell ~ Categorical(pi)."""
    pi = numpyro.sample("pi", dist.Dirichlet(jnp.ones(4)))
    with numpyro.plate("applicants", n):
        numpyro.sample("x", dist.Categorical(pi))


def answers(x, s_dp_i):
    """t_i: an applicant's true answers (male, admitted) -- what randomized response acted on."""
    return jnp.stack([1 - x // 2, 1 - x % 2])


def dirichlet_posterior(key, x, theta):
    return {"pi": jax.random.dirichlet(key, 1.0 + jnp.bincount(x, length=4))}


def odds_ratio(pi: np.ndarray) -> np.ndarray:
    return pi[..., 0] * pi[..., 3] / (pi[..., 1] * pi[..., 2])


def records_from_cells(counts: np.ndarray) -> np.ndarray:
    """One row of (male, admitted) answers per applicant, from cell counts."""
    return BITS[np.repeat(np.arange(4), counts)]


def main(argv: list[str] | None = None) -> dict:
    # The seed ran 5,000 draws at N = 400. At N = 4526 randomized response leaves ~90% of the information
    # missing (Eng et al. 2024, §6; lag-1 autocorrelation ~0.9), so 20,000 draws per chain for a bulk ESS near 1,000.
    p = common.parser(__doc__.splitlines()[0], draws=20000, warmup=2000)
    p.add_argument("--data", choices=["ucb", "dapper"], default="ucb",
                   help="ucb: R's UCBAdmissions summed over departments (N = 4526), released here by simulation; "
                        "dapper: the paper's 400 applicants and its published randomized table")
    args = common.finish_args(p.parse_args(argv))
    truth = ucb_admissions("full" if args.data == "ucb" else "dapper").to_numpy().ravel()
    n = int(truth.sum())
    rr = RandomizedResponse.from_coin_flips(k=2)  # p = 3/4
    if args.data == "ucb":
        # curator side; rng= makes a seeded simulation (drop it for a secure OpenDP release)
        release = na.privatize(records_from_cells(truth), statistic="randomized_response", categories=2, p=rr.p,
                               columns=["male", "admitted"], rng=np.random.default_rng(args.seed))
    else:
        values = records_from_cells(SEED001_NOISY)
        release = na.Release(statistic="randomized_response", values=values,
                             labels=[(str(i), c) for i in range(n) for c in ("male", "admitted")], mechanism=rr,
                             composition="per_record", guarantee=rr.guarantee().repeat(2), secure=False, n=n,
                             metadata={"source": "Eng et al. (2024) §5 Example 1, published randomized table"})
    noisy = np.bincount(np.asarray(release.values) @ np.array([-2, -1]) + 3, minlength=4)  # noisy cell counts
    print(f"UC Berkeley admissions, N = {n}; randomized response p = {rr.p} per answer, "
          f"{release.guarantee.describe()} per applicant")
    print("true cells  (MA, MR, FA, FR):", truth.tolist())
    print("noisy cells (MA, MR, FA, FR):", noisy.tolist())

    aug = AugmentationModel(statistic=answers, model=table_model, model_args=(n,), posterior=dirichlet_posterior)
    idata = common.sample_and_report(aug, release, args, n)
    pi = np.asarray(idata.posterior["pi"])
    common.print_table("noise-aware posterior (data augmentation)",
                       common.summarize({"pi": pi, "odds_ratio": odds_ratio(pi)}, {"pi": CELLS}))

    rng = np.random.default_rng(args.seed + 1)
    naive = rng.dirichlet(1.0 + noisy, size=pi.shape[0] * pi.shape[1])
    confidential = rng.dirichlet(1.0 + truth, size=pi.shape[0] * pi.shape[1])
    ors = {"noise-aware": odds_ratio(pi).ravel(), "naive (noise ignored)": odds_ratio(naive),
           "confidential data": odds_ratio(confidential)}
    common.print_table("odds ratio of admission, male / female", common.compare(ors))

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for j in range(4):
        for c in range(pi.shape[0]):
            axes[0].plot(pi[c, :, j], lw=0.4, color=f"C{j}", alpha=0.7, label=CELLS[j] if c == 0 else None)
    axes[0].set(title="trace plots (Eng et al. 2024, Fig. 1)", xlabel="draw", ylabel="pi")
    axes[0].legend(fontsize=7)
    for (label, x), ls in zip(ors.items(), ["-", "--", ":"], strict=True):
        common.density(axes[1], x, label, ls=ls)
    axes[1].set(title="odds ratio (Eng et al. 2024, Figs. 2-3)", xlabel="odds ratio, male / female")
    axes[1].legend(fontsize=8)
    axes[2].plot(np.asarray(idata.sample_stats["accept_rate"]).T, lw=0.5)
    axes[2].set(title="record acceptance rate per iteration", xlabel="draw")
    fig.tight_layout()
    path = args.out / f"dapper_ucb_rr_{args.data}.png"
    fig.savefig(path, dpi=110)
    print(f"\nfigure: {path}")
    return {"idata": idata, "odds_ratio": ors, "figure": path}


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices
    main()
