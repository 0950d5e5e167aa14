"""The hierarchy as a part of a user's model, in NumPyro and PyMC; its pointwise log-likelihood; LOO; netCDF.

* :func:`~noiseaware.hierarchy.numpyro_counts` and :func:`~noiseaware.hierarchy.pymc_counts` compose
  with a user's own log-rates (a tract covariate's slope) and sample; their ``counts`` meet the exact
  totals and their ``measurements`` term gives one log-likelihood per released measurement.
* :func:`~noiseaware.hierarchy.pointwise_log_likelihood` against an independent NumPy computation
  (explicit sums over the tree, the discrete Gaussian pmf normalised by a brute-force sum).
* ``hierarchy.fit`` stores it as the ``log_likelihood`` group, so ``az.loo`` / ``az.compare`` work on
  either stack, and the result's settings and log-likelihood survive a netCDF round trip.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import arviz as az
import numpy as np
import pytest
from scipy.special import logsumexp

from noiseaware import hierarchy, results
from noiseaware._engine import group, group_names
from noiseaware._engine._x64 import float64
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError
from noiseaware.hierarchy import NoisyHierarchy

ARVIZ_1 = int(az.__version__.split(".")[0]) >= 1


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    # LOO's Pareto-k advice on a short run is ArviZ's warning about the run, not a failure (see the docs on
    # what LOO over measurements means here)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Pareto.*", category=UserWarning)
        warnings.filterwarnings("ignore", message=".*posterior variance of the log predictive.*", category=UserWarning)
        warnings.filterwarnings("ignore", message=".*number of samples is too small.*", category=UserWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        # ArviZ 0.23's az.compare calls a pandas 3.1 deprecation (its issue, not the fit's)
        warnings.filterwarnings("ignore", ".*inplace keyword in DataFrame.sort_values", Warning)
        yield


def _release() -> NoisyHierarchy:
    """One state, two counties of two tracts, two cells: 8 leaf cells, 20 noisy measurements."""
    return hierarchy.synthetic_nmf(1, 2, 2, cells=("a", "b"), mean_population=8.0, rng=3).release


def _covariate(rel: NoisyHierarchy) -> np.ndarray:
    """A made-up tract covariate: the log of each tract's noisy total (public enough for a test)."""
    return np.log1p(np.maximum(rel.values[-1][:, 0], 0)).astype(np.float64)


# ------------------------------------------------------------------ the pointwise log-likelihood
def _reference_log_likelihood(rel: NoisyHierarchy, counts: np.ndarray) -> np.ndarray:
    """Independent: each unit's counts summed leaf by leaf in Python, the pmf normalised by a brute-force sum."""
    L, Q = len(rel.levels), len(rel.queries)
    anc = []  # anc[lev][t]: the unit of level lev above leaf t
    for t in range(len(rel.units[-1])):
        chain = [t]
        for p in reversed(rel.parents):
            chain.insert(0, int(p[chain[0]]))
        anc.append(chain)
    k = np.arange(-2000, 2001, dtype=np.float64)
    out = []
    for draw in counts.reshape(-1, *counts.shape[-2:]):
        terms = []
        for lev in range(L):
            for u in range(len(rel.units[lev])):
                for q in range(Q):
                    var = float(rel.variance[lev, q])
                    if var == 0:
                        continue
                    below = [t for t in range(len(anc)) if anc[t][lev] == u]
                    mu = sum(float(draw[t].sum()) if q == 0 else float(draw[t, q - 1]) for t in below)
                    d = float(rel.values[lev][u, q]) - mu
                    terms.append(-d * d / (2 * var) - logsumexp(-k * k / (2 * var)))
        out.append(terms)
    return np.asarray(out).reshape(*counts.shape[:-2], -1)


def test_pointwise_log_likelihood_matches_an_independent_pmf_at_real_and_integer_counts() -> None:
    rel = _release()
    data = hierarchy.model_data(rel)
    rng = np.random.default_rng(0)
    total = int(rel.values[0][0, 0])
    integer = rng.multinomial(total, np.full(8, 1 / 8), size=(2, 3)).reshape(2, 3, 4, 2)
    real = rng.dirichlet(np.ones(8), size=(2, 3)).reshape(2, 3, 4, 2) * (total + 4.0) - 0.5
    for counts in (integer, real):
        ours = hierarchy.pointwise_log_likelihood(data, counts)
        assert ours.shape == (2, 3, rel.n_measurements) == (2, 3, 20) and ours.dtype == np.float64
        np.testing.assert_allclose(ours, _reference_log_likelihood(rel, counts), rtol=1e-12, atol=1e-12)
    # a wrong count moves exactly the terms of the measurements above its leaf cell (tract, county, state cell
    # and the tract's and county's totals)
    moved = integer[0, 0].copy()
    moved[1, 0] += 1
    diff = hierarchy.pointwise_log_likelihood(data, moved) != hierarchy.pointwise_log_likelihood(data, integer[0, 0])
    assert int(diff.sum()) == 5
    with pytest.raises(NoiseawareValueError, match=r"counts must have shape \(\.\.\., 4, 2\)"):
        hierarchy.pointwise_log_likelihood(data, np.zeros((3, 2)))
    with pytest.raises(NoiseawareValueError, match="counts must be finite"):
        hierarchy.pointwise_log_likelihood(data, np.full((4, 2), np.nan))


# ------------------------------------------------------------------ NumPyro: the model part
def _numpyro_user_model(data: Any, x: np.ndarray) -> Any:
    import numpyro
    import numpyro.distributions as dist

    def user_model(y: Any = None) -> Any:
        a = numpyro.sample("a", dist.Normal(0.0, 2.0).expand([data.n_cells]).to_event(1))
        b = numpyro.sample("b", dist.Normal(0.0, 1.0))
        tau = numpyro.sample("tau", dist.HalfNormal(0.5))
        z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([data.n_units[-1], data.n_cells]).to_event(2))
        log_rate = numpyro.deterministic("log_rate", a + b * x[:, None] + tau * z)
        return hierarchy.numpyro_counts(data, log_rate, y)

    return user_model


@float64  # the NumPyro laws need float64 (a user script calls noiseaware.config.configure() once)
@pytest.mark.slow  # make test-full: NUTS compiled for a user model (10 s from empty caches); numpyro_counts runs in
# make test inside hierarchy.model (the relaxed fits of tests/hierarchy/test_fit.py)
def test_numpyro_counts_composes_with_a_covariate_slope_and_gives_pointwise_terms() -> None:
    import jax
    from numpyro import handlers
    from numpyro.infer import MCMC, NUTS

    rel = _release()
    data = hierarchy.model_data(rel)
    user = _numpyro_user_model(data, _covariate(rel))
    # the site's terms are pointwise_log_likelihood's at the site's counts, and the model returns the counts
    tr = handlers.trace(handlers.seed(user, 0)).get_trace()
    counts = np.asarray(tr["counts"]["value"])
    assert tr["measurements"]["is_observed"] and counts.shape == (4, 2)
    np.testing.assert_allclose(np.asarray(tr["measurements"]["fn"].log_prob(tr["measurements"]["value"])),
                               hierarchy.pointwise_log_likelihood(data, counts), rtol=1e-12)
    assert abs(counts.sum() - rel.values[0][0, 0]) < 1e-9
    mcmc = MCMC(NUTS(user), num_warmup=150, num_samples=150, num_chains=1, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(1))
    draws = mcmc.get_samples()
    assert np.all(np.abs(np.asarray(draws["counts"]).sum(axis=(1, 2)) - rel.values[0][0, 0]) < 1e-9)
    assert np.isfinite(np.asarray(draws["b"])).all()
    idata = az.from_numpyro(mcmc, log_likelihood=True)
    ll = np.asarray(group(idata, "log_likelihood")["measurements"])
    assert ll.shape == (1, 150, 20)
    np.testing.assert_allclose(ll[0], hierarchy.pointwise_log_likelihood(data, np.asarray(draws["counts"])),
                               rtol=1e-10)
    loo = az.loo(idata)
    assert np.isfinite(float(loo.elpd if ARVIZ_1 else loo["elpd_loo"]))


@float64
def test_the_model_parts_refuse_log_rates_of_the_wrong_shape() -> None:
    import jax.numpy as jnp
    import pymc as pm
    from numpyro import handlers

    rel = _release()
    data = hierarchy.model_data(rel)
    with pytest.raises(NoiseawareValueError, match=r"log_rate must have shape \(4, 2\)"):
        handlers.seed(lambda: hierarchy.numpyro_counts(data, jnp.zeros((2, 4))), 0)()
    with pm.Model(), pytest.raises(NoiseawareValueError, match=r"log_rate must have shape \(4, 2\)"):
        hierarchy.pymc_counts(data, np.zeros((4, 3)))
    with pytest.raises(NoiseawareTypeError, match=r"data must be a hierarchy\.ModelData or a NoisyHierarchy"):
        hierarchy.pymc_model({"y": 1})
    with pytest.raises(NoiseawareValueError, match="prior must be one of"):
        hierarchy.pymc_model(rel, prior="flat")


# ------------------------------------------------------------------ PyMC: the model part
@pytest.mark.slow  # make test-full: PyMC compiles and samples a user model (14 s from empty caches); the doctest of
# pymc_counts and test_pymc_model_is_numpyro_model_term_for_term keep the PyMC part in make test
def test_pymc_counts_composes_with_a_covariate_slope_and_gives_pointwise_terms() -> None:
    import pymc as pm

    rel = _release()
    data = hierarchy.model_data(rel)
    x = _covariate(rel)
    with pm.Model() as m:
        a = pm.Normal("a", 0.0, 2.0, shape=data.n_cells)
        b = pm.Normal("b", 0.0, 1.0)
        tau = pm.HalfNormal("tau", 0.5)
        z = pm.Normal("z", 0.0, 1.0, shape=(data.n_units[-1], data.n_cells))
        counts = hierarchy.pymc_counts(rel, a + b * x[:, None] + tau * z)  # the release itself is accepted
        assert [v.name for v in m.observed_RVs] == ["measurements"] and counts.name == "counts"
        idata = pm.sample(60, tune=60, chains=1, cores=1, random_seed=2, progressbar=False,
                          compute_convergence_checks=False)
        pm.compute_log_likelihood(idata, progressbar=False)
    draws = results.draws(idata, "counts")
    assert draws.shape == (60, 4, 2) and np.all(np.abs(draws.sum(axis=(1, 2)) - rel.values[0][0, 0]) < 1e-9)
    ll = np.asarray(group(idata, "log_likelihood")["measurements"])
    assert ll.shape == (1, 60, 20)
    np.testing.assert_allclose(ll[0], hierarchy.pointwise_log_likelihood(data, draws), rtol=1e-10)
    loo = az.loo(idata)
    assert np.isfinite(float(loo.elpd if ARVIZ_1 else loo["elpd_loo"]))


@float64
@pytest.mark.slow  # make test-full: PyMC compiles the model's log-density (20 s from empty caches); pymc_model's
# doctest builds it in make test
def test_pymc_model_is_numpyro_model_term_for_term() -> None:
    from numpyro.infer.util import log_density

    rel = _release()
    data = hierarchy.model_data(rel)
    m = hierarchy.pymc_model(rel)
    assert [v.name for v in m.free_RVs] == ["sigma_county", "sigma_tract", "eta_county", "profile", "log_rate"]
    point = m.initial_point(random_seed=4)
    point = {k: v + 0.3 * np.random.default_rng(5).standard_normal(np.shape(v)) for k, v in point.items()}
    logp = m.compile_logp(jacobian=False)(point)
    # the same point in NumPyro's constrained values: PyMC's sigma_*_log__, profile_simplex__ transforms undone
    values = {
        "sigma_county": np.exp(point["sigma_county_log__"]), "sigma_tract": np.exp(point["sigma_tract_log__"]),
        "eta_county": point["eta_county"], "log_rate": point["log_rate"],
        "profile": m.rvs_to_transforms[m["profile"]].backward(point["profile_simplex__"]).eval(),
    }
    lp, _ = log_density(hierarchy.model, (data,), {}, values)
    np.testing.assert_allclose(float(lp), float(logp), rtol=1e-10)


# ------------------------------------------------------------------ the fit's result
@pytest.fixture(scope="module")
def fitted() -> tuple[NoisyHierarchy, Any]:
    rel = _release()
    return rel, hierarchy.fit(rel, chains=2, draws=100, warmup=100, seed=3, prior="uniform", check_mixing=False)


def test_fit_stores_one_log_likelihood_term_per_measurement_and_loo_works(fitted: tuple[NoisyHierarchy, Any]) -> None:
    rel, fit = fitted
    data = hierarchy.model_data(rel)
    assert "log_likelihood" in group_names(fit)
    ll = group(fit, "log_likelihood")["measurements"]
    assert ll.dims == ("chain", "draw", "measurement") and ll.shape == (2, 100, 20)
    assert list(ll["measurement"].values[:3]) == ["state/s0/a", "state/s0/b", "county/s0-c0/total"]
    assert list(ll["level"].values).count("tract") == 12 and set(ll["query"].values) == {"total", "a", "b"}
    counts = np.asarray(group(fit, "posterior")["counts"])
    np.testing.assert_allclose(ll.values, hierarchy.pointwise_log_likelihood(data, counts), rtol=1e-12)
    np.testing.assert_array_equal(group(fit, "observed_data")["measurements"].values, data.y)
    tied = _tied_tails(ll.values) | _tied_tails(ll.values[:, :50])  # az.compare below also reads the first half
    if ARVIZ_1 and tied.any():
        # arviz-stats (ArviZ 1) refuses a measurement whose log-likelihood is constant over the upper tail of its
        # importance ratios, as integer counts on one or two values give (ArviZ 0.x and R's loo warn and leave its
        # weights unsmoothed); docs/published-hierarchy.md says so. The rest go through az.loo and az.compare.
        assert np.asarray(group(fit, "posterior")["counts"]).dtype.kind == "i"
        fit = fit.sel(measurement=ll["measurement"].values[~tied])
    loo = az.loo(fit)
    assert np.isfinite(float(loo.elpd if ARVIZ_1 else loo["elpd_loo"]))
    table = az.compare({"a": fit, "b": fit.sel(draw=slice(0, 49))})
    assert sorted(table.index) == ["a", "b"]


def _tied_tails(ll: np.ndarray) -> np.ndarray:
    """Per measurement: whether the largest ``-log p`` draws (PSIS's right tail) are all equal.

    PSIS's tail has ``n / 5`` draws, or ``3 sqrt(n / r_eff)`` when ``n r_eff > 225``: for ``r_eff <= 1`` at
    least the shorter of ``n / 5`` and ``3 sqrt(n)``, whose ties this finds (a tie of a longer tail is one of it).
    """
    x = -ll.reshape(-1, ll.shape[-1])
    n = x.shape[0]
    tail = int(min(n // 5, np.floor(3 * np.sqrt(n))))
    top = np.sort(x, axis=0)[-tail:]
    return np.asarray(top.max(axis=0) == top.min(axis=0))


def test_settings_and_log_likelihood_survive_a_netcdf_round_trip(
    fitted: tuple[NoisyHierarchy, Any], tmp_path: Path
) -> None:
    _, fit = fitted
    path = tmp_path / "fit.nc"
    fit.to_netcdf(str(path))
    backs = [az.from_netcdf(str(path))]
    if ARVIZ_1:
        import xarray as xr

        backs.append(xr.open_datatree(str(path)))
    for back in backs:
        assert results.settings(back) == results.settings(fit) is not None
        assert results.fit_kind(back) == "hierarchy.fit"
        ll_back = group(back, "log_likelihood")["measurements"]
        np.testing.assert_array_equal(ll_back.values, group(fit, "log_likelihood")["measurements"].values)
        assert list(ll_back["unit"].values) == list(group(fit, "log_likelihood")["unit"].values)


@pytest.mark.slow  # two relaxed fits: PyMC compiles its model, NumPyro its NUTS (about 30 s of CPU)
@pytest.mark.parametrize("backend", ["numpyro", "pymc"])
def test_the_relaxed_route_stores_the_same_log_likelihood_group(backend: str) -> None:
    rel = _release()
    fit = hierarchy.fit(rel, chains=2, draws=60, warmup=60, seed=3, prior="uniform", method="relaxed",
                        backend=backend, check_mixing=False)
    counts = np.asarray(group(fit, "posterior")["counts"])
    assert counts.dtype == np.float64
    ll = group(fit, "log_likelihood")["measurements"]
    assert ll.dims == ("chain", "draw", "measurement") and ll.shape == (2, 60, 20)
    np.testing.assert_allclose(ll.values, hierarchy.pointwise_log_likelihood(hierarchy.model_data(rel), counts),
                               rtol=1e-12)
    assert np.isfinite(float(getattr(az.loo(fit), "elpd" if ARVIZ_1 else "elpd_loo")))
