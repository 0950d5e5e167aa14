"""regression.fit: the posterior recovers the truth, names its coefficients, and reads the release's noise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import noiseaware as na
from noiseaware import regression, results
from noiseaware._engine import from_groups
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError
from tests.regression.result_checks import check_host_result


def _release(method: str = "ssp", n: int = 3000, rho: float = 1.0, seed: int = 0):
    g = np.random.default_rng(seed)
    x = np.clip(g.normal(0.0, 0.4, size=(n, 2)), -1, 1)
    y = np.clip(0.1 + x @ [0.5, -0.3] + 0.2 * g.normal(size=n), -1, 1)
    return na.privatize(np.column_stack([x, y]), statistic="regression", response="x2", bound=1.0, rho=rho,
                        method=method, rng=g)


@pytest.fixture(scope="module")
def fitted() -> tuple[na.Release, Any]:
    # the release and settings of tests/test_arviz.py's regression fit: one compiled program serves both
    rel = _release()
    return rel, regression.fit(rel, chains=2, draws=300, warmup=300, seed=3, check_mixing=False)


def test_numpyro_fit_recovers_coefficients_and_names_them(fitted: tuple[na.Release, Any]) -> None:
    rel, res = fitted
    assert regression.coefficients(res) == ("(intercept)", "x0", "x1")
    lo, hi = results.interval(res, 0.999, var="beta")
    truth = np.array([0.1, 0.5, -0.3])
    assert np.all((lo < truth) & (truth < hi)), (lo, hi)
    assert 0.15 < float(np.median(results.draws(res, "sigma"))) < 0.25
    assert results.draws(res).shape == (600, 3)  # beta is the default variable
    assert res.attrs["noiseaware_noise"] == "gaussian" and res.attrs["noiseaware_backend"] == "numpyro"
    assert results.release(res).to_dict() == rel.to_dict()


def test_result_goes_through_arviz_and_a_netcdf_file(fitted: tuple[na.Release, Any], tmp_path: Path) -> None:
    _, res = fitted
    copy = check_host_result(res, "regression.fit", "beta", tmp_path)
    assert regression.coefficients(copy) == regression.coefficients(res)


def test_coefficients_reads_the_coordinates_and_refuses_other_results() -> None:
    fit = from_groups({"posterior": {"beta": np.zeros((1, 4, 2))}}, dims={"beta": ["coefficient"]},
                      coords={"coefficient": ["(intercept)", "age"]})
    assert regression.coefficients(fit) == ("(intercept)", "age")
    with pytest.raises(NoiseawareTypeError, match=r"must be the result of regression\.fit"):
        regression.coefficients(from_groups({"posterior": {"beta": np.zeros((1, 4, 2))}}))  # no coefficient dim
    with pytest.raises(NoiseawareTypeError, match=r"must be the result of regression\.fit"):
        regression.coefficients(np.zeros((4, 2)))


def test_a_release_read_beforehand_gives_the_same_draws_and_records_no_release(
    fitted: tuple[na.Release, Any],
) -> None:
    rel, res = fitted
    again = regression.fit(regression.read_regression(rel), chains=2, draws=300, warmup=300, seed=3,
                           check_mixing=False)  # the compiled program of `fitted`
    np.testing.assert_array_equal(results.draws(again, "beta"), results.draws(res, "beta"))
    assert results.release(again) is None and results.fit_kind(again) == "regression.fit"


@pytest.mark.slow  # PyMC compiles its model
def test_pymc_backend_finishes_pm_sample_own_result(tmp_path: Path) -> None:
    rel = _release()
    res = regression.fit(rel, backend="pymc", chains=2, draws=200, warmup=200, seed=3, check_mixing=False)
    assert regression.coefficients(res) == ("(intercept)", "x0", "x1") and res.attrs["noiseaware_backend"] == "pymc"
    lo, hi = results.interval(res, 0.999, var="beta")
    assert np.all((lo < [0.1, 0.5, -0.3]) & ([0.1, 0.5, -0.3] < hi)), (lo, hi)
    check_host_result(res, "regression.fit", "beta", tmp_path)


def test_bad_inputs_are_refused_before_sampling():
    rel = _release(n=200)
    with pytest.raises(NoiseawareTypeError, match="prior must be a RegressionPrior"):
        regression.fit(rel, prior={"beta_scale": 1.0}, chains=1, draws=10, warmup=10)
    with pytest.raises(NoiseawareValueError, match=r"RegressionPrior: sigma_scale must be a finite number > 0"):
        regression.RegressionPrior(sigma_scale=-1.0)  # refused when made, before any fit
    # a scale per coefficient of the wrong length is refused by the fit that knows the coefficients
    with pytest.raises(NoiseawareValueError, match=r"prior\.beta_scale must be a number or hold \d+ values"):
        regression.fit(rel, prior=regression.RegressionPrior(beta_scale=[1.0] * 9), chains=1, draws=10, warmup=10)
    with pytest.raises(NoiseawareValueError, match="backend"):
        regression.fit(rel, backend="stan", chains=1, draws=10, warmup=10)
    x = np.random.default_rng(0).uniform(-1, 1, size=(100, 2))
    cov = na.privatize(x, statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    with pytest.raises(NoiseawareValueError, match="'regression' release"):
        regression.fit(cov, chains=1, draws=10, warmup=10)
