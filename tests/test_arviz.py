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

import noiseaware as na
from noiseaware import results
from noiseaware._engine import group, group_names

ARVIZ_1 = int(az.__version__.split(".")[0]) >= 1

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _copula() -> Any:
    from noiseaware import copula
    from noiseaware.datasets import demo_copula_data

    x, _, _ = demo_copula_data(seed=1, n=400)
    rel = na.privatize(x[:, :3], statistic="median_pairs", epsilon=2.0, rng=np.random.default_rng(0))
    return copula.fit(rel, chains=2, draws=60, warmup=60, seed=0, check_mixing=False)


def _dpcopula() -> Any:
    from noiseaware import copula

    cov = [[1, 0.6, 0.3], [0.6, 1, 0.2], [0.3, 0.2, 1]]
    x = np.random.default_rng(0).multivariate_normal([0, 0, 0], cov, size=400)
    doms = [{"lower": -4.0, "upper": 4.0, "bins": 8}] * 3
    rel = na.privatize(
        x, statistic="dpcopula", epsilon=4.0, correlation="median", domains=doms, rng=np.random.default_rng(1)
    )
    return copula.fit_dpcopula(rel, chains=2, draws=60, warmup=60, seed=0, check_mixing=False)


# The Dirichlet fits below have the shapes and settings of the examples in the docstrings of
# ``dirichlet.fit`` and ``dirichlet.dpmcmc``, so they reuse those compiled programs (JAX's in-memory cache in one
# process, the persistent cache across the test workers) instead of compiling their own.
def _dirichlet() -> Any:
    from noiseaware import dirichlet

    x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=500)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(1))
    return dirichlet.fit(rel, chains=2, draws=60, warmup=60, seed=0, moments="asymptotic", check_mixing=False)


def _dpmcmc() -> Any:
    from noiseaware import dirichlet

    x = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=200)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, threshold=1e-3, rng=np.random.default_rng(1))
    return dirichlet.dpmcmc(rel, chains=2, draws=60, warmup=60, seed=0, check_mixing=False)


def _augment() -> Any:
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    from noiseaware.augment import AugmentationModel, mechanism_log_density, sample
    from noiseaware.mechanisms import GeometricMechanism

    n = 20

    def model(n: int) -> None:
        pi = numpyro.sample("pi", dist.Dirichlet(jnp.ones(4)))
        with numpyro.plate("records", n):
            numpyro.sample("x", dist.Categorical(pi))

    aug = AugmentationModel(
        statistic=lambda x, s: jax.nn.one_hot(x, 4),
        log_density=mechanism_log_density(GeometricMechanism(scale=3.0)),
        model=model,
        model_args=(n,),
        posterior=lambda key, x, theta: {"pi": jax.random.dirichlet(key, 1.0 + jnp.bincount(x, length=4))},
    )
    return sample(aug, np.array([10, -2, 5, 6]), chains=2, draws=60, warmup=30, seed=0, check_mixing=False)


def _covariance() -> Any:
    from noiseaware import covariance

    x = np.random.default_rng(0).uniform(-1, 1, size=(400, 2))
    rel = na.privatize(x, statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    return covariance.fit(rel, chains=2, draws=60, warmup=60, seed=1, check_mixing=False)


# The hierarchy and regression fits are those of docs/published-hierarchy.md (tests/hierarchy/test_docs.py) and of
# tests/regression/test_fit.py, release and settings alike: their NUTS programs (the release's numbers are their
# arguments) are compiled once in the fast suite; a second fit reuses them from the engine's program cache in the
# same worker, and from JAX's persistent cache in the other.
def _hierarchy() -> Any:
    from noiseaware import hierarchy

    rel = hierarchy.synthetic_nmf(1, 2, 3, rng=2).release
    return hierarchy.fit(rel, chains=2, draws=300, warmup=300, seed=1, check_mixing=False)


def _regression() -> Any:
    from noiseaware import regression

    g = np.random.default_rng(0)
    x = np.clip(g.normal(0.0, 0.4, size=(3000, 2)), -1, 1)
    y = np.clip(0.1 + x @ [0.5, -0.3] + 0.2 * g.normal(size=3000), -1, 1)
    rel = na.privatize(np.column_stack([x, y]), statistic="regression", response="x2", bound=1.0, rho=1.0,
                       method="ssp", rng=g)
    return regression.fit(rel, chains=2, draws=300, warmup=300, seed=3, check_mixing=False)


#: Each fit (the kind it records in ``attrs["noiseaware_result"]``), and its ``log_likelihood`` group:
#: "pointwise" (one term per released value, what az.loo leaves out), "per part" (one term per released
#: statistic vector: a single one here), or None (latent-record samplers, and the covariance fits' one joint
#: observation of correlated entries).
FITS: dict[str, tuple[Callable[[], Any], str | None]] = {
    "copula.fit": (_copula, "pointwise"),
    "copula.fit_dpcopula": (_dpcopula, "pointwise"),
    "dirichlet.fit": (_dirichlet, "per part"),
    "dirichlet.dpmcmc": (_dpmcmc, None),
    "augment.sample": (_augment, None),
    "covariance.fit": (_covariance, None),
    "hierarchy.fit": (_hierarchy, None),
    "regression.fit": (_regression, None),
}


@pytest.fixture(scope="module", params=sorted(FITS))
def fitted(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any, str | None]]:
    make, has_loglik = FITS[request.param]
    yield request.param, make(), has_loglik


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
    post = _post(fit)
    if var == "R":
        # a correlation matrix's diagonal is constant (ArviZ cannot draw a density of a constant, for any
        # sampler's LKJ draws): plot one off-diagonal entry, chosen with ArviZ's own coords
        row, col = (str(d) for d in post["R"].dims[2:])
        coords = {row: [post[row].values[0]], col: [post[col].values[1]]}
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
    assert ll.shape[:2] == (2, 60) and ll.ndim == 3 and np.all(np.isfinite(ll))
    loo = az.loo(fit)
    assert np.isfinite(loo.elpd_loo if not ARVIZ_1 else loo.elpd)
    if not ARVIZ_1:
        assert np.isfinite(az.waic(fit).elpd_waic)
    table = az.compare({"a": fit, "b": fit.sel(draw=slice(0, 59))})
    assert sorted(table.index) == ["a", "b"]


def test_copula_pointwise_terms_sum_to_the_composite_likelihood() -> None:
    from noiseaware import copula

    fit = _copula()
    release = results.release(fit)
    R = np.asarray(_post(fit)["R"])[0, :5]
    terms = copula.pointwise_log_likelihood(release, R)
    model = __import__("noiseaware.copula._model", fromlist=["_numpyro_model"])._numpyro_model(
        release, copula.LKJPrior()
    )
    total = np.array([float(model.loglik_pairs(r)) for r in R])
    np.testing.assert_allclose(terms.sum(-1), total, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(group(fit, "log_likelihood")["pairs"])[0, :5], terms, rtol=1e-12)


def test_the_log_likelihood_group_survives_selection_and_a_file(tmp_path: Path) -> None:
    fit = _copula()
    full = np.asarray(group(fit, "log_likelihood")["pairs"])  # stored by the fit itself
    assert full.shape == (2, 60, 3)
    sub = fit.sel(draw=slice(0, 9))
    np.testing.assert_array_equal(np.asarray(group(sub, "log_likelihood")["pairs"]), full[:, :10])
    fit.to_netcdf(str(tmp_path / "fit.nc"))
    back = az.from_netcdf(str(tmp_path / "fit.nc"))
    np.testing.assert_array_equal(np.asarray(group(back, "log_likelihood")["pairs"]), full)


def test_dpcopula_fit_log_likelihood_is_that_of_its_median_pairs_component() -> None:
    from noiseaware import copula

    fit = _dpcopula()
    R = np.asarray(_post(fit)["R"])
    expect = copula.pointwise_log_likelihood(results.release(fit).components[0], R)
    np.testing.assert_allclose(np.asarray(group(fit, "log_likelihood")["pairs"]), expect, rtol=1e-12)
