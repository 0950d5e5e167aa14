"""Every fit type goes straight into ArviZ, as ``pm.sample``'s result does, on either supported stack.

One small fit per result type; each is the host's own container (an ``xarray.DataTree`` under ArviZ 1,
an ``arviz.InferenceData`` under ArviZ 0.x) and is run through ``az.summary``, ``az.ess``, ``az.rhat``,
``az.hdi``, ``az.plot_trace``, ``az.plot_posterior`` (``az.plot_dist`` under ArviZ 1, which has no
``plot_posterior``), a netCDF round trip, and ``az.loo`` / ``az.waic`` (ArviZ 0.x only: ArviZ 1 has no
WAIC) / ``az.compare`` where the fit stores a pointwise log-likelihood. Part of the compatibility suite
(``make test-compat``) on the previous stack.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import arviz as az
import numpy as np
import pytest

from noiseaware import results
from noiseaware._engine import group, group_names

ARVIZ_1 = int(az.__version__.split(".")[0]) >= 1

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from tests.conftest import FITS  # noqa: E402  (the fits, shared with test_arviz_clean)


@pytest.fixture(scope="module", params=sorted(FITS))
def fitted(request: pytest.FixtureRequest, shared_fit: Callable[[str], Any]) -> Iterator[tuple[str, Any, str | None]]:
    _, has_loglik = FITS[request.param]
    yield request.param, shared_fit(request.param), has_loglik


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    # ESS / R-hat of a constant entry (a correlation matrix's diagonal) divide 0 by 0; loo's Pareto-k
    # warnings on 120 draws are ArviZ's advice about a short run, not failures
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.filterwarnings("ignore", message=".*Pareto.*", category=UserWarning)
        warnings.filterwarnings("ignore", message=".*posterior variance of the log predictive.*", category=UserWarning)
        warnings.filterwarnings("ignore", message=".*more axes than.*", category=UserWarning)
        warnings.filterwarnings("ignore", message=".*appears to have a single value.*", category=UserWarning)
        # ArviZ 0.23's own calls into matplotlib 3.11 and pandas 3.1 deprecations (its issue, not the fit's)
        warnings.filterwarnings("ignore", ".*alias_mapping to normalize_kwargs", DeprecationWarning)
        warnings.filterwarnings("ignore", ".*inplace keyword in DataFrame.sort_values", Warning)
        yield
    plt.close("all")


def _var(fit: Any) -> str:
    default = fit.attrs.get("noiseaware_default_var")
    return str(default) if default is not None else str(next(iter(group(fit, "posterior").data_vars)))


def _post(fit: Any) -> Any:
    return group(fit, "posterior")


def test_is_the_host_container(fitted: tuple[str, Any, str | None]) -> None:
    import xarray as xr

    kind, fit, _ = fitted
    assert type(fit) is (xr.DataTree if ARVIZ_1 else az.InferenceData)  # never a subclass
    assert results.fit_kind(fit) == kind
    assert results.settings(fit) is not None and results.settings(fit).chains == 2
    if not ARVIZ_1:
        assert az.convert_to_inference_data(fit) is fit


def test_summary_ess_rhat_hdi(fitted: tuple[str, Any, str | None]) -> None:
    _, fit, _ = fitted
    var = _var(fit)
    table = az.summary(fit, var_names=[var])
    assert {"mean", "sd", "ess_bulk", "r_hat"} <= set(table.columns) and len(table) > 0
    ess, rhat, hdi = az.ess(fit, var_names=[var]), az.rhat(fit, var_names=[var]), az.hdi(fit, var_names=[var])
    if ARVIZ_1:  # DataTrees with the posterior's statistics
        ess, rhat, hdi = (group(x, "posterior") if "posterior" in group_names(x) else x for x in (ess, rhat, hdi))
    draws = np.asarray(_post(fit)[var])
    assert ess[var].shape == draws.shape[2:] and rhat[var].shape == draws.shape[2:]
    assert np.nanmax(np.asarray(ess[var])) > 0
    lo, hi = np.moveaxis(np.asarray(hdi[var]), -1, 0)
    assert np.all(lo <= hi)
    # the same numbers as on the bare posterior Dataset
    np.testing.assert_allclose(
        np.asarray(az.ess(_post(fit)[[var]])[var]), np.asarray(ess[var]), equal_nan=True
    )
    # and the package's own helpers agree with ArviZ
    assert results.diagnostics(fit)["ess_bulk_min"] == pytest.approx(float(np.nanmin(np.asarray(ess[var]))))


def test_plots(fitted: tuple[str, Any, str | None]) -> None:
    _, fit, _ = fitted
    var = _var(fit)
    coords = None
    if ARVIZ_1:
        pc = az.plot_trace(fit, var_names=[var], coords=coords, backend="matplotlib")
        assert pc.viz["figure"].item() is not None
        pc = az.plot_dist(fit, var_names=[var], coords=coords, backend="matplotlib")
        assert pc.viz["figure"].item() is not None
    else:
        axes = az.plot_trace(fit, var_names=[var], coords=coords)
        assert np.asarray(axes).size >= 2
        axes = az.plot_posterior(fit, var_names=[var], coords=coords)
        assert np.asarray(axes).size >= 1


def test_netcdf_round_trip(fitted: tuple[str, Any, str | None], tmp_path: Path) -> None:
    kind, fit, _ = fitted
    path = tmp_path / "fit.nc"
    fit.to_netcdf(str(path))
    back = az.from_netcdf(str(path))
    assert set(group_names(back)) == set(group_names(fit))
    for name in group_names(fit):
        for var in group(fit, name).data_vars:
            np.testing.assert_array_equal(np.asarray(group(back, name)[var]), np.asarray(group(fit, name)[var]))
    # what the fit recorded survives: the package's helpers read the file's copy as the fit
    assert results.fit_kind(back) == kind and results.settings(back) == results.settings(fit)
    var = _var(fit)
    np.testing.assert_array_equal(results.draws(back), results.draws(fit, var))
    assert results.diagnostics(back) == pytest.approx(results.diagnostics(fit), nan_ok=True)


def test_selection_is_the_host_selection(fitted: tuple[str, Any, str | None]) -> None:
    _, fit, _ = fitted
    draws = _post(fit).sizes["draw"]  # 60, or 300 for the fits shared with other modules
    sub = fit.sel(draw=slice(0, 9))
    assert type(sub) is type(fit) and _post(sub).sizes["draw"] == 10
    assert _post(fit).sizes["draw"] == draws  # the original is untouched
    var = _var(fit)
    full = results.draws(fit, var)
    expect = full.reshape(2, draws, -1)[:, :10].reshape((20, *full.shape[1:]))
    np.testing.assert_array_equal(results.draws(sub, var), expect)


def test_loo_waic_compare_where_a_pointwise_likelihood_exists(fitted: tuple[str, Any, str | None]) -> None:
    _, fit, loglik = fitted
    assert ("log_likelihood" in group_names(fit)) is (loglik is not None)
    if loglik == "per part":
        return
    if loglik is None:
        with pytest.raises((TypeError, KeyError, ValueError), match=r"(?i)log.likelihood"):
            az.loo(fit)
        return
    ll = np.asarray(next(iter(group(fit, "log_likelihood").data_vars.values())))
    assert ll.shape[:2] == (2, group(fit, "posterior").sizes["draw"]) and ll.ndim == 3 and np.all(np.isfinite(ll))
    loo = az.loo(fit)
    assert np.isfinite(loo.elpd_loo if not ARVIZ_1 else loo.elpd)
    if not ARVIZ_1:
        assert np.isfinite(az.waic(fit).elpd_waic)
    table = az.compare({"a": fit, "b": fit.sel(draw=slice(0, 59))})
    assert sorted(table.index) == ["a", "b"]


def _matrices(fit: Any) -> np.ndarray:
    """The copula fit's correlation matrices ``(chain, draw, p, p)``, rebuilt from the pairs it stores."""
    from noiseaware import copula

    post = _post(fit)
    R = copula.functional(fit, lambda r: r)
    return R.reshape((post.sizes["chain"], post.sizes["draw"], *R.shape[1:]))


def test_copula_pointwise_terms_sum_to_the_composite_likelihood(shared_fit: Callable[[str], Any]) -> None:
    from noiseaware import copula

    fit = shared_fit("copula.fit")
    release = results.release(fit)
    R = _matrices(fit)[0, :5]
    terms = copula.pointwise_log_likelihood(release, R)
    model = __import__("noiseaware.copula._model", fromlist=["_numpyro_model"])._numpyro_model(
        release, copula.LKJPrior()
    )
    total = np.array([float(model.loglik_pairs(r)) for r in R])
    np.testing.assert_allclose(terms.sum(-1), total, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(group(fit, "log_likelihood")["pairs"])[0, :5], terms, rtol=1e-12)


def test_the_log_likelihood_group_survives_selection_and_a_file(
    tmp_path: Path, shared_fit: Callable[[str], Any]
) -> None:
    fit = shared_fit("copula.fit")
    full = np.asarray(group(fit, "log_likelihood")["pairs"])  # stored by the fit itself
    assert full.shape == (2, 60, 3)
    sub = fit.sel(draw=slice(0, 9))
    np.testing.assert_array_equal(np.asarray(group(sub, "log_likelihood")["pairs"]), full[:, :10])
    fit.to_netcdf(str(tmp_path / "fit.nc"))
    back = az.from_netcdf(str(tmp_path / "fit.nc"))
    np.testing.assert_array_equal(np.asarray(group(back, "log_likelihood")["pairs"]), full)


def test_dpcopula_fit_log_likelihood_is_that_of_its_median_pairs_component(shared_fit: Callable[[str], Any]) -> None:
    from noiseaware import copula

    fit = shared_fit("copula.fit_dpcopula")
    R = _matrices(fit)
    expect = copula.pointwise_log_likelihood(results.release(fit).components[0], R)
    np.testing.assert_allclose(np.asarray(group(fit, "log_likelihood")["pairs"]), expect, rtol=1e-12)
