"""How much ESS per draw a better mass matrix could give ``copula.fit`` (issue 15 item 1): an oracle preconditioner.

Issue 15 asks for "a mass matrix that gives at least Stan's ESS per draw". ``copula.fit`` samples
in coordinates ``u`` with ``z = z_hat + A u`` (a Laplace approximation at the mode) and adapts a
diagonal (or dense) mass matrix on top during warmup. This diagnostic replaces ``(z_hat, A)`` by the
posterior's own mean and Cholesky factor of its covariance in the sampler's coordinates, estimated
from a long pilot run (``--pilot`` draws per chain, 4 chains, other seeds) -- the best a fixed
linear preconditioner can do -- and then runs ``copula.fit``'s usual NUTS (4 x (1000 + 1000), the
given mass-matrix adaptation on top) for ``--seeds`` seeds, on ``speed_race.py``'s NHANES-size
release (n = 5,820, p = 7). ESS = minimum bulk ESS over the 21 correlations. Not run in CI::

    .venv/bin/python benchmarks/copula_ess_ceiling.py --seeds 10
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--pilot", type=int, default=4000, help="pilot draws per chain (4 chains)")
    ap.add_argument("--mass-matrix", choices=["diagonal", "dense"], default="diagonal")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    import speed_race as sr
    from _report import load

    from noiseaware.copula import _fit, fit

    load0 = load()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "release.json")
        sr.make_release(5820, 7, 2026 + 5820 + 7, path)
        rel = sr._load_release(path)
    iu, ju = np.triu_indices(7, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pilot = fit(rel, chains=4, draws=args.pilot, warmup=1000, seed=10_000, mass_matrix="dense",
                    check_mixing=False)
    order = np.asarray(pilot.idata.attrs["noiseaware_variable_order"])
    R = np.asarray(pilot.idata["posterior"]["R"].values).reshape(-1, 7, 7)[:, order[:, None], order[None, :]]
    z = np.stack([_fit._chol_to_unconstrained(L) for L in np.linalg.cholesky(R)])  # the sampler's coordinates
    oracle = (z.mean(0), np.linalg.cholesky(np.cov(z.T)))
    print(f"pilot: {z.shape[0]} draws, variable order {order.tolist()}", flush=True)

    real = _fit.laplace_precondition
    _fit.laplace_precondition = lambda *a, **k: oracle  # type: ignore[assignment]
    epd, steps = [], []
    try:
        for s in range(args.seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = fit(rel, chains=4, draws=1000, warmup=1000, seed=s, mass_matrix=args.mass_matrix,
                          check_mixing=False)
            r = np.asarray(res.idata["posterior"]["R"].values)[:, :, iu, ju]
            epd.append(sr.min_bulk_ess(r)[0] / 4000)
            steps.append(float(np.asarray(res.idata["sample_stats"]["n_steps"]).mean()))
            print(f"seed {s}: ESS per draw {epd[-1]:.3f}, mean leapfrog {steps[-1]:.1f}", flush=True)
    finally:
        _fit.laplace_precondition = real
    e = np.asarray(epd)
    print(f"load before: {load0}\nload after: {load()}")
    print(f"oracle preconditioner, {args.mass_matrix} adaptation on top: ESS per draw mean {e.mean():.2f} "
          f"(min {e.min():.2f}, max {e.max():.2f}) over {len(e)} seeds; mean leapfrog {np.mean(steps):.1f}")
    return 0


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices, compilation cache
    raise SystemExit(main())
