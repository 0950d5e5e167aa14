"""privatize(): statistics computed right, budgets split right, bad input refused clearly."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware._privatize import median_split_indicators
from noiseaware.exceptions import PrivacyWarning, UtilityWarning


def _brute_median_pairs(x: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Direct definition: row i is 'high' in column j if fewer than floor(n/2) rows beat it."""
    n, p = x.shape
    high = np.zeros((n, p), dtype=int)
    for j in range(p):
        for i in range(n):
            beats = sum((x[k, j], keys[k, j]) > (x[i, j], keys[i, j]) for k in range(n))
            high[i, j] = beats < math.ceil(n / 2)
    return np.array([int((high[:, a] * high[:, b]).sum()) for a in range(p) for b in range(a + 1, p)])


@pytest.mark.parametrize("n", [2, 7, 20, 21])
def test_median_pairs_counts_match_definition_with_ties(n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.integers(0, 3, size=(n, 4)).astype(float)  # many ties
    keys = rng.normal(size=(n, 4))
    a = median_split_indicators(x, keys)
    assert np.all(a.sum(axis=0) == math.ceil(n / 2))  # exactly ceil(n/2) high rows per column
    iu, ju = np.triu_indices(4, 1)
    np.testing.assert_array_equal((a.T @ a)[iu, ju], _brute_median_pairs(x, keys))


def test_median_pairs_release_record() -> None:
    x = np.random.default_rng(3).normal(size=(101, 5))
    rel = na.privatize(x, statistic="median_pairs", epsilon=2.0, columns=list("abcde"))
    assert rel.secure and rel.statistic == "median_pairs" and rel.n == 101
    assert rel.labels[:5] == (("a", "b"), ("a", "c"), ("a", "d"), ("a", "e"), ("b", "c"))
    assert rel.mechanism.family == "geometric" and rel.mechanism.sensitivity == 1
    assert rel.mechanism.alpha == pytest.approx(math.exp(-2.0 / 10))  # epsilon split over 10 pairs
    assert rel.guarantee.epsilon == pytest.approx(2.0, rel=1e-15)
    assert rel.metadata["high_count"] == 51 and list(rel.metadata["bounds"]) == [0, 51]
    assert rel.values.dtype == np.int64


def test_median_pairs_noise_is_centred_on_true_counts() -> None:
    """Noisy minus true counts follow the geometric law (simulation mode, many pairs)."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(60, 30))
    keys = rng.normal(size=x.shape)
    truth = (lambda a: (a.T @ a)[np.triu_indices(30, 1)])(median_split_indicators(x, keys))
    with pytest.warns(PrivacyWarning):  # 435 pairs at epsilon 0.5 each
        rel = na.privatize(x, statistic="median_pairs", epsilon=435.0 / 2, tie_keys=keys, rng=rng)
    noise = rel.values - truth
    alpha = rel.mechanism.alpha
    var = 2 * alpha / (1 - alpha) ** 2
    assert abs(noise.mean()) < 5 * math.sqrt(var / noise.size)
    assert abs(noise.var() / var - 1) < 0.4


@pytest.mark.parametrize("mech,family", [("tgm", "tgm"), ("btgm", "btgm"), ("rgm", "rgm")])
def test_range_preserving_releases_stay_in_bounds(mech: str, family: str) -> None:
    x = np.random.default_rng(5).normal(size=(31, 6))
    with pytest.warns(UtilityWarning, match="noise standard deviation"):  # 15 pairs at epsilon 0.05, n = 31
        rel = na.privatize(x, statistic="median_pairs", epsilon=0.05, mechanism=mech, rng=np.random.default_rng(0))
    assert rel.mechanism.family == family
    assert rel.values.min() >= 0 and rel.values.max() <= 16
    assert (rel.mechanism.lower, rel.mechanism.upper) == (0, 16)


def test_dataframe_input_and_names() -> None:
    df = pd.DataFrame({"age": [30, 41, 52, 23, 35], "income": [1.0, 2.0, 2.5, 0.5, 3.0], "k": [1, 2, 3, 4, 5]})
    with pytest.warns(UtilityWarning, match="ceil"):  # n = 5: noise sd 4.2 > 3
        rel = na.privatize(df, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(0))
    assert rel.labels == (("age", "income"), ("age", "k"), ("income", "k"))


def test_counts_and_vector_statistics() -> None:
    table = pd.DataFrame([[46, 118], [109, 127]], index=["Female", "Male"], columns=["Admitted", "Rejected"])
    rel = na.privatize(table, statistic="counts", sigma=6.25, sensitivity=2**0.5, n=400)
    assert rel.labels[1] == ("Female", "Rejected") and rel.shape == (2, 2) and rel.n == 400
    assert rel.mechanism.family == "discrete_gaussian" and rel.guarantee.rho == pytest.approx(0.0256)
    rel = na.privatize([5, 0, 2], statistic="counts", epsilon=1.0, sensitivity=1)
    assert rel.mechanism.family == "geometric" and rel.composition == "joint"
    rel = na.privatize(pd.Series([1.0, 2.0], index=["m", "s"]), statistic="vector", rho=0.5, sensitivity=1.0)
    assert rel.mechanism.family == "gaussian" and rel.labels == (("m",), ("s",))


def test_randomized_response_budget_split_over_answers() -> None:
    codes = np.array([[0, 1], [1, 1], [0, 0]])
    rel = na.privatize(codes, statistic="randomized_response", epsilon=2 * math.log(3), categories=2)
    assert rel.mechanism.p == pytest.approx(0.75)  # two fair coin flips per answer (seed 001)
    assert rel.guarantee.epsilon == pytest.approx(2 * math.log(3))


def test_simulation_mode_is_reproducible_and_marked() -> None:
    x = np.random.default_rng(6).normal(size=(50, 3))
    a = na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(9))
    b = na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(9))
    assert a == b and not a.secure and "simulation" in a.metadata


def test_epsilon_above_five_warns() -> None:
    x = np.random.default_rng(6).normal(size=(10, 2))
    with pytest.warns(PrivacyWarning, match="epsilon=6.0 is above 5"):
        na.privatize(x, statistic="median_pairs", epsilon=6.0, rng=np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        na.privatize(x, statistic="median_pairs", epsilon=5.0, rng=np.random.default_rng(0))


X = np.random.default_rng(8).normal(size=(10, 3))


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (
            dict(data=X, statistic="median_pairs", epsilon=0.0),
            ValueError,
            "epsilon must be a finite number > 0; got epsilon=0.0",
        ),
        (dict(data=X, statistic="median_pairs", epsilon=-1), ValueError, "epsilon must be a finite number > 0"),
        (dict(data=X, statistic="median_pairs", epsilon=float("nan")), ValueError, "got epsilon=nan"),
        (dict(data=X, statistic="median_pairs", epsilon=float("inf")), ValueError, "got epsilon=inf"),
        (dict(data=X, statistic="median_pairs", epsilon="1"), TypeError, "epsilon must be a real number"),
        (dict(data=X, statistic="median_pairs", epsilon=True), TypeError, "epsilon must be a real number"),
        (dict(data=X, statistic="counts", rho=-0.5, sensitivity=1), ValueError, "rho must be a finite number > 0"),
        (dict(data=X, statistic="median_pairs", epsilon=1, rho=1), ValueError, "not both"),
        (dict(data=X, statistic="median_pairs", rho=1.0), ValueError, "needs a pure-DP budget"),
        (dict(data=X, statistic="median_pairs"), ValueError, "needs a pure-DP budget"),
        (dict(data=X, statistic="nope", epsilon=1), ValueError, "statistic must be one of"),
        (
            dict(data=X, statistic="median_pairs", epsilon=1, mechanism="laplace"),
            ValueError,
            "mechanism must be one of",
        ),
        (dict(data=X, statistic="median_pairs", epsilon=1, rng=42), TypeError, "rng must be a numpy.random.Generator"),
        (dict(data=X, statistic="median_pairs", epsilon=1, bogus=1), TypeError, "unexpected option"),
        (
            dict(data=np.array([[1.0, np.nan], [2.0, 3.0]]), statistic="median_pairs", epsilon=1),
            ValueError,
            "NaN or inf",
        ),
        (
            dict(data=np.array([[1.0, np.inf], [2.0, 3.0]]), statistic="median_pairs", epsilon=1),
            ValueError,
            "NaN or inf",
        ),
        (dict(data=np.ones((1, 3)), statistic="median_pairs", epsilon=1), ValueError, "at least two rows"),
        (dict(data=np.ones((5, 1)), statistic="median_pairs", epsilon=1), ValueError, "at least two columns"),
        (dict(data=np.ones(5), statistic="median_pairs", epsilon=1), ValueError, "must be 2-D"),
        (
            dict(data=pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), statistic="median_pairs", epsilon=1),
            TypeError,
            r"non-numeric column\(s\) \['b'\]",
        ),
        (
            dict(data=np.array([["a", "b"], ["c", "d"]]), statistic="median_pairs", epsilon=1),
            TypeError,
            "must be numeric",
        ),
        (dict(data=X, statistic="median_pairs", epsilon=1, columns=["a"]), ValueError, "columns must name all 3"),
        (dict(data=X, statistic="median_pairs", epsilon=1, tie_keys=np.ones((2, 2))), ValueError, "tie_keys must have"),
        (dict(data=[3, -1], statistic="counts", epsilon=1, sensitivity=1), ValueError, "counts must be >= 0"),
        (dict(data=[3, 1.5], statistic="counts", epsilon=1, sensitivity=1), ValueError, "must hold integers"),
        (dict(data=[3, 1], statistic="counts", epsilon=1), ValueError, "state the sensitivity"),
        (
            dict(data=[3, 1], statistic="counts", epsilon=1, sensitivity=0),
            ValueError,
            "sensitivity must be an integer >= 1",
        ),
        (
            dict(data=[3, 1], statistic="counts", epsilon=1, sensitivity=1.5),
            TypeError,
            "sensitivity must be an integer",
        ),
        (
            dict(data=[3, 1], statistic="counts", epsilon=1, sensitivity=1, mechanism="discrete_gaussian"),
            ValueError,
            "zCDP",
        ),
        (
            dict(data=[3, 1], statistic="counts", epsilon=1, sensitivity=1, scale=2.0),
            ValueError,
            "exactly one of epsilon",
        ),
        (dict(data=[[1.0, 2.0]], statistic="vector", epsilon=1, sensitivity=1), ValueError, "1-D vector"),
        (dict(data=[1.0, np.nan], statistic="vector", epsilon=1, sensitivity=1), ValueError, "NaN or inf"),
        (
            dict(data=[1.0, 2.0], statistic="vector", epsilon=1, sensitivity=-2),
            ValueError,
            "sensitivity must be a finite number > 0",
        ),
        (dict(data=[[0, 3]], statistic="randomized_response", epsilon=1, categories=2), ValueError, "category codes"),
        (dict(data=[[0, 1]], statistic="randomized_response", epsilon=1), ValueError, "categories=k"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(kwargs, exc, match) -> None:
    data = kwargs.pop("data")
    with pytest.raises(exc, match=match):
        na.privatize(data, **kwargs)
