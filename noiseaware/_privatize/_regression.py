r"""The regression release: private sufficient statistics of a linear regression of ``y`` on ``X``.

``privatize(df, statistic="regression", response="y", predictors=[...], bound=... | bounds=...,
rho=... | epsilon=..., method="ssp" | "adassp" | "pace_ggm", intercept=True)``.

**Scaled design.** Each data column ``z_j`` (the predictors, then the response) has a public bound
:math:`|z_j| \le b_j` (``bound=`` for all, or ``bounds=`` per column; ``clip=True`` clips to it).
With ``W = [1, X, y] / b`` (column ``j`` divided by ``b_j``; the intercept column of ones has
:math:`b_0 = 1`) every entry satisfies :math:`|w_j| \le 1`, and the release is of the unique entries
``j >= l`` of the *sum* :math:`W^\top W` (``k`` columns). The analyst's moments are
:math:`(Z^\top Z)_{jl} = b_j b_l (W^\top W)_{jl}` (post-processing; a noise of sd :math:`\sigma`
on :math:`(W^\top W)_{jl}` is one of sd :math:`b_j b_l \sigma` on :math:`(Z^\top Z)_{jl}`).

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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import _validation as v
from .._statistics import (
    ENTRY_ORDER,
    pace_ggm_sensitivity,
    regression_eigen_sensitivity,
    regression_l1_sensitivity,
    regression_sensitivity,
)
from .._statistics._regression import EIGEN_SHARE, INTERCEPT, METHODS, moment_rule, regression_entries
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
    "values are the unique entries of W^T W (sums over records), W = [1, X, y] / bounds column by column "
    "(the intercept's bound is 1); (Z^T Z)_jl = bounds[j] * bounds[l] * (W^T W)_jl, and the noise sd scales alike"
)

_OPTIONS = {"response", "predictors", "intercept", "bound", "bounds", "clip", "columns", "method", "delta"} | {
    "alpha",
    "beta",
    "T",
}


def _names(owner: str, names: list[str], options: Mapping[str, Any]) -> tuple[list[int], int]:
    """Indices of the predictors and of the response among the data's columns."""
    response = options.get("response")
    if not isinstance(response, str) or response not in names:
        raise NoiseawareValueError(
            v.message(owner, "response", f"must name one of the data's columns {names}", response)
        )
    preds = options.get("predictors")
    if preds is None:
        pred_names = [c for c in names if c != response]
    else:
        if isinstance(preds, str) or not isinstance(preds, Sequence) or not all(isinstance(p, str) for p in preds):
            raise NoiseawareTypeError(v.message(owner, "predictors", "must be a list of column names", preds))
        pred_names = list(preds)
        missing = [p for p in pred_names if p not in names]
        if missing or not pred_names or len(set(pred_names)) != len(pred_names) or response in pred_names:
            raise NoiseawareValueError(
                v.message(owner, "predictors", f"must list distinct columns of {names} other than the response",
                          preds)
            )
    if INTERCEPT in pred_names or response == INTERCEPT:
        v.fail(owner, "columns", f"must not be named {INTERCEPT!r} (the intercept's name)", names)
    return [names.index(p) for p in pred_names], names.index(response)


def _bounds(owner: str, options: Mapping[str, Any], cols: list[str]) -> np.ndarray:
    """One public bound per data column (predictors then response), from ``bound`` or ``bounds``."""
    if ("bound" in options) == ("bounds" in options):
        raise NoiseawareValueError(
            f"{owner}: give one of bound (one bound |z| <= B for every column) or bounds (one per column: a "
            f"mapping name -> bound, or a list in the order {cols}); got "
            f"{'both' if 'bound' in options else 'neither'}."
        )
    if "bound" in options:
        return np.full(len(cols), v.positive(owner, "bound", options["bound"]))
    raw = options["bounds"]
    if isinstance(raw, Mapping):
        if set(map(str, raw)) != set(cols):
            raise NoiseawareValueError(
                v.message(owner, "bounds", f"must give a bound for exactly the columns {cols}", dict(raw))
            )
        vals = [raw[c] for c in cols]
    elif isinstance(raw, np.ndarray) and raw.ndim == 1 and raw.shape[0] == len(cols):
        vals = raw.tolist()
    elif isinstance(raw, Sequence) and not isinstance(raw, str) and len(raw) == len(cols):
        vals = list(raw)
    else:
        raise NoiseawareValueError(
            v.message(owner, "bounds", f"must be a mapping, a list or a 1-d array of {len(cols)} bounds, in the order "
                      f"{cols}", raw, limit=200)
        )
    return np.array([v.positive(owner, f"bounds[{c!r}]", b) for c, b in zip(cols, vals, strict=True)])


def _scaled(owner: str, z: np.ndarray, b: np.ndarray, cols: list[str], clip: Any) -> np.ndarray:
    if not isinstance(clip, bool):
        raise NoiseawareTypeError(v.message(owner, "clip", "must be True or False", clip))
    if clip:
        z = np.clip(z, -b, b)
    else:
        over = np.max(np.abs(z), axis=0) > b
        if np.any(over):
            j = int(np.argmax(over))
            raise NoiseawareValueError(
                f"{owner}: data must lie within the bounds, |{cols[j]}| <= {float(b[j])!r} (the sensitivities assume "
                "it); "
                f"got max |{cols[j]}| = {float(np.max(np.abs(z[:, j])))!r}. Pass clip=True to clip the data to the "
                "bounds (recorded in the release), or give larger bounds."
            )
    return z / b


def _design(owner: str, data: Any, options: dict[str, Any]) -> tuple[np.ndarray, list[str], np.ndarray, bool]:
    """``W`` (scaled, intercept first), its column names, the bounds and the intercept flag."""
    x, names = as_matrix(owner, data, options.get("columns"))
    pred_idx, resp_idx = _names(owner, names, options)
    intercept = options.get("intercept", True)
    if not isinstance(intercept, bool):
        raise NoiseawareTypeError(v.message(owner, "intercept", "must be True or False", intercept))
    data_cols = [names[j] for j in pred_idx] + [names[resp_idx]]
    z = x[:, [*pred_idx, resp_idx]]
    _check_entries(owner, len(data_cols) + intercept)
    b = _bounds(owner, options, data_cols)
    w = _scaled(owner, z, b, data_cols, options.get("clip", False))
    if intercept:
        const = [c for j, c in enumerate(data_cols[:-1]) if np.all(z[:, j] == z[0, j])]
        if const:
            raise NoiseawareValueError(
                f"{owner}: predictors must not be constant with intercept=True (a constant column is collinear with "
                f"the intercept and X^T X is singular); got constant column(s) {const}. Drop them, or pass "
                "intercept=False if the constant column is meant as the intercept."
            )
        w = np.hstack([np.ones((w.shape[0], 1)), w])
        return w, [INTERCEPT, *data_cols], np.concatenate([[1.0], b]), True
    return w, data_cols, b, False


def _check_moments(owner: str, n: int, b: np.ndarray, intercept: bool, mech: Any) -> None:
    """Refuse, before any budget is spent, bounds whose moments or noise scales leave float64 (:func:`moment_rule`)."""
    broken = moment_rule(n, b.tolist(), intercept, mech)
    if broken is not None:
        shown = b[1:].tolist() if intercept else b.tolist()
        raise NoiseawareValueError(
            f"{owner}: the bounds {broken}; got bounds={shown} (the data's columns). Nothing was charged to the "
            "budget and no noise was drawn."
        )


def _method_options(owner: str, method: str, options: dict[str, Any]) -> None:
    if method == "ssp":
        extra = sorted({"delta", "alpha", "beta", "T"} & set(options))
    elif method == "adassp":
        extra = sorted({"alpha", "beta", "T"} & set(options))
    else:
        extra = []
    if extra:
        raise NoiseawareTypeError(f"{owner}: option(s) {extra} are not used by method={method!r}.")


@statistic("regression")
def _regression(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """Private sufficient statistics of a linear regression; see the module docstring."""
    owner = _OWNER
    no_extra(owner, options, _OPTIONS)
    method = v.choice(owner, "method", options.get("method", "ssp"), METHODS)
    _method_options(owner, method, options)
    w, cols, b, intercept = _design(owner, data, options)
    n, k = w.shape
    ent = regression_entries(k, intercept)
    rows = np.array([j for j, _ in ent])
    cols_idx = np.array([m for _, m in ent])
    wtw = w.T @ w
    truth = wtw[rows, cols_idx]
    labels = [(cols[j], cols[m]) for j, m in ent]
    meta: dict[str, Any] = {
        "method": method,
        "columns": cols,
        "response": cols[-1],
        "predictors": cols[intercept:-1],
        "intercept": intercept,
        "bounds": b.tolist(),
        "clip": bool(options.get("clip", False)),
        "entry_order": ENTRY_ORDER,
        "scaling": _SCALING,
    }
    if method == "ssp":
        fam = v.choice(owner, "mechanism", mechanism or ("laplace" if ctx.epsilon is not None else "gaussian"),
                       ("gaussian", "laplace"))
        mech: Any
        if fam == "gaussian":
            mech = GaussianMechanism.from_rho(ctx.require(owner, "rho"), regression_sensitivity(k))
        else:
            mech = LaplaceMechanism.from_epsilon(ctx.require(owner, "epsilon"), regression_l1_sensitivity(k, intercept))
        _check_moments(owner, n, b, intercept, mech)
        g = mech.guarantee()
        ctx.charge_release(g, "regression", owner, "Release fewer columns.", shape=truth.shape, labels=labels,
                           mechanism=mech, metadata=meta)
        return ctx.release("regression", mech.release(truth, rng=ctx.rng), labels, mech, "joint", g, n, meta)
    v.choice(owner, "mechanism", mechanism or "gaussian", ("gaussian",))
    rho = ctx.require(owner, "rho")
    delta = v.open_unit(owner, "delta", options.get("delta", DEFAULT_DELTA))
    rho_eig = rho * EIGEN_SHARE
    rho_rest = fit_sum(rho, [], rho - rho_eig, [rho_eig])
    meta.update(rho=rho, delta=delta)
    design = cols[:-1]
    eig_mech = GaussianMechanism.from_rho(rho_eig, regression_eigen_sensitivity(k - 1))
    lam_min = np.array([float(np.linalg.eigvalsh(wtw[:-1, :-1])[0])])
    eig_meta = {"design": design}
    if method == "adassp":
        mech = GaussianMechanism.from_rho(rho_rest, regression_sensitivity(k))
        _check_moments(owner, n, b, intercept, mech)
        g = mech.guarantee().compose(eig_mech.guarantee())
        ctx.charge_release(g, "regression", owner, "Release fewer columns.", shape=truth.shape, labels=labels,
                           mechanism=mech, metadata=meta)
        noisy = mech.release(truth, rng=ctx.rng)
        eig = ctx.release("regression_eigen", eig_mech.release(lam_min, rng=ctx.rng), [("lambda_min",)], eig_mech,
                          "joint", eig_mech.guarantee(), n, eig_meta)
        return ctx.release("regression", noisy, labels, mech, "joint", g, n, meta, [eig])
    # pace_ggm: check PACE-GGM's pieces before any budget, as privatize(statistic="pace_ggm") does
    alpha = v.open_unit(owner, "alpha", options.get("alpha", 0.3))
    beta = v.open_unit(owner, "beta", options.get("beta", 0.5))
    t_opt = options.get("T")
    T = k * (k - 1) if t_opt is None else v.integer(owner, "T", t_opt, minimum=1)
    _check_pace_budgets(owner, rho_rest, alpha, beta, T, k, 0.0, pace_ggm_sensitivity(n, 1.0))
    _check_moments(owner, n, b, intercept, eig_mech)
    ctx.charge(Guarantee(rho=rho), label="regression")
    eig_value = eig_mech.release(lam_min, rng=ctx.rng)
    sub = Context(epsilon=None, rho=rho_rest, rng=ctx.rng, budget=None)
    pace = STATISTICS["pace_ggm"](w, sub, None, {"bound": 1.0, "columns": cols, "alpha": alpha, "beta": beta, "T": T})
    g = eig_mech.guarantee().compose(pace.guarantee)
    meta["design"] = design
    return ctx.release("regression", eig_value, [("lambda_min",)], eig_mech, "joint", g, n, meta, [pace])
