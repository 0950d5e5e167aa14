r"""Dirichlet mean-log statistic: censored moments, Laplace and Gaussian kernels (Guo et al. 2022).

Backend-neutral math for :class:`LaplaceCensoredDirichletStat` (Guo, Barrientos & Peña (2022), *Differentially Private
Inference for Compositional Data*, §3.1, §4.2.4 eq. (6) and Supplement S1). Every function takes a
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
series).

**Second-order term (both parts censored).** :math:`E[D_jD_k]\ge0`,
:math:`D_j=\log\tilde x_j-\log x_j`, is computed by :func:`pair_censoring_term`: a fixed
exp-sinh quadrature over :math:`x_j=a e^{-v}` of the exact bias series of
:math:`x_k/(1-x_j)\mid x_j\sim\mathrm{Beta}(\alpha_k,\alpha_0-\alpha_j-\alpha_k)`. It is not
negligible: at heavy censoring (``a = 1e-3``, ``alpha = (0.1, 0.2, 0.3, 0.4)``) it is
as large as the variances and without it :math:`\Sigma` is indefinite (smallest eigenvalue
-1.90), so every front end would return NaN.

**Diagonal guard.** When a part is almost always censored its variance is a small difference of
large pieces and rounding can make the computed matrix indefinite. Each variance is raised by
:math:`\delta_j` = :data:`PD_GUARD` times the sum of the magnitudes of the pieces of row ``j``
plus :data:`PAIR_GUARD` times :math:`\sum_k E[D_jD_k]`. If every entry's error is within these
bounds, error plus :math:`\mathrm{diag}(\delta)` is diagonally dominant with a non-negative
diagonal (Gershgorin), so the computed matrix dominates the exact, positive definite one. Only the
diagonal moves, by at most :math:`\delta_j` (below 1e-9 relative at moderate censoring). The
guard is held constant under differentiation.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import owned
from ._backend import Backend
from ._noise import laplace_logpdf  # the registry's Laplace law (re-exported for the Dirichlet front ends)

__all__ = [
    "DE_STEP",
    "MOMENTS",
    "PAIR_GUARD",
    "PARAMETERIZATIONS",
    "PAIR_RANGE",
    "PD_GUARD",
    "SERIES_TERMS",
    "CENSORED_MAX_A",
    "censoring_series",
    "check_censored_threshold",
    "check_statistic_args",
    "digamma",
    "laplace_logpdf",
    "logmean_moments",
    "mvn_logpdf",
    "pair_censoring_term",
    "pair_series_terms",
    "stat_joint_logdensity",
    "trigamma",
]

#: The censored moments need ``a`` below this (two parts can lie below ``a`` together, and the
#: inner threshold ``a / (1 - x_j)`` of :func:`pair_censoring_term` stays below 1).
CENSORED_MAX_A = 0.5
#: Terms kept in the censoring series (see the module docstring for the accuracy range).
SERIES_TERMS = 256
#: The two moment models of the statistic.
MOMENTS = ("censored", "asymptotic")
#: The two forms of the latent ``S_0`` in the front ends' models (``z`` standard normal, or ``S_0`` itself).
PARAMETERIZATIONS = ("noncentered", "centered")
_LOG_2PI = math.log(2.0 * math.pi)


def check_censored_threshold(a: float, moments: str) -> None:
    """Raise when ``moments="censored"`` is asked for with a threshold ``a >= 1/2``.

    Raises
    ------
    NoiseawareValueError
        Naming ``a`` and the rule.
    """
    if moments == "censored" and not a < CENSORED_MAX_A:
        v.refuse(
            "a",
            f"must be < {CENSORED_MAX_A} with moments='censored' (the censored covariance is derived for a < 1/2)",
            a,
            "use moments='asymptotic' or a smaller threshold",
        )


def check_statistic_args(n: Any, a: Any, moments: str) -> tuple[int, float]:
    """``n`` (an integer >= 1) and ``a`` (in (0, 1)) of the statistic, checked with ``moments``; returns them.

    Raises
    ------
    NoiseawareValueError, NoiseawareTypeError
        Naming the argument and the rule (``a`` too large for the censored moments included).
    """
    nn = v.integer("n", n, minimum=1)
    aa = v.open_unit("a", a)
    v.choice("moments", moments, MOMENTS)
    check_censored_threshold(aa, moments)
    return nn, aa


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
    from pytensor.tensor.linalg import cholesky

    return cholesky(m)


def _solve_lower(bk: Backend, low: Any, b: Any) -> Any:
    """``L^{-1} b`` for lower-triangular ``L`` of shape (d, d) and ``b`` of shape (d,)."""
    if bk.name == "numpy":
        from scipy.linalg import solve_triangular

        return solve_triangular(low, b, lower=True)
    if bk.name == "jax":
        from jax.scipy.linalg import solve_triangular as jst

        return jst(low, b, lower=True)
    from pytensor.tensor.linalg import solve_triangular

    return solve_triangular(low, b, lower=True)


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


#: Step and range of the double-exponential (exp-sinh) rule of :func:`pair_censoring_term`:
#: nodes ``v = exp(pi/2 sinh t)``, ``t = -3.5, -3.45, ..., 3.5`` (141 nodes, ``v`` from 1.5e-7 to 2e11).
DE_STEP = 0.05
_DE_T = np.arange(-3.5, 3.5 + 0.5 * DE_STEP, DE_STEP)
_DE_LOG_V = 0.5 * math.pi * np.sinh(_DE_T)
_DE_LOG_W = _DE_LOG_V + np.log(0.5 * math.pi * np.cosh(_DE_T) * DE_STEP)
#: Weights of the Gershgorin diagonal guard of :func:`logmean_moments` (module docstring): 200 times
#: the worst relative error of the digamma/trigamma primitives (5e-14, JAX), and 10 times the worst
#: relative error of the quadrature of :func:`pair_censoring_term` over the tested grid (1e-9).
PD_GUARD = 1e-11
PAIR_GUARD = 1e-8
#: Accuracy range of the series with :data:`SERIES_TERMS` terms: :math:`a\,\alpha_0/(1-2a)\le` this
#: (e.g. :math:`\alpha_0\le 450` at ``a = 0.2``, :math:`\le 200` at ``a = 0.3``); the inner series of
#: :func:`pair_censoring_term` peaks near term :math:`a\alpha_0/(1-2a)`.
PAIR_RANGE = 150.0


def pair_series_terms(log_a: Any) -> int:
    r"""Terms of the inner series of :func:`pair_censoring_term` for a threshold known in Python.

    The inner threshold is at most :math:`c=a/(1-a)`; the series terms peak near
    :math:`k^*\le c\,\alpha_0/(1-c)` and then fall by a factor of about ``c`` per term, so
    ``8 + 2 k* + 40 / log(1/c)`` terms with :math:`\alpha_0 = 400` leave a tail below 1e-17 of the
    sum over the accuracy range (``a <= 0.2``, :math:`\alpha_0\le 400`). A traced threshold gets
    :data:`SERIES_TERMS`.
    """
    if not isinstance(log_a, int | float | np.floating):
        return SERIES_TERMS
    a = math.exp(float(log_a))
    if not 0.0 < a < 0.5:
        return SERIES_TERMS
    c = a / (1.0 - a)
    return int(min(SERIES_TERMS, 8 + math.ceil(2.0 * c * 400.0 / (1.0 - c) + 40.0 / -math.log(c))))


@owned("pair_censoring_term")
def pair_censoring_term(bk: Backend, alpha: Any, log_a: Any, terms: int | None = None) -> Any:
    r"""``(d, d)`` matrix :math:`E[D_jD_k]`, :math:`D_j=\log\max(x_j,a)-\log x_j`, zero diagonal.

    The term that needs two parts censored at once (module docstring, "Second-order term"):

    .. math:: E[D_jD_k] = \frac{a^{\alpha_j}}{B(\alpha_j,\beta_j)}\int_0^\infty v\,
              e^{-\alpha_j v}(1-a e^{-v})^{\beta_j-1}\,
              b\!\Bigl(\alpha_k,\gamma_{jk};\ \frac{a}{1-a e^{-v}}\Bigr)\,dv,

    with :math:`x_j=a e^{-v}`, :math:`\gamma_{jk}=\alpha_0-\alpha_j-\alpha_k` and
    :math:`b(\alpha,\beta;c)=E[(\log c-\log y)_+]`, :math:`y\sim\mathrm{Beta}(\alpha,\beta)`
    (the bias series of :func:`censoring_series` at threshold ``c``): given :math:`x_j`,
    :math:`x_k/(1-x_j)\sim\mathrm{Beta}(\alpha_k,\gamma_{jk})`. The ``v``-integral is a fixed
    141-node exp-sinh rule (:data:`DE_STEP`), evaluated in both orientations ``(j, k)`` and
    ``(k, j)`` and averaged. Needs ``a < 1/2``; with ``d = 2`` (:math:`\gamma=0`) both parts cannot
    lie below ``a < 1/2`` at once and the term is 0. NumPy and JAX backends; with PyTensor the term
    is inside the one JAX-evaluated node of :func:`logmean_moments`.

    Examples
    --------
    >>> import math, numpy as np
    >>> from noiseaware._core import get_backend
    >>> e = pair_censoring_term(get_backend("numpy"), np.array([0.5, 2.0, 5.0]), math.log(0.1))
    >>> bool(e[0, 1] > 0 and e[0, 0] == 0 and abs(e[0, 1] - e[1, 0]) < 1e-15)
    True
    """
    if terms is None:
        terms = pair_series_terms(log_a)
    if bk.name == "pytensor":
        v.refuse(
            "bk",
            "must be NumPy or JAX (with PyTensor the censored moments are one JAX-evaluated node)",
            bk.name,
            "call logmean_moments(bk, alpha, log_a, 'censored'), whose covariance holds this term",
        )
    return _pair_censoring_term(bk, alpha, log_a, terms)


def _pair_censoring_term(bk: Backend, alpha: Any, log_a: Any, terms: int) -> Any:
    xp = bk.xp
    alpha = bk.as_float(alpha)
    log_a = bk.as_float(log_a)
    aj = bk.expand(alpha)  # (d, 1): outer part
    ak = alpha[None, :]  # (1, d): inner part
    d_eye = _eye(bk, alpha, None if bk.name == "pytensor" else int(alpha.shape[-1]))
    # gamma_jk = sum of the other parts, summed directly (exactly 0 when d = 2, not a rounding residue)
    others = (1.0 - d_eye[:, None, :]) * (1.0 - d_eye[None, :, :])
    gamma = xp.sum(others * alpha, axis=-1)
    valid = (gamma > 0) & (d_eye < 0.5)
    g_safe = bk.where(valid, gamma, 1.0)
    ak_full = ak + 0.0 * aj  # (d, d)
    ak_safe = bk.where(valid, ak_full, 1.0)
    aj_safe = bk.where(valid, aj + 0.0 * ak, 1.0)
    bj_safe = ak_safe + g_safe
    # inner series coefficients t_m (-g_m) of Beta(alpha_k, gamma), shape (d, d, T)
    k = bk.as_float(bk.asarray(np.arange(terms, dtype=np.float64)))
    al = bk.expand(ak_safe)
    ab = bk.expand(ak_safe + g_safe)
    inv_ab, inv_al = 1.0 / (ab + k), 1.0 / (al + k)
    log_t = xp.cumsum(xp.log(ab + k), axis=-1) - xp.log(ab + k) - xp.cumsum(xp.log(al + k), axis=-1)
    g = xp.cumsum(inv_ab, axis=-1) - inv_ab - xp.cumsum(inv_al, axis=-1)
    log_coef = log_t + xp.log(xp.maximum(-g, 1e-300))
    # nodes: x_j = a e^{-v}; inner threshold c = a / (1 - x_j)
    log_v = bk.as_float(bk.asarray(_DE_LOG_V))
    v = xp.exp(log_v)
    log_x = log_a - v
    log1m_x = xp.log1p(-xp.exp(log_x))
    log_c = log_a - log1m_x  # (N,)
    log_1mc = xp.log1p(-xp.exp(log_x) - xp.exp(log_a)) - log1m_x
    # log b(alpha_k, gamma; c_n), shape (d, d, N)
    lse = bk.logsumexp(log_c[:, None] * k + log_coef[..., None, :], axis=-1)
    log_beta_k = bk.gammaln(ak_safe) + bk.gammaln(g_safe) - bk.gammaln(ak_safe + g_safe)
    log_b = bk.expand(ak_safe) * log_c + bk.expand(g_safe) * log_1mc - bk.expand(log_beta_k) + lse
    log_h = log_v - bk.expand(aj_safe) * v + bk.expand(bj_safe - 1.0) * log1m_x + log_b
    log_w = bk.as_float(bk.asarray(_DE_LOG_W))
    log_pref = aj_safe * log_a - (bk.gammaln(aj_safe) + bk.gammaln(bj_safe) - bk.gammaln(aj_safe + bj_safe))
    e = xp.exp(log_pref + bk.logsumexp(log_h + log_w, axis=-1))
    e = bk.where(valid, e, 0.0)
    return 0.5 * (e + xp.swapaxes(e, -1, -2))


def logmean_moments(bk: Backend, alpha: Any, log_a: Any, moments: str, terms: int | None = None) -> tuple[Any, Any]:
    r"""Per-record mean ``(d,)`` and covariance ``(d, d)`` of :math:`\log\max(x_j, a)`.

    ``moments="asymptotic"``: the uncensored moments of the paper's eq. (6),
    :math:`\psi(\alpha_j)-\psi(\alpha_0)` and :math:`\mathrm{diag}\,\psi_1(\alpha)-\psi_1(\alpha_0)`.
    ``moments="censored"``: the censored mean, variances and covariances (Supplement S1, with the
    term of two parts censored at once, :func:`pair_censoring_term`), plus the diagonal guard of
    the module docstring, so the covariance is positive definite. Divide the covariance by ``n``
    for the mean of ``n`` records. ``alpha`` is a single ``(d,)`` vector; ``a < 1/2``. With JAX the
    censored computation is one compiled function (cached per shape), also when called eagerly; with
    PyTensor it is one node evaluated by that JAX function, its gradient by JAX's vector-Jacobian
    product (:class:`noiseaware._core._pytensor_ops.JaxMeanCov`). ``terms``:
    the inner series' length of :func:`pair_censoring_term`; default :func:`pair_series_terms` of
    ``log_a``, which is :data:`SERIES_TERMS` (256) for a traced threshold. A caller that passes a
    traced threshold but knows its value (a fit with the data as arguments) passes
    ``pair_series_terms(log a)`` here: at ``a = 1e-3`` that is 15 terms, and the 256 of a traced
    threshold made each gradient of :func:`noiseaware.dirichlet.fit` about 17 times dearer.
    """
    if terms is None:
        terms = pair_series_terms(log_a)
    if bk.name == "jax" and moments == "censored":
        return _jax_moments(bk, terms)(alpha, log_a)
    if bk.name == "pytensor" and moments == "censored":
        from ._pytensor_ops import jax_mean_cov

        return jax_mean_cov(_censored_moments, alpha, log_a, (terms,))
    return _logmean_moments(bk, alpha, log_a, moments, terms)


@functools.cache
def _jax_moments(bk: Backend, terms: int) -> Any:
    import jax

    return jax.jit(lambda alpha, log_a: _censored_moments(bk, alpha, log_a, terms))


def _censored_moments(bk: Backend, alpha: Any, log_a: Any, terms: int) -> tuple[Any, Any]:
    return _logmean_moments(bk, alpha, log_a, "censored", terms)


def _logmean_moments(bk: Backend, alpha: Any, log_a: Any, moments: str, terms: int | None) -> tuple[Any, Any]:
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
    both = pair_censoring_term(bk, alpha, log_a, terms)  # E[D_j D_k], both parts censored
    off = -t0 + e1 + xp.swapaxes(e1, -1, -2) - mb - xp.swapaxes(mb, -1, -2) - bk.expand(bias) * bias + both
    # Gershgorin guard against rounding (module docstring): raise each variance by PD_GUARD times
    # the row sum of the magnitudes of the pieces the entries are computed from.
    mag_var = tri + t0 + c2 + 2.0 * xp.abs(mean) * bias + bias * bias
    mag_e1 = bk.expand(xp.abs(cross) + xp.abs(digamma(bk, beta)) * bias) + xp.abs(digamma(bk, alpha)) * bk.expand(bias)
    mag_mb = bk.expand(xp.abs(mean)) * bias
    mag_off = t0 + mag_e1 + xp.swapaxes(mag_e1, -1, -2) + mag_mb + xp.swapaxes(mag_mb, -1, -2)
    mag_off = mag_off + bk.expand(bias) * bias + both
    guard = PD_GUARD * (mag_var + xp.sum((1.0 - eye) * mag_off, axis=-1)) + PAIR_GUARD * xp.sum(both, axis=-1)
    # a bound, not a model term: held constant under differentiation (its gradient is ~1e-11 of the
    # variances' and would only lengthen the gradient graph)
    guard = bk.stop_gradient(guard)
    return mean + bias, eye * bk.expand(var_c + guard) + (1.0 - eye) * off


def _eye(bk: Backend, alpha: Any, d: int | None) -> Any:
    if bk.name == "pytensor":
        import pytensor.tensor as pt

        return pt.eye(alpha.shape[-1])
    assert d is not None
    return bk.asarray(np.eye(d))


def mvn_logpdf(bk: Backend, x: Any, mean: Any, cov: Any) -> Any:
    """Log-density of N(mean, cov) at ``x``, all unbatched (``(d,)``, ``(d,)``, ``(d, d)``)."""
    xp = bk.xp
    low = _cholesky(bk, cov)
    z = _solve_lower(bk, low, x - mean)
    d = x.shape[-1]
    diag = low[..., _range(bk, d), _range(bk, d)] if bk.name != "pytensor" else _pt_diag(low)
    out = -0.5 * xp.sum(z * z, axis=-1) - xp.sum(xp.log(diag), axis=-1) - 0.5 * d * _LOG_2PI
    # a covariance that is not positive definite (JAX and PyTensor return NaN factors) gives -inf,
    # never NaN; NumPy raises LinAlgError above
    return bk.where(xp.isnan(out), -np.inf, out)


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
