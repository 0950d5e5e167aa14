"""Messages raised on the analyst's side name the argument and a remedy that applies there.

A NaN or inf in an analyst's input (estimates to combine, a null value, a release's scale) is not data
to impute before privatizing: the shared validator states the remedy of the place it is raised. The
MixingWarning names a 2-D entry by its full index and takes its advice from the fit's sampler block.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from noiseaware import _validation as v
from noiseaware._engine import MixingBlock, check_mixing
from noiseaware.copula import combine_synthetic
from noiseaware.exceptions import MixingWarning, NoiseawareValueError
from noiseaware.results import from_groups

CURATOR = "before privatizing"


def test_combine_synthetic_names_the_estimates_and_the_analysis_not_privatizing() -> None:
    with pytest.raises(NoiseawareValueError, match=r"combine_synthetic: estimates must not contain NaN") as err:
        combine_synthetic([1.0, np.nan, 0.8], [0.01, 0.01, 0.01])
    assert CURATOR not in str(err.value) and "check the analysis" in str(err.value)
    with pytest.raises(NoiseawareValueError, match=r"combine_synthetic: variances must not contain NaN") as err:
        combine_synthetic([1.0, 1.1, 0.8], [0.01, np.inf, 0.01])
    assert CURATOR not in str(err.value) and "(co)variance" in str(err.value)


def test_wald_test_names_the_null_and_its_remedy() -> None:
    res = combine_synthetic([[1.0, 2.0], [1.2, 1.7], [0.8, 2.2]], [[[0.01, 0.0], [0.0, 0.02]]] * 3)
    with pytest.raises(NoiseawareValueError, match=r"wald_test: null must not contain NaN or inf") as err:
        res.wald_test([np.nan, 2.0])
    assert CURATOR not in str(err.value) and "hypothesised value Q_0" in str(err.value)


def test_regression_likelihood_names_the_scale_and_the_release() -> None:
    from noiseaware.numpyro import NoisySufficientStatistics

    with pytest.raises(NoiseawareValueError, match=r"NoisySufficientStatistics: scale must not contain NaN") as err:
        NoisySufficientStatistics(np.array([0.5]), 1.0, np.zeros(1), np.eye(1), n=10,
                                  scale=np.array([[0.0, np.nan], [np.nan, 1.0]]))
    assert CURATOR not in str(err.value) and "RegressionStatistics.scale" in str(err.value)


def test_the_curators_remedy_stays_the_default_for_data() -> None:
    with pytest.raises(NoiseawareValueError, match=r"f: data must not contain NaN .* Impute or drop them before"):
        with v.owner_scope("f"):
            v.finite_array("data", [1.0, np.nan])
    with pytest.raises(NoiseawareValueError, match=r"f: x must not contain NaN or inf; got 1 non-finite value\(s\)\.$"):
        with v.owner_scope("f"):
            v.finite_array("x", [np.inf], remedy=None)


def _stuck(shape: tuple[int, ...]) -> np.ndarray:
    return np.cumsum(np.random.default_rng(0).normal(size=(2, 300, *shape)), axis=1)


def test_mixing_warning_gives_a_2d_entry_its_full_index() -> None:
    idata = from_groups({"posterior": {"counts": _stuck((2, 3))}})
    problems = check_mixing(idata, warn=False)
    assert problems[0].startswith("counts[0, 0]: bulk ESS") and problems[4].startswith("counts[1, 1]: bulk ESS")
    labelled = from_groups({"posterior": {"counts": _stuck((2, 3))}}, dims={"counts": ["unit", "cell"]},
                           coords={"unit": ["u0", "u1"], "cell": ["a", "b", "c"]})
    assert check_mixing(labelled, warn=False)[5].startswith("counts[1, 2] (unit u1, cell c): bulk ESS")


def test_mixing_advice_comes_from_the_sampler_block() -> None:
    from noiseaware.hierarchy._fit import _BLOCK as HIERARCHY
    from noiseaware.regression._fit import _BLOCK as REGRESSION

    idata = from_groups({"posterior": {"counts": _stuck((2,))}})
    texts = {}
    for name, block in (("hierarchy.fit", HIERARCHY), ("regression.fit", REGRESSION)):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            check_mixing(idata, owner=name, block=block)
        texts[name] = str(next(w.message for w in rec if issubclass(w.category, MixingWarning)))
    assert "correlation near" not in texts["hierarchy.fit"]  # the hierarchy has no correlation parameter
    assert "a residual sd sigma near 0" in texts["regression.fit"]
    assert MixingBlock.nuts("NUTS on R", boundary="a correlation near +-1").advice.endswith(
        "against a boundary of its support: a correlation near +-1."
    )
