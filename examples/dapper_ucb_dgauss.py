"""Eng et al. (2024) §5, Example 2: UC Berkeley admissions with discrete Gaussian noise (sigma = 6.25) on the cells.

The curator releases the four cell counts plus discrete Gaussian noise of scale 6.25 and the true
total N. The latent records are the applicants' cells; the record-additive statistic is the cell
indicator (dapper's st_f), so one record update moves one applicant between two cells and costs
O(1). theta | records is drawn by NUTS on the ordinary NumPyro model of the complete data, run
inside NumPyro's HMCGibbs with the record sweep as the Gibbs step -- no conjugate sampler needed
(``--theta conjugate`` uses the Dirichlet draw instead). Compares the noise-aware, naive and
confidential posteriors of the odds ratio (the paper's Figures 4-5).

Run:  .venv/bin/python examples/dapper_ucb_dgauss.py [--data ucb|dapper] [--theta nuts|conjugate] [--quick]
"""

from __future__ import annotations

import math

import _dapper_common as common
import jax
import numpy as np
from dapper_ucb_rr import CELLS, dirichlet_posterior, odds_ratio, table_model

import noiseaware as na
from noiseaware import accounting
from noiseaware.augment import AugmentationModel
from noiseaware.datasets import ucb_admissions
from noiseaware.mechanisms import DiscreteGaussianMechanism

SIGMA = 6.25
#: L2 sensitivity of the four cells when N is public: one applicant moves between two cells.
SENSITIVITY = math.sqrt(2.0)
#: The paper's published discrete Gaussian table for its 400 applicants (§5, Example 2), cells (MA, MR, FA, FR).
SEED001_NOISY = np.array([110, 131, 47, 110])


def cell_indicator(x, s_dp):
    """t_i: the indicator of an applicant's cell -- the released counts are their sum."""
    return jax.nn.one_hot(x, 4)


def main(argv: list[str] | None = None) -> dict:
    p = common.parser(__doc__.splitlines()[0], draws=2000, warmup=1000)
    p.add_argument("--data", choices=["ucb", "dapper"], default="ucb")
    p.add_argument("--theta", choices=["nuts", "conjugate"], default="nuts", help="sampler for theta | records")
    args = common.finish_args(p.parse_args(argv))
    table = ucb_admissions("full" if args.data == "ucb" else "dapper")
    truth = table.to_numpy().ravel()
    n = int(truth.sum())
    mech = DiscreteGaussianMechanism(sigma=SIGMA, sensitivity=SENSITIVITY)
    if args.data == "ucb":
        # curator side; rng= makes a seeded simulation (drop it for a secure OpenDP release)
        release = na.privatize(table, statistic="counts", mechanism="discrete_gaussian", sigma=SIGMA,
                               sensitivity=SENSITIVITY, n=n, rng=np.random.default_rng(args.seed))
    else:
        release = na.Release(statistic="counts", values=SEED001_NOISY.reshape(2, 2),
                             labels=[(r, c) for r in table.index for c in table.columns], mechanism=mech,
                             composition="joint", guarantee=mech.guarantee(), secure=False, n=n,
                             provenance="Eng et al. (2024)",  # a published table: not drawn by noiseaware
                             metadata={"source": "Eng et al. (2024) §5 Example 2, published discrete Gaussian table"})
    noisy = np.asarray(release.values).ravel()
    eps = accounting.zcdp_to_approx_dp(mech.rho, 1e-10)
    print(f"UC Berkeley admissions, N = {n}; discrete Gaussian sigma = {SIGMA} on each cell, "
          f"{release.guarantee.describe()} (L2 sensitivity sqrt 2), i.e. ({eps:.3f}, 1e-10)-DP")
    print("true cells  (MA, MR, FA, FR):", truth.tolist())
    print("noisy cells (MA, MR, FA, FR):", noisy.tolist())

    def flat_indicator(x, s_dp):  # the release keeps the 2x2 shape
        return cell_indicator(x, s_dp).reshape(2, 2)

    aug = AugmentationModel(statistic=flat_indicator, model=table_model, model_args=(n,),
                            posterior=dirichlet_posterior if args.theta == "conjugate" else None)
    idata = common.sample_and_report(aug, release, args, n)
    pi = np.asarray(idata.posterior["pi"])
    common.print_table("noise-aware posterior (data augmentation)",
                       common.summarize({"pi": pi, "odds_ratio": odds_ratio(pi)}, {"pi": CELLS}))

    rng = np.random.default_rng(args.seed + 1)
    size = pi.shape[0] * pi.shape[1]
    naive = rng.dirichlet(1.0 + np.maximum(noisy, 0), size=size)  # noisy counts taken as true
    confidential = rng.dirichlet(1.0 + truth, size=size)
    ors = {"noise-aware": odds_ratio(pi).ravel(), "naive (noise ignored)": odds_ratio(naive),
           "confidential data": odds_ratio(confidential)}
    common.print_table("odds ratio of admission, male / female", common.compare(ors))

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for (label, x), ls in zip(ors.items(), ["-", "--", ":"], strict=True):
        common.density(axes[0], x, label, ls=ls)
    axes[0].set(title="odds ratio (Eng et al. 2024, Figs. 4-5)", xlabel="odds ratio, male / female")
    axes[0].legend(fontsize=8)
    for j in range(4):
        common.density(axes[1], pi[..., j], CELLS[j], color=f"C{j}")
        axes[1].axvline(truth[j] / n, color=f"C{j}", ls=":", lw=0.8)
    axes[1].set(title="cell probabilities (dotted: confidential proportions)", xlabel="pi")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    path = args.out / f"dapper_ucb_dgauss_{args.data}.png"
    fig.savefig(path, dpi=110)
    print(f"\nfigure: {path}")
    return {"idata": idata, "odds_ratio": ors, "figure": path}


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices
    main()
