"""``fit_many(..., results_dir=...)``: a stored outcome is reused only for the very fit that made it.

A second run with another fit function, ``summarize``, fit keywords or release under the same key
must compute again (and say so), never return the first run's outcome as ``cached``; a stored file
with a malformed field is computed again, not a crash; a directory that cannot be written is refused
before the first fit, not after it.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import tempfile
import threading
import warnings

import numpy as np
import pytest

import noiseaware as na
from noiseaware.exceptions import NoiseawareValueError, NoiseawareWarning

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install '.[dask]')")

from noiseaware.distributed import fit_many  # noqa: E402

CALLS: list[str] = []
_LOCK = threading.Lock()


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dask's own start-up notices (ports, event loop)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
        c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _release(shift: int) -> na.Release:
    return na.privatize(np.arange(4) * 10 + shift, "counts", epsilon=1.0, sensitivity=1)


def total(rel, *, scale=1.0, weights=None):
    with _LOCK:
        CALLS.append("total")
    w = np.ones(rel.values.size) if weights is None else np.asarray(weights)
    return float(scale * np.dot(w, rel.values))


def largest(rel, *, scale=1.0, weights=None):
    with _LOCK:
        CALLS.append("largest")
    return float(scale * np.max(rel.values))


def as_dict(x):
    return {"value": x}


def as_list(x):
    return [x]


def _run(client, rels, fit, results_dir, **kw):
    CALLS.clear()
    kw.setdefault("summarize", as_dict)
    return {o.key: o for o in fit_many(rels, fit, client=client, results_dir=results_dir, **kw)}


def test_the_same_fit_is_reused_and_keyword_arrays_fingerprint_stably(client, tmp_path) -> None:
    rels = {"a": _release(0), "b": _release(1)}
    w = np.array([1.0, 2.0, 3.0, 4.0])
    first = _run(client, rels, total, tmp_path, weights=w, scale=2.0)
    assert not any(o.cached for o in first.values()) and sorted(CALLS) == ["total", "total"]
    again = _run(client, rels, total, tmp_path, weights=w.copy(), scale=2.0)  # equal, not identical, keywords
    assert CALLS == [] and all(o.cached for o in again.values())
    assert {k: o.result for k, o in again.items()} == {k: o.result for k, o in first.items()}
    assert again["a"].fingerprint == first["a"].fingerprint and again["a"].fingerprint["fit"].endswith(":total")


@pytest.mark.parametrize(
    ("change", "word"),
    [
        ({"fit": largest}, "another fit"),
        ({"summarize": as_list}, "another summarize"),
        ({"scale": 3.0}, "another kwargs"),
        ({"weights": np.array([1.0, 2.0, 3.0, 5.0])}, "another kwargs"),
        ({"release": True}, "another release"),
    ],
    ids=["fit", "summarize", "keyword", "array keyword", "release"],
)
def test_a_stored_outcome_of_another_run_is_computed_again_never_cached(client, tmp_path, change, word) -> None:
    rels = {"a": _release(0)}
    base = {"weights": np.array([1.0, 2.0, 3.0, 4.0]), "scale": 2.0, "summarize": as_dict}
    first = _run(client, rels, total, tmp_path, **base)["a"]
    change = dict(change)
    fit = change.pop("fit", total)
    if change.pop("release", False):
        rels = {"a": _release(5)}  # another release under the same key
    with pytest.warns(NoiseawareWarning, match=rf"not reused and are computed again: 'a': made with {word}\."):
        second = _run(client, rels, fit, tmp_path, **{**base, **change})["a"]
    assert second.ok and not second.cached and CALLS == [fit.__name__]
    assert second.fingerprint != first.fingerprint
    stored = json.loads((tmp_path / "a.json").read_text())
    assert stored["fingerprint"] == second.fingerprint  # the file now holds the new outcome
    third = _run(client, rels, fit, tmp_path, **{**base, **change})["a"]
    assert third.cached and CALLS == []


@pytest.mark.parametrize(
    ("field", "value"),
    [("seconds", "abc"), ("seconds", None), ("seconds", True), ("seconds", -1.0), ("worker", 7), ("ok", "yes"),
     ("key", "b"), ("fingerprint", None), ("fingerprint", "x")],
)
def test_a_malformed_stored_field_is_computed_again_not_a_crash(client, tmp_path, field, value) -> None:
    rels = {"a": _release(0)}
    _run(client, rels, total, tmp_path)
    path = tmp_path / "a.json"
    data = json.loads(path.read_text())
    data[field] = value
    path.write_text(json.dumps(data))
    with pytest.warns(NoiseawareWarning, match=r"'a': (malformed|made without a fingerprint)"):
        out = _run(client, rels, total, tmp_path)["a"]
    assert out.ok and not out.cached and CALLS == ["total"]
    assert isinstance(json.loads(path.read_text())["seconds"], float)


def test_an_unparsable_stored_file_is_computed_again(client, tmp_path) -> None:
    rels = {"a": _release(0)}
    (tmp_path / "a.json").write_bytes(b'{"key": "a", "ok": tru')
    with pytest.warns(NoiseawareWarning, match=r"'a': unreadable"):
        out = _run(client, rels, total, tmp_path)["a"]
    assert out.ok and not out.cached and CALLS == ["total"]


def test_a_read_only_results_dir_fails_before_the_first_fit(client) -> None:
    base = pathlib.Path(tempfile.mkdtemp())  # under /tmp, so that an ordinary user can reach it
    d = base / "results"
    d.mkdir()
    base.chmod(0o755)
    d.chmod(0o555)
    rels = {"a": _release(0)}
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    CALLS.clear()
    try:
        if as_root:  # root writes anywhere: drop to an ordinary user for the call, as an operator would be
            os.seteuid(65534)
        with pytest.raises(NoiseawareValueError, match=r"results_dir must be a directory .*can write to.*Permission"):
            fit_many(rels, total, client=client, results_dir=d)
    finally:
        if as_root:
            os.seteuid(0)
        d.chmod(0o755)
    try:
        assert CALLS == [] and list(d.iterdir()) == []
    finally:
        shutil.rmtree(base)


def test_a_results_dir_that_is_a_file_is_refused_up_front(client, tmp_path) -> None:
    f = tmp_path / "results"
    f.write_text("not a directory")
    with pytest.raises(NoiseawareValueError, match=r"results_dir must be a directory"):
        fit_many({"a": _release(0)}, total, client=client, results_dir=f)
    assert f.read_text() == "not a directory"
