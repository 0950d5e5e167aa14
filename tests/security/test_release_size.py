"""One size limit for releases: what ``privatize`` makes, ``Release.to_json`` writes and ``Release.from_json`` reads.

The audit case: a DPCopula release with a 6,000,000-cell domain was accepted, charged, written as
284 MB and then refused by ``from_json`` (over 256 MiB). Now ``privatize`` bounds the JSON size from
public parts only and refuses before any budget is charged; ``to_json`` refuses to write over the
limit; ``from_json`` reads anything ``to_json`` writes. Tests lower the limit
(``noiseaware._io.MAX_RELEASE_BYTES``, read at call time by all three) where the real size would be
slow to build; the audit case itself runs with the real limit in the slow suite.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware import _io
from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import NoiseawareValueError, ReleaseFormatError
from noiseaware.release import json_size

RNG = np.random.default_rng


def _table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = RNG(seed)
    z = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], n)
    return pd.DataFrame(
        {
            "sex": np.where(rng.integers(0, 2, n) == 1, "m", "f"),
            "age": np.clip((z[:, 0] * 15 + 40).round(), 0, 99).astype(int),
            "income": np.clip(z[:, 1] * 2 + 5, 0, 10),
        }
    )


DOMS = {"sex": ["f", "m"], "age": range(100), "income": {"lower": 0.0, "upper": 10.0, "bins": 50}}

#: Each case: privatize keywords (simulation mode, so that every draw is cheap and repeatable).
CASES = {
    "counts": dict(data=np.arange(40) * 3, statistic="counts", epsilon=1.0, sensitivity=1),
    "vector": dict(data=np.linspace(-1e-300, 1e300, 30), statistic="vector", rho=0.5, sensitivity=1.0),
    "median_pairs": dict(data=RNG(0).normal(size=(80, 5)), statistic="median_pairs", epsilon=1.0),
    "dpcopula kendall": dict(data=_table(), statistic="dpcopula", epsilon=1.0, domains=DOMS),
    "dpcopula mle": dict(data=_table(3000), statistic="dpcopula", epsilon=4.0, domains=DOMS, correlation="mle"),
    "dpcopula median": dict(data=_table(), statistic="dpcopula", epsilon=1.0, domains=DOMS, correlation="median"),
    "dpcopula hybrid": dict(data=_table(), statistic="dpcopula", epsilon=1.5, domains=DOMS, hybrid=["sex"]),
}


def _privatize(case: str, **extra):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # utility and privacy notices of the deliberately odd cases
        return na.privatize(**CASES[case], rng=RNG(1), **extra)


def _size(rel) -> int:
    """Bytes of the release file ``to_json`` writes (text and newline)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # simulation-release notice
        return len(rel.to_json(allow_simulation=True)) + 1


# ------------------------------------------------------------------------------------- json_size
@pytest.mark.parametrize(
    "obj",
    [
        {},
        [],
        {"a": [], "b": {}, "c": [[]], "d": [[], ["x"]]},
        {"labels": [("age", "17"), ("sex", "f")], "values": [1, -2, 3.5e-300, -1.7976931348623157e308]},
        {"ü": "naïve – “quotes” \\ \n\t\x00", "e": [None, True, False], "n": {"1": {"2": [1, [2, [3]]]}}},
        [("a",), (), ("b", "c", "d")],
        {"mixed": [1, "two", [3], {"four": 4}], "np": np.arange(3), "g": np.float64(0.1)},
    ],
)
@pytest.mark.parametrize("depth", [0, 3])
def test_json_size_is_exactly_the_length_json_dumps_gives(obj, depth) -> None:
    for _ in range(depth):  # nested deeper: every line indented more
        obj = {"k": [obj]}
    plain = json.loads(json.dumps(obj, default=lambda o: o.tolist()))  # tuples as lists, NumPy as lists
    assert json_size(obj) == len(json.dumps(plain, indent=2))


# ----------------------------------------------------------------------- privatize bounds the size
@pytest.mark.parametrize("case", sorted(CASES))
def test_privatize_refuses_whenever_the_file_could_exceed_the_limit(monkeypatch, case) -> None:
    """With the limit one byte under the real file, the bound (which must cover every noise draw) refuses."""
    size = _size(_privatize(case))
    monkeypatch.setattr(_io, "MAX_RELEASE_BYTES", size - 1)
    budget = PrivacyBudget(rho=1.0) if "rho" in CASES[case] else PrivacyBudget(epsilon=10.0)
    with pytest.raises(NoiseawareValueError, match=r"could take up to [\d,]+ bytes as JSON, over the limit of"):
        _privatize(case, budget=budget)
    assert budget.spent == 0.0 and budget.ledger == ()  # refused before any charge


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bound_is_not_far_above_the_real_size(monkeypatch, case) -> None:
    """The other side: with room for the widest values, privatize goes ahead (the bound is not vacuous)."""
    rel = _privatize(case)
    room = _size(rel) + 24 * (rel.values.size + sum(c.values.size for c in rel.components)) + 8192
    monkeypatch.setattr(_io, "MAX_RELEASE_BYTES", room)
    assert _privatize(case).statistic == rel.statistic


def test_dpcopula_refusal_comes_before_the_budget_is_charged(monkeypatch) -> None:
    """The audit case, scaled down: a domain too large for the limit spends nothing; a smaller one works."""
    data = pd.DataFrame({"a": RNG(0).integers(0, 20_000, 500), "b": RNG(1).integers(0, 3, 500)})
    monkeypatch.setattr(_io, "MAX_RELEASE_BYTES", 512 * 1024)
    budget = PrivacyBudget(epsilon=2.0)
    with pytest.raises(NoiseawareValueError, match=r"Nothing was charged to the budget.*smaller domains"):
        na.privatize(data, "dpcopula", epsilon=1.0, budget=budget, domains={"a": range(20_000), "b": [0, 1, 2]})
    assert budget.spent == 0.0 and budget.remaining == 2.0 and budget.ledger == ()
    small = data.assign(a=data["a"] % 2000)
    rel = na.privatize(small, "dpcopula", epsilon=1.0, budget=budget, domains={"a": range(2000), "b": [0, 1, 2]})
    assert budget.spent == pytest.approx(1.0)
    assert len(rel.to_json()) + 1 <= _io.MAX_RELEASE_BYTES


# -------------------------------------------------------------------- to_json and from_json agree
def test_to_json_writes_only_what_from_json_reads(monkeypatch, tmp_path) -> None:
    rel = na.privatize(np.arange(50), "counts", epsilon=1.0, sensitivity=1)
    size = len(rel.to_json()) + 1
    monkeypatch.setattr(_io, "MAX_RELEASE_BYTES", size)  # exactly enough: written and read back
    path = tmp_path / "r.json"
    rel.to_json(path)
    assert path.stat().st_size == size
    np.testing.assert_array_equal(na.Release.from_json(path).values, rel.values)
    np.testing.assert_array_equal(na.Release.from_json(path.read_text()).values, rel.values)
    monkeypatch.setattr(_io, "MAX_RELEASE_BYTES", size - 1)  # one byte short: neither writes nor reads
    with pytest.raises(NoiseawareValueError, match=r"over the limit of .* could never be read back \(indent=None"):
        rel.to_json(tmp_path / "other.json")
    assert not (tmp_path / "other.json").exists()
    with pytest.raises(ReleaseFormatError, match="larger than the limit"):
        na.Release.from_json(path)
    with pytest.raises(ReleaseFormatError, match="larger than the limit"):
        na.Release.from_json(path.read_text())
    assert len(rel.to_json(indent=None)) + 1 <= size - 1  # the compact form still fits


@pytest.mark.slow
def test_the_audit_case_six_million_cells_is_refused_before_any_charge() -> None:
    """The real limit and the real case: a 6,000,000-cell margin (a 284 MB file) is refused up front."""
    k = 6_000_000
    data = pd.DataFrame({"a": RNG(0).integers(0, k, 500), "b": RNG(1).integers(0, 3, 500)})
    budget = PrivacyBudget(epsilon=2.0)
    with pytest.raises(NoiseawareValueError, match=r"over the limit of 268,435,456 bytes.*Nothing was charged"):
        na.privatize(data, "dpcopula", epsilon=1.0, budget=budget, domains={"a": range(k), "b": [0, 1, 2]})
    assert budget.spent == 0.0 and budget.ledger == ()
