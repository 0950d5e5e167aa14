"""ArviZ's default calls on a regression fit run clean (warnings as errors), and model comparison refuses.

The posterior holds only what varies (no constant Cholesky entries: they gave NaN R-hat and a
RuntimeWarning in ``az.summary``, and a constant has no density to plot); there is no pointwise
log-likelihood (the release is one vector of correlated statistics), so ``az.loo`` has nothing to leave
out and says so instead of returning an elpd.
"""

from __future__ import annotations

import warnings
from typing import Any

import arviz as az
import numpy as np
import pytest

from noiseaware import regression
from noiseaware._engine import group, has_group
from tests.regression.test_fit import _release

ARVIZ_1 = int(az.__version__.split(".")[0]) >= 1


def _clean_calls(fit: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # ArviZ 0.23's trace plot calls a matplotlib helper deprecated in matplotlib 3.11 (ArviZ's issue)
            warnings.filterwarnings("ignore", ".*alias_mapping to normalize_kwargs", DeprecationWarning)
            table = az.summary(fit)
            assert np.all(np.isfinite(table["r_hat"].to_numpy(dtype=float))), table
            az.plot_trace(fit)
            (az.plot_dist if ARVIZ_1 else az.plot_posterior)(fit)
    finally:
        plt.close("all")


def _check_posterior(fit: Any, laplace: bool = False) -> None:
    post = group(fit, "posterior")
    want = {"beta", "sigma", "mu_x", "sd_x", "corr_x", "cov_x"} | ({"stats_w"} if laplace else set())
    assert set(post.data_vars) == want
    assert list(post["corr_x"].coords["covariate_pair"].values) == ["x1, x0"]
    assert list(post["mu_x"].coords["covariate"].values) == ["x0", "x1"]
    for name in post.data_vars:  # nothing constant across the draws
        x = np.asarray(post[name]).reshape(post.sizes["chain"] * post.sizes["draw"], -1)
        assert np.all(np.ptp(x, axis=0) > 0), name
    # sd_x and corr_x are read off cov_x
    cov = np.asarray(post["cov_x"])
    np.testing.assert_allclose(np.asarray(post["sd_x"]) ** 2, np.diagonal(cov, axis1=-2, axis2=-1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(post["corr_x"])[..., 0],
                               cov[..., 1, 0] / np.sqrt(cov[..., 0, 0] * cov[..., 1, 1]), rtol=1e-12)


def _check_no_loo(fit: Any) -> None:
    assert not has_group(fit, "log_likelihood")
    assert fit.attrs["noiseaware_log_likelihood"] == regression._fit.NO_POINTWISE
    with pytest.raises(TypeError, match="log likelihood not found"):
        az.loo(fit)


def test_numpyro_fit_runs_arviz_clean_and_has_no_pointwise_terms() -> None:
    # the release and settings of tests/regression/test_fit.py's fit: one compiled program serves both
    fit = regression.fit(_release(), chains=2, draws=300, warmup=300, seed=3, check_mixing=False)
    _check_posterior(fit)
    _clean_calls(fit)
    _check_no_loo(fit)


@pytest.mark.slow  # PyMC compiles its model (about a minute on 2 cores)
def test_pymc_fit_stores_the_same_variables_and_runs_arviz_clean() -> None:
    fit = regression.fit(_release(), backend="pymc", chains=2, draws=200, warmup=200, seed=3, check_mixing=False)
    _check_posterior(fit)
    _clean_calls(fit)
    _check_no_loo(fit)
