"""Coverage of a regression slope from synthetic data: DPCopula's single copy vs noise-aware M copies (RRR rules).

Each replication draws a confidential data set D (n records, two attributes with a Gaussian copula of
correlation rho: an integer "age"-like attribute on 0..99 and a real attribute on [-4, 4] in 40 cells),
makes ONE ``dpcopula`` release with ``correlation="median"`` at epsilon, and analyses the OLS slope of
x2 on x1 (estimate and its usual standard error) two ways:

* DPCopula (seed 003): one synthetic copy of n rows from the release's point estimate
  (``copula.synthesize(release, n)``), naive 95% interval slope +- 1.96 se;
* noise-aware: ``copula.fit_dpcopula`` then M copies (``copula.synthesize(fit, n, draws=M)``),
  combined with the fully synthetic rules of Raghunathan, Reiter & Rubin (2003) (``combine_synthetic``).

Both are scored against the population slope (what the RRR rules target) and against the slope of the
confidential data D. Results are appended per replication to a JSON lines file, so an interrupted run
keeps what it has; ``--summary`` prints the table for docs/reproduction.md.

``--priors 0.5,0.2,hierarchical`` also scores the noise-aware interval under other margin priors
(``margin_posterior``'s ``prior``), sharing the replication's data, release and NUTS correlation
draws (keys ``noise_aware_<prior>``).

Run:  .venv/bin/python benchmarks/dpcopula_coverage.py --reps 60 --out /tmp/dpc_cov.jsonl
      .venv/bin/python benchmarks/dpcopula_coverage.py --summary --out /tmp/dpc_cov.jsonl
"""

from __future__ import annotations

import copy
import json
import time
import warnings
from pathlib import Path

import _study
import numpy as np

import noiseaware as na
from noiseaware import copula

DOMAINS = {"x1": range(0, 100), "x2": {"lower": -4.0, "upper": 4.0, "bins": 40}}


def population(n: int, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    z = rng.multivariate_normal([0.0, 0.0], [[1.0, rho], [rho, 1.0]], size=n)
    x1 = np.clip(np.round(50 + 15 * z[:, 0]), 0, 99).astype(np.int64)
    x2 = np.clip(z[:, 1], -4.0, 4.0)
    return x1, x2


def _with_margins(fit: object, margins: tuple[np.ndarray, ...]) -> object:
    """A copy of a ``fit_dpcopula`` result whose margins' draws are ``margins`` (each ``(S, K_j)``)."""
    new = copy.deepcopy(fit)
    post = new["posterior"]  # type: ignore[index]  # the posterior node (DataTree) or Dataset (InferenceData): in place
    for j, m in enumerate(margins):
        old = post[f"margin_{j}"]
        post[f"margin_{j}"] = old.copy(data=np.asarray(m).reshape(old.shape))
    return new


def slope(x1: np.ndarray, x2: np.ndarray) -> tuple[float, float]:
    x = x1.astype(np.float64)
    xc = x - x.mean()
    b = float(np.dot(xc, x2 - x2.mean()) / np.dot(xc, xc))
    resid = x2 - x2.mean() - b * xc
    se = float(np.sqrt(np.dot(resid, resid) / (x.size - 2) / np.dot(xc, xc)))
    return b, se


def main() -> None:
    ap = _study.parser(__doc__, write=None, reps=60, seed=2024)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--rho", type=float, default=0.5)
    ap.add_argument("--M", type=int, default=20)
    ap.add_argument("--out", type=Path, default=Path("/tmp/dpc_cov.jsonl"))
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--priors", default="", help="extra margin priors, comma-separated (floats or 'hierarchical')")
    a = ap.parse_args()
    if a.summary:
        summarize(a.out)
        return
    import pandas as pd

    b_pop, _ = slope(*population(4_000_000, a.rho, np.random.default_rng([a.seed, 0])))
    done = sum(1 for _ in a.out.open()) if a.out.exists() else 0
    for h in range(done, a.reps):
        t0 = time.time()
        rng = np.random.default_rng([a.seed, 1, h])
        x1, x2 = population(a.n, a.rho, rng)
        b_conf, _ = slope(x1, x2)
        df = pd.DataFrame({"x1": x1, "x2": x2})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rel = na.privatize(df, statistic="dpcopula", epsilon=a.eps, correlation="median", domains=DOMAINS, rng=rng)
        one = copula.synthesize(rel, a.n, seed=rng)
        b1, se1 = slope(one["x1"].to_numpy(), one["x2"].to_numpy())
        fit = copula.fit_dpcopula(rel, chains=2, draws=50, warmup=300, seed=int(rng.integers(2**31)))  # 100 joint draws
        copies = copula.synthesize(fit, a.n, draws=a.M, seed=rng)
        est = [slope(c["x1"].to_numpy(), c["x2"].to_numpy()) for c in copies]
        comb = copula.combine_synthetic([e[0] for e in est], [e[1] ** 2 for e in est])
        lo, hi = comb.interval(0.95)
        extra = {}
        for pr in [p for p in a.priors.split(",") if p]:
            prior: float | str = pr if pr == "hierarchical" else float(pr)
            alpha = float(rel.mechanism.alpha)  # type: ignore[attr-defined]
            bins = np.cumsum([int(b) for b in rel.metadata["bins"]])[:-1]
            margins = tuple(
                copula.margin_posterior(h_, alpha, n=a.n, draws=na.results.draws(fit, "R").shape[0], prior=prior,
                                        seed=rng)
                for h_ in np.split(rel.values, bins)
            )
            cps = copula.synthesize(_with_margins(fit, margins), a.n, draws=a.M, seed=rng)
            es = [slope(c["x1"].to_numpy(), c["x2"].to_numpy()) for c in cps]
            extra[f"noise_aware_{pr}"] = list(
                copula.combine_synthetic([e[0] for e in es], [e[1] ** 2 for e in es]).interval(0.95)
            )
        row = {
            "rep": h,
            "b_pop": b_pop,
            "b_conf": b_conf,
            "dpcopula": [b1 - 1.96 * se1, b1 + 1.96 * se1],
            "noise_aware": [lo, hi],
            **extra,
            "seconds": time.time() - t0,
        }
        with a.out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(f"rep {h}: {row['seconds']:.1f}s", flush=True)
    summarize(a.out)


def summarize(path: Path) -> None:
    rows = [json.loads(line) for line in path.open()]
    reps = len(rows)
    print(f"replications: {reps}")
    print(
        "| method | covers population slope | covers confidential-data slope | mean interval length | "
        "mean relative bias of the midpoint vs confidential slope |"
    )
    print("|---|---|---|---|---|")
    keys = [
        ("dpcopula", "DPCopula, one copy, naive interval"),
        ("noise_aware", "noise-aware, M copies, RRR fully synthetic rule"),
    ]
    keys += [
        (k, f"noise-aware, margin prior {k.removeprefix('noise_aware_')}")
        for k in rows[0]
        if k.startswith("noise_aware_")
    ]
    for key, name in keys:
        pop = np.mean([r[key][0] <= r["b_pop"] <= r[key][1] for r in rows])
        conf = np.mean([r[key][0] <= r["b_conf"] <= r[key][1] for r in rows])
        length = np.mean([r[key][1] - r[key][0] for r in rows])
        se = np.sqrt(0.95 * 0.05 / max(reps, 1))
        bias = np.mean([(r[key][0] + r[key][1]) / 2 / r["b_conf"] - 1 for r in rows])
        print(f"| {name} | {pop:.3f} | {conf:.3f} | {length:.4f} | {bias:+.3f} |")
    print(
        f"(binomial s.e. at 0.95: {se:.3f}; mean seconds per replication {np.mean([r['seconds'] for r in rows]):.1f})"
    )


if __name__ == "__main__":
    _study.main(main)
