r"""Integer counts that meet exact group totals, from real draws (the relaxed route's rounding)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import owned
from ..exceptions import NoiseawareValueError

__all__ = ["apportion", "onto_totals", "project_to_simplex", "round_to_totals"]


#: Relative tolerance of :func:`round_to_totals` on a group's real sum: a draw of :func:`model` meets
#: its total to about 1e-12 relative (float rounding), far inside it.
_SUM_RTOL = 1e-9


#: Tolerance below -1/2 of a draw's cells (float rounding of ``u - 1/2`` with ``u >= 0``).
_FLOOR_ATOL = 1e-9


def _ranks(key: np.ndarray) -> np.ndarray:
    """Per row, each entry's rank in ascending order of ``key`` (ties by position)."""
    order = np.argsort(key, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(key.shape[1])[None, :], axis=1)
    return ranks


def project_to_simplex(x: np.ndarray, total: int) -> np.ndarray:
    r"""Each row of ``x`` projected onto the simplex :math:`\{q \ge 0, \sum q = T\}`: :math:`q = \max(x - \tau, 0)`.

    The Euclidean projection (Duchi, Shalev-Shwartz, Singer & Chandra 2008, "Efficient projections onto
    the l1-ball for learning in high dimensions", Figure 1): with :math:`u` the row sorted in decreasing
    order, :math:`\tau = (\sum_{j \le \rho} u_j - T)/\rho` for the largest :math:`\rho` with
    :math:`u_\rho > (\sum_{j \le \rho} u_j - T)/\rho`. ``total`` > 0.
    """
    u = -np.sort(-x, axis=1)
    css = np.cumsum(u, axis=1) - total
    ind = np.arange(1, x.shape[1] + 1)
    rho = np.count_nonzero(u * ind > css, axis=1)  # the condition holds for a prefix of j = 1..rho
    tau = np.take_along_axis(css, (rho - 1)[:, None], axis=1) / rho[:, None]
    return np.maximum(x - tau, 0.0)


def apportion(quota: np.ndarray, totals: np.ndarray) -> np.ndarray:
    r"""Hamilton's largest-remainder apportionment of each row's integer total over its non-negative quotas.

    Each row's integers are the floors of its quotas plus one unit for the cells of largest remainder
    until the row sums to its total. Float rounding can leave a row's quotas off their total by more
    than a cell's worth (totals beyond ``2**53``), so units are added (``D // K`` to every cell, then one
    to the ``D % K`` largest remainders) or taken (from the positive cells of smallest remainder, as many
    rounds as needed) until every row meets its total exactly; no count goes below 0.
    """
    floor = np.floor(quota)
    out = floor.astype(np.int64)
    rem = quota - floor
    k = out.shape[1]
    short = totals - out.sum(axis=1)
    while np.any(short != 0):
        up = short > 0
        if np.any(up):
            rank = _ranks(-rem[up])
            d = short[up][:, None]
            add = d // k + (rank < d % k)
            out[up] += add
            rem[up] -= add
        down = short < 0
        if np.any(down):
            have = out[down] > 0
            rank = _ranks(np.where(have, rem[down], np.inf))
            n_have = have.sum(axis=1, keepdims=True)  # >= 1: the row sums above its total >= 0
            need = -short[down][:, None]
            take = np.minimum(out[down], need // n_have + (rank < need % n_have)) * have
            out[down] -= take
            rem[down] += take
        short = totals - out.sum(axis=1)
    return out


@owned("round_to_totals")
def round_to_totals(counts: Any, groups: Any, totals: Any) -> np.ndarray:
    r"""Non-negative integer counts that sum exactly to each group's integer total, nearest the real draw.

    For each draw and group ``g`` with integer total :math:`T_g`: the draw's cells :math:`x` are
    projected onto the simplex, :math:`q = \max(x - \tau, 0)` with :math:`\tau` such that
    :math:`\sum q = T_g` (the nearest point with non-negative entries and that sum; :math:`q = x`
    when no cell is below 0), and the quotas are apportioned by Hamilton's largest-remainder rule:
    each cell gets :math:`\lfloor q \rfloor`, and the :math:`T_g - \sum \lfloor q \rfloor` cells of
    largest remainder :math:`q - \lfloor q \rfloor` one more. Every count is then
    :math:`\lfloor q \rfloor` or :math:`\lceil q \rceil` (the integer vector of sum :math:`T_g`
    nearest to :math:`q`), at least 0, and the group sums to :math:`T_g` exactly however the mass is
    spread: a few cells may hold all of it and the rest sit at :math:`-1/2`. Where no cell is below
    0, each count is within 1 of its real value.

    Parameters
    ----------
    counts : array_like, shape (..., leaves, cells)
        Real draws, as :func:`model` makes them: finite, each at least :math:`-1/2`, and each draw's
        cells of group ``g`` summing to ``totals[g]`` (to :math:`10^{-9}` relative).
    groups : array_like of int, shape (leaves,)
        The group of each leaf, in ``[0, len(totals))``.
    totals : array_like of int, shape (groups,)
        The groups' integer totals (at least 0); a group without leaves must have total 0.

    Returns
    -------
    numpy.ndarray of int64, shape of ``counts``

    Raises
    ------
    NoiseawareTypeError
        If an argument is not numeric.
    NoiseawareValueError
        If ``counts`` has fewer than 2 axes, a NaN or inf, or a cell below :math:`-1/2`; ``groups``
        does not hold one integer index in range per leaf; ``totals`` are not integers at least 0;
        or a draw's cells do not sum to their group's total (the message gives how far off).

    Examples
    --------
    >>> import numpy as np
    >>> round_to_totals(np.array([[1.4, 1.3], [2.3, 0.0]]), [0, 0], [5]).tolist()
    [[2, 1], [2, 0]]
    >>> round_to_totals(np.array([[6.5, -0.5], [-0.5, -0.5], [-0.5, -0.5]]), [0, 0, 0], [4]).tolist()
    [[4, 0], [0, 0], [0, 0]]
    """
    owner = "round_to_totals"
    x = v.numeric_array("counts", counts)
    if x.ndim < 2:
        raise NoiseawareValueError(v.message("counts", "must have shape (..., leaves, cells)", x.shape,
                                             "Pass the draws with their leaf and cell axes last."))
    lead, (n_leaf, n_cell) = x.shape[:-2], x.shape[-2:]
    t = v.integer_array("totals", totals, booleans=False)
    if t.ndim != 1:
        raise NoiseawareValueError(v.message("totals", "must be one integer per group (1-D)", t.shape))
    if t.size and int(np.min(t)) < 0:
        raise NoiseawareValueError(v.message("totals", "must be integers >= 0 (a count of people)",
                                             t.tolist(), limit=200))
    g = v.integer_array("groups", groups, booleans=False)
    if g.shape != (n_leaf,):
        raise NoiseawareValueError(
            f"{owner}: groups must hold one group index per leaf, shape ({n_leaf},) for counts of shape {x.shape}; "
            f"got groups of shape {g.shape}. Pass the root-level ancestor of each leaf."
        )
    if g.size and (int(np.min(g)) < 0 or int(np.max(g)) >= t.size):
        bad = int(g[(g < 0) | (g >= t.size)][0])
        raise NoiseawareValueError(
            f"{owner}: groups must be indices in [0, {t.size}) (one per entry of totals); got a group index of {bad}."
        )
    flat = x.reshape(-1, n_leaf * n_cell)
    if not np.all(np.isfinite(flat)):
        n_bad = int(flat.size - np.count_nonzero(np.isfinite(flat)))
        raise NoiseawareValueError(
            f"{owner}: counts must be finite; got {n_bad} NaN or inf value(s). A draw with NaN has no integer "
            "counts: check the sampler's output (divergences, a failed chain)."
        )
    if flat.size and float(np.min(flat)) < -0.5 - _FLOOR_ATOL:
        raise NoiseawareValueError(
            f"{owner}: counts must each be >= -1/2 (a real count x stands for the integer whose cell "
            f"[n - 1/2, n + 1/2) holds it); got a count of {float(np.min(flat))!r}."
        )
    cell_group = np.repeat(g, n_cell)
    out = np.zeros(flat.shape, dtype=np.int64)
    for grp in range(t.size):
        cols = np.flatnonzero(cell_group == grp)
        total = int(t[grp])
        if not cols.size:
            if total:
                raise NoiseawareValueError(
                    f"{owner}: totals[{grp}] must be 0, since group {grp} has no leaves; got totals[{grp}]={total}."
                )
            continue
        xs = flat[:, cols]
        sums = xs.sum(axis=1)
        off = np.abs(sums - total)
        tol = _SUM_RTOL * (total + 0.5 * cols.size + 1.0)
        if np.any(off > tol):
            worst = int(np.argmax(off))
            raise NoiseawareValueError(
                f"{owner}: counts must sum to the group totals (each draw's cells of group {grp} to "
                f"totals[{grp}]={total}, to {_SUM_RTOL:g} relative); got a sum of {float(sums[worst])!r} in draw "
                f"{worst}, off by {float(off[worst]):.6g}. Pass draws that meet the totals (as hierarchy.model "
                "draws them) and the totals they were drawn for."
            )
        if total:
            out[:, cols] = apportion(project_to_simplex(xs, total), np.full(flat.shape[0], total, dtype=np.int64))
    return out.reshape(*lead, n_leaf, n_cell)


def onto_totals(counts: np.ndarray, groups: np.ndarray, totals: Any) -> np.ndarray:
    r"""Relaxed draws put exactly where :func:`round_to_totals` takes them, so that rounding cannot fail.

    A draw of :func:`model` has cells :math:`x \ge -1/2` summing to each group's total up to float
    rounding; here each cell is clipped at :math:`-1/2` and each group's shifted cells
    :math:`x + 1/2` rescaled to sum to :math:`T_g + K_g/2` (a group of total 0 and cells at
    :math:`-1/2` stays so), and a cell that is not finite counts as :math:`-1/2`. For the draws of
    :func:`model` this changes nothing beyond float rounding; it makes the rounding total.
    """
    x = np.where(np.isfinite(counts), counts, -0.5)
    u = np.maximum(x, -0.5) + 0.5
    n_cell = u.shape[-1]
    out = np.empty_like(u)
    for grp, total in enumerate(np.asarray(totals, dtype=np.float64)):
        rows = groups == grp
        if not np.any(rows):
            continue
        part = u[..., rows, :]
        target = total + 0.5 * part.shape[-2] * n_cell
        mass = part.sum(axis=(-2, -1), keepdims=True)
        even = np.full_like(part, target / (part.shape[-2] * n_cell))
        out[..., rows, :] = np.where(mass > 0, part * (target / np.where(mass > 0, mass, 1.0)), even)
    return out - 0.5
