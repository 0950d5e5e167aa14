"""Nearest correlation matrix: Higham (2002) alternating projections with Dykstra's correction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import owned
from ..exceptions import NoiseawareValueError

__all__ = ["NearestCorrelationResult", "nearest_correlation"]


@dataclass(frozen=True)
class NearestCorrelationResult:
    """Output of :func:`nearest_correlation`.

    Attributes
    ----------
    matrix : ndarray
        The nearest correlation matrix (symmetric, PSD, unit diagonal).
    iterations : int
        Alternating-projection iterations used.
    converged : bool
        Whether the change between iterates fell below ``tol``.
    """

    matrix: np.ndarray
    iterations: int
    converged: bool


def _project_psd(a: np.ndarray) -> np.ndarray:
    w, q = np.linalg.eigh((a + a.T) / 2.0)
    return (q * np.maximum(w, 0.0)) @ q.T


@owned("nearest_correlation")
def nearest_correlation(a: Any, *, tol: float = 1e-12, max_iter: int = 10_000) -> NearestCorrelationResult:
    r"""Nearest correlation matrix in the Frobenius norm (Higham 2002, Algorithm 3.3).

    Solves :math:`\min_X \|A - X\|_F` over symmetric PSD ``X`` with unit diagonal by alternating
    projections onto the PSD cone ``S`` and the unit-diagonal set ``U``, with Dykstra's
    correction on the (non-affine) PSD step::

        dS = 0; Y = A
        repeat: R = Y - dS; X = P_S(R); dS = X - R; Y = P_U(X)

    until ``||Y - X||_F <= tol * ||Y||_F``, then returns ``P_U(P_S(Y))`` symmetrised. Used by
    MLE-NN (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
    Correlations*, §4.1, Algorithm S.3).

    Parameters
    ----------
    a : array_like, shape (p, p)
        Symmetric matrix with finite entries.
    tol : float
        Relative stopping tolerance.
    max_iter : int
        Iteration cap.

    Returns
    -------
    NearestCorrelationResult

    Examples
    --------
    >>> a = np.array([[2., -1, 0, 0], [-1, 2, -1, 0], [0, -1, 2, -1], [0, 0, -1, 2]])
    >>> np.round(nearest_correlation(a).matrix[0], 4)
    array([ 1.    , -0.8084,  0.1916,  0.1068])
    """
    owner = "nearest_correlation"
    x = v.finite_array("a", a, remedy="Pass a finite symmetric matrix (check the estimate it came from).")
    if x.ndim != 2 or x.shape[0] != x.shape[1]:
        raise NoiseawareValueError(f"{owner}: a must be a square matrix; got shape {x.shape}.")
    if not np.allclose(x, x.T, rtol=0, atol=1e-12 * max(1.0, float(np.abs(x).max()))):
        raise NoiseawareValueError(f"{owner}: a must be symmetric.")
    tol = v.positive("tol", tol)
    max_iter = v.integer("max_iter", max_iter, minimum=1)
    y = (x + x.T) / 2.0
    ds = np.zeros_like(y)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        r = y - ds
        xs = _project_psd(r)
        ds = xs - r
        y_new = xs.copy()
        np.fill_diagonal(y_new, 1.0)
        delta = float(np.linalg.norm(y_new - xs) + np.linalg.norm(y_new - y))
        y = y_new
        if delta <= tol * max(1.0, float(np.linalg.norm(y))):
            converged = True
            break
    # final clean-up: exactly unit diagonal and PSD up to rounding
    w, q = np.linalg.eigh(y)
    if w.min() < 0:
        y = (q * np.maximum(w, 0.0)) @ q.T
        d = 1.0 / np.sqrt(np.diag(y))
        y = y * d[:, None] * d[None, :]
    y = (y + y.T) / 2.0
    np.fill_diagonal(y, 1.0)
    return NearestCorrelationResult(y, it, converged)
