r"""Noisy sufficient statistics of a linear regression given its parameters, written once.

A regression release carries the noisy entries of :math:`M = Z^\top Z = \sum_{i=1}^n z_i z_i^\top`,
with :math:`z_i = (u_i, y_i)`, :math:`u_i = (1, x_i)` when the release has an intercept column
(a public constant column, so :math:`M_{00} = n` is exact) and :math:`u_i = x_i` otherwise.

**Model of the true statistics** (Bernstein & Sheldon (2019), *Differentially Private Bayesian
Linear Regression*, NeurIPS, §3: a normal approximation of the sufficient statistics' sampling
distribution). Covariates :math:`x_i \sim N(\mu_x, \Sigma_x)` iid and
:math:`y_i \mid x_i \sim N(u_i^\top\beta, \sigma^2)`, so :math:`z_i \sim N(m, C)` (a degenerate
normal when the constant column is present) with

.. math::

    m = A m_u,\quad C = A C_u A^\top + \sigma^2 e_y e_y^\top,\quad
    A = \begin{pmatrix} I_p \\ \beta^\top \end{pmatrix},

:math:`m_u, C_u` the mean and covariance of :math:`u_i`. Each released entry
:math:`t_{ab} = z_a z_b` of one row has the exact first two moments of a product of jointly normal
variables (Isserlis' theorem with a mean):

.. math::

    E[z_a z_b] = C_{ab} + m_a m_b,

    \mathrm{Cov}(z_a z_b, z_c z_d) = C_{ac}C_{bd} + C_{ad}C_{bc} + m_a m_c C_{bd} + m_a m_d C_{bc}
    + m_b m_c C_{ad} + m_b m_d C_{ac},

and the sum over ``n`` iid rows is replaced by the normal law with ``n`` times these moments
(central limit theorem). The constant entry :math:`M_{00} = n` is excluded (public and exact).

**Noise, exactly.** Each released entry ``e`` (``i >= j``) is :math:`M_e + \eta_e` with
independent noise of the release's family and per-entry scale ``s_e``.

* Gaussian noise: the noisy statistics are then exactly normal under the model,
  :math:`\tilde M \sim N(n\,\mu_t,\ n\,\Sigma_t + \mathrm{diag}(s^2))`
  (:func:`gaussian_statistics_logp`): no latent variable is needed.
* Laplace noise: the convolution of the normal with the Laplace noise has no closed form, so the
  true statistics are kept latent, non-centred, :math:`M = n\mu_t + \mathrm{chol}(n\Sigma_t)\,w`,
  :math:`w \sim N(0, I)`, and :math:`\log p(\tilde M \mid M) = \sum_e -\log(2 s_e) -
  |\tilde M_e - M_e|/s_e` (:func:`laplace_statistics_logp`); NUTS samples ``w`` with the parameters.

*Why the normal approximation and not a Wishart.* With an intercept (or a non-zero covariate mean)
:math:`Z^\top Z` is a non-central Wishart matrix whose density has no closed form usable in NUTS
(a hypergeometric function of matrix argument), and a latent Bartlett factor would add
``k(k+1)/2`` latent variables under Gaussian noise too, where the normal route needs none. The
normal law matches the first two moments exactly; its error is in the skewness of
:math:`z_a z_b`, which the sum over ``n`` rows shrinks as :math:`n^{-1/2}`; the tests compare the
posterior it gives with an exact Monte Carlo reference at ``n = 50``. The model ignores the
clipping of rows to the release's bound: choose the bound so that little is clipped.

Functions take a :class:`~noiseaware._core.Backend` (NumPy, JAX, PyTensor) and are unbatched. The
model's parameters travel as one :class:`RegressionParameters` record and the release's static layout
(``n`` and the released entries) as one :class:`StatisticsLayout`, so that a call reads
``gaussian_statistics_logp(bk, value, params, layout, noise_sd)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._validation import current_owner
from ._backend import Backend
from ._dirichlet import _cholesky, mvn_logpdf
from ._noise import laplace_logpdf

__all__ = [
    "FAMILIES",
    "RegressionParameters",
    "StatisticsLayout",
    "centred_parameters",
    "design_embedding",
    "gaussian_statistics_logp",
    "laplace_statistics_logp",
    "latent_statistics",
    "original_parameters",
    "released_entries",
    "row_moments",
    "statistics_moments",
    "shift_param",
    "statistics_params",
    "sum_moments",
]

#: Noise families of a regression release's entries that the likelihood models exactly.
FAMILIES = ("gaussian", "laplace")


def released_entries(k: int, intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns (``i >= j``, row-major) of the modelled entries of a ``k x k`` moment matrix.

    Every entry of the lower triangle but the public constant :math:`M_{00} = n` when the release
    has an intercept column.

    Examples
    --------
    >>> [a.tolist() for a in released_entries(3, True)]
    [[1, 1, 2, 2, 2], [0, 1, 0, 1, 2]]
    """
    pairs = [(i, j) for i in range(k) for j in range(i + 1) if not (intercept and i == 0 and j == 0)]
    return np.array([a for a, _ in pairs], dtype=np.int64), np.array([b for _, b in pairs], dtype=np.int64)


class RegressionParameters(NamedTuple):
    r"""The model's parameters :math:`(\beta, \sigma, \mu_x, \Sigma_x)` (module docstring), one unbatched draw.

    A ``NamedTuple``: a JAX pytree (it passes through ``jit`` and ``vmap`` as its four arrays) and a
    plain tuple of PyTensor variables or NumPy arrays.

    Attributes
    ----------
    beta : array, shape (p,)
        Coefficients of :math:`u` (the intercept first when the layout has one).
    sigma : scalar
        Residual standard deviation.
    mu_x : array, shape (d_x,)
        Mean of the covariates.
    cov_x : array, shape (d_x, d_x)
        Covariance of the covariates.
    """

    beta: Any
    sigma: Any
    mu_x: Any
    cov_x: Any


@dataclass(frozen=True, eq=False)
class StatisticsLayout:
    """The static layout of a regression release's modelled entries: fixed per release, never traced.

    Attributes
    ----------
    n : float
        Number of records (public): the true statistics are sums over ``n`` rows.
    rows, cols : numpy.ndarray of int
        The modelled entries ``(rows[e], cols[e])`` of the ``k x k`` moment matrix
        (:func:`released_entries`; they always hold the response's row ``k - 1``).
    intercept : bool
        Whether the first column of :math:`Z` is the constant 1.

    Examples
    --------
    >>> layout = StatisticsLayout.of(10.0, 3, True)
    >>> layout.rows.tolist(), layout.cols.tolist(), layout.d_x
    ([1, 1, 2, 2, 2], [0, 1, 0, 1, 2], 1)
    """

    n: float
    rows: np.ndarray
    cols: np.ndarray
    intercept: bool

    @classmethod
    def of(cls, n: float, k: int, intercept: bool) -> StatisticsLayout:
        """The layout of every modelled entry of a ``k x k`` moment matrix (:func:`released_entries`)."""
        rows, cols = released_entries(k, intercept)
        return cls(n, rows, cols, intercept)

    @property
    def d_x(self) -> int:
        """The number of covariates, ``k - 1 - intercept``."""
        return int(np.max(self.rows)) - int(self.intercept)  # rows always hold the response's row k - 1


def design_embedding(d_x: int, intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    r"""Constants ``(E, c)`` with :math:`m_u = c + E\mu_x` and :math:`C_u = E\Sigma_x E^\top`.

    ``E`` is ``(p, d_x)`` (``p = d_x + 1`` with an intercept), ``c`` the constant column's indicator.
    """
    p = d_x + int(intercept)
    emb = np.zeros((p, d_x))
    emb[int(intercept) + np.arange(d_x), np.arange(d_x)] = 1.0
    const = np.zeros(p)
    if intercept:
        const[0] = 1.0
    return emb, const


def row_moments(bk: Backend, params: RegressionParameters, intercept: bool, d_x: int) -> tuple[Any, Any]:
    r"""Mean ``m`` ``(k,)`` and covariance ``C`` ``(k, k)`` of one row :math:`z = (u, y)` (module docstring).

    ``d_x`` is the number of covariates (static), ``k = d_x + intercept + 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware._core import get_backend
    >>> params = RegressionParameters(np.array([0.5, 2.0]), 1.0, np.array([1.0]), np.array([[4.0]]))
    >>> m, c = row_moments(get_backend("numpy"), params, True, 1)
    >>> m.tolist(), c.tolist()
    ([1.0, 1.0, 2.5], [[0.0, 0.0, 0.0], [0.0, 4.0, 8.0], [0.0, 8.0, 17.0]])
    """
    beta, sigma, mu_x, cov_x = params
    emb, const = design_embedding(d_x, intercept)
    p = emb.shape[0]
    e_emb = bk.asarray(emb)
    m_u = bk.asarray(const) + e_emb @ mu_x
    c_u = e_emb @ cov_x @ e_emb.T
    f = np.zeros((p + 1, p))
    f[np.arange(p), np.arange(p)] = 1.0
    g = np.zeros(p + 1)
    g[p] = 1.0
    a = bk.asarray(f) + bk.asarray(g)[:, None] * beta[None, :]
    m = a @ m_u
    c = a @ c_u @ a.T + (sigma * sigma) * bk.asarray(np.outer(g, g))
    return m, c


def statistics_moments(bk: Backend, m: Any, c: Any, rows: np.ndarray, cols: np.ndarray) -> tuple[Any, Any]:
    r"""Mean and covariance of one row's products :math:`z_a z_b` at the entries ``(rows, cols)``.

    Isserlis' theorem for a normal vector with mean ``m`` and covariance ``c`` (module docstring).
    """
    k = int(max(np.max(rows), np.max(cols))) + 1  # c is (k, k): the last row (the response's) is always released
    sel_a = bk.asarray(np.eye(k)[np.asarray(rows, dtype=np.int64)])  # one-hot rows: gathers as matrix products,
    sel_b = bk.asarray(np.eye(k)[np.asarray(cols, dtype=np.int64)])  # whose gradients are products too (fast)
    ma, mb = sel_a @ m, sel_b @ m
    c_a, c_b = c @ sel_a.T, c @ sel_b.T  # (k, e): columns a_e, b_e of c
    c_ac, c_bd = sel_a @ c_a, sel_b @ c_b  # (e, e): c[a_e, a_f], c[b_e, b_f]
    c_ad, c_bc = sel_a @ c_b, sel_b @ c_a  # c[a_e, b_f], c[b_e, a_f]
    mean = bk.xp.sum(sel_a * c_b.T, axis=-1) + ma * mb  # c[a_e, b_e] + m_a m_b
    ma_r, mb_r = ma[:, None], mb[:, None]
    ma_c, mb_c = ma[None, :], mb[None, :]
    cov = (
        c_ac * c_bd
        + c_ad * c_bc
        + ma_r * ma_c * c_bd
        + ma_r * mb_c * c_bc
        + mb_r * ma_c * c_ad
        + mb_r * mb_c * c_ac
    )
    return mean, cov


def sum_moments(bk: Backend, params: RegressionParameters, layout: StatisticsLayout) -> tuple[Any, Any]:
    r"""Mean and covariance of the true statistics :math:`\sum_i z_{ia} z_{ib}` at the layout's entries.

    ``layout.n`` times :func:`statistics_moments` of one row (:func:`row_moments`).
    """
    m, c = row_moments(bk, params, layout.intercept, layout.d_x)
    mean, cov = statistics_moments(bk, m, c, layout.rows, layout.cols)
    return layout.n * mean, layout.n * cov


def gaussian_statistics_logp(
    bk: Backend, value: Any, params: RegressionParameters, layout: StatisticsLayout, noise_sd: Any
) -> Any:
    r""":math:`\log N(\tilde M;\ n\mu_t,\ n\Sigma_t + \mathrm{diag}(s^2))` at the released entries (Gaussian noise).

    ``noise_sd`` holds :math:`s`, one noise sd per entry of the layout.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware._core import get_backend
    >>> params = RegressionParameters(np.array([0.5]), 1.0, np.zeros(1), np.eye(1))
    >>> lp = gaussian_statistics_logp(get_backend("numpy"), np.array([10.0, 5.0, 12.0]), params,
    ...                               StatisticsLayout.of(10.0, 2, False), np.ones(3))
    >>> round(float(lp), 4)
    -7.0388
    """
    mean, cov = sum_moments(bk, params, layout)
    noise = bk.xp.zeros_like(mean) + noise_sd * noise_sd
    eye = bk.asarray(np.eye(np.asarray(layout.rows).size))
    return mvn_logpdf(bk, value, mean, cov + eye * noise)


def latent_statistics(bk: Backend, w: Any, params: RegressionParameters, layout: StatisticsLayout) -> Any:
    r"""True statistics :math:`M = n\mu_t + \mathrm{chol}(n\Sigma_t)\, w` from standard normal ``w`` (non-centred)."""
    mean, cov = sum_moments(bk, params, layout)
    return mean + _cholesky(bk, cov) @ w


def laplace_statistics_logp(bk: Backend, value: Any, statistics: Any, scale: Any) -> Any:
    r""":math:`\sum_e -\log(2 b_e) - |\tilde M_e - M_e| / b_e`: the Laplace noise given the true statistics.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware._core import get_backend
    >>> round(float(laplace_statistics_logp(get_backend("numpy"), np.zeros(2), np.ones(2), np.ones(2))), 6)
    -3.386294
    """
    return bk.xp.sum(laplace_logpdf(bk, value, statistics, scale))


def statistics_params(
    n: Any, scale: Any, intercept: Any, family: Any
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, bool, str]:
    r"""Check the data of the law: ``(n, rows, cols, noise, intercept, family)``.

    ``scale`` is the ``(k, k)`` symmetric per-entry noise scale of a regression release (0 marks an
    exact entry); ``noise`` is its value at :func:`released_entries`. ``k >= 2``; with an intercept
    the entry ``(0, 0)`` must be exact (it is ``n``); with Laplace noise every modelled entry must be
    noisy (an exact entry has no Laplace density).

    Examples
    --------
    >>> import numpy as np
    >>> n, rows, cols, noise, _, _ = statistics_params(100, np.array([[0.0, 1.0], [1.0, 2.0]]), True, "gaussian")
    >>> n, rows.tolist(), cols.tolist(), noise.tolist()
    (100, [1, 1], [0, 1], [1.0, 2.0])
    """
    from .. import _validation as v
    from ..exceptions import NoiseawareTypeError, NoiseawareValueError

    owner = current_owner()
    nn = v.integer("n", n, minimum=1)
    fam = v.choice("family", family, FAMILIES)
    if not isinstance(intercept, bool | np.bool_):
        raise NoiseawareTypeError(f"{owner}: intercept must be True or False; got intercept={intercept!r}.")
    s = v.finite_array("scale", scale, remedy="Pass the release's RegressionStatistics.scale.")
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] < 2 or not np.array_equal(s, s.T) or np.any(s < 0):
        raise NoiseawareValueError(
            f"{owner}: scale must be a symmetric (k, k) matrix, k >= 2, of noise scales >= 0 (0: an exact entry); "
            f"got shape {s.shape}. Pass the release's RegressionStatistics.scale."
        )
    if intercept and s[0, 0] != 0.0:
        raise NoiseawareValueError(
            f"{owner}: scale[0, 0] must be 0 with an intercept (the entry is n, public and exact); got {s[0, 0]!r}."
        )
    rows, cols = released_entries(s.shape[0], bool(intercept))
    noise = s[rows, cols].copy()
    if fam == "laplace" and np.any(noise <= 0):
        raise NoiseawareValueError(
            f"{owner}: every modelled entry must have a Laplace scale > 0; got {int(np.sum(noise <= 0))} exact "
            "entr(ies) besides n."
        )
    return nn, rows, cols, noise, bool(intercept), fam


def shift_param(shift: Any, k: int, intercept: bool) -> np.ndarray | None:
    r"""Check the public shift of a release's columns: ``None`` (no shift) or a ``(k,)`` float64 array.

    A regression release of ranges ``(lower, upper)`` holds the statistics of the shifted rows
    :math:`z' = z - s`, ``s`` the ranges' mid-points (0 for the intercept column); a shift needs the
    intercept column (through it the shift is undone). All zeros is returned as ``None``.

    Examples
    --------
    >>> shift_param([0.0, 54.0, 1.5], 3, True).tolist()
    [0.0, 54.0, 1.5]
    >>> shift_param(None, 3, True) is None
    True
    """
    from .. import _validation as v
    from ..exceptions import NoiseawareValueError

    owner = current_owner()
    if shift is None:
        return None
    s = v.finite_array("shift", shift, remedy="Pass the release's RegressionStatistics.shift.")
    if s.shape != (k,) or (intercept and s[0] != 0.0) or (not intercept and np.any(s != 0.0)):
        raise NoiseawareValueError(
            f"{owner}: shift must be ({k},), the public mid-points of the columns' ranges with 0 for the intercept "
            f"(and all 0 without one); got shift={s.tolist()!r}. Pass the release's RegressionStatistics.shift."
        )
    return None if not np.any(s) else s


def centred_parameters(bk: Backend, beta: Any, mu_x: Any, shift: np.ndarray | None) -> tuple[Any, Any]:
    r"""The parameters of the shifted rows :math:`z' = z - s` from those of the data's rows.

    With the shift :math:`s = (0, m_x, m_y)` (intercept, covariates, response), the rows
    :math:`x' = x - m_x`, :math:`y' = y - m_y` follow the model of the module docstring with

    .. math::

        \beta'_0 = \beta_0 + m_x^\top\beta_{1:} - m_y,\qquad \beta'_{1:} = \beta_{1:},\qquad
        \mu'_x = \mu_x - m_x,

    and the same :math:`\Sigma_x, \sigma` (:math:`y - m_y = \beta_0 + (x' + m_x)^\top\beta_{1:} + \varepsilon
    - m_y`). ``shift=None`` is no shift. Leading batch dimensions of ``beta``, ``mu_x`` broadcast.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware._core import get_backend
    >>> b, m = centred_parameters(get_backend("numpy"), np.array([1.0, 2.0]), np.array([50.0]),
    ...                           np.array([0.0, 54.0, 100.0]))
    >>> b.tolist(), m.tolist()
    ([9.0, 2.0], [-4.0])
    """
    if shift is None:
        return beta, mu_x
    m_x, m_y = np.asarray(shift[1:-1]), float(shift[-1])
    e0 = np.zeros(m_x.size + 1)
    e0[0] = 1.0
    move = bk.xp.sum(beta[..., 1:] * bk.asarray(m_x), axis=-1) - m_y
    return beta + move[..., None] * bk.asarray(e0), mu_x - bk.asarray(m_x)


def original_parameters(beta: Any, mu_x: Any, shift: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    r"""The inverse of :func:`centred_parameters` (NumPy, any leading dimensions): the data's units.

    .. math:: \beta_0 = \beta'_0 - m_x^\top\beta'_{1:} + m_y,\qquad \beta_{1:} = \beta'_{1:},\qquad
              \mu_x = \mu'_x + m_x.

    Examples
    --------
    >>> import numpy as np
    >>> b, m = original_parameters(np.array([9.0, 2.0]), np.array([-4.0]), np.array([0.0, 54.0, 100.0]))
    >>> b.tolist(), m.tolist()
    ([1.0, 2.0], [50.0])
    """
    b, m = np.asarray(beta, dtype=np.float64), np.asarray(mu_x, dtype=np.float64)
    if shift is None:
        return b, m
    m_x, m_y = np.asarray(shift[1:-1], dtype=np.float64), float(shift[-1])
    b = b.copy()
    b[..., 0] = b[..., 0] - b[..., 1:] @ m_x + m_y
    return b, m + m_x
