"""Regression releases of ranges (lower, upper): the shift by public mid-points, and the data's units everywhere.

The release shifts each column by its range's mid-point and scales it by the half-width; every reader of the
posterior (point estimates, the likelihood in both PPLs, ``regression.fit``) answers in the data's units. The
references are least squares on the confidential data (with noise made negligible by a large rho) and the
likelihood of the shifted rows at the shifted parameters (an identity, to rounding).
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest

import noiseaware as na
from noiseaware import regression, results
from noiseaware._core import get_backend
from noiseaware._core._regression import (
    RegressionParameters,
    StatisticsLayout,
    centred_parameters,
    gaussian_statistics_logp,
    released_entries,
)
from noiseaware.exceptions import NoiseawareValueError, PrivacyWarning, ReleaseFormatError

RANGES = [(18.0, 90.0), (0.0, 10.0), (-5.0, 20.0)]  # age, income, response: none centred at 0
SYMMETRIC = [90.0, 10.0, 20.0]  # the symmetric bounds that cover the same ranges


def _data(n: int = 2000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(seed)
    age, income = g.uniform(18, 90, n), g.uniform(0, 10, n)
    y = np.clip(5.0 + 0.05 * age - 0.3 * income + g.normal(0.0, 1.0, n), -5, 20)
    data = np.column_stack([age, income, y])
    ols = np.linalg.lstsq(np.column_stack([np.ones(n), age, income]), y, rcond=None)[0]
    return data, ols


def _release(bounds: Any, rho: float, method: str = "ssp", seed: int = 1, **kw: Any) -> na.Release:
    data, _ = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # a large rho, to compare with least squares
        return na.privatize(data, statistic="regression", response="x2", bounds=bounds, rho=rho, method=method,
                            rng=np.random.default_rng(seed), **kw)


def test_ranges_are_shifted_by_their_mid_points_and_recorded() -> None:
    rel = _release(RANGES, 1.0)
    assert list(rel.metadata["bounds"]) == [1.0, 36.0, 5.0, 12.5] and list(rel.metadata["shift"]) == [0, 54, 5, 7.5]
    st = regression.read_regression(na.Release.from_dict(rel.to_dict()))
    np.testing.assert_array_equal(st.shift, [0.0, 54.0, 5.0, 7.5])
    # a single bound b is the range (-b, b): no shift; a mapping mixes both forms
    assert list(_release(SYMMETRIC, 1.0).metadata["shift"]) == [0.0] * 4
    mixed = _release({"x0": (18, 90), "x1": 10.0, "x2": (-5, 20)}, 1.0)
    assert list(mixed.metadata["shift"]) == [0.0, 54.0, 0.0, 7.5] and mixed.metadata["bounds"][2] == 10.0


@pytest.mark.parametrize(
    ("bounds", "kw", "match"),
    [
        ([(90, 18), (0, 10), (-5, 20)], {}, r"bounds\['x0'\] must be a range \(lower, upper\) with lower < upper"),
        ([(18, 90, 1), (0, 10), (-5, 20)], {}, r"bounds\['x0'\] must be a bound b > 0 .* or a range"),
        ([(18, np.inf), (0, 10), (-5, 20)], {}, r"bounds\['x0'\]\[1\] must be finite"),
        ([(18, 80), (0, 10), (-5, 20)], {}, r"x0 in \[18.0, 80.0\] .* Pass clip=True"),
        (RANGES, {"intercept": False}, r"bounds must be symmetric.*intercept=False.*symmetric bound 90.0"),
    ],
)
def test_bad_ranges_are_refused_before_any_noise(bounds: Any, kw: dict[str, Any], match: str) -> None:
    with pytest.raises(NoiseawareValueError, match=match):
        _release(bounds, 1.0, **kw)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda m: m["shift"].__setitem__(0, 1.0), r"metadata\.shift must hold 4 mid-points, the intercept's 0\.0"),
        (lambda m: m["shift"].pop(), r"metadata\.shift must hold 4"),
        (lambda m: m["shift"].__setitem__(1, float("inf")), r"metadata values must be finite"),
        (lambda m: m["shift"].__setitem__(1, 1e150), r"metadata\.bounds must keep bounds\[j\] \* bounds\[l\]"),
    ],
)
def test_the_loader_checks_the_shift(edit: Any, match: str) -> None:
    d = copy.deepcopy(_release(RANGES, 1.0).to_dict())
    edit(d["metadata"])
    with pytest.raises(ReleaseFormatError, match=match):
        na.Release.from_dict(d)


def test_a_record_without_a_shift_reads_as_shift_zero() -> None:
    d = copy.deepcopy(_release(SYMMETRIC, 1.0).to_dict())
    del d["metadata"]["shift"]
    np.testing.assert_array_equal(regression.read_regression(na.Release.from_dict(d)).shift, np.zeros(4))


@pytest.mark.parametrize("method", ["ssp", "adassp", "pace_ggm"])
def test_point_estimates_are_least_squares_in_the_data_units(method: str) -> None:
    data, ols = _data()
    rel = _release(RANGES, 1e8, method)
    est = {"ssp": regression.ols_from_statistics, "adassp": regression.adassp,
           "pace_ggm": regression.pace_ggm_regression}[method](rel)
    np.testing.assert_allclose(est.coef, ols, rtol=2e-4 if method == "pace_ggm" else 1e-5)
    z = np.column_stack([np.ones(len(data)), data])
    np.testing.assert_allclose(est.moments, z.T @ z, rtol=1e-3)  # Z^T Z of the data, not of the shifted rows
    np.testing.assert_allclose(est.predict(data[:3, :2]), data[:3, :2] @ est.coef[1:] + est.coef[0])


def _theta() -> dict[str, Any]:
    return {"beta": np.array([5.0, 0.05, -0.3]), "sigma": 1.0, "mu_x": np.array([54.0, 5.0]),
            "cov_x": np.array([[430.0, 1.0], [1.0, 8.3]])}


@pytest.mark.slow  # make test-full: both PPLs' law compiled for a shifted release (24 s from empty caches); the
# release, reader and point-estimate tests of ranges stay in make test
def test_both_likelihoods_take_the_data_units_and_read_the_shift_from_the_release() -> None:
    import jax.numpy as jnp
    import numpyro.handlers as handlers
    import pymc as pm

    from noiseaware import numpyro as nan
    from noiseaware import pymc as nap

    rel = _release(RANGES, 1.0)
    st = regression.read_regression(rel)
    th = _theta()
    bk = get_backend("numpy")
    beta_c, mu_c = centred_parameters(bk, th["beta"], th["mu_x"], st.shift)
    np.testing.assert_allclose(beta_c, [5.0 + 0.05 * 54.0 - 0.3 * 5.0 - 7.5, 0.05, -0.3])
    rows, cols = released_entries(4, True)
    noise = np.asarray(st.scale)[rows, cols]
    layout = StatisticsLayout(2000.0, rows, cols, True)
    centred = RegressionParameters(beta_c, 1.0, mu_c, th["cov_x"])
    want = float(gaussian_statistics_logp(bk, st.moments[rows, cols], centred, layout, noise))

    def model() -> None:
        nan.NoisySufficientStatistics.from_release("t", rel, *(jnp.asarray(th[k]) for k in th))

    tr = handlers.trace(handlers.seed(model, 0)).get_trace()
    got_numpyro = float(tr["t"]["fn"].log_prob(tr["t"]["value"]))
    with pm.Model() as m:
        nap.NoisySufficientStatistics.from_release("t", rel, *th.values())
    got_pymc = float(m.compile_logp()({}))
    assert got_numpyro == pytest.approx(want, rel=1e-10) and got_pymc == pytest.approx(want, rel=1e-10)
    # the units matter: the same parameters read without the shift give another density
    raw = RegressionParameters(th["beta"], 1.0, th["mu_x"], th["cov_x"])
    unshifted = float(gaussian_statistics_logp(bk, st.moments[rows, cols], raw, layout, noise))
    assert abs(unshifted - want) > 100.0


@pytest.mark.slow  # two NumPyro fits of their own compiled programs (about 20 s each on 2 cores at load 6)
def test_fit_reports_the_data_units_and_a_range_narrows_the_posterior() -> None:
    _, ols = _data()
    # negligible noise: the posterior of beta sits on least squares in the data's units
    exact = regression.fit(_release(RANGES, 1e8), chains=2, draws=300, warmup=300, seed=1, check_mixing=False)
    draws = results.draws(exact, "beta")
    assert np.all(np.abs(draws.mean(axis=0) - ols) < 0.25 * draws.std(axis=0)), (draws.mean(axis=0), ols)
    mu_x = results.draws(exact, "mu_x").mean(axis=0)
    assert abs(mu_x[0] - 54.0) < 2.0 and abs(mu_x[1] - 5.0) < 0.5  # uniform(18, 90) and uniform(0, 10) means
    # the same release budget with the symmetric bounds that cover the ranges: wider intervals for every slope
    fits = [regression.fit(_release(b, 0.5, seed=3), chains=2, draws=300, warmup=300, seed=1, check_mixing=False)
            for b in (RANGES, SYMMETRIC)]
    sd_range, sd_sym = (results.draws(f, "beta").std(axis=0) for f in fits)
    assert np.all(sd_range[1:] < 0.8 * sd_sym[1:]), (sd_range, sd_sym)
