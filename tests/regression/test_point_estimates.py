"""AdaSSP, PACE-GGM regression and OLS from statistics against hand and exact references."""

from __future__ import annotations

import math

import numpy as np
import pytest

import noiseaware as na
from noiseaware import covariance
from noiseaware.exceptions import NoiseawareValueError, PrivacyWarning
from noiseaware.regression import (
    RegressionStatistics,
    adassp,
    adassp_ridge,
    ols_from_statistics,
    pace_ggm_regression,
    read_regression,
)

_B = np.array([1.0, 1.0, 0.5, 3.0])  # intercept, x0, x1, y


def _data(n: int = 400, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 2)) * [1.0, 0.5]
    y = np.clip(0.4 + x @ [1.5, -2.0] + 0.3 * rng.normal(size=n), -3, 3)
    return np.column_stack([x, y])


def _ols(data: np.ndarray, intercept: bool = True) -> np.ndarray:
    x = np.column_stack([np.ones(len(data)), data[:, :-1]]) if intercept else data[:, :-1]
    return np.linalg.lstsq(x, data[:, -1], rcond=None)[0]


def _release(data: np.ndarray, rho: float, method: str, seed: int = 0, **kw: object) -> na.Release:
    return na.privatize(data, statistic="regression", response="x2", bounds=list(_B[1:]), rho=rho, method=method,
                        rng=np.random.default_rng(seed), **kw)


@pytest.mark.parametrize("intercept", [True, False])
def test_ols_from_exact_statistics_is_ols(intercept: bool) -> None:
    data = _data()
    z = np.column_stack([np.ones(len(data)), data]) if intercept else data
    b = _B if intercept else _B[1:]
    cols = (("(intercept)",) if intercept else ()) + ("x0", "x1", "x2")
    st = RegressionStatistics(n=len(data), columns=cols, response="x2", intercept=intercept, family="gaussian",
                              moments=z.T @ z, scale=np.zeros((len(b), len(b))), method="ssp", bounds=b)
    fit = ols_from_statistics(st)
    np.testing.assert_allclose(fit.coef, _ols(data, intercept), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fit.predict(data[:, :-1]), z[:, :-1] @ _ols(data, intercept), rtol=1e-10, atol=1e-12)
    # a ridge in scaled units: theta = (S_xx / (b b^T) + lam I)^-1 S_xy / (b b_y), beta = theta b_y / b
    s = z.T @ z / np.outer(b, b)
    pen = np.diag([0.0] * intercept + [1.0] * (len(b) - 1 - intercept))  # the intercept is not regularised
    theta = np.linalg.solve(s[:-1, :-1] + 7.0 * pen, s[:-1, -1])
    np.testing.assert_allclose(ols_from_statistics(st, ridge=7.0).coef, theta * b[-1] / b[:-1], rtol=1e-12)


def test_singular_statistics_and_bad_ridge_are_refused() -> None:
    st = RegressionStatistics(n=3, columns=("a", "b", "y"), response="y", intercept=False, family="gaussian",
                              moments=np.ones((3, 3)), scale=np.zeros((3, 3)), method="ssp", bounds=np.ones(3))
    with pytest.raises(NoiseawareValueError, match="invertible"):
        ols_from_statistics(st)
    with pytest.raises(NoiseawareValueError, match="ridge must be"):
        ols_from_statistics(st, ridge=-1.0)


def test_adassp_follows_its_formula_on_a_small_case() -> None:
    """lambda, lambda_min and the coefficients recomputed by hand from the release's fields."""
    data = _data(300)
    rel = _release(data, 0.05, "adassp", delta=1e-5)
    fit = adassp(rel)
    eig = rel.components[0]
    p, delta = 3, 1e-5
    low = max(0.0, float(eig.values[0]) - math.sqrt(math.log(6 / delta)) * eig.mechanism.sigma)
    lam = max(0.0, math.sqrt(p * math.log(2 * p * p / delta)) * rel.mechanism.sigma - low)
    assert fit.lambda_min == pytest.approx(low, rel=1e-12) and fit.ridge == pytest.approx(lam, rel=1e-12)
    assert lam > 0  # the small budget makes the regularisation act
    st = read_regression(rel)
    s = np.asarray(st.moments) / np.outer(_B, _B)
    theta = np.linalg.solve(s[:-1, :-1] + lam * np.diag([0.0, 1.0, 1.0]), s[:-1, -1])
    np.testing.assert_allclose(fit.coef, theta * _B[-1] / _B[:-1], rtol=1e-10)
    # a version that regularises in the data's units instead gives another answer (the check can fail)
    m = np.asarray(st.moments)
    wrong = np.linalg.solve(m[:-1, :-1] + lam * np.diag([0.0, 1.0, 1.0]), m[:-1, -1])
    assert not np.allclose(fit.coef, wrong, rtol=1e-3)
    # and one that also shrinks the intercept
    shrunk = np.linalg.solve(s[:-1, :-1] + lam * np.eye(3), s[:-1, -1]) * _B[-1] / _B[:-1]
    assert not np.allclose(fit.coef, shrunk, rtol=1e-3)
    # and the sigmas swapped in the formula give another lambda
    assert adassp_ridge(float(eig.values[0]), rel.mechanism.sigma, eig.mechanism.sigma, p, delta)[0] != lam


def test_adassp_and_ssp_tend_to_ols_as_rho_grows() -> None:
    data = _data()
    with pytest.warns(PrivacyWarning):
        rel = _release(data, 1e9, "adassp")
    fit = adassp(rel)
    assert fit.ridge == 0.0  # lambda_min of the design is far above the threshold
    np.testing.assert_allclose(fit.coef, _ols(data), atol=1e-3)
    np.testing.assert_allclose(ols_from_statistics(rel).coef, _ols(data), atol=1e-3)
    with pytest.warns(PrivacyWarning):
        ssp = _release(data, 1e9, "ssp", intercept=False)
    np.testing.assert_allclose(ols_from_statistics(ssp).coef, _ols(data, False), atol=1e-3)


def test_pace_ggm_regression_uses_the_reconstruction_and_adassps_rule() -> None:
    data = _data(500)
    rel = _release(data, 0.5, "pace_ggm")
    fit = pace_ggm_regression(rel)
    n = len(data)
    s = n * covariance.reconstruct(rel.components[0])
    s[0, 0] = n
    np.testing.assert_allclose(fit.moments, s * np.outer(_B, _B), rtol=1e-10)
    lam, low = adassp_ridge(float(rel.values[0]), rel.mechanism.sigma, 4 / math.sqrt(2 * rel.metadata["rho"] * 2 / 3),
                            3, 1e-6)
    assert fit.ridge == pytest.approx(lam, rel=1e-9) and fit.lambda_min == pytest.approx(low, rel=1e-12)
    theta = np.linalg.solve(s[:-1, :-1] + lam * np.diag([0.0, 1.0, 1.0]), s[:-1, -1])
    np.testing.assert_allclose(fit.coef, theta * _B[-1] / _B[:-1], rtol=1e-8)


def test_pace_ggm_regression_is_close_to_ols_at_a_large_budget() -> None:
    data = _data(2000)
    with pytest.warns(PrivacyWarning):
        rel = _release(data, 1e4, "pace_ggm")
    fit = pace_ggm_regression(rel)
    assert fit.ridge == 0.0
    np.testing.assert_allclose(fit.coef, _ols(data), atol=0.02)


def test_estimators_refuse_the_wrong_release() -> None:
    rel = _release(_data(), 1.0, "ssp")
    with pytest.raises(NoiseawareValueError, match="method='adassp'"):
        adassp(rel)
    with pytest.raises(NoiseawareValueError, match="method='pace_ggm'"):
        pace_ggm_regression(rel)
    with pytest.raises(NoiseawareValueError, match=r"x must be a finite \(m, 2\)"):
        ols_from_statistics(rel).predict(np.ones((3, 3)))
