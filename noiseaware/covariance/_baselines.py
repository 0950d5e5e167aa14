r"""Baselines of Ferrando et al. (2026) §5 as small NumPy ports, for comparisons in simulation (seeded numpy noise).

These functions draw their noise from a :class:`numpy.random.Generator`: they are reference
implementations for benchmarks, *not* secure releases (use ``privatize(..., statistic=
"second_moment")`` for a secure SSP release).

* :func:`diagonal_only` — all of ``rho`` on the ``d`` diagonal entries (``rho/d`` each, with
  the paper's entry sensitivity :math:`2B^2/n`), off-diagonals 0, clipped at 0 (Ferrando, Fuentes, Mullins, Musco &
  Sheldon (2026), *Private Adaptive Covariance Estimation via Gaussian Graphical Models*, App. E).
* :func:`gauss_cov`, :func:`separate_cov`, :func:`adaptive_cov` — Dong, Liang & Yi (2022),
  *Differentially private covariance revisited*, with the l2 bound :math:`r = \sqrt d B` that
  the coordinate bound implies (Ferrando et al. 2026, §4.1). ``adaptive_cov`` is the full algorithm of the
  authors' code (``adaptive/algos.py: AdaptiveCov``): a noisy trace (``rho/8``), a sparse-vector
  (AboveThreshold) search over clipping radii :math:`r 2^{-l}` (``rho/8``), then GaussCov or
  SeparateCov (``3 rho/4``) on the clipped rows, whichever has the smaller noise bound.
* :func:`coinpress` — Biswas et al. (2020), covariance with known mean: iteratively whiten with
  the current estimate, clip to the Gaussian norm radius, measure with the Gaussian mechanism.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import owned
from ..exceptions import NoiseawareTypeError

__all__ = ["above_threshold", "adaptive_cov", "coinpress", "diagonal_only", "gauss_cov", "norm_bins", "separate_cov"]


def _args(x: Any, rho: Any, bound: Any, rng: Any) -> tuple[np.ndarray, float, float]:
    arr = v.finite_array("x", x)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 2:
        v.refuse("x", "must be an (n, d) matrix with n >= 2 and d >= 2", arr.shape)
    r = v.positive("rho", rho)
    b = v.positive("bound", bound)
    if float(np.max(np.abs(arr))) > b:
        v.refuse("bound", "must bound every |x_ij|", b)
    if not isinstance(rng, np.random.Generator):
        raise NoiseawareTypeError(v.message("rng", "must be a numpy.random.Generator", rng))
    return arr, r, b


def _wigner(d: int, rng: np.random.Generator) -> np.ndarray:
    """Symmetric matrix with iid N(0, 1) entries on and above the diagonal."""
    w = rng.standard_normal((d, d))
    return np.triu(w) + np.triu(w, 1).T


def _noisy_gram(arr: np.ndarray, r2: float, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    r"""The Gaussian mechanism on :math:`X^\top X/n` for rows of norm at most :math:`r`, at ``rho``-zCDP.

    L2 sensitivity :math:`\Delta = \sqrt2 r^2/n` on the symmetric matrix (Dong, Liang & Yi 2022),
    noise :math:`\sigma W` with :math:`\sigma = \Delta/\sqrt{2\rho}` and ``W`` a Wigner matrix
    (:func:`_wigner`). Returns the noisy matrix and :math:`\sigma`.
    """
    n, d = arr.shape
    sigma = math.sqrt(2.0) * r2 / n / math.sqrt(2.0 * rho)
    return arr.T @ arr / n + sigma * _wigner(d, rng), sigma


def _radius2(d: int, b: float, radius: float | None) -> float:
    """Squared row-norm bound: ``radius**2``, or ``d B**2`` (the coordinate bound's) when ``radius`` is None."""
    return d * b * b if radius is None else float(radius) ** 2


def _psd(a: np.ndarray) -> np.ndarray:
    w, u = np.linalg.eigh((a + a.T) / 2.0)
    return (u * np.maximum(w, 0.0)) @ u.T


@owned("diagonal_only")
def diagonal_only(x: Any, rho: float, bound: float, rng: np.random.Generator) -> np.ndarray:
    """Diagonal-only baseline (Ferrando et al. 2026, App. E): ``rho/d`` per diagonal entry, off-diagonals 0.

    Examples
    --------
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=(100, 3))
    >>> s = diagonal_only(x, 1.0, 1.0, np.random.default_rng(1))
    >>> bool(np.all(s[~np.eye(3, dtype=bool)] == 0))
    True
    """
    arr, r, b = _args(x, rho, bound, rng)
    n, d = arr.shape
    sigma = (2.0 * b * b / n) / math.sqrt(2.0 * r / d)
    diag = np.einsum("ij,ij->j", arr, arr) / n + sigma * rng.standard_normal(d)
    return np.diag(np.maximum(diag, 0.0))


@owned("gauss_cov")
def gauss_cov(
    x: Any, rho: float, bound: float, rng: np.random.Generator, *, psd: bool = True, radius: float | None = None
) -> np.ndarray:
    r"""GaussCov (Dong et al. 2022): :math:`X^\top X/n + (\sqrt2 r^2/n)/\sqrt{2\rho}\, W`, ``r = sqrt(d) B``.

    With ``psd`` the eigenvalues are clipped to ``[0, r^2]`` (their ``b_fleig``). ``radius`` replaces
    ``r`` (rows must have norm at most ``radius``).

    Examples
    --------
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=(100, 3))
    >>> gauss_cov(x, 1.0, 1.0, np.random.default_rng(1)).shape
    (3, 3)
    """
    arr, rh, b = _args(x, rho, bound, rng)
    r2 = _radius2(arr.shape[1], b, radius)
    out, _ = _noisy_gram(arr, r2, rh, rng)
    if psd:
        w, u = np.linalg.eigh(out)
        out = (u * np.clip(w, 0.0, r2)) @ u.T
    return out


@owned("separate_cov")
def separate_cov(
    x: Any, rho: float, bound: float, rng: np.random.Generator, *, radius: float | None = None
) -> np.ndarray:
    r"""SeparateCov (Dong et al. 2022): eigenvectors from GaussCov at ``rho/2``, eigenvalues at ``rho/2``.

    The sorted eigenvalues of :math:`X^\top X/n` (L2 sensitivity :math:`\sqrt2 r^2/n`, Hoffman-Wielandt)
    plus Gaussian noise, clipped to :math:`[0, r^2]`, placed on the eigenvectors of the noisy GaussCov
    matrix in the same order (decreasing :math:`|\lambda|`, as the authors' SVD orders them). The
    authors' code writes :math:`U_g \tilde D V_g^\top` with the SVD's :math:`V_g`, which flips the sign
    of directions whose noisy eigenvalue is negative; we use :math:`U_g \tilde D U_g^\top` (their
    paper's eigen-decomposition), which is symmetric PSD. ``radius`` is ``r`` (default
    :math:`\sqrt d B`); rows must have norm at most ``radius``.

    Examples
    --------
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=(100, 3))
    >>> separate_cov(x, 1.0, 1.0, np.random.default_rng(1)).shape
    (3, 3)
    """
    arr, rh, b = _args(x, rho, bound, rng)
    n, d = arr.shape
    r2 = _radius2(d, b, radius)
    # GaussCov at rho/2; the eigenvalues (the same sensitivity) at rho/2: the same sigma
    noisy, sigma = _noisy_gram(arr, r2, rh / 2.0, rng)
    w, u = np.linalg.eigh(noisy)
    ug = u[:, np.argsort(-np.abs(w), kind="stable")]
    lam = np.sort(np.linalg.eigvalsh(arr.T @ arr / n))[::-1]
    lam = lam + sigma * rng.standard_normal(d)
    return (ug * np.clip(lam, 0.0, r2)) @ ug.T


def _gauss_tail(d: int, b: float) -> float:
    """``sqrt(d + 2 sqrt(d log(1/b)) + 2 log(1/b))``: norm of a standard Gaussian d-vector w.p. 1 - b."""
    return math.sqrt(d + 2.0 * math.sqrt(d * math.log(1.0 / b)) + 2.0 * math.log(1.0 / b))


def _wigner_tail(d: int, b: float) -> float:
    """Spectral-norm bound of a Gaussian Wigner matrix w.p. 1 - b (the authors' ``wigner_gauss_tailbound``)."""
    theta = min((math.log(d) / d) ** 0.3, 0.5)
    lead = (1.0 + theta) * (2.0 * math.sqrt(d) + 6.0 * math.sqrt(math.log(d)) / math.sqrt(math.log(1.0 + theta)))
    return lead + math.sqrt(2.0 * math.log(2.0 / b))


def _wigner_fnorm(d: int, b: float) -> float:
    """Frobenius-norm bound of a Gaussian Wigner matrix w.p. 1 - b (the authors' ``wigner_gauss_fnormbound``)."""
    return math.sqrt(
        d * d + 2.0 * math.sqrt(d * math.log(2.0 / b)) * (1.0 + math.sqrt(2.0 * (d - 1))) + 6.0 * math.log(2.0 / b)
    )


def norm_bins(norms: np.ndarray, t: int) -> np.ndarray:
    r"""Counts of unit-scaled row norms ``u`` per bin ``l`` with :math:`2^{-l} < u \le 2^{-l+1}`, ``1 <= l < t``.

    Bin 0 stays empty (``u <= 1``); rows with ``u = 0`` or :math:`u \le 2^{-(t-1)}` fall in no bin.

    Examples
    --------
    >>> norm_bins(np.array([1.0, 0.5, 0.3, 0.0]), 4).tolist()
    [0, 1, 2, 0]
    """
    u = np.asarray(norms, dtype=np.float64)
    u = u[u > 0]
    level = -np.floor(np.log2(u))
    level = level + ~(u > 2.0**-level)
    level = np.maximum(level, 1).astype(np.int64)
    return np.bincount(level[level < t], minlength=t)[:t]


def above_threshold(queries: Any, threshold: float, epsilon: float, rng: np.random.Generator) -> int:
    r"""AboveThreshold (sparse vector; Dwork & Roth 2014 Alg. 1): first ``i`` with a noisy query over a noisy threshold.

    Threshold noise ``Laplace(2/epsilon)``, query noise ``Laplace(4/epsilon)``: ``epsilon``-DP for
    queries of sensitivity 1, i.e. :math:`\epsilon^2/2`-zCDP. Returns ``len(queries)`` if none is above.

    Examples
    --------
    >>> above_threshold([-100.0, 100.0, 100.0], 0.0, 1.0, np.random.default_rng(0))
    1
    """
    t_noisy = threshold + rng.laplace(scale=2.0 / epsilon)
    for i, q in enumerate(queries):
        if q + rng.laplace(scale=4.0 / epsilon) >= t_noisy:
            return i
    return len(queries)


@owned("adaptive_cov")
def adaptive_cov(x: Any, rho: float, bound: float, rng: np.random.Generator, *, beta: float = 0.1) -> np.ndarray:
    r"""AdaptiveCov (Dong, Liang & Yi 2022; the authors' ``AdaptiveCov``), with :math:`r = \sqrt d B`.

    In units where rows have norm at most 1 (``x / r``):

    1. Noisy trace :math:`\tilde t = \mathrm{tr}(X^\top X/n) + \frac{2}{\sqrt\rho n}Z +
       \sqrt{8\log(8/\beta)/\rho}/n`, clipped to ``[1e-16, 1]`` (sensitivity :math:`1/n`,
       :math:`\sigma = 2/(\sqrt\rho n)`: :math:`\rho/8`-zCDP).
    2. Noise bounds with :math:`\rho_1 = 3\rho/4`, :math:`\beta_1 = 3\beta/4`: SeparateCov
       :math:`s_1 = 2^{5/4}\sqrt{\tilde t/n}\,\rho_1^{-1/4}\sqrt{\nu}/6`,
       :math:`s_2 = \sqrt2\eta/(\sqrt{\rho_1}n)`, GaussCov :math:`g = \omega/(\sqrt{\rho_1}n)`
       (:math:`\eta, \nu, \omega`: Gaussian-vector, Wigner spectral and Frobenius tail bounds at
       :math:`\beta_1/2`, :math:`\beta_1/2`, :math:`\beta_1`).
    3. Sparse vector over radii :math:`2^{-l}`, ``l = 0..t-1`` (:math:`t = \min(dn, 79) + 1`): query
       :math:`q_l = n\,\mathrm{bias}_l - n\min(2^{-l}g,\ 2^{-l}s_1 + 2^{-2l}s_2)` with
       :math:`n\,\mathrm{bias}_l = \sum_{l' \le l} c_{l'}(4^{1-l'} - 4^{-l})`, :math:`c` the norm bins
       (:func:`norm_bins`; each row adds less than 1, so sensitivity 1), threshold 0,
       :math:`\epsilon = \sqrt\rho/2` (:func:`above_threshold`; :math:`\epsilon^2/2 = \rho/8`-zCDP).
       The first index ``j`` above gives :math:`k = -j` and the clipping radius
       :math:`\tilde r = \min(2^{k+1}, 1)`.
    4. Rows clipped to :math:`\tilde r`; if :math:`2^k s_1 + 4^k s_2 \ge 4^k g` GaussCov, else
       SeparateCov, at :math:`\rho_1` with radius :math:`\tilde r` and eigenvalues clipped to
       :math:`[0, \tilde r^2]`; the result times :math:`r^2`.

    **Privacy (rho-zCDP):** :math:`\rho/8 + \rho/8 + 3\rho/4 = \rho` (sequential composition; the
    choice in step 4 and the radius are post-processing of steps 1 and 3). The authors' query
    ``get_diff2`` scales the GaussCov bound by :math:`2^k` where step 4 uses :math:`4^k`; ported as
    written (it only changes which radius is picked, not the privacy).

    Examples
    --------
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=(100, 3))
    >>> adaptive_cov(x, 1.0, 1.0, np.random.default_rng(1)).shape
    (3, 3)
    """
    arr, rh, b = _args(x, rho, bound, rng)
    beta = v.open_unit("beta", beta)
    n, d = arr.shape
    r = math.sqrt(d) * b
    u = arr / r  # rows in the unit ball
    tr = float(np.einsum("ij,ij->", u, u)) / n
    tr_t = tr + 2.0 / math.sqrt(rh) / n * rng.standard_normal() + math.sqrt(8.0 / rh * math.log(8.0 / beta)) / n
    tr_t = max(min(tr_t, 1.0), 1e-16)
    rho1, beta1 = 0.75 * rh, 0.75 * beta
    eta, nu, omega = _gauss_tail(d, 0.5 * beta1), _wigner_tail(d, 0.5 * beta1), _wigner_fnorm(d, beta1)
    s1 = 2**1.25 * math.sqrt(tr_t) / math.sqrt(n) / rho1**0.25 * math.sqrt(nu) / 6.0
    s2 = math.sqrt(2.0) * eta / math.sqrt(rho1) / n
    g = omega / math.sqrt(rho1) / n
    t = min(d * n, 79) + 1
    norms = np.linalg.norm(u, axis=1)
    counts = norm_bins(norms, t).astype(np.float64)
    ls = np.arange(t)
    parts = 4.0 ** (1 - ls)
    cum_parts, cum_counts = np.cumsum(counts * parts), np.cumsum(counts)
    k = -ls.astype(np.float64)
    bias = cum_parts - cum_counts * 4.0**k  # n * bias_l
    noise = np.minimum(2.0**k * g, 2.0**k * s1 + 4.0**k * s2)
    j = above_threshold(bias - n * noise, 0.0, math.sqrt(rh) / 2.0, rng)
    k2 = -j
    r_t = min(2.0 ** (k2 + 1), 1.0)
    clipped = u * np.minimum(1.0, r_t / np.maximum(norms, 1e-300))[:, None]
    sep = 2.0**k2 * s1 + 4.0**k2 * s2
    gauss = 4.0**k2 * g
    if sep >= gauss:
        out = gauss_cov(clipped, rho1, 1.0, rng, radius=r_t)
    else:
        out = separate_cov(clipped, rho1, 1.0, rng, radius=r_t)
    return out * r * r


@owned("coinpress")
def coinpress(
    x: Any, rho: float, bound: float, rng: np.random.Generator, *, iters: int = 2, beta: float = 0.1
) -> np.ndarray:
    r"""CoinPress covariance with known (zero) mean (Biswas et al. 2020), ``iters`` steps.

    Start from :math:`\Sigma \preceq K I` with :math:`K = d B^2`; each step whitens with the
    current bound ``A``, clips rows to :math:`\gamma = \sqrt{d + 2\sqrt{d\log(n/\beta)} +
    2\log(n/\beta)}` (or to :math:`\|A\|_2\sqrt d B`, which the whitened rows already satisfy, when
    smaller: the known coordinate bound is used), measures the clipped second moment with symmetric Gaussian noise of
    sensitivity :math:`\sqrt2\gamma^2/n`, and tightens ``A``. Budget: ``rho/4`` per step
    before the last, the rest on the last.

    Examples
    --------
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=(500, 3))
    >>> coinpress(x, 1.0, 1.0, np.random.default_rng(1)).shape
    (3, 3)
    """
    arr, rh, b = _args(x, rho, bound, rng)
    iters = v.integer("iters", iters, minimum=1)
    n, d = arr.shape
    rhos = [rh / 4.0] * (iters - 1) + [rh - rh / 4.0 * (iters - 1)] if iters > 1 else [rh]
    gamma = math.sqrt(d + 2.0 * math.sqrt(d * math.log(n / beta)) + 2.0 * math.log(n / beta))
    A = np.eye(d) / math.sqrt(d * b * b)
    Ainv = np.eye(d) * math.sqrt(d * b * b)
    est = np.eye(d) * d * b * b
    for rt in rhos:
        w = arr @ A.T
        # clip radius: CoinPress's Gaussian radius, or the bound the data already satisfy if smaller
        radius = min(gamma, float(np.linalg.norm(A, 2)) * math.sqrt(d) * b)
        norms = np.linalg.norm(w, axis=1, keepdims=True)
        w = w * np.minimum(1.0, radius / np.maximum(norms, 1e-300))
        z, sigma = _noisy_gram(w, radius**2, rt, rng)
        est = Ainv @ z @ Ainv.T
        bound_noise = sigma * (2.0 * math.sqrt(d) + math.sqrt(2.0 * math.log(2.0 / beta)))
        u = _psd(z) + bound_noise * np.eye(d)
        wv, uv = np.linalg.eigh(u)
        A = ((uv / np.sqrt(wv)) @ uv.T) @ A
        Ainv = Ainv @ ((uv * np.sqrt(wv)) @ uv.T)
    return _psd(est)
