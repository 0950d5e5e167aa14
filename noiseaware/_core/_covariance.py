r"""Moment-matched likelihood of noisy second-moment entries (Ferrando et al. 2026, measurements), written once.

Records :math:`x_i \sim N(0, \Sigma)` iid, :math:`S = X^\top X/n` (so :math:`nS \sim
\mathrm{Wishart}(n, \Sigma)`), and Gaussian measurements :math:`y_{jk} = S_{jk} + e_{jk}`,
:math:`e_{jk} \sim N(0, 1/\lambda_{jk})` independent of ``S`` and of each other (after the
precision-weighted combination of repeats, Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive
Covariance Estimation via Gaussian Graphical Models*, Prop. 4.2). With :math:`S` replaced by its
normal approximation with exact first two moments (Isserlis),

.. math::

    E[S_{jk}] = \Sigma_{jk}, \qquad
    \mathrm{Cov}(S_{jk}, S_{lm}) = (\Sigma_{jl}\Sigma_{km} + \Sigma_{jm}\Sigma_{kl}) / n,

    y \sim N\bigl(\Sigma_{\mathcal S},\ \mathrm{diag}(1/\lambda) + C(\Sigma)/n\bigr).

**Exact route (latent Wishart, Bartlett factor).** :math:`nS = L A A^\top L^\top` with
:math:`\Sigma = L L^\top` and ``A`` lower triangular, :math:`A_{ii}^2 \sim \chi^2(\nu - i + 1)`
(``i = 1..d``), :math:`A_{ij} \sim N(0, 1)` below the diagonal, all independent: then
:math:`nS \sim \mathrm{Wishart}(\nu, \Sigma)` exactly (Bartlett decomposition), and
:math:`y_{jk} \sim N(S_{jk} + \delta_j\delta_k, 1/\lambda_{jk})` exactly (``delta`` is 0 without
centring; with a released mean ``c`` it is :math:`\bar x - c` and :math:`\nu = n - 1`).
:func:`bartlett_entries`, :func:`gaussian_entries_logp`.

Functions take a :class:`~noiseaware._core.Backend` (NumPy, JAX, PyTensor).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._backend import Backend
from ._dirichlet import mvn_logpdf

__all__ = [
    "bartlett_dof",
    "bartlett_entries",
    "entries_moments",
    "gaussian_entries_logp",
    "noisy_covariance_entries_logp",
]


def entries_moments(bk: Backend, sigma: Any, rows: np.ndarray, cols: np.ndarray, n: float) -> tuple[Any, Any]:
    r"""Mean :math:`\Sigma_{jk}` and Isserlis covariance :math:`C/n` of the entries ``(rows, cols)`` of ``S``.

    ``rows``, ``cols`` are constant integer arrays (static shapes); ``sigma`` is ``(d, d)``.
    """
    r = np.asarray(rows, dtype=np.int64)
    c = np.asarray(cols, dtype=np.int64)
    mean = sigma[r, c]
    s_rr = sigma[r[:, None], r[None, :]]
    s_cc = sigma[c[:, None], c[None, :]]
    s_rc = sigma[r[:, None], c[None, :]]
    s_cr = sigma[c[:, None], r[None, :]]
    return mean, (s_rr * s_cc + s_rc * s_cr) / n


def noisy_covariance_entries_logp(
    bk: Backend, y: Any, sigma: Any, rows: np.ndarray, cols: np.ndarray, precision: Any, n: float
) -> Any:
    r""":math:`\log N(y;\ \Sigma_{\mathcal S},\ \mathrm{diag}(1/\lambda) + C(\Sigma)/n)` (module docstring)."""
    mean, cov = entries_moments(bk, sigma, rows, cols, n)
    m = int(np.asarray(rows).size)
    eye = bk.asarray(np.eye(m))
    return mvn_logpdf(bk, y, mean, cov + eye / precision)


def bartlett_dof(nu: int, d: int) -> np.ndarray:
    r"""Degrees of freedom :math:`\nu - i + 1`, ``i = 1..d``, of the squared Bartlett diagonal :math:`A_{ii}^2`.

    Examples
    --------
    >>> bartlett_dof(10, 3).tolist()
    [10.0, 9.0, 8.0]
    """
    return float(nu) - np.arange(d, dtype=np.float64)


def _tril_basis(d: int) -> tuple[np.ndarray, np.ndarray]:
    """One-hot ``(d, d, d)`` diagonal and ``(d(d-1)/2, d, d)`` strictly-lower bases (constants)."""
    e_diag = np.zeros((d, d, d))
    e_diag[np.arange(d), np.arange(d), np.arange(d)] = 1.0
    low = [(i, j) for i in range(d) for j in range(i)]
    e_off = np.zeros((len(low), d, d))
    for t, (i, j) in enumerate(low):
        e_off[t, i, j] = 1.0
    return e_diag, e_off


def bartlett_entries(
    bk: Backend, chol: Any, a_diag: Any, a_off: Any, rows: np.ndarray, cols: np.ndarray, n: float, d: int
) -> Any:
    r"""Entries ``(rows, cols)`` of :math:`S = L A A^\top L^\top / n` (module docstring; all unbatched).

    ``chol`` is :math:`L` ``(d, d)``; ``a_diag`` the ``d`` positive :math:`A_{ii}`; ``a_off`` the
    ``d(d-1)/2`` entries below the diagonal in row-major order ``(1,0), (2,0), (2,1), ...``.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware._core import get_backend
    >>> s = bartlett_entries(get_backend("numpy"), np.eye(2), np.array([2.0, 1.0]), np.array([1.0]),
    ...                      np.array([0, 1, 1]), np.array([0, 0, 1]), 2.0, 2)
    >>> s.tolist()   # A A^T / 2 with A = [[2, 0], [1, 1]]
    [2.0, 1.0, 1.0]
    """
    xp = bk.xp
    e_diag, e_off = _tril_basis(d)
    a = xp.tensordot(a_diag, bk.asarray(e_diag), axes=1)
    if e_off.shape[0]:
        a = a + xp.tensordot(a_off, bk.asarray(e_off), axes=1)
    m = chol @ a
    s = (m @ m.T) / n
    return s[np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)]


def gaussian_entries_logp(bk: Backend, y: Any, mean: Any, precision: Any) -> Any:
    r""":math:`\sum_e \log N(y_e;\ \mathrm{mean}_e,\ 1/\lambda_e)` (independent measurement noise).

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware._core import get_backend
    >>> round(float(gaussian_entries_logp(get_backend("numpy"), np.zeros(1), np.zeros(1), np.ones(1))), 6)
    -0.918939
    """
    xp = bk.xp
    r = y - mean
    return xp.sum(-0.5 * precision * r * r + 0.5 * xp.log(precision) - 0.5 * np.log(2.0 * np.pi))
