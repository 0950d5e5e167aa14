"""Secure samplers, all delegated to OpenDP (>= 0.14.2).

OpenDP's integer Laplace and Gaussian measurements sample the discrete Laplace and discrete
Gaussian distributions exactly on rational bignums (Canonne, Kamath & Steinke 2020), without
floating point; its float measurements add discretized noise on a 2**k lattice; its randomized
response and Gumbel report-noisy-max use exact Bernoulli / Gumbel sampling. Nothing here uses
``numpy.random``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

__all__: list[str] = []


@lru_cache(maxsize=1)
def _dp() -> Any:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


@lru_cache(maxsize=256)
def _int_laplace(scale: float) -> Any:
    dp = _dp()
    space = dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64")
    return dp.m.make_laplace(*space, scale=scale)


@lru_cache(maxsize=256)
def _int_gaussian(scale: float) -> Any:
    dp = _dp()
    space = dp.vector_domain(dp.atom_domain(T="i64")), dp.l2_distance(T=float)
    return dp.m.make_gaussian(*space, scale=scale)


@lru_cache(maxsize=256)
def _float_laplace(scale: float) -> Any:
    dp = _dp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
    return dp.m.make_laplace(*space, scale=scale)


@lru_cache(maxsize=256)
def _float_gaussian(scale: float) -> Any:
    dp = _dp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
    return dp.m.make_gaussian(*space, scale=scale)


@lru_cache(maxsize=64)
def _rr(k: int, prob: float) -> Any:
    dp = _dp()
    return dp.m.make_randomized_response(list(range(k)), prob, T="i64")


@lru_cache(maxsize=64)
def _gumbel_max(scale: float) -> Any:
    dp = _dp()
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    return dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=scale)


def discrete_laplace(values: np.ndarray, scale: float) -> np.ndarray:
    """Values + exact discrete Laplace(scale) noise, P(k) proportional to exp(-|k|/scale)."""
    flat = [int(x) for x in np.ravel(values)]
    return np.asarray(_int_laplace(float(scale))(flat), dtype=np.int64).reshape(np.shape(values))


def discrete_gaussian(values: np.ndarray, sigma: float) -> np.ndarray:
    """Values + exact discrete Gaussian(sigma) noise, P(k) proportional to exp(-k^2/(2 sigma^2))."""
    flat = [int(x) for x in np.ravel(values)]
    return np.asarray(_int_gaussian(float(sigma))(flat), dtype=np.int64).reshape(np.shape(values))


def laplace(values: np.ndarray, scale: float) -> np.ndarray:
    """Values + OpenDP's (lattice-discretized) continuous Laplace(scale) noise."""
    flat = [float(x) for x in np.ravel(values)]
    return np.asarray(_float_laplace(float(scale))(flat), dtype=np.float64).reshape(np.shape(values))


def gaussian(values: np.ndarray, sigma: float) -> np.ndarray:
    """Values + OpenDP's (lattice-discretized) continuous Gaussian(sigma) noise."""
    flat = [float(x) for x in np.ravel(values)]
    return np.asarray(_float_gaussian(float(sigma))(flat), dtype=np.float64).reshape(np.shape(values))


def randomized_response(values: np.ndarray, k: int, prob: float) -> np.ndarray:
    """Each value kept with probability ``prob``, else uniform over the other k - 1 categories."""
    meas = _rr(int(k), float(prob))
    return np.asarray([meas(int(x)) for x in np.ravel(values)], dtype=np.int64).reshape(np.shape(values))


def gumbel_argmax(scores: np.ndarray, scale: float) -> int:
    """argmax(scores + Gumbel(scale)): the exponential mechanism P(r) ~ exp(score_r / scale)."""
    return int(_gumbel_max(float(scale))([float(x) for x in np.ravel(scores)]))


def privacy_map(kind: str, scale: float, d_in: float) -> float:
    """OpenDP's own privacy map of the measurement used for ``kind`` (for cross-checks)."""
    if kind == "discrete_laplace":
        return float(_int_laplace(float(scale)).map(int(d_in)))
    if kind == "discrete_gaussian":
        return float(_int_gaussian(float(scale)).map(float(d_in)))
    if kind == "laplace":
        return float(_float_laplace(float(scale)).map(float(d_in)))
    if kind == "gaussian":
        return float(_float_gaussian(float(scale)).map(float(d_in)))
    if kind == "gumbel_max":
        return float(_gumbel_max(float(scale)).map(float(d_in)))
    raise KeyError(kind)
