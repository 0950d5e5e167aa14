r"""The generalized least squares estimate over a hierarchy of noisy counts, with its variance.

The baseline of Cumings-Menon & Zhuravlev (2024), *Least squares estimation for hierarchical
data*: the GLS estimate of the leaf cell counts from every noisy measurement of a
:class:`~noiseaware.hierarchy.NoisyHierarchy`, weighted by the inverse noise variances, with the
exact totals imposed as equality constraints, and its covariance. Computed in two passes over the
tree (up: the estimate of each unit's cell counts from the measurements of its subtree; down: the
estimate given all measurements), in time linear in the number of units, as their algorithm does;
:func:`gls_dense` solves the same problem by its normal equations and serves as the test reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .. import _validation as v
from .._validation import owned
from ..exceptions import NoiseawareTypeError
from ._record import NoisyHierarchy

__all__ = ["GLSResult", "gls", "gls_dense"]


@dataclass(frozen=True)
class GLSResult:
    r"""GLS estimate of every unit's cell counts and its covariance (:func:`gls`).

    Attributes
    ----------
    mean : tuple of numpy.ndarray
        Per level, shape ``(units, cells)``: :math:`\hat s_{lu}`.
    cov : tuple of numpy.ndarray
        Per level, shape ``(units, cells, cells)``: :math:`\mathrm{Cov}(\hat s_{lu})` (the
        sampling covariance of the estimator under the noise; covariances *between* units are
        not returned).
    levels : tuple of str
        The release's level names.
    """

    mean: tuple[np.ndarray, ...]
    cov: tuple[np.ndarray, ...]
    levels: tuple[str, ...]

    @owned("GLSResult")
    def _level(self, level: int | str) -> int:
        if isinstance(level, str):
            if level not in self.levels:
                v.refuse("level", f"must be one of {list(self.levels)}", level)
            return self.levels.index(level)
        return v.integer("level", level, minimum=0, maximum=len(self.levels) - 1)

    def totals(self, level: int | str = -1) -> tuple[np.ndarray, np.ndarray]:
        r"""Estimated totals of a level's units and their standard errors :math:`\sqrt{1^\top \Sigma 1}`."""
        lev = self._level(level if level != -1 else len(self.levels) - 1)
        return self.mean[lev].sum(axis=1), np.sqrt(np.maximum(self.cov[lev].sum(axis=(1, 2)), 0.0))

    @owned("GLSResult.interval")
    def interval(self, prob: float = 0.9, level: int | str = -1) -> tuple[np.ndarray, np.ndarray]:
        r"""Normal intervals of probability ``prob`` for a level's cells and totals.

        Returns ``(lower, upper)``, each of shape ``(units, 1 + cells)`` with the total first:
        :math:`\hat s \pm z_{(1+p)/2}\,\mathrm{se}`, as the Census Bureau's product derives them.
        """
        p = v.open_unit("prob", prob)
        lev = self._level(level if level != -1 else len(self.levels) - 1)
        est = np.concatenate([self.mean[lev].sum(axis=1, keepdims=True), self.mean[lev]], axis=1)
        var = np.concatenate(
            [self.cov[lev].sum(axis=(1, 2))[:, None], np.diagonal(self.cov[lev], axis1=1, axis2=2)], axis=1
        )
        half = stats.norm.ppf(0.5 + p / 2) * np.sqrt(np.maximum(var, 0.0))
        return est - half, est + half


def _own_information(release: NoisyHierarchy) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per level: the information ``J_l`` (cells x cells) and ``h`` (units x cells) of its own measurements."""
    C = release.n_cells
    a = np.vstack([np.ones(C), np.eye(C)])  # (queries, cells): the total and each cell
    nv = release.noise_variance()
    Js, hs = [], []
    for lev, y in enumerate(release.values):
        w = np.where(release.variance[lev] > 0, 1.0 / np.where(nv[lev] > 0, nv[lev], 1.0), 0.0)
        Js.append((a.T * w) @ a)
        hs.append((y.astype(np.float64) * w) @ a)
    return Js, hs


@owned("gls")
def gls(release: NoisyHierarchy) -> GLSResult:
    r"""GLS estimate of the cell counts of every unit, with the exact totals as constraints.

    Minimises :math:`\sum_{luq} (y_{luq} - a_q^\top s_{lu})^2 / \tau_{lq}` over the leaf cell
    counts (every :math:`s_{lu}` the sum of the leaves below it) subject to the invariants, with
    :math:`\tau_{lq}` the exact variance of the discrete Gaussian noise
    (:meth:`NoisyHierarchy.noise_variance`). Up the tree: a leaf's estimate from its own
    measurements is :math:`m = J^{-1} h`, :math:`V = J^{-1}` (:math:`J = \sum_q a_q a_q^\top/\tau_q`,
    :math:`h = \sum_q a_q y_q/\tau_q`); a parent combines the sum of its children's estimates
    (mean :math:`M = \sum m_c`, covariance :math:`S = \sum V_c`) with its own measurements,
    :math:`V_u = (S^{-1} + J_u)^{-1}`, :math:`m_u = V_u (S^{-1} M + h_u)`. At the root, the exact
    total :math:`T` is imposed: :math:`m \leftarrow m + V1\,(T - 1^\top m)/(1^\top V 1)`,
    :math:`V \leftarrow V - V 1 1^\top V / (1^\top V 1)`. Down the tree, with :math:`K_c = V_c
    S^{-1}`: :math:`\hat s_c = m_c + K_c(\hat s_u - M)` and :math:`\mathrm{Cov}(\hat s_c) = V_c -
    V_c S^{-1} V_c + K_c \mathrm{Cov}(\hat s_u) K_c^\top`. This is the Gaussian smoother on the tree;
    it equals the GLS estimator and its covariance (Cumings-Menon & Zhuravlev (2024), *Least squares
    estimation for hierarchical data*, where the same two passes are shown to give GLS), which
    :func:`gls_dense` computes by the normal equations. Cost :math:`O(\text{units} \cdot C^3)`.

    Parameters
    ----------
    release : NoisyHierarchy
        Every leaf must measure all its cells (so each leaf's information matrix is invertible);
        :func:`~noiseaware.hierarchy.synthetic_nmf` files and the NMF do.

    Returns
    -------
    GLSResult

    Notes
    -----
    GLS is unconstrained: it does not know that counts are non-negative integers, so the estimate
    of a small count can be negative (a tract whose measurements all came out below zero). The
    record's own checks (:class:`NoisyHierarchy`) refuse files whose counts do not sum up the tree
    within the reach of their noise, which would otherwise drive such estimates far below zero;
    :func:`~noiseaware.hierarchy.fit` gives a posterior on non-negative counts.

    Examples
    --------
    >>> from noiseaware.hierarchy import gls, synthetic_nmf
    >>> sim = synthetic_nmf(2, 3, 4, rng=0)
    >>> est = gls(sim.release)
    >>> bool(abs(est.mean[0].sum(axis=1) - sim.release.values[0][:, 0]).max() < 1e-9)  # the invariants
    True
    """
    if not isinstance(release, NoisyHierarchy):
        raise NoiseawareTypeError(f"gls: release must be a NoisyHierarchy; got {type(release).__name__}.")
    L = len(release.levels)
    Js, hs = _own_information(release)
    if np.linalg.matrix_rank(Js[-1]) < release.n_cells:
        rule = "must measure every cell at the leaf level (variance > 0)"
        v.refuse("release", rule, release.variance[-1].tolist())
    m: list[np.ndarray] = [np.empty(0)] * L
    V: list[np.ndarray] = [np.empty(0)] * L
    S: list[np.ndarray] = [np.empty(0)] * L  # S[l]: sum of the children's V, for units of level l < L - 1
    M: list[np.ndarray] = [np.empty(0)] * L
    V[-1] = np.broadcast_to(np.linalg.inv(Js[-1]), (len(release.units[-1]), *Js[-1].shape)).copy()
    m[-1] = np.einsum("uij,uj->ui", V[-1], hs[-1])
    for lev in range(L - 2, -1, -1):
        n, C = len(release.units[lev]), release.n_cells
        p = release.parents[lev]
        S[lev] = np.zeros((n, C, C))
        M[lev] = np.zeros((n, C))
        np.add.at(S[lev], p, V[lev + 1])
        np.add.at(M[lev], p, m[lev + 1])
        Sinv = np.linalg.inv(S[lev])
        V[lev] = np.linalg.inv(Sinv + Js[lev])
        m[lev] = np.einsum("uij,uj->ui", V[lev], np.einsum("uij,uj->ui", Sinv, M[lev]) + hs[lev])
    mean, cov = [np.empty(0)] * L, [np.empty(0)] * L
    T = release.root_totals()
    if T is None:
        mean[0], cov[0] = m[0], V[0]
    else:
        v1 = V[0].sum(axis=2)  # V 1
        d = v1.sum(axis=1)  # 1' V 1
        mean[0] = m[0] + v1 * ((T - m[0].sum(axis=1)) / d)[:, None]
        cov[0] = V[0] - v1[:, :, None] * v1[:, None, :] / d[:, None, None]
    for lev in range(1, L):
        p = release.parents[lev - 1]
        K = np.einsum("uij,ujk->uik", V[lev], np.linalg.inv(S[lev - 1])[p])  # V_c S^-1
        mean[lev] = m[lev] + np.einsum("uij,uj->ui", K, mean[lev - 1][p] - M[lev - 1][p])
        cov[lev] = V[lev] - np.einsum("uij,ukj->uik", K, V[lev]) + np.einsum("uij,ujk,ulk->uil", K, cov[lev - 1][p], K)
        cov[lev] = 0.5 * (cov[lev] + np.swapaxes(cov[lev], 1, 2))
    return GLSResult(mean=tuple(mean), cov=tuple(cov), levels=release.levels)


@owned("gls_dense")
def gls_dense(release: NoisyHierarchy) -> tuple[np.ndarray, np.ndarray]:
    r"""GLS by the normal equations with Lagrange multipliers (the reference of :func:`gls`; small trees only).

    With :math:`A` the measurement matrix over the leaf cells, :math:`W` the inverse noise
    variances and :math:`B x = T` the invariants: :math:`P = (A^\top W A)^{-1}`,
    :math:`\hat x = P A^\top W y + P B^\top (B P B^\top)^{-1}(T - B P A^\top W y)` and
    :math:`\mathrm{Cov}(\hat x) = P - P B^\top (B P B^\top)^{-1} B P`.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The leaf cell estimates ``(leaves, cells)`` and their full covariance
        ``(leaves * cells, leaves * cells)`` (C order).
    """
    n_leaf, C = len(release.units[-1]), release.n_cells
    if n_leaf * C > 4000:
        v.refuse("release", "must have at most 4000 leaf cells (dense reference)", n_leaf * C)
    nv = release.noise_variance()
    # the leaf-to-unit incidence of each level
    anc = [np.arange(n_leaf)]
    for p in reversed(release.parents):
        anc.insert(0, p[anc[0]])
    rows, ys, ws, brows, ts = [], [], [], [], []
    for lev, y in enumerate(release.values):
        n = len(release.units[lev])
        inc = np.zeros((n, n_leaf))
        inc[anc[lev], np.arange(n_leaf)] = 1.0
        for q in range(C + 1):
            sel = np.ones(C) if q == 0 else np.eye(C)[q - 1]
            block = np.kron(inc, sel[None, :])  # (units, leaves * cells)
            if release.variance[lev, q] > 0:
                rows.append(block)
                ys.append(y[:, q].astype(np.float64))
                ws.append(np.full(n, 1.0 / nv[lev, q]))
            else:
                brows.append(block)
                ts.append(y[:, q].astype(np.float64))
    A, yv, w = np.vstack(rows), np.concatenate(ys), np.concatenate(ws)
    P = np.linalg.inv((A.T * w) @ A)
    x = P @ (A.T @ (w * yv))
    cov = P
    if brows:
        B, t = np.vstack(brows), np.concatenate(ts)
        G = B @ P
        x = x + G.T @ np.linalg.solve(G @ B.T, t - B @ x)
        cov = P - G.T @ np.linalg.solve(G @ B.T, G)
    return x.reshape(n_leaf, C), cov
