r"""Sensitivity rules and noise reach: the formulas the schemas check and the curator calibrates with.

Every rule is stated under :data:`NEIGHBOURS` (substitution, ``n`` public). The curator
(:mod:`noiseaware._privatize`) calibrates its mechanisms with these functions and the loader
(the per-family schemas of this package) recomputes them from a release's fields, so each formula
is written once.
"""

from __future__ import annotations

import math
from typing import Any

from .._core._fields import ENTRY_ORDER

__all__ = [
    "ENTRY_ORDER",
    "IMPLAUSIBLE_LOG2",
    "NEIGHBOURS",
    "additive_noise_reach",
    "entry_index",
    "kendall_sensitivity",
    "mean_sensitivity",
    "noise_reach",
    "pace_ggm_sensitivity",
    "regression_eigen_sensitivity",
    "regression_l1_sensitivity",
    "regression_sensitivity",
    "second_moment_sensitivity",
]

#: The neighbour relation of every statistic in this package.
NEIGHBOURS = "substitution (n public; neighbouring data sets differ in one record)"

#: A released value is refused when the noise would reach it with probability below 2**-64.
IMPLAUSIBLE_LOG2 = 64


def noise_reach(mechanism: Any) -> float | None:
    r"""``T`` with :math:`P(\text{noise} \ge T) < 2^{-64}` for additive integer noise (None for other families).

    Geometric (two-sided, :math:`P(\text{noise}\ge t)=\alpha^t/(1+\alpha)`):
    :math:`T=\lceil 64\log 2/(-\log\alpha)\rceil`. Discrete Gaussian (tail below the continuous
    Gaussian's, :math:`P(\text{noise}\ge t)\le e^{-(t-1)^2/(2\sigma^2)}`):
    :math:`T=\lceil\sigma\sqrt{2\cdot 64\log 2}\rceil+1`. A value further than ``T`` from every
    possible true value is a tampered (or corrupted) record, not noise.
    """
    fam = mechanism.family
    if fam == "geometric":
        return float(math.ceil(IMPLAUSIBLE_LOG2 * math.log(2.0) / (-mechanism.log_alpha)))
    if fam == "discrete_gaussian":
        return float(math.ceil(mechanism.sigma * math.sqrt(2.0 * IMPLAUSIBLE_LOG2 * math.log(2.0))) + 1)
    return None


def additive_noise_reach(mechanism: Any) -> float | None:
    r"""``T`` with :math:`P(\text{noise} \ge T) < 2^{-64}` for any additive family (None for the others).

    The integer families as :func:`noise_reach`; Laplace of scale ``b``
    (:math:`P(\text{noise}\ge t)=e^{-t/b}/2`): :math:`T=64 b\log 2`; Gaussian (:math:`P(\text{noise}\ge t)
    \le e^{-t^2/(2\sigma^2)}`): :math:`T=\sigma\sqrt{2\cdot 64\log 2}`.

    Examples
    --------
    >>> from noiseaware.mechanisms import GaussianMechanism
    >>> round(additive_noise_reach(GaussianMechanism(sigma=1.0)), 4)
    9.4193
    """
    fam = mechanism.family
    if fam == "laplace":
        return IMPLAUSIBLE_LOG2 * math.log(2.0) * float(mechanism.scale)
    if fam == "gaussian":
        return float(mechanism.sigma) * math.sqrt(2.0 * IMPLAUSIBLE_LOG2 * math.log(2.0))
    return noise_reach(mechanism)


def kendall_sensitivity(n: int) -> float:
    r"""Sensitivity of Kendall's :math:`\tau_a` under substitution neighbours: :math:`4/n`.

    :math:`\tau_a = (n_c - n_d)/\binom n2`. Replacing one record changes the signs of the
    :math:`n-1` pairs that contain it, each term of :math:`n_c - n_d` by at most 2, so
    :math:`|\Delta\tau_a| \le 2(n-1)/\binom n2 = 4/n`, and the bound is reached (e.g. moving the
    largest record to the bottom of a perfectly concordant sample). Li, Xiong & Jiang (2014), *Differentially Private
    Synthesization of Multi-Dimensional Data using Copula Functions*, Lemma 4.1 prints
    :math:`4/(n+1)`, which holds only for add/remove neighbours with an unknown ``n``.

    Examples
    --------
    >>> kendall_sensitivity(10)
    0.4
    """
    return 4.0 / n


def entry_index(j: int, k: int) -> int:
    """Position of entry ``(j, k)``, ``j >= k``, in :data:`ENTRY_ORDER`.

    Examples
    --------
    >>> entry_index(2, 1)
    4
    """
    return j * (j + 1) // 2 + k


def pace_ggm_sensitivity(n: int, bound: float) -> float:
    r"""Sensitivity of one entry of :math:`X^\top X/n` with :math:`|x_j| \le B`: :math:`2B^2/n`.

    Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via Gaussian Graphical
    Models*, App. A.2 (:math:`|v_j v_k - u_j u_k| \le 2B^2`, reached at ``v_j = v_k = u_j = -u_k = B``).
    A diagonal entry moves by at most :math:`B^2/n`; PACE-GGM uses :math:`2B^2/n` for every entry as
    the paper does (the score of the exponential mechanism needs the maximum over entries).

    Examples
    --------
    >>> pace_ggm_sensitivity(100, 1.0)
    0.02
    """
    return 2.0 * bound * bound / n


def second_moment_sensitivity(n: int, d: int, bound: float) -> float:
    r"""L2 sensitivity of the vector of the ``d(d+1)/2`` unique entries of :math:`X^\top X/n`: :math:`dB^2/n`.

    With ``a_j = v_j^2``, ``b_j = u_j^2`` in :math:`[0, B^2]`,
    :math:`\sum_{j\ge k}(v_jv_k-u_ju_k)^2 = \tfrac12[\|vv^\top-uu^\top\|_F^2 + \sum_j(a_j-b_j)^2]
    \le \tfrac12[(\sum a)^2 + (\sum b)^2 + \sum (a_j-b_j)^2]`, a convex function maximised at
    ``a, b`` in :math:`\{0, B^2\}^d`, where it is at most :math:`d^2 B^4` (``p^2+q^2+m <= 2d^2``
    with ``p, q`` the counts of :math:`B^2` and ``m <= 2d-p-q`` the disagreements). Reached for
    even ``d`` (``v = B 1``, ``u`` half ``B`` half ``-B``). Ferrando, Fuentes, Mullins, Musco & Sheldon (2026),
    *Private Adaptive Covariance Estimation via Gaussian Graphical Models*, App. A gives :math:`\sqrt2 dB^2/n`
    for the full symmetric matrix in Frobenius norm, which counts each off-diagonal entry twice.

    Examples
    --------
    >>> second_moment_sensitivity(100, 4, 1.0)
    0.04
    """
    return d * bound * bound / n



def mean_sensitivity(n: int, d: int, bound: float) -> float:
    r"""L2 sensitivity of the mean vector :math:`\bar x` of ``n`` records with :math:`|x_j| \le B`: :math:`2B\sqrt d/n`.

    Substituting ``u`` by ``v`` moves :math:`\bar x` by :math:`(v - u)/n`, and :math:`\|v - u\|_2 \le
    \sqrt{d}\, 2B`, reached at ``v = B 1``, ``u = -B 1`` (brute-forced over the corners of the cube in
    ``tests/covariance/test_centring.py``). Used by ``pace_ggm`` with ``center=True``.

    Examples
    --------
    >>> mean_sensitivity(100, 4, 1.0)
    0.04
    """
    return 2.0 * bound * math.sqrt(d) / n


def regression_sensitivity(k: int) -> float:
    r"""L2 sensitivity of the unique entries of :math:`W^\top W`, ``W`` the scaled regression design: :math:`k`.

    ``W = [1, X, y] / b`` (column by column, the intercept column of ones with ``b = 1`` when present)
    has ``k`` columns with :math:`|w_j| \le 1`; the release holds the unique entries ``j >= k`` of the
    *sum* :math:`W^\top W` (not divided by ``n``), without the public entry ``(0, 0) = n`` when the
    intercept is present. Substituting the record ``u`` by ``v`` changes the vector of unique
    entries of :math:`vv^\top - uu^\top`; :func:`second_moment_sensitivity` bounds its squared L2
    norm by :math:`k^2` for any ``u, v`` in :math:`[-1, 1]^k` (with ``n = 1`` and ``B = 1``), so
    also for the subset with :math:`u_0 = v_0 = 1` (the ``(0, 0)`` change is then 0, so leaving it out
    does not change the norm). Reached for even ``k`` (``v = 1``, ``u`` with half its entries
    ``-1`` and ``u_0 = 1``); for odd ``k`` the maximum over the corners is :math:`\sqrt{k^2 - 1}`
    (brute-forced in ``tests/security/test_privacy_bruteforce.py``) and ``k`` is used.

    Examples
    --------
    >>> regression_sensitivity(4)
    4.0
    """
    return float(k)


def regression_l1_sensitivity(k: int, intercept: bool) -> float:
    r"""L1 sensitivity of the unique entries of :math:`W^\top W` (:func:`regression_sensitivity`): :math:`k^2 - [c]`.

    ``c`` is 1 with an intercept, else 0.

    Entry by entry: an off-diagonal entry :math:`v_jv_l - u_ju_l` moves by at most 2 (``k(k-1)/2``
    of them, the intercept's column sums included), a diagonal entry :math:`v_j^2 - u_j^2` by at
    most 1 (``k`` of them, or ``k - 1`` without the public ``(0, 0)``): :math:`k(k-1) + k - [\text{intercept}]`.
    A valid bound, not a tight one for ``k >= 3`` (all off-diagonal entries cannot move by 2 at
    once); the brute-force test reports the largest change it finds.

    Examples
    --------
    >>> regression_l1_sensitivity(3, True), regression_l1_sensitivity(3, False)
    (8.0, 9.0)
    """
    return float(k * k - (1 if intercept else 0))


def regression_eigen_sensitivity(p: int) -> float:
    r"""Sensitivity of :math:`\lambda_{\min}(W_x^\top W_x)`, ``W_x`` the ``p`` scaled design columns: :math:`p`.

    Substitution of ``u`` by ``v`` (:math:`\|u\|_2^2, \|v\|_2^2 \le p` as :math:`|w_j| \le 1`):
    by Weyl's inequality :math:`\lambda_{\min}(A - uu^\top + vv^\top) \ge \lambda_{\min}(A - uu^\top)
    \ge \lambda_{\min}(A) - \|u\|^2` and :math:`\lambda_{\min}(A - uu^\top + vv^\top) \le
    \lambda_{\min}(A - uu^\top) + \|v\|^2 \le \lambda_{\min}(A) + \|v\|^2` (removing ``uu^T`` only
    lowers eigenvalues), so the change is at most :math:`\max(\|u\|^2, \|v\|^2) \le p`. The
    add/remove bound of Wang (2018), *Revisiting differentially private linear regression: optimal and
    adaptive prediction & estimation in unbounded domain*, Algorithm 2, holds for substitution too.

    Examples
    --------
    >>> regression_eigen_sensitivity(3)
    3.0
    """
    return float(p)
