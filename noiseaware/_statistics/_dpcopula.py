"""Schemas of DPCopula and its hybrid.

Li, Xiong & Jiang (2014), *Differentially Private Synthesization of Multi-Dimensional Data using Copula
Functions*.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ._schema import (
    _PAIR_FIELDS,
    FLOAT,
    INT,
    INT_LIST,
    STR,
    STR_LIST,
    FieldType,
    StatisticSchema,
    _any_list,
    _check_columns,
    _check_epsilon_per_pair,
    _check_pairs,
    _check_reach,
    _check_sensitivity,
    _close,
    _fail,
    _float,
    _int,
    _int_list,
    _meta,
    _str,
    _str_list,
)

__all__: list[str] = []


def _check_dtypes(raw: Any, doms: list[Any]) -> None:
    """``metadata.dtypes``: one allowed dtype name per column, able to hold its domain (``Domain.dtype_rule``)."""
    dtypes = _str_list("metadata.dtypes", raw)
    if len(dtypes) != len(doms):
        _fail("metadata.dtypes", f"must give {len(doms)} dtype names", dtypes)
    for j, (dt, d) in enumerate(zip(dtypes, doms, strict=True)):
        rule = d.dtype_rule(dt)
        if rule is not None:
            _fail(f"metadata.dtypes[{j}]", f"{rule} (metadata.domains[{j}] is of kind {d.kind!r})", dt)


def _columns_and_domains(release: Any, min_columns: int) -> tuple[int, int, list[str], list[Any], list[int]]:
    """``(n, m, columns, domains, bins)`` of a DPCopula release, each checked against the others."""
    from .._domains import Domain

    n = _int("n", release.n, minimum=2)
    m = _int("metadata.m", _meta(release, "m"), minimum=min_columns)
    cols = _check_columns(release, m)
    raw = _any_list("metadata.domains", _meta(release, "domains"))
    if len(raw) != m:
        _fail("metadata.domains", f"must give {m} domains (one per column)", raw)
    doms = [Domain.from_dict(d, f"metadata.domains[{j}]") for j, d in enumerate(raw)]
    _check_dtypes(_meta(release, "dtypes"), doms)
    bins = _int_list("metadata.bins", _meta(release, "bins"), minimum=2)
    if bins != [d.size for d in doms]:
        _fail("metadata.bins", "must be the number of cells of each domain", bins)
    return n, m, cols, doms, bins


def _check_dpcopula_mle(release: Any) -> None:
    n = _int("n", release.n, minimum=2)
    _check_pairs(release)
    blocks = _int("metadata.blocks", _meta(release, "blocks"), minimum=1)
    b = _int("metadata.block_size", _meta(release, "block_size"), minimum=2)
    if b != n // blocks:
        _fail("metadata.block_size", f"must be floor(n / blocks) = {n // blocks}", b)
    _check_sensitivity(release, 2.0 / blocks, "2/blocks (Algorithm 2: diameter 2 of a coefficient over l blocks)")
    _check_epsilon_per_pair(release)


def _check_dpcopula(release: Any) -> None:
    n, m, cols, doms, bins = _columns_and_domains(release, min_columns=2)
    if release.values.shape != (sum(bins),):
        _fail("shape", f"must be [{sum(bins)}] (the concatenated histograms)", list(release.values.shape))
    if release.values.dtype.kind != "i":
        _fail("dtype", "must be int64 for noisy histogram counts", str(release.values.dtype))
    want = [[c, lab] for c, d in zip(cols, doms, strict=True) for lab in d.labels()]
    if [list(lab) for lab in release.labels] != want:
        _fail("labels", "must be [column, cell label] for every cell of every domain, in order", "...")
    _check_sensitivity(release, 2.0 * m, "2m (m histograms, one record moves one count in each)")
    eps1 = _float("metadata.epsilon_1", _meta(release, "epsilon_1"), lo=0.0, open_lo=True)
    eps2 = _float("metadata.epsilon_2", _meta(release, "epsilon_2"), lo=0.0, open_lo=True)
    ratio = _float("metadata.ratio", _meta(release, "ratio"), lo=0.0, open_lo=True)
    g = release.mechanism.guarantee()
    if g.epsilon is None or not _close(g.epsilon, eps1):
        _fail("metadata.epsilon_1", f"must equal the margins' geometric epsilon ({g.epsilon!r})", eps1)
    if not math.isclose(eps1 / eps2, ratio, rel_tol=1e-6):
        _fail("metadata.ratio", f"must be epsilon_1 / epsilon_2 = {eps1 / eps2!r}", ratio)
    _check_reach(release, 0.0, float(n))
    want_comp = {"kendall": "kendall_pairs", "mle": "dpcopula_mle", "median": "median_pairs"}
    corr = _str("metadata.correlation", _meta(release, "correlation"))
    if corr not in want_comp:
        _fail("metadata.correlation", f"must be one of {sorted(want_comp)}", corr)
    comps = release.components
    if len(comps) != 1 or comps[0].statistic != want_comp[corr]:
        _fail("components", f"must hold exactly one {want_comp[corr]!r} release for correlation={corr!r}",
              [c.statistic for c in comps])
    comp = comps[0]
    if comp.n != n:
        _fail("components[0].n", f"must equal n = {n}", comp.n)
    if [str(c) for c in comp.metadata["columns"]] != cols:
        _fail("components[0].metadata.columns", "must equal the release's columns", comp.metadata["columns"])
    ge = comp.guarantee.epsilon
    if ge is None or not _close(ge, eps2):
        _fail("metadata.epsilon_2", f"must equal the correlation component's epsilon ({ge!r})", eps2)



def _check_hybrid_part(release: Any) -> tuple[int, list[str], int]:
    _int("n", release.n, minimum=2)
    cols = _str_list("metadata.columns", _meta(release, "columns"))
    if len(cols) < 2 or len(set(cols)) != len(cols):
        _fail("metadata.columns", "must name at least two distinct large-domain columns", cols)
    parts = _int("metadata.partitions", _meta(release, "partitions"), minimum=1)
    return len(cols), cols, parts


def _check_dpcopula_hybrid_margins(release: Any) -> None:
    m2, _, parts = _check_hybrid_part(release)
    bins = _int_list("metadata.bins", _meta(release, "bins"), minimum=2)
    if len(bins) != m2:
        _fail("metadata.bins", f"must give {m2} domain sizes", bins)
    if release.values.shape != (parts * sum(bins),):
        _fail("shape", f"must be [{parts * sum(bins)}] (partitions x concatenated histograms)",
              list(release.values.shape))
    if release.values.dtype.kind != "i":
        _fail("dtype", "must be int64 for noisy histogram counts", str(release.values.dtype))
    _check_sensitivity(release, 2.0 * m2, "2 m_2 (one record moves one (partition, cell) count per attribute)")
    _check_reach(release, 0.0, float(release.n))


def _check_dpcopula_hybrid_kendall(release: Any) -> None:
    m2, _, parts = _check_hybrid_part(release)
    k = m2 * (m2 - 1) // 2
    iu, ju = np.triu_indices(m2, 1)
    pairs = _any_list("metadata.pairs", _meta(release, "pairs"))
    if [list(map(int, q)) for q in pairs] != [[int(i), int(j)] for i, j in zip(iu, ju, strict=True)]:
        _fail("metadata.pairs", "must list the upper-triangle pairs in row-major order", pairs)
    floor = _int("metadata.floor", _meta(release, "floor"), minimum=2)
    if release.values.shape != (parts * k,):
        _fail("shape", f"must be [{parts * k}] (partitions x column pairs)", list(release.values.shape))
    _check_sensitivity(release, 8.0 * k / floor,
                       "2 C(m_2,2) 4/floor (a substitution moves at most two partitions, each by 4/floor per pair)")
    _check_reach(release, -1.0, 1.0)


def _check_dpcopula_hybrid(release: Any) -> None:
    n, m, cols, doms, bins = _columns_and_domains(release, min_columns=3)
    hyb = _str_list("metadata.hybrid", _meta(release, "hybrid"))
    small = [cols.index(c) for c in hyb if c in cols]
    if not hyb or len(small) != len(hyb) or small != sorted(set(small)) or m - len(small) < 2:
        _fail("metadata.hybrid", "must list, in column order, distinct columns leaving at least two others", hyb)
    if "hybrid_threshold" in release.metadata:
        t = _int("metadata.hybrid_threshold", _meta(release, "hybrid_threshold"), minimum=3)
        if small != [j for j, b in enumerate(bins) if b < t]:
            _fail("metadata.hybrid", f"must be the columns with fewer than hybrid_threshold = {t} cells", hyb)
    large = [j for j in range(m) if j not in small]
    parts = math.prod(bins[j] for j in small)
    if release.values.shape != (parts,) or release.values.dtype.kind != "i":
        _fail("shape", f"must be [{parts}] integer partition counts", list(release.values.shape))
    plabels = [list(t) for t in itertools.product(*[doms[j].labels() for j in small])]
    if [list(lab) for lab in release.labels] != plabels:
        _fail("labels", "must be the small-domain cell labels of every partition, in C order", "...")
    _check_sensitivity(release, 2.0, "2 (one record moves between two partitions)")
    _check_reach(release, 0.0, float(n))
    if _str("metadata.correlation", _meta(release, "correlation")) != "kendall":
        _fail("metadata.correlation", "must be 'kendall' for a hybrid release", _meta(release, "correlation"))
    comps = release.components
    if [c.statistic for c in comps] != ["dpcopula_hybrid_margins", "dpcopula_hybrid_kendall"]:
        _fail("components", "must be [dpcopula_hybrid_margins, dpcopula_hybrid_kendall]",
              [c.statistic for c in comps])
    lnames = [cols[j] for j in large]
    floor = _int("metadata.floor", _meta(release, "floor"), minimum=2)
    for i, c in enumerate(comps):
        if c.n != n or [str(x) for x in c.metadata["columns"]] != lnames or c.metadata["partitions"] != parts:
            _fail(f"components[{i}]", f"must have n = {n}, columns {lnames} and {parts} partitions", c.statistic)
    if [int(b) for b in comps[0].metadata["bins"]] != [bins[j] for j in large]:
        _fail("components[0].metadata.bins", "must be the large columns' domain sizes", comps[0].metadata["bins"])
    want = [[*pl, cols[j], lab] for pl in plabels for j in large for lab in doms[j].labels()]
    if [list(lab) for lab in comps[0].labels] != want:
        _fail("components[0].labels", "must be [partition..., column, cell] in order", "...")
    if int(comps[1].metadata["floor"]) != floor:
        _fail("components[1].metadata.floor", f"must equal the release's floor = {floor}", comps[1].metadata["floor"])
    pairs = [(lnames[i], lnames[j]) for i, j in itertools.combinations(range(len(lnames)), 2)]
    if [list(lab) for lab in comps[1].labels] != [[*pl, a, b] for pl in plabels for a, b in pairs]:
        _fail("components[1].labels", "must be [partition..., column, column] in order", "...")
    eps = {
        "epsilon_counts": release.mechanism.guarantee().epsilon,
        "epsilon_1": comps[0].guarantee.epsilon,
        "epsilon_2": comps[1].guarantee.epsilon,
    }
    got = {key: _float(f"metadata.{key}", _meta(release, key), lo=0.0, open_lo=True) for key in eps}
    for key, e in eps.items():
        if e is None or not _close(e, got[key]):
            _fail(f"metadata.{key}", f"must equal its mechanism's epsilon ({e!r})", got[key])
    ratio = _float("metadata.ratio", _meta(release, "ratio"), lo=0.0, open_lo=True)
    if not math.isclose(got["epsilon_1"] / got["epsilon_2"], ratio, rel_tol=1e-6):
        _fail("metadata.ratio", "must be epsilon_1 / epsilon_2", ratio)
    share = _float("metadata.counts_share", _meta(release, "counts_share"), lo=0.0, open_lo=True)
    if not math.isclose(got["epsilon_counts"] / sum(got.values()), share, rel_tol=1e-6):
        _fail("metadata.counts_share", "must be epsilon_counts / epsilon", share)



#: The fields of both DPCopula releases (the margins' layout, the budget split, the correlation route).
_DPCOPULA_FIELDS: dict[str, FieldType] = {
    "columns": STR_LIST,
    "m": INT,
    "domains": _any_list,
    "dtypes": STR_LIST,
    "bins": INT_LIST,
    "ratio": FLOAT,
    "epsilon_1": FLOAT,
    "epsilon_2": FLOAT,
    "correlation": STR,
}

#: The DPCopula statistics, by schema.
SCHEMAS: tuple[StatisticSchema, ...] = (
    StatisticSchema(
        "dpcopula_mle",
        families=("laplace",),
        compositions=("sequential",),
        required={**_PAIR_FIELDS, "blocks": INT, "block_size": INT, "estimator": STR},
        check=_check_dpcopula_mle,
        sensitivity="2/l per averaged coefficient (Li et al. 2014, Algorithm 2, l disjoint blocks)",
    ),
    StatisticSchema(
        "dpcopula",
        families=("geometric",),
        required=_DPCOPULA_FIELDS,
        check=_check_dpcopula,
        components=("kendall_pairs", "dpcopula_mle", "median_pairs"),
        sensitivity="2m in L1 on the m concatenated histograms (Li et al. 2014, Algorithms 1/4 step 1)",
    ),
    StatisticSchema(
        "dpcopula_hybrid",
        families=("geometric",),
        required={
            **_DPCOPULA_FIELDS,
            "hybrid": STR_LIST,
            "counts_share": FLOAT,
            "epsilon_counts": FLOAT,
            "floor": INT,
        },
        optional={"hybrid_threshold": INT},
        check=_check_dpcopula_hybrid,
        components=("dpcopula_hybrid_margins", "dpcopula_hybrid_kendall"),
        sensitivity="2 in L1 on the partition counts (Li et al. 2014, Algorithm 6 step 2, substitution)",
    ),
    StatisticSchema(
        "dpcopula_hybrid_margins",
        families=("geometric",),
        required={"columns": STR_LIST, "partitions": INT, "bins": INT_LIST},
        check=_check_dpcopula_hybrid_margins,
        sensitivity="2 m_2 in L1 on the per-partition histograms of the m_2 large columns",
    ),
    StatisticSchema(
        "dpcopula_hybrid_kendall",
        families=("laplace",),
        required={"columns": STR_LIST, "partitions": INT, "pairs": _any_list, "floor": INT, "estimand": STR},
        check=_check_dpcopula_hybrid_kendall,
        sensitivity="8 C(m_2,2)/floor in L1 (S_g/max(C(n_g,2), C(floor,2)) moves <= 4/floor in <= 2 parts)",
    ),
)
