"""covariance.fit in both backends, its result through ArviZ and netCDF, and interval coverage at d = 5."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import noiseaware as na
from noiseaware import covariance, results
from tests.regression.result_checks import check_host_result


def test_result_goes_through_arviz_and_a_netcdf_file(tmp_path: Path) -> None:
    # the release and settings of tests/test_arviz.py's covariance fit: one compiled program serves both
    x = np.random.default_rng(0).uniform(-1, 1, size=(400, 2))
    rel = na.privatize(x, statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    fit = covariance.fit(rel, chains=2, draws=60, warmup=60, seed=1, check_mixing=False)
    copy = check_host_result(fit, "covariance.fit", "sigma", tmp_path)
    assert results.draws(copy).shape == (120, 2, 2)
    assert copy.attrs["noiseaware_route"] == "moments" and copy.attrs["noiseaware_backend"] == "numpyro"
    assert results.release(copy).to_dict() == rel.to_dict()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["numpyro", "pymc"])
def test_fit_runs_and_centres_on_the_truth(backend: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    sigma = np.array([[0.04, 0.02], [0.02, 0.05]])
    x = np.clip(rng.multivariate_normal([0, 0], sigma, size=5000), -1, 1)
    rel = na.privatize(x, statistic="pace_ggm", rho=5.0, bound=1.0, rng=np.random.default_rng(1))
    fit = covariance.fit(rel, backend=backend, chains=2, draws=300, warmup=300, seed=2, progressbar=False)
    post = results.draws(fit, "sigma")
    assert results.settings(fit).seed == 2 and fit.attrs["noiseaware_backend"] == backend
    sd = post.std(0)
    assert np.all(np.abs(post.mean(0) - sigma) < 4 * sd + 1e-3)
    check_host_result(fit, "covariance.fit", "sigma", tmp_path)


@pytest.mark.slow
def test_interval_coverage_at_d5_and_a_wrong_noise_model_is_caught() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import covariance_calibration as cc

    res = cc.run_cell(n=2000, rho=1.0, reps=12, study="coverage", warmup=300, draws=300, seed=7)
    # 12 x 15 = 180 intervals at 90%: binomial sd 2.2%; [0.78, 0.99] holds with prob > 0.9999 if calibrated
    assert 0.78 <= res["coverage90"] <= 0.99
    assert res["coverage90_diag"] >= 0.7  # 60 diagonal intervals: binomial sd 3.9%
    # the same study with the noise and the sampling variance understated (precision x 1e4, n x 100)
    # must fail: its intervals on the (always measured) diagonal are far too narrow
    orig, orig_make = cc.padded, cc.make_mcmc

    def overconfident(rel):  # type: ignore[no-untyped-def]
        y, lam = orig(rel)
        return y, np.where(lam > 1e-6, lam * 1e4, lam)

    cc.padded = overconfident
    cc.make_mcmc = lambda n, scale, warmup, draws: orig_make(100 * n, scale, warmup, draws)
    try:
        bad = cc.run_cell(n=2000, rho=1.0, reps=12, study="coverage", warmup=300, draws=300, seed=7)
    finally:
        cc.padded, cc.make_mcmc = orig, orig_make
    assert bad["coverage90_diag"] < 0.6
