r"""Synthetic data from a ``dpcopula`` release (Li et al. 2014) and its noise-aware version.

* :func:`synthesize` with a :class:`~noiseaware.Release` -- DPCopula's Algorithm 3: one point
  estimate :math:`\tilde P` of the copula correlation (Algorithm 5 for Kendall, the clipped and
  repaired Algorithm 2 average for MLE, Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for
  Gaussian Copula Correlations* MLE-NN for median pairs) and one margin per
  attribute (the noisy histogram clipped at 0 and normalised); rows
  :math:`Z \sim N(0, \tilde P)`, :math:`x_j = \tilde F_j^{-1}(\Phi(Z_j))` (Algorithm 3 prints the
  density :math:`\varphi`; the probability integral transform needs the CDF :math:`\Phi`).
* :func:`~noiseaware.copula.fit_dpcopula` (``_dpcopula_fit``) + :func:`synthesize` with the fit --
  noise-aware synthesis: ``M`` data sets, each from one joint posterior draw of the correlation
  (Bayes-NA, Wang et al. (2026), on the release's ``median_pairs`` component) and of every margin's
  cell probabilities (:func:`~noiseaware.copula.margin_posterior`, ``_margins``).
* :func:`~noiseaware.copula.combine_synthetic` (``_combine``) -- the combining rules for ``M``
  synthetic data sets (Raghunathan, Reiter & Rubin 2003 for fully synthetic data; Reiter 2003 for
  partially synthetic data).

The readers of the release (its margins and correlation estimate) are in ``_dpcopula_release``.

**Inverse CDF of a margin.** With cell probabilities :math:`p_{j1..jK}` and
:math:`F_{jk} = \sum_{l\le k} p_{jl}` (monotone by construction), :math:`u` falls in the cell
:math:`k` with :math:`F_{j,k-1} \le u < F_{jk}`; for an ``integers`` or ``values`` domain the value
is that cell's, for an ``interval`` domain it is placed linearly inside the cell,
:math:`a + (k + (u - F_{j,k-1})/p_{jk})\,w` (the inverse of the piecewise-linear CDF).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _validation as v
from .._domains import Domain
from .._engine import is_result
from .._validation import owned
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..release import Release
from ._dpcopula_fit import _parts
from ._dpcopula_release import _check, _domains, _eigen_repair, dpcopula_correlation, dpcopula_margins

__all__ = ["cell_codes", "synthesize", "synthesize_hybrid"]

_OWNER = "synthesize"


# ----------------------------------------------------------------------------- cells
@owned("cell_codes")
def cell_codes(data: Any, release: Release) -> np.ndarray:
    r"""The cells of a table on the public domains of a ``dpcopula`` release: ``codes[i, j]``.

    Each value is mapped to the index of its cell in its column's domain, as the curator's
    margin histograms count them (Li, Xiong & Jiang (2014), *Differentially Private Synthesization
    of Multi-Dimensional Data using Copula Functions*): an ``integers`` domain ``[a, b]`` gives
    ``x - a``, an ``interval`` domain of ``K`` equal cells the cell ``x`` falls in, a ``values``
    domain the value's place in the list. Utility measures of synthetic data, such as the
    relative error of range-count queries over cells that Li et al. (2014) report, compare
    ``cell_codes(confidential, release)`` with ``cell_codes(synthesize(release, n), release)``.

    Parameters
    ----------
    data : pandas.DataFrame or array_like, shape (n, m)
        A table with the release's columns: a DataFrame by the release's column names, an array
        in their order.
    release : Release
        A ``dpcopula`` release (its ``metadata.domains`` and ``metadata.columns``).

    Returns
    -------
    numpy.ndarray of int64, shape (n, m)

    Raises
    ------
    TypeError
        If ``release`` is not a ``dpcopula`` release.
    ValueError
        If the table lacks a column of the release, has the wrong number of columns, or holds a
        value outside its column's domain.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).integers(0, 10, size=(200, 2))
    >>> rel = na.privatize(x, statistic="dpcopula", epsilon=2.0, domains=[range(0, 10)] * 2,
    ...                    rng=np.random.default_rng(1))
    >>> bool((cell_codes(x, rel) == x).all())
    True
    """
    owner = "cell_codes"
    rel = _check(release)
    names = [str(c) for c in rel.metadata["columns"]]
    doms = _domains(rel)
    if hasattr(data, "columns") and hasattr(data, "iloc"):
        missing = [c for c in names if c not in [str(k) for k in data.columns]]
        if missing:
            raise NoiseawareValueError(f"{owner}: data must have the release's columns {names}; missing {missing}.")
        cols = [data[c].to_numpy() for c in names]
    else:
        arr = np.asarray(data)
        if arr.ndim != 2 or arr.shape[1] != len(names):
            raise NoiseawareValueError(
                f"{owner}: data must be an (n, {len(names)}) table, one column per column of the release; got "
                f"shape {arr.shape}."
            )
        cols = [arr[:, j] for j in range(arr.shape[1])]
    return np.stack([d.encode(c, col) for c, d, col in zip(names, doms, cols, strict=True)], axis=1)


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


@owned(_OWNER)
def synthesize(source: Any, n: int, *, seed: Any = None, draws: int | None = None) -> Any:
    r"""Synthetic records from a ``dpcopula`` release (DPCopula) or a :func:`fit_dpcopula` result (noise-aware).

    With a release: Algorithm 3 of Li, Xiong & Jiang (2014), *Differentially Private Synthesization of
    Multi-Dimensional Data using Copula Functions* — draw
    :math:`Z \sim N(0, \tilde P)` (:func:`dpcopula_correlation`), :math:`U_j = \Phi(Z_j)`, and
    :math:`x_j = \tilde F_j^{-1}(U_j)` with :math:`\tilde F_j` the monotone CDF of the clipped
    noisy histogram (:func:`dpcopula_margins`; module docstring for the inverse). With a fit: ``draws``
    data sets, the ``s``-th from the ``s``-th of ``draws`` evenly spaced joint posterior draws of
    :math:`(P, p_1, \dots, p_m)`. Both are post-processing of the release: no budget is spent.

    Parameters
    ----------
    source : Release, xarray.DataTree or arviz.InferenceData
        What to synthesize from: a ``dpcopula`` release, or the result of
        :func:`~noiseaware.copula.fit_dpcopula` (also its copy read back with ``az.from_netcdf``).
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
        If ``source`` is neither a ``dpcopula`` release nor a ``fit_dpcopula`` result.
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
    n = v.integer("n", n, minimum=1, maximum=v.MAX_SIMULATED_ROWS)
    rng = v.generator("seed", seed)
    if is_result(source):
        R, margins, columns, dtypes, domains = _parts(source, "source")  # a fit_dpcopula result, else TypeError
        m_draws = 10 if draws is None else v.integer("draws", draws, minimum=1)
        total = R.shape[0]
        if m_draws > total:
            v.refuse("draws", f"must be at most the fit's {total} posterior draws", m_draws)
        idx = np.linspace(0, total - 1, m_draws).round().astype(int)
        return [_sample(R[s], [p[s] for p in margins], domains, dtypes, columns, n, rng) for s in idx]
    if isinstance(source, Release) and source.statistic == "dpcopula_hybrid":
        if draws not in (None, 1):
            v.refuse("draws", "must be 1 (or omitted) for a release", draws)
        return synthesize_hybrid(source, n, rng)
    rel = _check(source)
    if draws not in (None, 1):
        v.refuse(
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


# ----------------------------------------------------------------------------- Algorithm 6 (hybrid)
@owned("synthesize_hybrid")
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
    n = v.integer("n", n, minimum=1, maximum=v.MAX_SIMULATED_ROWS)
    rng = v.generator("seed", seed)
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
