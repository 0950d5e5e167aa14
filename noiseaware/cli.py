"""The ``noiseaware`` command line.

* ``noiseaware demo`` -- privatize the built-in simulated data set and print the release.
* ``noiseaware release DATA.csv --epsilon E [--mechanism M] -o release.json`` -- curator.
* ``noiseaware show release.json`` -- print a release and its guarantee.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

__all__ = ["main"]


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import privatize
    from .datasets import demo_copula_data

    x, R, cols = demo_copula_data(seed=args.seed, n=args.n)
    print(f"noiseaware demo: Gaussian copula data, n={x.shape[0]}, p={x.shape[1]} (seed 000 §5.2 marginals)")
    release = privatize(x, statistic="median_pairs", epsilon=args.epsilon, columns=cols)
    print(release.summary())
    iu, ju = np.triu_indices(len(cols), 1)
    print("\n  true copula correlations of the pairs:")
    for (a, b), r in zip(release.labels, R[iu, ju], strict=True):
        print(f"    {a + ' x ' + b:<30} R = {r:+.3f}")
    if args.output:
        release.to_json(args.output)
        print(f"\nwrote {args.output}")
    return 0


def _cmd_release(args: argparse.Namespace) -> int:
    import pandas as pd

    from . import privatize

    df = pd.read_csv(args.data)
    release = privatize(df, statistic=args.statistic, epsilon=args.epsilon, mechanism=args.mechanism)
    release.to_json(args.output)
    print(release.summary())
    print(f"wrote {args.output}")
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from .release import Release

    print(Release.from_json(args.release).summary(max_rows=args.rows))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``noiseaware`` command."""
    parser = argparse.ArgumentParser(prog="noiseaware", description="Noise-aware analysis of DP releases.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="privatize a built-in simulated data set and print the release")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("-o", "--output", default=None, help="also write the release JSON here")
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("release", help="curator: privatize a CSV file")
    p.add_argument("data")
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--statistic", default="median_pairs")
    p.add_argument("--mechanism", default=None, choices=["geometric", "tgm", "btgm", "rgm"])
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=_cmd_release)

    p = sub.add_parser("show", help="print a release JSON file")
    p.add_argument("release")
    p.add_argument("--rows", type=int, default=50)
    p.set_defaults(func=_cmd_show)

    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, TypeError, OSError) as exc:
        print(f"noiseaware: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
