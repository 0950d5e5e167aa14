"""copula.fit (NumPyro): one set of compiled programs per shape, reused for a new release without stale data."""

from __future__ import annotations

import numpy as np
import pytest

import noiseaware as na
from noiseaware.copula import _fit, fit
from noiseaware.datasets import demo_copula_data

pytest.importorskip("numpyro")

# The shape and settings of the ``fits`` fixture of tests/test_copula_fit.py (n = 400, p = 2, 2 chains,
# 1000 + 500 iterations): in the fast suite its programs are compiled once there and this module only
# samples (run alone, the first fit below compiles them, about 20 s on 2 loaded cores).
N, P = 400, 2
CFG = {"chains": 2, "draws": 1000, "warmup": 500, "check_mixing": False}


def _release(seed: int) -> na.Release:
    x, _, _ = demo_copula_data(seed=seed, n=N)
    return na.privatize(x[:, :P], statistic="median_pairs", epsilon=0.3, rng=np.random.default_rng(seed))


def _numbers() -> tuple[int, int, int]:
    return len(_fit._PROGRAMS), _fit._CACHE_INFO["misses"], _fit._CACHE_INFO["traces"]


def test_second_release_of_the_same_shape_compiles_nothing() -> None:
    a, b = _release(11), _release(12)
    assert a.n == b.n and not np.array_equal(a.values, b.values)  # same shape, other counts
    fa = fit(a, seed=4, **CFG)
    after_a = _numbers()
    fb = fit(b, seed=4, **CFG)
    # no new program, no cache miss, and the potential was not traced again (so nothing was compiled)
    assert _numbers() == after_a
    assert _fit._CACHE_INFO["hits"] >= 3  # the model, the dense program and the NUTS run
    # not stale: B's draws are B's -- another target than A's, the counts of B observed
    assert not np.allclose(fa.draws, fb.draws)
    np.testing.assert_array_equal(fb.idata["observed_data"]["pairs"].values, np.asarray(b.values, dtype=float))


def test_other_n_is_another_shape() -> None:
    """``n`` fixes the Fisher table (support and window width), so it is part of the key."""
    model_a = _fit._numpyro_model(_release(11), _fit.LKJPrior())
    x, _, _ = demo_copula_data(seed=13, n=N + 1)
    c = na.privatize(x[:, :P], statistic="median_pairs", epsilon=0.3, rng=np.random.default_rng(13))
    model_c = _fit._numpyro_model(c, _fit.LKJPrior())
    assert model_a.programs is not model_c.programs
    assert model_a.programs is _fit._numpyro_model(_release(12), _fit.LKJPrior()).programs
