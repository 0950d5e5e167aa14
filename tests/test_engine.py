"""The sampling engine (noiseaware._engine): one convention, one result type, shared machinery.

* every fit takes the convention's arguments keyword-only, in one order, with one set of defaults
  (read off ``inspect.signature``), and returns the host stack's own result container;
* bad settings give the same error, from the one validator, for every fit (before any compile);
* ``noiseaware.results``' interval, summary, diagnostics and settings against direct computations,
  on a result as built and as read back from a netCDF file;
* one ``check_mixing`` and one ``MixingWarning``; a deliberately short run warns;
* dual averaging against an independent scalar transcription of Hoffman & Gelman (2014) eq. (6),
  and the warmup-then-freeze adaptation reaching its target;
* the program cache.
"""

from __future__ import annotations

import inspect
import math
import re
import typing
import warnings

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

import noiseaware as na
from noiseaware import _engine, results
from noiseaware._engine import (
    NUTS_ADVICE,
    MixingBlock,
    ProgramCache,
    SamplingSettings,
    _adapt,
    check_mixing,
    check_settings,
    finish_fit,
    from_groups,
    group,
    is_result,
    release_attrs,
    standard_stats,
)
from noiseaware._validation import owner_scope
from noiseaware.augment import AugmentationModel
from noiseaware.augment import _sample as augment_sample
from noiseaware.copula import _dpcopula_fit as copula_synth
from noiseaware.copula import _fit as copula_fit
from noiseaware.covariance import _fit as covariance_fit
from noiseaware.dirichlet import _dpmcmc, _dpmcmc_moves
from noiseaware.dirichlet import _fit as dirichlet_fit
from noiseaware.exceptions import MixingWarning, NoiseawareTypeError, NoiseawareValueError
from noiseaware.hierarchy import _fit as hierarchy_fit
from noiseaware.hierarchy import synthetic_nmf
from noiseaware.regression import _fit as regression_fit

# (public name, function, owner in messages, the kind recorded in the result's attrs["noiseaware_result"])
FITS = [
    ("copula.fit", copula_fit.fit, "copula.fit", "copula.fit"),
    ("copula.fit_dpcopula", copula_synth.fit_dpcopula, "fit_dpcopula", "copula.fit_dpcopula"),
    ("dirichlet.fit", dirichlet_fit.fit, "dirichlet.fit", "dirichlet.fit"),
    ("dirichlet.dpmcmc", _dpmcmc.dpmcmc, "dpmcmc", "dirichlet.dpmcmc"),
    ("dirichlet.dpmcmc_batch", _dpmcmc.dpmcmc_batch, "dpmcmc", "dirichlet.dpmcmc"),
    ("augment.sample", augment_sample.sample, "sample", "augment.sample"),
    ("covariance.fit", covariance_fit.fit, "covariance.fit", "covariance.fit"),
    ("hierarchy.fit", hierarchy_fit.fit, "hierarchy.fit", "hierarchy.fit"),
    ("regression.fit", regression_fit.fit, "regression.fit", "regression.fit"),
]
IDS = [f[0] for f in FITS]
SETTING_NAMES = SamplingSettings.names()


def test_the_fits_are_the_public_ones() -> None:
    assert na.copula.fit is copula_fit.fit and na.copula.fit_dpcopula is copula_synth.fit_dpcopula
    assert na.dirichlet.fit is dirichlet_fit.fit and na.dirichlet.dpmcmc is _dpmcmc.dpmcmc
    assert na.dirichlet.dpmcmc_batch is _dpmcmc.dpmcmc_batch
    assert na.augment.sample is augment_sample.sample and na.covariance.fit is covariance_fit.fit
    assert na.hierarchy.fit is hierarchy_fit.fit
    assert na.regression.fit is regression_fit.fit


def _regression_release() -> typing.Any:
    g = np.random.default_rng(5)
    x = np.clip(g.normal(0.0, 0.4, size=(300, 1)), -1, 1)
    data = np.column_stack([x, np.clip(0.5 * x[:, 0] + 0.2 * g.normal(size=300), -1, 1)])
    return na.privatize(data, statistic="regression", response="x1", bound=1.0, rho=1.0, rng=g)


# ----------------------------------------------------------------------------- the convention
@pytest.mark.parametrize(("name", "fn", "owner", "result"), FITS, ids=IDS)
def test_same_names_defaults_and_keyword_only_position(name, fn, owner, result) -> None:
    params = inspect.signature(fn).parameters
    kw_only = [p for p in params.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    # the convention's arguments open the keyword-only block, in one order
    assert tuple(p.name for p in kw_only[: len(SETTING_NAMES)]) == SETTING_NAMES, name
    assert {p.name: p.default for p in kw_only[: len(SETTING_NAMES)]} == SamplingSettings.defaults(), name
    assert not any(p.name in SETTING_NAMES for p in params.values() if p.kind is not inspect.Parameter.KEYWORD_ONLY)


@pytest.mark.parametrize(("name", "fn", "owner", "result"), FITS, ids=IDS)
def test_every_fit_documents_the_host_container_it_returns(name, fn, owner, result) -> None:
    ret = typing.get_type_hints(fn)["return"]
    cls = typing.get_args(ret)[0] if typing.get_origin(ret) is list else ret
    # no result class of the package's own: the host's container (typed Any: DataTree or InferenceData)
    assert not (isinstance(cls, type) and cls.__module__.startswith("noiseaware")), (name, ret)
    returns = fn.__doc__.split("Returns\n", 1)[-1] if "Returns\n" in fn.__doc__ else fn.__doc__
    assert "DataTree" in returns and "InferenceData" in returns, name


def test_defaults_are_the_documented_ones() -> None:
    assert SamplingSettings.defaults() == {
        "chains": 4,
        "draws": 1000,
        "warmup": 1000,
        "seed": None,
        "progressbar": False,
        "target_accept": None,
        "check_mixing": True,
    }
    st = check_settings()
    assert (st.chains, st.draws, st.warmup, st.progressbar, st.check_mixing) == (4, 1000, 1000, False, True)
    assert st.target_accept == _engine.NUTS_TARGET_ACCEPT == 0.8
    assert check_settings(default_target=_engine.RWM_TARGET_ACCEPT).target_accept == 0.3
    assert check_settings(target_accept=0.95, default_target=0.3).target_accept == 0.95


@pytest.mark.parametrize(("name", "fn", "owner", "result"), FITS, ids=IDS)
def test_settings_are_spelled_out_and_shown_everywhere(name, fn, owner, result) -> None:
    """Every setting in the ``def``, ``help()`` and the numpydoc entries (the wording: tests/test_signatures.py)."""
    from numpydoc.docscrape import FunctionDoc

    assert inspect.getfullargspec(inspect.unwrap(fn)).varkw is None, name
    assert set(SETTING_NAMES) <= set(inspect.getfullargspec(inspect.unwrap(fn)).kwonlyargs), name
    documented = [p.name for p in FunctionDoc(fn)["Parameters"]]
    for setting in SETTING_NAMES:
        assert any(setting in entry.replace(" ", "").split(",") for entry in documented), (name, setting)
    assert "chains: 'int' = 4" in str(inspect.signature(fn))


@pytest.mark.parametrize(("name", "fn", "owner", "result"), FITS, ids=IDS)
def test_unknown_keywords_and_extra_positionals_are_refused_first(name, fn, owner, result) -> None:
    # None is no valid first argument: the call must fail on the keyword before reading it
    unknown = r"\(\) got an unexpected keyword argument 'chain'(\. Did you mean 'chains'\?)?$"  # Python's own
    with pytest.raises(TypeError, match=r"^" + fn.__name__ + unknown):
        fn(None, None, chain=2) if name in {"augment.sample"} else fn(None, chain=2)
    with pytest.raises(TypeError, match="positional argument"):
        fn(None, None, None, 4)


def test_check_settings_refuses_a_name_that_is_not_a_setting() -> None:
    with pytest.raises(TypeError, match=r"^check_settings\(\) got an unexpected keyword argument 'chain'"):
        check_settings(chain=2)  # type: ignore[call-arg]


def test_seed_none_draws_a_recorded_seed() -> None:
    a, b = check_settings(), check_settings()
    assert not a.seed_given and 0 <= a.seed < 2**31 and a.seed != b.seed  # P(equal) = 2**-31
    given = check_settings(seed=7)
    assert given.seed_given and given.seed == 7 and given.as_attrs()["noiseaware_seed"] == 7


# ----------------------------------------------------------------------------- bad settings, every fit
def _table_model(n: int) -> None:
    pi = numpyro.sample("pi", dist.Dirichlet(jnp.ones(2)))
    with numpyro.plate("records", n):
        numpyro.sample("x", dist.Categorical(pi))


@pytest.fixture(scope="module")
def valid_args() -> dict[str, tuple[tuple, dict]]:
    """A valid first argument for every fit, so that only the bad setting can fail."""
    rng = np.random.default_rng(0)
    z = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=300)
    pairs = na.privatize(z, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(1))
    dpc = na.privatize(
        z,
        statistic="dpcopula",
        epsilon=2.0,
        correlation="median",
        domains=[{"lower": -4.0, "upper": 4.0, "bins": 10}] * 2,
        rng=np.random.default_rng(2),
    )
    logmean = na.privatize(
        rng.dirichlet([2.0, 3.0, 4.0], size=200),
        statistic="dirichlet_logmean",
        epsilon=1.0,
        threshold=1e-3,
        rng=np.random.default_rng(3),
    )
    cov = na.privatize(
        rng.uniform(-1, 1, size=(200, 2)), statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(4)
    )
    aug = AugmentationModel(
        statistic=lambda x, s: jnp.stack([x == 0, x == 1]).astype(jnp.float64),
        log_density=lambda s_dp, s: -jnp.sum(jnp.abs(s_dp - s)),
        model=_table_model,
        model_args=(10,),
    )
    return {
        "copula.fit": ((pairs,), {}),
        "copula.fit_dpcopula": ((dpc,), {}),
        "dirichlet.fit": ((logmean,), {}),
        "dirichlet.dpmcmc": ((logmean,), {}),
        "dirichlet.dpmcmc_batch": (([logmean],), {}),
        "augment.sample": ((aug, np.array([6.0, 4.0])), {}),
        "covariance.fit": ((cov,), {}),
        "hierarchy.fit": ((synthetic_nmf(1, 2, 2, rng=5).release,), {}),
        "regression.fit": ((_regression_release(),), {}),
    }


BAD = [
    ("chains", 0, NoiseawareValueError, "must be an integer >= 1"),
    ("draws", -1, NoiseawareValueError, "must be an integer >= 1"),
    ("warmup", -5, NoiseawareValueError, "must be an integer >= 0"),
    ("seed", "x", NoiseawareTypeError, "must be an integer"),
    ("seed", -1, NoiseawareValueError, "must be an integer >= 0"),
    ("target_accept", 1.5, NoiseawareValueError, "must be in (0, 1)"),
    ("progressbar", "yes", NoiseawareTypeError, "must be True or False"),
    ("check_mixing", 1, NoiseawareTypeError, "must be True or False"),
]


@pytest.mark.parametrize(("setting", "value", "error", "rule"), BAD, ids=[f"{b[0]}={b[1]!r}" for b in BAD])
@pytest.mark.parametrize(("name", "fn", "owner", "result"), FITS, ids=IDS)
def test_bad_settings_one_error_shape(valid_args, name, fn, owner, result, setting, value, error, rule) -> None:
    args, kwargs = valid_args[name]
    expected = f"{owner}: {setting} {rule}; got {setting}={value!r}."
    with pytest.raises(error) as info:
        fn(*args, **kwargs, **{setting: value})
    assert str(info.value) == expected
    assert type(info.value) is error


CORES_FITS = [f for f in FITS if "cores" in inspect.signature(f[1]).parameters]


def test_cores_has_one_meaning_in_every_fit_that_takes_it() -> None:
    """One text and one reading (``pymc_cores``): None is PyMC's default_cores, refused under NumPyro."""
    from noiseaware._engine._settings import CORES_DOC

    assert {f[0] for f in CORES_FITS} == {
        "copula.fit", "dirichlet.fit", "covariance.fit", "hierarchy.fit", "regression.fit"
    }
    for name, fn, _, _ in CORES_FITS:
        doc = " ".join(fn.__doc__.split())
        assert "cores : int, optional " + CORES_DOC in doc, name
    assert _engine.pymc_cores("pymc", None) is None and _engine.pymc_cores("pymc", 3) == 3
    with pytest.raises(NoiseawareValueError, match=r"^x.fit: cores must be an integer >= 1; got cores=0.$"):
        with owner_scope("x.fit"):
            _engine.pymc_cores("pymc", 0)


@pytest.mark.parametrize(("name", "fn", "owner", "result"), CORES_FITS, ids=[f[0] for f in CORES_FITS])
def test_cores_is_refused_with_the_numpyro_backend(valid_args, name, fn, owner, result) -> None:
    args, kwargs = valid_args[name]
    expected = f"{owner}: cores applies to backend='pymc' only; got cores=2."
    with pytest.raises(NoiseawareValueError) as info:
        fn(*args, **kwargs, backend="numpyro", cores=2)
    assert str(info.value) == expected


# ----------------------------------------------------------------------------- the result type
def _idata(rng: np.random.Generator, chains: int = 3, draws: int = 400) -> typing.Any:
    return from_groups(
        {
            "posterior": {
                "mu": rng.normal(1.0, 2.0, size=(chains, draws)),
                "v": rng.normal(size=(chains, draws, 2)),
            },
            "sample_stats": {
                "acceptance_rate": np.full((chains, draws), 0.75),
                "diverging": np.arange(chains * draws).reshape(chains, draws) % 100 == 0,
            },
        }
    )


def _host_type() -> type:
    import xarray as xr

    return xr.DataTree if int(az.__version__.split(".")[0]) >= 1 else az.InferenceData


def test_results_functions_against_direct_computations(tmp_path) -> None:
    rng = np.random.default_rng(1)
    res = standard_stats(_idata(rng))
    assert type(res) is _host_type() and is_result(res)
    stats = group(res, "sample_stats")
    assert "accept_rate" in stats and "acceptance_rate" not in stats
    post = group(res, "posterior")
    v = post["v"].values.reshape(-1, 2)
    np.testing.assert_array_equal(results.draws(res, "v"), v)
    lo, hi = results.interval(res, 0.8, var="v")
    np.testing.assert_allclose(lo, np.quantile(v, 0.1, axis=0))
    np.testing.assert_allclose(hi, np.quantile(v, 0.9, axis=0))
    lo_mu, hi_mu = results.interval(res)  # default: the first variable, 95%
    np.testing.assert_allclose([lo_mu, hi_mu], np.quantile(post["mu"].values, [0.025, 0.975]))
    table = results.summary(res, var_names=["mu"])
    assert list(table.index) == ["mu"] and {"mean", "sd", "ess_bulk", "r_hat"} <= set(table.columns)
    assert float(table.loc["mu", "mean"]) == pytest.approx(float(post["mu"].mean()), abs=1e-2)
    d = results.diagnostics(res)
    assert d["divergences"] == 12 and d["accept_rate"] == pytest.approx(0.75)
    ess = az.ess(post, method="bulk")
    assert d["ess_bulk_min"] == pytest.approx(min(float(ess["mu"]), float(ess["v"].min())))
    assert d["r_hat_max"] == pytest.approx(max(float(az.rhat(post)["mu"]), float(az.rhat(post)["v"].max())))
    with pytest.raises(NoiseawareValueError, match=r"results.interval: var must name a posterior variable"):
        results.interval(res, var="nope")
    with pytest.raises(NoiseawareValueError, match=r"level must be in \(0, 1\); got level=1.0"):
        results.interval(res, 1.0)
    with pytest.raises(NoiseawareTypeError, match=r"results.draws: result must be a fit's result"):
        results.draws(np.zeros(3))
    results.plot(res, tmp_path / "trace.png", var_names=["mu"])
    assert (tmp_path / "trace.png").stat().st_size > 0


def test_a_result_read_back_from_a_file_is_read_alike(tmp_path) -> None:
    """What a fit records lives in the container's attrs: the functions read a file's copy the same."""
    rng = np.random.default_rng(2)
    rel = na.privatize(rng.normal(size=(50, 2)), statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(3))
    st = check_settings(chains=3, draws=400, warmup=10, seed=7, check_mixing=False)
    block = MixingBlock.nuts("NUTS on mu", "mu is the toy parameter.")
    res = finish_fit("toy.fit", _idata(rng), st, check=["v"], block=block, default_var="v",
                     attrs=release_attrs(rel))
    path = tmp_path / "fit.nc"
    res.to_netcdf(str(path))
    back = az.from_netcdf(str(path))
    assert type(back) is _host_type()
    assert results.settings(back) == results.settings(res) == st
    assert results.fit_kind(back) == "toy.fit" and results.release(back) == rel
    np.testing.assert_array_equal(results.draws(back), results.draws(res, "v"))  # default_var survives
    for a, b in zip(results.interval(back, 0.5), results.interval(res, 0.5), strict=True):
        np.testing.assert_array_equal(a, b)
    assert results.diagnostics(back) == results.diagnostics(res)
    plain = from_groups({"posterior": {"mu": np.zeros((1, 5))}})
    assert results.settings(plain) is None and results.release(plain) is None and results.fit_kind(plain) is None


# ----------------------------------------------------------------------------- mixing
def test_one_mixing_check_everywhere() -> None:
    assert na.augment.check_mixing is check_mixing  # the public name is a re-export
    for mod in (augment_sample, _dpmcmc, dirichlet_fit, copula_fit, covariance_fit, hierarchy_fit, regression_fit):
        src = inspect.getsource(mod)
        assert "def check_mixing" not in src and "MixingWarning(" not in src, mod.__name__
    rng = np.random.default_rng(3)
    walk = from_groups({"posterior": {"theta": np.cumsum(rng.normal(size=(2, 300)), axis=1)}})
    texts = []
    for owner in ("copula.fit", "dpmcmc"):
        with pytest.warns(MixingWarning) as rec:
            check_mixing(walk, owner=owner)
        texts.append(str(rec[0].message))
    assert texts[0].startswith("copula.fit: poor mixing; need bulk ESS >= 100 per chain (200 here)")
    assert texts[0].removeprefix("copula.fit") == texts[1].removeprefix("dpmcmc")  # one text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_mixing(from_groups({"posterior": {"theta": rng.normal(size=(2, 300))}})) == []


def test_finish_fit_records_the_run_wraps_it_and_checks_mixing_when_asked() -> None:
    rng = np.random.default_rng(4)
    block = MixingBlock.nuts("NUTS on theta", "theta is the toy parameter.")
    assert block == MixingBlock("NUTS on theta", NUTS_ADVICE, "theta is the toy parameter.")

    def walk() -> typing.Any:
        return from_groups(
            {
                "posterior": {"theta": np.cumsum(rng.normal(size=(2, 300)), axis=1)},
                "sample_stats": {"acceptance_rate": np.full((2, 300), 0.5)},
            }
        )

    st = check_settings(chains=2, draws=300, warmup=10, seed=7)
    expected = r"^toy\.fit: poor mixing in NUTS on theta; need bulk ESS .* theta is the toy parameter\. .*NUTS alone"
    with pytest.warns(MixingWarning, match=expected), owner_scope("toy.fit"):
        res = finish_fit("toy.fit", walk(), st, check=["theta"], block=block, attrs={"x": 1})
    assert type(res) is _host_type() and results.fit_kind(res) == "toy.fit" and results.settings(res) == st
    assert res.attrs["x"] == 1 and res.attrs["noiseaware_seed"] == 7 and "accept_rate" in group(res, "sample_stats")
    quiet = check_settings(chains=2, draws=300, warmup=10, seed=7, check_mixing=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = finish_fit("toy.fit", walk(), quiet, check=["theta"], block=block)
    assert results.settings(res) == quiet and "x" not in res.attrs


def test_a_deliberately_short_run_warns_and_records_its_settings() -> None:
    """augment.sample with 2 x 20 draws cannot reach a bulk ESS of 200 (at most ~N log10 N = 64): it must warn."""
    aug = AugmentationModel(
        statistic=lambda x, s_dp: jax.nn.one_hot(x, 2),
        log_density=lambda s_dp, s: -jnp.sum(jnp.abs(s_dp - s)) / 2.0,
        latent=lambda key, th: jax.random.categorical(key, jnp.log(th["pi"]), shape=(10,)),
        posterior=lambda key, x, th: {"pi": jax.random.dirichlet(key, 1.0 + jnp.bincount(x, length=2))},
    )
    init = {"pi": np.array([0.5, 0.5])}
    gibbs = r"^sample: poor mixing in the data-augmentation Gibbs .*; need bulk ESS >= 100 per chain \(200 here\)"
    with pytest.warns(MixingWarning, match=gibbs):
        res = augment_sample.sample(aug, np.array([6.0, 4.0]), init=init, chains=2, draws=20, warmup=5)
    st = results.settings(res)
    assert is_result(res) and group(res, "posterior")["pi"].shape == (2, 20, 2)
    assert not st.seed_given and res.attrs["noiseaware_seed"] == st.seed
    again = augment_sample.sample(
        aug, np.array([6.0, 4.0]), init=init, chains=2, draws=20, warmup=5, seed=st.seed, check_mixing=False
    )
    np.testing.assert_array_equal(results.draws(again, "pi"), results.draws(res, "pi"))  # the seed repeats it
    d = results.diagnostics(res)
    assert d["ess_bulk_min"] < 200 and d["accept_rate"] > 0


def _short_runs() -> list[tuple[str, object]]:
    """A tiny, deliberately short run of every fit (2 chains x 20 draws)."""
    rng = np.random.default_rng(0)
    z = rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=300)
    pairs = na.privatize(z, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(1))
    dpc = na.privatize(
        z,
        statistic="dpcopula",
        epsilon=2.0,
        correlation="median",
        domains=[{"lower": -4.0, "upper": 4.0, "bins": 10}] * 2,
        rng=np.random.default_rng(2),
    )
    logmean = na.privatize(
        rng.dirichlet([2.0, 3.0], size=3),
        statistic="dirichlet_logmean",
        epsilon=4.0,
        threshold=0.05,
        rng=np.random.default_rng(3),
    )
    big = na.privatize(
        rng.dirichlet([2.0, 3.0, 4.0], size=500),
        statistic="dirichlet_logmean",
        epsilon=1.0,
        rng=np.random.default_rng(3),
    )
    cov = na.privatize(
        rng.uniform(-1, 1, size=(200, 2)), statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(4)
    )
    aug = AugmentationModel(
        statistic=lambda x, s: jax.nn.one_hot(x, 2),
        model=_table_model,
        model_args=(10,),
        log_density=lambda s_dp, s: -jnp.sum(jnp.abs(s_dp - s)),
    )
    return [
        ("copula.fit", lambda **kw: copula_fit.fit(pairs, **kw)),
        ("copula.fit_dpcopula", lambda **kw: copula_synth.fit_dpcopula(dpc, **kw)),
        ("dirichlet.fit", lambda **kw: dirichlet_fit.fit(big, moments="asymptotic", **kw)),
        ("dirichlet.dpmcmc", lambda **kw: _dpmcmc.dpmcmc(logmean, **kw)),
        ("dirichlet.dpmcmc_batch", lambda **kw: _dpmcmc.dpmcmc_batch([logmean], **kw)[0]),
        ("augment.sample", lambda **kw: augment_sample.sample(aug, np.array([6.0, 4.0]), **kw)),
        ("covariance.fit", lambda **kw: covariance_fit.fit(cov, **kw)),
        ("hierarchy.fit", lambda **kw: hierarchy_fit.fit(synthetic_nmf(1, 2, 2, rng=5).release, **kw)),
        ("regression.fit", lambda **kw: regression_fit.fit(_regression_release(), **kw)),
    ]


@pytest.mark.slow  # compiles every fit (minutes on 2 cores)
def test_every_fit_checks_mixing_and_returns_its_result_with_settings() -> None:
    kinds = {name: kind for name, _, _, kind in FITS}
    owners = {name: owner for name, _, owner, _ in FITS}
    for name, run in _short_runs():
        block = rf"^{re.escape(owners[name])}: poor mixing in [^;]*; need bulk ESS >= 100"
        with pytest.warns(MixingWarning, match=block):
            res = run(chains=2, draws=20, warmup=20, seed=1)
        assert is_result(res) and results.fit_kind(res) == kinds[name], name
        st = results.settings(res)
        assert st.seed == 1 and st.chains == 2 and res.attrs["noiseaware_seed"] == 1
        stats = group(res, "sample_stats")
        assert "accept_rate" in stats and "acceptance_rate" not in stats
        lo, hi = results.interval(res, 0.9)
        assert np.all(lo <= hi), name
        assert len(results.summary(res)) > 0 and set(results.diagnostics(res)) >= {"accept_rate", "ess_bulk_min"}


# ----------------------------------------------------------------------------- dual averaging
def _reference_dual_averaging(probs: list[float], target: float) -> list[tuple[float, float]]:
    """Hoffman & Gelman (2014) §3.2 eq. (6), one scalar at a time, mu = log 1 (t0=10, kappa=0.75, gamma=0.05)."""
    t0, kappa, gamma, mu = 10.0, 0.75, 0.05, 0.0
    h_bar, x_bar, out = 0.0, 0.0, []
    for m, p in enumerate(probs, start=1):
        h_bar = (1 - 1 / (m + t0)) * h_bar + (target - p) / (m + t0)
        x = mu - math.sqrt(m) / gamma * h_bar
        eta = m ** (-kappa)
        x_bar = eta * x + (1 - eta) * x_bar
        out.append((x, x_bar))
    return out


def test_dual_averaging_matches_the_paper() -> None:
    probs = list(np.random.default_rng(7).uniform(size=50))
    ref = _reference_dual_averaging(probs, 0.3)
    g = xbar = jnp.zeros(())
    for i, p in enumerate(probs):
        x, xbar, g = _adapt.dual_averaging(jnp.asarray(i), p, 0.3, g, xbar)
        assert float(x) == pytest.approx(ref[i][0], rel=1e-12) and float(xbar) == pytest.approx(ref[i][1], rel=1e-12)
    # and the comparison has teeth: another target gives other iterates
    assert _reference_dual_averaging(probs, 0.8)[-1][0] != pytest.approx(ref[-1][0], rel=1e-3)


def test_adapt_step_reaches_its_target_then_freezes() -> None:
    """A move whose acceptance is exp(-h) (h the step size): after warmup, exp(-h) ~ target, elementwise."""
    targets = jnp.asarray([0.3, 0.8])
    s = _adapt.init_adaptation((2,))
    frozen = None
    for i in range(400):
        s = _adapt.adapt_step(s, jnp.asarray(i), jnp.exp(-jnp.exp(s.log_step)), targets, 300)
        if i == 299:
            frozen = s
    np.testing.assert_allclose(np.exp(-np.exp(np.asarray(s.log_step))), targets, atol=0.03)
    np.testing.assert_array_equal(np.asarray(s.log_step), np.asarray(frozen.log_step))  # unchanged after warmup
    np.testing.assert_array_equal(np.asarray(frozen.log_step), np.asarray(frozen.x_avg))  # the averaged iterate


def test_augment_and_dpmcmc_share_the_engine_adaptation() -> None:
    assert augment_sample.adapt_step is _adapt.adapt_step and _dpmcmc_moves.adapt_step is _adapt.adapt_step
    assert augment_sample.dual_averaging is _adapt.dual_averaging
    sources = [inspect.getsource(m) for m in (_dpmcmc, _dpmcmc_moves, augment_sample)]
    assert not re.search(r"def dual_averaging|_DA_T0", "".join(sources))


# ----------------------------------------------------------------------------- cache
def test_program_cache_lru_and_unhashable_keys() -> None:
    cache, built = ProgramCache(maxsize=2), []

    def build(k):
        return lambda: built.append(k) or f"p{k}"

    assert cache.get(1, build(1)) == "p1" and cache.get(1, build(1)) == "p1" and built == [1]
    cache.get(2, build(2))
    cache.get(1, build(1))  # 1 most recent
    cache.get(3, build(3))  # evicts 2
    assert 2 not in cache and 1 in cache and len(cache) == 2
    cache.get(2, build(2))
    assert built == [1, 2, 3, 2] and cache.info == {"hits": 2, "misses": 4}
    assert cache.get([1], build(9)) == "p9" and [1] not in cache  # unhashable: built, not kept
    cache.clear()
    assert len(cache) == 0 and cache.info == {"hits": 0, "misses": 0}
    assert dirichlet_fit._PROGRAMS.maxsize == 16 and isinstance(_dpmcmc._PROGRAMS, ProgramCache)


# ----------------------------------------------------------------------------- compiler options
def _reduce_over_records(x: typing.Any) -> typing.Any:
    return jnp.sum(x * x - x / (1.0 + x * x), axis=0)  # a sum over the records axis of an (n, d) array


def _ynn_fusions(compiled: typing.Any) -> int:
    return compiled.as_text().count("__ynn_fusion")


def test_engine_jit_keeps_reductions_out_of_ynn_fusions_where_xla_would_fuse_them() -> None:
    x = jnp.ones((5000, 3))  # XLA fuses reductions into YNNPACK from about 2000 x 3 elements
    if _engine._compile.compiler_options() is None:
        pytest.skip("this jaxlib does not accept the option (the programs get XLA's defaults)")
    if _ynn_fusions(jax.jit(_reduce_over_records).lower(x).compile()) == 0:
        pytest.skip("XLA's defaults do not use YNN fusions for this reduction in this jaxlib")
    # XLA's defaults fuse the reduction into YNNPACK; the engine's options must keep it out
    assert _ynn_fusions(_engine.jit(_reduce_over_records).lower(x).compile()) == 0


def test_engine_jit_falls_back_to_xla_defaults_when_the_option_is_unknown(monkeypatch) -> None:
    from noiseaware._engine import _compile

    monkeypatch.setattr(_compile, "CPU_OPTIONS", {"xla_cpu_no_such_option_in_any_jaxlib": "1"})
    _compile.compiler_options.cache_clear()
    try:
        assert _compile.compiler_options() is None
        assert float(_compile.jit(lambda v: v + 1.0)(jnp.ones(()))) == 2.0
    finally:
        _compile.compiler_options.cache_clear()


def test_engine_jit_env_switch_gives_xla_defaults(monkeypatch) -> None:
    from noiseaware._engine import _compile

    monkeypatch.setenv(na.config.XLA_DEFAULTS_ENV, "1")
    _compile.compiler_options.cache_clear()
    try:
        assert _compile.compiler_options() is None
    finally:
        _compile.compiler_options.cache_clear()
    monkeypatch.delenv(na.config.XLA_DEFAULTS_ENV)
    assert _compile.compiler_options() in (None, _compile.CPU_OPTIONS)


def _spy_on_jit(monkeypatch: pytest.MonkeyPatch, module: typing.Any) -> list:
    """Record the functions ``module`` compiles through the engine's ``jit`` (still compiling them)."""
    seen: list = []
    real = module.jit

    def spy(fn, **kw):
        seen.append(fn)
        return real(fn, **kw)

    monkeypatch.setattr(module, "jit", spy)
    return seen


def test_dpmcmc_program_is_compiled_with_the_engine_options(monkeypatch) -> None:
    seen = _spy_on_jit(monkeypatch, _dpmcmc_moves)  # its _vectorize compiles dpmcmc's program
    static = _dpmcmc._Static(b=20, d=3, chains=2, releases=1, joint=True, alpha_given_records=True,
                             sampler=_dpmcmc.DEFAULT_SAMPLER, exact=True)
    _dpmcmc._program(static, None, move_factory=_dpmcmc._joint_move_surrogate)
    assert len(seen) == 2  # init and advance


def test_augment_sampler_is_compiled_with_the_engine_options(monkeypatch) -> None:
    seen = _spy_on_jit(monkeypatch, augment_sample)
    program = augment_sample._jit_vmap(lambda v: v * 2.0)
    assert len(seen) == 1 and np.allclose(program(jnp.arange(3.0)), [0.0, 2.0, 4.0])
