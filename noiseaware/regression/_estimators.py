r"""Point estimates of regression coefficients from a ``"regression"`` release: OLS, AdaSSP, PACE-GGM.

All three are post-processing of the release. In the release's scaled units (``W = (Z - s) / b`` column
by column, ``Z = [1, X, y]``, :math:`|w_j| \le 1`), with :math:`\hat S` the estimate of
:math:`W^\top W` (``x`` the design columns, ``y`` the response),

.. math:: \hat\theta = (\hat S_{xx} + \lambda D)^{-1} \hat S_{xy}, \qquad
          \hat\beta'_j = \hat\theta_j \, b_y / b_j,

the coefficients of the shifted columns :math:`Z' = Z - s` (``s`` the mid-points of the release's
ranges, ``b`` their half-widths; the intercept's :math:`b_0 = 1, s_0 = 0`), and then in the data's
units: the slopes :math:`\hat\beta_j = \hat\beta'_j` and the intercept
:math:`\hat\beta_0 = \hat\beta'_0 - m_x^\top\hat\beta_{1:} + m_y` (``m_x``, ``m_y`` the covariates' and
the response's mid-points; a release of symmetric bounds has ``s = 0``). ``D`` is the
identity except for a 0 at the intercept: its diagonal entry ``n`` is public and exact, so it needs no
regularisation, and shrinking the intercept towards 0 would bias every prediction (Wang's algorithm
has no intercept; with one, this is the usual ridge convention). ``lambda = 0`` is OLS on the noisy
sufficient statistics (SSP).

**AdaSSP's regularisation** (Wang (2018), *Revisiting differentially private linear regression:
optimal and adaptive prediction & estimation in unbounded domain*, Algorithm 2), in the version
implemented here, with ``p`` the number of design columns (intercept included), ``delta`` the
release's failure probability (``metadata.delta``, default ``1e-6``), :math:`\tilde z` the released
:math:`\lambda_{\min}(W_x^\top W_x) + N(0, \sigma_\lambda^2)` and :math:`\sigma_S` the noise sd of
the entries of :math:`\hat S`:

.. math:: \tilde\lambda_{\min} = \max\bigl(0,\ \tilde z - \sqrt{\log(6/\delta)}\,\sigma_\lambda\bigr), \qquad
          \lambda = \max\bigl(0,\ \sqrt{p \log(2p^2/\delta)}\,\sigma_S - \tilde\lambda_{\min}\bigr).

Wang states it under :math:`(\epsilon, \delta)`-DP with Gaussian noise of sd
:math:`\sigma = \sqrt{\log(6/\delta)}\,\|X\|^2/(\epsilon/3)` for :math:`X^\top X` and for the
eigenvalue, where his threshold :math:`\sqrt{d\log(6/\delta)\log(2d^2/\delta)}\,\|X\|^2/(\epsilon/3)`
is :math:`\sqrt{d \log(2d^2/\delta)}\,\sigma` and his shift of the eigenvalue
:math:`\log(6/\delta)\|X\|^2/(\epsilon/3)` is :math:`\sqrt{\log(6/\delta)}\,\sigma`. **Conversion to
rho-zCDP** used here: the noise of each part is the zCDP Gaussian mechanism's for its share of rho
(:math:`\sigma = \Delta/\sqrt{2\rho_{part}}`, ``rho / 3`` for the eigenvalue, ``2 rho / 3`` for all
entries of :math:`W^\top W` jointly), and Wang's formulas are kept *in terms of those sigmas*, with
``delta`` only the probability level of the two tail bounds (the release is pure rho-zCDP; ``delta``
is not a privacy parameter here).

**PACE-GGM regression** (Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive
Covariance Estimation via Gaussian Graphical Models*, App. G): :math:`\hat S = n\hat\Sigma` with
:math:`\hat\Sigma` the maximum-entropy reconstruction of the PACE-GGM release of ``W`` (their eq. 2,
Algorithm 4), :math:`\hat S_{00} = n` exactly with an intercept, and AdaSSP's :math:`\lambda` with the
release's eigenvalue and :math:`\sigma_S = k/\sqrt{2 \cdot 2\rho/3}`, the sd AdaSSP's SSP would have had
at the same rho (the paper does not say which sd it used; this keeps the two methods' regularisation
rules identical, so that they differ only in the estimate of the statistics).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core._covariance_release import measurements
from .._core._maxent import reconstruct_entries
from .._core._record import as_release
from .._core._regression import original_parameters
from .._core._regression_release import RegressionMetadata, RegressionStatistics, read_regression
from .._validation import current_owner, owned
from ..exceptions import NoiseawareValueError

__all__ = ["RegressionEstimateResult", "adassp", "adassp_ridge", "ols_from_statistics", "pace_ggm_regression"]


@dataclass(frozen=True)
class RegressionEstimateResult:
    r"""A point estimate of the coefficients of a linear regression from private sufficient statistics.

    Attributes
    ----------
    coef : ndarray, shape (p,)
        :math:`\hat\beta` in the data's units, one per design column (the intercept first if any).
    columns : tuple of str
        The design columns, ``"(intercept)"`` first if present.
    response : str
        The response's name.
    method : str
        ``"ols"``, ``"adassp"`` or ``"pace_ggm"``.
    ridge : float
        The :math:`\lambda` added to the diagonal of :math:`\hat S_{xx}` in scaled units (0 for OLS).
    lambda_min : float or None
        AdaSSP's private lower bound :math:`\tilde\lambda_{\min}` (scaled units); None for OLS.
    moments : ndarray, shape (k, k)
        The estimate of :math:`Z^\top Z` used, in the data's units.
    """

    coef: np.ndarray
    columns: tuple[str, ...]
    response: str
    method: str
    ridge: float
    lambda_min: float | None
    moments: np.ndarray

    @property
    def intercept(self) -> bool:
        """Whether the first coefficient is the intercept."""
        return self.columns[0] == "(intercept)"

    def predict(self, x: Any) -> np.ndarray:
        r"""Predictions :math:`\hat\beta_0 + x \hat\beta_{1:}` for rows ``x`` of the predictors (no intercept).

        Raises
        ------
        NoiseawareValueError
            ``x`` not finite or not of shape ``(m, p)`` with ``p`` the number of predictors.
        """
        arr = np.asarray(x, dtype=np.float64)
        p = len(self.columns) - self.intercept
        if arr.ndim != 2 or arr.shape[1] != p or not np.all(np.isfinite(arr)):
            raise NoiseawareValueError(
                f"RegressionEstimateResult.predict: x must be a finite (m, {p}) array of the predictors "
                f"{list(self.columns[self.intercept:])}; got shape {arr.shape}."
            )
        out = arr @ self.coef[self.intercept :]
        return out + self.coef[0] if self.intercept else out


def _solve(s: np.ndarray, ridge: float, b: np.ndarray, intercept: bool) -> np.ndarray:
    """``theta = (S_xx + ridge D)^{-1} S_xy`` in scaled units, then back to the data's units.

    ``D`` is the identity, but 0 for the intercept (its diagonal ``n`` is exact: nothing to regularise,
    and shrinking the intercept would bias every prediction towards 0).
    """
    owner = current_owner()
    pen = np.ones(s.shape[0] - 1)
    if intercept:
        pen[0] = 0.0
    sxx = s[:-1, :-1] + ridge * np.diag(pen)
    try:
        theta = np.linalg.solve(sxx, s[:-1, -1])
    except np.linalg.LinAlgError:
        raise NoiseawareValueError(
            f"{owner}: the estimate of X^T X must be invertible; got a singular matrix (ridge={ridge!r}). Use adassp, "
            "which regularises, or a larger budget."
        ) from None
    return theta * b[-1] / b[:-1]


def _data_units(
    coef: np.ndarray, moments: np.ndarray, shift: np.ndarray | None, intercept: bool
) -> tuple[np.ndarray, np.ndarray]:
    r"""Coefficients and :math:`Z^\top Z` in the data's units from those of the shifted columns :math:`Z' = Z - s`.

    :math:`\beta_0 = \beta'_0 - m_x^\top\beta_{1:} + m_y` (slopes unchanged;
    :func:`noiseaware._core._regression.original_parameters`) and, with :math:`Z = Z' B`,
    :math:`B = I + e_0 s^\top`, :math:`Z^\top Z = B^\top Z'^\top Z' B`. No shift without an intercept.
    """
    s = None if shift is None or not np.any(shift) else np.asarray(shift, dtype=np.float64)
    if s is None or not intercept:
        return coef, moments
    out, _ = original_parameters(coef, np.zeros(s.size - 2), s)
    b = np.eye(s.size)
    b[0, :] += s
    return out, b.T @ moments @ b


def _scaled(st: RegressionStatistics) -> tuple[np.ndarray, np.ndarray]:
    b = np.asarray(st.bounds, dtype=np.float64)
    return st.moments / np.outer(b, b), b


@owned("ols_from_statistics")
def ols_from_statistics(statistics: Any, *, ridge: float = 0.0) -> RegressionEstimateResult:
    r"""Least squares from (noisy) sufficient statistics: :math:`(\hat S_{xx} + \lambda D)^{-1}\hat S_{xy}`.

    Plain SSP: with a release of method ``"ssp"`` or ``"adassp"`` (or its
    :class:`RegressionStatistics`) and ``ridge=0`` this is OLS on the noisy moments, exactly OLS as
    the noise vanishes (rho to infinity).

    Parameters
    ----------
    statistics : Release or RegressionStatistics
        A ``"regression"`` release of method ``"ssp"`` or ``"adassp"``, or what
        :func:`read_regression` returns.
    ridge : float
        :math:`\lambda \ge 0`, added to the diagonal of :math:`\hat S_{xx}` in the release's scaled units
        (not to the intercept's).

    Raises
    ------
    NoiseawareValueError
        A ``"pace_ggm"`` release (use :func:`pace_ggm_regression`), a negative ridge, or a singular estimate.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, size=(2000, 2))
    >>> y = np.clip(0.2 + x @ [0.5, -0.3] + 0.1 * rng.normal(size=2000), -2, 2)
    >>> rel = na.privatize(np.column_stack([x, y]), statistic="regression", response="x2", bound=2.0,
    ...                    rho=10.0, rng=rng)
    >>> np.round(ols_from_statistics(rel).coef, 1).tolist()
    [0.2, 0.5, -0.3]
    """
    owner = "ols_from_statistics"
    st = statistics if isinstance(statistics, RegressionStatistics) else read_regression(statistics)
    lam = float(ridge)
    if not (math.isfinite(lam) and lam >= 0.0):
        raise NoiseawareValueError(f"{owner}: ridge must be a finite number >= 0; got ridge={ridge!r}.")
    if st.bounds is None:
        raise NoiseawareValueError(f"{owner}: statistics must carry the bounds of their columns; got bounds=None.")
    s, b = _scaled(st)
    coef, moments = _data_units(_solve(s, lam, b, st.intercept), st.moments, st.shift, st.intercept)
    return RegressionEstimateResult(coef, st.columns[:-1], st.response, "ols", lam, None, moments)


def adassp_ridge(
    eigen_value: float, eigen_sigma: float, stat_sigma: float, p: int, delta: float
) -> tuple[float, float]:
    r"""AdaSSP's :math:`(\lambda, \tilde\lambda_{\min})` from the released eigenvalue (module docstring formula).

    Parameters
    ----------
    eigen_value : float
        The released :math:`\lambda_{\min}(W_x^\top W_x) + N(0, \sigma_\lambda^2)`.
    eigen_sigma : float
        :math:`\sigma_\lambda`.
    stat_sigma : float
        :math:`\sigma_S`, the noise sd of the entries of the estimate of :math:`W^\top W`.
    p : int
        Number of design columns (intercept included).
    delta : float
        Failure probability of the two tail bounds, in (0, 1).

    Examples
    --------
    >>> lam, low = adassp_ridge(10.0, 1.0, 2.0, 3, 1e-6)
    >>> round(low, 6) == round(10.0 - math.sqrt(math.log(6e6)), 6)
    True
    >>> round(lam, 6) == round(2.0 * math.sqrt(3 * math.log(18e6)) - low, 6)
    True
    """
    low = max(0.0, eigen_value - math.sqrt(math.log(6.0 / delta)) * eigen_sigma)
    lam = max(0.0, math.sqrt(p * math.log(2.0 * p * p / delta)) * stat_sigma - low)
    return lam, low


def _release(release: Any, method: str) -> tuple[Any, RegressionMetadata]:
    """The release and its typed metadata, if it is a ``"regression"`` release of ``method``."""
    rel = as_release(release)
    md = RegressionMetadata.from_dict(rel.metadata) if rel.statistic == "regression" else None
    if md is None or md.method != method:
        got = rel.statistic if md is None else f"method={md.method!r}"
        raise NoiseawareValueError(
            f"{current_owner()}: release must be a 'regression' release of method={method!r}; got {got}. Release with "
            f"privatize(..., statistic='regression', method={method!r})."
        )
    return rel, md


@owned("adassp")
def adassp(release: Any) -> RegressionEstimateResult:
    r"""AdaSSP (Wang 2018, Algorithm 2) from a ``"regression"`` release of ``method="adassp"``.

    :math:`\hat\theta = (\hat S_{xx} + \lambda D)^{-1}\hat S_{xy}` (``D``: module docstring) with AdaSSP's
    :math:`\lambda` from the
    release's private minimum eigenvalue (module docstring: the exact version and its zCDP conversion).

    Raises
    ------
    NoiseawareTypeError, NoiseawareValueError
        Not a ``"regression"`` release of method ``"adassp"``.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> rng = np.random.default_rng(1)
    >>> x = rng.uniform(-1, 1, size=(5000, 3))
    >>> y = np.clip(x @ [0.5, -0.3, 0.1] + 0.1 * rng.normal(size=5000), -1, 1)
    >>> rel = na.privatize(np.column_stack([x, y]), statistic="regression", response="x3", bound=1.0,
    ...                    rho=1.0, method="adassp", rng=rng)
    >>> fit = adassp(rel)
    >>> fit.columns, np.round(fit.coef, 1).tolist()
    (('(intercept)', 'x0', 'x1', 'x2'), [0.0, 0.5, -0.3, 0.1])
    """
    rel, md = _release(release, "adassp")
    st = read_regression(rel)
    eig = rel.components[0]
    lam, low = adassp_ridge(
        float(eig.values[0]), float(eig.mechanism.sigma), float(rel.mechanism.sigma), len(st.columns) - 1,
        float(md.delta),  # type: ignore[arg-type]
    )
    s, b = _scaled(st)
    coef, moments = _data_units(_solve(s, lam, b, st.intercept), st.moments, st.shift, st.intercept)
    return RegressionEstimateResult(coef, st.columns[:-1], st.response, "adassp", lam, low, moments)


@owned("pace_ggm_regression")
def pace_ggm_regression(release: Any) -> RegressionEstimateResult:
    r"""PACE-GGM regression (Ferrando et al. 2026, App. G) from a ``"regression"`` release of ``method="pace_ggm"``.

    The sufficient statistics are ``n`` times PACE-GGM's maximum-entropy covariance of ``W`` (the
    constant column's ``(0, 0)`` set to ``n``, which is public), regularised by AdaSSP's rule
    (module docstring).

    Raises
    ------
    NoiseawareTypeError, NoiseawareValueError
        Not a ``"regression"`` release of method ``"pace_ggm"``.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> rng = np.random.default_rng(2)
    >>> x = rng.uniform(-1, 1, size=(5000, 2))
    >>> y = np.clip(x @ [0.5, -0.3] + 0.1 * rng.normal(size=5000), -1, 1)
    >>> rel = na.privatize(np.column_stack([x, y]), statistic="regression", response="x2", bound=1.0,
    ...                    rho=1.0, method="pace_ggm", intercept=False, rng=rng)
    >>> np.round(pace_ggm_regression(rel).coef, 1).tolist()
    [0.5, -0.3]
    """
    rel, md = _release(release, "pace_ggm")
    cols = md.columns
    k = len(cols)
    n = int(rel.n)
    m = measurements(rel.components[0])
    s = n * reconstruct_entries(m.d, m.pairs, m.y, m.precision)
    intercept = md.intercept
    if intercept:
        s[0, 0] = float(n)
    stat_sigma = k / math.sqrt(2.0 * float(rel.components[0].metadata["rho"]))
    lam, low = adassp_ridge(float(rel.values[0]), float(rel.mechanism.sigma), stat_sigma, k - 1,
                            float(md.delta))  # type: ignore[arg-type]
    b = np.asarray(md.bounds, dtype=np.float64)
    shift = np.asarray(md.shift if md.shift is not None else [0.0] * k, dtype=np.float64)
    coef, moments = _data_units(_solve(s, lam, b, intercept), s * np.outer(b, b), shift, intercept)
    return RegressionEstimateResult(coef, cols[:-1], md.response, "pace_ggm", lam, low, moments)
