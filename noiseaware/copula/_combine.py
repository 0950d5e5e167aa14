r"""Combining rules for ``M`` synthetic data sets (Raghunathan, Reiter & Rubin 2003; Reiter 2003)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from ..exceptions import NoiseawareValueError

__all__ = ['SyntheticInferenceResult', 'combine_synthetic']

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

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        r"""The t interval :math:`\bar q_M \pm t_{df,(1+level)/2}\sqrt{T}`."""
        from scipy import stats

        level = v.open_unit("SyntheticInferenceResult.interval", "level", level)
        half = float(stats.t.ppf((1 + level) / 2, self.df)) * math.sqrt(self.variance)
        return self.estimate - half, self.estimate + half


def combine_synthetic(
    estimates: Any,
    variances: Any,
    *,
    rule: str = "fully",
    n_syn: int | None = None,
    n: int | None = None,
) -> SyntheticInferenceResult:
    r"""Combine one scalar analysis over ``M >= 2`` synthetic data sets.

    With :math:`q_l, u_l` the estimate and its usual variance estimate in data set ``l``:
    :math:`\bar q_M = \sum q_l/M`, :math:`b_M = \sum(q_l-\bar q_M)^2/(M-1)`, :math:`\bar u_M = \sum u_l/M`.

    * ``rule="fully"`` — fully synthetic data (every record drawn from the posterior predictive;
      Raghunathan, Reiter & Rubin 2003, J. Official Statistics 19(1), 1-16):
      :math:`T_f = (1 + 1/M)b_M - \bar u_M`,
      :math:`\nu_f = (M-1)\,(1 - M\bar u_M/((M+1)b_M))^2`. When :math:`T_f \le 0` the adjusted
      :math:`T_f^* = (n_{syn}/n)\,\bar u_M` of Reiter (2002, J. Official Statistics 18(4), 531-543)
      is used (needs ``n_syn`` and ``n``; ``n_syn/n = 1`` when omitted) with
      :math:`\nu = M - 1`. This is the rule for :func:`synthesize` with a :class:`DPCopulaFit`.
    * ``rule="partially"`` — partially synthetic data (Reiter 2003, Survey Methodology 29(2),
      181-188): :math:`T_p = b_M/M + \bar u_M`, :math:`\nu_p = (M-1)(1 + \bar u_M/(b_M/M))^2`.

    Raises
    ------
    ValueError
        If fewer than 2 estimates, lengths differ, values are not finite, variances are negative,
        or ``rule`` is unknown.

    Examples
    --------
    >>> r = combine_synthetic([1.0, 1.2, 0.8, 1.1], [0.01, 0.01, 0.01, 0.01])
    >>> round(r.estimate, 3), round(r.variance, 4), round(r.between, 4)
    (1.025, 0.0265, 0.0292)
    """
    owner = "combine_synthetic"
    q = v.finite_array(owner, "estimates", estimates).ravel()
    u = v.finite_array(owner, "variances", variances).ravel()
    rule = v.choice(owner, "rule", rule, ("fully", "partially"))
    M = q.size
    if M < 2:
        v.fail(owner, "estimates", "must hold at least 2 values (one per synthetic data set)", q.tolist())
    if u.size != M:
        raise NoiseawareValueError(f"{owner}: variances must match estimates ({M}); got {u.size}.")
    if np.any(u < 0):
        v.fail(owner, "variances", "must be >= 0", u.tolist())
    qbar, b, ubar = float(q.mean()), float(q.var(ddof=1)), float(u.mean())
    if rule == "partially":
        T = b / M + ubar
        df = (M - 1) * (1 + ubar / (b / M)) ** 2 if b > 0 else math.inf
        return SyntheticInferenceResult(qbar, T, min(df, 1e10), b, ubar, rule)
    T = (1 + 1 / M) * b - ubar
    if T > 0:
        df = (M - 1) * (1 - M * ubar / ((M + 1) * b)) ** 2
        return SyntheticInferenceResult(qbar, T, max(df, 1e-8), b, ubar, rule)
    ratio = 1.0
    if n_syn is not None or n is not None:
        if n_syn is None or n is None:
            raise NoiseawareValueError(f"{owner}: give both n_syn and n, or neither; got n_syn={n_syn!r}, n={n!r}.")
        ratio = v.integer(owner, "n_syn", n_syn, minimum=1) / v.integer(owner, "n", n, minimum=1)
    return SyntheticInferenceResult(qbar, ratio * ubar, float(M - 1), b, ubar, rule)
