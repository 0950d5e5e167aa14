"""Bayes-NA fit (seed 000 §3): NUTS in both backends against an exact grid posterior, functionals, errors."""

from __future__ import annotations

import math

import arviz as az
import numpy as np
import pytest
from scipy import stats

import noiseaware as na
from noiseaware.copula import CopulaFit, LKJPrior, fit, partial_slope
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
def fits(release_p2) -> dict[str, CopulaFit]:
    return {
        b: fit(release_p2, backend=b, chains=2, draws=1000, warmup=500, seed=3, progressbar=False)
        for b in ("numpyro", "pymc")
    }


@pytest.mark.parametrize("backend", ["numpyro", "pymc"])
def test_fit_matches_exact_grid_posterior_and_rejects_naive_one(fits, release_p2, backend) -> None:
    res = fits[backend]
    alpha = float(release_p2.mechanism.alpha)
    t_obs = float(release_p2.values[0])
    exact_mean, exact_sd = _grid_summary(*_grid_posterior(t_obs, N_ROWS, alpha))
    r12 = res.pair_draws()["R"]
    mcse_mean = float(az.mcse(r12)["R"].values[0])
    # MCSE of the sd by the delta method on the sd-ESS (ArviZ's own mcse(method="sd") fails under numba)
    mcse_sd = float(r12.std()) / math.sqrt(2 * float(az.ess(r12, method="sd")["R"].values[0]))
    mean, sd = float(res.posterior_mean[0, 1]), float(res.draws[:, 0, 1].std(ddof=1))
    # |z| > 5 has probability < 1e-6 under a correct sampler
    assert abs(mean - exact_mean) < 5 * mcse_mean + 1e-3
    assert abs(sd - exact_sd) < 5 * mcse_sd + 1e-3
    # the same check rejects a wrong likelihood: the naive posterior that ignores the noise
    _naive_mean, naive_sd = _grid_summary(*_grid_posterior(round(t_obs), N_ROWS, None))
    assert abs(sd - naive_sd) > 5 * mcse_sd + 1e-3
    # the interval is the equal-tailed interval of the same draws
    lo, hi = res.interval(0.9)
    assert lo[0, 1] == pytest.approx(np.quantile(res.draws[:, 0, 1], 0.05))
    assert hi[0, 1] == pytest.approx(np.quantile(res.draws[:, 0, 1], 0.95))
    np.testing.assert_allclose(np.diag(lo), 1.0, atol=1e-12)


def test_backends_agree_within_monte_carlo_error(fits) -> None:
    a, b = fits["numpyro"], fits["pymc"]
    from noiseaware._engine import nuts_sampler_choice

    assert b.attrs["noiseaware_nuts_sampler"] == nuts_sampler_choice("copula.fit")  # the default implementation
    se = math.hypot(float(az.mcse(a.pair_draws())["R"].values[0]), float(az.mcse(b.pair_draws())["R"].values[0]))
    assert abs(a.posterior_mean[0, 1] - b.posterior_mean[0, 1]) < 5 * se


def test_fit_result_api(fits, tmp_path) -> None:
    res = fits["numpyro"]
    assert isinstance(res.idata, az.InferenceData)
    assert res.idata.posterior["R"].shape == (2, 1000, 2, 2)
    assert res.idata.attrs["noiseaware_prior"] == "LKJ(eta=1)"
    s = res.summary(level=0.8)
    assert list(s.columns) == ["mean", "sd", "lower 80%", "upper 80%", "r_hat", "ess_bulk"]
    assert s["r_hat"].iloc[0] < 1.01 and s["ess_bulk"].iloc[0] > 400
    lo80, hi80 = res.interval(0.8)
    lo95, hi95 = res.interval(0.95)
    assert lo95[0, 1] < lo80[0, 1] < hi80[0, 1] < hi95[0, 1]
    fisher_z = res.functional(lambda R: np.arctanh(R[0, 1]))
    np.testing.assert_allclose(fisher_z, np.arctanh(res.draws[:, 0, 1]))
    png = tmp_path / "fig3.png"
    res.plot(png, truth=np.array([[1, 0.45], [0.45, 1]]), others={"MLE-NN": np.eye(2)})
    assert png.stat().st_size > 5000 and png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow  # long; the exact grid-posterior test keeps the numpyro route in the fast suite
def test_fit_p3_recovers_correlations_numpyro() -> None:
    rng = np.random.default_rng(11)
    R = random_correlation(3, rng)
    x = simulate_gaussian_copula(20_000, R, (stats.norm(), stats.gamma(2), stats.t(5)), rng)
    rel = na.privatize(x, statistic="median_pairs", epsilon=4.5, rng=rng)  # large n and budget: the data dominate
    res = fit(rel, chains=2, draws=500, warmup=500, seed=1, progressbar=False)
    lo, hi = res.interval(0.999)
    iu = np.triu_indices(3, 1)
    assert np.all((lo[iu] < R[iu]) & (R[iu] < hi[iu]))
    assert np.abs(res.posterior_mean[iu] - R[iu]).max() < 0.05
    assert np.all(np.linalg.eigvalsh(res.draws[:50]) > 0)


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


def test_dense_mass_matrix_matches_the_grid_posterior(release_p2) -> None:
    """mass_matrix="dense" (NumPyro's dense adaptation on top of the preconditioner) samples the same posterior."""
    res = fit(release_p2, chains=2, draws=1000, warmup=500, seed=5, progressbar=False, mass_matrix="dense")
    assert res.idata.attrs["noiseaware_mass_matrix"] == "dense"
    exact_mean, exact_sd = _grid_summary(
        *_grid_posterior(float(release_p2.values[0]), N_ROWS, float(release_p2.mechanism.alpha))
    )
    r12 = res.pair_draws()["R"]
    mcse_mean = float(az.mcse(r12)["R"].values[0])
    mcse_sd = float(r12.std()) / math.sqrt(2 * float(az.ess(r12, method="sd")["R"].values[0]))
    assert abs(float(res.posterior_mean[0, 1]) - exact_mean) < 5 * mcse_mean + 1e-3
    assert abs(float(res.draws[:, 0, 1].std(ddof=1)) - exact_sd) < 5 * mcse_sd + 1e-3
