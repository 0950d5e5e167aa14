"""The results of dirichlet.fit, dirichlet.dpmcmc and augment.sample are the host's own container.

For a tiny fit of each kind: ``az.summary``, ``az.plot_trace``, the netCDF round trip
(``to_netcdf`` / ``az.from_netcdf``) and, on the file's copy, the functions of
``noiseaware.results`` and of ``noiseaware.dirichlet`` give what they give on the fit itself --
under ArviZ 1 (an ``xarray.DataTree``) and ArviZ 0.x (an ``arviz.InferenceData``), with warnings
as errors (pyproject). The fits have the shapes and settings of the examples in the docstrings
of ``dirichlet.fit`` and ``dirichlet.dpmcmc`` (and of ``tests/test_arviz.py``), so they reuse
those compiled programs.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import arviz as az
import numpy as np
import pytest

import noiseaware as na
from noiseaware import dirichlet, results
from noiseaware._engine import arviz_major, from_groups, group, has_group, release_attrs
from noiseaware.dirichlet._result import NO_POINTWISE
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _dirichlet_fit() -> tuple[Any, Any]:
    x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=500)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(1))
    return rel, dirichlet.fit(rel, chains=2, draws=60, warmup=60, seed=0, moments="asymptotic", check_mixing=False)


def _dpmcmc() -> tuple[Any, Any]:
    x = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=200)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, threshold=1e-3, rng=np.random.default_rng(1))
    return rel, dirichlet.dpmcmc(rel, chains=2, draws=60, warmup=60, seed=0, check_mixing=False)


def _augment() -> tuple[Any, Any]:
    import jax
    import jax.numpy as jnp

    from noiseaware.augment import AugmentationModel, sample

    n = 20
    rel = na.privatize(np.array([6, 4, 5, 5]), statistic="counts", epsilon=1.0, sensitivity=2,
                       rng=np.random.default_rng(0))
    aug = AugmentationModel(
        statistic=lambda x, s: jax.nn.one_hot(x, 4),
        latent=lambda key, th: jax.random.categorical(key, jnp.log(th["pi"]), shape=(n,)),
        posterior=lambda key, x, theta: {"pi": jax.random.dirichlet(key, 1.0 + jnp.bincount(x, length=4))},
    )
    fit = sample(aug, rel, init={"pi": np.full(4, 0.25)}, chains=2, draws=60, warmup=30, seed=0, check_mixing=False)
    return rel, fit


FITS: dict[str, Callable[[], tuple[Any, Any]]] = {
    "dirichlet.fit": _dirichlet_fit,
    "dirichlet.dpmcmc": _dpmcmc,
    "augment.sample": _augment,
}


@pytest.fixture(scope="module", params=sorted(FITS))
def fitted(request: pytest.FixtureRequest) -> tuple[str, Any, Any]:
    rel, fit = FITS[request.param]()
    return request.param, rel, fit


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def _plot_trace(fit: Any) -> None:
    with warnings.catch_warnings():
        # ArviZ 0.23's trace plot calls a helper that matplotlib 3.11 deprecates (ArviZ's issue, not the fit's)
        warnings.filterwarnings("ignore", ".*alias_mapping to normalize_kwargs", DeprecationWarning)
        if arviz_major() >= 1:
            out = az.plot_trace(fit, backend="matplotlib")
            fig = out.viz["figure"].item()
        else:
            fig = np.asarray(az.plot_trace(fit)).ravel()[0].figure
    assert len(fig.axes) >= 2


def test_result_goes_through_arviz_and_a_netcdf_file(fitted: tuple[str, Any, Any], tmp_path: Path) -> None:
    import xarray as xr

    kind, rel, fit = fitted
    assert type(fit) is (xr.DataTree if arviz_major() >= 1 else az.InferenceData)  # never a subclass
    assert results.fit_kind(fit) == kind and results.release(fit) == rel
    var = "alpha" if kind.startswith("dirichlet") else "pi"
    assert fit.attrs.get("noiseaware_default_var", var) == var

    table = az.summary(fit)
    assert {"mean", "sd", "ess_bulk", "r_hat"} <= set(table.columns)
    assert any(str(row).startswith(f"{var}[") for row in table.index)
    _plot_trace(fit)

    path = tmp_path / "fit.nc"
    fit.to_netcdf(str(path))
    copy = az.from_netcdf(str(path))
    assert type(copy) is type(fit)
    assert results.fit_kind(copy) == kind and results.settings(copy) == results.settings(fit)
    assert results.release(copy) == rel
    np.testing.assert_array_equal(results.draws(copy, var), results.draws(fit, var))
    np.testing.assert_array_equal(results.draws(copy), results.draws(fit))
    for got, want in zip(results.interval(copy, 0.9, var), results.interval(fit, 0.9, var), strict=True):
        np.testing.assert_allclose(got, want)
    assert results.diagnostics(copy) == pytest.approx(results.diagnostics(fit), nan_ok=True)
    summary = results.summary(copy, var_names=[var])
    # atol: ArviZ 0.x's az.summary rounds to 3 decimals by default (results.summary under ArviZ 1 does not round)
    np.testing.assert_allclose(summary["mean"].to_numpy(dtype=float), results.draws(fit, var).mean(axis=0),
                               rtol=1e-12, atol=0 if arviz_major() >= 1 else 1e-3)
    results.plot(copy, str(tmp_path / "trace.png"), var_names=[var])
    assert (tmp_path / "trace.png").stat().st_size > 1000
    assert set(group(copy, "sample_stats").data_vars) == set(group(fit, "sample_stats").data_vars)

    if kind.startswith("dirichlet"):
        np.testing.assert_allclose(dirichlet.posterior_mean(copy), dirichlet.posterior_mean(fit), rtol=1e-15)
        np.testing.assert_allclose(
            results.draws(copy, "composition").sum(axis=1), 1.0, rtol=1e-12
        )
        pr, pr_fit = dirichlet.prior(copy), dirichlet.prior(fit)
        np.testing.assert_array_equal(pr.shape, pr_fit.shape)
        np.testing.assert_array_equal(pr.rate, pr_fit.rate)
        assert pr.corr is None and pr_fit.corr is None and json.loads(copy.attrs["noiseaware_prior"])["kind"] == "p1"
        parts, expected = dirichlet.observed_parts(copy), dirichlet.parts(rel)
        assert len(parts) == len(expected) == 1
        np.testing.assert_array_equal(parts[0].s_l, expected[0].s_l)
    if kind == "dirichlet.fit":
        assert copy.attrs["noiseaware_moments"] == "asymptotic" and copy.attrs["noiseaware_backend"] == "numpyro"
    if kind.startswith("dirichlet"):  # one observed part: no log_likelihood group, and the reason kept in the file
        assert not has_group(copy, "log_likelihood")
        assert copy.attrs["noiseaware_log_likelihood"] == fit.attrs["noiseaware_log_likelihood"] == NO_POINTWISE
    if kind == "dirichlet.dpmcmc":
        assert copy.attrs["method"] == "DPMCMC" and int(copy.attrs["latent_records"]) == 200
    if kind == "augment.sample":
        assert copy.attrs["mechanism"] == rel.mechanism.family and int(copy.attrs["n_records"]) == 20


# ----------------------------------------------------------------------------- the functions on stand-ins
def _stand_in(**attrs: Any) -> Any:
    a = np.random.default_rng(0).gamma(3.0, size=(2, 40, 3))
    post = {"alpha": a, "composition": a / a.sum(-1, keepdims=True)}
    return from_groups({"posterior": post}, dims={"alpha": ["part"], "composition": ["part"]}, attrs=attrs)


def test_prior_reads_back_a_copula_prior() -> None:
    from noiseaware.dirichlet import GammaCopulaPrior
    from noiseaware.dirichlet._result import prior_attrs

    corr = np.array([[1.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.0]])
    pr = GammaCopulaPrior(shape=np.array([2.0, 3.5, 1.25]), rate=np.array([0.5, 1.0, 2.0]), corr=corr)
    got = dirichlet.prior(_stand_in(**prior_attrs(pr, "p4")))
    for name in ("shape", "rate", "corr"):
        np.testing.assert_array_equal(getattr(got, name), getattr(pr, name))
    alpha = np.array([[1.0, 2.0, 3.0]])
    np.testing.assert_allclose(got.logpdf(alpha), pr.logpdf(alpha), rtol=1e-15)


def test_functions_refuse_other_results_and_missing_records() -> None:
    with pytest.raises(NoiseawareTypeError, match=r"must be the result of dirichlet\.fit or dirichlet\.dpmcmc"):
        dirichlet.posterior_mean(np.zeros((2, 3)))
    other = from_groups({"posterior": {"mu": np.zeros((2, 10))}})
    for fn in (dirichlet.posterior_mean, dirichlet.prior, dirichlet.observed_parts):
        with pytest.raises(NoiseawareTypeError, match="with a posterior variable alpha"):
            fn(other)
    bare = _stand_in(prior="user: Gamma")
    np.testing.assert_allclose(dirichlet.posterior_mean(bare), results.draws(bare, "alpha").mean(axis=0))
    with pytest.raises(NoiseawareValueError, match=r"must record its prior .* got fit='a result with the prior user"):
        dirichlet.prior(bare)
    with pytest.raises(NoiseawareValueError, match="must record its release and observed parts"):
        dirichlet.observed_parts(bare)
    with pytest.raises(NoiseawareValueError, match="must be the JSON record the fit wrote"):
        dirichlet.prior(_stand_in(noiseaware_prior="{not json"))


def test_observed_parts_of_a_split_release() -> None:
    x = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=400)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, split=0.25, rng=np.random.default_rng(1))
    both = dirichlet.observed_parts(_stand_in(**release_attrs(rel), noiseaware_observed_parts=[0, 1]))
    last = dirichlet.observed_parts(_stand_in(**release_attrs(rel), noiseaware_observed_parts=[1]))
    assert [p.n for p in both] == [100, 300] and [p.n for p in last] == [300]
    np.testing.assert_array_equal(last[0].s_l, dirichlet.parts(rel)[1].s_l)
