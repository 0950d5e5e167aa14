"""privatize(statistic='regression'): the reader's noise law, the public intercept entry, bad input, secure default."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import noiseaware as na
from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError
from noiseaware.regression import RegressionStatistics, read_regression


def _frame(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 2))
    y = np.clip(0.3 + x @ [1.0, -0.5] + 0.2 * rng.normal(size=n), -2, 2)
    return pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": y})


_BOUNDS = {"a": 1.0, "b": 1.0, "y": 2.0}


def _z(df: pd.DataFrame, intercept: bool = True) -> np.ndarray:
    z = df[["a", "b", "y"]].to_numpy()
    return np.column_stack([np.ones(len(df)), z]) if intercept else z


@pytest.mark.parametrize("family", ["gaussian", "laplace"])
def test_reader_gives_the_noise_law_of_every_entry(family: str) -> None:
    """(moments - Z^T Z) / scale is N(0, 1) (Laplace(0, 1)) over 300 releases; a reader without the bounds fails."""
    df = _frame()
    truth = _z(df).T @ _z(df)
    budget = {"rho": 0.5} if family == "gaussian" else {"epsilon": 2.0}
    rng = np.random.default_rng(11)
    low = np.tril_indices(4)
    keep = ~((low[0] == 0) & (low[1] == 0))
    res, wrong = [], []
    for _ in range(300):
        rel = na.privatize(df, statistic="regression", response="y", bounds=_BOUNDS, rng=rng, **budget)
        st = read_regression(rel)
        assert st.family == family and st.moments[0, 0] == len(df) and st.scale[0, 0] == 0.0
        assert np.array_equal(st.moments, st.moments.T) and np.array_equal(st.scale, st.scale.T)
        err = (st.moments - truth)[low][keep]
        res.append(err / st.scale[low][keep])
        per = float(rel.mechanism.sigma if family == "gaussian" else rel.mechanism.scale)
        wrong.append(err / per)  # scale not multiplied by b_j b_l
    law = stats.norm if family == "gaussian" else stats.laplace
    assert stats.kstest(np.concatenate(res), law.cdf).pvalue > 1e-4
    assert stats.kstest(np.concatenate(wrong), law.cdf).pvalue < 1e-4


def test_statistics_and_labels_follow_the_columns() -> None:
    df = _frame()
    with pytest.warns(na.exceptions.PrivacyWarning, match="little protection"):
        rel = na.privatize(df, statistic="regression", response="y", predictors=["b", "a"], bound=2.0, rho=1e6,
                           intercept=False, rng=np.random.default_rng(0))
    st = read_regression(rel)
    assert st.columns == ("b", "a", "y") and st.predictors == ("b", "a") and not st.intercept
    z = df[["b", "a", "y"]].to_numpy()
    np.testing.assert_allclose(st.moments, z.T @ z, atol=10 * float(st.scale.max()))
    assert st.method == "ssp" and list(st.bounds) == [2.0, 2.0, 2.0]


def test_pace_ggm_release_is_refused_by_the_reader_naming_the_methods_that_work() -> None:
    rel = na.privatize(_frame(), statistic="regression", response="y", bounds=_BOUNDS, rho=1.0, method="pace_ggm",
                       rng=np.random.default_rng(0))
    with pytest.raises(NoiseawareValueError, match="method='ssp' or method='adassp'"):
        read_regression(rel)
    with pytest.raises(NoiseawareValueError, match="'regression' release"):
        read_regression(na.privatize(_z(_frame())[:, 1:], statistic="second_moment", bound=2.0, rho=1.0,
                                     rng=np.random.default_rng(0)))


@pytest.mark.parametrize("method", ["ssp", "adassp", "pace_ggm"])
def test_secure_by_default_and_charged_once(method: str) -> None:
    budget = PrivacyBudget(rho=1.0)
    rel = na.privatize(_frame(60), statistic="regression", response="y", bounds=_BOUNDS, rho=0.6, method=method,
                       budget=budget)
    assert rel.secure and all(c.secure for c in rel.components)
    assert rel.guarantee.rho <= 0.6 and len(budget.ledger) == 1
    assert na.Release.from_json(rel.to_json()) == rel


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"response": "z"}, NoiseawareValueError, "response must name"),
        ({"response": None}, NoiseawareValueError, "response must name"),
        ({"predictors": ["a", "y"]}, NoiseawareValueError, "predictors must list"),
        ({"predictors": "a"}, NoiseawareTypeError, "predictors must be a list"),
        ({"bound": 2.0}, NoiseawareValueError, "one of bound"),
        ({"bounds": {"a": 1.0, "y": 2.0}}, NoiseawareValueError, "bounds must give"),
        ({"bounds": {"a": 1.0, "b": 0.5, "y": 2.0}}, NoiseawareValueError, r"\|b\| <= 0.5"),
        ({"bounds": [1.0, 1.0, -2.0]}, NoiseawareValueError, "bounds"),
        ({"intercept": 1}, NoiseawareTypeError, "intercept must be True or False"),
        ({"method": "ols"}, NoiseawareValueError, "method"),
        ({"alpha": 0.3}, NoiseawareTypeError, "not used by method='ssp'"),
        ({"delta": 1e-6}, NoiseawareTypeError, "not used by method='ssp'"),
        ({"method": "pace_ggm", "alpha": 1.5}, NoiseawareValueError, "alpha"),
        ({"method": "pace_ggm", "T": 0}, NoiseawareValueError, "T"),
        ({"method": "adassp", "delta": 1.0}, NoiseawareValueError, "delta"),
        ({"center": True}, NoiseawareTypeError, "unexpected option"),
    ],
)
def test_bad_options_are_refused_before_any_budget(change: dict, error: type, match: str) -> None:
    budget = PrivacyBudget(rho=1.0)
    kw = {"response": "y", "bounds": _BOUNDS, **change}
    with pytest.raises(error, match=match):
        na.privatize(_frame(), statistic="regression", rho=0.5, budget=budget, rng=np.random.default_rng(0), **kw)
    assert len(budget.ledger) == 0


def test_adaptive_methods_need_rho() -> None:
    with pytest.raises(NoiseawareValueError, match="mechanism"):
        na.privatize(_frame(), statistic="regression", response="y", bounds=_BOUNDS, epsilon=1.0, method="adassp")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_and_inf_are_refused(bad: float) -> None:
    df = _frame()
    df.loc[3, "a"] = bad
    with pytest.raises(NoiseawareValueError, match=r"finite|NaN"):
        na.privatize(df, statistic="regression", response="y", bounds=_BOUNDS, rho=1.0)


def test_constant_predictor_is_refused_with_an_intercept_and_is_the_intercept_without() -> None:
    df = _frame()
    df["c"] = 0.5
    with pytest.raises(NoiseawareValueError, match=r"constant column\(s\) \['c'\]"):
        na.privatize(df, statistic="regression", response="y", bound=2.0, rho=1.0)
    rel = na.privatize(df, statistic="regression", response="y", predictors=["c", "a"], bound=2.0, rho=1.0,
                       intercept=False, rng=np.random.default_rng(0))
    assert read_regression(rel).columns == ("c", "a", "y")


def test_intercept_name_is_reserved_and_clip_is_recorded() -> None:
    df = _frame().rename(columns={"a": "(intercept)"})
    with pytest.raises(NoiseawareValueError, match="must not be named"):
        na.privatize(df, statistic="regression", response="y", bound=2.0, rho=1.0)
    rel = na.privatize(_frame(), statistic="regression", response="y", bound=0.5, clip=True, rho=1.0,
                       rng=np.random.default_rng(0))
    assert rel.metadata["clip"] is True


def test_statistics_record_is_frozen() -> None:
    st = read_regression(na.privatize(_frame(), statistic="regression", response="y", bounds=_BOUNDS, rho=1.0,
                                      rng=np.random.default_rng(0)))
    assert isinstance(st, RegressionStatistics)
    with pytest.raises(ValueError, match="read-only"):
        st.moments[0, 1] = 0.0
