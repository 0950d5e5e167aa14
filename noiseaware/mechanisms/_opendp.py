"""Secure samplers, all delegated to OpenDP (>= 0.14.2).

OpenDP's integer Laplace and Gaussian measurements sample the discrete Laplace and discrete
Gaussian distributions exactly on rational bignums (Canonne, Kamath & Steinke 2020), without
floating point; its float measurements add discretized noise on a 2**k lattice; its randomized
response and Gumbel report-noisy-max use exact Bernoulli / Gumbel sampling. Nothing here uses
``numpy.random``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import numpy as np

from ..exceptions import NoiseawareValueError

__all__: list[str] = []


@contextlib.contextmanager
def _dp() -> Iterator[Any]:
    """OpenDP with its ``contrib`` features on while the block builds a measurement, as they were after.

    The exact samplers used here are in OpenDP's ``contrib`` set, which OpenDP leaves to an explicit
    ``dp.enable_features("contrib")``; noiseaware turns it on only while it constructs its own
    measurements (constructors check the flag; invoking a built measurement does not), so the
    user's process keeps the features it chose.
    """
    import opendp.prelude as dp
    from opendp.mod import GLOBAL_FEATURES

    added = "contrib" not in GLOBAL_FEATURES
    if added:
        dp.enable_features("contrib")
    try:
        yield dp
    finally:
        if added:
            dp.disable_features("contrib")


@lru_cache(maxsize=256)
def _int_laplace(scale: float) -> Any:
    with _dp() as dp:
        space = dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64")
        return dp.m.make_laplace(*space, scale=scale)


@lru_cache(maxsize=256)
def _int_gaussian(scale: float) -> Any:
    with _dp() as dp:
        space = dp.vector_domain(dp.atom_domain(T="i64")), dp.l2_distance(T=float)
        return dp.m.make_gaussian(*space, scale=scale)


@lru_cache(maxsize=256)
def _float_laplace(scale: float) -> Any:
    with _dp() as dp:
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
        return dp.m.make_laplace(*space, scale=scale)


@lru_cache(maxsize=256)
def _float_gaussian(scale: float) -> Any:
    with _dp() as dp:
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
        return dp.m.make_gaussian(*space, scale=scale)


@lru_cache(maxsize=64)
def _rr(k: int, prob: float) -> Any:
    with _dp() as dp:
        return dp.m.make_randomized_response(list(range(k)), prob, T="i64")


@lru_cache(maxsize=64)
def _gumbel_max(scale: float) -> Any:
    with _dp() as dp:
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
        return dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=scale)


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def _unsaturated(out: list[int], what: str) -> np.ndarray:
    """int64 array of OpenDP's integer outputs; refuse outputs at the int64 limits.

    OpenDP adds integer noise with saturating arithmetic: ``value + noise`` beyond int64 comes
    back as ``2**63 - 1`` or ``-2**63``, a value the modelled law does not describe. The
    mechanisms accept only parameters with ``|value| <= 2**62`` and ``P(|noise| >= 2**62) <
    2**-64``, so this guard fires with probability below ``2**-64`` per value; it exists so that
    the secure path never saturates silently.
    """
    arr = np.asarray(out, dtype=np.int64)
    if arr.size and (int(np.min(arr)) == _I64_MIN or int(np.max(arr)) == _I64_MAX):
        raise NoiseawareValueError(
            f"OpenDP {what}: value + noise saturated at the int64 limit; refusing to return a release whose "
            "law differs from the modelled one. Keep |value| <= 2**62 and the noise scale within the "
            "mechanism's bound."
        )
    return arr


def _finite(out: list[float], what: str) -> np.ndarray:
    """float64 array of OpenDP's real outputs; refuse outputs that overflowed to +-inf."""
    arr = np.asarray(out, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise NoiseawareValueError(
            f"OpenDP {what}: value + noise overflowed float64; refusing to return a release whose law differs "
            "from the modelled one. Keep |value| <= 2**1000 and the noise scale within the mechanism's bound."
        )
    return arr


def _add_noise(values: np.ndarray, measure: Any, what: str, *, integer: bool) -> np.ndarray:
    """``values`` plus the noise of OpenDP's measurement ``measure``, in their shape, guarded.

    Integer outputs go through :func:`_unsaturated`, real ones through :func:`_finite`.
    """
    if integer:
        return _unsaturated(measure([int(x) for x in np.ravel(values)]), what).reshape(np.shape(values))
    return _finite(measure([float(x) for x in np.ravel(values)]), what).reshape(np.shape(values))


def discrete_laplace(values: np.ndarray, scale: float) -> np.ndarray:
    """Values + exact discrete Laplace(scale) noise, P(k) proportional to exp(-|k|/scale)."""
    return _add_noise(values, _int_laplace(float(scale)), "discrete Laplace", integer=True)


def discrete_gaussian(values: np.ndarray, sigma: float) -> np.ndarray:
    """Values + exact discrete Gaussian(sigma) noise, P(k) proportional to exp(-k^2/(2 sigma^2))."""
    return _add_noise(values, _int_gaussian(float(sigma)), "discrete Gaussian", integer=True)


def laplace(values: np.ndarray, scale: float) -> np.ndarray:
    """Values + OpenDP's (lattice-discretized) continuous Laplace(scale) noise."""
    return _add_noise(values, _float_laplace(float(scale)), "Laplace", integer=False)


def gaussian(values: np.ndarray, sigma: float) -> np.ndarray:
    """Values + OpenDP's (lattice-discretized) continuous Gaussian(sigma) noise."""
    return _add_noise(values, _float_gaussian(float(sigma)), "Gaussian", integer=False)


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
