r"""Synthetic data from a ``dpcopula`` release (Li et al. 2014) and its noise-aware version.

* :func:`synthesize` with a :class:`~noiseaware.Release` -- DPCopula's Algorithm 3: one point
  estimate :math:`\tilde P` of the copula correlation (Algorithm 5 for Kendall, the clipped and
  repaired Algorithm 2 average for MLE, Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for
  Gaussian Copula Correlations* MLE-NN for median pairs) and one margin per
  attribute (the noisy histogram clipped at 0 and normalised); rows
  :math:`Z \sim N(0, \tilde P)`, :math:`x_j = \tilde F_j^{-1}(\Phi(Z_j))` (Algorithm 3 prints the
  density :math:`\varphi`; the probability integral transform needs the CDF :math:`\Phi`).
* :func:`fit_dpcopula` + :func:`synthesize` with the fit -- noise-aware synthesis: ``M`` data sets,
  each from one joint posterior draw of the correlation (Bayes-NA, Wang et al. (2026), on the release's
  ``median_pairs`` component) and of every margin's cell probabilities (:func:`margin_posterior`).
* :func:`combine_synthetic` -- the combining rules for ``M`` synthetic data sets (Raghunathan,
  Reiter & Rubin 2003 for fully synthetic data; Reiter 2003 for partially synthetic data).

**Inverse CDF of a margin.** With cell probabilities :math:`p_{j1..jK}` and
:math:`F_{jk} = \sum_{l\le k} p_{jl}` (monotone by construction), :math:`u` falls in the cell
:math:`k` with :math:`F_{j,k-1} \le u < F_{jk}`; for an ``integers`` or ``values`` domain the value
is that cell's, for an ``interval`` domain it is placed linearly inside the cell,
:math:`a + (k + (u - F_{j,k-1})/p_{jk})\,w` (the inverse of the piecewise-linear CDF).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._domains import Domain
from .._engine import FitResult, SamplingSettings, check_settings
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..release import Release

__all__ = [
    "DPCopulaFit",
    "SyntheticInferenceResult",
    "combine_synthetic",
    "dpcopula_correlation",
    "dpcopula_margins",
    "fit_dpcopula",
    "margin_posterior",
    "synthesize",
    "synthesize_hybrid",
]

_OWNER = "synthesize"


# ----------------------------------------------------------------------------- release readers
def _check(owner: str, release: Any) -> Release:
    if not isinstance(release, Release) or release.statistic != "dpcopula":
        raise NoiseawareTypeError(
            f"{owner}: needs a 'dpcopula' Release (privatize(..., statistic='dpcopula'), or 'dpcopula_hybrid' "
            "with hybrid=...) or a DPCopulaFit; "
            f"got {type(release).__name__}"
            + (f" of statistic {release.statistic!r}" if isinstance(release, Release) else "")
            + "."
        )
    return release


def _domains(release: Release) -> list[Domain]:
    return [Domain.from_dict(d, f"metadata.domains[{j}]") for j, d in enumerate(release.metadata["domains"])]


def _split(release: Release) -> list[np.ndarray]:
    bins = [int(b) for b in release.metadata["bins"]]
    return np.split(release.values.astype(np.int64), np.cumsum(bins)[:-1])


def dpcopula_margins(release: Release) -> list[np.ndarray]:
    """Cell probabilities of each margin: the noisy histogram clipped at 0, normalised (uniform if all 0).

    Examples
    --------
    >>> import numpy as np, noiseaware as na, pandas as pd
    >>> df = pd.DataFrame({"a": [0, 1, 1, 2] * 50, "b": [1, 0, 2, 2] * 50})
    >>> rel = na.privatize(df, statistic="dpcopula", epsilon=5.0, domains={"a": range(3), "b": range(3)},
    ...                    rng=np.random.default_rng(0))
    >>> [p.round(1).tolist() for p in dpcopula_margins(rel)]
    [[0.3, 0.5, 0.3], [0.2, 0.2, 0.5]]
    """
    rel = _check("dpcopula_margins", release)
    out = []
    for h in _split(rel):
        c = np.maximum(h, 0).astype(np.float64)
        out.append(c / c.sum() if c.sum() > 0 else np.full(c.size, 1.0 / c.size))
    return out


def _eigen_repair(P: np.ndarray, floor: float = 1e-6) -> np.ndarray:
    """Algorithm 5 step 3: negative eigenvalues to ``floor``, rescaled to a unit diagonal."""
    P = (P + P.T) / 2.0
    np.fill_diagonal(P, 1.0)
    w, q = np.linalg.eigh(P)
    if w.min() <= floor:
        P = (q * np.maximum(w, floor)) @ q.T
        d = 1.0 / np.sqrt(np.diag(P))
        P = P * d[:, None] * d[None, :]
        np.fill_diagonal(P, 1.0)
    return P


def dpcopula_correlation(release: Release) -> np.ndarray:
    r"""Point estimate :math:`\tilde P` of the copula correlation from a ``dpcopula`` release.

    ``kendall``: :func:`~noiseaware.copula.li_kendall` (Algorithm 5, :math:`\sin(\pi\tilde\tau/2)`
    and the eigenvalue repair); ``mle``: the noisy averages clipped to ``[-1, 1]`` and repaired the
    same way; ``median``: the MLE-NN of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference
    for Gaussian Copula Correlations* (:func:`~noiseaware.copula.mle_nn`).

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).multivariate_normal([0, 0], [[1, .7], [.7, 1]], size=3000)
    >>> rel = na.privatize(x, statistic="dpcopula", epsilon=4.0, domains=[{"lower": -5.0, "upper": 5.0,
    ...                    "bins": 40}] * 2, rng=np.random.default_rng(1))
    >>> bool(abs(dpcopula_correlation(rel)[0, 1] - 0.7) < 0.05)
    True
    """
    rel = _check("dpcopula_correlation", release)
    comp = rel.components[0]
    corr = rel.metadata["correlation"]
    if corr == "kendall":
        from ._baselines import li_kendall

        return li_kendall(comp)
    if corr == "median":
        from ._mle import mle_nn

        return mle_nn(comp).R
    m = int(comp.metadata["p"])
    P = np.eye(m)
    for (j, k), r in zip(comp.metadata["pairs"], np.clip(comp.values, -1.0, 1.0).tolist(), strict=True):
        P[j, k] = P[k, j] = r
    return _eigen_repair(P)


# ----------------------------------------------------------------------------- Algorithm 3
def _columns_out(
    codes: list[np.ndarray], within: np.ndarray, doms: list[Domain], dtypes: Sequence[str], names: Sequence[str]
) -> Any:
    import pandas as pd

    out: dict[str, Any] = {}
    for j, (c, d, dt) in enumerate(zip(names, doms, dtypes, strict=True)):
        vals = d.decode(codes[j], within[:, j] if d.kind == "interval" else None)
        if d.kind == "values":
            if dt == "category":
                out[c] = pd.Categorical.from_codes(codes[j], categories=list(d.values))
                continue
            try:
                out[c] = vals.astype(np.dtype(dt)) if dt != "object" else vals
            except (TypeError, ValueError):
                out[c] = vals
        elif d.kind == "integers":
            out[c] = _as_dtype(pd, vals, dt, "int64")
        else:
            out[c] = _as_dtype(pd, vals, dt, "float64") if dt.lower().startswith("float") else vals.astype(np.float64)
    return pd.DataFrame(out)


def _as_dtype(pd: Any, vals: np.ndarray, dt: str, default: str) -> Any:
    """``vals`` as the recorded dtype (NumPy or pandas, e.g. ``Int64``), else as ``default``."""
    try:
        return pd.array(vals, dtype=dt) if dt[:1].isupper() else vals.astype(np.dtype(dt))
    except (TypeError, ValueError):
        return vals.astype(default)


def _cell_of(cdf: np.ndarray, u: np.ndarray, grid: int = 1 << 14) -> np.ndarray:
    """``searchsorted(cdf, u, side="right")`` capped at ``K - 1``, by a guide table (Devroye 1986, §III.2.4).

    ``guide[g]`` is the answer for ``u = g / grid``; a draw starts there and steps forward while
    ``cdf[k] <= u`` (a few steps on average), which is several times faster than a binary search
    over random queries. Exact: the result equals the binary search (tested).
    """
    K = cdf.size
    guide = np.minimum(np.searchsorted(cdf, np.arange(grid) / grid, side="right"), K - 1)
    k = guide[np.minimum((u * grid).astype(np.int64), grid - 1)]
    todo = np.nonzero(cdf[k] <= u)[0]
    while todo.size:
        k[todo] += 1
        todo = todo[(k[todo] < K - 1) & (cdf[k[todo]] <= u[todo])]
    return k


def _sample(
    P: np.ndarray,
    probs: list[np.ndarray],
    doms: list[Domain],
    dtypes: Sequence[str],
    names: Sequence[str],
    n: int,
    rng: np.random.Generator,
) -> Any:
    """Algorithm 3 (with Phi): n rows from the Gaussian copula with correlation P and the given margins."""
    codes, within = _draw(P, probs, doms, n, rng)
    return _columns_out(codes, within, doms, dtypes, names)


def _draw(
    P: np.ndarray, probs: list[np.ndarray], doms: list[Domain], n: int, rng: np.random.Generator
) -> tuple[list[np.ndarray], np.ndarray]:
    """Cell codes and within-cell positions of ``n`` Algorithm 3 rows (:func:`_sample` without the frame)."""
    from scipy import special

    m = P.shape[0]
    w, q = np.linalg.eigh((P + P.T) / 2.0)
    root = q * np.sqrt(np.maximum(w, 0.0))  # root @ root.T == P (also for a singular P)
    z = rng.standard_normal((n, m)) @ root.T
    u = special.ndtr(z)
    codes: list[np.ndarray] = []
    within = np.zeros((n, m))
    for j, p in enumerate(probs):
        cdf = np.cumsum(p)
        cdf /= cdf[-1]
        k = _cell_of(cdf, u[:, j])
        codes.append(k)
        if doms[j].kind == "interval":
            lo = np.where(k > 0, cdf[np.maximum(k - 1, 0)], 0.0)
            pk = cdf[k] - lo
            within[:, j] = np.clip((u[:, j] - lo) / np.where(pk > 0, pk, 1.0), 0.0, np.nextafter(1.0, 0.0))
    return codes, within


def synthesize(source: Any, n: int, *, seed: Any = None, draws: int | None = None) -> Any:
    r"""Synthetic records from a ``dpcopula`` release (DPCopula) or a :class:`DPCopulaFit` (noise-aware).

    With a release: Algorithm 3 of Li, Xiong & Jiang (2014), *Differentially Private Synthesization of
    Multi-Dimensional Data using Copula Functions* — draw
    :math:`Z \sim N(0, \tilde P)` (:func:`dpcopula_correlation`), :math:`U_j = \Phi(Z_j)`, and
    :math:`x_j = \tilde F_j^{-1}(U_j)` with :math:`\tilde F_j` the monotone CDF of the clipped
    noisy histogram (:func:`dpcopula_margins`; module docstring for the inverse). With a fit: ``draws``
    data sets, the ``s``-th from the ``s``-th of ``draws`` evenly spaced joint posterior draws of
    :math:`(P, p_1, \dots, p_m)`. Both are post-processing of the release: no budget is spent.

    Parameters
    ----------
    source : Release or DPCopulaFit
        What to synthesize from.
    n : int
        Rows per synthetic data set.
    seed : int or numpy.random.Generator, optional
        Randomness of the synthesis (not privacy noise).
    draws : int, optional
        Fit only: number of synthetic data sets ``M`` (default 1 with a release, refused there
        when > 1; default 10 with a fit, at most the fit's number of posterior draws).

    Returns
    -------
    pandas.DataFrame, or list of DataFrame (with a fit)
        The release's column names; integer, float, string and categorical columns keep the
        dtype recorded in the release.

    Raises
    ------
    TypeError
        If ``source`` is neither a ``dpcopula`` release nor a :class:`DPCopulaFit`.
    ValueError
        If ``n`` is not in ``[1, 10**7]`` (``MAX_SIMULATED_ROWS``), ``seed`` is a negative
        integer, or ``draws`` is out of range (``TypeError`` for a ``seed`` of another type).

    Examples
    --------
    >>> import numpy as np, pandas as pd, noiseaware as na
    >>> df = pd.DataFrame({"age": np.arange(400) % 90, "sex": np.where(np.arange(400) % 3, "f", "m")})
    >>> rel = na.privatize(df, statistic="dpcopula", epsilon=1.0, domains={"age": range(0, 90), "sex": ["f", "m"]},
    ...                    rng=np.random.default_rng(0))
    >>> syn = synthesize(rel, 5, seed=1)
    >>> list(syn.columns), str(syn.dtypes["age"]), sorted(set(syn["sex"])) <= ["f", "m"]
    (['age', 'sex'], 'int64', True)
    """
    n = v.integer(_OWNER, "n", n, minimum=1, maximum=v.MAX_SIMULATED_ROWS)
    rng = v.generator(_OWNER, "seed", seed)
    if isinstance(source, DPCopulaFit):
        m_draws = 10 if draws is None else v.integer(_OWNER, "draws", draws, minimum=1)
        total = source.correlation.shape[0]
        if m_draws > total:
            v.fail(_OWNER, "draws", f"must be at most the fit's {total} posterior draws", m_draws)
        idx = np.linspace(0, total - 1, m_draws).round().astype(int)
        return [
            _sample(
                source.correlation[s],
                [p[s] for p in source.margins],
                list(source.domains),
                source.dtypes,
                source.columns,
                n,
                rng,
            )
            for s in idx
        ]
    if isinstance(source, Release) and source.statistic == "dpcopula_hybrid":
        if draws not in (None, 1):
            v.fail(_OWNER, "draws", "must be 1 (or omitted) for a release", draws)
        return synthesize_hybrid(source, n, rng)
    rel = _check(_OWNER, source)
    if draws not in (None, 1):
        v.fail(
            _OWNER,
            "draws",
            "must be 1 (or omitted) for a release: DPCopula has one point estimate; use fit_dpcopula(...) for "
            "posterior draws",
            draws,
        )
    return _sample(
        dpcopula_correlation(rel),
        dpcopula_margins(rel),
        _domains(rel),
        [str(t) for t in rel.metadata["dtypes"]],
        [str(c) for c in rel.metadata["columns"]],
        n,
        rng,
    )


# ----------------------------------------------------------------------------- margins: exact DA
#: Grid of the hierarchical prior on ``a0`` (``prior="hierarchical"``): 41 values, log-uniform on [1e-3, 10].
A0_GRID = tuple(float(x) for x in np.logspace(-3.0, 1.0, 41))
#: Log of the relative weight below which the tails of a cell's posterior over its true count are cut.
_CUT = 80.0


def _nb_logpmf(c: np.ndarray, a0: float, beta: float) -> np.ndarray:
    """Log-pmf P(c) of the negative binomial c ~ Poisson(lambda), lambda ~ Gamma(a0, rate beta)."""
    from scipy import special

    return (
        special.gammaln(a0 + c)
        - special.gammaln(a0)
        - special.gammaln(c + 1.0)
        + a0 * math.log(beta / (beta + 1.0))
        - c * math.log1p(beta)
    )


def _count_posterior(y: np.ndarray, la: float, a0: float, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Per cell: window start, log weights of c = start..start+L-1 (unnormalised), log normaliser.

    The weight of ``c`` is :math:`P_{NB}(c)\,\alpha^{|y-c|}`. The window keeps every ``c`` whose
    weight is within ``exp(-80)`` of the largest possible and bounds what it leaves out: above
    :math:`\max(y, \text{NB mode}, c_1)`, :math:`c_1` where :math:`(a_0+c)/(c+1) \le \alpha^{-1/2}`,
    successive weights fall at least by :math:`\alpha^{1/2}`, and below ``y - W_lo`` they are at
    most the NB's largest value on ``[0, y]`` times :math:`\alpha^{W_{lo}}`.
    """
    yc = np.maximum(y, 0).astype(np.float64)
    mode = max(0.0, math.floor((a0 - 1.0) / beta)) if a0 > 1.0 else 0.0
    top = np.minimum(yc, mode)  # where the NB is largest on [0, y]
    drop = np.maximum(_nb_logpmf(top, a0, beta) - _nb_logpmf(yc, a0, beta), 0.0)
    lo = np.maximum(yc - np.ceil((_CUT + drop) / -la), 0.0)
    # above c1 the NB ratio (a0 + c)/(c + 1) is below alpha**-0.5, so successive weights fall by alpha**0.5
    s = math.exp(-la / 2.0)
    c1 = max(0.0, (a0 - s) / (s - 1.0))
    start = np.maximum(yc, max(mode, c1))
    hi = start + math.ceil((_CUT + 10.0) / (-la / 2.0))
    L = int(np.max(hi - lo)) + 1
    c = lo[:, None] + np.arange(L)[None, :]
    logw = _nb_logpmf(c, a0, beta) + la * np.abs(y.astype(np.float64)[:, None] - c)
    logw = np.where(c <= hi[:, None], logw, -np.inf)
    mx = logw.max(axis=1, keepdims=True)
    lse = (mx + np.log(np.exp(logw - mx).sum(axis=1, keepdims=True)))[:, 0]
    return lo, logw, lse


def margin_posterior(
    noisy: Any,
    alpha: float,
    *,
    n: int | None = None,
    draws: int = 100,
    prior: float | str = 0.5,
    burn: int = 200,
    thin: int = 5,
    seed: Any = None,
) -> np.ndarray:
    r"""Independent exact posterior draws of a histogram's cell probabilities given its noisy counts.

    Model (one margin, ``K`` cells): :math:`\pi \sim \mathrm{Dirichlet}(a_0\mathbf 1)`, true counts
    :math:`c \mid \pi \sim \mathrm{Multinomial}(N, \pi)`, released :math:`y_k = c_k + e_k`,
    :math:`e_k` iid two-sided geometric with :math:`P(e)\propto\alpha^{|e|}`. It is written in its
    Poisson-Gamma form, :math:`\lambda_k \sim \mathrm{Gamma}(a_0, \beta)` iid,
    :math:`c_k \sim \mathrm{Poisson}(\lambda_k)`, :math:`\pi = \lambda/\sum\lambda` — the same
    Dirichlet prior and the same :math:`\pi \mid c \sim \mathrm{Dirichlet}(a_0 + c)`, with the
    total :math:`N` left free (the public ``n`` only sets :math:`\beta = a_0K/n`, the prior mean of
    :math:`\sum\lambda`). With :math:`\lambda` integrated out the true counts are independent
    negative binomials, so given ``y`` the cells are independent and

    .. math:: P(c_k \mid y_k, a_0) \propto \frac{\Gamma(a_0+c_k)}{\Gamma(a_0)\,c_k!}
              (1+\beta)^{-c_k}\,\alpha^{|y_k-c_k|},

    a 1-D law drawn by inverting its CDF on a window that leaves out less than
    :math:`e^{-80}` of relative weight; then :math:`\lambda_k \mid c_k \sim
    \mathrm{Gamma}(a_0+c_k, \beta+1)` and :math:`\pi = \lambda/\sum\lambda`. Draws are independent
    (no Markov chain, no burn-in, no sticking at small :math:`a_0`).

    ``prior="hierarchical"``: :math:`a_0` gets its own prior, uniform on the 41-point log grid
    :data:`A0_GRID` (:math:`10^{-3}` to 10); its posterior on the grid is exact (the product over
    cells of the windowed sums above), and each draw first draws :math:`a_0`. The data then choose
    how many pseudo-records the prior spreads over the cells — few when most cells look empty.

    Parameters
    ----------
    noisy : array of int, shape (K,)
        The released noisy counts.
    alpha : float
        The geometric noise parameter ``exp(-1/scale)`` of the release.
    n : int, optional
        Public number of records (sets ``beta``); default ``max(sum(noisy), K)``.
    draws : int
        Number of independent draws.
    prior : float or "hierarchical"
        Dirichlet concentration :math:`a_0` per cell, or ``"hierarchical"``.
    burn, thin : int
        Accepted for compatibility with the former Gibbs sampler (validated, not used: the
        draws are independent).
    seed : int or Generator, optional
        Randomness.

    Returns
    -------
    ndarray, shape (draws, K)
        Draws of :math:`\pi`.

    Raises
    ------
    ValueError
        For bad counts, ``alpha`` outside (0, 1) or non-positive settings.

    Examples
    --------
    >>> pi = margin_posterior([480, 20, 510], alpha=0.5, draws=50, seed=0)
    >>> pi.shape, bool(abs(pi[:, 1].mean() - 0.02) < 0.01)
    ((50, 3), True)
    >>> margin_posterior([480, 20, 510, -3, 1, 0], alpha=0.5, draws=4, prior="hierarchical", seed=0).shape
    (4, 6)
    """
    owner = "margin_posterior"
    y = v.integer_array(owner, "noisy", noisy).ravel()
    if y.size < 1:
        v.fail(owner, "noisy", "must hold at least one count", y.tolist())
    a = v.open_unit(owner, "alpha", alpha)
    draws = v.integer(owner, "draws", draws, minimum=1)
    v.integer(owner, "burn", burn, minimum=0)
    v.integer(owner, "thin", thin, minimum=1)
    if isinstance(prior, str):
        v.choice(owner, "prior", prior, ("hierarchical",))
        grid = A0_GRID
    else:
        grid = (v.positive(owner, "prior", prior),)
    K = y.size
    total = max(int(np.maximum(y, 0).sum()), K) if n is None else v.integer(owner, "n", n, minimum=1)
    rng = v.generator(owner, "seed", seed)
    la = math.log(a)
    posts = [_count_posterior(y, la, a0, a0 * K / total) for a0 in grid]
    logml = np.array([float(p[2].sum()) for p in posts])
    w = np.exp(logml - logml.max())
    pick = rng.choice(len(grid), size=draws, p=w / w.sum())
    out = np.empty((draws, K))
    for gi in np.unique(pick):
        rows = np.nonzero(pick == gi)[0]
        lo, logw, lse = posts[gi]
        cdf = np.cumsum(np.exp(logw - lse[:, None]), axis=1)
        u = rng.random((K, rows.size))
        idx = np.array([np.searchsorted(cdf[k], u[k], side="right") for k in range(K)]).T
        c = lo[None, :] + np.minimum(idx, cdf.shape[1] - 1)
        # log Gamma(a) draws as log Gamma(a + 1) + log(U)/a: no underflow to 0 at tiny shapes
        shape = grid[gi] + c
        lg = np.log(rng.gamma(shape + 1.0, 1.0)) + np.log(rng.random(shape.shape)) / shape
        lam = np.exp(lg - lg.max(axis=1, keepdims=True))
        out[rows] = lam / lam.sum(axis=1, keepdims=True)
    return out


# ----------------------------------------------------------------------------- the fit
class DPCopulaFit(FitResult):
    """Joint posterior draws of a ``dpcopula`` release's copula (returned by :func:`fit_dpcopula`).

    An ArviZ ``InferenceData`` (a :class:`noiseaware.FitResult`) holding the Bayes-NA fit's groups
    (``R``), so ``az.summary(fit)``, ``summary()``, ``interval()``, ``plot()`` and ``diagnostics``
    describe the NUTS run; the margins' exact draws are attributes.

    Attributes
    ----------
    correlation : ndarray, shape (S, m, m)
        Posterior draws of the copula correlation (Bayes-NA on the ``median_pairs`` component).
    margins : tuple of ndarray, each (S, K_j)
        Posterior draws of each margin's cell probabilities (:func:`margin_posterior`), paired
        draw by draw with ``correlation`` (the two posteriors are independent: disjoint noise).
    columns, dtypes : tuple of str
    domains : tuple of Domain
    release : Release
    copula_fit : CopulaFit
        The Bayes-NA fit, with its diagnostics (``copula_fit.summary()``).
    settings : SamplingSettings or None
        The resolved sampler settings.
    """

    default_var = "R"

    def __init__(
        self,
        idata: Any = None,
        /,
        *,
        correlation: np.ndarray,
        margins: tuple[np.ndarray, ...],
        columns: tuple[str, ...],
        dtypes: tuple[str, ...],
        domains: tuple[Domain, ...],
        release: Release,
        copula_fit: Any,
        settings: SamplingSettings | None = None,
        **groups: Any,
    ) -> None:
        super().__init__(idata, settings=settings, **groups)
        self.correlation = correlation
        self.margins = tuple(margins)
        self.columns = tuple(columns)
        self.dtypes = tuple(dtypes)
        self.domains = tuple(domains)
        self.release = release
        self.copula_fit = copula_fit


def fit_dpcopula(
    release: Release,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    margin_prior: float = 0.5,
) -> DPCopulaFit:
    r"""Noise-aware posterior of a ``dpcopula`` release made with ``correlation="median"``.

    The correlation posterior is the Bayes-NA of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian
    Inference for Gaussian Copula Correlations* (:func:`noiseaware.copula.fit`, NumPyro NUTS,
    LKJ(1) prior, the composite likelihood of eq. 18) on the release's ``median_pairs``
    component; each margin's posterior is :func:`margin_posterior` (Dirichlet prior, exact data
    augmentation over the geometric noise). The noises of the components are independent, so the
    joint posterior is the product; draws are paired by index. Pure post-processing.

    Parameters
    ----------
    release : Release
        A ``dpcopula`` release with ``metadata.correlation == "median"``.
    chains, draws, warmup : int
        NUTS chains, kept draws per chain and warmup iterations per chain of the Bayes-NA fit
        (the package's one sampling convention); ``S = chains * draws`` joint draws are kept,
        and each margin's posterior gets as many.
    seed : int, optional
        Seed of the NUTS fit (the margins' chains use ``seed + 1``); drawn from the OS when
        omitted and recorded in ``settings.seed``.
    progressbar : bool
        Show NUTS progress.
    target_accept : float, optional
        NUTS target acceptance probability of the Bayes-NA fit (default 0.8).
    check_mixing : bool
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) on poor mixing of the Bayes-NA fit.
    margin_prior : float
        Dirichlet concentration ``a0`` per cell (default 0.5, Jeffreys). On wide domains whose tails
        are empty the tails' posterior mass is set largely by this prior (the noise cannot tell 0
        from a few records per cell): in the coverage study's release (K = 100, n = 2000,
        alpha = 0.8) the posterior mean variance of the margin was 334, 285, 221 and 190 for
        ``a0`` = 1, 0.5, 0.2, 0.1 against 224 in the data, and the 20-copy slope interval covered
        the confidential slope 87% ± 5% at 0.5 and 93% ± 4% at 0.1 (45 replications,
        docs/reproduction.md): use 0.1-0.2 for wide stated domains with thin tails. The draws are
        independent and exact for any ``a0`` (:func:`margin_posterior`).

    Returns
    -------
    DPCopulaFit

    Raises
    ------
    TypeError
        If ``release`` is not a ``dpcopula`` release.
    ValueError
        If its correlations are not a ``median_pairs`` component (Kendall and MLE releases have no
        noise-aware likelihood here: use :func:`synthesize` on the release for DPCopula's point
        estimate), or for bad settings.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).multivariate_normal([0, 0], [[1, .5], [.5, 1]], size=500)
    >>> rel = na.privatize(x, statistic="dpcopula", epsilon=2.0, correlation="median",
    ...                    domains=[{"lower": -4.0, "upper": 4.0, "bins": 20}] * 2, rng=np.random.default_rng(1))
    >>> fit = fit_dpcopula(rel, chains=1, draws=40, warmup=100, seed=0, check_mixing=False)  # doctest: +SKIP
    >>> fit.correlation.shape, fit.margins[0].shape  # doctest: +SKIP
    ((40, 2, 2), (40, 20))
    >>> copies = synthesize(fit, 1000, draws=5, seed=2)  # doctest: +SKIP

    (Skipped in the doctests: the NUTS fit compiles for 20-40 s; ``tests/dpcopula`` runs it.)
    """
    owner = "fit_dpcopula"
    rel = _check(owner, release)
    if rel.metadata["correlation"] != "median":
        raise NoiseawareValueError(
            f"{owner}: noise-aware synthesis needs the correlations as a median_pairs component (Bayes-NA); got "
            f"correlation={rel.metadata['correlation']!r}. Release with privatize(..., correlation='median'), or "
            "use synthesize(release, n) for DPCopula's point estimate."
        )
    st = check_settings(
        owner, chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing,
    )
    seed = st.seed
    a0 = v.positive(owner, "margin_prior", margin_prior)
    from ._fit import fit

    cf = fit(
        rel.components[0],
        chains=st.chains,
        draws=st.draws,
        warmup=st.warmup,
        seed=seed,
        progressbar=st.progressbar,
        target_accept=st.target_accept,
        check_mixing=False,  # checked below, in this fit's name
    )
    if st.check_mixing:
        import arviz as az

        from .._engine import check_mixing as _mixing

        _mixing(az.InferenceData(posterior=cf.pair_draws(), sample_stats=cf["sample_stats"]), ["R"], owner=owner)
    R = cf.draws
    draws = R.shape[0]
    rng = np.random.default_rng(seed + 1)
    alpha = float(rel.mechanism.alpha)  # type: ignore[attr-defined]
    margins = tuple(margin_posterior(h, alpha, n=rel.n, draws=draws, prior=a0, seed=rng) for h in _split(rel))
    return DPCopulaFit(
        cf,
        correlation=R,
        margins=margins,
        columns=tuple(str(c) for c in rel.metadata["columns"]),
        dtypes=tuple(str(t) for t in rel.metadata["dtypes"]),
        domains=tuple(_domains(rel)),
        release=rel,
        copula_fit=cf,
        settings=st,
    )


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


# ----------------------------------------------------------------------------- Algorithm 6 (hybrid)
def synthesize_hybrid(release: Release, n: int, seed: Any = None) -> Any:
    r"""Synthetic records from a ``dpcopula_hybrid`` release (Li et al. 2014, Algorithm 6 step 3).

    Partition sizes: ``n`` records split over the partitions in proportion to the noisy counts
    clipped at 0 (a multinomial draw; uniform if all are 0). In partition ``g``: the noisy
    per-partition histograms clipped at 0 (uniform if all 0) as margins, and
    :math:`\tilde P_g = \sin(\pi\tilde\tau_g/2)` (with :math:`\tilde\tau_g` clipped to ``[-1, 1]``)
    with Algorithm 5's eigenvalue repair; Algorithm 3 draws the large columns, and the small
    columns take the partition's values. Rows are shuffled; columns and dtypes are the release's.
    Post-processing: no budget. (A partition below the release's floor had its :math:`\tau`
    shrunk towards 0 by :math:`\binom{n_g}2/\binom F2`; its copula is correspondingly weaker.)

    Parameters
    ----------
    release : Release
        A ``dpcopula_hybrid`` release (``privatize(..., statistic="dpcopula", hybrid=...)``).
    n : int
        Rows.
    seed : int or numpy.random.Generator, optional
        Randomness of the synthesis.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    TypeError
        If ``release`` is not a ``dpcopula_hybrid`` release.
    ValueError
        If ``n < 1``.

    Examples
    --------
    >>> import numpy as np, pandas as pd, noiseaware as na
    >>> r = np.random.default_rng(0)
    >>> df = pd.DataFrame({"s": r.integers(0, 2, 3000), "x": r.integers(0, 30, 3000), "y": r.integers(0, 30, 3000)})
    >>> rel = na.privatize(df, statistic="dpcopula", epsilon=1.0, domains={"s": [0, 1], "x": range(30),
    ...                    "y": range(30)}, hybrid=["s"], rng=np.random.default_rng(1))
    >>> syn = synthesize_hybrid(rel, 100, seed=2)
    >>> syn.shape, list(syn.columns)
    ((100, 3), ['s', 'x', 'y'])
    """
    owner = "synthesize_hybrid"
    if not isinstance(release, Release) or release.statistic != "dpcopula_hybrid":
        raise NoiseawareTypeError(f"{owner}: needs a 'dpcopula_hybrid' Release; got {type(release).__name__}.")
    n = v.integer(owner, "n", n, minimum=1, maximum=v.MAX_SIMULATED_ROWS)
    rng = v.generator(owner, "seed", seed)
    meta = release.metadata
    names = [str(c) for c in meta["columns"]]
    doms = _domains(release)
    small = [names.index(str(c)) for c in meta["hybrid"]]
    large = [j for j in range(len(names)) if j not in small]
    psizes = [doms[j].size for j in small]
    lsizes = [doms[j].size for j in large]
    parts = int(np.prod(psizes))
    cnt = np.maximum(release.values, 0).astype(np.float64)
    alloc = rng.multinomial(n, cnt / cnt.sum() if cnt.sum() > 0 else np.full(parts, 1.0 / parts))
    hist = release.components[0].values.astype(np.int64).reshape(parts, -1)
    tau = np.clip(release.components[1].values, -1.0, 1.0).reshape(parts, -1)
    m2 = len(large)
    iu, ju = np.triu_indices(m2, 1)
    codes = np.zeros((n, len(names)), dtype=np.int64)
    within = np.zeros((n, len(names)))
    start = 0
    for g in np.nonzero(alloc)[0]:
        rows = slice(start, start + int(alloc[g]))
        start += int(alloc[g])
        probs = []
        for h in np.split(hist[g], np.cumsum(lsizes)[:-1]):
            c = np.maximum(h, 0).astype(np.float64)
            probs.append(c / c.sum() if c.sum() > 0 else np.full(c.size, 1.0 / c.size))
        P = np.eye(m2)
        P[iu, ju] = P[ju, iu] = np.sin(np.pi * tau[g] / 2.0)
        cg, wg = _draw(_eigen_repair(P), probs, [doms[j] for j in large], int(alloc[g]), rng)
        for t, j in enumerate(large):
            codes[rows, j] = cg[t]
            within[rows, j] = wg[:, t]
        codes[rows, small] = np.array(np.unravel_index(int(g), psizes))
    perm = rng.permutation(n)
    return _columns_out(
        [codes[perm, j] for j in range(len(names))],
        within[perm],
        doms,
        [str(t) for t in meta["dtypes"]],
        names,
    )
