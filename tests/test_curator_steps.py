"""The curator functions split into steps give the same seeded releases, ledgers and loaded records as before.

Each case privatizes a small data set with ``rng=np.random.default_rng(0)`` and a
:class:`~noiseaware.accounting.PrivacyBudget`, and compares a digest of ``release.to_dict()`` (without
``noiseaware_version``) and of the budget's exact ledger with the digest recorded before the curator
functions (``pace_ggm``, ``dpcopula`` and its hybrid, ``dirichlet_logmean``, ``Context.release``,
``finish``) were split into steps: the same random draws in the same order, the same metadata, the same
charges. ``Release.from_dict`` must rebuild every one of them exactly.

If a change of a statistic's release is intended, print the new digests with
``python tests/test_curator_steps.py`` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import ReleaseFormatError


def _box(n: int = 60, d: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(0.3 + 0.4 * rng.normal(size=(n, d)), -1.0, 1.0)


def _table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    z = r.multivariate_normal([0, 0, 0], [[1, 0.6, 0.3], [0.6, 1, 0.2], [0.3, 0.2, 1]], size=n)
    return pd.DataFrame(
        {
            "age": np.clip(np.round(z[:, 0] * 15 + 45), 0, 99).astype(np.int64),
            "income": np.clip(z[:, 1] * 2 + 5, 0, 20),
            "sex": np.where(z[:, 2] > 0, "f", "m"),
        }
    )


_DOMAINS: dict[str, Any] = {
    "age": range(0, 100),
    "income": {"lower": 0.0, "upper": 20.0, "bins": 40},
    "sex": ["f", "m"],
}


def _simplex(n: int = 200, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).dirichlet((1.0, 2.0, 3.0), size=n)
    x[:3, 0] = 0.0  # a few zero parts for zeros='censor'
    return x / x.sum(axis=1, keepdims=True)


def _regression(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 2))
    y = np.clip(0.3 + x @ [1.0, -0.5] + 0.2 * rng.normal(size=n), -2, 2)
    return pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": y})


_BOUNDS = {"a": 1.0, "b": 1.0, "y": 2.0}

#: (case, data, statistic, budget kind, options) -- budget 1.0 of that kind unless the options say otherwise.
CASES: dict[str, tuple[Callable[[], Any], str, str, dict[str, Any]]] = {
    "pace_ggm": (_box, "pace_ggm", "rho", {"bound": 1.0}),
    "pace_ggm_centred": (_box, "pace_ggm", "rho", {"bound": 1.0, "center": True, "T": 4, "alpha": 0.4, "beta": 0.6}),
    "pace_ggm_clip": (lambda: 1.5 * _box(), "pace_ggm", "rho", {"bound": 1.0, "clip": True, "T": 2}),
    "second_moment": (_box, "second_moment", "rho", {"bound": 1.0}),
    "dpcopula_kendall": (_table, "dpcopula", "epsilon", {"domains": _DOMAINS}),
    "dpcopula_mle": (_table, "dpcopula", "epsilon", {"domains": _DOMAINS, "correlation": "mle", "blocks": 20}),
    "dpcopula_median": (_table, "dpcopula", "epsilon", {"domains": _DOMAINS, "correlation": "median", "ratio": 3.0}),
    "dpcopula_hybrid_auto": (_table, "dpcopula", "epsilon", {"domains": _DOMAINS, "hybrid": "auto"}),
    "dpcopula_hybrid_list": (
        _table,
        "dpcopula",
        "epsilon",
        {"domains": _DOMAINS, "hybrid": ["sex"], "floor": 5, "counts_share": 0.2, "ratio": 4.0},
    ),
    "dirichlet_selected": (_simplex, "dirichlet_logmean", "epsilon", {"zeros": "censor"}),
    "dirichlet_fixed": (_simplex, "dirichlet_logmean", "epsilon", {"zeros": "censor", "threshold": 1e-3}),
    "dirichlet_split": (
        _simplex,
        "dirichlet_logmean",
        "epsilon",
        {"zeros": "censor", "split": 0.4, "candidates": [1e-3, 1e-2, 0.1], "target_rate": 0.05},
    ),
    "median_pairs": (_box, "median_pairs", "epsilon", {}),
    "kendall_pairs": (_box, "kendall_pairs", "epsilon", {}),
    "counts": (lambda: [5, 0, 2, 7], "counts", "epsilon", {"sensitivity": 1}),
    "vector": (lambda: [1.5, -2.0, 0.25], "vector", "rho", {"sensitivity": 1.0}),
    "randomized_response": (
        lambda: np.random.default_rng(0).integers(0, 3, size=(40, 2)),
        "randomized_response",
        "epsilon",
        {"categories": 3},
    ),
    "regression": (_regression, "regression", "rho", {"response": "y", "bounds": _BOUNDS}),
    "regression_adassp": (_regression, "regression", "rho", {"response": "y", "bounds": _BOUNDS, "method": "adassp"}),
    "regression_pace": (_regression, "regression", "rho", {"response": "y", "bounds": _BOUNDS, "method": "pace_ggm"}),
}

#: sha256 (first 16 hex digits) of each case's release and ledger, recorded before the split.
EXPECTED: dict[str, str] = {
    "counts": "ee15317e2da8cc3a",
    "dirichlet_fixed": "854f278e948ca241",
    "dirichlet_selected": "3122a9d391707ffc",
    "dirichlet_split": "3702d45c6de28f8d",
    "dpcopula_hybrid_auto": "a591d7f27fbaa963",
    "dpcopula_hybrid_list": "a633657c139b2c4c",
    "dpcopula_kendall": "de01954adc7f76d5",
    "dpcopula_median": "448aa04e50ca776b",
    "dpcopula_mle": "e175038d275510e3",
    "kendall_pairs": "015b102f515f1dad",
    "median_pairs": "804febd6d2b5a20d",
    "pace_ggm": "872368516bee7cb8",
    "pace_ggm_centred": "58b191ecda404e49",
    "pace_ggm_clip": "3a40fde18091e4da",
    "randomized_response": "4ae0e8734ceb0afd",
    "regression": "333723a4d4f8a769",
    "regression_adassp": "328c047f9bde3ce1",
    "regression_pace": "ef93e6c6646536a2",
    "second_moment": "9697c717d2f6f664",
    "vector": "f5be6fc6e768a7ce",
}


def _without_version(d: dict[str, Any]) -> dict[str, Any]:
    out = {k: val for k, val in d.items() if k != "noiseaware_version"}
    out["components"] = [_without_version(c) for c in d["components"]]
    return out


def _run(case: str) -> tuple[na.Release, str]:
    make, stat, kind, options = CASES[case]
    budget = PrivacyBudget(**{kind: 10.0})
    rel = na.privatize(make(), stat, **{kind: 1.0}, rng=np.random.default_rng(0), budget=budget, **options)
    record = {
        "release": _without_version(rel.to_dict()),
        "ledger": [[label, str(amount)] for label, amount in budget.ledger_exact],
    }
    text = json.dumps(record, allow_nan=False)  # key order too: it is the JSON a reader gets
    return rel, hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("case", sorted(CASES))
def test_seeded_release_is_unchanged(case: str) -> None:
    """The same draws, metadata and charges as before the split (the digest of the release and the ledger)."""
    _, digest = _run(case)
    assert digest == EXPECTED[case], f"{case}: the seeded release or its charges changed"


@pytest.mark.parametrize("case", sorted(CASES))
def test_release_loads_back_exactly(case: str) -> None:
    """``Release.from_dict`` rebuilds every release field for field."""
    rel, _ = _run(case)
    d = rel.to_dict()
    assert na.Release.from_dict(json.loads(json.dumps(d))).to_dict() == d


#: One bad value per field, in the order ``Release.from_dict`` checks the fields, and the field its error names.
_BAD_FIELDS = [
    ("schema_version", "2", "schema_version"),
    ("provenance", 7, "provenance"),
    ("shape", "3", "shape"),
    ("dtype", "int8", "dtype"),
    ("values", [True], "values"),
    ("labels", [["a", 1]], "labels"),
    ("n", 0, "n"),
    ("secure", "yes", "secure"),
    ("metadata", [], "metadata"),
    ("components", {}, "components"),
    ("mechanism", {"family": "nope"}, "mechanism"),
    ("guarantee", {"epsilon": "one"}, "guarantee"),
]


def test_first_bad_field_is_named_in_field_order() -> None:
    """With every field of a record bad, the error names the first; mend it, and the next one is named, in order.

    A component's error names its place (``components[0].``).
    """
    rel, _ = _run("dirichlet_selected")
    good = rel.to_dict()
    bad = {**good, **{name: value for name, value, _ in _BAD_FIELDS}}
    for name, _, field in _BAD_FIELDS:
        with pytest.raises(ReleaseFormatError, match=rf"field '{field}[.']"):
            na.Release.from_dict(bad)
        bad[name] = good[name]
    assert na.Release.from_dict(bad).to_dict() == good
    inner = {**good, "components": [{**good["components"][0], "n": 0, "secure": "yes"}]}
    with pytest.raises(ReleaseFormatError, match=r"field 'components\[0\]\.n'"):
        na.Release.from_dict(inner)


if __name__ == "__main__":  # print the digests to record in EXPECTED
    for name in sorted(CASES) if len(sys.argv) < 2 else sys.argv[1:]:
        print(f"    {name!r}: {_run(name)[1]!r},".replace("'", '"'))
