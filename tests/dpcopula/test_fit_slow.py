"""fit_dpcopula + synthesize(fit, ...): the NUTS fit of the median-pairs component (slow: JAX compile + NUTS)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware import copula, results


@pytest.mark.slow
def test_fit_dpcopula_end_to_end() -> None:
    rng = np.random.default_rng(0)
    z = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], size=3000)
    df = pd.DataFrame({"a": np.clip(np.round(50 + 15 * z[:, 0]), 0, 99).astype(np.int64), "b": z[:, 1].clip(-4, 4)})
    doms = {"a": range(100), "b": {"lower": -4.0, "upper": 4.0, "bins": 40}}
    rel = na.privatize(
        df, statistic="dpcopula", epsilon=2.0, correlation="median", domains=doms, rng=np.random.default_rng(1)
    )
    fit = copula.fit_dpcopula(rel, chains=2, draws=30, warmup=300, seed=3, check_mixing=False)  # draws per chain
    R, margins = copula.functional(fit, lambda r: r), copula.margin_draws(fit)
    assert results.draws(fit, "R").shape == (60, 1)  # the one pair
    assert R.shape == (60, 2, 2) and [m.shape for m in margins] == [(60, 100), (60, 40)]
    assert results.fit_kind(fit) == "copula.fit_dpcopula" and results.release(fit) == rel
    r = R[:, 0, 1]
    assert 0.45 < r.mean() < 0.75 and r.std() > 0.005
    copies = copula.synthesize(fit, 2000, draws=8, seed=4)
    assert len(copies) == 8 and all(str(c["a"].dtype) == "int64" for c in copies)
    slopes = [np.polyfit(c["a"], c["b"], 1)[0] for c in copies]
    assert np.std(slopes) > 0  # the copies differ: posterior uncertainty travels into them
    true_slope = np.polyfit(df["a"], df["b"], 1)[0]
    res = copula.combine_synthetic(slopes, [1e-8] * len(slopes))
    lo, hi = res.interval(0.99)
    assert lo < true_slope < hi
