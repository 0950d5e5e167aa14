"""Interval coverage and SBC ranks of the noise-aware covariance posterior (seed 002 releases).

For each cell (n, rho) at d = 5: ``--reps`` data sets ``x_i ~ N(0, Sigma)`` (clipped to B = 1,
which at the scales used here touches about one value in 16,000), a PACE-GGM release
(simulation mode), and the NumPyro posterior of the model of :func:`noiseaware.covariance.fit`
(LKJ(1) correlation, HalfNormal(B) scales, :class:`NoisyCovarianceEntries`). To compile NUTS once
per cell the measured entries are padded to all ``d(d+1)/2`` entries with precision ``1e-12``
(an unmeasured entry: its variance 1e12 carries no information) and the data are model arguments.

Two studies:

* ``coverage`` -- fixed ``Sigma`` (scales 0.25, correlations from a fixed LKJ draw): the share
  of central 90% intervals of the 15 unique entries that contain the truth.
* ``sbc`` -- ``Sigma`` drawn from the prior with scales HalfNormal(0.25) (so the data stay
  inside the bound; the fit's prior uses the same 0.25 here): ranks of the truth among thinned
  posterior draws for each entry, with a chi-square uniformity p-value per cell.

The posterior ignores the selection step (see ``covariance.fit``); this study measures what that
does. ``--route wishart`` uses the exact latent-Wishart model (Bartlett factor, as
``covariance.fit(route="wishart")``) instead of the moment-matched law; its results go to
``covariance_calibration_wishart.json`` and their own docs section. Run::

    .venv/bin/python benchmarks/covariance_calibration.py --reps 20 --write
    .venv/bin/python benchmarks/covariance_calibration.py --reps 20 --route wishart --studies coverage --write
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import _study
import numpy as np
from _study import machine, raw_path

import noiseaware as na
from noiseaware import covariance as cv

HERE = Path(__file__).resolve().parent
D = 5
ENTRIES = np.array([(j, k) for j in range(D) for k in range(j + 1)])


def padded(rel: na.Release) -> tuple[np.ndarray, np.ndarray]:
    """y and precision over all d(d+1)/2 entries (unmeasured: y = 0, precision 1e-12)."""
    m = cv.measurements(rel)
    y = np.zeros(len(ENTRIES))
    lam = np.full(len(ENTRIES), 1e-12)
    for (j, k), yy, ll in zip(m.pairs, m.y, m.precision, strict=True):
        i = j * (j + 1) // 2 + k
        y[i], lam[i] = yy, ll
    return y, lam


ROUTE = "moments"


def wishart_entries(low: Any, a_diag: Any, a_off: Any, below: tuple[np.ndarray, np.ndarray], n: int) -> Any:
    r"""The ``ENTRIES`` of :math:`S = L A A^\top L^\top / n`, :math:`A` the Bartlett factor (lower triangular).

    :math:`nS \sim \mathrm{Wishart}(n, \Sigma)` with :math:`\Sigma = LL^\top` when
    :math:`A_{ii}^2 \sim \chi^2_{n-i+1}` and :math:`A_{ij} \sim N(0, 1)` below the diagonal
    (Bartlett 1933); the latent-Wishart model of ``covariance.fit(route="wishart")``, written here with
    JAX so that the benchmark compiles it once per cell with the data as arguments.
    """
    import jax.numpy as jnp

    a = jnp.diag(a_diag).at[below].set(a_off)
    m = low @ a
    return (m @ m.T / n)[ENTRIES[:, 0], ENTRIES[:, 1]]


def make_mcmc(n: int, scale: float, warmup: int, draws: int) -> Any:
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    from noiseaware.numpyro import NoisyCovarianceEntries

    k = jnp.asarray(n - np.arange(D, dtype=np.float64))  # Bartlett: A_ii^2 ~ chi2(n - i + 1), i = 1..D
    below = np.tril_indices(D, -1)  # A's entries below the diagonal, row-major: (1,0), (2,0), (2,1), ...
    route = ROUTE

    def model(y: Any, lam: Any) -> None:
        s = numpyro.sample("scale", dist.HalfNormal(scale * jnp.ones(D)).to_event(1))
        lr = numpyro.sample("corr_chol", dist.LKJCholesky(D, 1.0))
        low = s[:, None] * lr
        sigma = numpyro.deterministic("sigma", low @ low.T)
        if route == "wishart":  # the model of covariance.fit(route="wishart")
            u = numpyro.sample("bartlett_u", dist.Gamma(k / 2.0, k / 2.0).to_event(1))
            z = numpyro.sample("bartlett_normal", dist.Normal(jnp.zeros(D * (D - 1) // 2), 1.0).to_event(1))
            ent = wishart_entries(low, jnp.sqrt(u * k), z, below, n)
            numpyro.sample("y", dist.Normal(ent, 1.0 / jnp.sqrt(lam)).to_event(1), obs=y)
        else:
            numpyro.sample("y", NoisyCovarianceEntries(sigma, n, ENTRIES, lam), obs=y)

    init = numpyro.infer.init_to_median(num_samples=15) if route == "wishart" else numpyro.infer.init_to_uniform
    return numpyro.infer.MCMC(
        numpyro.infer.NUTS(model, target_accept_prob=0.9, init_strategy=init),
        num_warmup=warmup,
        num_samples=draws,
        progress_bar=False,
        jit_model_args=True,
    )


def sigma_from(rng: np.random.Generator, scale: float) -> np.ndarray:
    """A covariance with HalfNormal(scale) scales and an LKJ(1) correlation (onion draw via NumPyro)."""
    import jax
    import numpyro.distributions as dist

    lr = np.asarray(dist.LKJCholesky(D, 1.0).sample(jax.random.PRNGKey(int(rng.integers(2**31)))))
    s = np.abs(rng.normal(0.0, scale, size=D))
    low = s[:, None] * lr
    return low @ low.T


def run_cell(n: int, rho: float, reps: int, study: str, warmup: int, draws: int, seed: int) -> dict[str, Any]:
    import jax

    rng = np.random.default_rng(seed)
    scale = 0.25
    fixed = sigma_from(np.random.default_rng(12345), scale) if study == "coverage" else None
    mcmc = make_mcmc(n, scale if study == "sbc" else 1.0, warmup, draws)
    hits, ranks, divergences = [], [], 0
    t0 = time.perf_counter()
    for r in range(reps):
        sigma = fixed if fixed is not None else sigma_from(rng, scale)
        x = np.clip(rng.multivariate_normal(np.zeros(D), sigma, size=n), -1.0, 1.0)
        rel = na.privatize(x, statistic="pace_ggm", rho=rho, bound=1.0, rng=np.random.default_rng(seed + r))
        y, lam = padded(rel)
        mcmc.run(jax.random.PRNGKey(seed + r), y=y, lam=lam)
        post = np.asarray(mcmc.get_samples()["sigma"])[:, ENTRIES[:, 0], ENTRIES[:, 1]]
        divergences += int(np.sum(np.asarray(mcmc.get_extra_fields()["diverging"])))
        truth = sigma[ENTRIES[:, 0], ENTRIES[:, 1]]
        lo, hi = np.quantile(post, [0.05, 0.95], axis=0)
        hits.append((lo <= truth) & (truth <= hi))
        thin = post[:: max(1, post.shape[0] // 99)][:99]
        ranks.append(np.sum(thin < truth, axis=0))
    hits_a = np.array(hits)
    out: dict[str, Any] = {
        "n": n,
        "rho": rho,
        "reps": reps,
        "coverage90": float(hits_a.mean()),
        "coverage90_diag": float(hits_a[:, ENTRIES[:, 0] == ENTRIES[:, 1]].mean()),
        "coverage90_off": float(hits_a[:, ENTRIES[:, 0] != ENTRIES[:, 1]].mean()),
        "divergences": divergences,
        "seconds": time.perf_counter() - t0,
    }
    if study == "sbc":
        from scipy import stats

        rk = np.array(ranks).ravel()
        counts = np.histogram(rk, bins=10, range=(0, 100))[0]
        out["sbc_chi2_p"] = float(stats.chisquare(counts).pvalue)
        out["sbc_rank_hist"] = counts.tolist()
    return out


def main() -> None:
    ap = _study.parser(__doc__, write="flag", reps=20)
    ap.add_argument("--ns", nargs="*", type=int, default=[500, 5000])
    ap.add_argument("--rhos", nargs="*", type=float, default=[0.01, 0.1, 1.0])
    ap.add_argument("--studies", nargs="*", default=["coverage", "sbc"])
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--route", choices=["moments", "wishart"], default="moments")
    ap.add_argument("--append", action="store_true", help="add to (replace the same cells of) the saved JSON")
    args = ap.parse_args()
    global ROUTE
    ROUTE = args.route
    warnings.simplefilter("ignore")
    run = _study.Run(args, uptime=False)
    rows: list[dict[str, Any]] = []
    saved = raw_path(f"covariance_calibration{'' if ROUTE == 'moments' else '_' + ROUTE}.json")
    saved.parent.mkdir(parents=True, exist_ok=True)
    if args.append and saved.exists():  # keep the cells of earlier runs (one process per cell frees JAX's memory)
        todo = {(st, n, rho) for st in args.studies for n in args.ns for rho in args.rhos}
        rows = [r for r in json.loads(saved.read_text()) if (r["study"], r["n"], r["rho"]) not in todo]
    for study in args.studies:
        for n in args.ns:
            for rho in args.rhos:
                res = run_cell(n, rho, args.reps, study, args.warmup, args.draws, seed=1000 * n + int(rho * 100))
                res["study"] = study
                res["route"] = args.route
                rows.append(res)
                print(json.dumps(res), flush=True)
                report(rows, run)  # after every cell: a long run cut short keeps its results


def report(rows: list[dict[str, Any]], run: _study.Run) -> None:
    """Write the raw JSON rows and (with ``--write``) the record rendered into the docs."""
    suffix = "" if ROUTE == "moments" else f"_{ROUTE}"
    raw = raw_path(f"covariance_calibration{suffix}.json")
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(rows, indent=1) + "\n")
    cmd = ".venv/bin/python benchmarks/covariance_calibration.py " + " ".join(sys.argv[1:])
    lines = [
        f"## Noise-aware covariance posterior: coverage and SBC (seed 002 releases, d = 5, route {ROUTE})",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()}; load average {run.before.one:.1f} before, {run.stop().after.one:.1f} after.",
        "",
        "| study | n | rho | reps | 90% coverage (all / diag / off-diag) | SBC chi2 p | divergences | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p = f"{r['sbc_chi2_p']:.3f}" if "sbc_chi2_p" in r else "-"
        lines.append(
            f"| {r['study']} | {r['n']} | {r['rho']:g} | {r['reps']} | {r['coverage90']:.3f} / "
            f"{r['coverage90_diag']:.3f} / {r['coverage90_off']:.3f} | {p} | {r['divergences']} | {r['seconds']:.0f} |"
        )
    text = "\n".join(lines) + "\n"
    run.record("covariance_calibration" + suffix, text)


if __name__ == "__main__":
    _study.main(main)
