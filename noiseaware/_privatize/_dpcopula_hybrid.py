r"""DPCopula hybrid (Li et al. 2014, §4.4, Algorithm 6), with a public floor.

``privatize(data, "dpcopula", hybrid=[cols] | "auto", ...)``. The ``m_1`` *small-domain*
attributes (``hybrid``; with ``"auto"`` every attribute whose **stated** domain has fewer than
``hybrid_threshold`` cells, 10 by default — the paper's "less than 10"; the domains are public, so
the choice is too) cut the records into :math:`P = \prod_i |A_i|` partitions; one DPCopula is
fitted on the ``m_2 >= 2`` remaining attributes inside every partition. Budget
(``counts_share`` :math:`s`, default 0.1; ``ratio`` :math:`k`):

.. math:: \epsilon_c = s\,\epsilon\ \text{(partition counts)},\quad
          \epsilon_1 = (1-s)\epsilon\,\frac{k}{k+1}\ \text{(margins)},\quad
          \epsilon_2 = \frac{(1-s)\epsilon}{k+1}\ \text{(correlations)}.

Neighbours are substitutions (``n`` public), as everywhere in the package. A substituted record
may leave partition ``p`` and enter partition ``q``, so a value-defined partition does **not**
give the "guarantee of one part" that the paper's Theorem 4.4 (proved for add/remove neighbours)
claims; it gives at most two parts' worth. Each piece is therefore stated as one joint mechanism
on the concatenation over partitions, with the L1 sensitivity of the whole vector — the charge is
twice the largest per-partition change (at most two partitions move), never the sum over the
``P`` partitions:

* **Partition counts** (main values, :math:`P` cells): sensitivity 2, geometric noise of scale
  :math:`2/\epsilon_c`. (Algorithm 6 step 2 prints ``Lap(1/epsilon_1)``: add/remove.)
* **Margins** (component ``dpcopula_hybrid_margins``): the histogram of each of the ``m_2``
  attributes inside each partition, concatenated; one record changes one count out of one
  (partition, cell) and into another per attribute: sensitivity :math:`2m_2`, geometric noise of
  scale :math:`2m_2/\epsilon_1` — the same noise per cell as the plain DPCopula.
* **Correlations** (component ``dpcopula_hybrid_kendall``): per partition ``g`` and pair, the
  floored Kendall statistic

  .. math:: \hat\tau_g = \frac{S_g}{\max\{\binom{n_g}{2}, \binom{F}{2}\}},

  :math:`S_g` = concordant minus discordant pairs in the partition, :math:`F` a **public floor**
  (``floor=``, default :math:`\max(2, \lfloor n/(2P)\rfloor)`). Algorithm 6 scales the noise by
  the private partition size :math:`n_g` — which is itself private (erratum). Here every partition
  is released with the floor's scale: partitions with :math:`n_g \ge F` get :math:`\tau_a`
  unchanged, smaller ones a :math:`\tau_a` shrunk towards 0 by :math:`\binom{n_g}2/\binom F2`
  (not pooled). One record added to or removed from a partition changes :math:`\hat\tau_g` by at
  most :math:`4/F` (and a substitution inside it as well), so the :math:`P\binom{m_2}2` vector has
  L1 sensitivity :math:`2\cdot\binom{m_2}{2}\cdot 4/F` under substitution; Laplace noise of scale
  :math:`8\binom{m_2}2/(F\epsilon_2)`. ``tests/security`` brute-forces these bounds and that a
  substitution touches at most two partitions (an addition or removal exactly one).

Total :math:`\epsilon_c + \epsilon_1 + \epsilon_2 = \epsilon`. Only ``correlation="kendall"``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._domains import Domain
from .._validation import current_owner, owned
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..mechanisms import GeometricMechanism, Guarantee, LaplaceMechanism, Mechanism
from ..release import Release, expected_guarantee
from ._common import Context, fit_sum, shares_of_checked_budget
from ._kendall import _s_codes

__all__ = ["HYBRID_THRESHOLD", "DPCopulaTable", "hybrid_columns", "hybrid_kendall", "hybrid_release", "partition_index"]

_OWNER = "privatize(statistic='dpcopula', hybrid=...)"
#: Default public threshold of ``hybrid="auto"``: attributes whose stated domain has fewer cells.
HYBRID_THRESHOLD = 10


def hybrid_columns(hybrid: Any, names: list[str], doms: list[Domain], threshold: Any) -> list[int]:
    """Indices of the small-domain (partitioning) columns, from ``hybrid=`` (names or ``"auto"``).

    ``"auto"`` picks every column whose *stated* domain has fewer than ``threshold`` cells (public).

    Examples
    --------
    >>> from noiseaware._domains import domain_from_spec
    >>> doms = [domain_from_spec(c, s) for c, s in [("a", range(3)), ("b", range(50)), ("c", range(40))]]
    >>> hybrid_columns("auto", ["a", "b", "c"], doms, 10)
    [0]
    """
    owner = current_owner()
    if isinstance(hybrid, str):
        if hybrid != "auto":
            v.refuse("hybrid", "must be 'auto' or a list of column names", hybrid)
        t = v.integer("hybrid_threshold", threshold, minimum=3)
        idx = [j for j, d in enumerate(doms) if d.size < t]
    else:
        if threshold is not None:
            raise NoiseawareValueError(f"{owner}: hybrid_threshold applies to hybrid='auto' only; got a list.")
        if not isinstance(hybrid, Sequence) or not hybrid:
            raise NoiseawareTypeError(v.message("hybrid", "must be 'auto' or a non-empty list of names", hybrid))
        unknown = [str(c) for c in hybrid if str(c) not in names]
        if unknown or len({str(c) for c in hybrid}) != len(hybrid):
            raise NoiseawareValueError(
                f"{owner}: hybrid must list distinct column names of the data {names}; got {list(hybrid)}."
            )
        idx = sorted(names.index(str(c)) for c in hybrid)
    if not idx:
        raise NoiseawareValueError(
            f"{owner}: hybrid='auto' found no column with fewer than {threshold} cells in its stated domain "
            f"(sizes {[d.size for d in doms]}); use the plain DPCopula or list the columns."
        )
    if len(names) - len(idx) < 2:
        raise NoiseawareValueError(
            f"{owner}: the hybrid needs at least two large-domain columns for the copula; got "
            f"{len(names) - len(idx)} after partitioning on {[names[j] for j in idx]}."
        )
    return idx


def partition_index(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Partition of every record: C-order index of its small-domain cell codes ``(n, m_1)``.

    Examples
    --------
    >>> partition_index(np.array([[0, 1], [1, 2]]), [2, 3]).tolist()
    [1, 5]
    """
    return np.ravel_multi_index(tuple(codes.T), tuple(int(s) for s in sizes)).astype(np.int64)


def hybrid_kendall(codes: np.ndarray, part: np.ndarray, parts: int, sizes: Sequence[int], floor: int) -> np.ndarray:
    r"""Floored Kendall statistics :math:`S_g/\max\{\binom{n_g}2,\binom F2\}`, shape ``(parts, C(m_2, 2))``.

    ``codes`` are the large attributes' cell codes ``(n, m_2)``, ``part`` each record's partition.
    Empty and one-record partitions give 0.

    Examples
    --------
    >>> c = np.array([[0, 0], [1, 1], [2, 2], [0, 2], [1, 0]])
    >>> hybrid_kendall(c, np.array([0, 0, 0, 1, 1]), 2, [3, 3], floor=3).tolist()
    [[1.0], [-0.3333333333333333]]
    """
    m2 = codes.shape[1]
    iu, ju = np.triu_indices(m2, 1)
    out = np.zeros((parts, iu.size))
    den_floor = floor * (floor - 1) / 2.0
    order = np.argsort(part, kind="stable")
    bounds = np.searchsorted(part[order], np.arange(parts + 1))
    for g in range(parts):
        rows = order[bounds[g] : bounds[g + 1]]
        ng = rows.size
        if ng < 2:
            continue
        den = max(ng * (ng - 1) / 2.0, den_floor)
        sub = codes[rows]
        for t, (i, j) in enumerate(zip(iu.tolist(), ju.tolist(), strict=True)):
            out[g, t] = _s_codes(sub[:, i], sub[:, j], int(sizes[i]), int(sizes[j])) / den
    return out


@dataclass(frozen=True)
class DPCopulaTable:
    r"""A checked table and the options every DPCopula release reads (the plain one and the hybrid).

    Made by the ``dpcopula`` statistic (:mod:`._dpcopula`); it lives here, below it, so that the
    hybrid needs no import of the plain DPCopula.

    ``codes`` are the ``(n, m)`` cell codes of :func:`table_codes`, ``names``, ``doms`` and ``dtypes``
    its columns', ``eps`` the total budget, ``ratio`` :math:`k = \epsilon_1/\epsilon_2` and
    ``correlation`` the ``correlation=`` choice.
    """

    codes: np.ndarray
    names: list[str]
    doms: list[Domain]
    dtypes: list[str]
    eps: float
    ratio: float
    correlation: str

    @property
    def n(self) -> int:
        """Records."""
        return int(self.codes.shape[0])

    @property
    def m(self) -> int:
        """Attributes."""
        return int(self.codes.shape[1])


@dataclass(frozen=True)
class _HybridPlan:
    """The checked options of a hybrid release: the partitioning (``small``) and copula (``large``) columns, the budget.

    ``threshold`` is ``hybrid_threshold`` with ``hybrid="auto"`` (None with a list), ``floor`` the
    public floor :math:`F`, ``psizes`` and ``lsizes`` the stated domain sizes of ``small`` and ``large``.
    """

    small: list[int]
    large: list[int]
    threshold: int | None
    share: float
    psizes: list[int]
    lsizes: list[int]
    floor: int
    eps_c: float
    eps1: float
    eps2: float

    @property
    def parts(self) -> int:
        r"""Partitions :math:`P = \prod_i |A_i|`."""
        return math.prod(self.psizes)

    @property
    def m2(self) -> int:
        """Copula columns."""
        return len(self.large)

    @property
    def k(self) -> int:
        """Pairs of copula columns."""
        return self.m2 * (self.m2 - 1) // 2


@dataclass(frozen=True)
class _Piece:
    """One joint mechanism on the concatenation over partitions: what it releases and how (module docstring)."""

    statistic: str
    truth: np.ndarray
    labels: Sequence[tuple[str, ...]]
    mech: Mechanism
    guarantee: Guarantee
    meta: dict[str, Any]


@owned(_OWNER)
def _hybrid_plan(table: DPCopulaTable, options: dict[str, Any]) -> _HybridPlan:
    """The columns, floor and budget split, checked in the order their errors are reported."""
    owner = _OWNER
    doms, n, eps, ratio = table.doms, table.n, table.eps, table.ratio
    hyb = options["hybrid"]
    thr = options.get("hybrid_threshold", HYBRID_THRESHOLD if isinstance(hyb, str) else None)
    small = hybrid_columns(hyb, table.names, doms, thr)
    large = [j for j in range(table.m) if j not in small]
    share = v.open_unit("counts_share", options.get("counts_share", 0.1))
    psizes = [doms[j].size for j in small]
    parts = math.prod(psizes)
    lsizes = [doms[j].size for j in large]
    if parts * sum(lsizes) > 10_000_000:
        raise NoiseawareValueError(
            f"{owner}: {parts} partitions times {sum(lsizes)} margin cells = {parts * sum(lsizes)} noisy counts is "
            "more than 10,000,000; partition on fewer or smaller columns."
        )
    floor = v.integer("floor", options.get("floor", max(2, n // (2 * parts))), minimum=2)
    eps_c = share * eps
    eps1 = (1.0 - share) * eps * ratio / (ratio + 1.0)
    eps2 = fit_sum(eps, [eps_c, eps1], (1.0 - share) * eps - eps1)  # the parts add up to at most eps in float64
    if not eps2 > 0 or not eps1 > 0:
        v.refuse("ratio", "must leave positive epsilon_1 and epsilon_2", ratio)
    threshold = int(thr) if isinstance(hyb, str) else None  # type: ignore[arg-type]  # checked by hybrid_columns
    return _HybridPlan(small, large, threshold, share, psizes, lsizes, floor, eps_c, eps1, eps2)


def _hybrid_truth(table: DPCopulaTable, plan: _HybridPlan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The confidential pieces: partition counts, margins within each partition, floored Kendall statistics."""
    parts, lsizes = plan.parts, plan.lsizes
    part = partition_index(table.codes[:, plan.small], plan.psizes)
    counts = np.bincount(part, minlength=parts).astype(np.int64)
    lc = table.codes[:, plan.large]
    hist = np.concatenate(
        [np.bincount(part * s + lc[:, t], minlength=parts * s).reshape(parts, s) for t, s in enumerate(lsizes)],
        axis=1,
    ).ravel()
    tau = hybrid_kendall(lc, part, parts, lsizes, plan.floor).ravel()
    return counts, hist, tau


def _hybrid_meta(table: DPCopulaTable, plan: _HybridPlan) -> dict[str, Any]:
    """The main release's metadata (before the simulation note, which :meth:`Context.release` adds)."""
    names, doms = table.names, table.doms
    meta: dict[str, Any] = {
        "columns": names,
        "m": table.m,
        "hybrid": [names[j] for j in plan.small],
        "domains": [d.to_dict() for d in doms],
        "dtypes": table.dtypes,
        "bins": [d.size for d in doms],
        "ratio": table.ratio,
        "counts_share": plan.share,
        "epsilon_counts": plan.eps_c,
        "epsilon_1": plan.eps1,
        "epsilon_2": plan.eps2,
        "floor": plan.floor,
        "correlation": "kendall",
    }
    if plan.threshold is not None:
        meta["hybrid_threshold"] = plan.threshold
    return meta


def _hybrid_pieces(ctx: Context, table: DPCopulaTable, plan: _HybridPlan) -> tuple[_Piece, _Piece, _Piece]:
    """The partition counts (main values), the margins and the Kendall statistics, with their mechanisms.

    The mechanisms are built here, before the charge (they may refuse a scale).
    """
    names, doms, m2 = table.names, table.doms, plan.m2
    counts, hist, tau = _hybrid_truth(table, plan)
    with shares_of_checked_budget():
        m_counts = GeometricMechanism.from_epsilon(plan.eps_c, sensitivity=2)
        m_marg = GeometricMechanism.from_epsilon(plan.eps1, sensitivity=2 * m2)
        m_tau = LaplaceMechanism.from_epsilon(plan.eps2, sensitivity=2.0 * plan.k * 4.0 / plan.floor)
    plabels = [
        tuple(lab)
        for lab in np.array(np.meshgrid(*[doms[j].labels() for j in plan.small], indexing="ij"), dtype=object)
        .reshape(len(plan.small), -1)
        .T.tolist()
    ]
    lnames = [names[j] for j in plan.large]
    iu, ju = np.triu_indices(m2, 1)
    pairs = [[int(i), int(j)] for i, j in zip(iu, ju, strict=True)]
    common = {"columns": lnames, "partitions": plan.parts}
    marg_labels = tuple((*pl, names[j], lab) for pl in plabels for j in plan.large for lab in doms[j].labels())
    marg_meta = ctx.metadata({**common, "bins": plan.lsizes})
    kend_labels = tuple((*pl, lnames[i], lnames[j]) for pl in plabels for i, j in pairs)
    estimand = "S_g / max(C(n_g, 2), C(floor, 2)) per partition and pair"
    kend_meta = ctx.metadata({**common, "pairs": pairs, "floor": plan.floor, "estimand": estimand})
    g_counts = expected_guarantee(m_counts, "joint", counts.shape)
    g_marg = expected_guarantee(m_marg, "joint", hist.shape)
    g_tau = expected_guarantee(m_tau, "joint", tau.shape)
    return (
        _Piece("dpcopula_hybrid", counts, plabels, m_counts, g_counts, _hybrid_meta(table, plan)),
        _Piece("dpcopula_hybrid_margins", hist, marg_labels, m_marg, g_marg, marg_meta),
        _Piece("dpcopula_hybrid_kendall", tau, kend_labels, m_tau, g_tau, kend_meta),
    )


def _noisy(ctx: Context, piece: _Piece, n: int, components: Sequence[Release] = ()) -> Release:
    """Draw ``piece``'s noise and make its release (the guarantee composed with its ``components``')."""
    g = piece.guarantee
    for c in components:
        g = g.compose(c.guarantee)
    noisy = piece.mech.release(piece.truth, rng=ctx.rng)
    labels, mech = piece.labels, piece.mech
    return ctx.release(piece.statistic, noisy, labels, mech, "joint", g, n, piece.meta, components=components)


@owned(_OWNER)
def hybrid_release(ctx: Context, table: DPCopulaTable, options: dict[str, Any]) -> Release:
    """The ``dpcopula_hybrid`` release (module docstring); called by the ``dpcopula`` statistic.

    The steps: the options (:func:`_hybrid_plan`); the three pieces and their mechanisms
    (:func:`_hybrid_pieces`); the size check and the charge of the whole guarantee, before any
    noise; the noise, in the order margins, Kendall's taus, partition counts.
    """
    counts, margins, kendall = _hybrid_pieces(ctx, table, _hybrid_plan(table, options))
    ctx.charge_release(
        counts.guarantee.compose(margins.guarantee).compose(kendall.guarantee),
        "dpcopula_hybrid",
        "Partition on fewer or smaller columns, or use smaller domains (fewer cells).",
        shape=counts.truth.shape,
        labels=counts.labels,
        mechanism=counts.mech,
        metadata=counts.meta,
        components=tuple(
            dict(shape=p.truth.shape, labels=p.labels, mechanism=p.mech, guarantee=p.guarantee, metadata=p.meta)
            for p in (margins, kendall)
        ),
    )
    marg = _noisy(ctx, margins, table.n)
    kend = _noisy(ctx, kendall, table.n)
    return _noisy(ctx, counts, table.n, components=(marg, kend))
