r"""The ``dpcopula`` statistic: DPCopula (Li et al. 2014, Algorithms 1, 2, 4, 5).

Registered with :func:`noiseaware.privatize`. Data: a table of ``n`` records and ``m >= 2``
attributes, each with a *public* domain stated by the curator (:mod:`noiseaware._domains`).
With total budget :math:`\epsilon` and ratio :math:`k = \epsilon_1/\epsilon_2` (default 8, §5.2):

.. math:: \epsilon_1 = \epsilon\,\frac{k}{k+1}\ \text{(margins)},\qquad
          \epsilon_2 = \frac{\epsilon}{k+1}\ \text{(correlations)}.

**Margins** (Algorithm 1/4 step 1): one histogram :math:`h_j` per attribute on its domain. Under
substitution one record leaves one cell and enters another, so each histogram has L1
sensitivity 2 and the ``m`` histograms together ``2m``. The seed gives each margin
:math:`\epsilon_1/m`; that is the two-sided geometric mechanism with
:math:`\alpha = e^{-\epsilon_1/(2m)}` on every cell, which is exactly one geometric mechanism of
sensitivity ``2m`` and scale ``2m/epsilon_1`` applied jointly to the concatenated histograms —
the main values of the release (``composition="joint"``, guarantee :math:`\epsilon_1`).

**Correlations** (the one component, guarantee :math:`\epsilon_2`), by ``correlation=``:

* ``"kendall"`` (Algorithm 5): a ``kendall_pairs`` release of Kendall's :math:`\tau_a` of every
  pair of cell codes, Laplace noise of scale :math:`\binom m2 \Delta_\tau/\epsilon_2` with
  :math:`\Delta_\tau = 4/n` (the printed Algorithm 5 omits :math:`\Delta_\tau`; Lemma 4.1's
  :math:`4/(n+1)` understates it under substitution). :math:`\tau_a` is computed exactly in
  :math:`O(n + K_jK_k)` from the two-way table of codes, or by Knight's :math:`O(n\log n)`
  algorithm (SciPy) when the table would be large (:func:`kendall_s`).
* ``"mle"`` (Algorithm 2, subsample and aggregate): a uniformly random split into ``l`` blocks of
  ``b = floor(n/l)`` records (the paper's input "k" is this ``l``); in block ``t`` the
  normal-scores correlation :math:`P^t_{ij}` of the block's ranks, :math:`\Phi^{-1}(r/(b+1))`
  (the Gaussian-copula pseudo-likelihood estimate, §3.2 eqs. 2-3, computed inside the block so
  that each estimate depends on its own records only); the average over blocks (the printed sum
  "over r" runs over block ``t``) plus Laplace noise of scale :math:`\binom m2\Lambda/(l\epsilon_2)`,
  :math:`\Lambda = 2` (each block estimate lies in ``[-1, 1]``; one record changes one block).
  The default ``l = ceil(C(m,2) / (0.025 epsilon_2))`` is the paper's rule; every block needs at
  least ``m + 1`` records.
* ``"median"``: a ``median_pairs`` release of the cell codes (Wang, Feldman & Reiter (2026), *Differentially Private
  Bayesian Inference for Gaussian Copula Correlations*, Algorithm S.1), so that
  the Bayes-NA of Wang et al. (2026) (:func:`noiseaware.copula.fit`) applies unchanged and
  :func:`noiseaware.copula.fit_dpcopula` can draw the correlation from its posterior.

Theorem 4.2's total is :math:`\epsilon_1 + \epsilon_2 = \epsilon` (the printed
:math:`m\epsilon_1 + \binom m2\epsilon_2` contradicts its own proof).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._domains import Domain, domain_from_spec
from .._statistics import kendall_sensitivity
from .._validation import owned
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..mechanisms import GeometricMechanism, Guarantee, LaplaceMechanism, Mechanism
from ..release import Release, expected_guarantee
from ._common import STATISTICS, Context, even_share, fit_sum, no_extra, shares_of_checked_budget, statistic
from ._dpcopula_hybrid import DPCopulaTable, hybrid_release
from ._kendall import _s_codes, kendall_s, kendall_tau_a_fast
from ._pairs import _pair_labels_and_meta

__all__ = ["CORRELATION_COMPONENT", "dpcopula_mle_blocks", "kendall_s", "kendall_tau_a_fast", "table_codes"]

_OWNER = "privatize(statistic='dpcopula')"
_OPTIONS = {"ratio", "correlation", "domains", "columns", "blocks"}
_OPTIONS |= {"hybrid", "hybrid_threshold", "floor", "counts_share"}  # Algorithm 6
#: The component statistic of each ``correlation=`` choice.
CORRELATION_COMPONENT = {"kendall": "kendall_pairs", "mle": "dpcopula_mle", "median": "median_pairs"}


# ----------------------------------------------------------------------------- data
@owned(_OWNER)
def table_codes(data: Any, domains: Any, columns: Any = None) -> tuple[np.ndarray, list[str], list[Domain], list[str]]:
    """Cell codes ``(n, m)``, column names, domains and dtype names of a table (checked).

    ``data`` is a pandas DataFrame (columns of any type; names and dtypes are kept) or a 2-D array;
    ``domains`` maps each column name to its domain spec (:func:`noiseaware._domains.domain_from_spec`)
    or lists one spec per column.
    """
    owner = _OWNER
    if hasattr(data, "columns") and hasattr(data, "dtypes"):
        names = [str(c) for c in data.columns]
        cols = [data.iloc[:, j].to_numpy() for j in range(data.shape[1])]
        dtypes = [str(dt) for dt in data.dtypes]
        n = int(data.shape[0])
        if any(pd_null(c) for c in cols):
            raise NoiseawareValueError(f"{owner}: data has missing values (NaN/None); drop or impute them first.")
    else:
        try:
            arr = np.asarray(data)
        except ValueError:
            raise NoiseawareValueError(
                f"{owner}: data must be a rectangular (n, p) array; got a ragged nested sequence (rows of "
                "different lengths)."
            ) from None
        if arr.ndim != 2:
            raise NoiseawareValueError(f"{owner}: data must be 2-D (rows are records); got shape {arr.shape}.")
        if arr.dtype.kind not in "biufUO":
            raise NoiseawareTypeError(f"{owner}: data must hold numbers or strings; got dtype {arr.dtype}.")
        n = int(arr.shape[0])
        names = [f"x{j}" for j in range(arr.shape[1])]
        cols = [arr[:, j] for j in range(arr.shape[1])]
        # NumPy text is recorded as "str" (a fixed width such as "<U2" would truncate synthetic values)
        dtypes = [{"U": "str", "O": "object"}.get(arr.dtype.kind, str(arr.dtype))] * arr.shape[1]
    if columns is not None:
        if isinstance(columns, str) or not isinstance(columns, Sequence):
            raise NoiseawareTypeError(v.message("columns", "must be a list of names", columns))
        if len(columns) != len(names):
            raise NoiseawareValueError(f"{owner}: columns must name all {len(names)} columns; got {len(columns)}.")
        names = [str(c) for c in columns]
    m = len(names)
    if m < 2:
        raise NoiseawareValueError(f"{owner}: data must have at least two columns (a copula links them); got {m}.")
    if len(set(names)) != m:
        raise NoiseawareValueError(f"{owner}: column names must be unique; got {names}.")
    if n < 2:
        raise NoiseawareValueError(f"{owner}: data must have at least two rows; got {n}.")
    if domains is None:
        raise NoiseawareValueError(
            f"{owner}: give domains=..., the public domain of every column (e.g. {{'age': range(0, 100), "
            "'income': {'lower': 0.0, 'upper': 2e5, 'bins': 200}, 'sex': ['f', 'm']}}); a domain read from the "
            "data would leak it."
        )
    if isinstance(domains, Mapping):
        missing = [c for c in names if c not in domains]
        extra = [str(c) for c in domains if str(c) not in names]
        if missing or extra:
            raise NoiseawareValueError(
                f"{owner}: domains must give one domain per column; missing {missing}, unknown {extra}."
            )
        specs = [domains[c] for c in names]
    elif isinstance(domains, Sequence) and not isinstance(domains, str):
        if len(domains) != m:
            raise NoiseawareValueError(f"{owner}: domains must give {m} domains (one per column); got {len(domains)}.")
        specs = list(domains)
    else:
        raise NoiseawareTypeError(v.message("domains", "must be a mapping column -> domain, or a list", domains))
    doms = [domain_from_spec(c, s) for c, s in zip(names, specs, strict=True)]
    for c, d, dt in zip(names, doms, dtypes, strict=True):  # the release records the dtype: checked on load
        rule = d.dtype_rule(dt)
        if rule is not None:
            raise NoiseawareTypeError(
                f"{owner}: column {c!r} has dtype {dt!r}, which a release cannot record: the dtype {rule}. "
                f"Convert the column first (e.g. to 'int64', 'float64' or 'category')."
            )
    codes = np.empty((n, m), dtype=np.int64)
    for j, (c, d, col) in enumerate(zip(names, doms, cols, strict=True)):
        if d.kind != "values" and getattr(col.dtype, "kind", "O") not in "biuf":
            raise NoiseawareTypeError(
                f"{owner}: column {c!r} has dtype {col.dtype}; list its values as the domain (domains[{c!r}] = "
                "[...]) or encode it as numbers."
            )
        codes[:, j] = d.encode(c, col)
        if codes[0, j] == np.min(codes[:, j]) == np.max(codes[:, j]):
            raise NoiseawareValueError(
                f"{owner}: column {c!r} takes one value only (cell {d.labels()[int(codes[0, j])]}); a constant "
                "attribute has no rank correlation and no copula: drop it."
            )
    return codes, names, doms, dtypes


def pd_null(col: np.ndarray) -> bool:
    """True when a column holds missing values (NaN, None, pandas NA)."""
    import pandas as pd

    return bool(pd.isna(col).any())


# ----------------------------------------------------------------------------- Algorithm 2
def dpcopula_mle_blocks(codes: np.ndarray, blocks: int, perm: np.ndarray) -> tuple[np.ndarray, int]:
    r"""Average over ``blocks`` disjoint blocks of the normal-scores correlation (Algorithm 2, noiseless).

    Block ``t`` holds the records ``perm[t b : (t+1) b]``, ``b = floor(n / blocks)``; within it
    the codes are ranked (ties get the mid rank), mapped to :math:`\Phi^{-1}(r/(b+1))`, and the
    Pearson correlation of those normal scores is the block's estimate :math:`P^t` (a pair with a
    constant column in the block gets 0). Returns the ``C(m, 2)`` averages (row-major upper
    triangle), each in ``[-1, 1]``, and ``b``.

    Examples
    --------
    >>> z = np.random.default_rng(0).multivariate_normal([0, 0], [[1, .8], [.8, 1]], size=4000)
    >>> est, b = dpcopula_mle_blocks(np.argsort(np.argsort(z, axis=0), axis=0), 40, np.arange(4000))
    >>> b, bool(abs(est[0] - 0.8) < 0.05)
    (100, True)
    """
    from scipy import special, stats

    n, m = codes.shape
    b = n // blocks
    x = codes[perm[: blocks * b]].reshape(blocks, b, m).astype(np.float64)
    r = stats.rankdata(x, axis=1, method="average")
    z = special.ndtri(r / (b + 1.0))
    z -= z.mean(axis=1, keepdims=True)
    norm = np.sqrt(np.einsum("tbi,tbi->ti", z, z))
    iu, ju = np.triu_indices(m, 1)
    cross = np.einsum("tbi,tbj->tij", z, z)[:, iu, ju]
    den = norm[:, iu] * norm[:, ju]
    est = np.where(den > 0, cross / np.where(den > 0, den, 1.0), 0.0)
    return np.clip(est, -1.0, 1.0).mean(axis=0), b


# ----------------------------------------------------------------------------- the statistic
@dataclass(frozen=True)
class _Plan:
    """What the plain DPCopula release spends and writes, all fixed before the budget is charged.

    The budget split (``eps1`` margins, ``eps2`` correlations, ``eps_pair`` per pair of the ``k``),
    ``blocks`` of Algorithm 2 (``correlation="mle"``), the margins' mechanism and histogram, the
    correlation component's mechanism (for ``"median"`` the one that bounds its size), the guarantees,
    labels and metadata of the release and of its component.
    """

    eps1: float
    eps2: float
    eps_pair: float
    k: int
    blocks: int | None
    margins: GeometricMechanism
    comp_mech: Mechanism
    g_main: Guarantee
    g_comp: Guarantee
    hist: np.ndarray
    labels: Sequence[tuple[str, ...]]
    meta: dict[str, Any]
    labels_p: Sequence[tuple[str, ...]]
    meta_c: dict[str, Any]


@owned(_OWNER)
def _read_table(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> DPCopulaTable:
    """The options every DPCopula reads and the table, checked in the order their errors are reported."""
    no_extra(options, _OPTIONS)
    if mechanism not in (None, "geometric"):
        v.refuse(
            "mechanism",
            "must be 'geometric' (the margins' noise; the correlation noise follows correlation=...)",
            mechanism,
        )
    eps = ctx.require("epsilon")
    ratio = v.positive("ratio", options.get("ratio", 8.0))
    corr = v.choice("correlation", options.get("correlation", "kendall"), tuple(CORRELATION_COMPONENT))
    codes, names, doms, dtypes = table_codes(data, options.get("domains"), options.get("columns"))
    return DPCopulaTable(codes, names, doms, dtypes, eps, ratio, corr)


@owned(_OWNER)
def _budget_split(table: DPCopulaTable, options: dict[str, Any]) -> tuple[float, float, int | None]:
    """``(epsilon_1, epsilon_2, blocks)`` of the plain DPCopula (``blocks`` None unless ``correlation="mle"``)."""
    owner = _OWNER
    eps, ratio, corr = table.eps, table.ratio, table.correlation
    extra = sorted({"hybrid_threshold", "floor", "counts_share"} & set(options))
    if extra:
        raise NoiseawareValueError(f"{owner}: {extra} apply to hybrid=... only; got them without hybrid.")
    eps1 = eps * ratio / (ratio + 1.0)
    eps2 = fit_sum(eps, [eps1], eps - eps1)  # the guarantees add up to at most eps in float64
    if not eps2 > 0:
        v.refuse("ratio", f"must leave a positive epsilon_2 = epsilon / (ratio + 1) for epsilon={eps!r}", ratio)
    if corr != "mle":
        if "blocks" in options:
            raise NoiseawareValueError(f"{owner}: blocks applies to correlation='mle' only; got correlation={corr!r}.")
        return eps1, eps2, None
    n, m = table.n, table.m
    k = m * (m - 1) // 2
    default_l = math.ceil(k / (0.025 * eps2))
    blocks = v.integer("blocks", options.get("blocks", default_l), minimum=1)
    if n // blocks < m + 1:
        raise NoiseawareValueError(
            f"{owner}: Algorithm 2 needs at least m + 1 = {m + 1} records in each of its l = {blocks} blocks, "
            f"so n >= {blocks * (m + 1)}; got n={n}. (The default l = ceil(C(m,2)/(0.025 epsilon_2)) = "
            f"{default_l} is the paper's rule.) Use correlation='kendall', fewer columns, a larger epsilon, "
            "or pass blocks=... explicitly."
        )
    return eps1, eps2, blocks


def _correlation_mechanism(
    table: DPCopulaTable, eps2: float, eps_pair: float, blocks: int | None
) -> tuple[Mechanism, Guarantee]:
    """The correlation component's mechanism and guarantee, built before the charge (it may refuse the scale).

    ``"median"``: the ``median_pairs`` release draws its own noise (geometric, sensitivity 1 per
    count, ``eps2`` split over the ``k`` pairs as it does); the mechanism returned bounds its size.
    """
    k = table.m * (table.m - 1) // 2
    if table.correlation == "median":
        with shares_of_checked_budget():
            g_comp = GeometricMechanism.from_epsilon(eps_pair, sensitivity=1).guarantee().repeat(k)
        return GeometricMechanism(scale=k / eps2, sensitivity=1), g_comp
    sens = kendall_sensitivity(table.n) if table.correlation == "kendall" else 2.0 / float(blocks)  # type: ignore[arg-type]
    with shares_of_checked_budget():
        comp_mech = LaplaceMechanism.from_epsilon(eps_pair, sensitivity=sens)
    return comp_mech, comp_mech.guarantee().repeat(k)


def _plan_release(ctx: Context, table: DPCopulaTable, options: dict[str, Any]) -> _Plan:
    """The budget split, the mechanisms (refused before any charge), labels and metadata of the plain DPCopula."""
    names, doms, m, corr = table.names, table.doms, table.m, table.correlation
    eps1, eps2, blocks = _budget_split(table, options)
    k = m * (m - 1) // 2
    with shares_of_checked_budget():
        margins = GeometricMechanism.from_epsilon(eps1, sensitivity=2 * m)
    eps_pair = even_share(eps2, k)
    sizes = [d.size for d in doms]
    hist = np.concatenate([np.bincount(table.codes[:, j], minlength=s) for j, s in enumerate(sizes)]).astype(np.int64)
    labels_p, meta_p = _pair_labels_and_meta(names)
    comp_mech, g_comp = _correlation_mechanism(table, eps2, eps_pair, blocks)
    meta_c: dict[str, Any] = {**meta_p, "epsilon_per_pair": eps_pair}
    if corr == "kendall":
        meta_c["estimand"] = "Kendall's tau-a"
    elif corr == "mle":
        meta_c |= {
            "blocks": int(blocks),  # type: ignore[arg-type]
            "block_size": table.n // int(blocks),  # type: ignore[arg-type]
            "estimator": "mean over blocks of the normal-scores correlation (Algorithm 2)",
        }
    meta = {
        "columns": names,
        "m": m,
        "domains": [d.to_dict() for d in doms],
        "dtypes": table.dtypes,
        "bins": sizes,
        "ratio": table.ratio,
        "epsilon_1": eps1,
        "epsilon_2": eps2,
        "correlation": corr,
    }
    labels = [(c, lab) for c, d in zip(names, doms, strict=True) for lab in d.labels()]
    g_main = expected_guarantee(margins, "joint", hist.shape)
    return _Plan(
        eps1, eps2, eps_pair, k, blocks, margins, comp_mech, g_main, g_comp, hist, labels, meta, labels_p, meta_c
    )


@owned(_OWNER)
def _charge(ctx: Context, table: DPCopulaTable, plan: _Plan) -> None:
    """Refuse a release too large to read back, then charge the whole guarantee; before any noise."""
    median = table.correlation == "median"
    comp_parts = {  # the median_pairs component's metadata has a few more short fields: in `extra`
        "shape": (plan.k,),
        "labels": plan.labels_p,
        "mechanism": plan.comp_mech,
        "guarantee": plan.g_comp,
        "metadata": ctx.metadata(plan.meta_c),
        "extra": 1024 if median else 0,
    }
    ctx.charge_release(
        plan.g_main.compose(plan.g_comp),
        "dpcopula",
        "Use smaller domains (fewer cells: coarser intervals, fewer listed values) or fewer columns.",
        shape=plan.hist.shape,
        labels=plan.labels,
        mechanism=plan.margins,
        metadata=plan.meta,
        components=(comp_parts,),
    )


def _correlation_release(ctx: Context, table: DPCopulaTable, plan: _Plan) -> Release:
    """The correlation component: Kendall's taus, Algorithm 2's block estimates, or a ``median_pairs`` release."""
    codes, n = table.codes, table.n
    if table.correlation == "median":
        sub = Context(plan.eps2, None, ctx.rng, None)
        return STATISTICS["median_pairs"](codes.astype(np.float64), sub, "geometric", {"columns": table.names})
    if table.correlation == "kendall":
        sizes = [d.size for d in table.doms]
        pairs = plan.meta_c["pairs"]
        truth = np.array(
            [_s_codes(codes[:, i], codes[:, j], sizes[i], sizes[j]) for i, j in pairs], dtype=np.float64
        ) / (n * (n - 1) / 2.0)
        stat = "kendall_pairs"
    else:
        perm = ctx.key_rng().permutation(n)
        truth, _ = dpcopula_mle_blocks(codes, int(plan.blocks), perm)  # type: ignore[arg-type]  # b = n // blocks
        stat = "dpcopula_mle"
    mech = plan.comp_mech
    noisy = mech.release(truth, rng=ctx.rng)
    g = expected_guarantee(mech, "sequential", truth.shape)
    return ctx.release(stat, noisy, plan.labels_p, mech, "sequential", g, n, plan.meta_c)


@statistic("dpcopula", also=("dpcopula_hybrid",))
def _dpcopula(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """Li et al. (2014) DPCopula release: noisy margins (main values) and noisy correlations (component).

    The steps: the options and the table (:func:`_read_table`); the hybrid of Algorithm 6 when
    ``hybrid=`` is given (:func:`~noiseaware._privatize._dpcopula_hybrid.hybrid_release`); else the
    budget split, mechanisms and metadata (:func:`_plan_release`), the charge before any noise
    (:func:`_charge`), the margins' noise and the correlation component (:func:`_correlation_release`).
    """
    table = _read_table(data, ctx, mechanism, options)
    if options.get("hybrid") is not None:  # Algorithm 6 (Li et al. 2014, §4.4)
        if table.correlation != "kendall" or "blocks" in options:
            raise NoiseawareValueError(
                f"{_OWNER}: hybrid=... supports correlation='kendall' only; got correlation={table.correlation!r}."
            )
        return hybrid_release(ctx, table, options)
    plan = _plan_release(ctx, table, options)
    _charge(ctx, table, plan)
    noisy = plan.margins.release(plan.hist, rng=ctx.rng)
    comp = _correlation_release(ctx, table, plan)
    g = plan.g_main.compose(comp.guarantee)
    return ctx.release("dpcopula", noisy, plan.labels, plan.margins, "joint", g, table.n, plan.meta, components=(comp,))
