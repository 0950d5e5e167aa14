r"""Dirichlet mean-log statistic: censored moments, Laplace and Gaussian kernels (seed 004).

Backend-neutral math for :class:`LaplaceCensoredDirichletStat` (seed
``004_f9e752609791d825.txt``, §3.1, §4.2.4 eq. (6) and Supplement S1). Every function takes a
:class:`~noiseaware._core._backend.Backend` first and has no value-dependent Python control flow.

Per record :math:`x\sim\mathrm{Dirichlet}(\alpha)`, :math:`\alpha_0=\sum_j\alpha_j`,
:math:`\beta_j=\alpha_0-\alpha_j`, and :math:`x_j\sim\mathrm{Beta}(\alpha_j,\beta_j)`.

**Asymptotic moments (the paper's eq. 6).** :math:`E\log x_j=\psi(\alpha_j)-\psi(\alpha_0)`,
:math:`\mathrm{Cov}(\log x_j,\log x_k)=\psi_1(\alpha_j)\delta_{jk}-\psi_1(\alpha_0)`.

**Censored moments (Supplement S1, exact in the mean and variance).** With
:math:`\tilde x_j=\max(x_j,a)`, integration by parts and the series of the incomplete beta
function :math:`B_a(\alpha,\beta)=a^\alpha(1-a)^\beta\sum_{k\ge0}t_k a^k`,
:math:`t_k=(\alpha+\beta)_k/(\alpha)_{k+1}` (DLMF 8.17.8) give, with
:math:`g_k=\partial_\alpha\log t_k=[\psi(\alpha+\beta+k)-\psi(\alpha+\beta)]-[\psi(\alpha+k+1)-\psi(\alpha)] < 0`
and
:math:`g'_k=\partial_\alpha g_k=[\psi_1(\alpha)-\psi_1(\alpha+k+1)]-[\psi_1(\alpha+\beta)-\psi_1(\alpha+\beta+k)]>0`,

.. math::

    E\log\tilde x_j - E\log x_j &= \int_0^a(\log a-\log x)\,\mathrm{Beta}(x)\,dx
        = \frac{a^\alpha(1-a)^\beta}{B(\alpha,\beta)}\sum_k a^k t_k\,(-g_k),\\
    E\log^2 x_j - E\log^2\tilde x_j &= \int_0^a(\log^2x-\log^2a)\,\mathrm{Beta}(x)\,dx
        = \frac{a^\alpha(1-a)^\beta}{B(\alpha,\beta)}\sum_k a^k t_k\,(2\log a\,g_k+g_k^2+g'_k).

Every term of both series is positive, so they are summed in log space (``logsumexp``) without
cancellation, and they are differentiable in :math:`\alpha`. The series are cut at
:data:`SERIES_TERMS` terms; the term ratio tends to ``a`` and the terms peak near
:math:`k^*\approx(a\alpha_0-\alpha_j)/(1-a)`, so the cut is negligible (below 1e-15 relative)
whenever :math:`a\le 0.2` and :math:`\alpha_0\le 400` (tested against adaptive quadrature).
For the covariances, :math:`x_k/(1-x_j)\mid x_j\sim\mathrm{Beta}(\alpha_k,\beta_j-\alpha_k)`
gives :math:`E[\log x_k\mid x_j]=\log(1-x_j)+\psi(\alpha_k)-\psi(\beta_j)`, so
:math:`E[(\log\tilde x_j-\log x_j)\log x_k]` is exact through
:math:`E[(\log\tilde x_j-\log x_j)\log(1-x_j)]` (the :math:`\beta`-derivative of the first
series). Only :math:`E[(\log\tilde x_j-\log x_j)(\log\tilde x_k-\log x_k)]\ge0` is dropped: it
needs both entries censored at once, a second-order event (at a 1% censoring rate its effect is
below the Monte Carlo error of 10^6 records; at extreme censoring it can make
:math:`\Sigma` indefinite, and the log-density is then NaN, which samplers reject).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._backend import Backend

__all__ = [
    "MOMENTS",
    "SERIES_TERMS",
    "censoring_series",
    "digamma",
    "laplace_logpdf",
    "logmean_moments",
    "mvn_logpdf",
    "stat_joint_logdensity",
    "trigamma",
]

#: Terms kept in the censoring series (see the module docstring for the accuracy range).
SERIES_TERMS = 256
#: The two moment models of the statistic.
MOMENTS = ("censored", "asymptotic")
_LOG_2PI = math.log(2.0 * math.pi)


def digamma(bk: Backend, x: Any) -> Any:
    """``psi(x)`` in the backend."""
    if bk.name == "numpy":
        from scipy import special

        return special.digamma(x)
    if bk.name == "jax":
        from jax.scipy import special as jsp

        return jsp.digamma(x)
    return _pt_polygamma(bk, x, 0)


def trigamma(bk: Backend, x: Any) -> Any:
    """``psi_1(x)`` in the backend."""
    if bk.name == "numpy":
        from scipy import special

        return special.polygamma(1, x)
    if bk.name == "jax":
        from jax.scipy import special as jsp

        return jsp.polygamma(1, x)
    return _pt_polygamma(bk, x, 1)


#: Recurrence shift and asymptotic coefficients (Bernoulli numbers) for the PyTensor digamma and
#: trigamma: PyTensor's compiled C kernels are accurate to only ~1e-9, which a covariance divided by
#: n = 5000 amplifies. For x > 0 these are accurate to 1e-14 (terms dropped below 1e-15).
_SHIFT = 10
_DIGAMMA_ASYM = (-1.0 / 12, 1.0 / 120, -1.0 / 252, 1.0 / 240, -1.0 / 132, 691.0 / 32760)
_TRIGAMMA_ASYM = (1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730)


def _pt_polygamma(bk: Backend, x: Any, order: int) -> Any:
    """Digamma (``order=0``) or trigamma (``order=1``) for x > 0, by recurrence and asymptotics.

    The recurrence is one reduction over a trailing axis and the asymptotic series is in Horner
    form: a flat chain of additions would be fused by PyTensor into one ``Add`` of more than 32
    inputs, which its constant folding (NumPy ufuncs take at most 32 arguments) cannot evaluate.
    """
    xp = bk.xp
    shifts = bk.asarray(np.arange(_SHIFT, dtype=np.float64))
    xs = bk.expand(x) + shifts
    acc = xp.sum(-1.0 / xs if order == 0 else 1.0 / (xs * xs), axis=-1)
    y = x + _SHIFT
    inv2 = 1.0 / (y * y)
    coeffs = _DIGAMMA_ASYM if order == 0 else _TRIGAMMA_ASYM
    horner: Any = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        horner = c + inv2 * horner
    if order == 0:
        series = xp.log(y) - 0.5 / y + inv2 * horner
    else:
        series = 1.0 / y + 0.5 * inv2 + (inv2 / y) * horner
    return acc + series


def _cholesky(bk: Backend, m: Any) -> Any:
    if bk.name == "numpy":
        return np.linalg.cholesky(m)
    if bk.name == "jax":
        import jax.numpy as jnp

        return jnp.linalg.cholesky(m)
    from pytensor.tensor import slinalg

    return slinalg.cholesky(m)


def _solve_lower(bk: Backend, low: Any, b: Any) -> Any:
    """``L^{-1} b`` for lower-triangular ``L`` of shape (d, d) and ``b`` of shape (d,)."""
    if bk.name == "numpy":
        from scipy.linalg import solve_triangular

        return solve_triangular(low, b, lower=True)
    if bk.name == "jax":
        from jax.scipy.linalg import solve_triangular as jst

        return jst(low, b, lower=True)
    from pytensor.tensor import slinalg

    return slinalg.solve_triangular(low, b, lower=True)


def censoring_series(
    bk: Backend, alpha: Any, beta: Any, log_a: Any, terms: int = SERIES_TERMS
) -> tuple[Any, Any, Any]:
    r"""Censoring corrections of the moments of :math:`\log x`, :math:`x\sim\mathrm{Beta}(\alpha,\beta)`.

    Returns ``(bias, c2, cross)``: ``bias = E log max(x, a) - E log x > 0``,
    ``c2 = E log^2 x - E log^2 max(x, a) > 0`` and
    ``cross = E[(log max(x, a) - log x) log(1 - x)] < 0`` (the last is
    :math:`\partial_\beta` of the first series times :math:`B(\alpha,\beta)`, a signed sum,
    summed with a max shift). ``alpha`` and ``beta`` broadcast; ``log_a`` is ``log a``.

    Examples
    --------
    >>> import math
    >>> from noiseaware._core import get_backend
    >>> from scipy import integrate, stats
    >>> b, _, _ = censoring_series(get_backend("numpy"), 2.2, 7.7, math.log(0.05))
    >>> ref = integrate.quad(lambda x: (math.log(0.05) - math.log(x)) * stats.beta.pdf(x, 2.2, 7.7), 0, 0.05)[0]
    >>> abs(float(b) - ref) < 1e-10
    True
    """
    xp = bk.xp
    alpha = bk.as_float(alpha)
    beta = bk.as_float(beta)
    k = bk.as_float(bk.asarray(np.arange(terms, dtype=np.float64)))
    al = bk.expand(alpha)
    ab = bk.expand(alpha + beta)
    # Differences of log-gamma, digamma and trigamma at x + k and x are finite sums over
    # i < k of log(x + i), 1 / (x + i) and 1 / (x + i)^2 (the recurrences of Gamma, psi, psi_1):
    # cumulative sums of positive terms, exact to rounding, cheap and simply differentiable.
    inv_ab, inv_al = 1.0 / (ab + k), 1.0 / (al + k)
    log_ab, log_al = xp.log(ab + k), xp.log(al + k)

    def excl(v: Any) -> Any:  # sum over i < k
        return xp.cumsum(v, axis=-1) - v

    log_t = excl(log_ab) - xp.cumsum(log_al, axis=-1)
    big_g = excl(inv_ab)  # psi(ab + k) - psi(ab)
    g = big_g - xp.cumsum(inv_al, axis=-1)  # minus [psi(al + k + 1) - psi(al)]
    t_ab = excl(inv_ab * inv_ab)  # psi_1(ab) - psi_1(ab + k)
    gp = xp.cumsum(inv_al * inv_al, axis=-1) - t_ab  # [psi_1(al) - psi_1(al + k + 1)] - t_ab
    log_a = bk.as_float(log_a)
    log_1ma = xp.log1p(-xp.exp(log_a))
    base = k * log_a + log_t
    log_pref = alpha * log_a + beta * log_1ma - (bk.gammaln(alpha) + bk.gammaln(beta) - bk.gammaln(alpha + beta))
    # -g > 0; the three parts of the second series are each > 0.
    neg_g = xp.maximum(-g, 1e-300)
    bias = xp.exp(log_pref + bk.logsumexp(base + xp.log(neg_g), axis=-1))
    second = xp.maximum(2.0 * log_a * g + g * g + gp, 1e-300)
    c2 = xp.exp(log_pref + bk.logsumexp(base + xp.log(second), axis=-1))
    shift = xp.max(base, axis=-1)
    signed = (log_1ma + big_g) * (-g) + t_ab
    cross = xp.exp(log_pref + shift) * xp.sum(xp.exp(base - bk.expand(shift)) * signed, axis=-1)
    return bias, c2, cross


def logmean_moments(bk: Backend, alpha: Any, log_a: Any, moments: str) -> tuple[Any, Any]:
    r"""Per-record mean ``(d,)`` and covariance ``(d, d)`` of :math:`\log\max(x_j, a)`.

    ``moments="asymptotic"``: the uncensored moments of the paper's eq. (6),
    :math:`\psi(\alpha_j)-\psi(\alpha_0)` and :math:`\mathrm{diag}\,\psi_1(\alpha)-\psi_1(\alpha_0)`.
    ``moments="censored"``: the censored mean and variances (exact, Supplement S1) and the
    covariances exact to first order in the censoring (module docstring). Divide the
    covariance by ``n`` for the mean of ``n`` records. ``alpha`` is a single ``(d,)`` vector.
    """
    xp = bk.xp
    alpha = bk.as_float(alpha)
    a0 = xp.sum(alpha, axis=-1)
    mean = digamma(bk, alpha) - digamma(bk, a0)
    tri = trigamma(bk, alpha)
    t0 = trigamma(bk, a0)
    d = int(alpha.shape[-1]) if bk.name != "pytensor" else None
    eye = _eye(bk, alpha, d)
    cov = eye * bk.expand(tri) - t0
    if moments == "asymptotic":
        return mean, cov
    beta = a0 - alpha
    bias, c2, cross = censoring_series(bk, alpha, beta, log_a)
    # Var(log x~) = E log^2 x - c2 - (mean + bias)^2 = var - c2 - 2 mean bias - bias^2
    var_c = xp.maximum(tri - t0 - c2 - 2.0 * mean * bias - bias * bias, 1e-300)
    # E[(L~_j - L_j) L_k] with E[log x_k | x_j] = log(1 - x_j) + psi(alpha_k) - psi(beta_j)
    e1 = bk.expand(cross) + (digamma(bk, alpha) - bk.expand(digamma(bk, beta))) * bk.expand(bias)
    mb = bk.expand(mean) * bias
    off = -t0 + e1 + xp.swapaxes(e1, -1, -2) - mb - xp.swapaxes(mb, -1, -2) - bk.expand(bias) * bias
    return mean + bias, eye * bk.expand(var_c) + (1.0 - eye) * off


def _eye(bk: Backend, alpha: Any, d: int | None) -> Any:
    if bk.name == "pytensor":
        import pytensor.tensor as pt

        return pt.eye(alpha.shape[-1])
    assert d is not None
    return bk.asarray(np.eye(d))


def laplace_logpdf(bk: Backend, x: Any, loc: Any, scale: Any) -> Any:
    """Log-density of Laplace(loc, scale), elementwise."""
    xp = bk.xp
    return -xp.log(2.0 * scale) - xp.abs(x - loc) / scale


def mvn_logpdf(bk: Backend, x: Any, mean: Any, cov: Any) -> Any:
    """Log-density of N(mean, cov) at ``x``, all unbatched (``(d,)``, ``(d,)``, ``(d, d)``)."""
    xp = bk.xp
    low = _cholesky(bk, cov)
    z = _solve_lower(bk, low, x - mean)
    d = x.shape[-1]
    diag = low[..., _range(bk, d), _range(bk, d)] if bk.name != "pytensor" else _pt_diag(low)
    return -0.5 * xp.sum(z * z, axis=-1) - xp.sum(xp.log(diag), axis=-1) - 0.5 * d * _LOG_2PI


def _range(bk: Backend, d: Any) -> Any:
    return bk.asarray(np.arange(int(d)))


def _pt_diag(m: Any) -> Any:
    import pytensor.tensor as pt

    return pt.diagonal(m, axis1=-2, axis2=-1)


def stat_joint_logdensity(
    bk: Backend, s_l: Any, s0: Any, alpha: Any, n: float, log_a: float, scale: float, moments: str
) -> Any:
    r"""``log p(S_L = s_l, S_0 = s0 | alpha)`` under eq. (6) with the chosen moments.

    .. math:: \log N\!\bigl(s_0;\ \mu(\alpha),\ \Sigma(\alpha)/n\bigr)
              + \sum_j \log\mathrm{Laplace}(s_{L,j};\ s_{0,j},\ \text{scale}).
    """
    mean, cov = logmean_moments(bk, alpha, log_a, moments)
    return mvn_logpdf(bk, s0, mean, cov / n) + bk.xp.sum(laplace_logpdf(bk, s_l, s0, scale), axis=-1)
