"""Shared helpers of the dapper examples (Eng et al. (2024) §5): arguments, summaries, figures."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def parser(description: str, draws: int, warmup: int) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--draws", type=int, default=draws, help="kept draws per chain")
    p.add_argument("--warmup", type=int, default=warmup, help="discarded draws per chain")
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="a few hundred draws on 2 chains (smoke test)")
    p.add_argument("--progressbar", action="store_true",
                   help="show progress bars (slower: chains then run one after another, one host call per draw)")
    p.add_argument(
        "--out", type=Path, default=ROOT / "figures", help="folder for the figures (default: figures/, git-ignored)"
    )
    return p


def finish_args(args: argparse.Namespace) -> argparse.Namespace:
    if args.quick:
        args.draws, args.warmup, args.chains = 300, 150, 2
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def summarize(draws: dict[str, np.ndarray], names: dict[str, list[str]] | None = None) -> pd.DataFrame:
    """dapper's summary: mean, median, sd, q5, q95, R-hat, bulk and tail ESS per scalar.

    ``draws`` maps a variable to an array (chain, draw, ...) ; ``names`` optionally labels components.
    """
    rows = {}
    for var, arr in draws.items():
        arr = np.asarray(arr)
        flat = arr.reshape(arr.shape[0], arr.shape[1], -1)
        default = [var] if flat.shape[2] == 1 else [f"{var}[{j}]" for j in range(flat.shape[2])]
        labels = (names or {}).get(var) or default
        for j, label in enumerate(labels):
            x = flat[..., j]
            rows[label] = {
                "mean": x.mean(),
                "median": np.median(x),
                "sd": x.std(ddof=1),
                "q5": np.quantile(x, 0.05),
                "q95": np.quantile(x, 0.95),
                "rhat": float(np.ravel(az.rhat(x))[0]) if x.shape[0] > 1 else np.nan,
                "ess_bulk": float(np.ravel(az.ess(x, method="bulk"))[0]),
                "ess_tail": float(np.ravel(az.ess(x, method="tail", prob=(0.05, 0.95)))[0]),  # ArviZ 1 needs prob
            }
    return pd.DataFrame(rows).T


def compare(samples: dict[str, np.ndarray]) -> pd.DataFrame:
    """Mean, sd and 90% interval of one quantity under several analyses (rows)."""
    return pd.DataFrame(
        {
            k: {"mean": x.mean(), "sd": x.std(ddof=1), "q5": np.quantile(x, 0.05), "q95": np.quantile(x, 0.95)}
            for k, x in samples.items()
        }
    ).T


def pyplot():
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def density(ax, x: np.ndarray, label: str, **kw) -> None:
    """A smooth density line (Gaussian KDE) of draws x."""
    from scipy import stats

    x = np.ravel(x)
    lo, hi = np.quantile(x, [0.001, 0.999])
    pad = 0.1 * (hi - lo)
    grid = np.linspace(lo - pad, hi + pad, 400)
    ax.plot(grid, stats.gaussian_kde(x)(grid), label=label, **kw)


def print_table(title: str, df: pd.DataFrame) -> None:
    print(f"\n{title}")
    with pd.option_context("display.width", 140, "display.float_format", "{:.4g}".format):
        print(df)


def sample_and_report(aug, sdp, args: argparse.Namespace, n: int):
    """Run ``noiseaware.augment.sample`` with the example's settings and print its speed and acceptance."""
    from noiseaware.augment import sample

    t0 = time.perf_counter()
    idata = sample(aug, sdp, draws=args.draws, warmup=args.warmup, chains=args.chains, seed=args.seed,
                   progressbar=args.progressbar)
    elapsed = time.perf_counter() - t0
    acc = float(idata.sample_stats["accept_rate"].mean())
    updates = n * args.chains * (args.draws + args.warmup)
    print(f"\nnoise-aware sampler ({idata.attrs['sampler']}): {args.chains} chains x {args.draws} draws "
          f"(+{args.warmup} warmup), {elapsed:.1f} s with compilation, {updates / elapsed:.3g} record updates/s; "
          f"mean record acceptance {acc:.3f}")
    if "diverging" in idata.sample_stats:
        print(f"NUTS divergences: {int(idata.sample_stats['diverging'].sum())}")
    return idata
