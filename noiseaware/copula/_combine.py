r"""Combining rules for ``M`` synthetic data sets (Raghunathan, Reiter & Rubin 2003; Reiter 2003)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import current_owner, owned
from ..exceptions import NoiseawareValueError

__all__ = ["SyntheticInferenceResult", "SyntheticVectorInferenceResult", "WaldTestResult", "combine_synthetic"]

# ----------------------------------------------------------------------------- combining rules
@dataclass(frozen=True)
class SyntheticInferenceResult:
    r"""A scalar estimate combined over ``M`` synthetic data sets (:func:`combine_synthetic`).

    Attributes
    ----------
    estimate : float
        :math:`\bar q_M`.
    variance : float
        The total variance (``T_f``, adjusted to be positive, or ``T_p``).
    df : float
        Degrees of freedom of the t reference distribution.
    between, within : float
        :math:`b_M` and :math:`\bar u_M`.
    rule : str
    """

    estimate: float
    variance: float
    df: float
    between: float
    within: float
    rule: str

    @owned("SyntheticInferenceResult.interval")
    def interval(self, level: float = 0.95) -> tuple[float, float]:
        r"""The t interval :math:`\bar q_M \pm t_{df,(1+level)/2}\sqrt{T}`."""
        from scipy import stats

        level = v.open_unit("level", level)
        half = float(stats.t.ppf((1 + level) / 2, self.df)) * math.sqrt(self.variance)
        return self.estimate - half, self.estimate + half


@dataclass(frozen=True)
class WaldTestResult:
    r"""A Wald test of :math:`Q = Q_0` over ``M`` synthetic data sets (``SyntheticVectorInferenceResult.wald_test``).

    Attributes
    ----------
    statistic : float
        The F statistic :math:`S` (already divided by the number of components ``k``).
    df_num, df_den : float
        Degrees of freedom of the :math:`F_{k, w}` reference distribution.
    p_value : float
        :math:`P(F_{k,w} > S)`.
    ratio : float
        :math:`r`, the between-to-within ratio of the test (``r_f`` or ``r_p``).
    """

    statistic: float
    df_num: float
    df_den: float
    p_value: float
    ratio: float


@dataclass(frozen=True)
class SyntheticVectorInferenceResult:
    r"""A vector estimate combined over ``M`` synthetic data sets (:func:`combine_synthetic` with ``(M, p)`` input).

    Attributes
    ----------
    estimate : ndarray, shape (p,)
        :math:`\bar q_M`.
    covariance : ndarray, shape (p, p)
        The total covariance of the rule: :math:`T_f = (1 + 1/M) B_M - \bar U_M` (fully) or
        :math:`T_p = B_M/M + \bar U_M` (partially). For the fully synthetic rule it need not be positive
        definite when ``M`` is small; :attr:`variances` and :meth:`wald_test` do not use its inverse.
    variances : ndarray, shape (p,)
        Each component's variance by the scalar rule (the diagonal of :attr:`covariance`, with the
        adjustment :math:`T_f^* = (n_{syn}/n)\bar u_M` where that diagonal entry is not positive).
    df : ndarray, shape (p,)
        Each component's t degrees of freedom by the scalar rule.
    between, within : ndarray, shape (p, p)
        :math:`B_M` and :math:`\bar U_M` (diagonal when only variances were given).
    rule : str
    within_is_diagonal : bool
        True when the analyses gave variances only, shape ``(M, p)``: then no joint test is possible.
    n_ratio : float
        :math:`n_{syn}/n` (1 when not given).
    m : int
        The number of synthetic data sets ``M``.
    """

    estimate: np.ndarray
    covariance: np.ndarray
    variances: np.ndarray
    df: np.ndarray
    between: np.ndarray
    within: np.ndarray
    rule: str
    within_is_diagonal: bool
    n_ratio: float
    m: int

    @owned("SyntheticVectorInferenceResult.component")
    def component(self, j: int) -> SyntheticInferenceResult:
        """Component ``j`` as a scalar :class:`SyntheticInferenceResult` (the scalar rule on that component)."""
        p = self.estimate.shape[0]
        j = v.integer("j", j, minimum=-p, maximum=p - 1)
        return SyntheticInferenceResult(
            float(self.estimate[j]),
            float(self.variances[j]),
            float(self.df[j]),
            float(self.between[j, j]),
            float(self.within[j, j]),
            self.rule,
        )

    @owned("SyntheticVectorInferenceResult.interval")
    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        r"""Per-component t intervals :math:`\bar q_{M,j} \pm t_{df_j,(1+level)/2}\sqrt{T_{jj}}` (lower, upper)."""
        from scipy import stats

        level = v.open_unit("level", level)
        half = stats.t.ppf((1 + level) / 2, self.df) * np.sqrt(self.variances)
        return self.estimate - half, self.estimate + half

    @owned("SyntheticVectorInferenceResult.wald_test")
    def wald_test(self, null: Any = 0.0) -> WaldTestResult:
        r"""Test :math:`Q = Q_0` jointly over the ``k = p`` components (Reiter 2005).

        With :math:`d = \bar q_M - Q_0`, :math:`t = k(M-1)` and the between and within covariances
        taken as proportional (as Li, Raghunathan & Rubin 1991 do for multiple imputation):

        * fully synthetic: :math:`r_f = (1 + 1/M)\,\mathrm{tr}(B_M \bar U_M^{-1})/k`,
          :math:`S_f = d^\top \bar U_M^{-1} d / (k (r_f - 1))`, reference :math:`F_{k, w_f}` with
          :math:`w_f = 4 + (t - 4)(1 - (1 - 2/t)/r_f)^2` (for :math:`t > 4`; else
          :math:`t(1 + 1/k)(1 - 1/r_f)^2/2`). If :math:`r_f \le 1` the proportional total is not positive
          and, as in the scalar rule, :math:`(n_{syn}/n)\bar U_M` is used with :math:`w = t`;
        * partially synthetic: :math:`r_p = \mathrm{tr}(B_M \bar U_M^{-1})/(kM)`,
          :math:`S_p = d^\top \bar U_M^{-1} d / (k (1 + r_p))`, :math:`w_p = 4 + (t - 4)(1 + (1 - 2/t)/r_p)^2`
          (for :math:`t > 4`; else :math:`t(1 + 1/k)(1 + 1/r_p)^2/2`).

        For ``k = 1`` these reduce to the square of the scalar t statistic with the scalar rule's degrees
        of freedom (up to the :math:`1 - 2/t` factor).

        Parameters
        ----------
        null : float or array_like, shape (p,)
            :math:`Q_0` (default 0).

        Raises
        ------
        ValueError
            If the analyses gave variances only (a joint test needs each analysis's covariance matrix,
            shape ``(M, p, p)``), ``null`` has the wrong shape or is not finite, or the statistic is not
            finite in float64 (a nearly singular within covariance).
        """
        from scipy import stats

        owner = "SyntheticVectorInferenceResult.wald_test"
        k = self.estimate.shape[0]
        if self.within_is_diagonal and k > 1:
            raise NoiseawareValueError(
                f"{owner}: a joint test needs each analysis's covariance matrix; got variances only "
                f"(shape (M, {k})). Pass variances of shape (M, {k}, {k}), or test components one at a "
                "time with component(j)."
            )
        q0 = v.finite_array("null", null, remedy="Give the hypothesised value Q_0 as finite numbers.")
        if q0.ndim == 0:
            q0 = np.full(k, float(q0))
        if q0.shape != (k,):
            v.refuse("null", f"must be a number or have shape ({k},)", q0.shape)
        d = self.estimate - q0
        u = self.within
        try:
            u_inv_d = np.linalg.solve(u, d)
            trace = float(np.trace(np.linalg.solve(u, self.between)))
        except np.linalg.LinAlgError:
            raise NoiseawareValueError(
                f"{owner}: the mean within covariance must be invertible; got a singular matrix "
                "(a component with zero variance in every analysis?)."
            ) from None
        quad = float(d @ u_inv_d)
        M = self.m
        t = k * (M - 1)
        if self.rule == "partially":
            r = trace / (k * M)
            stat = quad / (k * (1 + r))
            # products, not ** (a float power that overflows raises); r = 0 when the estimates agree exactly
            g = 1 + 1 / r if r > 0 else math.inf
            h = 1 + (1 - 2 / t) / r if r > 0 else math.inf
            w = 4 + (t - 4) * h * h if t > 4 else t * (1 + 1 / k) * g * g / 2
            if not math.isfinite(w):
                w = 1e10
        else:
            r = (1 + 1 / M) * trace / k
            if r > 1:
                stat = quad / (k * (r - 1))
                if t > 4:
                    w = 4 + (t - 4) * (1 - (1 - 2 / t) / r) ** 2
                else:
                    w = t * (1 + 1 / k) * (1 - 1 / r) ** 2 / 2
                w = max(w, 1e-8)
            else:
                stat = quad / (k * self.n_ratio)
                w = float(t)
        if not math.isfinite(stat):
            raise NoiseawareValueError(
                f"{owner}: the Wald statistic must be finite in float64; got {stat!r} (the mean within covariance "
                "is nearly singular, or the estimates are too large for float64). Test the components one at a "
                "time with component(j), or rescale the estimand."
            )
        p_value = float(stats.f.sf(stat, k, w))
        return WaldTestResult(float(stat), float(k), float(w), p_value, float(r))


def _scalar_rule(
    q: np.ndarray, u: np.ndarray, rule: str, ratio: float
) -> SyntheticInferenceResult:
    """The scalar rules on one component: ``q``, ``u`` of shape (M,)."""
    M = q.size
    with np.errstate(over="ignore", invalid="ignore"):
        qbar, b, ubar = float(q.mean()), float(q.var(ddof=1)), float(u.mean())
    if rule == "partially":
        T = b / M + ubar
        g = 1 + ubar * M / b if b > 0 else math.inf
        df = (M - 1) * g * g  # a product, not ** (a float power that overflows raises); inf when b is tiny
        return SyntheticInferenceResult(qbar, T, min(df, 1e10), b, ubar, rule)
    T = (1 + 1 / M) * b - ubar
    if T > 0:
        df = (M - 1) * (1 - M * ubar / ((M + 1) * b)) ** 2
        return SyntheticInferenceResult(qbar, T, max(df, 1e-8), b, ubar, rule)
    return SyntheticInferenceResult(qbar, ratio * ubar, float(M - 1), b, ubar, rule)


#: Relative tolerance of the positive semi-definiteness check: an eigenvalue of a covariance matrix
#: scaled to largest entry 1 may fall this far below 0 by float rounding (a singular matrix).
_PSD_RTOL = 1e-10


def _check_psd(u: np.ndarray) -> None:
    """Refuse a covariance matrix ``u[l]`` with an eigenvalue below 0 (beyond float rounding)."""
    owner = current_owner()
    scale = np.max(np.abs(u), axis=(1, 2))
    scaled = u / np.where(scale > 0, scale, 1.0)[:, None, None]  # no overflow in the eigen solver
    eig = np.linalg.eigvalsh(scaled)
    p = u.shape[1]
    bad = np.flatnonzero(eig[:, 0] < -_PSD_RTOL * p)
    if bad.size:
        i = int(bad[0])
        lowest = float(eig[i, 0] * scale[i])
        raise NoiseawareValueError(
            f"{owner}: each covariance matrix variances[l] must be positive semi-definite (no eigenvalue below 0: "
            f"a variance of any combination of the estimates is >= 0); got variances[{i}] with smallest eigenvalue "
            f"{lowest:.6g} ({bad.size} of {u.shape[0]} such matrices). Pass each analysis's own covariance estimate "
            "(e.g. the inverse Fisher information or a sandwich estimate), not a matrix assembled entry by entry."
        )


def _check_finite(results: dict[str, Any]) -> None:
    """Refuse combined quantities that overflowed float64 (inf, or NaN from inf - inf)."""
    for name, value in results.items():
        arr = np.asarray(value, dtype=np.float64)
        if not np.all(np.isfinite(arr)):
            shown = arr.tolist() if arr.size <= 4 else f"{arr.size - np.count_nonzero(np.isfinite(arr))} non-finite"
            raise NoiseawareValueError(
                f"{current_owner()}: the combined {name} must be finite in float64; got {shown} "
                "(the estimates or variances are so large, or spread so widely, that their means or squared "
                "deviations overflow). Rescale the estimand (e.g. change its units) so that the estimates and "
                "variances are well inside the float64 range (about 1e308)."
            )


def _shapes(q: np.ndarray, u: np.ndarray) -> str:
    """Which layout ``(q, u)`` is: ``"scalar"``, ``"variances"`` or ``"covariances"``; refuse the rest."""
    owner = current_owner()
    hint = (
        "Pass estimates of shape (M,) with variances (M,) for one scalar estimand, or estimates (M, p) "
        "with variances (M, p) or covariance matrices (M, p, p) for a vector (one row per synthetic data set)."
    )
    if q.ndim == 1:
        if u.shape == q.shape:
            return "scalar"
        if u.ndim == 0 or u.shape[0] != q.shape[0]:
            raise NoiseawareValueError(
                f"{owner}: variances must match estimates ({q.shape[0]}); got shape {u.shape}. {hint}"
            )
        raise NoiseawareValueError(
            f"{owner}: estimates of shape {q.shape} are one scalar per data set, so variances must have shape "
            f"{q.shape}; got shape {u.shape}. {hint}"
        )
    if q.ndim != 2:
        raise NoiseawareValueError(f"{owner}: estimates must have shape (M,) or (M, p); got shape {q.shape}. {hint}")
    M, p = q.shape
    if u.shape == (M, p):
        return "variances"
    if u.shape == (M, p, p):
        return "covariances"
    if u.shape == (p, M) and p != M:
        raise NoiseawareValueError(
            f"{owner}: variances must have shape {(M, p)} like estimates; got shape {u.shape}, the transpose. "
            "Put one synthetic data set per row in both."
        )
    raise NoiseawareValueError(
        f"{owner}: estimates of shape {q.shape} ({M} data sets, {p} components) need variances of shape "
        f"{(M, p)} or covariance matrices of shape {(M, p, p)}; got shape {u.shape}. {hint}"
    )


@owned("combine_synthetic")
def combine_synthetic(
    estimates: Any,
    variances: Any,
    *,
    rule: str = "fully",
    n_syn: int | None = None,
    n: int | None = None,
) -> SyntheticInferenceResult | SyntheticVectorInferenceResult:
    r"""Combine one analysis (scalar or vector estimand) over ``M >= 2`` synthetic data sets.

    **Scalar estimand** (``estimates`` and ``variances`` of shape ``(M,)``). With :math:`q_l, u_l` the
    estimate and its usual variance estimate in data set ``l``: :math:`\bar q_M = \sum q_l/M`,
    :math:`b_M = \sum(q_l-\bar q_M)^2/(M-1)`, :math:`\bar u_M = \sum u_l/M`.

    * ``rule="fully"`` — fully synthetic data (every record drawn from the posterior predictive;
      Raghunathan, Reiter & Rubin 2003, "Multiple imputation for statistical disclosure limitation",
      J. Official Statistics 19(1), 1-16):
      :math:`T_f = (1 + 1/M)b_M - \bar u_M`,
      :math:`\nu_f = (M-1)\,(1 - M\bar u_M/((M+1)b_M))^2`. When :math:`T_f \le 0` the adjusted
      :math:`T_f^* = (n_{syn}/n)\,\bar u_M` of Reiter (2002, J. Official Statistics 18(4), 531-543)
      is used (needs ``n_syn`` and ``n``; ``n_syn/n = 1`` when omitted) with
      :math:`\nu = M - 1`. This is the rule for :func:`synthesize` with a :func:`fit_dpcopula` result.
    * ``rule="partially"`` — partially synthetic data (Reiter 2003, Survey Methodology 29(2),
      181-188): :math:`T_p = b_M/M + \bar u_M`, :math:`\nu_p = (M-1)(1 + \bar u_M/(b_M/M))^2`.

    Returns a :class:`SyntheticInferenceResult`.

    **Vector estimand** (``estimates`` of shape ``(M, p)``, one row per data set; ``variances`` of shape
    ``(M, p, p)``, each analysis's covariance matrix, or ``(M, p)``, its variances only). The same rules
    with matrices (Reiter 2005, "Significance tests for multi-component estimands from multiply imputed,
    synthetic microdata", J. Statistical Planning and Inference 131(2), 365-377):
    :math:`B_M = \sum_l (q_l - \bar q_M)(q_l - \bar q_M)^\top/(M-1)`, :math:`\bar U_M = \sum_l U_l/M`,
    :math:`T_f = (1+1/M)B_M - \bar U_M` or :math:`T_p = B_M/M + \bar U_M`; each component gets the scalar
    rule above, and :meth:`SyntheticVectorInferenceResult.wald_test` tests :math:`Q = Q_0` jointly.
    Returns a :class:`SyntheticVectorInferenceResult`.

    Raises
    ------
    ValueError
        If fewer than 2 data sets, the shapes do not pair as above (for example estimates ``(M, p)`` with
        variances ``(M,)``, or a transposed array: the meaning would be ambiguous), values are not finite,
        variances are negative, covariance matrices are not symmetric or not positive semi-definite, the
        combined estimate or (co)variances overflow float64 (rescale the estimand), or ``rule`` is unknown.

    Examples
    --------
    >>> r = combine_synthetic([1.0, 1.2, 0.8, 1.1], [0.01, 0.01, 0.01, 0.01])
    >>> round(r.estimate, 3), round(r.variance, 4), round(r.between, 4)
    (1.025, 0.0265, 0.0292)
    >>> q = [[1.0, 2.0], [1.2, 1.7], [0.8, 2.2], [1.1, 2.1]]
    >>> rv = combine_synthetic(q, [[[0.01, 0.002], [0.002, 0.02]]] * 4)
    >>> rv.estimate.round(3).tolist(), round(rv.wald_test([1.0, 2.0]).p_value, 2)
    ([1.025, 2.0], 0.99)
    """
    owner = "combine_synthetic"
    q = v.finite_array(
        "estimates", estimates,
        remedy="Each row is one synthetic data set's estimate: check the analysis that gave the non-finite value.",
    )
    u = v.finite_array(
        "variances", variances,
        remedy="Each row is one synthetic data set's (co)variance: check the analysis that gave the non-finite value.",
    )
    rule = v.choice("rule", rule, ("fully", "partially"))
    layout = _shapes(q, u)
    M = q.shape[0]
    if M < 2:
        v.refuse("estimates", "must hold at least 2 rows (one per synthetic data set)", q.tolist())
    if layout == "covariances":
        if not np.allclose(u, np.swapaxes(u, 1, 2), rtol=1e-10, atol=0.0):
            raise NoiseawareValueError(
                f"{owner}: each covariance matrix variances[l] must be symmetric; got an asymmetric one."
            )
        diag = np.diagonal(u, axis1=1, axis2=2)
    else:
        diag = u
    if np.any(diag < 0):
        v.refuse("variances", "must be >= 0", diag.tolist())
    if layout == "covariances":
        _check_psd(u)
    ratio = 1.0
    if n_syn is not None or n is not None:
        if n_syn is None or n is None:
            raise NoiseawareValueError(f"{owner}: give both n_syn and n, or neither; got n_syn={n_syn!r}, n={n!r}.")
        ratio = v.integer("n_syn", n_syn, minimum=1) / v.integer("n", n, minimum=1)
    if layout == "scalar":
        res = _scalar_rule(q, u, rule, ratio)
        _check_finite({"estimate": res.estimate, "between-data-set variance": res.between,
                              "mean within variance": res.within, "total variance": res.variance})
        return res
    p = q.shape[1]
    parts = [_scalar_rule(q[:, j], diag[:, j], rule, ratio) for j in range(p)]
    with np.errstate(over="ignore", invalid="ignore"):
        qbar = q.mean(axis=0)
        dev = q - qbar
        between = dev.T @ dev / (M - 1)
        within = u.mean(axis=0) if layout == "covariances" else np.diag(diag.mean(axis=0))
        total = between / M + within if rule == "partially" else (1 + 1 / M) * between - within
    _check_finite({"estimate": qbar, "between-data-set covariance": between, "mean within covariance": within,
                          "total covariance": total, "total variances": np.array([r.variance for r in parts])})
    return SyntheticVectorInferenceResult(
        estimate=qbar,
        covariance=total,
        variances=np.array([r.variance for r in parts]),
        df=np.array([r.df for r in parts]),
        between=between,
        within=within,
        rule=rule,
        within_is_diagonal=layout == "variances",
        n_ratio=ratio,
        m=M,
    )
