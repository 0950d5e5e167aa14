r"""``privatize`` on Dask arrays and DataFrames: data larger than memory, the same release.

The record-additive statistics read Dask data block by block (row blocks: a Dask array's chunks
along axis 0, a DataFrame's partitions), each block reduced to a small summary on whichever
scheduler is active (a ``distributed.Client`` if one exists, else Dask's threads); only the
summaries meet in this process, so memory stays bounded by a few blocks. The release is
*identical* to the in-memory release of the same data and ``rng`` seed:

* ``counts``, ``vector``: the input is the table or vector itself (e.g. the result of a Dask
  ``groupby`` over records that do not fit in memory); it is small, so it is computed and then
  checked and released exactly as in memory (a Series keeps its index as labels).
* ``median_pairs`` (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
  Correlations*, §3.1-3.2, Algorithm S.1): per column the rows
  are ordered by ``(x_ij, key_ij, i)`` and the ``h = ceil(n/2)`` largest are "high" (what
  ``np.lexsort`` does in memory, ties in ``(x, key)`` going to the larger row index). That set is
  found without sorting: an exact distributed selection (radix select on the order-preserving
  64-bit image of the float64 values, 16 bits per pass, and the few candidates of the last bin
  gathered) gives the threshold value ``t_j`` of rank ``n - h`` and the counts
  ``G_j = #{x > t_j}``, ``E_j = #{x = t_j}``. Rows above ``t_j`` are high; of the ``E_j`` tied
  rows the ``h - G_j`` with the largest keys are high -- the tie rule of §3.2 -- found by the
  same selection on the keys of the tied rows only (needed only when ``h - G_j < E_j``; with
  continuous data ``E_j = 1`` and no key is read). A last pass forms the indicators and adds up
  ``A^T A`` per block (exact: integer counts in float64 below ``2**53``).
  The keys are the in-memory ones: in simulation mode (``rng=``) the driver draws the same
  ``n p`` normals from ``rng`` block by block in row order (``rng.standard_normal((n, p))`` as one
  stream), recording the generator state at each block start so a worker can redraw any block's
  keys; the noise then comes from ``rng`` in the same state as in memory. In secure mode the keys
  are data-independent N(0, 1) from fresh OS entropy, one generator per block (the same law as in
  memory; no sequential pass).
* ``dirichlet_logmean`` (Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional Data*,
  Algorithm 1): the checks, the
  censoring counts ``s_m`` and the censored log-sums are block sums; the log-sums are added
  exactly (:mod:`._fsum`, the same code as in memory), so the sum does not depend on the
  blocking. The random split (``split=``) is not available on Dask data.
* every other statistic (``kendall_pairs``, ``randomized_response``, ``dpcopula``, ``pace_ggm``,
  ``second_moment``) has no block-wise path: the Dask input is computed into memory first
  (:func:`materialize`; it must fit) and released exactly as the pandas or NumPy data would be.

Partitions are read by column *name*, never by position: Dask trusts each partition to match the
collection's ``meta`` (and does not check it under ``from_delayed(..., verify_meta=False)``), so
every DataFrame partition is checked against the collection's columns where it is read
(:func:`aligned`). Columns in another order are put back in the declared order; a missing,
renamed or extra column, or a partition that is not a DataFrame, is a
:class:`~noiseaware.exceptions.NoiseawareValueError` naming the columns. A Dask Series is one
column: it is accepted wherever a pandas Series is (``counts``, ``vector``), and the statistics of
rows with several columns refuse it as they refuse a pandas Series.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import current_owner, owner_scope
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from . import _fsum
from ._common import censoring_counts, column_names, numeric_column_names

__all__ = ["DirichletSource", "aligned", "is_dask", "materialize", "median_pair_counts"]

_BITS = 16
_BINS = 1 << _BITS
#: Gather the candidates of a bin (instead of refining it) when it holds at most this many values.
COLLECT_MAX = 1 << 20
#: Normals drawn per step when advancing a generator over a block (bounded memory).
_DRAW_STEP = 1 << 22
_SIGN = np.uint64(1 << 63)


def is_dask(data: Any) -> bool:
    """True for a Dask collection (array, DataFrame, Series), without importing Dask."""
    return callable(getattr(data, "__dask_graph__", None)) and callable(getattr(data, "__dask_keys__", None))


def _compute(*objs: Any) -> Any:
    import dask

    return dask.compute(*objs)


def _tree(leaves: list[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """Pairwise tree reduction of delayed leaves, computed; order preserving (left before right)."""
    import dask

    nodes = leaves
    while len(nodes) > 1:
        nxt = [dask.delayed(combine, pure=True)(nodes[i], nodes[i + 1]) for i in range(0, len(nodes) - 1, 2)]
        if len(nodes) % 2:
            nxt.append(nodes[-1])
        nodes = nxt
    return _compute(nodes[0])[0]


# ---------------------------------------------------------------------------------- blocks
def _is_dask_series(data: Any) -> bool:
    return getattr(data, "ndim", None) == 1 and hasattr(data, "to_delayed") and not hasattr(data, "chunks")


def _is_dask_frame(data: Any) -> bool:
    return getattr(data, "ndim", None) == 2 and hasattr(data, "columns") and hasattr(data, "to_delayed")


def aligned(owner: str, part: Any, expected: tuple[str, ...], b: int) -> Any:
    """Partition ``b`` of a Dask DataFrame with its columns in the ``expected`` order (matched by name).

    Raises
    ------
    NoiseawareValueError
        If the partition is not a DataFrame, or its columns are not the expected ones (missing,
        renamed, extra or repeated columns are named).

    Examples
    --------
    >>> import pandas as pd
    >>> part = pd.DataFrame({"b": [1.0], "a": [2.0]})
    >>> list(aligned("f", part, ("a", "b"), 0).columns)
    ['a', 'b']
    >>> try:
    ...     aligned("f", part.rename(columns={"b": "c"}), ("a", "b"), 3)
    ... except ValueError as exc:
    ...     print(str(exc).split(" (")[1].split(")")[0])
    missing ['b'], unexpected ['c']
    """
    cols = getattr(part, "columns", None)
    if cols is None or getattr(part, "ndim", None) != 2:
        raise NoiseawareValueError(
            f"{owner}: partition {b} of the Dask DataFrame must be a DataFrame with the columns {list(expected)}; "
            f"got {type(part).__name__}."
        )
    got = [str(c) for c in cols]
    if tuple(got) == expected:
        return part
    if sorted(got) == sorted(expected) and len(set(got)) == len(got):
        return part.iloc[:, [got.index(c) for c in expected]]
    missing = [c for c in expected if c not in got]
    extra = sorted({c for c in got if c not in expected} | {c for c in got if got.count(c) > 1})
    raise NoiseawareValueError(
        f"{owner}: partition {b} of the Dask DataFrame must have the columns {list(expected)} of its meta; "
        f"got {got} (missing {missing}, unexpected {extra}). Rebuild the collection with matching partitions."
    )


def _df_block(part: Any, owner: str, expected: tuple[str, ...], b: int) -> np.ndarray:
    part = aligned(owner, part, expected, b)
    with owner_scope(owner):
        numeric_column_names(part)  # a partition may disagree with meta's dtypes too
    return part.to_numpy(dtype=np.float64, na_value=np.nan)


def _arr_block(block: Any) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(block).astype(np.float64, copy=False)


def _row_blocks(data: Any, columns: Any) -> tuple[list[Any], list[str]]:
    """Delayed float64 ``(n_b, p)`` row blocks of a Dask DataFrame or 2-D array, and column names."""
    import dask

    owner = current_owner()
    names: list[str]
    if _is_dask_series(data):
        raise NoiseawareValueError(
            f"{owner}: data must be 2-D (rows are records, at least two columns); got a Dask Series (one column). "
            "Pass a Dask DataFrame or a 2-D Dask array."
        )
    if _is_dask_frame(data):
        names = numeric_column_names(data)
        expected = tuple(str(c) for c in data.columns)
        parts = [dask.delayed(_df_block, pure=True)(d, owner, expected, b) for b, d in enumerate(data.to_delayed())]
    elif hasattr(data, "ndim") and hasattr(data, "rechunk"):  # Dask array
        if data.ndim != 2:
            raise NoiseawareValueError(f"{owner}: data must be 2-D (rows are records); got shape {data.shape}.")
        if data.dtype.kind not in "biuf":
            raise NoiseawareTypeError(f"{owner}: data must be numeric; got dtype {data.dtype}.")
        arr = data.rechunk({1: -1})
        parts = [dask.delayed(_arr_block, pure=True)(d) for d in arr.to_delayed()[:, 0]]
        names = []
    else:
        raise NoiseawareTypeError(
            f"{owner}: Dask data must be a 2-D dask.array or a dask.dataframe.DataFrame; got {type(data).__name__}."
        )
    p = len(names) if names else int(data.shape[1])
    return parts, column_names(p, names, columns)


def _concat(parts: list[Any]) -> Any:
    import pandas as pd

    return pd.concat(parts)


def materialize(data: Any) -> Any:
    """A Dask collection computed into memory: NumPy for an array, pandas (index kept) for a DataFrame or Series.

    A DataFrame's partitions are aligned to its columns by name first (:func:`aligned`), so the
    result has exactly the declared columns, in the declared order.
    """
    import dask

    owner = current_owner()
    if _is_dask_frame(data):
        expected = tuple(str(c) for c in data.columns)
        if len(set(expected)) != len(expected):
            raise NoiseawareValueError(f"{owner}: column names must be unique; got {list(expected)}.")
        parts = [dask.delayed(aligned, pure=True)(owner, d, expected, b) for b, d in enumerate(data.to_delayed())]
        return dask.delayed(_concat, pure=True)(parts).compute()
    if hasattr(data, "compute"):
        return data.compute()
    return _compute(data)[0]  # pragma: no cover - any other Dask collection


# ---------------------------------------------------------------------------------- selection
def _ordered(x: np.ndarray) -> np.ndarray:
    """An order-preserving map float64 -> uint64 (``-0.0`` and ``0.0`` map to the same value)."""
    b = np.ascontiguousarray(x + 0.0).view(np.uint64)
    return np.where(b & _SIGN, ~b, b | _SIGN)


def _from_ordered(u: int) -> float:
    b = np.uint64(u)
    raw = b & ~_SIGN if b & _SIGN else ~b
    return float(np.array([raw], dtype=np.uint64).view(np.float64)[0])


@dataclass(frozen=True)
class _Keys:
    """Where the tie-breaking keys of each block come from (picklable, sent to the workers)."""

    kind: str  # "states" (simulation: the caller's rng, redrawn) or "seeds" (secure: fresh per block)
    p: int
    states: tuple[Any, ...] = ()
    bitgen: Any = None
    seeds: tuple[Any, ...] = ()

    def block(self, b: int, n_b: int) -> np.ndarray:
        if self.kind == "states":
            g = np.random.Generator(self.bitgen())
            g.bit_generator.state = self.states[b]
        else:
            g = np.random.default_rng(self.seeds[b])
        return g.standard_normal((n_b, self.p))


def _values(x: np.ndarray, b: int, spec: tuple[Any, ...]) -> list[np.ndarray]:
    """Per column, the uint64 values a selection pass works on in block ``b``."""
    if spec[0] == "x":
        u = _ordered(x)
        return [u[:, j] for j in range(x.shape[1])]
    _, t_ord, cols, keys = spec  # ("keys", thresholds, columns needing keys, _Keys)
    out = [np.empty(0, dtype=np.uint64)] * x.shape[1]
    tied, k = _tied(x, b, t_ord, cols, keys)
    if k is not None:
        for j, m in tied.items():
            out[j] = k[m, j]
    return out


def _tied(
    x: np.ndarray, b: int, t_ord: np.ndarray, cols: Iterable[int], keys: _Keys
) -> tuple[dict[int, np.ndarray], np.ndarray | None]:
    """Per column in ``cols``, the rows of block ``b`` equal to its threshold, and the block's ordered keys.

    The keys (drawn only when some row ties) are None when no row ties.
    """
    u = _ordered(x)
    tied = {j: u[:, j] == t_ord[j] for j in cols}
    if not any(m.any() for m in tied.values()):
        return tied, None
    return tied, _ordered(keys.block(b, x.shape[0]))


def _select_leaf(x: np.ndarray, b: int, spec: tuple[Any, ...], ops: list[tuple[Any, ...]]) -> list[Any]:
    vals = _values(x, b, spec)
    res: list[Any] = []
    for j, op in enumerate(ops):
        if op[0] == "skip":
            res.append(None)
            continue
        _, bits, prefix = op
        u = vals[j]
        if bits:
            u = u[(u >> np.uint64(64 - bits)) == np.uint64(prefix)]
        if op[0] == "collect":
            res.append(u)
        else:
            digit = ((u >> np.uint64(64 - bits - _BITS)) & np.uint64(_BINS - 1)).astype(np.int64)
            res.append(np.bincount(digit, minlength=_BINS).astype(np.int64))
    return res


def _select_combine(a: list[Any], b: list[Any]) -> list[Any]:
    out: list[Any] = []
    for ra, rb in zip(a, b, strict=True):
        if ra is None:
            out.append(None)
        elif ra.dtype == np.uint64:
            out.append(np.concatenate([ra, rb]))
        else:
            out.append(ra + rb)
    return out


@dataclass
class _Sel:
    rank: int  # 0-based ascending rank sought among the values with this prefix
    bits: int = 0
    prefix: int = 0
    above: int = 0  # values above the current bin
    count: int | None = None  # values in the current bin (None: unknown)
    result: tuple[int, int, int] | None = None  # (value, #greater, #equal)


def _advance(s: _Sel, op: tuple[Any, ...], r: Any) -> None:
    """Update one column's selection with the result of a pass (a histogram or the gathered bin)."""
    if op[0] == "collect":
        u = np.sort(r)
        t = u[s.rank]
        s.result = (int(t), s.above + int(np.count_nonzero(u > t)), int(np.count_nonzero(u == t)))
        return
    cum = np.cumsum(r)
    idx = int(np.searchsorted(cum, s.rank, side="right"))
    before = int(cum[idx - 1]) if idx else 0
    s.above += int(cum[-1] - cum[idx])
    s.rank -= before
    s.prefix = (s.prefix << _BITS) | idx
    s.bits += _BITS
    s.count = int(r[idx])
    if s.bits == 64:  # every bit fixed: one value, all of the bin equal
        s.result = (s.prefix, s.above, s.count)


def _select(
    parts: list[Any], spec: tuple[Any, ...], ranks: list[int | None], first: list[Any] | None = None
) -> list[tuple[int, int, int] | None]:
    """Exact distributed selection: per column, the value of the given ascending rank, with #greater and #equal.

    ``first``, when given, is the result of the first pass (a top-16-bit histogram per column),
    computed by the caller together with other block summaries.
    """
    import dask

    sels = [None if r is None else _Sel(rank=r) for r in ranks]
    if first is not None:
        for s, r in zip(sels, first, strict=True):
            if s is not None:
                _advance(s, ("hist", 0, 0), r)
    while True:
        ops: list[tuple[Any, ...]] = []
        for s in sels:
            if s is None or s.result is not None:
                ops.append(("skip",))
            elif s.count is not None and s.count <= COLLECT_MAX:
                ops.append(("collect", s.bits, s.prefix))
            else:
                ops.append(("hist", s.bits, s.prefix))
        if all(op[0] == "skip" for op in ops):
            break
        leaves = [dask.delayed(_select_leaf, pure=True)(x, b, spec, ops) for b, x in enumerate(parts)]
        res = _tree(leaves, _select_combine)
        for s, op, r in zip(sels, ops, res, strict=True):
            if s is not None and op[0] != "skip":
                _advance(s, op, r)
    return [None if s is None else s.result for s in sels]


# ---------------------------------------------------------------------------------- median_pairs
def _first_leaf(x: np.ndarray) -> tuple[list[int], int, list[Any]]:
    """The first pass: the block's length, its non-finite values, and the top-16-bit histograms."""
    nonfinite = int(x.size - np.count_nonzero(np.isfinite(x)))
    return [int(x.shape[0])], nonfinite, _select_leaf(x, 0, ("x",), [("hist", 0, 0)] * x.shape[1])


def _first_combine(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[list[int], int, list[Any]]:
    return a[0] + b[0], a[1] + b[1], _select_combine(a[2], b[2])


def _index_leaf(x: np.ndarray, b: int, offset: int, spec: tuple[Any, ...], kt: dict[int, int]) -> list[np.ndarray]:
    """Global row indices of the tied rows whose key equals the key threshold (a near-impossible case)."""
    _, t_ord, _, keys = spec
    out = [np.empty(0, dtype=np.int64)] * x.shape[1]
    masks, k = _tied(x, b, t_ord, kt, keys)
    if k is not None:
        for j, m in masks.items():
            out[j] = offset + np.flatnonzero(m & (k[:, j] == np.uint64(kt[j])))
    return out


def _index_combine(a: list[np.ndarray], b: list[np.ndarray]) -> list[np.ndarray]:
    return [np.concatenate([ra, rb]) for ra, rb in zip(a, b, strict=True)]


def _counts_leaf(
    x: np.ndarray, b: int, offset: int, t_ord: np.ndarray, ties: dict[int, tuple[int, int]], keys: _Keys | None
) -> np.ndarray:
    """``A^T A`` of a block: high/low indicators by the thresholds and, for tied rows, the keys."""
    u = _ordered(x)
    a = (u > t_ord[None, :]).astype(np.float64)
    eq = u == t_ord[None, :]
    free = [j for j in range(x.shape[1]) if j not in ties]
    a[:, free] += eq[:, free]  # every tied row of these columns is high
    if ties and eq[:, list(ties)].any():
        k = _ordered(keys.block(b, x.shape[0]))  # type: ignore[union-attr]
        rows = offset + np.arange(x.shape[0])
        for j, (kt, cut) in ties.items():
            kj = k[:, j]
            high = (kj > np.uint64(kt)) | ((kj == np.uint64(kt)) & (rows >= cut))
            a[:, j] += eq[:, j] & high
    return a.T @ a


def _sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a + b


def median_pair_counts(
    data: Any, columns: Any, rng: np.random.Generator | None, tie_keys: Any
) -> tuple[np.ndarray, list[str], int]:
    """The ``p(p-1)/2`` high-high counts of Dask data (module docstring), their column names, and ``n``."""
    import dask

    if tie_keys is not None:
        raise NoiseawareValueError(
            f"{current_owner()}: tie_keys is not available for Dask data; the keys are drawn block by block "
            "(from rng in simulation mode)."
        )
    parts, names = _row_blocks(data, columns)
    p = len(names)
    lengths, nonfinite, first = _tree([dask.delayed(_first_leaf, pure=True)(x) for x in parts], _first_combine)
    if nonfinite:
        raise NoiseawareValueError(
            f"{current_owner()}: data must not contain NaN or inf; got {nonfinite} non-finite value(s). "
            "Impute or drop them before privatizing."
        )
    n = int(sum(lengths))
    if n < 2:
        raise NoiseawareValueError(f"{current_owner()}: data must have at least two rows; got {n}.")
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64).tolist()
    # the keys: in simulation mode the caller's rng advances by exactly n * p normals, as in memory
    if rng is not None:
        states = []
        for n_b in lengths:
            states.append(rng.bit_generator.state)
            left = n_b * p
            while left:
                step = min(left, _DRAW_STEP)
                rng.standard_normal(step)
                left -= step
        keys = _Keys("states", p, states=tuple(states), bitgen=type(rng.bit_generator))
    else:
        seeds = np.random.SeedSequence(secrets.randbits(128)).spawn(len(lengths))
        keys = _Keys("seeds", p, seeds=tuple(seeds))

    h = math.ceil(n / 2)
    sel = _select(parts, ("x",), [n - h] * p, first)
    t_ord = np.array([s[0] for s in sel if s is not None], dtype=np.uint64)
    need = [h - s[1] for s in sel if s is not None]
    n_eq = [s[2] for s in sel if s is not None]
    key_cols = [j for j in range(p) if need[j] < n_eq[j]]
    ties: dict[int, tuple[int, int]] = {}
    if key_cols:
        spec = ("keys", t_ord, key_cols, keys)
        ksel = _select(parts, spec, [n_eq[j] - need[j] if j in key_cols else None for j in range(p)])
        exact_ties: dict[int, int] = {}
        for j in key_cols:
            kt, k_gt, k_eq = ksel[j]  # type: ignore[misc]
            need2 = need[j] - k_gt
            ties[j] = (kt, -1)
            if need2 < k_eq:  # equal keys at the threshold: the larger row indices are high (np.lexsort)
                exact_ties[j] = kt
        if exact_ties:
            idx_leaves = [
                dask.delayed(_index_leaf, pure=True)(x, b, offsets[b], spec, exact_ties) for b, x in enumerate(parts)
            ]
            rows = _tree(idx_leaves, _index_combine)
            for j, kt in exact_ties.items():
                r = np.sort(rows[j])
                ties[j] = (kt, int(r[r.size - (need[j] - ksel[j][1])]))  # type: ignore[index]
    leaves = [
        dask.delayed(_counts_leaf, pure=True)(x, b, offsets[b], t_ord, ties, keys if ties else None)
        for b, x in enumerate(parts)
    ]
    gram = np.rint(_tree(leaves, _sum)).astype(np.int64)
    iu, ju = np.triu_indices(p, 1)
    return gram[iu, ju], names, n


# ---------------------------------------------------------------------------------- dirichlet_logmean
def _simplex_leaf(x: np.ndarray, tol: float) -> dict[str, Any]:
    neg = x < 0
    sums = x.sum(axis=1)
    off = np.abs(sums - 1.0) > tol
    zeros = x == 0
    first_neg = None
    if neg.any():
        i, j = np.argwhere(neg)[0]
        first_neg = (int(i), int(j), float(x[i, j]))
    first_off = None
    if off.any():
        i = int(np.argmax(off))
        first_off = (i, float(sums[i]))
    return {
        "n": int(x.shape[0]),
        "nonfinite": int(x.size - np.count_nonzero(np.isfinite(x))),
        "neg": int(neg.sum()),
        "first_neg": first_neg,
        "off": int(off.sum()),
        "first_off": first_off,
        "zeros": int(zeros.sum()),
        "zero_rows": int(zeros.any(axis=1).sum()),
    }


def _simplex_combine(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = {k: a[k] + b[k] for k in ("n", "nonfinite", "neg", "off", "zeros", "zero_rows")}
    fb_neg = None if b["first_neg"] is None else (b["first_neg"][0] + a["n"], *b["first_neg"][1:])
    fb_off = None if b["first_off"] is None else (b["first_off"][0] + a["n"], b["first_off"][1])
    out["first_neg"] = a["first_neg"] if a["first_neg"] is not None else fb_neg
    out["first_off"] = a["first_off"] if a["first_off"] is not None else fb_off
    return out


def _normalized(x: np.ndarray) -> np.ndarray:
    return x / x.sum(axis=1)[:, None]


def _censor_leaf(x: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    return censoring_counts(_normalized(x), candidates)


def _logsum_leaf(x: np.ndarray, a: float) -> list[int]:
    return _fsum.partial_sums(np.log(np.maximum(_normalized(x), a)))


class DirichletSource:
    """Dask compositions for ``dirichlet_logmean``: checked on construction, then block sums on demand."""

    def __init__(self, data: Any, columns: Any, zeros: str, tol: float) -> None:
        import dask

        self.parts, self.names = _row_blocks(data, columns)
        s = _tree([dask.delayed(_simplex_leaf, pure=True)(x, tol) for x in self.parts], _simplex_combine)
        self.n, self.d = int(s["n"]), len(self.names)
        if s["nonfinite"]:
            raise NoiseawareValueError(
                f"{current_owner()}: data must not contain NaN or inf; got {s['nonfinite']} non-finite value(s). "
                "Impute or drop them before privatizing."
            )
        if self.n < 2:
            raise NoiseawareValueError(f"{current_owner()}: data must have at least two rows; got {self.n}.")
        if s["neg"]:
            i, j, val = s["first_neg"]
            raise NoiseawareValueError(
                f"{current_owner()}: compositions must have non-negative parts; got {s['neg']} negative part(s), "
                f"e.g. row {i} column {j} = {val!r}."
            )
        if s["off"]:
            i, total = s["first_off"]
            raise NoiseawareValueError(
                f"{current_owner()}: rows must lie on the simplex (sum to 1 within simplex_tol={tol!r}); got "
                f"{s['off']} row(s) off it, e.g. row {i} sums to {total!r}. Divide each row by its sum, "
                "or raise simplex_tol for rounded shares."
            )
        if s["zeros"] and zeros == "error":
            raise NoiseawareValueError(
                f"{current_owner()}: compositions have {s['zeros']} zero part(s) in {s['zero_rows']} "
                "row(s); the Dirichlet model gives them probability 0. Pass zeros='censor' to let the threshold a "
                "replace them (log max(x, a)), or drop those rows."
            )

    def censoring_counts(self, candidates: np.ndarray) -> np.ndarray:
        """Block sums of :func:`noiseaware._privatize._common.censoring_counts` (normalized rows)."""
        import dask

        cand = np.asarray(candidates, dtype=np.float64)
        leaves = [dask.delayed(_censor_leaf, pure=True)(x, cand) for x in self.parts]
        return np.asarray(_tree(leaves, _sum), dtype=np.int64)

    def log_sums(self, a: float) -> np.ndarray:
        """Exact column sums of ``log(max(x, a))`` over all rows (:mod:`._fsum`)."""
        import dask

        leaves = [dask.delayed(_logsum_leaf, pure=True)(x, a) for x in self.parts]
        return _fsum.to_float(_tree(leaves, _fsum.combine))
