r"""Variable reordering for samplers in LKJ-Cholesky coordinates (engine, private).

The posterior of a correlation matrix ``R`` does not depend on the order of its variables when the
prior is a function of :math:`\det R` (LKJ) and the likelihood a sum over pairs, but NUTS's
coordinates do: row ``i`` of the Cholesky factor holds the canonical partial correlations of
variable ``i`` given the variables before it. Putting nearly dependent variables last
(:func:`pivot_order`) keeps the long tails a near-singular ``R`` puts on those coordinates in the
last rows. Only the data move (:func:`permute_pairs`), so the compiled programs of the shape are
reused; the draws are mapped back by :func:`unpermute_cholesky`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["permute_pairs", "pivot_order", "unpermute_cholesky"]


def pivot_order(R: np.ndarray) -> np.ndarray:
    r"""Variable order of a diagonally pivoted Cholesky factorization of ``R``: largest conditional variance first.

    Step ``i`` places the variable whose variance given the ``i`` variables already placed (the
    diagonal of the Schur complement) is largest; ties go to the lower index, so the identity
    matrix keeps its order. Variables that are nearly linear combinations of others come last.

    Examples
    --------
    >>> import numpy as np
    >>> pivot_order(np.eye(3)).tolist()
    [0, 1, 2]
    """
    S = np.array(R, dtype=np.float64)
    p = S.shape[0]
    free = np.ones(p, dtype=bool)
    order = np.empty(p, dtype=np.int64)
    for i in range(p):
        j = int(np.argmax(np.where(free, np.diag(S), -np.inf)))
        order[i], free[j] = j, False
        if S[j, j] > 0.0:
            v = S[:, j] / np.sqrt(S[j, j])
            S -= np.outer(v, v)
    return order


def permute_pairs(pairs: Any, order: np.ndarray) -> np.ndarray | None:
    """Which data entry each pair slot takes when the variables are put in ``order``; None if not closed.

    ``pairs`` (``k x 2``) are the static pairs of a program; slot ``t`` of the reordered data is
    entry ``idx[t]`` of the release's, the pair ``(order[a], order[b])`` for the slot's ``(a, b)``
    (either way round). None when the pairs are not closed under the permutation (a subset of the
    pairs), so that the reordered data would need other programs.

    Examples
    --------
    >>> permute_pairs([(0, 1), (0, 2), (1, 2)], np.array([0, 2, 1])).tolist()
    [1, 0, 2]
    >>> permute_pairs([(0, 1), (0, 2)], np.array([1, 0, 2])) is None
    True
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    where = {(min(a, b), max(a, b)): t for t, (a, b) in enumerate(pairs.tolist())}  # a pair either way round
    o = np.asarray(order, dtype=np.int64)
    perm = []
    for a, b in pairs.tolist():
        u, w = int(o[a]), int(o[b])
        t = where.get((min(u, w), max(u, w)))
        if t is None:
            return None
        perm.append(t)
    return np.asarray(perm, dtype=np.int64)


def unpermute_cholesky(L: np.ndarray, order: np.ndarray) -> np.ndarray:
    r"""Cholesky factors of ``R`` in the original order from factors ``L`` (``..., p, p``) of the reordered variables.

    With ``pos`` the inverse of ``order``, :math:`R_{ab} = (L L^\top)_{pos_a, pos_b}`, so
    :math:`F = L_{pos, :}` has :math:`F F^\top = R`; the lower triangular factor is the transposed
    ``r`` of the QR factorization of :math:`F^\top` with its diagonal made positive -- no Cholesky
    factorization of ``R`` itself, which fails on draws numerically at the singular boundary.
    """
    pos = np.argsort(np.asarray(order, dtype=np.int64))
    r = np.linalg.qr(np.swapaxes(L[..., pos, :], -1, -2), mode="r")
    sign = np.where(np.diagonal(r, axis1=-2, axis2=-1) < 0.0, -1.0, 1.0)
    return np.swapaxes(r * sign[..., :, None], -1, -2)
