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
from typing import Any

import numpy as np

from .. import _validation as v
from .._domains import Domain
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..mechanisms import GeometricMechanism, LaplaceMechanism
from ..release import Release, expected_guarantee
from ._common import Context, fit_sum, shares_of_checked_budget
from ._kendall import _s_codes

__all__ = ["HYBRID_THRESHOLD", "hybrid_columns", "hybrid_kendall", "partition_index"]

_OWNER = "privatize(statistic='dpcopula', hybrid=...)"
#: Default public threshold of ``hybrid="auto"``: attributes whose stated domain has fewer cells.
HYBRID_THRESHOLD = 10


def hybrid_columns(owner: str, hybrid: Any, names: list[str], doms: list[Domain], threshold: Any) -> list[int]:
    """Indices of the small-domain (partitioning) columns, from ``hybrid=`` (names or ``"auto"``).

    ``"auto"`` picks every column whose *stated* domain has fewer than ``threshold`` cells (public).

    Examples
    --------
    >>> from noiseaware._domains import domain_from_spec
    >>> doms = [domain_from_spec("d", c, s) for c, s in [("a", range(3)), ("b", range(50)), ("c", range(40))]]
    >>> hybrid_columns("demo", "auto", ["a", "b", "c"], doms, 10)
    [0]
    """
    if isinstance(hybrid, str):
        if hybrid != "auto":
            v.fail(owner, "hybrid", "must be 'auto' or a list of column names", hybrid)
        t = v.integer(owner, "hybrid_threshold", threshold, minimum=3)
        idx = [j for j, d in enumerate(doms) if d.size < t]
    else:
        if threshold is not None:
            raise NoiseawareValueError(f"{owner}: hybrid_threshold applies to hybrid='auto' only; got a list.")
        if not isinstance(hybrid, Sequence) or not hybrid:
            raise NoiseawareTypeError(v.message(owner, "hybrid", "must be 'auto' or a non-empty list of names", hybrid))
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


def hybrid_release(
    ctx: Context,
    codes: np.ndarray,
    names: list[str],
    doms: list[Domain],
    dtypes: list[str],
    options: dict[str, Any],
    eps: float,
    ratio: float,
) -> Release:
    """The ``dpcopula_hybrid`` release (module docstring); called by the ``dpcopula`` statistic."""
    owner = _OWNER
    n, m = codes.shape
    hyb = options["hybrid"]
    thr = options.get("hybrid_threshold", HYBRID_THRESHOLD if isinstance(hyb, str) else None)
    small = hybrid_columns(owner, hyb, names, doms, thr)
    large = [j for j in range(m) if j not in small]
    share = v.open_unit(owner, "counts_share", options.get("counts_share", 0.1))
    psizes = [doms[j].size for j in small]
    parts = math.prod(psizes)
    lsizes = [doms[j].size for j in large]
    if parts * sum(lsizes) > 10_000_000:
        raise NoiseawareValueError(
            f"{owner}: {parts} partitions times {sum(lsizes)} margin cells = {parts * sum(lsizes)} noisy counts is "
            "more than 10,000,000; partition on fewer or smaller columns."
        )
    floor = v.integer(owner, "floor", options.get("floor", max(2, n // (2 * parts))), minimum=2)
    m2 = len(large)
    k = m2 * (m2 - 1) // 2
    eps_c = share * eps
    eps1 = (1.0 - share) * eps * ratio / (ratio + 1.0)
    eps2 = fit_sum(eps, [eps_c, eps1], (1.0 - share) * eps - eps1)  # the parts add up to at most eps in float64
    if not eps2 > 0 or not eps1 > 0:
        v.fail(owner, "ratio", "must leave positive epsilon_1 and epsilon_2", ratio)

    part = partition_index(codes[:, small], psizes)
    counts = np.bincount(part, minlength=parts).astype(np.int64)
    lc = codes[:, large]
    hist = np.concatenate(
        [np.bincount(part * s + lc[:, t], minlength=parts * s).reshape(parts, s) for t, s in enumerate(lsizes)],
        axis=1,
    ).ravel()
    tau = hybrid_kendall(lc, part, parts, lsizes, floor).ravel()

    sens_tau = 2.0 * k * 4.0 / floor
    with shares_of_checked_budget():
        m_counts = GeometricMechanism.from_epsilon(eps_c, sensitivity=2)
        m_marg = GeometricMechanism.from_epsilon(eps1, sensitivity=2 * m2)
        m_tau = LaplaceMechanism.from_epsilon(eps2, sensitivity=sens_tau)
    g_counts = expected_guarantee(m_counts, "joint", counts.shape)
    g_marg = expected_guarantee(m_marg, "joint", hist.shape)
    g_tau = expected_guarantee(m_tau, "joint", tau.shape)
    total = g_counts.compose(g_marg).compose(g_tau)

    plabels = [
        tuple(lab)
        for lab in np.array(np.meshgrid(*[doms[j].labels() for j in small], indexing="ij"), dtype=object)
        .reshape(len(small), -1)
        .T.tolist()
    ]
    lnames = [names[j] for j in large]
    iu, ju = np.triu_indices(m2, 1)
    pairs = [[int(i), int(j)] for i, j in zip(iu, ju, strict=True)]
    common = {"columns": lnames, "partitions": parts}
    marg_labels = tuple((*pl, names[j], lab) for pl in plabels for j in large for lab in doms[j].labels())
    marg_meta = ctx.metadata({**common, "bins": lsizes})
    kend_labels = tuple((*pl, lnames[i], lnames[j]) for pl in plabels for i, j in pairs)
    kend_meta = ctx.metadata(
        {
            **common,
            "pairs": pairs,
            "floor": floor,
            "estimand": "S_g / max(C(n_g, 2), C(floor, 2)) per partition and pair",
        }
    )
    meta: dict[str, Any] = {
        "columns": names,
        "m": m,
        "hybrid": [names[j] for j in small],
        "domains": [d.to_dict() for d in doms],
        "dtypes": dtypes,
        "bins": [d.size for d in doms],
        "ratio": ratio,
        "counts_share": share,
        "epsilon_counts": eps_c,
        "epsilon_1": eps1,
        "epsilon_2": eps2,
        "floor": floor,
        "correlation": "kendall",
    }
    if isinstance(hyb, str):
        meta["hybrid_threshold"] = int(thr)  # type: ignore[arg-type]
    ctx.charge_release(
        total,
        "dpcopula_hybrid",
        owner,
        "Partition on fewer or smaller columns, or use smaller domains (fewer cells).",
        shape=counts.shape,
        labels=plabels,
        mechanism=m_counts,
        metadata=meta,
        components=(
            dict(shape=hist.shape, labels=marg_labels, mechanism=m_marg, guarantee=g_marg, metadata=marg_meta),
            dict(shape=tau.shape, labels=kend_labels, mechanism=m_tau, guarantee=g_tau, metadata=kend_meta),
        ),
    )

    # the noise in this order: margins, Kendall's taus, partition counts
    marg = ctx.release(
        "dpcopula_hybrid_margins", m_marg.release(hist, rng=ctx.rng), marg_labels, m_marg, "joint", g_marg, n, marg_meta
    )
    kend = ctx.release(
        "dpcopula_hybrid_kendall", m_tau.release(tau, rng=ctx.rng), kend_labels, m_tau, "joint", g_tau, n, kend_meta
    )
    return ctx.release(
        "dpcopula_hybrid",
        m_counts.release(counts, rng=ctx.rng),
        plabels,
        m_counts,
        "joint",
        g_counts.compose(marg.guarantee).compose(kend.guarantee),
        n,
        meta,
        components=(marg, kend),
    )
