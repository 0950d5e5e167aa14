"""privatize() on Dask arrays and DataFrames: the same release as in memory (issue 15 item 5)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import noiseaware as na
from noiseaware._privatize import _dask as nd
from noiseaware._privatize._fsum import combine, exact_column_sums, partial_sums, to_float
from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError

da = pytest.importorskip("dask.array", reason="the dask extra is not installed (pip install '.[dask]')")
dd = pytest.importorskip("dask.dataframe", reason="the dask extra is not installed (pip install '.[dask]')")
import dask  # noqa: E402
import pandas as pd  # noqa: E402


@pytest.fixture(autouse=True)
def _threads():
    with dask.config.set(scheduler="threads"), warnings.catch_warnings():
        warnings.simplefilter("ignore", na.exceptions.UtilityWarning)
        yield


def _same(a: na.Release, b: na.Release) -> None:
    assert a.statistic == b.statistic and a.labels == b.labels and a.n == b.n
    np.testing.assert_array_equal(a.values, b.values)
    assert a.values.dtype == b.values.dtype
    assert a.metadata == b.metadata and a.guarantee == b.guarantee and a.secure == b.secure
    assert len(a.components) == len(b.components)
    for ca, cb in zip(a.components, b.components, strict=True):
        _same(ca, cb)


def _data(kind: str, rng: np.random.Generator) -> np.ndarray:
    if kind == "continuous":
        return rng.normal(size=(1001, 4))
    if kind == "ties":  # few distinct values: the key tie rule decides most rows
        return rng.integers(0, 3, size=(1000, 4)).astype(float)
    if kind == "mostly_zero":
        return np.where(rng.random((999, 3)) < 0.9, 0.0, rng.normal(size=(999, 3)))
    if kind == "signed_zero":  # -0.0 and 0.0 are the same value for the median split
        return np.where(rng.random((500, 3)) < 0.5, -0.0, 0.0) + np.where(rng.random((500, 3)) < 0.2, 1.0, 0.0)
    return 1000.0 + rng.random((800, 3))  # one exponent: the radix select needs more than one pass


KINDS = ["continuous", "ties", "mostly_zero", "signed_zero", "narrow"]


def _brute_counts(x: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Seed 000 §3.2 by its definition: per column, sort rows by (value, key, row index), top ceil(n/2) high."""
    n, p = x.shape
    h = math.ceil(n / 2)
    a = np.zeros((n, p), dtype=np.int64)
    for j in range(p):
        order = sorted(range(n), key=lambda i: (x[i, j] + 0.0, keys[i, j], i))
        for i in order[n - h :]:
            a[i, j] = 1
    iu, ju = np.triu_indices(p, 1)
    return np.array([int(a[:, i] @ a[:, k]) for i, k in zip(iu, ju, strict=True)])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("collect_max", [nd.COLLECT_MAX, 3])
def test_median_pairs_dask_equals_in_memory(kind, collect_max, monkeypatch):
    monkeypatch.setattr(nd, "COLLECT_MAX", collect_max)  # 3: radix passes down to single values
    x = _data(kind, np.random.default_rng(len(kind)))
    mem = na.privatize(x, "median_pairs", epsilon=1.0, rng=np.random.default_rng(7))
    arr = na.privatize(da.from_array(x, chunks=(137, 2)), "median_pairs", epsilon=1.0, rng=np.random.default_rng(7))
    frame = dd.from_pandas(pd.DataFrame(x, columns=[f"x{j}" for j in range(x.shape[1])]), npartitions=5)
    df = na.privatize(frame, "median_pairs", epsilon=1.0, rng=np.random.default_rng(7))
    _same(mem, arr)
    _same(mem, df)
    for mech in ("tgm", "btgm", "rgm"):
        _same(
            na.privatize(x, "median_pairs", epsilon=2.0, mechanism=mech, rng=np.random.default_rng(3)),
            na.privatize(frame, "median_pairs", epsilon=2.0, mechanism=mech, rng=np.random.default_rng(3)),
        )


def test_median_counts_match_brute_force_even_with_equal_keys(monkeypatch):
    """The distributed selection against the definition, keys rounded so that (value, key) ties occur."""
    x = np.random.default_rng(1).integers(0, 2, size=(301, 3)).astype(float)
    coarse = nd._Keys.block
    monkeypatch.setattr(nd._Keys, "block", lambda self, b, n_b: np.round(coarse(self, b, n_b)))
    monkeypatch.setattr(nd, "COLLECT_MAX", 2)
    rng = np.random.default_rng(5)
    counts, names, n = nd.median_pair_counts(da.from_array(x, chunks=(50, 3)), None, rng, None)
    keys = np.round(np.random.default_rng(5).standard_normal((301, 3)))  # the same stream, the same rounding
    assert n == 301 and names == ["x0", "x1", "x2"]
    np.testing.assert_array_equal(counts, _brute_counts(x, keys))
    # the test can fail: ignoring the keys' tie rule (all tied rows high) gives other counts here
    naive = (x >= np.median(x, axis=0)).astype(int)
    assert not np.array_equal(counts, [naive[:, 0] @ naive[:, 1], naive[:, 0] @ naive[:, 2], naive[:, 1] @ naive[:, 2]])


def test_secure_mode_counts_and_release():
    x = np.random.default_rng(2).normal(size=(500, 3))
    counts, _, _ = nd.median_pair_counts(da.from_array(x, chunks=(64, 3)), None, None, None)
    np.testing.assert_array_equal(counts, _brute_counts(x, np.zeros_like(x)))  # continuous: keys never matter
    rel = na.privatize(da.from_array(x, chunks=(64, 3)), "median_pairs", epsilon=1.0)
    assert rel.secure and rel.n == 500 and rel.values.shape == (3,)


@pytest.mark.parametrize("threshold", [None, 0.01])
def test_dirichlet_logmean_dask_equals_in_memory(threshold):
    rng = np.random.default_rng(4)
    comp = rng.dirichlet([0.3, 2.0, 3.0], size=2000)
    comp[:5, 0] = 0.0  # zero parts, censored by the threshold
    comp[:5] /= comp[:5].sum(axis=1, keepdims=True)
    opts = {"zeros": "censor"} | ({"threshold": threshold} if threshold else {})
    mem = na.privatize(comp, "dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(9), **opts)
    arr = na.privatize(
        da.from_array(comp, chunks=(333, 3)), "dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(9), **opts
    )
    frame = dd.from_pandas(pd.DataFrame(comp, columns=["a", "b", "c"]), npartitions=3)
    df = na.privatize(
        frame, "dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(9), columns=["x0", "x1", "x2"], **opts
    )
    _same(mem, arr)
    _same(mem, df)


def test_counts_and_vector_from_dask():
    table = np.array([[3, 0, 5], [1, 2, 8]])
    _same(
        na.privatize(table, "counts", epsilon=1.0, sensitivity=2, rng=np.random.default_rng(0)),
        na.privatize(
            da.from_array(table, chunks=(1, 2)), "counts", epsilon=1.0, sensitivity=2, rng=np.random.default_rng(0)
        ),
    )
    s = pd.Series([4, 9, 1], index=["a", "b", "c"])
    _same(
        na.privatize(s, "counts", epsilon=1.0, sensitivity=1, rng=np.random.default_rng(1)),
        na.privatize(
            dd.from_pandas(s, npartitions=2), "counts", epsilon=1.0, sensitivity=1, rng=np.random.default_rng(1)
        ),
    )
    vec = np.array([0.5, -1.25, 3.0])
    _same(
        na.privatize(vec, "vector", epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(2)),
        na.privatize(
            da.from_array(vec, chunks=2), "vector", epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(2)
        ),
    )


def test_bad_dask_input_is_named_and_nothing_is_charged():
    x = np.random.default_rng(0).normal(size=(100, 3))
    x[7, 1] = np.nan
    budget = PrivacyBudget(epsilon=5.0)
    with pytest.raises(NoiseawareValueError, match="1 non-finite value"):
        na.privatize(da.from_array(x, chunks=(30, 3)), "median_pairs", epsilon=1.0, budget=budget)
    with pytest.raises(NoiseawareValueError, match="tie_keys is not available for Dask"):
        na.privatize(da.from_array(x, chunks=(30, 3)), "median_pairs", epsilon=1.0, tie_keys=np.zeros((100, 3)))
    with pytest.raises(NoiseawareValueError, match="must be 2-D"):
        na.privatize(da.zeros(10, chunks=5), "median_pairs", epsilon=1.0)
    frame = dd.from_pandas(pd.DataFrame({"a": [1.0, 2.0], "b": ["u", "v"]}), npartitions=1)
    with pytest.raises(NoiseawareTypeError, match=r"non-numeric column\(s\) \['b'\]"):
        na.privatize(frame, "median_pairs", epsilon=1.0)
    comp = np.random.default_rng(1).dirichlet([1, 1, 1], size=50)
    bad = comp.copy()
    bad[40, 2] = -0.1
    with pytest.raises(NoiseawareValueError, match=r"e.g. row 40 column 2 = -0.1"):  # global row index
        na.privatize(da.from_array(bad, chunks=(16, 3)), "dirichlet_logmean", epsilon=1.0, budget=budget)
    off = comp.copy()
    off[33] *= 2
    with pytest.raises(NoiseawareValueError, match=r"e\.g\. row 33 sums to 2"):
        na.privatize(da.from_array(off, chunks=(16, 3)), "dirichlet_logmean", epsilon=1.0, budget=budget)
    with pytest.raises(NoiseawareValueError, match="split is not available for Dask"):
        na.privatize(da.from_array(comp, chunks=(16, 3)), "dirichlet_logmean", epsilon=1.0, split=0.5, budget=budget)
    assert budget.remaining == 5.0


def test_exact_sums_are_fsum_whatever_the_blocking():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3000, 3)) * 10.0 ** rng.integers(-300, 300, size=(3000, 3))
    x = np.concatenate([x, [[5e-324, -0.0, 1e308], [1e308, 0.0, -5e-324], [-2.5e-320, 1.5, -3.0]]])
    ref = [math.fsum(x[:, j]) for j in range(3)]
    np.testing.assert_array_equal(exact_column_sums(x), ref)
    cuts = np.sort(rng.choice(np.arange(1, x.shape[0]), size=6, replace=False))
    acc = None
    for blk in np.split(x, cuts):
        acc = partial_sums(blk) if acc is None else combine(acc, partial_sums(blk))
    np.testing.assert_array_equal(to_float(acc), ref)
    # the test can fail: a plain float sum does depend on the order here
    assert not np.array_equal(x.sum(axis=0), ref) or not np.array_equal(x[::-1].sum(axis=0), ref)


# --------------------------------------------------------------------------- partitions read by name
def _frame_from(parts: list[pd.DataFrame], meta: pd.DataFrame):
    """A Dask DataFrame whose partitions are not checked against meta (as a careless pipeline may build)."""
    return dd.from_delayed([dask.delayed(lambda q: q)(q) for q in parts], meta=meta.iloc[:0], verify_meta=False)


def _split_frame() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    x = np.random.default_rng(11).normal(size=(60, 3))
    df = pd.DataFrame(x, columns=["a", "b", "c"])
    return df, df.iloc[:25], df.iloc[25:]


@pytest.mark.parametrize("statistic", ["median_pairs", "kendall_pairs", "dirichlet_logmean"])
def test_reordered_partition_columns_are_aligned_by_name(statistic):
    df, p1, p2 = _split_frame()
    if statistic == "dirichlet_logmean":
        df = df.abs().div(df.abs().sum(axis=1), axis=0)
        p1, p2 = df.iloc[:25], df.iloc[25:]
    mem = na.privatize(df, statistic, epsilon=1.0, rng=np.random.default_rng(5))
    shuffled = _frame_from([p1, p2[["c", "a", "b"]]], df)  # the second partition's columns in another order
    _same(mem, na.privatize(shuffled, statistic, epsilon=1.0, rng=np.random.default_rng(5)))


@pytest.mark.parametrize("statistic", ["median_pairs", "kendall_pairs", "dirichlet_logmean", "second_moment"])
@pytest.mark.parametrize(
    ("change", "names"),
    [
        (lambda q: q.rename(columns={"a": "z"}), r"missing \['a'\], unexpected \['z'\]"),
        (lambda q: q.assign(d=1.0), r"missing \[\], unexpected \['d'\]"),
        (lambda q: q[["a", "b"]], r"missing \['c'\], unexpected \[\]"),
    ],
    ids=["renamed", "extra", "missing"],
)
def test_mismatched_partition_columns_are_refused_by_name(statistic, change, names):
    df, p1, p2 = _split_frame()
    kw = {"rho": 1.0, "bound": 3.0} if statistic == "second_moment" else {"epsilon": 1.0}
    budget = PrivacyBudget(rho=5.0) if statistic == "second_moment" else PrivacyBudget(epsilon=5.0)
    with pytest.raises(NoiseawareValueError, match=r"partition 1 of the Dask DataFrame must have the columns \['a', "):
        na.privatize(_frame_from([p1, change(p2)], df), statistic, budget=budget, **kw)
    with pytest.raises(NoiseawareValueError, match=names):
        na.privatize(_frame_from([p1, change(p2)], df), statistic, budget=budget, **kw)
    assert budget.remaining == 5.0


def test_partition_that_is_not_a_frame_is_refused():
    df, p1, p2 = _split_frame()
    with pytest.raises(NoiseawareValueError, match="partition 1 of the Dask DataFrame must be a DataFrame"):
        na.privatize(_frame_from([p1, p2["a"]], df), "median_pairs", epsilon=1.0)


def test_dask_series_where_pandas_series_is_accepted_and_refused_clearly_elsewhere():
    s = pd.Series([2, 0, 7, 1], index=["w", "x", "y", "z"])
    ds = dd.from_pandas(s, npartitions=2)
    for statistic, kw in [("counts", {"sensitivity": 1}), ("vector", {"sensitivity": 1.0})]:
        _same(
            na.privatize(s, statistic, epsilon=1.0, rng=np.random.default_rng(3), **kw),
            na.privatize(ds, statistic, epsilon=1.0, rng=np.random.default_rng(3), **kw),
        )
    answers = pd.Series([0, 1, 2, 1, 0, 2, 2, 1])
    _same(
        na.privatize(answers, "randomized_response", epsilon=1.0, categories=3, rng=np.random.default_rng(4)),
        na.privatize(
            dd.from_pandas(answers, npartitions=3), "randomized_response", epsilon=1.0, categories=3,
            rng=np.random.default_rng(4),
        ),
    )
    for statistic, kw in [
        ("median_pairs", {"epsilon": 1.0}),
        ("kendall_pairs", {"epsilon": 1.0}),
        ("dirichlet_logmean", {"epsilon": 1.0}),
        ("second_moment", {"rho": 1.0, "bound": 1.0}),
        ("pace_ggm", {"rho": 1.0, "bound": 1.0}),
        ("dpcopula", {"epsilon": 1.0, "domains": [range(10)]}),
    ]:
        with pytest.raises(NoiseawareValueError, match="must be 2-D"):
            na.privatize(ds.astype(float), statistic, **kw)


@pytest.mark.parametrize("hybrid", [False, True])
def test_dpcopula_on_a_dask_frame_is_the_in_memory_release(hybrid):
    rng = np.random.default_rng(8)
    df = pd.DataFrame(
        {"age": rng.integers(0, 90, 300), "sex": rng.choice(["f", "m"], 300), "k": rng.integers(0, 4, 300)}
    )
    domains = {"age": range(90), "sex": ["f", "m"], "k": range(4)}
    kw: dict = {"epsilon": 1.0, "domains": domains}
    if hybrid:
        kw["hybrid"] = ["k"]
    mem = na.privatize(df, "dpcopula", rng=np.random.default_rng(9), **kw)
    ddf = _frame_from([df.iloc[:120], df.iloc[120:][["k", "age", "sex"]]], df)
    _same(mem, na.privatize(ddf, "dpcopula", rng=np.random.default_rng(9), **kw))
    with pytest.raises(NoiseawareValueError, match=r"unexpected \['years'\]"):
        na.privatize(_frame_from([df.iloc[:120], df.iloc[120:].rename(columns={"age": "years"})], df), "dpcopula", **kw)
