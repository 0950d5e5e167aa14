"""The copula fits' results are the host's own container: ArviZ, netCDF and ``noiseaware.results`` take them.

A tiny ``copula.fit`` (each backend) and ``copula.fit_dpcopula`` result goes through ``az.summary``,
``az.ess``, ``az.rhat``, ``az.plot_trace``, a netCDF round trip, and the package's own readers
(:mod:`noiseaware.results`, the copula's functions of ``R``, ``synthesize``) on the file's copy,
with every warning an error, on today's stack (ArviZ 1: ``xarray.DataTree``) and yesterday's
(ArviZ 0.x: ``InferenceData``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import arviz as az
import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware import copula, results
from noiseaware._engine import arviz_major, group, group_names, is_result
from noiseaware.datasets import demo_copula_data

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")

ARVIZ_1 = arviz_major() >= 1
CHAINS, DRAWS = 2, 60


def _pairs_release() -> na.Release:
    x, _, cols = demo_copula_data(seed=1, n=400)
    return na.privatize(x[:, :3], statistic="median_pairs", epsilon=2.0, columns=cols[:3], rng=np.random.default_rng(0))


def _dpcopula_release() -> na.Release:
    cov = [[1, 0.6, 0.3], [0.6, 1, 0.2], [0.3, 0.2, 1]]
    x = np.random.default_rng(0).multivariate_normal([0, 0, 0], cov, size=400)
    doms = [{"lower": -4.0, "upper": 4.0, "bins": 8}] * 3
    return na.privatize(
        x, statistic="dpcopula", epsilon=4.0, correlation="median", domains=doms, rng=np.random.default_rng(1)
    )


CASES = {
    # the shapes and settings of tests/test_arviz.py's copula fits: their compiled programs are shared
    "numpyro": lambda: copula.fit(
        _pairs_release(), chains=CHAINS, draws=DRAWS, warmup=60, seed=0, check_mixing=False
    ),
    "pymc": lambda: copula.fit(
        _pairs_release(), backend="pymc", chains=CHAINS, draws=DRAWS, warmup=60, seed=0, check_mixing=False
    ),
    "dpcopula": lambda: copula.fit_dpcopula(
        _dpcopula_release(), chains=CHAINS, draws=DRAWS, warmup=60, seed=0, check_mixing=False
    ),
}


#: The PyMC route's case compiles a PyMC model (8.5 s): make test-full; the NumPyro route and dpcopula stay fast.
_PARAMS = [pytest.param(name, marks=pytest.mark.slow) if name == "pymc" else name for name in sorted(CASES)]


@pytest.fixture(scope="module", params=_PARAMS)
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any, Any]:
    """(name, the fit's result, its copy read back from a netCDF file)."""
    with warnings.catch_warnings():
        # PyMC's NumPyro sampler says so when the chains outnumber the JAX devices (and runs them one by one)
        warnings.filterwarnings("ignore", "There are not enough devices to run parallel chains", UserWarning)
        fit = CASES[request.param]()
    path = tmp_path_factory.mktemp("nc") / f"{request.param}.nc"
    fit.to_netcdf(str(path))
    return request.param, fit, az.from_netcdf(str(path))


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def _off_diagonal(fit: Any) -> dict[str, list[Any]]:
    """ArviZ coords selecting one pair of R (the posterior stores the pairs only)."""
    post = group(fit, "posterior")
    return {"pair": [post["pair"].values[0]]}


def test_arviz_takes_the_result_and_its_copy(case: tuple[str, Any, Any]) -> None:
    name, fit, back = case
    import xarray as xr

    for res in (fit, back):
        assert type(res) is (xr.DataTree if ARVIZ_1 else az.InferenceData) and is_result(res)
        table = az.summary(res, var_names=["R"], coords=_off_diagonal(res))
        assert len(table) == 1 and {"mean", "sd", "ess_bulk", "r_hat"} <= set(table.columns)
        post = group(res, "posterior")
        pairs = copula.pair_draws(res)  # no constant entry: ESS and R-hat are finite numbers
        ess, rhat = az.ess(pairs, method="bulk"), az.rhat(pairs)
        assert ess["R"].shape == (3,) and np.all(np.asarray(ess["R"]) > 0) and np.all(np.isfinite(rhat["R"]))
        sub = post[["R"]].sel(_off_diagonal(res))
        np.testing.assert_allclose(np.asarray(az.ess(sub, method="bulk")["R"]).ravel(), np.asarray(ess["R"])[:1])
        if ARVIZ_1:
            pc = az.plot_trace(res, var_names=["R"], coords=_off_diagonal(res), backend="matplotlib")
            assert pc.viz["figure"].item() is not None
        else:
            with warnings.catch_warnings():
                # ArviZ 0.23's trace plot calls a matplotlib helper deprecated in matplotlib 3.11 (its issue)
                warnings.filterwarnings("ignore", ".*alias_mapping to normalize_kwargs", DeprecationWarning)
                axes = az.plot_trace(res, var_names=["R"], coords=_off_diagonal(res))
            assert np.asarray(axes).size >= 2
        plt.close("all")
    assert set(group_names(back)) == set(group_names(fit)) >= {"posterior", "sample_stats", "log_likelihood"}
    if name == "dpcopula":
        assert {"margin_0", "margin_1", "margin_2"} <= set(group(back, "posterior").data_vars)


def test_netcdf_copy_reads_as_the_fit(case: tuple[str, Any, Any], tmp_path: Path) -> None:
    name, fit, back = case
    for g in group_names(fit):
        for var in group(fit, g).data_vars:
            np.testing.assert_array_equal(np.asarray(group(back, g)[var]), np.asarray(group(fit, g)[var]))
    kind = "copula.fit_dpcopula" if name == "dpcopula" else "copula.fit"
    assert results.fit_kind(back) == results.fit_kind(fit) == kind
    assert results.settings(back) == results.settings(fit) and results.settings(back).chains == CHAINS
    assert results.release(back) == results.release(fit) is not None
    np.testing.assert_array_equal(results.draws(back), results.draws(fit, "R"))
    assert results.draws(back).shape == (CHAINS * DRAWS, 3)  # the pairs
    assert copula.functional(back, lambda r: r).shape == (CHAINS * DRAWS, 3, 3)
    for a, b in zip(results.interval(back, 0.9), results.interval(fit, 0.9), strict=True):
        np.testing.assert_array_equal(a, b)
    assert results.diagnostics(back) == pytest.approx(results.diagnostics(fit), nan_ok=True)
    table = results.summary(back, var_names=["R"])
    pd.testing.assert_frame_equal(table, results.summary(fit, var_names=["R"]))
    results.plot(back, tmp_path / "trace.png", var_names=["R"])  # the pairs only: no constant entry to warn of
    assert (tmp_path / "trace.png").read_bytes()[:4] == b"\x89PNG"
    # the copula's own readers, on the copy
    pd.testing.assert_frame_equal(copula.pair_summary(back, 0.9), copula.pair_summary(fit, 0.9), rtol=1e-12)
    cols = [str(c) for c in fit.attrs["noiseaware_columns"]]
    np.testing.assert_allclose(
        copula.partial_slope(back, cols[1], cols[0], [cols[2]]), copula.partial_slope(fit, 1, 0, [2]), rtol=1e-12
    )
    fig = copula.plot_pairs(back, tmp_path / "pairs.png")
    assert (tmp_path / "pairs.png").read_bytes()[:4] == b"\x89PNG"
    assert fig.axes[0].get_title().startswith("Bayes-NA posterior, n = 400")
    if name == "dpcopula":
        for a, b in zip(copula.margin_draws(back), copula.margin_draws(fit), strict=True):
            np.testing.assert_array_equal(a, b)
        for f, g in zip(copula.synthesize(fit, 50, draws=2, seed=1), copula.synthesize(back, 50, draws=2, seed=1),
                        strict=True):
            pd.testing.assert_frame_equal(f, g)


def test_loo_reads_the_pairs_log_likelihood(case: tuple[str, Any, Any]) -> None:
    """The pointwise terms are stored by the fit itself (no lazy group): ``az.loo`` works on the file's copy too."""
    _, fit, back = case
    ll = np.asarray(group(back, "log_likelihood")["pairs"])
    release = results.release(fit)
    component = release.components[0] if release.statistic == "dpcopula" else release
    R = copula.functional(fit, lambda r: r).reshape((*ll.shape[:2], 3, 3))
    np.testing.assert_allclose(ll, copula.pointwise_log_likelihood(component, R))
    with warnings.catch_warnings():
        # Pareto-k advice on 120 draws: ArviZ's remark about a short run, not a failure
        warnings.filterwarnings("ignore", ".*Pareto", UserWarning)
        warnings.filterwarnings("ignore", ".*posterior variance of the log predictive", UserWarning)
        loo = az.loo(back)
    assert np.isfinite(loo.elpd if ARVIZ_1 else loo.elpd_loo)
