"""noiseaware.distributed.fit_many on a 2-worker Dask LocalCluster (threads, fast)."""

from __future__ import annotations

import json
import pickle
import threading
import time
import warnings
from typing import Any

import arviz as az
import numpy as np
import pytest
import xarray as xr

import noiseaware as na
from noiseaware import regression, results
from noiseaware._engine import from_groups, group
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install '.[dask]')")

from noiseaware.copula import mle_nn  # noqa: E402
from noiseaware.distributed import FitManyResult, fit_many, resolve_fit  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dask's own start-up notices (ports, event loop)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
        c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _releases(k: int = 4) -> dict[str, na.Release]:
    out = {}
    for i in range(k):
        x = np.random.default_rng(i).normal(size=(200, 3))
        out[f"r{i}"] = na.privatize(x, "median_pairs", epsilon=2.0, mechanism="btgm", rng=np.random.default_rng(i))
    return out


def _r(res):
    return np.asarray(res.R).tolist()


CALLS: list[str] = []
_LOCK = threading.Lock()


def test_fit_many_matches_direct_calls_and_reports_failures(client):
    rels = _releases(3)
    bad = na.privatize(np.arange(3), "counts", epsilon=1.0, sensitivity=1, rng=np.random.default_rng(0))
    rels_all = {**rels, "bad": bad}
    outs = {o.key: o for o in fit_many(rels_all, "copula.mle_nn", client=client)}
    assert set(outs) == set(rels_all)
    for k, rel in rels.items():
        assert outs[k].ok and outs[k].error is None
        np.testing.assert_array_equal(outs[k].result.R, mle_nn(rel).R)
        assert outs[k].worker is not None and outs[k].seconds >= 0
    assert not outs["bad"].ok and outs["bad"].result is None
    assert "median_pairs" in outs["bad"].error and "Traceback" in outs["bad"].traceback


def slow_or_fast(rel, *, delay):
    time.sleep(delay if rel.values[0] == 40 else 0.0)
    return float(rel.values.sum())


@pytest.mark.filterwarnings("ignore::noiseaware.exceptions.PrivacyWarning")
def test_results_stream_in_completion_order(client):
    rels = _releases(3)
    order = [o.key for o in fit_many({"slow": _counts_release(40), **rels}, slow_or_fast, client=client, delay=1.5)]
    assert order[-1] == "slow" and sorted(order) == sorted(["slow", *rels])


def _counts_release(first: int) -> na.Release:
    rel = na.privatize(np.array([5, 6, 7]), "counts", epsilon=1.0, sensitivity=1, rng=np.random.default_rng(1))
    # a release whose first value is `first` (an analyst-side object; only the task reads it)
    d = json.loads(rel.to_json(allow_simulation=True))
    d["values"][0] = first
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return na.Release.from_json(json.dumps(d))


@pytest.mark.filterwarnings("ignore::noiseaware.exceptions.PrivacyWarning")
def test_resume_skips_stored_and_retries_failures(client, tmp_path):
    rels = {k: _counts_release(i) for i, k in enumerate(["a", "b", "c"])}

    def run(fail_on):
        CALLS.clear()
        FAIL_ON[:] = [fail_on]  # not a fit keyword: other keywords would make the stored outcomes stale
        outs = list(fit_many(rels, total, client=client, results_dir=tmp_path, summarize=lambda s: {"sum": s}))
        return {o.key: o for o in outs}

    first = run(fail_on=1)  # "b" fails
    assert [first[k].ok for k in "abc"] == [True, False, True]
    assert (tmp_path / "a.json").is_file() and (tmp_path / "b.error.json").is_file()
    assert not (tmp_path / "b.json").exists()
    stored = json.loads((tmp_path / "a.json").read_text())
    assert stored["key"] == "a" and stored["result"] == {"sum": first["a"].result["sum"]}
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temporary files

    second = run(fail_on=None)  # resume: only "b" is computed again
    assert CALLS == ["b"]
    assert second["a"].cached and second["c"].cached and not second["b"].cached and second["b"].ok
    assert second["a"].result == first["a"].result

    third = run(fail_on=None)  # everything stored: no task at all
    assert CALLS == [] and all(o.cached for o in third.values())


FAIL_ON: list[int | None] = [None]


def total(rel):
    with _LOCK:
        CALLS.append({0: "a", 1: "b", 2: "c"}[int(rel.values[0])])
    if int(rel.values[0]) == FAIL_ON[0]:
        raise RuntimeError("planned failure")
    return float(np.sum(rel.values))


def test_default_local_cluster_and_early_break():
    rels = _releases(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dask start-up notices
        gen = fit_many(rels, mle_nn, n_workers=2, processes=False, summarize=_r)
        first = next(gen)
        gen.close()  # leaving early closes the cluster it started
    assert isinstance(first, FitManyResult) and first.ok and np.asarray(first.result).shape == (3, 3)


HOST = xr.DataTree if int(az.__version__.split(".")[0]) >= 1 else az.InferenceData


def _regression_release() -> na.Release:
    # the release of tests/regression/test_fit.py (and of tests/test_arviz.py): its compiled NUTS program is reused
    g = np.random.default_rng(0)
    x = np.clip(g.normal(0.0, 0.4, size=(3000, 2)), -1, 1)
    y = np.clip(0.1 + x @ [0.5, -0.3] + 0.2 * g.normal(size=3000), -1, 1)
    return na.privatize(np.column_stack([x, y]), statistic="regression", response="x2", bound=1.0, rho=1.0,
                        method="ssp", rng=g)


def _shipped(outcome: FitManyResult) -> Any:
    """What a worker process sends to the client: the outcome serialized by Dask's protocol and read back."""
    header, frames = distributed.protocol.serialize(outcome)
    return distributed.protocol.deserialize(header, frames)


@pytest.mark.slow  # make test-full: a real sampler compiled on a Dask worker (9 s); fake fits cover the travel here
def test_a_posterior_fit_comes_back_as_the_host_container(client):
    rel = _regression_release()
    kw = {"chains": 2, "draws": 60, "warmup": 60, "seed": 3, "check_mixing": False}  # what travels, not the mixing
    (out,) = list(fit_many({"r": rel}, "regression", client=client, **kw))
    assert out.ok, out.traceback
    direct = regression.fit(rel, **kw)
    for res in (out.result, _shipped(out).result, pickle.loads(pickle.dumps(out)).result):
        assert type(res) is HOST  # never a subclass, and what the fit returns in this process
        assert results.fit_kind(res) == "regression.fit" and results.settings(res) == results.settings(direct)
        assert regression.coefficients(res) == ("(intercept)", "x0", "x1")
        assert results.release(res).to_dict() == rel.to_dict()
        np.testing.assert_array_equal(results.draws(res, "beta"), results.draws(direct, "beta"))


def test_results_are_summarized_on_the_worker_with_the_results_functions(client, tmp_path):
    def fake_fit(rel):  # a result as every fit builds it, without the sampler
        draws = np.broadcast_to(np.asarray(rel.values, dtype=float), (2, 5, len(rel.values)))
        return from_groups({"posterior": {"mu": draws}}, attrs={"noiseaware_result": "fake.fit"})

    rels = _releases(2)
    outs = {o.key: o for o in fit_many(rels, fake_fit, client=client, results_dir=tmp_path,
                                       summarize=lambda f: results.draws(f).mean(axis=0))}
    for k, rel in rels.items():
        np.testing.assert_allclose(outs[k].result, np.asarray(rel.values, dtype=float), rtol=1e-12)
        stored = json.loads((tmp_path / f"{k}.json").read_text())["result"]
        np.testing.assert_allclose(stored, np.asarray(rel.values, dtype=float), rtol=1e-12)
    whole = next(iter(fit_many(rels, fake_fit, client=client)))
    assert type(whole.result) is HOST and results.fit_kind(_shipped(whole).result) == "fake.fit"
    assert group(_shipped(whole).result, "posterior")["mu"].shape == (2, 5, 3)
    with pytest.raises(NoiseawareTypeError, match="cannot be stored as JSON"):
        list(fit_many(rels, fake_fit, client=client, results_dir=tmp_path / "whole"))


def test_bad_input_is_refused_before_any_task(client):
    rel = _releases(1)["r0"]
    with pytest.raises(NoiseawareTypeError, match="collection of releases"):
        fit_many(rel, "copula", client=client)
    with pytest.raises(NoiseawareValueError, match="key must hold only ASCII letters"):
        fit_many({"../x": rel}, "copula", client=client)
    with pytest.raises(NoiseawareTypeError, match="must be a Release"):
        fit_many([1, 2], "copula", client=client)
    with pytest.raises(NoiseawareValueError, match="fit must be one of"):
        fit_many([rel], "nonsense", client=client)
    with pytest.raises(NoiseawareValueError, match="not both"):
        list(fit_many([rel], "copula", client=client, address="tcp://127.0.0.1:1"))
    assert resolve_fit("copula.mle_nn") is mle_nn
    assert resolve_fit("regression") is regression.fit and resolve_fit("covariance.fit") is na.covariance.fit
