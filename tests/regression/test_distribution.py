"""NoisySufficientStatistics with Laplace noise: the same latent site and joint density in both PPLs, against SciPy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import noiseaware as na
from noiseaware._core import get_backend
from noiseaware._core._regression import RegressionParameters, StatisticsLayout, latent_statistics
from noiseaware.exceptions import NoiseawareValueError
from noiseaware.regression import read_regression

BETA = np.array([0.1, 0.5])
SIGMA, MU_X, COV_X = 0.2, np.array([0.05]), np.array([[0.16]])


@pytest.fixture(scope="module")
def laplace_release():
    g = np.random.default_rng(4)
    x = np.clip(g.normal(0, 0.4, size=(500, 1)), -1, 1)
    y = np.clip(0.1 + 0.5 * x[:, 0] + 0.2 * g.normal(size=500), -1, 1)
    return na.privatize(np.column_stack([x, y]), statistic="regression", response="x1", bound=1.0, epsilon=2.0, rng=g)


@pytest.mark.slow  # make test-full: both PPLs' models of the Laplace route compiled (22 s)
def test_laplace_latent_site_and_joint_density_in_both_ppls(laplace_release):
    import pymc as pm
    from numpyro.infer.util import log_density

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    st = read_regression(laplace_release)
    assert st.family == "laplace"
    rows = np.array([1, 1, 2, 2, 2])
    cols = np.array([0, 1, 0, 1, 2])
    obs, b = np.asarray(st.moments)[rows, cols], np.asarray(st.scale)[rows, cols]
    w = np.array([0.3, -0.2, 0.5, 0.1, -0.4])
    params, layout = RegressionParameters(BETA, SIGMA, MU_X, COV_X), StatisticsLayout(float(st.n), rows, cols, True)
    t = latent_statistics(get_backend("numpy"), w, params, layout)
    want = stats.norm.logpdf(w).sum() + stats.laplace(t, b).logpdf(obs).sum()

    def model():
        nan.NoisySufficientStatistics.from_release("y", laplace_release, BETA, SIGMA, MU_X, COV_X)

    lp_np, tr = log_density(model, (), {}, {"y_w": w})
    assert sorted(k for k, s in tr.items() if s["type"] == "sample" and not s["is_observed"]) == ["y_w"]
    with pm.Model() as m:
        nap.NoisySufficientStatistics.from_release("y", laplace_release, BETA, SIGMA, MU_X, COV_X)
    assert [v.name for v in m.free_RVs] == ["y_w"]
    lp_pm = float(m.compile_logp()({"y_w": w}))
    assert float(lp_np) == pytest.approx(want, rel=1e-10)
    assert lp_pm == pytest.approx(want, rel=1e-10)
    # without its latent the NumPyro law has no density, and says so
    d = nan.NoisySufficientStatistics(BETA, SIGMA, MU_X, COV_X, n=st.n, scale=st.scale, intercept=True,
                                      family="laplace")
    with pytest.raises(NoiseawareValueError, match="latent="):
        d.log_prob(obs)


def test_bad_data_are_refused_in_both_ppls():
    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    good = np.full((3, 3), 2.0)
    good[0, 0] = 0.0
    for cls in (nan.NoisySufficientStatistics, nap.NoisySufficientStatistics.dist):
        with pytest.raises(NoiseawareValueError, match=r"scale\[0, 0\] must be 0"):
            cls(BETA, SIGMA, MU_X, COV_X, n=100, scale=np.full((3, 3), 2.0))
        with pytest.raises(NoiseawareValueError, match="family"):
            cls(BETA, SIGMA, MU_X, COV_X, n=100, scale=good, intercept=True, family="cauchy")
        with pytest.raises(NoiseawareValueError, match="symmetric"):
            cls(BETA, SIGMA, MU_X, COV_X, n=100, scale=np.triu(good))


def test_parameters_positional_and_the_release_data_keyword_only():
    """``beta, sigma, mu_x, cov_x`` positional, the release's data (``n=``, ``scale=``, ...) keyword-only, both PPLs."""
    import inspect

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    data = ["n", "scale", "intercept", "family", "latent", "shift"]
    for f in (nan.NoisySufficientStatistics, nap.NoisySufficientStatistics, nap.NoisySufficientStatistics.dist):
        ps = inspect.signature(f).parameters.values()
        positional = [p.name for p in ps if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert positional[-4:] == ["beta", "sigma", "mu_x", "cov_x"] and len(positional) <= 5, (f, positional)
        assert [p.name for p in ps if p.kind is p.KEYWORD_ONLY][:6] == data, f
    scale = np.full((3, 3), 2.0)
    scale[0, 0] = 0.0
    for cls in (nan.NoisySufficientStatistics, nap.NoisySufficientStatistics.dist):
        with pytest.raises(TypeError):
            cls(BETA, SIGMA, MU_X, COV_X, 100, scale)
