r"""The regression release: private sufficient statistics of a linear regression of ``y`` on ``X``.

``privatize(df, statistic="regression", response="y", predictors=[...], bound=... | bounds=...,
rho=... | epsilon=..., method="ssp" | "adassp" | "pace_ggm", intercept=True)``.

**Scaled design.** Each data column ``z_j`` (the predictors, then the response) has a public range
:math:`l_j \le z_j \le u_j` (``bound=`` for all, or ``bounds=`` per column: a bound ``b`` is the range
``(-b, b)``, or give ``(lower, upper)``; ``clip=True`` clips to it). The release shifts each column by
the range's mid-point :math:`m_j = (l_j + u_j)/2` and scales it by the half-width
:math:`h_j = (u_j - l_j)/2`, so that :math:`|z_j - m_j| \le h_j`. With
``W = [1, X - m_x, y - m_y] / h`` (the intercept column of ones has :math:`m_0 = 0, h_0 = 1`) every
entry satisfies :math:`|w_j| \le 1`, and the release is of the unique entries ``j >= l`` of the *sum*
:math:`W^\top W` (``k`` columns); ``metadata.bounds`` holds the half-widths ``h`` and
``metadata.shift`` the mid-points ``m``. The analyst's moments are those of the shifted columns
:math:`Z' = Z - m`: :math:`(Z'^\top Z')_{jl} = h_j h_l (W^\top W)_{jl}` (post-processing; a noise of
sd :math:`\sigma` on :math:`(W^\top W)_{jl}` is one of sd :math:`h_j h_l \sigma` on
:math:`(Z'^\top Z')_{jl}`). The shift is public, so the statistics of the shifted data carry the same
information as those of the data, and the sensitivity is that of the half-widths: a range half as
wide as the symmetric bound that covers it halves the noise sd, in the data's units, of every entry
that holds the column once, and quarters that of its square.
The analyst's coefficients are in the data's units (:func:`noiseaware.regression.fit`); with
``intercept=False`` the bounds must be symmetric (the shift is undone through the intercept column).

**Intercept** (``intercept=True``, default): the public constant column of ones inside the bound.
Then :math:`(Z^\top Z)_{00} = n` is public and exact (left out of the release), and
:math:`(Z^\top Z)_{0j} = \sum_i z_{ij}` are noisy column sums released with the rest. Budgeted
centring (releasing the means first, then second moments about them) was not chosen: the
centred records are bounded by twice the bound (the released mean moves them), which quadruples
the entries' sensitivity, and the mean's noise enters every centred moment in a way a likelihood
must model as a second, dependent release. The constant column costs nothing but one more column
in the sensitivity (``k`` instead of ``k - 1``), and its entries are ordinary Gaussian (or Laplace)
measurements. A predictor that is constant in the data is refused with an intercept (it is
collinear with it: :math:`X^\top X` is singular); with ``intercept=False`` it is the intercept.

**Neighbours**: substitution of one record, ``n`` public. Sensitivities (derived in
:func:`~noiseaware._statistics.regression_sensitivity` and the two next to it):

* unique entries of :math:`W^\top W`: ``k`` in L2, ``k**2 - [intercept]`` in L1;
* :math:`\lambda_{\min}(W_x^\top W_x)` of the ``p = k - 1`` design columns: ``p``.

**Methods.**

* ``"ssp"`` (default): sufficient statistic perturbation, one Gaussian draw per released entry with
  L2 sensitivity ``k`` (``rho``), or one Laplace draw each with L1 sensitivity ``k**2 - [intercept]``
  (``epsilon``).
* ``"adassp"`` (rho only): Wang (2018), *Revisiting differentially private linear regression: optimal and
  adaptive prediction & estimation in unbounded domain*, Algorithm 2, under zCDP: ``rho / 3`` for a
  Gaussian release of :math:`\lambda_{\min}(W_x^\top W_x)` (a ``"regression_eigen"`` component),
  ``2 rho / 3`` for the SSP release of every entry (Wang's two thirds for :math:`X^\top X` and
  :math:`X^\top y`, here one joint Gaussian release that also holds :math:`y^\top y`, which a
  posterior for the noise variance needs). The regularisation itself is post-processing:
  :func:`noiseaware.regression.adassp`.
* ``"pace_ggm"`` (rho only): Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive
  Covariance Estimation via Gaussian Graphical Models*, App. G: ``rho / 3`` for the minimum eigenvalue
  as in AdaSSP (the release's values), ``2 rho / 3`` for PACE-GGM (their Algorithm 1, options
  ``alpha``, ``beta``, ``T``) on ``W`` with bound 1 (a ``"pace_ggm"`` component: the entries of
  :math:`W^\top W / n` it selects and measures). :func:`noiseaware.regression.pace_ggm_regression`.

The three parts compose sequentially to the requested ``rho`` (each mechanism's guarantee is at most
its share in float64).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import _validation as v
from .._core._regression_release import RegressionMetadata
from .._statistics import (
    EIGEN_SHARE,
    ENTRY_ORDER,
    INTERCEPT,
    moment_rule,
    pace_ggm_sensitivity,
    regression_eigen_sensitivity,
    regression_entries,
    regression_l1_sensitivity,
    regression_sensitivity,
)
from .._statistics import REGRESSION_METHODS as METHODS
from .._validation import current_owner, owned
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..mechanisms import GaussianMechanism, Guarantee, LaplaceMechanism
from ..release import Release
from ._common import STATISTICS, Context, as_matrix, fit_sum, no_extra, statistic
from ._covariance import _check_entries, _check_pace_budgets

__all__: list[str] = []

_OWNER = "privatize(statistic='regression')"

#: Default of the AdaSSP failure probability ``delta`` (Wang 2018 uses ``delta = 1e-6`` in his experiments).
DEFAULT_DELTA = 1e-6

_SCALING = (
    "values are the unique entries of W^T W (sums over records), W = [1, X - shift_x, y - shift_y] / bounds column by "
    "column (shift: the public mid-points of the columns' ranges, bounds: their half-widths; the intercept's bound is "
    "1 and its shift 0); with Z' = Z - shift, (Z'^T Z')_jl = bounds[j] * bounds[l] * (W^T W)_jl, and the noise sd "
    "scales alike"
)

_OPTIONS = {"response", "predictors", "intercept", "bound", "bounds", "clip", "columns", "method", "delta"} | {
    "alpha",
    "beta",
    "T",
}


def _names(names: list[str], options: Mapping[str, Any]) -> tuple[list[int], int]:
    """Indices of the predictors and of the response among the data's columns."""
    response = options.get("response")
    if not isinstance(response, str) or response not in names:
        raise NoiseawareValueError(
            v.message("response", f"must name one of the data's columns {names}", response)
        )
    preds = options.get("predictors")
    if preds is None:
        pred_names = [c for c in names if c != response]
    else:
        if isinstance(preds, str) or not isinstance(preds, Sequence) or not all(isinstance(p, str) for p in preds):
            raise NoiseawareTypeError(v.message("predictors", "must be a list of column names", preds))
        pred_names = list(preds)
        missing = [p for p in pred_names if p not in names]
        if missing or not pred_names or len(set(pred_names)) != len(pred_names) or response in pred_names:
            raise NoiseawareValueError(
                v.message("predictors", f"must list distinct columns of {names} other than the response",
                          preds)
            )
    if INTERCEPT in pred_names or response == INTERCEPT:
        v.refuse("columns", f"must not be named {INTERCEPT!r} (the intercept's name)", names)
    return [names.index(p) for p in pred_names], names.index(response)


def _range(name: str, value: Any) -> tuple[float, float]:
    """``(lower, upper)`` from a range (finite, ``lower < upper``) or from a bound ``b > 0``: ``(-b, b)``."""
    if isinstance(value, Sequence | np.ndarray) and not isinstance(value, str):
        pair = list(np.asarray(value, dtype=object).ravel()) if isinstance(value, np.ndarray) else list(value)
        if len(pair) != 2:
            v.refuse(name, "must be a bound b > 0 (the range (-b, b)) or a range (lower, upper)", value)
        lo, hi = v.finite(f"{name}[0]", pair[0]), v.finite(f"{name}[1]", pair[1])
        if not lo < hi or not math.isfinite(hi - lo):
            v.refuse(name, "must be a range (lower, upper) with lower < upper and a finite width", value)
        return lo, hi
    b = v.positive(name, value)
    return -b, b


def _bounds(options: Mapping[str, Any], cols: list[str]) -> tuple[np.ndarray, np.ndarray]:
    r"""Per data column (predictors then response): the public half-widths ``h`` and mid-points ``m``.

    From ``bound`` (one for every column) or ``bounds`` (one per column); each a bound ``b > 0``
    (the range ``(-b, b)``) or a range ``(lower, upper)``: :math:`h = (upper - lower)/2`,
    :math:`m = (lower + upper)/2`, so that :math:`|z - m| \le h` exactly when ``lower <= z <= upper``.
    """
    owner = current_owner()
    if ("bound" in options) == ("bounds" in options):
        raise NoiseawareValueError(
            f"{owner}: give one of bound (one bound |z| <= B, or one range (lower, upper), for every column) or "
            f"bounds (one per column: a mapping name -> bound or (lower, upper), or a list in the order {cols}); got "
            f"{'both' if 'bound' in options else 'neither'}."
        )
    if "bound" in options:
        ranges = [_range("bound", options["bound"])] * len(cols)
    else:
        raw = options["bounds"]
        if isinstance(raw, Mapping):
            if set(map(str, raw)) != set(cols):
                raise NoiseawareValueError(
                    v.message("bounds", f"must give a bound or range for exactly the columns {cols}", dict(raw))
                )
            vals = [raw[c] for c in cols]
        elif isinstance(raw, np.ndarray) and raw.ndim in (1, 2) and raw.shape[0] == len(cols):
            vals = list(raw)
        elif isinstance(raw, Sequence) and not isinstance(raw, str) and len(raw) == len(cols):
            vals = list(raw)
        else:
            raise NoiseawareValueError(
                v.message("bounds", f"must be a mapping, a list or an array of {len(cols)} bounds or ranges "
                          f"(lower, upper), in the order {cols}", raw, limit=200)
            )
        ranges = [_range(f"bounds[{c!r}]", b) for c, b in zip(cols, vals, strict=True)]
    lo = np.array([r[0] for r in ranges], dtype=np.float64)
    hi = np.array([r[1] for r in ranges], dtype=np.float64)
    mid = np.where(lo == -hi, 0.0, lo / 2.0 + hi / 2.0)  # halves first: no overflow near the float64 limits
    return hi / 2.0 - lo / 2.0, mid


def _scaled(z: np.ndarray, h: np.ndarray, m: np.ndarray, cols: list[str], clip: Any) -> np.ndarray:
    """``(z - m) / h`` column by column, after checking (or, with ``clip=True``, clipping) ``z`` to its range."""
    owner = current_owner()
    if not isinstance(clip, bool):
        raise NoiseawareTypeError(v.message("clip", "must be True or False", clip))
    lo, hi = m - h, m + h
    if clip:
        z = np.clip(z, lo, hi)
    else:
        over = (np.min(z, axis=0) < lo) | (np.max(z, axis=0) > hi)
        if np.any(over):
            j = int(np.argmax(over))
            if m[j] == 0.0:
                rule, got = f"|{cols[j]}| <= {float(h[j])!r}", f"max |{cols[j]}| = {float(np.max(np.abs(z[:, j])))!r}"
            else:
                rule = f"{cols[j]} in [{float(lo[j])!r}, {float(hi[j])!r}]"
                got = f"{cols[j]} in [{float(np.min(z[:, j]))!r}, {float(np.max(z[:, j]))!r}]"
            raise NoiseawareValueError(
                f"{owner}: data must lie within the bounds, {rule} (the sensitivities assume it); got {got}. Pass "
                "clip=True to clip the data to the bounds (recorded in the release), or give wider bounds."
            )
    return (z - m) / h


def _design(
    data: Any, options: dict[str, Any]
) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray, bool]:
    """``W`` (shifted and scaled, intercept first), its column names, half-widths, shifts and the intercept flag."""
    owner = current_owner()
    x, names = as_matrix(data, options.get("columns"))
    pred_idx, resp_idx = _names(names, options)
    intercept = options.get("intercept", True)
    if not isinstance(intercept, bool):
        raise NoiseawareTypeError(v.message("intercept", "must be True or False", intercept))
    data_cols = [names[j] for j in pred_idx] + [names[resp_idx]]
    z = x[:, [*pred_idx, resp_idx]]
    _check_entries(len(data_cols) + intercept)
    b, mid = _bounds(options, data_cols)
    if not intercept and np.any(mid != 0.0):
        j = int(np.argmax(mid != 0.0))
        raise NoiseawareValueError(
            f"{owner}: bounds must be symmetric, (-b, b), with intercept=False (the shift of a column by its range's "
            f"mid-point is undone with the intercept column, which this release has not); got the range "
            f"({float(mid[j] - b[j])!r}, {float(mid[j] + b[j])!r}) for {data_cols[j]!r}. Pass intercept=True, or the "
            f"symmetric bound {float(abs(mid[j]) + b[j])!r} that covers the range."
        )
    w = _scaled(z, b, mid, data_cols, options.get("clip", False))
    if intercept:
        const = [c for j, c in enumerate(data_cols[:-1]) if np.all(z[:, j] == z[0, j])]
        if const:
            raise NoiseawareValueError(
                f"{owner}: predictors must not be constant with intercept=True (a constant column is collinear with "
                f"the intercept and X^T X is singular); got constant column(s) {const}. Drop them, or pass "
                "intercept=False if the constant column is meant as the intercept."
            )
        w = np.hstack([np.ones((w.shape[0], 1)), w])
        return w, [INTERCEPT, *data_cols], np.concatenate([[1.0], b]), np.concatenate([[0.0], mid]), True
    return w, data_cols, b, mid, False


def _check_moments(n: int, b: np.ndarray, intercept: bool, mech: Any, shift: np.ndarray) -> None:
    """Refuse, before any budget is spent, bounds whose moments or noise scales leave float64 (:func:`moment_rule`)."""
    owner = current_owner()
    broken = moment_rule(n, b.tolist(), intercept, mech, shift.tolist())
    if broken is not None:
        shown = b[1:].tolist() if intercept else b.tolist()  # the half-widths of the data's columns
        raise NoiseawareValueError(
            f"{owner}: the bounds {broken}; got bounds={shown} (the data's columns). Nothing was charged to the "
            "budget and no noise was drawn."
        )


def _method_options(method: str, options: dict[str, Any]) -> None:
    if method == "ssp":
        extra = sorted({"delta", "alpha", "beta", "T"} & set(options))
    elif method == "adassp":
        extra = sorted({"alpha", "beta", "T"} & set(options))
    else:
        extra = []
    if extra:
        raise NoiseawareTypeError(f"{current_owner()}: option(s) {extra} are not used by method={method!r}.")


@statistic("regression")
@owned(_OWNER)
def _regression(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """Private sufficient statistics of a linear regression; see the module docstring."""
    no_extra(options, _OPTIONS)
    method = v.choice("method", options.get("method", "ssp"), METHODS)
    _method_options(method, options)
    w, cols, b, shift, intercept = _design(data, options)
    n, k = w.shape
    ent = regression_entries(k, intercept)
    rows = np.array([j for j, _ in ent])
    cols_idx = np.array([m for _, m in ent])
    wtw = w.T @ w
    truth = wtw[rows, cols_idx]
    labels = [(cols[j], cols[m]) for j, m in ent]
    md = RegressionMetadata(
        method=method,
        columns=tuple(cols),
        response=cols[-1],
        predictors=tuple(cols[intercept:-1]),
        intercept=intercept,
        bounds=tuple(b.tolist()),
        shift=tuple(shift.tolist()),
        clip=bool(options.get("clip", False)),
        entry_order=ENTRY_ORDER,
        scaling=_SCALING,
    )
    meta = md.to_dict()
    if method == "ssp":
        fam = v.choice("mechanism", mechanism or ("laplace" if ctx.epsilon is not None else "gaussian"),
                       ("gaussian", "laplace"))
        mech: Any
        if fam == "gaussian":
            mech = GaussianMechanism.from_rho(ctx.require("rho"), regression_sensitivity(k))
        else:
            mech = LaplaceMechanism.from_epsilon(ctx.require("epsilon"), regression_l1_sensitivity(k, intercept))
        _check_moments(n, b, intercept, mech, shift)
        g = mech.guarantee()
        ctx.charge_release(g, "regression", "Release fewer columns.", shape=truth.shape, labels=labels,
                           mechanism=mech, metadata=meta)
        return ctx.release("regression", mech.release(truth, rng=ctx.rng), labels, mech, "joint", g, n, meta)
    v.choice("mechanism", mechanism or "gaussian", ("gaussian",))
    rho = ctx.require("rho")
    delta = v.open_unit("delta", options.get("delta", DEFAULT_DELTA))
    rho_eig = rho * EIGEN_SHARE
    rho_rest = fit_sum(rho, [], rho - rho_eig, [rho_eig])
    md = dataclasses.replace(md, rho=rho, delta=delta)
    meta = md.to_dict()
    design = cols[:-1]
    eig_mech = GaussianMechanism.from_rho(rho_eig, regression_eigen_sensitivity(k - 1))
    lam_min = np.array([float(np.linalg.eigvalsh(wtw[:-1, :-1])[0])])
    eig_meta = {"design": design}
    if method == "adassp":
        mech = GaussianMechanism.from_rho(rho_rest, regression_sensitivity(k))
        _check_moments(n, b, intercept, mech, shift)
        g = mech.guarantee().compose(eig_mech.guarantee())
        ctx.charge_release(g, "regression", "Release fewer columns.", shape=truth.shape, labels=labels,
                           mechanism=mech, metadata=meta)
        noisy = mech.release(truth, rng=ctx.rng)
        eig = ctx.release("regression_eigen", eig_mech.release(lam_min, rng=ctx.rng), [("lambda_min",)], eig_mech,
                          "joint", eig_mech.guarantee(), n, eig_meta)
        return ctx.release("regression", noisy, labels, mech, "joint", g, n, meta, components=[eig])
    # pace_ggm: check PACE-GGM's pieces before any budget, as privatize(statistic="pace_ggm") does
    alpha = v.open_unit("alpha", options.get("alpha", 0.3))
    beta = v.open_unit("beta", options.get("beta", 0.5))
    t_opt = options.get("T")
    T = k * (k - 1) if t_opt is None else v.integer("T", t_opt, minimum=1)
    _check_pace_budgets(rho_rest, alpha, beta, T, k, 0.0, pace_ggm_sensitivity(n, 1.0))
    _check_moments(n, b, intercept, eig_mech, shift)
    ctx.charge(Guarantee(rho=rho), label="regression")
    eig_value = eig_mech.release(lam_min, rng=ctx.rng)
    sub = Context(epsilon=None, rho=rho_rest, rng=ctx.rng, budget=None)
    pace = STATISTICS["pace_ggm"](w, sub, None, {"bound": 1.0, "columns": cols, "alpha": alpha, "beta": beta, "T": T})
    g = eig_mech.guarantee().compose(pace.guarantee)
    meta = dataclasses.replace(md, design=tuple(design)).to_dict()
    return ctx.release("regression", eig_value, [("lambda_min",)], eig_mech, "joint", g, n, meta, components=[pace])
