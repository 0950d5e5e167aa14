r"""DPBoots: the DP parametric bootstrap (Guo et al. 2022, Algorithm 2) with a truncated-Laplace draw that never stalls.

Algorithm 2 (Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional Data*, §4.1,
Supplement S4) repeats

i)-ii) draw :math:`\tilde s_0 = s_L - \varepsilon^*` with :math:`\varepsilon^*_j\overset{iid}{\sim}
       \mathrm{Laplace}(0, m)`, :math:`m=-d\log a/(n\epsilon_1)`, **conditioned on**
       :math:`\tilde s_0\in\mathrm{Range}(S_0)=\{s:\sum_j e^{s_j}\le1\}`;
iii)   :math:`\alpha^*=\mathrm{MLE}(\tilde s_0)`;
iv)-v) simulate :math:`\tilde D` of ``n`` records from :math:`\mathrm{Dirichlet}(\alpha^*)` and
       return :math:`\tilde\alpha=\mathrm{MLE}(S_0(\tilde D, a))` (the censored statistic, as §4.1's text says).

**Step i)-ii).** The paper draws by rejection, which accepts with probability
:math:`P(s_L-\varepsilon\in\mathrm{Range}(S_0))`; when :math:`s_L` lies many ``m`` outside the
range (a large threshold ``a`` censors many records and :math:`S_0(D,a)` itself leaves the range)
that probability is astronomically small and the sampler ran for days (Supplement S5). Here the
target, the density :math:`\propto\prod_j e^{-|\tilde s_j-s_{L,j}|/m}` on the convex set
:math:`\mathrm{Range}(S_0)`, is sampled by a Gibbs sampler whose every move is an *exact*
inverse-CDF draw of the target restricted to a line:

* coordinate moves: :math:`\tilde s_j` given the rest is a Laplace truncated to
  :math:`(-\infty, \log(1-\sum_{k\ne j}e^{\tilde s_k})]`;
* pair moves along :math:`e_j-e_k`: :math:`(\tilde s_j+t,\tilde s_k-t)` stays feasible for
  :math:`t` in a closed-form interval (a quadratic in :math:`e^t`), where the density is
  piecewise exponential with two kinks. These moves slide along the boundary of the range,
  where the mass concentrates when :math:`s_L` is far outside (coordinate moves alone would
  crawl: their steps are of size ``m`` while the spread along the boundary is of order
  :math:`\sqrt{m}`).

Each move leaves the target invariant, so chains started at the target's mode (the L1 projection
of :math:`s_L` onto the range, by water-filling) and run for ``sweeps`` sweeps give draws from
it; the ``B`` bootstrap replicates are independent chains advanced together (NumPy-vectorized).
Cost is ``sweeps * d**2`` vector operations, whatever the distance of :math:`s_L` from the range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .. import _validation as v
from .._core._dirichlet_release import LogMeanPart, select_part
from .._validation import owned
from ..exceptions import NoiseawareValueError
from ._mle import dirichlet_mle_from_stats

__all__ = [
    "DPBootsResult",
    "GammaCopulaPrior",
    "dpboots",
    "elicit_prior",
    "l1_projection",
    "p1_prior",
    "truncated_laplace_range",
]

_OWNER = "dpboots"
#: the Laplace tail below the coordinate's kink is cut this many scales away (mass e^-60)
_TAIL = 60.0


def l1_projection(s_l: Any) -> np.ndarray:
    r"""Mode of the truncated Laplace: the point of :math:`\mathrm{Range}(S_0)` nearest to ``s_l`` in L1.

    :math:`\tilde s_j=\min(s_{L,j},\theta)` with :math:`\theta` solving :math:`\sum_j e^{\min(s_{L,j},\theta)}=1`
    (water-filling; Lagrange conditions of :math:`\min\sum_j|s_{L,j}-\tilde s_j|` s.t.
    :math:`\sum_j e^{\tilde s_j}\le1`). Returns ``s_l`` itself when it is in the range. Batched over
    leading axes.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(l1_projection(np.array([0.0, 0.0])), 6)  # both parts equal: (log 1/2, log 1/2)
    array([-0.693147, -0.693147])
    >>> l1_projection(np.array([-3.0, 0.5])).round(6)  # the small part stays
    array([-3.      , -0.051069])
    """
    s = np.asarray(s_l, dtype=np.float64)
    inside = special.logsumexp(s, axis=-1, keepdims=True) <= 0
    lo = np.full((*s.shape[:-1], 1), -50.0)
    hi = s.max(axis=-1, keepdims=True)
    for _ in range(200):  # bisection on theta: f(theta) = sum exp(min(s, theta)) is increasing
        mid = 0.5 * (lo + hi)
        f = np.exp(np.minimum(s, mid)).sum(-1, keepdims=True)
        lo, hi = np.where(f > 1.0, lo, mid), np.where(f > 1.0, mid, hi)
    return np.asarray(np.where(inside, s, np.minimum(s, lo)))


def start_alpha(s_l: Any, upper: float = 500.0) -> np.ndarray:
    r"""A starting value for samplers of :math:`\alpha` given a released mean-log vector ``s_l``.

    The Dirichlet MLE (Minka's fixed point) at the L1 projection of ``s_l`` onto
    :math:`\mathrm{Range}(S_0)` (:func:`l1_projection`, the mode of the truncated Laplace), moved
    ``1e-3`` inside the range and clipped to ``[0.05, upper]``. Only a start for the chains, never an
    estimate; shared by :func:`noiseaware.dirichlet.fit` and :func:`noiseaware.dirichlet.dpmcmc`.
    """
    s = l1_projection(np.asarray(s_l, dtype=np.float64)) - 1e-3
    return np.clip(dirichlet_mle_from_stats(s).alpha, 0.05, upper)


def _log_int(slope: np.ndarray, length: np.ndarray) -> np.ndarray:
    """``log int_0^length exp(slope * u) du`` elementwise, stably (``-inf`` for empty segments)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sl = slope * length
        pos = sl + np.log(-np.expm1(-np.abs(sl))) - np.log(np.abs(slope))
        neg = np.log(-np.expm1(-np.abs(sl))) - np.log(np.abs(slope))
        out = np.where(slope > 0, pos, neg)
        out = np.where(slope == 0, np.log(length), out)
        return np.asarray(np.where(length > 0, out, -np.inf))


def _sample_in_segment(t1: np.ndarray, length: np.ndarray, slope: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse CDF of the density ``exp(slope * (t - t1))`` on ``[t1, t1 + length]``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        sl = slope * length
        # slope > 0: t = t1 + L + log(u + (1 - u) e^{-sL}) / s ; slope < 0: t = t1 + log1p(-u (1 - e^{sL})) / s
        pos = t1 + length + np.log(u + (1.0 - u) * np.exp(-sl)) / slope
        neg = t1 + np.log1p(-u * (-np.expm1(sl))) / slope
        out = np.where(slope > 0, pos, neg)
        out = np.where(slope == 0, t1 + u * length, out)
    return np.asarray(np.clip(out, t1, t1 + length))


def _line_draw(
    lo: np.ndarray, hi: np.ndarray, kinks: np.ndarray, weights: np.ndarray, m: float, rng: Any
) -> np.ndarray:
    r"""Exact draw of ``t`` on ``[lo, hi]`` from :math:`\propto\exp(-\sum_i w_i|t-\kappa_i|/m)` (two kinks).

    All arguments are arrays over chains (``kinks``/``weights`` with a trailing axis of 2).
    """
    k = np.sort(np.clip(kinks, lo[:, None], hi[:, None]), axis=-1)
    pts = np.concatenate([lo[:, None], k, hi[:, None]], axis=-1)  # (B, 4): three segments
    left, length = pts[:, :-1], np.diff(pts, axis=-1)
    mid = left + 0.5 * length
    # slope of the log-density on each segment, and its value at the segment's left end
    sign = np.sign(mid[:, :, None] - kinks[:, None, :])
    slope = -(weights[:, None, :] * sign).sum(-1) / m
    logf_left = -(weights[:, None, :] * np.abs(left[:, :, None] - kinks[:, None, :])).sum(-1) / m
    logmass = logf_left + _log_int(slope, length)
    g = logmass - np.log(-np.log(rng.uniform(size=logmass.shape)))  # Gumbel-max picks a segment
    seg = np.argmax(g, axis=-1)
    pick = np.arange(seg.size)
    return _sample_in_segment(left[pick, seg], length[pick, seg], slope[pick, seg], rng.uniform(size=seg.size))


def truncated_laplace_range(s_l: Any, scale: float, size: int, *, sweeps: int = 100, rng: Any = None) -> np.ndarray:
    r"""Draw :math:`s_L-\varepsilon`, :math:`\varepsilon_j\sim\mathrm{Laplace}(0,m)` in :math:`\mathrm{Range}(S_0)`.

    Step i)-ii) of Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional Data*, Algorithm
    2 without rejection (module docstring): ``size``
    independent Gibbs chains with exact coordinate and pair moves, started at
    :func:`l1_projection` and run for ``sweeps`` sweeps. Every draw satisfies
    :math:`\sum_j e^{\tilde s_j}\le1`.

    Parameters
    ----------
    s_l : array_like, shape (d,)
        The released statistic :math:`S_L(D, a)`.
    scale : float
        Laplace scale ``m``.
    size : int
        Number of draws (chains).
    sweeps : int
        Gibbs sweeps per chain (each: ``d`` coordinate moves and ``d(d-1)/2`` pair moves).
    rng : numpy.random.Generator or int, optional
        Random source (a seed or a Generator).

    Returns
    -------
    numpy.ndarray, shape (size, d)

    Examples
    --------
    >>> import numpy as np
    >>> s = truncated_laplace_range(np.array([0.2, 0.1, 0.3]), 1e-4, 500, rng=0)  # ~3000 scales outside
    >>> bool(np.all(np.exp(s).sum(1) <= 1.0))
    True
    """
    s_l = np.asarray(s_l, dtype=np.float64)
    m = float(scale)
    gen = np.random.default_rng(rng)
    d = s_l.size
    cur = np.repeat(l1_projection(s_l)[None, :], size, axis=0)
    cur = cur - 1e-12  # strictly inside
    zero_w = np.zeros((size, 2))
    zero_w[:, 0] = 1.0
    pairs = [(j, k) for j in range(d) for k in range(j + 1, d)]
    for _ in range(sweeps):
        for j in range(d):
            rest = np.exp(np.delete(cur, j, axis=1)).sum(1)
            hi = np.log1p(-np.minimum(rest, 1.0 - 1e-300))
            kink = np.full(size, s_l[j])
            lo = np.minimum(hi, kink) - _TAIL * m
            kinks = np.stack([kink, kink], axis=-1)
            cur[:, j] = _line_draw(lo, hi, kinks, zero_w, m, gen)
        for j, k in (pairs[i] for i in gen.permutation(len(pairs))):
            ej, ek = np.exp(cur[:, j]), np.exp(cur[:, k])
            c = 1.0 - (np.exp(cur).sum(1) - ej - ek)
            disc = np.sqrt(np.maximum(c * c - 4.0 * ej * ek, 0.0))
            lo = np.log(2.0 * ek / (c + disc))  # roots of ej y^2 - c y + ek = 0, y = e^t
            hi = np.log((c + disc) / (2.0 * ej))
            lo, hi = np.minimum(lo, 0.0), np.maximum(hi, 0.0)  # t = 0 (the current point) is feasible
            kinks = np.stack([s_l[j] - cur[:, j], cur[:, k] - s_l[k]], axis=-1)
            t = _line_draw(lo, hi, kinks, np.ones((size, 2)), m, gen)
            cur[:, j] += t
            cur[:, k] -= t
        # rounding can leave a point a hair outside: pull it back along the diagonal
        excess = special.logsumexp(cur, axis=1)
        cur = cur - np.maximum(excess, 0.0)[:, None]
    return cur


@dataclass(frozen=True)
class DPBootsResult:
    r"""Result of :func:`dpboots`.

    Attributes
    ----------
    alpha : numpy.ndarray, shape (B, d)
        Bootstrap draws :math:`\tilde\alpha` (rows are NaN where :math:`S_0(\tilde D,a)` left the range
        and had no MLE; counted in ``n_failed``).
    alpha_star : numpy.ndarray, shape (B, d)
        The intermediate :math:`\alpha^*=\mathrm{MLE}(\tilde s_0)`.
    s0_draws : numpy.ndarray, shape (B, d)
        The truncated-Laplace draws :math:`\tilde s_0`.
    part : LogMeanPart
        The release part used (``s_l``, ``n``, ``a``, ``scale``).
    n_failed : int
    """

    alpha: np.ndarray
    alpha_star: np.ndarray
    s0_draws: np.ndarray
    part: LogMeanPart
    n_failed: int

    @property
    def estimate(self) -> np.ndarray:
        r"""Point estimate: :math:`\mathrm{MLE}(\tilde s_0)` at the L1 projection of ``s_l``."""
        return dirichlet_mle_from_stats(l1_projection(self.part.s_l) - 1e-9).alpha

    @property
    def composition(self) -> np.ndarray:
        r"""Bootstrap draws of :math:`E[x\mid\alpha]=\alpha/\sum_j\alpha_j`, shape (B, d)."""
        return self.alpha / self.alpha.sum(-1, keepdims=True)


    @owned("DPBootsResult.interval")
    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        r"""Percentile interval of each :math:`\alpha_j` at ``level`` (NaN rows ignored)."""
        level = v.open_unit("level", level)
        q = np.nanquantile(self.alpha, [(1 - level) / 2, (1 + level) / 2], axis=0)
        return q[0], q[1]


@owned(_OWNER)
def dpboots(
    release: Any,
    B: int = 1000,
    *,
    part: int | None = None,
    sweeps: int = 100,
    censor: bool = True,
    rng: Any = None,
    chunk: int = 2_000_000,
) -> DPBootsResult:
    r"""DP parametric bootstrap of :math:`\alpha` (Guo et al. 2022, Algorithm 2) from a ``dirichlet_logmean`` release.

    Parameters
    ----------
    release : Release
        A ``dirichlet_logmean`` release (:func:`noiseaware.privatize`); ``s_l``, ``n``, ``a`` and
        the Laplace scale :math:`m=-d\log a/(n\epsilon_1)` are read from it.
    B : int
        Bootstrap replicates.
    part : int, optional
        Which part of a split release (default: the last, ``D2``; ``0`` is ``D1``).
    sweeps : int
        Gibbs sweeps of the truncated-Laplace draw (:func:`truncated_laplace_range`).
    censor : bool
        Step v) on :math:`S_0(\tilde D, a)` (default, §4.1's text) or on the uncensored
        :math:`S_0(\tilde D)` (Algorithm 2 as printed).
    rng : numpy.random.Generator or int, optional
        Random source (a seed or a Generator).
    chunk : int
        Records simulated at once in step iv) (memory bound).

    Returns
    -------
    DPBootsResult

    Raises
    ------
    TypeError, ValueError
        For a release that is not ``dirichlet_logmean``, or bad settings.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=2000)
    >>> rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(1))
    >>> res = dpboots(rel, B=200, rng=2)
    >>> res.alpha.shape
    (200, 3)
    >>> bool(np.all(np.exp(res.s0_draws).sum(1) <= 1))
    True
    """
    p = select_part(release, part)
    B = v.integer("B", B, minimum=1)
    sweeps = v.integer("sweeps", sweeps, minimum=1)
    chunk = v.integer("chunk", chunk, minimum=1)
    if not isinstance(censor, bool):
        raise NoiseawareValueError(f"{_OWNER}: censor must be True or False; got censor={censor!r}.")
    gen = np.random.default_rng(rng)
    s0 = truncated_laplace_range(p.s_l, p.scale, B, sweeps=sweeps, rng=gen)
    # strictly inside for the MLE (the draws may touch the boundary, where alpha* is infinite)
    s0_fit = s0 - np.maximum(special.logsumexp(s0, axis=1) + 1e-9, 0.0)[:, None]
    alpha_star = dirichlet_mle_from_stats(s0_fit).alpha
    stats = _simulate_stats(alpha_star, p.n, p.a if censor else 0.0, gen, chunk)
    ok = special.logsumexp(stats, axis=1) < 0
    alpha = np.full_like(alpha_star, np.nan)
    if np.any(ok):
        alpha[ok] = dirichlet_mle_from_stats(stats[ok]).alpha
    return DPBootsResult(alpha=alpha, alpha_star=alpha_star, s0_draws=s0, part=p, n_failed=int(np.sum(~ok)))


def _simulate_stats(alpha: np.ndarray, n: int, a: float, gen: np.random.Generator, chunk: int) -> np.ndarray:
    """``S_0(D~, a)`` for one data set of ``n`` records from ``Dirichlet(alpha_b)`` per row ``b``."""
    B, d = alpha.shape
    out = np.zeros((B, d))
    per = max(1, chunk // max(1, n * d))
    log_a = math.log(a) if a > 0 else -np.inf
    for start in range(0, B, per):
        al = alpha[start : start + per]
        g = gen.standard_gamma(al[:, None, :], size=(al.shape[0], n, d))
        with np.errstate(divide="ignore"):
            logx = np.log(g) - np.log(g.sum(-1, keepdims=True))
        out[start : start + per] = np.maximum(logx, log_a).mean(axis=1)
    return out


@dataclass(frozen=True)
class GammaCopulaPrior:
    r"""Data-split prior on :math:`\alpha` (Guo et al. 2022, §4.2.1, Table 1): Gamma marginals, optional normal copula.

    ``p3``: independent :math:`\alpha_j\sim\mathrm{Gamma}(\hat v_j,\hat w_j)` (shape, rate);
    ``p4``: the same marginals joined by a Gaussian copula with correlation ``corr``,

    .. math:: \log\pi(\alpha)=\sum_j\log\mathrm{Gamma}(\alpha_j;\hat v_j,\hat w_j)
              -\tfrac12 z^T(R^{-1}-I)z-\tfrac12\log\det R,\qquad z_j=\Phi^{-1}(F_j(\alpha_j)).

    ``p1`` is the special case ``shape = 1``, ``rate = 0.1``, ``corr = None``.

    Attributes
    ----------
    shape, rate : numpy.ndarray, shape (d,)
    corr : numpy.ndarray, shape (d, d), or None
        Copula correlation (``None``: independent marginals).
    """

    shape: np.ndarray
    rate: np.ndarray
    corr: np.ndarray | None = None

    @property
    def d(self) -> int:
        """Number of parts."""
        return int(np.asarray(self.shape).size)

    def sample(self, size: int, rng: Any = None) -> np.ndarray:
        """``size`` draws, shape ``(size, d)``."""
        from scipy import stats

        gen = np.random.default_rng(rng)
        if self.corr is None:
            return np.asarray(gen.gamma(self.shape, 1.0 / self.rate, size=(size, self.d)))
        z = gen.multivariate_normal(np.zeros(self.d), self.corr, size=size)
        return np.asarray(stats.gamma.ppf(stats.norm.cdf(z), self.shape, scale=1.0 / self.rate))

    def logpdf(self, alpha: Any) -> np.ndarray:
        """Log prior density at ``alpha`` (shape ``(..., d)``), in NumPy/SciPy."""
        from scipy import stats

        al = np.asarray(alpha, dtype=np.float64)
        out = stats.gamma.logpdf(al, self.shape, scale=1.0 / self.rate).sum(-1)
        if self.corr is not None:
            z = stats.norm.ppf(stats.gamma.cdf(al, self.shape, scale=1.0 / self.rate))
            prec = np.linalg.inv(self.corr) - np.eye(self.d)
            out = out - 0.5 * np.einsum("...i,ij,...j->...", z, prec, z) - 0.5 * np.linalg.slogdet(self.corr)[1]
        return np.asarray(out)


#: Guo et al. (2022) Table 1, p1: independent Gamma(shape 1, rate 0.1)
def p1_prior(d: int) -> GammaCopulaPrior:
    """Prior p1 of Guo et al. (2022) Table 1: independent ``Gamma(1, 0.1)`` (shape, rate) for each of ``d`` parts."""
    return GammaCopulaPrior(shape=np.ones(d), rate=np.full(d, 0.1))


@owned("elicit_prior")
def elicit_prior(
    release: Any, kind: str = "p4", *, B: int = 2000, sweeps: int = 100, rng: Any = None
) -> GammaCopulaPrior:
    r"""Priors p3 / p4 of Guo et al. (2022) §4.2.1 from the ``D1`` part of a split release.

    Draws a large sample from p2 = DPBoots(:math:`S_L(D_1,a)`) (:func:`dpboots` on part 0),
    fits Gamma(shape, rate) to each coordinate by maximum likelihood (``p3``), and for ``p4`` the
    correlation of the normal scores :math:`\Phi^{-1}(\hat F_j(\alpha_j))` (Gaussian copula).

    Raises
    ------
    ValueError
        If the release has no ``D1`` part (privatize with ``split=...``) or ``kind`` is not p3/p4.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=4000)
    >>> rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, split=0.25, rng=np.random.default_rng(1))
    >>> pr = elicit_prior(rel, "p4", B=300, rng=2)
    >>> pr.corr.shape
    (3, 3)
    """
    from scipy import stats

    owner = "elicit_prior"
    kind = v.choice("kind", kind, ("p3", "p4"))
    from .._core._dirichlet_release import logmean_parts

    if len(logmean_parts(release)) != 2:
        raise NoiseawareValueError(
            f"{owner}: prior {kind} is elicited from D1, but the release has no split; privatize with "
            "split=... (Guo et al. 2022, §4.2: n1 = 0.25 n), or use prior='p1'."
        )
    draws = dpboots(release, B, part=0, sweeps=sweeps, rng=rng).alpha
    draws = draws[np.all(np.isfinite(draws), axis=1)]
    shape, rate = np.zeros(draws.shape[1]), np.zeros(draws.shape[1])
    for j in range(draws.shape[1]):
        k, _, sc = stats.gamma.fit(draws[:, j], floc=0.0)
        shape[j], rate[j] = k, 1.0 / sc
    corr = None
    if kind == "p4":
        u = stats.gamma.cdf(draws, shape, scale=1.0 / rate)
        z = stats.norm.ppf(np.clip(u, 1e-12, 1 - 1e-12))
        corr = np.corrcoef(z.T)
    return GammaCopulaPrior(shape=shape, rate=rate, corr=corr)
