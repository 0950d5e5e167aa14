r"""Reading a copula fit's result: functions of the correlation matrix ``R`` stored in its posterior.

``copula.fit`` and ``copula.fit_dpcopula`` return the host stack's own container (an
:class:`xarray.DataTree` under ArviZ 1, an :class:`arviz.InferenceData` under ArviZ 0.x) whose
``posterior`` holds the ``p(p-1)/2`` free entries of ``R`` with dims ``(chain, draw, pair)`` (what varies: no
constant diagonal, no entry twice), and its root ``attrs["noiseaware_columns"]`` the release's column names. The
functions below rebuild the matrix from them (a posterior ``R`` of dims ``(chain, draw, row, col)``, such as a
stand-in's, is read as it is); they read only that variable and the result's root ``attrs``, so they work on a
result read back with ``az.from_netcdf`` as on the fit's own return. What every fit shares -- pooled draws,
element-wise intervals, ArviZ's summary and trace plot, diagnostics, the fitted release -- is in
:mod:`noiseaware.results` (``results.draws(fit)``, ``results.interval(fit, 0.9)``, ...).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validation as v
from .._engine import group, has_group, is_result
from .._validation import owned
from ..exceptions import NoiseawareTypeError, NoiseawareValueError

if TYPE_CHECKING:  # pragma: no cover
    import pandas
    import xarray

__all__ = ["functional", "pair_draws", "pair_summary", "partial_slope", "plot_pairs"]


# ----------------------------------------------------------------------------- reading R
def _check_fit(fit: Any) -> Any:
    """The posterior ``R`` of a copula fit's result as a full matrix, a DataArray ``(chain, draw, row, col)``.

    A fit stores the ``p(p-1)/2`` free entries, ``R`` of dims ``(chain, draw, pair)`` (:func:`_store_pairs`); the
    matrix is rebuilt from them (unit diagonal, symmetric). A posterior ``R`` of dims ``(chain, draw, p, p)``
    (a stand-in, or ``pm.sample``'s own) is read as it is. Raises otherwise.
    """
    R = None
    if is_result(fit) and has_group(fit, "posterior"):
        post = group(fit, "posterior")
        if "R" in post.data_vars:
            R = post["R"]
            if R.ndim == 3 and R.dims[2] == "pair":
                R = _from_pairs(R, fit.attrs.get("noiseaware_columns"))
    if R is None or R.ndim != 4 or R.shape[-1] != R.shape[-2] or R.shape[-1] < 2:
        raise NoiseawareTypeError(
            v.message(
                "fit",
                "must be the result of copula.fit or copula.fit_dpcopula (an xarray.DataTree under ArviZ 1, an "
                "arviz.InferenceData under ArviZ 0.x) with a posterior variable R of dims (chain, draw, pair) or "
                "(chain, draw, row, col)",
                type(fit).__name__,
            )
        )
    return R


def _from_pairs(pairs: Any, columns: Any = None) -> Any:
    """The correlation matrices ``(chain, draw, row, col)`` of the pairs ``(chain, draw, pair)`` above the diagonal.

    The columns' names are ``columns`` (the fit's ``attrs["noiseaware_columns"]``) when given, else those the
    ``pair`` labels ``"a x b"`` spell (when they spell them unambiguously), else ``"0"``, ``"1"``, ...
    """
    import xarray as xr

    k = int(pairs.shape[-1])
    p = (1 + math.isqrt(1 + 8 * k)) // 2
    if k < 1 or p * (p - 1) // 2 != k:
        return pairs  # not the upper triangle of a matrix: _check_fit refuses it
    labels = [str(x) for x in pairs["pair"].values] if "pair" in pairs.coords else None
    cols = [str(c) for c in np.atleast_1d(columns)] if columns is not None else None
    if cols is None or len(cols) != p:
        cols = [str(i) for i in range(p)]
        if labels is not None and " x " in labels[0]:
            guess = [labels[0].split(" x ", 1)[0], *(lab.split(" x ", 1)[1] for lab in labels[: p - 1])]
            if _pair_labels(guess) == labels:
                cols = guess
    x = np.asarray(pairs.values, dtype=np.float64)
    R = np.empty((*x.shape[:-1], p, p))
    iu, ju = np.triu_indices(p, 1)
    R[..., iu, ju] = x
    R[..., ju, iu] = x
    i = np.arange(p)
    R[..., i, i] = 1.0
    chain, draw = pairs.dims[:2]
    coords = {str(d): pairs[d].values for d in (chain, draw) if d in pairs.coords}
    return xr.DataArray(R, dims=(chain, draw, "row", "col"), coords={**coords, "row": cols, "col": cols})


def _matrix_draws(fit: Any) -> np.ndarray:
    """The draws of the full matrix ``R`` pooled over chains, ``(chains * draws, p, p)`` float64."""
    return _pooled(_check_fit(fit))


def _store_pairs(fit: Any) -> Any:
    """Keep in ``fit``'s posterior only what varies: ``R`` as its pairs (:func:`pair_draws`), in place.

    The columns' names go to ``attrs["noiseaware_columns"]`` (where a fit of ``fit_dpcopula`` has them already).
    The matrix's unit diagonal and repeated lower triangle, and the Cholesky factor ``L_corr`` (a
    constant first row and an upper triangle of zeros), would make ArviZ's default calls fail or warn
    on a constant (``az.plot_trace``'s density of a constant, NaN R-hat in ``az.summary``); the
    readers here rebuild the matrix from the pairs. A posterior already in that form is left as it is.
    """
    from .._engine import set_group

    post = group(fit, "posterior")
    R = post["R"]
    if R.ndim == 3:
        return fit
    pairs = pair_draws(fit)
    fit.attrs.setdefault("noiseaware_columns", list(_columns(R)))
    drop = [n for n in ("R", "L_corr") if n in post.data_vars]
    rest = post.drop_vars(drop)
    rest = rest.drop_vars([c for c in ("row", "col") if c in rest.coords])  # the matrix's dims, now unused
    set_group(fit, "posterior", rest.assign(R=pairs["R"]).assign_attrs(post.attrs))
    return fit


def _columns(R: Any) -> tuple[str, ...]:
    """The variables' names: the coordinates of ``R``'s row dimension (``"0"``, ``"1"``, ... without them)."""
    dim = R.dims[2]
    if dim in R.coords:
        return tuple(str(c) for c in R[dim].values)
    return tuple(str(i) for i in range(R.shape[2]))


def _pooled(R: Any) -> np.ndarray:
    """The draws of ``R`` pooled over chains, ``(chains * draws, p, p)`` float64."""
    x = np.asarray(R.values, dtype=np.float64)
    return x.reshape((-1, *x.shape[2:]))


def _pair_labels(cols: Sequence[str], sep: str = " x ") -> list[str]:
    iu, ju = np.triu_indices(len(cols), 1)
    return [f"{cols[j]}{sep}{cols[k]}" for j, k in zip(iu.tolist(), ju.tolist(), strict=True)]


# ----------------------------------------------------------------------------- functions of R
@owned("noiseaware.copula.partial_slope")
def partial_slope(
    fit: Any, outcome: int | str, predictor: int | str, controls: Sequence[int | str] = ()
) -> np.ndarray:
    r"""Standardized partial regression slope of ``outcome`` on ``predictor`` given ``controls``.

    For a correlation matrix ``R`` the slope of the latent Gaussian ``Z_outcome`` on
    ``Z_predictor`` in the regression that also includes ``Z_controls`` is

    .. math:: \beta = \frac{R_{yx} - R_{yC} R_{CC}^{-1} R_{Cx}}{1 - R_{xC} R_{CC}^{-1} R_{Cx}},

    which for one control ``c`` is Wang, Feldman & Reiter (2026), *Differentially Private Bayesian
    Inference for Gaussian Copula Correlations*, Supplement S.4's
    :math:`(R_{y,x} - R_{y,c} R_{x,c}) / (1 - R_{x,c}^2)`. Given a fit's result, its posterior
    draws of :math:`\beta`.

    Parameters
    ----------
    fit : xarray.DataTree, arviz.InferenceData or array_like
        The result of :func:`~noiseaware.copula.fit` or :func:`~noiseaware.copula.fit_dpcopula`
        (its posterior ``R``), or a correlation matrix or a stack of them, shape ``(..., p, p)``.
    outcome, predictor : int or str
        Columns, by index or, with a fit's result, by name (the coordinates of ``R``).
    controls : sequence of int or str
        Columns conditioned on (may be empty: then ``beta = R_yx``).

    Returns
    -------
    ndarray
        Shape ``(chains * draws,)`` for a fit's result (its draws pooled over chains), ``R``'s
        leading shape ``(...)`` for an array.

    Raises
    ------
    NoiseawareValueError
        If ``R`` is not square, or outcome, predictor and controls are not distinct columns
        (an unknown name, an index out of range, a name given with a bare array).

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1.0, 0.3, 0.5], [0.3, 1.0, 0.2], [0.5, 0.2, 1.0]])
    >>> round(float(partial_slope(R, outcome=1, predictor=0, controls=[2])), 6)
    0.266667

    On a fit's result, by column name (here a stand-in with the posterior of ``R`` only):

    >>> from noiseaware.results import from_groups
    >>> e = np.tril(0.02 * np.random.default_rng(0).standard_normal((2, 200, 3, 3)), -1)  # a stand-in posterior
    >>> R = np.array([[1, .5, .2], [.5, 1, .3], [.2, .3, 1]]) + e + np.swapaxes(e, -1, -2)
    >>> cols = ["age", "income", "score"]
    >>> fit = from_groups({"posterior": {"R": R}}, dims={"R": ["row", "col"]}, coords={"row": cols, "col": cols})
    >>> b = partial_slope(fit, "income", "age", controls=["score"])
    >>> b.shape, bool(0.4 < b.mean() < 0.5)
    ((400,), True)
    """
    owner = "noiseaware.copula.partial_slope"
    if is_result(fit):
        R_da = _check_fit(fit)
        R, cols = _pooled(R_da), _columns(R_da)
    else:
        R, cols = np.asarray(fit, dtype=np.float64), None
        if R.ndim < 2 or R.shape[-1] != R.shape[-2]:
            raise NoiseawareValueError(f"{owner}: R must have shape (..., p, p); got shape {R.shape}.")
    p = R.shape[-1]

    def index(col: int | str) -> int:
        if isinstance(col, str):
            if cols is None or col not in cols:
                known = f"the columns are {list(cols)}" if cols is not None else "a bare array has no column names"
                raise NoiseawareValueError(f"{owner}: unknown column {col!r}; {known}.")
            return cols.index(col)
        return int(col)

    y, x, c = index(outcome), index(predictor), [index(k) for k in controls]
    idx = [y, x, *c]
    if any(not (0 <= i < p) for i in idx) or len(set(idx)) != len(idx):
        raise NoiseawareValueError(
            f"{owner}: outcome, predictor and controls must be distinct indices in [0, {p}); "
            f"got outcome={outcome!r}, predictor={predictor!r}, controls={list(controls)!r}."
        )
    ryx = R[..., y, x]
    if not c:
        return np.asarray(ryx)
    Rcc = R[..., c, :][..., :, c]
    rcx = R[..., c, x]
    rcy = R[..., c, y]
    sol = np.linalg.solve(Rcc, np.stack([rcx, rcy], axis=-1))  # (..., |C|, 2)
    num = ryx - np.sum(rcy * sol[..., 0], axis=-1)
    den = 1.0 - np.sum(rcx * sol[..., 0], axis=-1)
    return np.asarray(num / den)


@owned("noiseaware.copula.functional")
def functional(fit: Any, fn: Callable[[np.ndarray], Any]) -> np.ndarray:
    r"""Posterior draws of ``fn(R)`` for any function of one ``(p, p)`` correlation matrix.

    Parameters
    ----------
    fit : xarray.DataTree or arviz.InferenceData
        The result of :func:`~noiseaware.copula.fit` or :func:`~noiseaware.copula.fit_dpcopula`.
    fn : callable
        ``fn(R)`` for one draw ``R`` (a float64 ``(p, p)`` array, the release's column order).

    Returns
    -------
    ndarray
        ``fn``'s values stacked over the draws pooled over chains: shape ``(chains * draws, ...)``.

    Raises
    ------
    NoiseawareTypeError
        If ``fit`` is not a copula fit's result.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware.results import from_groups
    >>> e = np.tril(0.02 * np.random.default_rng(0).standard_normal((2, 200, 3, 3)), -1)  # a stand-in posterior
    >>> R = np.array([[1, .5, .2], [.5, 1, .3], [.2, .3, 1]]) + e + np.swapaxes(e, -1, -2)
    >>> cols = ["age", "income", "score"]
    >>> fit = from_groups({"posterior": {"R": R}}, dims={"R": ["row", "col"]}, coords={"row": cols, "col": cols})
    >>> z = functional(fit, lambda R: np.arctanh(R[0, 1]))  # Fisher's z of the first pair
    >>> z.shape, bool(0.5 < z.mean() < 0.6)
    ((400,), True)
    """
    R = _pooled(_check_fit(fit))
    return np.asarray([fn(r) for r in R])


@owned("noiseaware.copula.pair_draws")
def pair_draws(fit: Any) -> xarray.Dataset:
    r"""The posterior of the ``p(p-1)/2`` free entries of ``R``: a Dataset with ``R`` of dims ``(chain, draw, pair)``.

    The entries above the diagonal, in row order (``R[0, 1], R[0, 2], ..., R[p-2, p-1]``), each
    labelled ``"a x b"`` by its columns on the ``pair`` coordinate. ArviZ's functions take it as a
    posterior (``az.ess(pair_draws(fit))``, ``az.mcse``, ``az.rhat``): unlike the full matrix it has
    no constant diagonal and no entry twice.

    Parameters
    ----------
    fit : xarray.DataTree or arviz.InferenceData
        The result of :func:`~noiseaware.copula.fit` or :func:`~noiseaware.copula.fit_dpcopula`.

    Returns
    -------
    xarray.Dataset

    Raises
    ------
    NoiseawareTypeError
        If ``fit`` is not a copula fit's result.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware.results import from_groups
    >>> e = np.tril(0.02 * np.random.default_rng(0).standard_normal((2, 200, 3, 3)), -1)  # a stand-in posterior
    >>> R = np.array([[1, .5, .2], [.5, 1, .3], [.2, .3, 1]]) + e + np.swapaxes(e, -1, -2)
    >>> cols = ["age", "income", "score"]
    >>> fit = from_groups({"posterior": {"R": R}}, dims={"R": ["row", "col"]}, coords={"row": cols, "col": cols})
    >>> ds = pair_draws(fit)
    >>> dict(ds["R"].sizes), ds["pair"].values.tolist()
    ({'chain': 2, 'draw': 200, 'pair': 3}, ['age x income', 'age x score', 'income x score'])
    """
    import xarray as xr

    R = _check_fit(fit)
    cols = _columns(R)
    iu, ju = np.triu_indices(len(cols), 1)
    chain, draw = R.dims[:2]
    coords = {str(d): R[d].values for d in (chain, draw) if d in R.coords}
    # NumPy indexing: a lazily loaded posterior (PyMC 6, a netCDF file) has no vectorized indexing in xarray
    da = xr.DataArray(
        np.asarray(R.values)[..., iu, ju], dims=(chain, draw, "pair"), coords={**coords, "pair": _pair_labels(cols)}
    )
    return xr.Dataset({"R": da})


@owned("noiseaware.copula.pair_summary")
def pair_summary(fit: Any, level: float = 0.95) -> pandas.DataFrame:
    r"""One row per pair: posterior mean, sd, equal-tailed interval at ``level``, R-hat and bulk ESS.

    The interval is that of :func:`noiseaware.results.interval` (the draws' quantiles
    :math:`(1 \mp \text{level})/2`); R-hat and bulk ESS are ArviZ's on :func:`pair_draws` (NaN
    R-hat with one chain). For ArviZ's own summary of every variable use
    :func:`noiseaware.results.summary` or ``az.summary(fit)``.

    Parameters
    ----------
    fit : xarray.DataTree or arviz.InferenceData
        The result of :func:`~noiseaware.copula.fit` or :func:`~noiseaware.copula.fit_dpcopula`.
    level : float
        Credible level in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Index ``pair`` (``"a x b"``); columns ``mean``, ``sd``, ``lower 95%``, ``upper 95%`` (at
        ``level``), ``r_hat``, ``ess_bulk``.

    Raises
    ------
    NoiseawareTypeError
        If ``fit`` is not a copula fit's result.
    NoiseawareValueError
        If ``level`` is not in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware.results import from_groups
    >>> e = np.tril(0.02 * np.random.default_rng(0).standard_normal((2, 200, 3, 3)), -1)  # a stand-in posterior
    >>> R = np.array([[1, .5, .2], [.5, 1, .3], [.2, .3, 1]]) + e + np.swapaxes(e, -1, -2)
    >>> cols = ["age", "income", "score"]
    >>> fit = from_groups({"posterior": {"R": R}}, dims={"R": ["row", "col"]}, coords={"row": cols, "col": cols})
    >>> table = pair_summary(fit, level=0.9)
    >>> list(table.columns)
    ['mean', 'sd', 'lower 90%', 'upper 90%', 'r_hat', 'ess_bulk']
    >>> table["mean"].round(1).tolist()
    [0.5, 0.2, 0.3]
    """
    import arviz as az
    import pandas as pd

    from .._engine._result import _constant_entries_ok

    R = _check_fit(fit)
    level = v.open_unit("level", level)
    pairs = pair_draws(fit)
    x = np.asarray(pairs["R"].values, dtype=np.float64)
    flat = x.reshape(-1, x.shape[-1])
    lo, hi = np.quantile(flat, [(1 - level) / 2, (1 + level) / 2], axis=0)
    with _constant_entries_ok():
        ess = np.asarray(az.ess(pairs, method="bulk")["R"].values, dtype=np.float64)
        rhat = (
            np.asarray(az.rhat(pairs)["R"].values, dtype=np.float64) if int(R.sizes["chain"]) > 1
            else np.full(flat.shape[-1], np.nan)
        )
    pct = f"{100 * level:g}%"
    table = pd.DataFrame(
        {
            "mean": flat.mean(axis=0),
            "sd": flat.std(axis=0, ddof=1) if flat.shape[0] > 1 else np.full(flat.shape[-1], np.nan),
            f"lower {pct}": lo,
            f"upper {pct}": hi,
            "r_hat": rhat,
            "ess_bulk": ess,
        },
        index=pd.Index([str(p) for p in pairs["pair"].values], name="pair"),
    )
    return table


@owned("noiseaware.copula.plot_pairs")
def plot_pairs(
    fit: Any,
    path: str | None = None,
    *,
    level: float = 0.95,
    truth: np.ndarray | None = None,
    others: dict[str, np.ndarray] | None = None,
    title: str | None = None,
) -> Any:
    r"""Wang et al. (2026) Figure-3-style plot: per pair, the posterior mean (dot) and ``level`` interval (bar).

    Parameters
    ----------
    fit : xarray.DataTree or arviz.InferenceData
        The result of :func:`~noiseaware.copula.fit` or :func:`~noiseaware.copula.fit_dpcopula`.
    path : str, optional
        Save the figure there (format from the suffix, PNG without one), and close it.
    level : float
        Credible level of the bars.
    truth : array_like, shape (p, p), optional
        True correlations, drawn as crosses.
    others : dict of str to array_like (p, p), optional
        Point estimates to draw beside (e.g. ``{"MLE-NN": mle_nn(release).R}``).
    title : str, optional
        Default: the release's ``n`` and ``epsilon`` (:func:`noiseaware.results.release`) and the
        backend the fit recorded.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (closed once saved when ``path`` is given).

    Raises
    ------
    NoiseawareTypeError
        If ``fit`` is not a copula fit's result.
    NoiseawareValueError
        If ``level`` is not in (0, 1).

    Notes
    -----
    Needs matplotlib. ArviZ's trace plot of the result is :func:`noiseaware.results.plot`.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from noiseaware.results import from_groups
    >>> e = np.tril(0.02 * np.random.default_rng(0).standard_normal((2, 200, 3, 3)), -1)  # a stand-in posterior
    >>> R = np.array([[1, .5, .2], [.5, 1, .3], [.2, .3, 1]]) + e + np.swapaxes(e, -1, -2)
    >>> cols = ["age", "income", "score"]
    >>> fit = from_groups({"posterior": {"R": R}}, dims={"R": ["row", "col"]}, coords={"row": cols, "col": cols})
    >>> fig = plot_pairs(fit, title="three pairs")
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['age × income', 'age × score', 'income × score']
    >>> plt.close(fig)
    """
    R_da = _check_fit(fit)
    level = v.open_unit("level", level)
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from .._engine import release as _release

    R, cols = _pooled(R_da), _columns(R_da)
    p = len(cols)
    iu = np.triu_indices(p, 1)
    lo, hi = np.quantile(R, [(1 - level) / 2, (1 + level) / 2], axis=0)
    mean = R.mean(axis=0)
    labels = _pair_labels(cols, " × ")
    y = np.arange(len(labels))[::-1].astype(float)
    fig, ax = plt.subplots(figsize=(6.5, 0.38 * len(labels) + 1.4))
    ax.hlines(y, lo[iu], hi[iu], color="tab:orange", lw=2.5, label=f"Bayes-NA {100 * level:g}% interval")
    ax.plot(mean[iu], y, "o", color="tab:orange", label="Bayes-NA posterior mean")
    markers = iter(["s", "D", "^", "v", "P"])
    for name, M in (others or {}).items():
        ax.plot(np.asarray(M)[iu], y, next(markers), mfc="none", color="tab:blue", label=name)
    if truth is not None:
        ax.plot(np.asarray(truth)[iu], y, "x", color="black", ms=8, label="truth")
    ax.axvline(0.0, color="grey", lw=0.8, ls=":")
    ax.set_yticks(y, labels)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("copula correlation")
    if title is None:
        rel = _release(fit)
        backend = fit.attrs.get("noiseaware_backend")
        words = [f"n = {rel.n}", f"ε = {rel.guarantee.epsilon:g}"] if rel is not None else []
        title = "Bayes-NA posterior" + (f", {', '.join(words)}" if words else "") + (f" ({backend})" if backend else "")
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    if path is not None:
        from .._io import write_figure

        write_figure(fig, path, dpi=120, close=True)
    return fig
