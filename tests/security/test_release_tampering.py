"""The release file is a contract: every field is checked against the others on load.

Each case edits the JSON of a genuine (secure) release the way a careless user or an attacker
would, and the loader must refuse it with a :class:`ReleaseFormatError` that names the field —
before any analysis reads it. The untouched record must load (so the checks are not vacuous).
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import noiseaware as na
from noiseaware.exceptions import ReleaseFormatError

RNG = np.random.default_rng(2024)
X = RNG.normal(size=(41, 4))
COMP = RNG.dirichlet([2.0, 3.0, 4.0], size=400)


def _base(kind: str) -> dict[str, Any]:
    if kind == "median":
        rel = na.privatize(X, statistic="median_pairs", epsilon=1.0)
    elif kind == "tgm":
        rel = na.privatize(X, statistic="median_pairs", epsilon=1.0, mechanism="tgm")
    elif kind == "kendall":
        rel = na.privatize(X, statistic="kendall_pairs", epsilon=1.0)
    elif kind == "counts":
        rel = na.privatize(np.array([3, 1, 4, 1]), statistic="counts", epsilon=1.0, sensitivity=2)
    elif kind == "rr":
        rel = na.privatize(
            np.array([[0, 1], [1, 2], [2, 0]]), statistic="randomized_response", epsilon=1.0, categories=3
        )
    elif kind == "dirichlet":
        rel = na.privatize(COMP, statistic="dirichlet_logmean", epsilon=1.0)
    elif kind == "dirichlet_split":
        rel = na.privatize(COMP, statistic="dirichlet_logmean", epsilon=1.0, split=100)
    elif kind == "published":  # made elsewhere: not secure, provenance names the maker
        rel = na.Release.from_published(
            [1021, 17, 0], family="discrete_gaussian", variance=4.0, provenance="US Census Bureau 2020 NMF"
        )
    else:  # pragma: no cover
        raise AssertionError(kind)
    return rel.to_dict()


BASES = {
    k: _base(k) for k in ("median", "tgm", "kendall", "counts", "rr", "dirichlet", "dirichlet_split", "published")
}


def _load(d: dict[str, Any]) -> na.Release:
    return na.Release.from_json(json.dumps(d))


@pytest.mark.parametrize("kind", sorted(BASES))
def test_untouched_records_load(kind: str) -> None:
    assert _load(copy.deepcopy(BASES[kind])).to_dict() == BASES[kind]


def _scale_guarantee(d: dict[str, Any], factor: float) -> None:
    d["guarantee"]["epsilon"] *= factor


def _parallel_third(d: dict[str, Any]) -> None:
    # claim parallel composition (the guarantee of one draw) for draws on the same records
    d["composition"] = "parallel"
    d["guarantee"]["epsilon"] = d["mechanism"]["scale"] ** -1


def _pair_three_times(d: dict[str, Any]) -> None:
    d["metadata"]["pairs"] = [d["metadata"]["pairs"][0]] * 3 + d["metadata"]["pairs"][3:]


def _shift_n(d: dict[str, Any]) -> None:
    d["n"] = 5


def _n_and_high_count(d: dict[str, Any]) -> None:
    d["n"], d["metadata"]["high_count"] = 5, 3


def _huge_value(d: dict[str, Any]) -> None:
    d["values"][0] = 10**18


def _kendall_old_sensitivity(d: dict[str, Any]) -> None:
    n = d["n"]
    s = 4.0 / (n + 1)
    eps = d["metadata"]["epsilon_per_pair"]
    d["mechanism"].update(sensitivity=s, scale=s / eps)


def _deep(d: dict[str, Any]) -> None:
    inner: Any = 1
    for _ in range(500):
        inner = [inner]
    d["metadata"]["columns"] = inner


def _secure_with_simulation_note(d: dict[str, Any]) -> None:
    d["metadata"]["simulation"] = "noise drawn from a seeded numpy Generator"


def _component_insecure(d: dict[str, Any]) -> None:
    d["components"][0]["secure"] = False
    d["components"][0]["metadata"]["simulation"] = "x"


def _dirichlet_geometric(d: dict[str, Any]) -> None:
    d["mechanism"] = {"family": "geometric", "scale": d["mechanism"]["scale"], "sensitivity": 1}
    d["guarantee"]["epsilon"] = None


def _drop_component(d: dict[str, Any]) -> None:
    d["components"] = []
    d["guarantee"]["epsilon"] = d["metadata"]["epsilon_1"]


def _index(d: dict[str, Any]) -> None:
    d["metadata"]["threshold_index"] = (d["metadata"]["threshold_index"] + 1) % len(d["metadata"]["candidates"])


def _a(d: dict[str, Any]) -> None:
    d["metadata"]["a"] = 0.5


def _a_and_sensitivity(d: dict[str, Any]) -> None:
    # a larger a with a matching (smaller) sensitivity: the threshold no longer follows the noisy counts
    a = 0.1
    s = -3 * math.log(a)
    d["metadata"]["a"] = a
    d["mechanism"].update(sensitivity=s, scale=s / d["metadata"]["epsilon_1"])
    d["metadata"]["laplace_scale_logmean"] = [d["mechanism"]["scale"] / m for m in d["metadata"]["n_parts"]]


def _noisy_counts(d: dict[str, Any]) -> None:
    d["metadata"]["noisy_counts"] = [c + 1 for c in d["metadata"]["noisy_counts"]]


def _n_parts(d: dict[str, Any]) -> None:
    d["metadata"]["n_parts"] = [d["n"] + 7]


def _split_composition(d: dict[str, Any]) -> None:
    d["composition"] = "joint"
    d["guarantee"]["epsilon"] = d["guarantee"]["epsilon"]  # joint of 6 values: same guarantee, wrong rule


def _rr_categories(d: dict[str, Any]) -> None:
    d["metadata"]["categories"] = 4


def _rr_value(d: dict[str, Any]) -> None:
    d["values"][0] = 7


def _rr_n(d: dict[str, Any]) -> None:
    d["n"] = 10


def _counts_norm(d: dict[str, Any]) -> None:
    d["metadata"]["sensitivity_norm"] = "l2"


def _counts_negative(d: dict[str, Any]) -> None:
    d["values"][1] = -(10**6)


def _tgm_bounds(d: dict[str, Any]) -> None:
    d["mechanism"]["upper"] = 100


def _labels_swapped(d: dict[str, Any]) -> None:
    d["labels"][0], d["labels"][1] = d["labels"][1], d["labels"][0]


def _columns_duplicate(d: dict[str, Any]) -> None:
    d["metadata"]["columns"][1] = d["metadata"]["columns"][0]


def _published_as_noiseaware_v1(d: dict[str, Any]) -> None:
    d["schema_version"] = 1  # a version-1 record has no provenance field


def _component_provenance(d: dict[str, Any]) -> None:
    d["components"][0]["provenance"] = "someone else"
    d["components"][0]["secure"] = False


Edit = Callable[[dict[str, Any]], Any]
CASES: list[tuple[str, str, Edit, str]] = [
    # (base, case id, edit, field named in the message)
    ("median", "n", _shift_n, "high_count"),
    ("median", "n+high_count", _n_and_high_count, "bounds"),
    ("median", "high_count", lambda d: d["metadata"].update(high_count=7), "high_count"),
    ("median", "p", lambda d: d["metadata"].update(p=5), "columns"),
    ("median", "pairs x3", _pair_three_times, "pairs"),
    ("median", "pairs reversed", lambda d: d["metadata"]["pairs"].reverse(), "pairs"),
    ("median", "labels", _labels_swapped, "labels"),
    ("median", "columns", lambda d: d["metadata"].update(columns=["a", "b"]), "columns"),
    ("median", "columns dup", _columns_duplicate, "columns"),
    ("median", "no high_count", lambda d: d["metadata"].pop("high_count"), "high_count"),
    ("median", "no pairs", lambda d: d["metadata"].pop("pairs"), "pairs"),
    ("median", "no metadata", lambda d: d.pop("metadata"), "metadata"),
    ("median", "extra key", lambda d: d["metadata"].update(note="x"), "metadata"),
    ("median", "parallel eps/k", _parallel_third, "composition"),
    ("median", "joint", lambda d: d.update(composition="joint"), "composition"),
    ("median", "value 1e18", _huge_value, "values"),
    (
        "median",
        "sensitivity 2",
        lambda d: d["mechanism"].update(sensitivity=2, scale=d["mechanism"]["scale"] * 2),
        "sensitivity",
    ),
    ("median", "eps per pair", lambda d: d["metadata"].update(epsilon_per_pair=1.0), "epsilon_per_pair"),
    ("median", "guarantee x0.5", lambda d: _scale_guarantee(d, 0.5), "guarantee"),
    ("median", "n=2**45", lambda d: d.update(n=2**45), "high_count"),
    ("median", "deep metadata", _deep, "nested"),
    ("median", "secure+simulation", _secure_with_simulation_note, "secure"),
    (
        "median",
        "laplace",
        lambda d: d.update(mechanism={"family": "laplace", "scale": 6.0, "sensitivity": 1.0}),
        "mechanism.family",
    ),
    ("tgm", "bounds", _tgm_bounds, "lower/upper"),
    ("tgm", "value above h", lambda d: d["values"].__setitem__(0, 10**6), "values"),
    ("kendall", "4/(n+1)", _kendall_old_sensitivity, "sensitivity"),
    ("kendall", "n", lambda d: d.update(n=400), "sensitivity"),
    ("counts", "norm", _counts_norm, "sensitivity_norm"),
    ("counts", "negative", _counts_negative, "values"),
    ("counts", "composition", lambda d: d.update(composition="sequential"), "composition"),
    ("rr", "categories", _rr_categories, "categories"),
    ("rr", "value", _rr_value, "values"),
    ("rr", "n", _rr_n, "n"),
    ("dirichlet", "geometric", _dirichlet_geometric, "guarantee"),
    ("dirichlet", "drop component", _drop_component, "epsilon_2"),
    ("dirichlet", "component insecure", _component_insecure, "secure"),
    ("dirichlet", "threshold_index", _index, "threshold_index"),
    ("dirichlet", "a", _a, "sensitivity"),
    ("dirichlet", "a+sensitivity", _a_and_sensitivity, "a"),
    ("dirichlet", "noisy_counts", _noisy_counts, "noisy_counts"),
    ("dirichlet", "n_parts", _n_parts, "n_parts"),
    ("dirichlet", "epsilon_1", lambda d: d["metadata"].update(epsilon_1=0.1), "epsilon_1"),
    ("dirichlet_split", "joint", _split_composition, "composition"),
    ("dirichlet_split", "parts", lambda d: d["metadata"].update(n_parts=[1, d["n"] - 1]), "n_parts"),
    ("dirichlet", "component provenance", _component_provenance, "provenance"),
    ("counts", "made elsewhere but secure", lambda d: d.update(provenance="OpenDP 0.16.0"), "provenance"),
    ("published", "secure", lambda d: d.update(secure=True), "provenance"),
    ("published", "simulation", lambda d: d["metadata"].update(simulation="SIMULATION"), "provenance"),
    ("published", "no provenance", lambda d: d.pop("provenance"), "provenance"),
    ("published", "empty provenance", lambda d: d.update(provenance=" "), "provenance"),
    ("published", "provenance not text", lambda d: d.update(provenance=["a"]), "provenance"),
    ("published", "provenance control chars", lambda d: d.update(provenance="a\x1b[2Jb"), "provenance"),
    ("published", "provenance too long", lambda d: d.update(provenance="x" * 161), "provenance"),
    ("published", "version 1 with provenance", _published_as_noiseaware_v1, "provenance"),
    ("published", "version 3", lambda d: d.update(schema_version=3), "schema_version"),
    ("published", "sigma x2", lambda d: d["mechanism"].update(sigma=4.0), "guarantee"),
    ("published", "norm", lambda d: d["metadata"].update(sensitivity_norm="l1"), "sensitivity_norm"),
    ("published", "family", lambda d: d["mechanism"].update(family="gaussian"), "mechanism.family"),
    ("published", "value far below 0", lambda d: d["values"].__setitem__(2, -1000), "values"),
    # the ranges each schema declares with a field's type (Int(minimum=...), Float(gt=...), OneOf, ListOf)
    ("median", "n=1", lambda d: d.update(n=1), "n must be an integer >= 2"),
    ("median", "p=1", lambda d: d["metadata"].update(p=1), "metadata.p must be an integer >= 2"),
    ("median", "pair of one", lambda d: d["metadata"]["pairs"].__setitem__(0, [0]), "metadata.pairs[0] must hold 2"),
    ("median", "eps per pair 0", lambda d: d["metadata"].update(epsilon_per_pair=0.0), "epsilon_per_pair must be > 0"),
    ("counts", "norm l3", lambda d: d["metadata"].update(sensitivity_norm="l3"), "sensitivity_norm must be one of"),
    ("rr", "categories 1", lambda d: d["metadata"].update(categories=1), "categories must be an integer >= 2"),
    ("dirichlet", "a=1", lambda d: d["metadata"].update(a=1.0), "metadata.a must be in (0, 1)"),
    ("dirichlet", "zeros", lambda d: d["metadata"].update(zeros="drop"), "metadata.zeros must be one of"),
    ("dirichlet", "target_rate", lambda d: d["metadata"].update(target_rate=1.5), "target_rate must be in (0, 1]"),
    ("dirichlet", "candidate 1", lambda d: d["metadata"]["candidates"].__setitem__(0, 1.0), "candidates[0] must be"),
]


@pytest.mark.parametrize(("base", "case", "edit", "field"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_tampered_record_is_refused_naming_the_field(base: str, case: str, edit: Edit, field: str) -> None:
    d = copy.deepcopy(BASES[base])
    edit(d)
    with pytest.raises(ReleaseFormatError, match=re.escape(field)):
        _load(d)


def test_dirichlet_geometric_is_refused_by_family() -> None:
    d = copy.deepcopy(BASES["dirichlet"])
    # a geometric mechanism whose guarantee matches: the schema still refuses the family
    geo = {"family": "geometric", "scale": 2.0, "sensitivity": 1}
    d["mechanism"] = geo
    d["dtype"] = "int64"
    d["values"] = [round(v) for v in d["values"]]
    d["guarantee"]["epsilon"] = 0.5 + d["components"][0]["guarantee"]["epsilon"]
    with pytest.raises(ReleaseFormatError, match=r"mechanism\.family"):
        _load(d)


def test_values_within_the_noise_reach_load() -> None:
    # the reach rule refuses only values the noise reaches with probability < 2**-64
    from noiseaware._statistics import noise_reach

    d = copy.deepcopy(BASES["median"])
    rel = _load(d)
    t = noise_reach(rel.mechanism)
    assert t is not None
    d["values"][0] = int(rel.metadata["high_count"] + t)
    _load(d)
    d["values"][0] += 1
    with pytest.raises(ReleaseFormatError, match="values"):
        _load(d)


def test_fully_consistent_forgery_of_n_is_not_detectable_and_documented() -> None:
    # n, high_count and bounds changed together describe another (possible) release: the loader cannot
    # tell, which docs/security.md states (only a signature could); the analysis then models that release.
    d = copy.deepcopy(BASES["median"])
    d["n"], d["metadata"]["high_count"], d["metadata"]["bounds"] = 45, 23, [0, 23]
    _load(d)


def test_deep_metadata_without_json_is_refused_not_a_recursion_error() -> None:
    d = copy.deepcopy(BASES["median"])
    _deep(d)
    with pytest.raises(ReleaseFormatError, match="metadata"):
        na.Release.from_dict(d)  # no JSON parser on this path: _freeze bounds the depth itself


def test_secure_false_alone_is_a_weaker_claim_and_loads() -> None:
    # secure=False without a simulation note: "not drawn by noiseaware" (e.g. transcribed), not replayable
    d = copy.deepcopy(BASES["median"])
    d["secure"] = False
    rel = _load(d)
    assert not rel.secure and not rel.simulation


# --------------------------------------------------------------------------- typed fields added later
def _dpcopula_records() -> dict[str, dict[str, Any]]:
    import pandas as pd

    r = np.random.default_rng(5)
    df = pd.DataFrame(
        {
            "age": r.integers(0, 90, 200),
            "sex": pd.Categorical(r.choice(["f", "m"], 200)),
            "income": r.random(200) * 1e5,
            "k": r.integers(0, 3, 200),
        }
    )
    doms: dict[str, Any] = {
        "age": range(0, 200),
        "sex": ["f", "m"],
        "income": {"lower": 0.0, "upper": 1e5, "bins": 10},
        "k": range(3),
    }
    plain = na.privatize(df, statistic="dpcopula", epsilon=1.0, domains=doms)
    hybrid = na.privatize(df, statistic="dpcopula", epsilon=1.0, domains=doms, hybrid=["k"])
    return {"dpcopula": plain.to_dict(), "hybrid": hybrid.to_dict()}


DPCOPULA = _dpcopula_records()


@pytest.mark.parametrize("kind", sorted(DPCOPULA))
@pytest.mark.parametrize(
    ("column", "dtype"),
    [
        (0, "bool"),  # ages 0..199 would come back as True/False
        (0, "datetime64[ns]"),  # ... or as timestamps
        (0, "timedelta64[s]"),
        (0, "int8"),  # cannot hold 128..199: would wrap
        (0, "float16"),  # holds 0..199 exactly: accepted (see below)
        (1, "int64"),  # the listed values are strings
        (2, "bool"),  # an interval domain
        (2, "str"),
        (0, "<U1"),
    ],
)
def test_dpcopula_dtypes_are_checked_against_the_allowed_set_and_the_domain(kind, column, dtype):
    d = copy.deepcopy(DPCOPULA[kind])
    assert _load(copy.deepcopy(d)).to_dict() == d
    d["metadata"]["dtypes"][column] = dtype
    if (column, dtype) == (0, "float16"):
        assert _load(d).metadata["dtypes"][0] == "float16"
        return
    with pytest.raises(ReleaseFormatError, match=rf"metadata\.dtypes\[{column}\]"):
        _load(d)


def test_a_column_whose_dtype_cannot_hold_its_domain_is_refused_before_any_budget():
    import pandas as pd

    from noiseaware.accounting import PrivacyBudget
    from noiseaware.exceptions import NoiseawareTypeError

    df = pd.DataFrame({"age": np.arange(100, dtype=np.int8) % 90, "k": np.arange(100) % 3})
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(NoiseawareTypeError, match=r"column 'age' has dtype 'int8'.*holding 0\.\.199"):
        na.privatize(df, "dpcopula", epsilon=1.0, domains={"age": range(200), "k": range(3)}, budget=budget)
    assert budget.remaining == 1.0


@pytest.mark.parametrize(
    ("base", "values"),
    [("counts", [2**70, 5, 5, 1]), ("counts", [-(2**63) - 1, 5, 5, 1]), ("kendall", [2**1030] + [0.0] * 5)],
)
def test_integers_too_large_for_the_dtype_are_refused_naming_values(base, values):
    d = copy.deepcopy(BASES[base])
    d["values"] = values
    with pytest.raises(ReleaseFormatError, match=r"field 'values' must hold (int64|float64) values"):
        na.Release.from_dict(d)  # the JSON reader also refuses integers of more than 40 digits
    if base == "counts":
        with pytest.raises(ReleaseFormatError, match=r"field 'values' must hold int64 values"):
            _load(d)


def test_integer_domain_bounds_beyond_int64_are_refused_naming_the_domain():
    d = copy.deepcopy(DPCOPULA["dpcopula"])
    d["metadata"]["domains"][0] = {"kind": "integers", "lower": 2**70, "upper": 2**70 + 199}
    with pytest.raises(ReleaseFormatError, match=r"metadata\.domains\[0\].*\[-2\*\*63, 2\*\*63 - 1\]"):
        _load(d)


def test_from_json_tells_paths_from_json_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rel = na.privatize(np.array([3, 1, 4, 1]), statistic="counts", epsilon=1.0, sensitivity=2)
    rel.to_json("{run}.json")
    assert na.Release.from_json("{run}.json").to_dict() == rel.to_dict()  # a file name, not JSON text
    rel.to_json("{odd}")
    assert na.Release.from_json("{odd}").to_dict() == rel.to_dict()  # an existing file
    assert na.Release.from_json(rel.to_json()).to_dict() == rel.to_dict()  # JSON text
    with pytest.raises(ReleaseFormatError, match="not valid JSON"):
        na.Release.from_json('{"statistic": ')  # a truncated record, not a missing file


# ----------------------------------------------------------------------------- regression releases
_REG = np.column_stack([np.clip(X[:, :2] / 3.0, -1, 1), np.clip(X[:, 2] / 2.0, -2, 2)])
_REG_OPTS = {"statistic": "regression", "response": "x2", "bounds": [1.0, 1.0, 2.0]}
BASES["reg_ssp"] = na.privatize(_REG, rho=1.0, **_REG_OPTS).to_dict()  # type: ignore[arg-type]
BASES["reg_laplace"] = na.privatize(_REG, epsilon=1.0, **_REG_OPTS).to_dict()  # type: ignore[arg-type]
BASES["reg_adassp"] = na.privatize(_REG, rho=1.0, method="adassp", **_REG_OPTS).to_dict()  # type: ignore[arg-type]
BASES["reg_pace"] = na.privatize(_REG, rho=1.0, method="pace_ggm", **_REG_OPTS).to_dict()  # type: ignore[arg-type]


def _reg_sensitivity(d: dict[str, Any], factor: float) -> None:
    # a smaller sensitivity with a consistent sigma and guarantee: only the recomputed rule catches it
    d["mechanism"]["sensitivity"] *= factor
    d["mechanism"]["sigma" if "sigma" in d["mechanism"] else "scale"] *= factor


def _reg_drop_entry(d: dict[str, Any]) -> None:
    d["values"].pop()
    d["labels"].pop()


def _reg_component_design(d: dict[str, Any]) -> None:
    d["components"][0]["metadata"]["design"] = ["(intercept)", "x1"]
    d["components"][0]["mechanism"]["sensitivity"] = 2.0
    d["components"][0]["mechanism"]["sigma"] *= 2.0 / 3.0


def _reg_pace_bound(d: dict[str, Any]) -> None:
    # the PACE-GGM component claims a bound of 2 with the matching sensitivity 2 B**2 / n everywhere
    pace = d["components"][0]
    pace["metadata"]["bound"] = 2.0
    for rel in [pace, *pace["components"]]:
        rel["mechanism"]["sensitivity"] *= 4.0
        for key in ("sigma", "scale"):
            if key in rel["mechanism"]:
                rel["mechanism"][key] *= 4.0


REG_CASES: list[tuple[str, str, Edit, str]] = [
    ("reg_ssp", "sensitivity k-1", lambda d: _reg_sensitivity(d, 3.0 / 4.0), "sensitivity"),
    ("reg_laplace", "L1 sensitivity k**2", lambda d: _reg_sensitivity(d, 16.0 / 15.0), "sensitivity"),
    ("reg_ssp", "columns dup", _columns_duplicate, "columns"),
    ("reg_ssp", "response", lambda d: d["metadata"].update(response="x0"), "response"),
    ("reg_ssp", "predictors", lambda d: d["metadata"].update(predictors=["x1", "x0"]), "predictors"),
    ("reg_ssp", "intercept flag", lambda d: d["metadata"].update(intercept=False), "columns"),
    ("reg_ssp", "intercept bound", lambda d: d["metadata"]["bounds"].__setitem__(0, 2.0), "bounds"),
    ("reg_ssp", "bounds short", lambda d: d["metadata"]["bounds"].pop(), "bounds"),
    ("reg_ssp", "bounds negative", lambda d: d["metadata"]["bounds"].__setitem__(1, -1.0), "bounds"),
    ("reg_ssp", "labels", _labels_swapped, "labels"),
    ("reg_ssp", "drop entry", _reg_drop_entry, "shape"),
    ("reg_ssp", "method adassp", lambda d: d["metadata"].update(method="adassp"), "rho"),
    ("reg_ssp", "method other", lambda d: d["metadata"].update(method="ols"), "method"),
    ("reg_ssp", "rho on ssp", lambda d: d["metadata"].update(rho=1.0), "rho"),
    ("reg_ssp", "entry order", lambda d: d["metadata"].update(entry_order="upper"), "entry_order"),
    ("reg_adassp", "no component", lambda d: d.update(components=[]), "guarantee"),
    ("reg_adassp", "rho", lambda d: d["metadata"].update(rho=2.0), "guarantee"),
    ("reg_adassp", "delta", lambda d: d["metadata"].update(delta=1.5), "delta"),
    ("reg_adassp", "component design", _reg_component_design, "components"),
    ("reg_laplace", "adassp", lambda d: d["metadata"].update(method="adassp", rho=1.0, delta=1e-6), "family"),
    ("reg_pace", "pace bound", _reg_pace_bound, "components"),
    ("reg_pace", "design", lambda d: d["metadata"].update(design=["x0", "x1"]), "design"),
    ("reg_pace", "labels", lambda d: d.update(labels=[["lambda"]]), "values"),
    ("reg_pace", "eigen sensitivity", lambda d: _reg_sensitivity(d, 2.0 / 3.0), "sensitivity"),
    ("reg_pace", "round sigma", lambda d: d["components"][0]["metadata"]["rounds"][0].update(sigma=-1.0),
     r"rounds\[0\]\.sigma must be > 0"),
    ("reg_pace", "round keys", lambda d: d["components"][0]["metadata"]["rounds"][0].pop("sigma"),
     r"rounds\[0\] must be an object with keys"),
]


@pytest.mark.parametrize(("base", "case", "edit", "field"), REG_CASES, ids=[f"{c[0]}-{c[1]}" for c in REG_CASES])
def test_tampered_regression_record_is_refused_naming_the_field(base: str, case: str, edit: Edit, field: str) -> None:
    d = copy.deepcopy(BASES[base])
    edit(d)
    with pytest.raises(ReleaseFormatError, match=field):
        _load(d)


def test_regression_bounds_are_the_curators_declaration() -> None:
    """A consistent change of a data column's bound is not detectable (as ``n``): the values do not reveal it.

    The bounds scale the analyst's moments; the loader checks their count, sign and the intercept's 1,
    not their size (docs/release-format.md says so).
    """
    d = copy.deepcopy(BASES["reg_ssp"])
    d["metadata"]["bounds"][1] = 5.0
    assert _load(d).metadata["bounds"][1] == 5.0


@pytest.mark.parametrize("kind", ["reg_ssp", "reg_laplace", "reg_adassp", "reg_pace"])
def test_untouched_regression_records_load(kind: str) -> None:
    rel = _load(copy.deepcopy(BASES[kind]))
    assert rel.secure and rel.to_dict() == BASES[kind]
