"""Schemas of the general statistics: pairwise high-high counts, Kendall's tau, counts, vectors, randomized answers."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._validation import owned
from ._rules import kendall_sensitivity
from ._schema import (
    _PAIR_FIELDS,
    INT,
    NAMES,
    STR,
    Int,
    ListOf,
    OneOf,
    StatisticSchema,
    _check_columns,
    _check_integer_values,
    _check_pairs,
    _check_reach,
    _check_sensitivity,
    _fail,
)

__all__: list[str] = []


@owned("Release")
def _check_median_pairs(release: Any, meta: Mapping[str, Any]) -> None:
    n = release.n
    _check_pairs(release, meta)
    h = math.ceil(n / 2)
    if meta["high_count"] != h:
        _fail("metadata.high_count", f"must be ceil(n/2) = {h} for n = {n}", meta["high_count"])
    if meta["bounds"] != [0, h]:
        _fail("metadata.bounds", f"must be [0, ceil(n/2)] = [0, {h}]", meta["bounds"])
    _check_sensitivity(release, 1.0, "1 (one record moves each high-high count by at most 1)")
    mech = release.mechanism
    _check_reach(release, 0.0, float(h))
    if mech.family in ("tgm", "btgm", "rgm"):
        if (int(mech.lower), int(mech.upper)) != (0, h):
            _fail("mechanism.lower/upper", f"must be 0 and ceil(n/2) = {h}", [mech.lower, mech.upper])
        vals = release.values
        if np.any(vals < 0) or np.any(vals > h):
            _fail("values", f"must lie in [0, {h}] for the range-preserving {mech.family!r} mechanism", vals.tolist())


def _check_kendall_pairs(release: Any, meta: Mapping[str, Any]) -> None:
    _check_pairs(release, meta)
    _check_sensitivity(release, kendall_sensitivity(release.n), "4/n (Kendall's tau-a, one record changes n-1 pairs)")


def _stated(name: str, what: str, l1_family: str, l2_family: str, check: Callable[[Any], None]) -> StatisticSchema:
    """The schema of ``what`` released with the sensitivity the curator states (L1 or L2 by the family; no ``n``).

    ``metadata.sensitivity_norm`` is derivable from the family; it is checked when stated.
    """

    @owned("Release")
    def checked(release: Any, meta: Mapping[str, Any]) -> None:
        want = "l1" if release.mechanism.family == l1_family else "l2"
        if meta.get("sensitivity_norm", want) != want:
            rule = f"must be {want!r} for mechanism {release.mechanism.family!r}"
            _fail("metadata.sensitivity_norm", rule, meta["sensitivity_norm"])
        check(release)

    return StatisticSchema(
        name,
        families=(l1_family, l2_family),
        optional={"sensitivity_norm": OneOf(("l1", "l2"))},
        min_n=None,
        check=checked,
        sensitivity=f"stated by the curator for {what} (L1 for {l1_family}, L2 for {l2_family})",
    )


def _check_counts(release: Any) -> None:
    _check_integer_values(release, "counts")
    _check_reach(release, 0.0, None)  # counts are >= 0 (privatize refuses negative ones)


@owned("Release")
def _check_vector(release: Any) -> None:
    if release.values.ndim != 1:
        _fail("shape", "must be one-dimensional for a vector", list(release.values.shape))


@owned("Release")
def _check_randomized_response(release: Any, meta: Mapping[str, Any]) -> None:
    vals = release.values
    if vals.ndim != 2:
        _fail("shape", "must be [n, q] (q answers per record)", list(vals.shape))
    n, q = vals.shape
    if release.n != n:
        _fail("n", f"must equal the number of rows of values ({n})", release.n)
    if meta.get("answers_per_record", q) != q:
        _fail("metadata.answers_per_record", f"must equal the number of columns of values ({q})",
              meta["answers_per_record"])
    if "columns" in meta:
        _check_columns(meta, q)
    k = int(release.mechanism.k)
    if meta.get("categories", k) != k:
        _fail("metadata.categories", f"must equal the mechanism's k ({k})", meta["categories"])
    if np.any(vals < 0) or np.any(vals >= k):
        _fail("values", f"must be category codes in 0..{k - 1}", vals.ravel()[:10].tolist())


#: The general statistics, by schema.
SCHEMAS: tuple[StatisticSchema, ...] = (
    StatisticSchema(
        "median_pairs",
        families=("geometric", "tgm", "btgm", "rgm"),
        compositions=("sequential",),
        required={**_PAIR_FIELDS, "high_count": INT, "bounds": ListOf(INT), "tie_breaking": STR},
        min_n=2,
        check=_check_median_pairs,
        sensitivity="1 per high-high count (Wang et al. 2026, Theorem 3.1)",
    ),
    StatisticSchema(
        "kendall_pairs",
        families=("laplace",),
        compositions=("sequential",),
        required={**_PAIR_FIELDS, "estimand": STR},
        min_n=2,
        check=_check_kendall_pairs,
        sensitivity="4/n per Kendall's tau-a (one record changes n-1 of the C(n,2) pairs by 2)",
    ),
    _stated("counts", "integer counts", "geometric", "discrete_gaussian", _check_counts),
    _stated("vector", "a real vector", "laplace", "gaussian", _check_vector),
    StatisticSchema(
        "randomized_response",
        families=("randomized_response",),
        compositions=("per_record",),
        optional={"columns": NAMES, "answers_per_record": INT, "categories": Int(minimum=2)},
        check=_check_randomized_response,
        sensitivity="record level: each answer is randomized on its own (local DP)",
    ),
)
