"""dirichlet.fit (NumPyro): one compiled program per configuration, reused for new data without stale state."""

from __future__ import annotations

import numpy as np
import pytest

import noiseaware as na
from noiseaware import dirichlet as nd
from noiseaware import results
from noiseaware._core import _dirichlet as core
from noiseaware._core import get_backend
from noiseaware._engine import ProgramCache, group, group_names
from noiseaware.dirichlet import _fit

pytest.importorskip("numpyro")

# A configuration (d = 3, chains = 2, 150 + 150 iterations) that no other test uses, so the first
# call of a test module run compiles it.
CFG = {"prior": "p1", "moments": "asymptotic", "chains": 2, "draws": 150, "warmup": 150, "check_mixing": False}


def _release(alpha, n, seed, threshold=None, epsilon=4.0):
    x = np.random.default_rng(seed).dirichlet(alpha, size=n)
    kw = {} if threshold is None else {"threshold": threshold}
    return na.privatize(x, statistic="dirichlet_logmean", epsilon=epsilon, rng=np.random.default_rng(seed + 1), **kw)


@pytest.fixture
def traces(monkeypatch):
    """Count the Python traces of the model (its body runs only while JAX traces it)."""
    count = [0]
    body = _fit._model_body

    def counted(*args, **kwargs):
        count[0] += 1
        return body(*args, **kwargs)

    monkeypatch.setattr(_fit, "_model_body", counted)
    return count


def _numbers(traces):
    return {**_fit._CACHE_INFO, "traces": traces[0]}


@pytest.mark.slow  # make test-full: fits twice (8 s)
def test_second_call_with_other_data_reuses_the_compiled_program(traces):
    a = _release([2.2, 3.3, 4.4], n=5000, seed=10)
    b = _release([9.0, 3.0, 1.5], n=3000, seed=20)  # other n, a, scale and s_L
    pa, pb = nd.parts(a)[0], nd.parts(b)[0]
    assert pa.n != pb.n and pa.a != pb.a and pa.scale != pb.scale
    assert _fit._parameterization(pa) == _fit._parameterization(pb)  # the same static structure

    before = _numbers(traces)
    nd.fit(a, seed=1, **CFG)
    mid = _numbers(traces)
    assert mid["misses"] in (before["misses"], before["misses"] + 1)
    assert mid["traces"] >= before["traces"]
    nd.fit(b, seed=2, **CFG)
    after = _numbers(traces)
    # the second call neither built a sampler nor ran the model's Python (no re-trace, no compile)
    assert after["misses"] == mid["misses"]
    assert after["hits"] == mid["hits"] + 1
    assert after["traces"] == mid["traces"]


@pytest.mark.slow  # make test-full: fits three times (8 s)
def test_cached_program_uses_each_calls_data_and_keeps_no_state():
    alpha_a, alpha_b = np.array([2.2, 3.3, 4.4]), np.array([9.0, 3.0, 1.5])
    a = _release(alpha_a, n=5000, seed=10)
    b = _release(alpha_b, n=3000, seed=20)
    fa = nd.fit(a, seed=1, **CFG)
    fb = nd.fit(b, seed=2, **CFG)  # reuses the program compiled for (or before) `a`
    # each posterior sits at its own data: the compositions are ordered oppositely
    for res, truth in ((fa, alpha_a), (fb, alpha_b)):
        m = results.draws(res, "composition").mean(0)
        np.testing.assert_allclose(m, truth / truth.sum(), atol=0.03)
        z = (nd.posterior_mean(res) - truth) / results.draws(res, "alpha").std(0)
        assert np.all(np.abs(z) < 4.0), (nd.posterior_mean(res), truth)
    mean_a, mean_b = nd.posterior_mean(fa), nd.posterior_mean(fb)
    assert mean_a[0] < mean_a[2] and mean_b[0] > mean_b[2]
    np.testing.assert_array_equal(group(fb, "observed_data")["s0"].values, nd.parts(b)[0].s_l)
    # a freshly built program gives the same draws: nothing of `a` (data, warmup state) leaked into `b`
    saved = dict(_fit._PROGRAMS._programs)
    _fit._PROGRAMS._programs.clear()
    try:
        fresh = nd.fit(b, seed=2, **CFG)
    finally:
        _fit._PROGRAMS._programs.clear()
        _fit._PROGRAMS._programs.update(saved)
    np.testing.assert_allclose(results.draws(fresh, "alpha"), results.draws(fb, "alpha"), rtol=1e-9)
    # and a repeated call with the same seed repeats the run exactly (every call does its own warmup)
    again = nd.fit(b, seed=2, **CFG)
    np.testing.assert_allclose(results.draws(again, "alpha"), results.draws(fb, "alpha"), rtol=1e-9)
    np.testing.assert_array_equal(
        group(again, "sample_stats")["step_size"].values, group(fb, "sample_stats")["step_size"].values
    )


@pytest.mark.slow  # make test-full: a fit of the non-centred model (7 s)
def test_idata_groups_noncentered():
    # the release and settings of the example of fit's docstring (and of tests/test_arviz.py): one program for all
    x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=2000)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(1))
    p = nd.parts(rel)[0]
    assert _fit._parameterization(p) == "noncentered"  # wide noise: non-centred S_0
    res = nd.fit(rel, chains=2, draws=60, warmup=60, seed=0, moments="asymptotic", check_mixing=False)
    post, stats = group(res, "posterior"), group(res, "sample_stats")
    assert set(post.data_vars) == {"alpha", "composition", "s0_s0", "s0_s0_z"}
    assert dict(post["alpha"].sizes) == {"chain": 2, "draw": 60, "part": 3}
    assert set(stats.data_vars) >= {"diverging", "accept_rate", "n_steps", "step_size"}
    assert stats["diverging"].dtype == bool
    # one observed part: no log_likelihood group (tests/test_dirichlet_loglik.py checks the terms of a split release)
    s0 = post["s0_s0"].values
    assert "log_likelihood" not in group_names(res)
    # the deterministic S_0 = mu(alpha) + chol(Sigma(alpha) / n) z uses this release's n and a
    alpha = post["alpha"].values.reshape(-1, 3)
    z = post["s0_s0_z"].values.reshape(-1, 3)
    for k in (0, 77, 119):
        mean, cov = core.logmean_moments(get_backend("numpy"), alpha[k], np.log(p.a), "asymptotic")
        np.testing.assert_allclose(s0.reshape(-1, 3)[k], mean + np.linalg.cholesky(cov / p.n) @ z[k], rtol=1e-10)
    draws = results.draws(res)  # alpha, the fit's default variable
    np.testing.assert_allclose(results.draws(res, "composition"), draws / draws.sum(1, keepdims=True))


def test_cache_is_bounded_and_keyed_by_the_static_structure(monkeypatch):
    built = []

    def fake_build(st, z0, args):
        built.append(st)
        return object()

    monkeypatch.setattr(_fit, "_build_run", fake_build)
    monkeypatch.setattr(_fit, "_PROGRAMS", ProgramCache(maxsize=2))

    def key(draws):
        return _fit._Static(3, ("noncentered",), "asymptotic", False, 2, draws, 10, 0.9)

    first = _fit._sampler(key(1), {}, ())
    assert _fit._sampler(key(1), {}, ()) is first and len(built) == 1
    _fit._sampler(key(2), {}, ())
    _fit._sampler(key(1), {}, ())  # key(1) is now the most recently used
    _fit._sampler(key(3), {}, ())  # evicts key(2)
    assert list(_fit._PROGRAMS._programs) == [key(1), key(3)] and len(built) == 3
    _fit._sampler(key(2), {}, ())
    assert len(built) == 4 and len(_fit._PROGRAMS) == 2


@pytest.mark.slow  # make test-full: a fit compiled with the progress bar on (8 s)
def test_progressbar(capsys):
    # the progress bar is not part of the compiled program: CFG's program (compiled by the tests above) runs it
    rel = _release([2.2, 3.3, 4.4], n=5000, seed=10)
    res = nd.fit(rel, seed=4, progressbar=True, **CFG)
    assert results.draws(res, "alpha").shape == (2 * CFG["draws"], 3)
    assert "NUTS" in capsys.readouterr().err


def test_series_terms_follow_the_threshold_in_buckets():
    """The censoring series' length is static per program: 32 up to a ~ 0.03, more for larger thresholds."""
    from noiseaware._core._dirichlet import SERIES_TERMS, pair_series_terms

    def part(a):
        return nd.parts(_release([2.0, 3.0, 5.0], n=400, seed=3, threshold=a))[0]

    small = [part(a) for a in (1e-6, 1e-3, 0.01)]
    assert {_fit._series_terms([p]) for p in small} == {32}
    for a in (0.1, 0.3):
        need = pair_series_terms(np.log(a))
        got = _fit._series_terms([part(a)])
        assert need <= got <= SERIES_TERMS and got in (32, 64, 128, 256)
    assert _fit._series_terms([small[0], part(0.3)]) == _fit._series_terms([part(0.3)])  # the most demanding
