r"""Schemas of the regression release: noisy sufficient statistics of a linear regression.

The release holds the unique entries of :math:`W^\top W`, with ``W = [1, X, y] / b`` the design and
response scaled column by column by their public bounds (the constant intercept column, when
present, has bound 1 and its ``(0, 0)`` entry ``n`` is public and left out), released by the
method named in ``metadata.method``:

* ``"ssp"``: one Gaussian (rho-zCDP, L2 sensitivity ``k``) or Laplace (epsilon-DP, L1 sensitivity
  ``k**2 - [intercept]``) draw per unique entry (sufficient statistic perturbation);
* ``"adassp"``: the same Gaussian release with ``2 rho / 3`` and a component ``"regression_eigen"``,
  the minimum eigenvalue of the design's :math:`W_x^\top W_x` with ``rho / 3`` (Wang 2018, *Revisiting
  differentially private linear regression: optimal and adaptive prediction & estimation in unbounded
  domain*, Algorithm 2);
* ``"pace_ggm"``: the minimum eigenvalue (``rho / 3``) as the values, and a component ``"pace_ggm"``
  (Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via Gaussian
  Graphical Models*, Algorithm 1, with ``2 rho / 3``) of ``W`` with bound 1 (their App. G).
"""

from __future__ import annotations

from typing import Any

from ._rules import (
    ENTRY_ORDER,
    regression_eigen_sensitivity,
    regression_l1_sensitivity,
    regression_sensitivity,
)
from ._schema import (
    BOOL,
    FLOAT,
    FLOAT_LIST,
    STR,
    STR_LIST,
    StatisticSchema,
    _check_sensitivity,
    _close,
    _fail,
    _float,
    _float_list,
    _int,
    _meta,
    _str,
    _str_list,
)

__all__ = ["INTERCEPT", "METHODS", "regression_entries"]

#: The name of the constant intercept column in a regression release.
INTERCEPT = "(intercept)"

#: The methods of a regression release.
METHODS = ("ssp", "adassp", "pace_ggm")

#: The share of rho the minimum-eigenvalue release gets (``adassp`` and ``pace_ggm``), as in Wang (2018)
#: Algorithm 2 and Ferrando et al. (2026) App. G.
EIGEN_SHARE = 1.0 / 3.0


def regression_entries(k: int, intercept: bool) -> list[tuple[int, int]]:
    """The released entries ``(j, l)``, ``j >= l``, of a ``k``-column ``W^T W`` (no ``(0, 0)`` with an intercept).

    Examples
    --------
    >>> regression_entries(3, True)
    [(1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]
    """
    return [(j, m) for j in range(k) for m in range(j + 1) if not (intercept and j == 0)]


def _check_common(release: Any) -> tuple[int, int, list[str], bool, str]:
    n = _int("n", release.n, minimum=2)
    method = _str("metadata.method", _meta(release, "method"))
    if method not in METHODS:
        _fail("metadata.method", f"must be one of {list(METHODS)}", method)
    cols = _str_list("metadata.columns", _meta(release, "columns"))
    k = len(cols)
    intercept = _meta(release, "intercept")
    if len(set(cols)) != k or k < 2 + intercept:
        _fail("metadata.columns", "must hold unique names: the intercept (if any), >= 1 predictor, the response", cols)
    if (cols[0] == INTERCEPT) != intercept or INTERCEPT in cols[intercept:]:
        _fail("metadata.columns", f"must start with {INTERCEPT!r} exactly when metadata.intercept is true", cols)
    if _meta(release, "response") != cols[-1]:
        _fail("metadata.response", f"must be the last column {cols[-1]!r}", _meta(release, "response"))
    if list(_str_list("metadata.predictors", _meta(release, "predictors"))) != cols[intercept:-1]:
        _fail("metadata.predictors", f"must be the columns between intercept and response {cols[intercept:-1]}",
              _meta(release, "predictors"))
    bounds = _float_list("metadata.bounds", _meta(release, "bounds"))
    if len(bounds) != k or any(not b > 0.0 for b in bounds) or (intercept and bounds[0] != 1.0):
        _fail("metadata.bounds", f"must hold {k} bounds > 0, the intercept's 1.0 first if present", bounds)
    if _meta(release, "entry_order") != ENTRY_ORDER:
        _fail("metadata.entry_order", f"must be {ENTRY_ORDER!r}", _meta(release, "entry_order"))
    return n, k, cols, bool(intercept), method


def _check_entries(release: Any, k: int, cols: list[str], intercept: bool) -> None:
    ent = regression_entries(k, intercept)
    if release.values.shape != (len(ent),):
        _fail("shape", f"must be [{len(ent)}] (the unique entries of W^T W but the public (0, 0))",
              list(release.values.shape))
    want = [[cols[j], cols[m]] for j, m in ent]
    if [list(lab) for lab in release.labels] != want:
        got = [list(x) for x in release.labels]
        _fail("labels", "must be [columns[j], columns[l]] for each entry in entry_order", got)


def _check_budget(release: Any, method: str) -> float:
    """``metadata.rho`` (and ``delta``) of the adaptive methods; returns the eigenvalue release's rho."""
    if release.mechanism.family != "gaussian":
        _fail("mechanism.family", f"must be 'gaussian' for method {method!r} (rho-zCDP)", release.mechanism.family)
    for key in ("rho", "delta"):
        if key not in release.metadata:
            _fail(f"metadata.{key}", f"is missing (required for method {method!r})", None)
    rho = _float("metadata.rho", _meta(release, "rho"), lo=0.0, open_lo=True)
    if not _float("metadata.delta", _meta(release, "delta"), lo=0.0, open_lo=True) < 1.0:
        _fail("metadata.delta", "must be in (0, 1)", _meta(release, "delta"))
    g = release.guarantee
    if g.rho is None or g.epsilon is not None or g.rho > rho * (1.0 + 1e-12) or not _close(g.rho, rho):
        _fail("guarantee", f"must be rho-zCDP with rho = metadata.rho = {rho!r}", g.to_dict())
    return rho * EIGEN_SHARE


def _check_eigen_release(c: Any, where: str, n: int, design: list[str], rho_eig: float) -> None:
    if c.statistic != "regression_eigen" or c.n != n or list(c.metadata.get("design", [])) != design:
        _fail(where, f"must be the regression_eigen release of the design {design} with n = {n}", c.statistic)
    if not _close(c.mechanism.rho, rho_eig):
        _fail(f"{where}.mechanism.sigma", f"must give rho / 3 = {rho_eig!r}", c.mechanism.sigma)


def _check_regression(release: Any) -> None:
    n, k, cols, intercept, method = _check_common(release)
    p_x = k - 1  # design columns, intercept included
    fam = release.mechanism.family
    comps = release.components
    if method == "ssp":
        _check_entries(release, k, cols, intercept)
        if comps:
            _fail("components", "must be empty for method 'ssp'", len(comps))
        if fam == "gaussian":
            _check_sensitivity(release, regression_sensitivity(k), "k (L2, unique entries of W^T W)")
        else:
            _check_sensitivity(release, regression_l1_sensitivity(k, intercept), "k**2 - [intercept] (L1)")
        for key in ("rho", "delta", "alpha", "beta", "T"):
            if key in release.metadata:
                _fail(f"metadata.{key}", "must not be given for method 'ssp'", release.metadata[key])
        return
    rho_eig = _check_budget(release, method)
    if method == "adassp":
        _check_entries(release, k, cols, intercept)
        _check_sensitivity(release, regression_sensitivity(k), "k (L2, unique entries of W^T W)")
        if len(comps) != 1:
            _fail("components", "must hold the one regression_eigen release of method 'adassp'", len(comps))
        _check_eigen_release(comps[0], "components[0]", n, cols[:-1], rho_eig)
        if not _close(release.mechanism.rho, release.metadata["rho"] - rho_eig):
            _fail("mechanism.sigma", "must give 2 rho / 3 to the sufficient statistics", release.mechanism.sigma)
        return
    # pace_ggm: the values are the eigenvalue measurement, the component the PACE-GGM release of W
    if release.values.shape != (1,) or [list(x) for x in release.labels] != [["lambda_min"]]:
        _fail("values", "must be the one minimum-eigenvalue measurement labelled 'lambda_min'", release.values.tolist())
    _check_sensitivity(release, regression_eigen_sensitivity(p_x), "p (the design's columns)")
    if not _close(release.mechanism.rho, rho_eig):
        _fail("mechanism.sigma", f"must give rho / 3 = {rho_eig!r} to the minimum eigenvalue", release.mechanism.sigma)
    design = release.metadata.get("design")
    if design is None or list(design) != cols[:-1]:
        _fail("metadata.design", f"must be the design columns {cols[:-1]}", design)
    if len(comps) != 1 or comps[0].statistic != "pace_ggm":
        _fail("components", "must hold the one pace_ggm release of method 'pace_ggm'", len(comps))
    pg = comps[0]
    if pg.n != n or list(pg.metadata["columns"]) != cols or pg.metadata["bound"] != 1.0 or "center" in pg.metadata:
        _fail("components[0]", f"must be the uncentred pace_ggm release of W (columns {cols}, bound 1, n = {n})",
              [pg.n, pg.metadata["columns"], pg.metadata["bound"]])
    if not _close(pg.metadata["rho"], release.metadata["rho"] - rho_eig):
        _fail("components[0].metadata.rho", "must be 2 rho / 3", pg.metadata["rho"])


def _check_eigen(release: Any) -> None:
    design = _str_list("metadata.design", _meta(release, "design"))
    if release.values.shape != (1,) or [list(x) for x in release.labels] != [["lambda_min"]]:
        _fail("values", "must be the one minimum-eigenvalue measurement labelled 'lambda_min'", release.values.tolist())
    _check_sensitivity(release, regression_eigen_sensitivity(len(design)), "p (the design's columns)")


_COMMON = {
    "method": STR,
    "columns": STR_LIST,
    "response": STR,
    "predictors": STR_LIST,
    "intercept": BOOL,
    "bounds": FLOAT_LIST,
    "clip": BOOL,
    "entry_order": STR,
    "scaling": STR,
}

#: The regression statistics, by schema.
SCHEMAS: tuple[StatisticSchema, ...] = (
    StatisticSchema(
        "regression",
        families=("gaussian", "laplace"),
        required=_COMMON,
        optional={"rho": FLOAT, "delta": FLOAT, "design": STR_LIST},
        check=_check_regression,
        components=("regression_eigen", "pace_ggm"),
        sensitivity=(
            "unique entries of W^T W, W = [1, X, y] / bounds (|w_j| <= 1, k columns): k in L2, k**2 - [intercept] "
            "in L1; the design's minimum eigenvalue: p = k - 1"
        ),
    ),
    StatisticSchema(
        "regression_eigen",
        families=("gaussian",),
        required={"design": STR_LIST},
        check=_check_eigen,
        sensitivity="p (the number of scaled design columns) for lambda_min(W_x^T W_x) (Weyl's inequality)",
    ),
)
