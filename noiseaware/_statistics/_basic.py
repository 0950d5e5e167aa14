"""Schemas of the general statistics: pairwise high-high counts, Kendall's tau, counts, vectors, randomized answers."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._rules import kendall_sensitivity
from ._schema import (
    _PAIR_FIELDS,
    INT,
    INT_LIST,
    STR,
    STR_LIST,
    StatisticSchema,
    _check_columns,
    _check_epsilon_per_pair,
    _check_pairs,
    _check_reach,
    _check_sensitivity,
    _fail,
    _int,
    _int_list,
    _meta,
)

__all__: list[str] = []


def _check_median_pairs(release: Any) -> None:
    n = _int("n", release.n, minimum=2)
    _check_pairs(release)
    h = math.ceil(n / 2)
    if _int("metadata.high_count", _meta(release, "high_count")) != h:
        _fail("metadata.high_count", f"must be ceil(n/2) = {h} for n = {n}", _meta(release, "high_count"))
    bounds = _int_list("metadata.bounds", _meta(release, "bounds"))
    if bounds != [0, h]:
        _fail("metadata.bounds", f"must be [0, ceil(n/2)] = [0, {h}]", bounds)
    _check_sensitivity(release, 1.0, "1 (one record moves each high-high count by at most 1)")
    _check_epsilon_per_pair(release)
    mech = release.mechanism
    _check_reach(release, 0.0, float(h))
    if mech.family in ("tgm", "btgm", "rgm"):
        if (int(mech.lower), int(mech.upper)) != (0, h):
            _fail("mechanism.lower/upper", f"must be 0 and ceil(n/2) = {h}", [mech.lower, mech.upper])
        vals = release.values
        if np.any(vals < 0) or np.any(vals > h):
            _fail("values", f"must lie in [0, {h}] for the range-preserving {mech.family!r} mechanism", vals.tolist())



def _check_kendall_pairs(release: Any) -> None:
    n = _int("n", release.n, minimum=2)
    _check_pairs(release)
    _check_sensitivity(release, kendall_sensitivity(n), "4/n (Kendall's tau-a, one record changes n-1 pairs)")
    _check_epsilon_per_pair(release)


def _check_sensitivity_norm(release: Any) -> None:
    if "sensitivity_norm" not in release.metadata:  # derivable from the family; checked when stated
        return
    norm = _meta(release, "sensitivity_norm")
    want = "l1" if release.mechanism.family in ("geometric", "laplace") else "l2"
    if norm != want:
        _fail("metadata.sensitivity_norm", f"must be {want!r} for mechanism {release.mechanism.family!r}", norm)


def _check_counts(release: Any) -> None:
    _check_sensitivity_norm(release)
    if release.values.dtype.kind != "i":
        _fail("dtype", "must be int64 for counts", str(release.values.dtype))
    _check_reach(release, 0.0, None)  # counts are >= 0 (privatize refuses negative ones)


def _check_vector(release: Any) -> None:
    _check_sensitivity_norm(release)
    if release.values.ndim != 1:
        _fail("shape", "must be one-dimensional for a vector", list(release.values.shape))


def _check_randomized_response(release: Any) -> None:
    vals = release.values
    if vals.ndim != 2:
        _fail("shape", "must be [n, q] (q answers per record)", list(vals.shape))
    n, q = vals.shape
    if release.n != n:
        _fail("n", f"must equal the number of rows of values ({n})", release.n)
    meta = release.metadata
    if "answers_per_record" in meta and _int("metadata.answers_per_record", meta["answers_per_record"]) != q:
        _fail("metadata.answers_per_record", f"must equal the number of columns of values ({q})",
              meta["answers_per_record"])
    if "columns" in meta:
        _check_columns(release, q)
    k = int(release.mechanism.k)
    if "categories" in meta and _int("metadata.categories", meta["categories"], minimum=2) != k:
        _fail("metadata.categories", f"must equal the mechanism's k ({k})", meta["categories"])
    if np.any(vals < 0) or np.any(vals >= k):
        _fail("values", f"must be category codes in 0..{k - 1}", vals.ravel()[:10].tolist())



#: The general statistics, by schema.
SCHEMAS: tuple[StatisticSchema, ...] = (
    StatisticSchema(
        "median_pairs",
        families=("geometric", "tgm", "btgm", "rgm"),
        compositions=("sequential",),
        required={**_PAIR_FIELDS, "high_count": INT, "bounds": INT_LIST, "tie_breaking": STR},
        check=_check_median_pairs,
        sensitivity="1 per high-high count (Wang et al. 2026, Theorem 3.1)",
    ),
    StatisticSchema(
        "kendall_pairs",
        families=("laplace",),
        compositions=("sequential",),
        required={**_PAIR_FIELDS, "estimand": STR},
        check=_check_kendall_pairs,
        sensitivity="4/n per Kendall's tau-a (one record changes n-1 of the C(n,2) pairs by 2)",
    ),
    StatisticSchema(
        "counts",
        families=("geometric", "discrete_gaussian"),
        optional={"sensitivity_norm": STR},
        needs_n=False,
        check=_check_counts,
        sensitivity="stated by the curator (L1 for geometric, L2 for discrete Gaussian)",
    ),
    StatisticSchema(
        "vector",
        families=("laplace", "gaussian"),
        optional={"sensitivity_norm": STR},
        needs_n=False,
        check=_check_vector,
        sensitivity="stated by the curator (L1 for Laplace, L2 for Gaussian)",
    ),
    StatisticSchema(
        "randomized_response",
        families=("randomized_response",),
        compositions=("per_record",),
        optional={"columns": STR_LIST, "answers_per_record": INT, "categories": INT},
        check=_check_randomized_response,
        sensitivity="record level: each answer is randomized on its own (local DP)",
    ),
)
