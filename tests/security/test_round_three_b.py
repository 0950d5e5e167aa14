"""Reliability, round three (second part): rounding to exact totals, combining rules, priors, fit_many keys.

Each test is one kind of bad case of the round-three attack set (and the first bullet of the
small-area counts issue): a rounding that returns silently on impossible input or fails on valid
draws, a combining rule that accepts an impossible covariance or overflows without a word, a prior
checked only at fit time with advice about the data, a key refused with a rule it satisfies. Each
case must give a correct result or the package's own clear error naming what is wrong.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from noiseaware.copula import combine_synthetic
from noiseaware.distributed import fit_many
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError
from noiseaware.hierarchy import model_data, round_to_totals, synthetic_nmf
from noiseaware.regression import RegressionPrior


# ------------------------------------------------------------------------------ round_to_totals
def test_round_to_totals_refuses_what_it_cannot_round() -> None:
    ok = np.array([[[1.25, 0.75], [0.5, -0.5]]])  # one draw, two leaves, two cells: sums to 2
    cases = {
        # a non-integer total (gave sum 2)
        "total 2.5": ((ok, [0, 0], [2.5]), "totals must hold integers"),
        # NaN counts (gave -9223372036854775808)
        "NaN": ((np.where(ok == 0.75, np.nan, ok), [0, 0], [2]), "counts must be finite"),
        # below -1/2, outside the continuity-corrected support
        "below -1/2": ((np.array([[[3.0, -1.0], [0.5, -0.5]]]), [0, 0], [2]), r"counts must each be >= -1/2"),
        # one group index per leaf
        "groups too short": ((ok, [0], [2]), r"groups must hold one group index per leaf, shape \(2,\)"),
        "groups too long": ((ok, [0, 0, 0], [2]), r"groups must hold one group index per leaf"),
        # an index beyond the totals
        "group out of range": ((ok, [0, 3], [2]), r"groups must be indices in \[0, 1\)"),
        "negative group": ((ok, [-1, 0], [2]), r"groups must be indices in \[0, 1\)"),
        "negative total": ((ok, [0, 0], [-2]), r"totals must be integers >= 0"),
        "draws off their total": ((ok, [0, 0], [3]), r"must sum to the group totals .* got a sum of 2.0"),
        "empty group with people": ((ok, [0, 0], [2, 4]), r"totals\[1\] must be 0"),
        "no leaf axis": ((ok.ravel(), [0, 0], [2]), r"counts must have shape \(\.\.\., leaves, cells\)"),
    }
    for name, (args, what) in cases.items():
        with pytest.raises(NoiseawareValueError, match=what):
            round_to_totals(*args)
        assert name  # one case per kind above
    with pytest.raises(NoiseawareTypeError, match="groups must hold numbers, not true/false"):
        round_to_totals(ok, [True, False], [2])
    assert round_to_totals(ok, [0, 0], [2]).tolist() == [[[1, 1], [0, 0]]]


def _model_like_draws(mass_u: float, shape: tuple[int, ...], alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Draws as hierarchy.model makes them: ``(T + K/2) w - 1/2`` with ``w`` on the simplex of the K cells."""
    k = int(np.prod(shape[1:]))
    w = rng.dirichlet(np.full(k, alpha), size=shape[0])
    return (mass_u * w - 0.5).reshape(shape)


@pytest.mark.parametrize(("mean_population", "alpha"), [(2.0, 0.01), (2.0, 0.1), (0.3, 0.05), (4.0, 1.0)])
def test_round_to_totals_reaches_the_totals_when_the_mass_sits_in_a_few_cells(mean_population, alpha) -> None:
    # The fit of synthetic_nmf(1, 2, 3, cells=8 cells, mean_population=2.0, rng=0) sampled for 49 s and then
    # raised "counts must sum to the group totals (group 0); got counts=-13.0": rounding every cell and
    # moving each by at most one cannot close the gap when a few cells hold the mass and the rest sit
    # near -1/2. Here: draws of the model's form over that tree, concentrated on a few cells.
    rel = synthetic_nmf(1, 2, 3, cells=tuple("abcdefgh"), mean_population=mean_population, rng=0).release
    data = model_data(rel)
    n_leaf, n_cell = data.n_units[-1], data.n_cells
    rng = np.random.default_rng(7)
    for total in (int(data.totals[0]), 0, 1):  # the file's total, a root total of 0, one person
        x = _model_like_draws(total + 0.5 * n_leaf * n_cell, (2000, n_leaf, n_cell), alpha, rng)
        out = round_to_totals(x, data.leaf_root, [total])
        assert out.dtype == np.int64 and out.shape == x.shape
        assert np.all(out >= 0)
        assert np.all(out.sum(axis=(1, 2)) == total)
        # each count is the floor or the ceiling of its quota max(x - tau, 0), the draw's nearest point with
        # non-negative cells summing to the total (tau found here by bisection)
        flat_x, flat = x.reshape(2000, -1), out.reshape(2000, -1)
        lo, hi = np.full((2000, 1), -1.0), np.full((2000, 1), flat_x.max() + 1.0)
        for _ in range(200):
            mid = (lo + hi) / 2
            over = np.maximum(flat_x - mid, 0.0).sum(axis=1, keepdims=True) > total
            lo, hi = np.where(over, mid, lo), np.where(over, hi, mid)
        quota = np.maximum(flat_x - hi, 0.0)
        assert np.all((flat >= np.floor(quota - 1e-7)) & (flat <= np.ceil(quota + 1e-7)))


def test_round_to_totals_extreme_spread_and_several_groups() -> None:
    rng = np.random.default_rng(3)
    groups = np.array([0, 1, 0, 1, 2])
    totals = np.array([13, 0, 2**40])
    x = np.full((500, 5, 6), -0.5)
    for g, t in enumerate(totals):
        leaves = np.flatnonzero(groups == g)
        k = leaves.size * 6
        w = rng.dirichlet(np.full(k, 0.02), size=500)
        x[:, leaves] = ((t + k / 2) * w - 0.5).reshape(500, leaves.size, 6)
    out = round_to_totals(x, groups, totals)
    for g, t in enumerate(totals):
        assert np.all(out[:, groups == g].sum(axis=(1, 2)) == t)
    assert out.min() >= 0
    # all of a group's mass in one cell, every other cell at -1/2 exactly
    one = np.full((1, 3, 4), -0.5)
    one[0, 1, 2] = 7 + 12 / 2 - 0.5
    assert round_to_totals(one, [0, 0, 0], [7]).ravel().tolist() == [0] * 6 + [7] + [0] * 5
    # the message of draws that are off names the sum and how far, not a rounded count
    with pytest.raises(NoiseawareValueError, match=re.escape("got a sum of 7.0 in draw 0, off by 1")):
        round_to_totals(one, [0, 0, 0], [8])


# ------------------------------------------------------------------------------ combining rules
def test_combine_synthetic_refuses_impossible_covariances_and_overflow() -> None:
    q = [[1.0, 2.0], [1.2, 1.7], [0.8, 2.2], [1.1, 2.1]]
    # not positive semi-definite: wald_test reported F = -1e-4, p = 1.0
    with pytest.raises(NoiseawareValueError, match=r"must be positive semi-definite.*smallest eigenvalue -1"):
        combine_synthetic(q, [[[1.0, 2.0], [2.0, 1.0]]] * 4)
    bad_one = [[[0.01, 0.0], [0.0, 0.02]]] * 3 + [[[0.01, 0.02], [0.02, 0.01]]]
    with pytest.raises(NoiseawareValueError, match=r"variances\[3\]"):
        combine_synthetic(q, bad_one)
    # a singular (rank-one) covariance is positive semi-definite: accepted
    combine_synthetic(q, [[[1.0, 1.0], [1.0, 1.0]]] * 4)
    # values near the float limits: infinite estimates or variances came back without a word
    overflow = {
        "estimate": ([1.7e308, 1.7e308, 1.7e308], [1.0, 1.0, 1.0]),
        "between": ([1e200, -1e200, 1e200], [1.0, 1.0, 1.0]),
        "within": ([1.0, 2.0, 3.0], [1.7e308, 1.7e308, 1.7e308]),
        "vector between": ([[1e200, 1.0], [-1e200, 2.0], [1e200, 3.0]], [[1.0, 1.0]] * 3),
        "vector within": ([[1.0, 1.0], [2.0, 2.0]], [[[1.7e308, 0.0], [0.0, 1.0]]] * 2),
    }
    for rule in ("fully", "partially"):
        for name, (est, var) in overflow.items():
            with pytest.raises(NoiseawareValueError, match=r"must be finite in float64.*Rescale the estimand"):
                combine_synthetic(est, var, rule=rule)
            assert name
    # tiny between-variances: a float power overflowed (OverflowError), and identical estimates divided by 0
    for rule in ("fully", "partially"):
        r = combine_synthetic([0.0, 1e-100, 0.0], [1.0, 1.0, 1.0], rule=rule)
        assert np.isfinite(r.variance) and np.isfinite(r.df)
        for est in ([[0.0, 0.0], [1e-100, 1e-100], [0.0, 0.0]], [[1.0, 2.0]] * 3):
            w = combine_synthetic(est, [np.eye(2)] * 3, rule=rule).wald_test()
            assert np.isfinite(w.statistic) and w.statistic >= 0 and 0 <= w.p_value <= 1


# ------------------------------------------------------------------------------ regression prior
def test_regression_prior_is_checked_when_made() -> None:
    # accepted, and refused only at fit time with advice about NaN in the data
    cases = {
        "beta_scale": (-1, "beta_scale must be a finite number > 0"),
        "eta": (0, "eta must be a finite number > 0; got eta=0."),
        "sigma_scale": (float("nan"), "sigma_scale must be a finite number > 0; got sigma_scale=nan."),
        "x_scale": ([1.0, float("inf")], "x_scale must be a finite number > 0"),
        "x_loc_scale": ([[1.0]], "x_loc_scale must be a finite number > 0, or a 1-D array"),
    }
    for name, (value, what) in cases.items():
        with pytest.raises(NoiseawareValueError, match=re.escape(f"RegressionPrior: {what}")) as err:
            RegressionPrior(**{name: value})
        assert "privatiz" not in str(err.value) and "Impute" not in str(err.value)
    with pytest.raises(NoiseawareValueError, match="RegressionPrior: beta_scale"):
        RegressionPrior(beta_scale=-1, eta=0, sigma_scale=float("nan"))
    with pytest.raises(NoiseawareValueError, match="sigma_scale must be a single number"):
        RegressionPrior(sigma_scale=[1.0, 2.0])
    with pytest.raises(NoiseawareTypeError, match="eta must be a real number"):
        RegressionPrior(eta="2")
    assert RegressionPrior(beta_scale=[1.0, 2.0], sigma_scale=0.5, eta=3).eta == 3.0


# ------------------------------------------------------------------------------ fit_many keys
@pytest.mark.parametrize(
    ("key", "rule"),
    [
        (".hidden", "must not start with '.'"),
        ("..", "must not start with '.'"),
        ("-", "must not start with '-'"),
        ("a/b", "must hold only ASCII letters"),
        ("x" * 129, "must be 1 to 128 characters"),
        ("r1.error", "must not end in '.error'"),
    ],
)
def test_fit_many_key_is_refused_with_a_rule_it_breaks(key: str, rule: str) -> None:
    # ".hidden", "-" and ".." were refused with "1-128 characters of letters, digits, '.', '_' or '-'",
    # a rule they satisfy
    with pytest.raises(NoiseawareValueError, match=re.escape(f"fit_many: key {rule}")) as err:
        fit_many({key: "unused.json"}, "copula")
    assert f"got key={key!r}" in str(err.value)


_K_RULE = r"k \(the number of categories\) must be an integer >= 2; got "


@pytest.mark.parametrize(
    ("kwargs", "error", "rule"),
    [
        ({"p": "0.6"}, NoiseawareTypeError, r"p must be a number or an array of numbers; got p='0.6'"),
        ({"p": 0.6, "k": "3"}, NoiseawareTypeError, _K_RULE + r"k='3'"),
        ({"p": 0.6, "k": 3.5}, NoiseawareTypeError, _K_RULE + r"k=3.5"),
        ({"p": True}, NoiseawareTypeError, r"p must be a number or an array of numbers; got p=True"),
    ],
)
@pytest.mark.parametrize("front", ["numpyro", "pymc"])
def test_randomized_response_refuses_text_and_non_integer_categories(front, kwargs, error, rule) -> None:
    """Issue 43: NumPyro's RandomizedResponse took p="0.6", k="3" and k=3.5 (NumPy read the text as numbers)."""
    probs = np.array([0.2, 0.3, 0.5])
    if front == "numpyro":
        import noiseaware.numpyro as nan

        with pytest.raises(error, match=rule):
            nan.RandomizedResponse(probs, **kwargs)
    else:
        import noiseaware.pymc as nap

        with pytest.raises(error, match=rule):
            nap.RandomizedResponse.dist(probs, **kwargs)
