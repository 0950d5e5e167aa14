"""Bayes-NA fit (seed 000 §3): NUTS in both backends against an exact grid posterior, functionals, errors."""

from __future__ import annotations

import math
from typing import Any

import arviz as az
import numpy as np
import pytest
from scipy import stats

import noiseaware as na
from noiseaware import results
from noiseaware._engine import group, is_result
from noiseaware.copula import LKJPrior, fit, functional, pair_draws, pair_summary, partial_slope, plot_pairs
from noiseaware.datasets import demo_copula_data, random_correlation, simulate_gaussian_copula
from noiseaware.exceptions import NoiseawareValueError

N_ROWS, EPS = 400, 0.3


@pytest.fixture(scope="module")
def release_p2() -> na.Release:
    rng = np.random.default_rng(7)
    R = np.array([[1.0, 0.45], [0.45, 1.0]])
    x = simulate_gaussian_copula(N_ROWS, R, (stats.norm(), stats.expon()), rng)
    return na.privatize(x, statistic="median_pairs", epsilon=EPS, rng=rng)


def _grid_posterior(t_obs: float, n: int, alpha: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Independent brute force: uniform prior on r (LKJ(1), p = 2) times the exact likelihood.

    P(t~ | r) = sum_t FisherNCH(t; n, h, h, omega(r)) * dlaplace(t~ - t), every term summed, with SciPy's
    nchypergeom_fisher and dlaplace. ``alpha=None`` is the naive (noise-ignoring) likelihood.
    """
    h = math.ceil(n / 2)
    r = np.linspace(-0.999, 0.999, 2001)
    omega = ((np.pi + 2 * np.arcsin(r)) / (np.pi - 2 * np.arcsin(r))) ** 2
    t = np.arange(0, h + 1)
    pmf = stats.nchypergeom_fisher.pmf(t[None, :], n, h, h, omega[:, None])
    if alpha is None:
        like = stats.nchypergeom_fisher.pmf(int(t_obs), n, h, h, omega)
    else:
        like = pmf @ stats.dlaplace.pmf(t_obs - t, -math.log(alpha))
    w = like / np.trapezoid(like, r)
    return r, w


def _grid_summary(r: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    mean = np.trapezoid(r * w, r)
    sd = math.sqrt(np.trapezoid((r - mean) ** 2 * w, r))
    return float(mean), sd


@pytest.fixture(scope="module")
def fits(release_p2) -> dict[str, Any]:
    """Each backend's fit, made when a test first asks for it (make test asks for NumPyro's only)."""

    class Fits(dict):  # type: ignore[type-arg]
        def __missing__(self, backend: str) -> Any:
            self[backend] = fit(release_p2, backend=backend, chains=2, draws=1000, warmup=500, seed=3,
                                progressbar=False)
            return self[backend]

    return Fits()


def _matrices(res: Any) -> np.ndarray:
    """The correlation matrices ``(chains * draws, p, p)``, rebuilt from the pairs the fit stores."""
    return functional(res, lambda R: R)


@pytest.mark.slow  # make test-full: 1,500 iterations x 2 chains per backend for a Monte Carlo comparison (13-20 s)
@pytest.mark.parametrize("backend", ["numpyro", "pymc"])
def test_fit_matches_exact_grid_posterior_and_rejects_naive_one(fits, release_p2, backend) -> None:
    res = fits[backend]
    alpha = float(release_p2.mechanism.alpha)
    t_obs = float(release_p2.values[0])
    exact_mean, exact_sd = _grid_summary(*_grid_posterior(t_obs, N_ROWS, alpha))
    r12 = pair_draws(res)
    mcse_mean = float(az.mcse(r12)["R"].values[0])
    # MCSE of the sd by the delta method on the sd-ESS (ArviZ's own mcse(method="sd") fails under numba)
    mcse_sd = float(r12["R"].std()) / math.sqrt(2 * float(az.ess(r12, method="sd")["R"].values[0]))
    draws = _matrices(res)
    mean, sd = float(draws[:, 0, 1].mean()), float(draws[:, 0, 1].std(ddof=1))
    # |z| > 5 has probability < 1e-6 under a correct sampler
    assert abs(mean - exact_mean) < 5 * mcse_mean + 1e-3
    assert abs(sd - exact_sd) < 5 * mcse_sd + 1e-3
    # the same check rejects a wrong likelihood: the naive posterior that ignores the noise
    _naive_mean, naive_sd = _grid_summary(*_grid_posterior(round(t_obs), N_ROWS, None))
    assert abs(sd - naive_sd) > 5 * mcse_sd + 1e-3
    # the interval is the equal-tailed interval of the same draws, for the stored pair R[0, 1]
    lo, hi = results.interval(res, 0.9)
    assert lo.shape == hi.shape == (1,)
    assert lo[0] == pytest.approx(np.quantile(draws[:, 0, 1], 0.05))
    assert hi[0] == pytest.approx(np.quantile(draws[:, 0, 1], 0.95))


@pytest.mark.slow  # make test-full: shares the exact-grid test's fits
def test_backends_agree_within_monte_carlo_error(fits) -> None:
    a, b = fits["numpyro"], fits["pymc"]
    from noiseaware._engine import nuts_sampler_choice

    assert b.attrs["noiseaware_nuts_sampler"] == nuts_sampler_choice()  # the default implementation
    assert (a.attrs["noiseaware_backend"], b.attrs["noiseaware_backend"]) == ("numpyro", "pymc")
    se = math.hypot(float(az.mcse(pair_draws(a))["R"].values[0]), float(az.mcse(pair_draws(b))["R"].values[0]))
    mean_a, mean_b = (float(results.draws(f)[:, 0].mean()) for f in (a, b))  # the one pair, R[0, 1]
    assert abs(mean_a - mean_b) < 5 * se


@pytest.mark.slow  # make test-full: PyMC and NumPyro fits at p = 5 (12 s)
def test_pymc_route_draws_correlation_matrices_and_agrees_with_numpyro_at_p5() -> None:
    """Every draw is positive definite, and the two backends (each with its default NUTS) agree at p = 5.

    At p = 2 any matrix with |r| < 1 is a correlation matrix; from p = 3 on it must also be positive
    definite, which PyMC 5's packed LKJCorr left to a check that its JAX samplers drop (every draw of this
    release was indefinite, one pair's mean 0.6 off).
    """
    x, _, cols = demo_copula_data(seed=2026, n=400)
    rel = na.privatize(x, statistic="median_pairs", epsilon=1.0, columns=cols, rng=np.random.default_rng(5))
    cfg = {"chains": 2, "draws": 500, "warmup": 500, "seed": 1, "check_mixing": False}
    fits = {b: fit(rel, backend=b, **cfg) for b in ("numpyro", "pymc")}
    for res in fits.values():
        assert np.linalg.eigvalsh(_matrices(res)).min() > 0
    a, b = (pair_draws(fits[k]) for k in ("numpyro", "pymc"))
    se = np.hypot(np.asarray(az.mcse(a)["R"]), np.asarray(az.mcse(b)["R"]))
    gap = np.abs(np.asarray(a["R"].mean(("chain", "draw"))) - np.asarray(b["R"].mean(("chain", "draw"))))
    assert np.all(gap < 5 * se), (gap, se)  # |z| > 5: p < 1e-6 per pair


# PyMC's case in make test-full (its compiled fit, 5-9 s); tests/test_copula_result.py keeps PyMC's copula fit
@pytest.mark.parametrize("backend", ["numpyro", pytest.param("pymc", marks=pytest.mark.slow)])
def test_fit_result_api(fits, release_p2, backend, tmp_path) -> None:
    res = fits[backend]
    assert is_result(res) and results.fit_kind(res) == "copula.fit"
    post = group(res, "posterior")
    # only what varies: R's one pair, labelled by its columns; the columns' names in the root attrs
    cols = [str(c) for c in release_p2.metadata["columns"]]
    assert set(post.data_vars) == {"R"}
    assert post["R"].shape == (2, 1000, 1) and post["R"].dims[2:] == ("pair",)
    assert list(post["pair"].values) == [f"{cols[0]} x {cols[1]}"]
    assert [str(c) for c in res.attrs["noiseaware_columns"]] == cols
    assert res.attrs["noiseaware_prior"] == "LKJ(eta=1)" and res.attrs["noiseaware_default_var"] == "R"
    assert results.release(res) == release_p2
    s = pair_summary(res, level=0.8)
    assert list(s.columns) == ["mean", "sd", "lower 80%", "upper 80%", "r_hat", "ess_bulk"]
    assert list(s.index) == ["x0 x x1"] and s.index.name == "pair"
    assert s["r_hat"].iloc[0] < 1.01 and s["ess_bulk"].iloc[0] > 400
    lo80, hi80 = results.interval(res, 0.8)  # of the stored pair
    lo95, hi95 = results.interval(res, 0.95)
    assert lo95[0] < lo80[0] < hi80[0] < hi95[0]
    assert s["lower 80%"].iloc[0] == pytest.approx(lo80[0]) and s["upper 80%"].iloc[0] == pytest.approx(hi80[0])
    np.testing.assert_array_equal(results.draws(res)[:, 0], _matrices(res)[:, 0, 1])  # the pair is R[0, 1]
    draws = _matrices(res)
    assert s["mean"].iloc[0] == pytest.approx(draws[:, 0, 1].mean())
    fisher_z = functional(res, lambda R: np.arctanh(R[0, 1]))
    np.testing.assert_allclose(fisher_z, np.arctanh(draws[:, 0, 1]))
    # partial_slope on the result: names or indices, the draws' slopes; with no control it is R_yx itself
    np.testing.assert_allclose(partial_slope(res, "x1", "x0"), draws[:, 1, 0])
    np.testing.assert_allclose(partial_slope(res, 1, 0), draws[:, 1, 0])
    with pytest.raises(NoiseawareValueError, match="unknown column 'income'"):
        partial_slope(res, "income", "x0")
    png = tmp_path / "fig3.png"
    fig = plot_pairs(res, png, truth=np.array([[1, 0.45], [0.45, 1]]), others={"MLE-NN": np.eye(2)})
    assert png.stat().st_size > 5000 and png.read_bytes()[:4] == b"\x89PNG"
    assert fig.axes[0].get_title() == f"Bayes-NA posterior, n = {N_ROWS}, ε = {EPS:g} ({backend})"
    # the log_likelihood group is there from the start: one composite-likelihood term per pair
    ll = np.asarray(group(res, "log_likelihood")["pairs"])
    assert ll.shape == (2, 1000, 1) and np.all(np.isfinite(ll))


def test_copula_functions_refuse_other_objects(fits) -> None:
    from noiseaware._engine import from_groups
    from noiseaware.exceptions import NoiseawareTypeError

    for f in (pair_summary, pair_draws, plot_pairs):
        with pytest.raises(NoiseawareTypeError, match=r"must be the result of copula\.fit"):
            f(np.eye(2))
    no_r = from_groups({"posterior": {"mu": np.zeros((2, 10))}})
    with pytest.raises(NoiseawareTypeError, match="posterior variable R"):
        functional(no_r, np.trace)
    with pytest.raises(NoiseawareValueError, match="level"):
        pair_summary(fits["numpyro"], level=1.5)
    with pytest.raises(NoiseawareValueError, match="a bare array has no column names"):
        partial_slope(np.eye(3), "a", 1)


@pytest.mark.slow  # long; the exact grid-posterior test keeps the numpyro route in the fast suite
def test_fit_p3_recovers_correlations_numpyro() -> None:
    rng = np.random.default_rng(11)
    R = random_correlation(3, rng)
    x = simulate_gaussian_copula(20_000, R, (stats.norm(), stats.gamma(2), stats.t(5)), rng)
    rel = na.privatize(x, statistic="median_pairs", epsilon=4.5, rng=rng)  # large n and budget: the data dominate
    res = fit(rel, chains=2, draws=500, warmup=500, seed=1, progressbar=False)
    lo, hi = results.interval(res, 0.999)  # of the stored pairs, R[0, 1], R[0, 2], R[1, 2]
    iu = np.triu_indices(3, 1)
    assert np.all((lo < R[iu]) & (R[iu] < hi))
    draws = _matrices(res)
    assert np.abs(draws.mean(axis=0)[iu] - R[iu]).max() < 0.05
    assert np.all(np.linalg.eigvalsh(draws[:50]) > 0)


def test_partial_slope_formula() -> None:
    R = random_correlation(4, np.random.default_rng(2))
    # one control: seed 000 Supplement S.4
    b = partial_slope(R, outcome=3, predictor=1, controls=[0])
    assert b == pytest.approx((R[3, 1] - R[3, 0] * R[1, 0]) / (1 - R[1, 0] ** 2))
    # several controls: the regression coefficient of Z_y on (Z_x, Z_C) from the normal equations
    idx = [1, 0, 2]
    coef = np.linalg.solve(R[np.ix_(idx, idx)], R[idx, 3])
    assert partial_slope(R, 3, 1, [0, 2]) == pytest.approx(coef[0])
    assert partial_slope(R, 3, 1) == pytest.approx(R[3, 1])
    stack = np.stack([R, np.eye(4)])
    np.testing.assert_allclose(partial_slope(stack, 3, 1, [0, 2]), [coef[0], 0.0], atol=1e-12)
    with pytest.raises(NoiseawareValueError, match="distinct indices"):
        partial_slope(R, 1, 1)
    with pytest.raises(NoiseawareValueError, match="distinct indices"):
        partial_slope(R, 1, 9)


def test_fit_rejects_bad_input(release_p2) -> None:
    x, _, _cols = demo_copula_data(seed=1, n=200)
    rng = np.random.default_rng(0)
    tgm = na.privatize(x[:, :2], statistic="median_pairs", epsilon=1.0, mechanism="tgm", rng=rng)
    with pytest.raises(NoiseawareValueError, match="family"):
        fit(tgm, progressbar=False)
    kendall = na.privatize(x[:, :2], statistic="kendall_pairs", epsilon=1.0, rng=rng)
    with pytest.raises(NoiseawareValueError, match="median_pairs"):
        fit(kendall, progressbar=False)
    with pytest.raises(Exception, match="Release"):
        fit(np.array([1, 2]), progressbar=False)
    with pytest.raises(NoiseawareValueError, match="backend"):
        fit(release_p2, backend="stan")
    with pytest.raises(NoiseawareValueError, match="mass_matrix"):
        fit(release_p2, mass_matrix="full")
    with pytest.raises(NoiseawareValueError, match="mass_matrix applies to backend='numpyro'"):
        fit(release_p2, backend="pymc", mass_matrix="dense")
    with pytest.raises(NoiseawareValueError, match="prior"):
        fit(release_p2, prior="wishart")
    with pytest.raises(NoiseawareValueError, match="eta"):
        LKJPrior(-1.0)
    with pytest.raises(NoiseawareValueError, match="chains"):
        fit(release_p2, chains=0)


@pytest.mark.slow  # make test-full: a third compiled fit for one option (6-21 s)
def test_dense_mass_matrix_matches_the_grid_posterior(release_p2) -> None:
    """mass_matrix="dense" (NumPyro's dense adaptation on top of the preconditioner) samples the same posterior."""
    res = fit(release_p2, chains=2, draws=1000, warmup=500, seed=5, progressbar=False, mass_matrix="dense")
    assert res.attrs["noiseaware_mass_matrix"] == "dense"
    exact_mean, exact_sd = _grid_summary(
        *_grid_posterior(float(release_p2.values[0]), N_ROWS, float(release_p2.mechanism.alpha))
    )
    r12 = pair_draws(res)
    mcse_mean = float(az.mcse(r12)["R"].values[0])
    mcse_sd = float(r12["R"].std()) / math.sqrt(2 * float(az.ess(r12, method="sd")["R"].values[0]))
    draws = _matrices(res)
    assert abs(float(draws[:, 0, 1].mean()) - exact_mean) < 5 * mcse_mean + 1e-3
    assert abs(float(draws[:, 0, 1].std(ddof=1)) - exact_sd) < 5 * mcse_sd + 1e-3
