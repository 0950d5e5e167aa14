"""regression.fit: the posterior recovers the truth, names its coefficients, and reads the release's noise."""

from __future__ import annotations

import numpy as np
import pytest

import noiseaware as na
from noiseaware import regression
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError


def _release(method: str = "ssp", n: int = 3000, rho: float = 1.0, seed: int = 0):
    g = np.random.default_rng(seed)
    x = np.clip(g.normal(0.0, 0.4, size=(n, 2)), -1, 1)
    y = np.clip(0.1 + x @ [0.5, -0.3] + 0.2 * g.normal(size=n), -1, 1)
    return na.privatize(np.column_stack([x, y]), statistic="regression", response="x2", bound=1.0, rho=rho,
                        method=method, rng=g)


def test_numpyro_fit_recovers_coefficients_and_names_them():
    res = regression.fit(_release(), chains=2, draws=300, warmup=300, seed=3, check_mixing=False)
    assert res.coefficients == ("(intercept)", "x0", "x1")
    lo, hi = res.interval(0.999, var="beta")
    truth = np.array([0.1, 0.5, -0.3])
    assert np.all((lo < truth) & (truth < hi)), (lo, hi)
    assert 0.15 < float(np.median(res.sigma)) < 0.25
    assert res.idata.attrs["noiseaware_noise"] == "gaussian"


def test_bad_inputs_are_refused_before_sampling():
    rel = _release(n=200)
    with pytest.raises(NoiseawareTypeError, match="prior must be a RegressionPrior"):
        regression.fit(rel, prior={"beta_scale": 1.0}, chains=1, draws=10, warmup=10)
    with pytest.raises(NoiseawareValueError, match=r"prior\.sigma_scale"):
        regression.fit(rel, prior=regression.RegressionPrior(sigma_scale=-1.0), chains=1, draws=10, warmup=10)
    with pytest.raises(NoiseawareValueError, match="backend"):
        regression.fit(rel, backend="stan", chains=1, draws=10, warmup=10)
    x = np.random.default_rng(0).uniform(-1, 1, size=(100, 2))
    cov = na.privatize(x, statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    with pytest.raises(NoiseawareValueError, match="'regression' release"):
        regression.fit(cov, chains=1, draws=10, warmup=10)
