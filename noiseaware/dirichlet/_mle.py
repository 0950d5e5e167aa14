r"""Dirichlet maximum likelihood by Minka's fixed point (Guo et al. 2022, §2.2, §4.1; Minka 2000).

For records :math:`x_1,\dots,x_n\sim\mathrm{Dirichlet}(\alpha)` the log-likelihood depends on the
data only through the mean-log statistic :math:`S_0=n^{-1}\sum_i\log x_i` (Guo, Barrientos & Peña (2022),
*Differentially Private Inference for Compositional Data*, eq. 1):

.. math:: \ell(\alpha) = n\Bigl[\log\Gamma(\alpha_0) - \sum_j\log\Gamma(\alpha_j)
          + \sum_j(\alpha_j - 1)\,S_{0,j}\Bigr],\qquad \alpha_0=\sum_j\alpha_j .

Setting the gradient to zero gives :math:`\psi(\alpha_j)=\psi(\alpha_0)+S_{0,j}`, which Minka's
fixed point iterates, :math:`\alpha_j^{new}=\psi^{-1}\bigl(\psi(\alpha_0^{old})+S_{0,j}\bigr)`; it
converges to the unique maximizer, which exists iff :math:`S_0` lies in the interior of
:math:`\mathrm{Range}(S_0)=\{s:\sum_j e^{s_j}\le1\}` (Guo et al. 2022, §4.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .. import _validation as v
from .._validation import owned
from ..exceptions import NoiseawareValueError

__all__ = ["DirichletMLEResult", "dirichlet_loglik", "dirichlet_mle", "dirichlet_mle_from_stats", "inverse_digamma"]


@dataclass(frozen=True)
class DirichletMLEResult:
    """Result of :func:`dirichlet_mle` / :func:`dirichlet_mle_from_stats`.

    Attributes
    ----------
    alpha : numpy.ndarray, shape (..., d)
        The maximum likelihood estimate(s).
    iterations : int
        Fixed-point iterations used (the most over a batch).
    converged : bool
        Whether every estimate met the tolerance.
    """

    alpha: np.ndarray
    iterations: int
    converged: bool

    @property
    def mean(self) -> np.ndarray:
        r"""The fitted mean composition :math:`E[x\mid\alpha]=\alpha/\alpha_0`."""
        return self.alpha / self.alpha.sum(axis=-1, keepdims=True)


def inverse_digamma(y: Any, newton_steps: int = 6) -> np.ndarray:
    r"""Solve :math:`\psi(x) = y` for :math:`x > 0` (Minka 2000, appendix C).

    Starts at :math:`e^y+1/2` for :math:`y\ge-2.22` and :math:`-1/(y-\psi(1))` below, then Newton
    steps :math:`x \leftarrow x - (\psi(x)-y)/\psi_1(x)` (5 reach full precision).

    Examples
    --------
    >>> from scipy.special import digamma
    >>> float(inverse_digamma(digamma(3.7)))
    3.7
    """
    y = np.asarray(y, dtype=np.float64)
    x = np.where(y >= -2.22, np.exp(np.minimum(y, 700.0)) + 0.5, -1.0 / (y - special.digamma(1.0)))
    for _ in range(newton_steps):
        x = x - (special.digamma(x) - y) / special.polygamma(1, x)
    return np.asarray(x)


def dirichlet_loglik(alpha: Any, mean_log: Any, n: int = 1) -> np.ndarray:
    r"""Dirichlet log-likelihood from the sufficient statistic, :math:`\ell(\alpha)` in the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> x = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
    >>> al = np.array([1.5, 2.0, 3.0])
    >>> bool(np.isclose(dirichlet_loglik(al, np.log(x).mean(0), 2), stats.dirichlet(al).logpdf(x.T).sum()))
    True
    """
    al = np.asarray(alpha, dtype=np.float64)
    s = np.asarray(mean_log, dtype=np.float64)
    ll = special.gammaln(al.sum(-1)) - special.gammaln(al).sum(-1) + ((al - 1.0) * s).sum(-1)
    return np.asarray(n * ll)


def _initial(s: np.ndarray) -> np.ndarray:
    r"""A close start: mean ``exp(s)/sum exp(s)`` and precision ``(d - 1) / (-2 log sum exp(s))``.

    From :math:`\psi(a)\approx\log a - 1/(2a)`, :math:`\log\sum_j e^{s_j}\approx-(d-1)/(2\alpha_0)`.
    """
    d = s.shape[-1]
    lse = special.logsumexp(s, axis=-1, keepdims=True)
    m = np.exp(s - lse)
    a0 = (d - 1) / (-2.0 * lse)
    return np.asarray(m * a0)


def _newton_step(alpha: np.ndarray, s: np.ndarray) -> np.ndarray:
    r"""One Newton step on :math:`\ell`, damped to stay positive.

    The Hessian :math:`-\mathrm{diag}\,\psi_1(\alpha)+\psi_1(\alpha_0)11^T` is inverted by
    Sherman-Morrison (Minka 2000, §1).
    """
    a0 = alpha.sum(-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = special.digamma(a0) - special.digamma(alpha) + s
        q = -special.polygamma(1, alpha)
        z = special.polygamma(1, a0)
        b = (g / q).sum(-1, keepdims=True) / (1.0 / z + (1.0 / q).sum(-1, keepdims=True))
        delta = -(g - b) / q
        # damped where a full step would leave the positive orthant (the log-likelihood is concave)
        room = np.where(delta < 0, alpha / np.where(delta < 0, -delta, 1.0), np.inf)
        t = np.minimum(1.0, 0.5 * room.min(axis=-1, keepdims=True))
        return np.asarray(alpha + t * delta)


@owned("dirichlet_mle_from_stats")
def dirichlet_mle_from_stats(
    mean_log: Any, n: int | None = None, *, method: str = "newton", tol: float = 1e-10, max_iter: int = 100_000
) -> DirichletMLEResult:
    r"""Dirichlet MLE from the mean-log sufficient statistic by Minka's fixed point.

    Iterates :math:`\alpha_j \leftarrow \psi^{-1}(\psi(\alpha_0) + S_{0,j})` (Guo, Barrientos & Peña (2022),
    *Differentially Private Inference for Compositional Data*, §2.2, §4.1,
    ``MLE(S_0)``) from a close start (mean :math:`e^{S_0}/\sum_j e^{S_{0,j}}`, precision
    :math:`(d-1)/(-2\log\sum_j e^{S_{0,j}})`) until the largest relative change is below ``tol``.
    The fixed point converges linearly and slowly for large :math:`\alpha_0` (4e4 iterations at
    :math:`\alpha_0=10^4`), so ``method="newton"`` (default) takes Minka's Newton step instead
    whenever it stays positive and the fixed-point step otherwise (same fixed point, quadratic
    convergence). Batched: ``mean_log`` may have shape ``(..., d)`` (used by :func:`dpboots`).

    Parameters
    ----------
    mean_log : array_like, shape (..., d)
        :math:`S_0 = n^{-1}\sum_i \log x_i`, d >= 2.
    n : int, optional
        Number of records; the maximizer does not depend on it (it is checked when given).
    method : {"newton", "fixed-point"}
        Newton-accelerated fixed point (default) or Minka's plain fixed point.
    tol : float
        Relative tolerance on :math:`\alpha`.
    max_iter : int
        Iteration cap.

    Returns
    -------
    DirichletMLEResult

    Raises
    ------
    ValueError
        If ``mean_log`` is not finite, has d < 2, or lies outside the interior of
        :math:`\mathrm{Range}(S_0)` (:math:`\sum_j e^{S_{0,j}} \ge 1`), where no MLE exists.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.special import digamma
    >>> al = np.array([2.2, 3.3, 4.4])
    >>> s = digamma(al) - digamma(al.sum())  # E log x: the MLE of this statistic is alpha itself
    >>> np.round(dirichlet_mle_from_stats(s).alpha, 8)
    array([2.2, 3.3, 4.4])
    """
    owner = "dirichlet_mle_from_stats"
    s = v.finite_array(
        "mean_log", mean_log, remedy="Pass the mean of log x over the records, finite (each x > 0)."
    )
    if s.ndim < 1 or s.shape[-1] < 2:
        raise NoiseawareValueError(f"{owner}: mean_log must have a last axis of d >= 2 parts; got shape {s.shape}.")
    if n is not None:
        v.integer("n", n, minimum=1)
    tol = v.positive("tol", tol)
    max_iter = v.integer("max_iter", max_iter, minimum=1)
    lse = special.logsumexp(s, axis=-1)
    if np.any(lse >= 0):
        bad = int(np.sum(lse >= 0))
        raise NoiseawareValueError(
            f"{owner}: mean_log must lie inside Range(S_0) = {{s : sum_j exp(s_j) < 1}} for the MLE to exist; "
            f"{bad} of {lse.size} statistic(s) have sum exp(s) = {float(np.exp(lse.max())):.6g} >= 1."
        )
    method = v.choice("method", method, ("newton", "fixed-point"))
    alpha = _initial(s).reshape(-1, s.shape[-1])
    flat_s = s.reshape(-1, s.shape[-1])
    active = np.arange(alpha.shape[0])
    # stationarity to rounding: psi(alpha_0) - psi(alpha_j) + s_j is at the noise level of s
    grad_tol = 64 * np.finfo(np.float64).eps * (1.0 + np.abs(flat_s).max(-1))
    it = 0
    for it in range(1, max_iter + 1):
        al, sa = alpha[active], flat_s[active]
        fixed = inverse_digamma(special.digamma(al.sum(-1, keepdims=True)) + sa)
        new = fixed
        if method == "newton":
            step = _newton_step(al, sa)
            new = np.where(np.all((step > 0) & np.isfinite(step), axis=-1, keepdims=True), step, fixed)
        change = np.max(np.abs(new - al) / new, axis=-1)
        alpha[active] = new
        grad = np.abs(special.digamma(new.sum(-1, keepdims=True)) - special.digamma(new) + sa).max(-1)
        active = active[(change >= tol) & (grad >= grad_tol[active])]
        if active.size == 0:
            break
    converged = active.size == 0
    out = alpha.reshape(s.shape)
    return DirichletMLEResult(alpha=np.asarray(out), iterations=it, converged=converged)


@owned("dirichlet_mle")
def dirichlet_mle(
    x: Any, *, method: str = "newton", tol: float = 1e-10, max_iter: int = 100_000, simplex_tol: float = 1e-6
) -> DirichletMLEResult:
    r"""Dirichlet MLE of records on the simplex (Minka's fixed point on :math:`S_0=n^{-1}\sum_i\log x_i`).

    Parameters
    ----------
    x : array_like, shape (n, d)
        Compositions: positive parts, rows summing to 1 within ``simplex_tol`` (then renormalized).
    method, tol, max_iter
        Passed to :func:`dirichlet_mle_from_stats`, which maximizes the likelihood given :math:`S_0`.
    simplex_tol : float
        Allowed absolute deviation of a row sum from 1.

    Returns
    -------
    DirichletMLEResult

    Raises
    ------
    ValueError
        For zero, negative or non-finite parts, rows off the simplex, d < 2 or n < 2.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=20_000)
    >>> np.round(dirichlet_mle(x).alpha, 1)
    array([2.2, 3.3, 4.4])
    """
    owner = "dirichlet_mle"
    arr = v.finite_array("x", x, remedy="Drop the non-finite rows of x before fitting.")
    if arr.ndim != 2 or arr.shape[1] < 2 or arr.shape[0] < 2:
        raise NoiseawareValueError(f"{owner}: x must be an (n, d) array with n >= 2 and d >= 2; got shape {arr.shape}.")
    if np.any(arr <= 0):
        raise NoiseawareValueError(
            f"{owner}: x must have positive parts (the Dirichlet log-likelihood is -inf at 0); got "
            f"{int(np.sum(arr <= 0))} part(s) <= 0. Censor them (privatize(..., zeros='censor')) or drop the rows."
        )
    sums = arr.sum(axis=1)
    tol_s = v.nonnegative("simplex_tol", simplex_tol)
    if np.any(np.abs(sums - 1.0) > tol_s):
        i = int(np.argmax(np.abs(sums - 1.0)))
        raise NoiseawareValueError(
            f"{owner}: rows of x must sum to 1 within simplex_tol={tol_s!r}; row {i} sums to {sums[i]!r}."
        )
    arr = arr / sums[:, None]
    return dirichlet_mle_from_stats(np.log(arr).mean(axis=0), arr.shape[0], method=method, tol=tol, max_iter=max_iter)
