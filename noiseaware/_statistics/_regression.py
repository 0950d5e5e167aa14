r"""Schemas of the regression release: noisy sufficient statistics of a linear regression.

The release holds the unique entries of :math:`W^\top W`, with ``W = [1, X - m_x, y - m_y] / b`` the
design and response shifted by the public mid-points ``m`` of their ranges (``metadata.shift``; a
record without it has shift 0) and scaled column by column by the ranges' half-widths ``b``
(``metadata.bounds``; the constant intercept column, when present, has bound 1 and shift 0, and its
``(0, 0)`` entry ``n`` is public and left out), released by the method named in ``metadata.method``:

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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._core._regression_release import INTERCEPT, METHODS, RegressionMetadata
from .._validation import owned
from ._rules import (
    IMPLAUSIBLE_LOG2,
    additive_noise_reach,
    regression_eigen_sensitivity,
    regression_l1_sensitivity,
    regression_sensitivity,
)
from ._schema import (
    STR_LIST,
    StatisticSchema,
    _check_labels,
    _check_sensitivity,
    _check_shape,
    _close,
    _fail,
)

__all__ = ["INTERCEPT", "MAX_MOMENT", "METHODS", "MIN_NOISE_SCALE", "moment_rule", "regression_entries"]

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


#: Largest ``bounds[j] * bounds[l] * (n + T)`` a regression release may imply (``T`` the noise's reach in ``W``'s
#: units): the analyst's :math:`Z^\top Z` entries, their noise scales and the likelihood's fourth moments of ``Z`` are
#: products of at most two such numbers, so they stay finite in float64 (1e300 < 1.8e308).
MAX_MOMENT = 1e150
#: Smallest noise scale ``bounds[j] * bounds[l] * sigma`` (or ``* b``) of an entry in ``Z``'s units: its square, the
#: entry's noise variance, stays a normal float64 (a scale that underflows to 0 would mark the entry as exact).
MIN_NOISE_SCALE = 1e-150


def moment_rule(
    n: int, bounds: Sequence[float], intercept: bool, mechanism: Any, shift: Sequence[float] | None = None
) -> str | None:
    r"""The rule the public bounds of a regression release break, in words, or None when they keep every number finite.

    With ``T`` the noise's ``2**-64`` reach (:func:`~noiseaware._statistics.additive_noise_reach`),
    every released entry :math:`(W^\top W)_{jl}` lies in :math:`[-(n + T), n + T]`, so the
    analyst's :math:`(Z^\top Z)_{jl} = b_j b_l (W^\top W)_{jl}` is at most :math:`b_j b_l (n + T)`
    in magnitude: that must be at most :data:`MAX_MOMENT`, and the entry's noise scale
    :math:`b_j b_l \sigma` at least :data:`MIN_NOISE_SCALE`. With a ``shift`` ``s`` (the ranges'
    mid-points) the first rule is on the data's units, :math:`(|s_j| + b_j)(|s_l| + b_l)(n + T)`, the
    bound of the analyst's :math:`(Z^\top Z)_{jl}` once the shift is undone. One rule for the curator
    (``privatize`` refuses such bounds before any budget is spent) and the loader.

    Examples
    --------
    >>> from noiseaware.mechanisms import GaussianMechanism
    >>> moment_rule(100, [1.0, 2.0, 3.0], True, GaussianMechanism(sigma=3.0)) is None
    True
    >>> moment_rule(100, [1.0, 1e200, 3.0], True, GaussianMechanism(sigma=3.0))[:40]
    'must keep bounds[j] * bounds[l] * (n + T'
    """
    k = len(bounds)
    b = np.asarray(bounds, dtype=np.float64)
    reach = b if shift is None else np.abs(np.asarray(shift, dtype=np.float64)) + b
    ent = regression_entries(k, intercept)
    rows = np.array([j for j, _ in ent])
    cols = np.array([m for _, m in ent])
    with np.errstate(over="ignore", under="ignore"):
        unit = b[rows] * b[cols]
        t = additive_noise_reach(mechanism)
        per = float(mechanism.sigma if mechanism.family == "gaussian" else mechanism.scale)
        top = float(np.max(reach[rows] * reach[cols])) * (float(n) + (t or 0.0))
        low = float(np.min(unit)) * per
    if not top <= MAX_MOMENT:
        return (
            f"must keep bounds[j] * bounds[l] * (n + T) <= {MAX_MOMENT:g} (with a shift, (|shift[j]| + bounds[j]) * "
            f"(|shift[l]| + bounds[l]) * (n + T)) for every released entry (n = {n}, T = "
            f"{t or 0.0:.6g} the noise's reach in W's units), so that Z^T Z, its noise and the likelihood's fourth "
            f"moments stay finite in float64; the largest is {top:.6g}. Express the data in units where the bounds "
            "are nearer 1"
        )
    if not low >= MIN_NOISE_SCALE:
        return (
            f"must keep each entry's noise scale bounds[j] * bounds[l] * {per:.6g} >= {MIN_NOISE_SCALE:g}, so that "
            f"its square (the noise variance in Z's units) does not underflow to 0; the smallest is {low:.6g}. "
            "Express the data in units where the bounds are nearer 1"
        )
    return None


@owned("Release")
def _check_w_columns(md: RegressionMetadata) -> tuple[int, list[str], bool]:
    """``(k, columns, intercept)``: the columns of ``W``, agreeing with the intercept, predictors and response."""
    cols, intercept = list(md.columns), md.intercept
    k = len(cols)
    if k < 2 + intercept:
        _fail("metadata.columns", "must hold the intercept (if any), >= 1 predictor and the response", cols)
    if (cols[0] == INTERCEPT) != intercept or INTERCEPT in cols[intercept:]:
        _fail("metadata.columns", f"must start with {INTERCEPT!r} exactly when metadata.intercept is true", cols)
    if md.response != cols[-1]:
        _fail("metadata.response", f"must be the last column {cols[-1]!r}", md.response)
    if list(md.predictors) != cols[intercept:-1]:
        _fail("metadata.predictors", f"must be the columns between intercept and response {cols[intercept:-1]}",
              list(md.predictors))
    bounds = list(md.bounds)
    if len(bounds) != k or (intercept and bounds[0] != 1.0):
        _fail("metadata.bounds", f"must hold {k} bounds > 0, the intercept's 1.0 first if present", bounds)
    shift = None if md.shift is None else list(md.shift)
    if shift is not None:
        s, h = np.asarray(shift, dtype=np.float64), np.asarray(bounds, dtype=np.float64)
        if len(shift) != k or (intercept and s[0] != 0.0) or (not intercept and np.any(s != 0.0)):
            _fail("metadata.shift", f"must hold {k} mid-points, the intercept's 0.0 first if present, and be all 0.0 "
                  "without an intercept (the shift is undone through the intercept column)", shift)
        with np.errstate(over="ignore"):
            ends = np.abs(s) + h
        if not np.all(np.isfinite(ends)):
            _fail("metadata.shift", "must keep every range shift -+ bounds finite in float64", shift)
    return k, cols, intercept


@owned("Release")
def _check_entries(release: Any, k: int, cols: list[str], intercept: bool) -> None:
    ent = regression_entries(k, intercept)
    _check_shape(release, (len(ent),), "the unique entries of W^T W but the public (0, 0)")
    want = [[cols[j], cols[m]] for j, m in ent]
    _check_labels(release, want, "must be [columns[j], columns[l]] for each entry in entry_order")
    n, t = float(release.n), additive_noise_reach(release.mechanism) or 0.0
    lower = np.array([0.0 if j == m else -n for j, m in ent])  # a diagonal entry is a sum of squares
    vals = release.values.astype(np.float64)
    bad = (vals < lower - t) | (vals > n + t)
    if np.any(bad):
        i = int(np.argmax(bad))
        _fail(
            f"values[{i}]",
            f"must lie in [{lower[i] - t:.6g}, {n + t:.6g}]: the entry {want[i]} of W^T W (|w| <= 1) lies in "
            f"[{lower[i]:g}, {n:g}] for n = {n:g} records, and the {release.mechanism.family} noise exceeds "
            f"{t:.6g} with probability below 2**-{IMPLAUSIBLE_LOG2}",
            float(vals[i]),
        )


@owned("Release")
def _check_budget(release: Any, md: RegressionMetadata, method: str) -> float:
    """``metadata.rho`` (and ``delta``) of the adaptive methods; returns the eigenvalue release's rho."""
    if release.mechanism.family != "gaussian":
        _fail("mechanism.family", f"must be 'gaussian' for method {method!r} (rho-zCDP)", release.mechanism.family)
    for key, x in (("rho", md.rho), ("delta", md.delta)):
        if x is None:
            _fail(f"metadata.{key}", f"is missing (required for method {method!r})", None)
    rho = float(md.rho)  # type: ignore[arg-type]
    g = release.guarantee
    if g.rho is None or g.epsilon is not None or g.rho > rho * (1.0 + 1e-12) or not _close(g.rho, rho):
        _fail("guarantee", f"must be rho-zCDP with rho = metadata.rho = {rho!r}", g.to_dict())
    return rho * EIGEN_SHARE


@owned("Release")
def _check_eigen_values(release: Any, p: int) -> None:
    """One measurement of the minimum eigenvalue of the ``p`` scaled design columns' ``W_x^T W_x``.

    The eigenvalue lies in ``[0, n]`` (``W_x^T W_x`` is positive semi-definite and its smallest
    eigenvalue is at most its trace over ``p``, a sum of ``n`` squared norms of at most ``p``
    each, over ``p``); the measurement must lie within the noise's reach of that range.
    """
    if release.values.shape != (1,) or [list(x) for x in release.labels] != [["lambda_min"]]:
        _fail("values", "must be the one minimum-eigenvalue measurement labelled 'lambda_min'", release.values.tolist())
    _check_sensitivity(release, regression_eigen_sensitivity(p), "p (the design's columns)")
    n, t = float(release.n), additive_noise_reach(release.mechanism) or 0.0
    x = float(release.values[0])
    if not -t <= x <= n + t:
        _fail(
            "values[0]",
            f"must lie in [{-t:.6g}, {n + t:.6g}]: the minimum eigenvalue lies in [0, n = {n:g}] and the noise exceeds "
            f"{t:.6g} with probability below 2**-{IMPLAUSIBLE_LOG2}",
            x,
        )


@owned("Release")
def _check_eigen_release(c: Any, where: str, n: int, design: list[str], rho_eig: float) -> None:
    if c.statistic != "regression_eigen" or c.n != n or list(c.metadata.get("design", [])) != design:
        _fail(where, f"must be the regression_eigen release of the design {design} with n = {n}", c.statistic)
    if not _close(c.mechanism.rho, rho_eig):
        _fail(f"{where}.mechanism.sigma", f"must give rho / 3 = {rho_eig!r}", c.mechanism.sigma)


@owned("Release")
def _check_regression(release: Any, md: RegressionMetadata) -> None:
    n, method = release.n, md.method
    k, cols, intercept = _check_w_columns(md)
    broken = moment_rule(n, md.bounds, intercept, release.mechanism, md.shift)
    if broken is not None:
        _fail("metadata.bounds", broken, list(md.bounds))
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
        for key, x in (("rho", md.rho), ("delta", md.delta)):
            if x is not None:
                _fail(f"metadata.{key}", "must not be given for method 'ssp'", x)
        return
    rho_eig = _check_budget(release, md, method)
    if method == "adassp":
        _check_entries(release, k, cols, intercept)
        _check_sensitivity(release, regression_sensitivity(k), "k (L2, unique entries of W^T W)")
        if len(comps) != 1:
            _fail("components", "must hold the one regression_eigen release of method 'adassp'", len(comps))
        _check_eigen_release(comps[0], "components[0]", n, cols[:-1], rho_eig)
        if not _close(release.mechanism.rho, md.rho - rho_eig):  # type: ignore[operator]
            _fail("mechanism.sigma", "must give 2 rho / 3 to the sufficient statistics", release.mechanism.sigma)
        return
    # pace_ggm: the values are the eigenvalue measurement, the component the PACE-GGM release of W
    _check_eigen_values(release, k - 1)  # the design's columns, intercept included
    if not _close(release.mechanism.rho, rho_eig):
        _fail("mechanism.sigma", f"must give rho / 3 = {rho_eig!r} to the minimum eigenvalue", release.mechanism.sigma)
    design = None if md.design is None else list(md.design)
    if design != cols[:-1]:
        _fail("metadata.design", f"must be the design columns {cols[:-1]}", design)
    if len(comps) != 1 or comps[0].statistic != "pace_ggm":
        _fail("components", "must hold the one pace_ggm release of method 'pace_ggm'", len(comps))
    pg = comps[0]
    if pg.n != n or list(pg.metadata["columns"]) != cols or pg.metadata["bound"] != 1.0 or "center" in pg.metadata:
        _fail("components[0]", f"must be the uncentred pace_ggm release of W (columns {cols}, bound 1, n = {n})",
              [pg.n, pg.metadata["columns"], pg.metadata["bound"]])
    if not _close(pg.metadata["rho"], md.rho - rho_eig):  # type: ignore[operator]
        _fail("components[0].metadata.rho", "must be 2 rho / 3", pg.metadata["rho"])


def _check_eigen(release: Any, eigen_meta: Mapping[str, Any]) -> None:
    """The ``regression_eigen`` release (its own statistic, with the one field ``design``)."""
    _check_eigen_values(release, len(eigen_meta["design"]))


#: The regression statistics, by schema.
SCHEMAS: tuple[StatisticSchema, ...] = (
    StatisticSchema(
        "regression",
        families=("gaussian", "laplace"),
        declaration=RegressionMetadata,
        min_n=2,
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
