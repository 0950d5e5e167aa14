"""Schemas of DPCopula and its hybrid.

Li, Xiong & Jiang (2014), *Differentially Private Synthesization of Multi-Dimensional Data using Copula
Functions*.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from .._validation import owned
from ._schema import (
    _PAIR_FIELDS,
    ANY_LIST,
    NAMES,
    POSITIVE,
    STR,
    STR_LIST,
    FieldType,
    Int,
    ListOf,
    OneOf,
    StatisticSchema,
    _check_columns,
    _check_epsilon,
    _check_integer_values,
    _check_labels,
    _check_pairs,
    _check_reach,
    _check_sensitivity,
    _check_shape,
    _fail,
    _upper_pairs,
)

__all__: list[str] = []

#: The component each ``metadata.correlation`` of a ``dpcopula`` release names.
_CORRELATION_COMPONENT = {"kendall": "kendall_pairs", "mle": "dpcopula_mle", "median": "median_pairs"}


@owned("Release")
def _domains(meta: Mapping[str, Any]) -> tuple[list[str], list[Any], list[int]]:
    """``(columns, domains, bins)`` of a DPCopula release, each checked against the others and the dtypes."""
    from .._domains import Domain

    m = meta["m"]
    cols = _check_columns(meta, m)
    raw = meta["domains"]
    if len(raw) != m:
        _fail("metadata.domains", f"must give {m} domains (one per column)", raw)
    doms = [Domain.from_dict(d, f"metadata.domains[{j}]") for j, d in enumerate(raw)]
    dtypes = meta["dtypes"]
    if len(dtypes) != m:
        _fail("metadata.dtypes", f"must give {m} dtype names", dtypes)
    for j, (dt, d) in enumerate(zip(dtypes, doms, strict=True)):
        rule = d.dtype_rule(dt)
        if rule is not None:
            _fail(f"metadata.dtypes[{j}]", f"{rule} (metadata.domains[{j}] is of kind {d.kind!r})", dt)
    bins = meta["bins"]
    if bins != [d.size for d in doms]:
        _fail("metadata.bins", "must be the number of cells of each domain", bins)
    return cols, doms, bins


@owned("Release")
def _check_dpcopula_mle(release: Any, meta: Mapping[str, Any]) -> None:
    _check_pairs(release, meta)
    blocks, b = meta["blocks"], meta["block_size"]
    if b != release.n // blocks:
        _fail("metadata.block_size", f"must be floor(n / blocks) = {release.n // blocks}", b)
    _check_sensitivity(release, 2.0 / blocks, "2/blocks (Algorithm 2: diameter 2 of a coefficient over l blocks)")


@owned("Release")
def _check_dpcopula(release: Any, meta: Mapping[str, Any]) -> None:
    n, m = release.n, meta["m"]
    cols, doms, bins = _domains(meta)
    _check_shape(release, (sum(bins),), "the concatenated histograms")
    _check_integer_values(release, "noisy histogram counts")
    want = [[c, lab] for c, d in zip(cols, doms, strict=True) for lab in d.labels()]
    _check_labels(release, want, "must be [column, cell label] for every cell of every domain, in order")
    _check_sensitivity(release, 2.0 * m, "2m (m histograms, one record moves one count in each)")
    eps1, eps2, ratio = meta["epsilon_1"], meta["epsilon_2"], meta["ratio"]
    _check_epsilon(meta, "epsilon_1", release.mechanism.guarantee().epsilon, "the margins' geometric mechanism")
    if not math.isclose(eps1 / eps2, ratio, rel_tol=1e-6):
        _fail("metadata.ratio", f"must be epsilon_1 / epsilon_2 = {eps1 / eps2!r}", ratio)
    _check_reach(release, 0.0, float(n))
    corr = meta["correlation"]
    comps = release.components
    if len(comps) != 1 or comps[0].statistic != _CORRELATION_COMPONENT[corr]:
        _fail("components", f"must hold exactly one {_CORRELATION_COMPONENT[corr]!r} release for correlation={corr!r}",
              [c.statistic for c in comps])
    comp = comps[0]
    if comp.n != n:
        _fail("components[0].n", f"must equal n = {n}", comp.n)
    if [str(c) for c in comp.metadata["columns"]] != cols:
        _fail("components[0].metadata.columns", "must equal the release's columns", comp.metadata["columns"])
    _check_epsilon(meta, "epsilon_2", comp.guarantee.epsilon, "the correlation component")


@owned("Release")
def _check_dpcopula_hybrid_margins(release: Any, meta: Mapping[str, Any]) -> None:
    m2, parts, bins = len(meta["columns"]), meta["partitions"], meta["bins"]
    if len(bins) != m2:
        _fail("metadata.bins", f"must give {m2} domain sizes", bins)
    _check_shape(release, (parts * sum(bins),), "partitions x concatenated histograms")
    _check_integer_values(release, "noisy histogram counts")
    _check_sensitivity(release, 2.0 * m2, "2 m_2 (one record moves one (partition, cell) count per attribute)")
    _check_reach(release, 0.0, float(release.n))


@owned("Release")
def _check_dpcopula_hybrid_kendall(release: Any, meta: Mapping[str, Any]) -> None:
    m2, parts = len(meta["columns"]), meta["partitions"]
    k = m2 * (m2 - 1) // 2
    if meta["pairs"] != _upper_pairs(m2):
        _fail("metadata.pairs", "must list the upper-triangle pairs in row-major order", meta["pairs"])
    _check_shape(release, (parts * k,), "partitions x column pairs")
    _check_sensitivity(release, 8.0 * k / meta["floor"],
                       "2 C(m_2,2) 4/floor (a substitution moves at most two partitions, each by 4/floor per pair)")
    _check_reach(release, -1.0, 1.0)


@owned("Release")
def _check_dpcopula_hybrid(release: Any, meta: Mapping[str, Any]) -> None:
    n, m = release.n, meta["m"]
    cols, doms, bins = _domains(meta)
    hyb = meta["hybrid"]
    small = [cols.index(c) for c in hyb if c in cols]
    if not hyb or len(small) != len(hyb) or small != sorted(set(small)) or m - len(small) < 2:
        _fail("metadata.hybrid", "must list, in column order, distinct columns leaving at least two others", hyb)
    if "hybrid_threshold" in meta:
        t = meta["hybrid_threshold"]
        if small != [j for j, b in enumerate(bins) if b < t]:
            _fail("metadata.hybrid", f"must be the columns with fewer than hybrid_threshold = {t} cells", hyb)
    large = [j for j in range(m) if j not in small]
    parts = math.prod(bins[j] for j in small)
    _check_shape(release, (parts,), "one count per partition")
    _check_integer_values(release, "partition counts")
    plabels = [list(t) for t in itertools.product(*[doms[j].labels() for j in small])]
    _check_labels(release, plabels, "must be the small-domain cell labels of every partition, in C order")
    _check_sensitivity(release, 2.0, "2 (one record moves between two partitions)")
    _check_reach(release, 0.0, float(n))
    comps = release.components
    if [c.statistic for c in comps] != ["dpcopula_hybrid_margins", "dpcopula_hybrid_kendall"]:
        _fail("components", "must be [dpcopula_hybrid_margins, dpcopula_hybrid_kendall]",
              [c.statistic for c in comps])
    lnames = [cols[j] for j in large]
    floor = meta["floor"]
    for i, c in enumerate(comps):
        if c.n != n or [str(x) for x in c.metadata["columns"]] != lnames or c.metadata["partitions"] != parts:
            _fail(f"components[{i}]", f"must have n = {n}, columns {lnames} and {parts} partitions", c.statistic)
    if [int(b) for b in comps[0].metadata["bins"]] != [bins[j] for j in large]:
        _fail("components[0].metadata.bins", "must be the large columns' domain sizes", comps[0].metadata["bins"])
    want = [[*pl, cols[j], lab] for pl in plabels for j in large for lab in doms[j].labels()]
    _check_labels(comps[0], want, "must be [partition..., column, cell] in order", "components[0].labels")
    if int(comps[1].metadata["floor"]) != floor:
        _fail("components[1].metadata.floor", f"must equal the release's floor = {floor}", comps[1].metadata["floor"])
    pairs = [(lnames[i], lnames[j]) for i, j in itertools.combinations(range(len(lnames)), 2)]
    want = [[*pl, a, b] for pl in plabels for a, b in pairs]
    _check_labels(comps[1], want, "must be [partition..., column, column] in order", "components[1].labels")
    _check_epsilon(meta, "epsilon_counts", release.mechanism.guarantee().epsilon, "the counts' mechanism")
    _check_epsilon(meta, "epsilon_1", comps[0].guarantee.epsilon, "the margins' component")
    _check_epsilon(meta, "epsilon_2", comps[1].guarantee.epsilon, "the Kendall component")
    eps_c, eps1, eps2 = meta["epsilon_counts"], meta["epsilon_1"], meta["epsilon_2"]
    if not math.isclose(eps1 / eps2, meta["ratio"], rel_tol=1e-6):
        _fail("metadata.ratio", "must be epsilon_1 / epsilon_2", meta["ratio"])
    if not math.isclose(eps_c / (eps_c + eps1 + eps2), meta["counts_share"], rel_tol=1e-6):
        _fail("metadata.counts_share", "must be epsilon_counts / epsilon", meta["counts_share"])


#: The fields of both DPCopula releases (the margins' layout, the budget split, the correlation route).
_DPCOPULA_FIELDS: dict[str, FieldType] = {
    "columns": NAMES,
    "m": Int(minimum=2),
    "domains": ANY_LIST,
    "dtypes": STR_LIST,
    "bins": ListOf(Int(minimum=2)),
    "ratio": POSITIVE,
    "epsilon_1": POSITIVE,
    "epsilon_2": POSITIVE,
    "correlation": OneOf(tuple(_CORRELATION_COMPONENT)),
}

#: The columns of a hybrid's components: its large-domain columns.
_LARGE_COLUMNS = ListOf(STR, min_length=2, unique=True)

#: The DPCopula statistics, by schema.
SCHEMAS: tuple[StatisticSchema, ...] = (
    StatisticSchema(
        "dpcopula_mle",
        families=("laplace",),
        compositions=("sequential",),
        required={**_PAIR_FIELDS, "blocks": Int(minimum=1), "block_size": Int(minimum=2), "estimator": STR},
        min_n=2,
        check=_check_dpcopula_mle,
        sensitivity="2/l per averaged coefficient (Li et al. 2014, Algorithm 2, l disjoint blocks)",
    ),
    StatisticSchema(
        "dpcopula",
        families=("geometric",),
        required=_DPCOPULA_FIELDS,
        min_n=2,
        check=_check_dpcopula,
        components=tuple(_CORRELATION_COMPONENT.values()),
        sensitivity="2m in L1 on the m concatenated histograms (Li et al. 2014, Algorithms 1/4 step 1)",
    ),
    StatisticSchema(
        "dpcopula_hybrid",
        families=("geometric",),
        required={
            **_DPCOPULA_FIELDS,
            "m": Int(minimum=3),
            "correlation": OneOf(("kendall",)),
            "hybrid": STR_LIST,
            "counts_share": POSITIVE,
            "epsilon_counts": POSITIVE,
            "floor": Int(minimum=2),
        },
        optional={"hybrid_threshold": Int(minimum=3)},
        min_n=2,
        check=_check_dpcopula_hybrid,
        components=("dpcopula_hybrid_margins", "dpcopula_hybrid_kendall"),
        sensitivity="2 in L1 on the partition counts (Li et al. 2014, Algorithm 6 step 2, substitution)",
    ),
    StatisticSchema(
        "dpcopula_hybrid_margins",
        families=("geometric",),
        required={"columns": _LARGE_COLUMNS, "partitions": Int(minimum=1), "bins": ListOf(Int(minimum=2))},
        min_n=2,
        check=_check_dpcopula_hybrid_margins,
        sensitivity="2 m_2 in L1 on the per-partition histograms of the m_2 large columns",
    ),
    StatisticSchema(
        "dpcopula_hybrid_kendall",
        families=("laplace",),
        required={
            "columns": _LARGE_COLUMNS,
            "partitions": Int(minimum=1),
            "pairs": _PAIR_FIELDS["pairs"],
            "floor": Int(minimum=2),
            "estimand": STR,
        },
        min_n=2,
        check=_check_dpcopula_hybrid_kendall,
        sensitivity="8 C(m_2,2)/floor in L1 (S_g/max(C(n_g,2), C(floor,2)) moves <= 4/floor in <= 2 parts)",
    ),
)
