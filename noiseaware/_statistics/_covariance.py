"""Schemas of the covariance statistics: second moments and PACE-GGM.

Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via Gaussian
Graphical Models*.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validation import owned
from ._rules import ENTRY_ORDER, entry_index, mean_sensitivity, pace_ggm_sensitivity, second_moment_sensitivity
from ._schema import (
    BOOL,
    FLOAT,
    FLOAT_LIST,
    INT,
    NAMES,
    OPEN_UNIT,
    POSITIVE,
    STR,
    FieldType,
    Int,
    ListOf,
    OneOf,
    Record,
    StatisticSchema,
    _check_columns,
    _check_labels,
    _check_sensitivity,
    _check_shape,
    _close,
    _fail,
)

__all__: list[str] = []


#: The fields of a release of ``X^T X / n`` entries (``second_moment``, ``pace_ggm``).
_SECOND_MOMENT_FIELDS: dict[str, FieldType] = {
    "columns": NAMES,
    "d": Int(minimum=2),
    "bound": POSITIVE,
    "clip": BOOL,
    "entry_order": OneOf((ENTRY_ORDER,)),
    "centering": STR,
}

#: One round of Algorithm 3 in ``metadata.rounds`` of a ``pace_ggm`` release.
_ROUND = Record(
    {
        "round": INT,
        "entry": ListOf(Int(minimum=0), length=2),
        "index": Int(minimum=0),
        "measurement": FLOAT,
        "sigma": POSITIVE,
        "epsilon": POSITIVE,
        "rho_sel": POSITIVE,
        "rho_meas": POSITIVE,
        "annealed": BOOL,
        "final": BOOL,
    }
)


def _check_second_moment(release: Any, meta: Mapping[str, Any]) -> None:
    d = meta["d"]
    cols = _check_columns(meta, d)
    m = d * (d + 1) // 2
    _check_shape(release, (m,), f"the d(d+1)/2 unique entries, d = {d}")
    want = [[cols[j], cols[k]] for j in range(d) for k in range(j + 1)]
    _check_labels(release, want, "must be [columns[j], columns[k]] for each entry in entry_order")
    delta = second_moment_sensitivity(release.n, d, meta["bound"])
    _check_sensitivity(release, delta, "d B**2 / n (L2, unique entries)")


@owned("Release")
def _check_pace_ggm_round(release: Any, meta: Mapping[str, Any]) -> None:
    step = meta["step"]
    want = {"select": "exponential", "measure": "gaussian"}[step]
    if release.mechanism.family != want:
        _fail("mechanism.family", f"must be {want!r} for step {step!r}", release.mechanism.family)
    _check_shape(release, (1,), "one selection or one measurement per round")
    if step == "select" and (release.values.dtype.kind != "i" or release.values[0] < 0):
        _fail("values", "must be one non-negative entry index for a selection", release.values.tolist())


@owned("Release")
def _check_pace_ggm(release: Any, meta: Mapping[str, Any]) -> None:
    n = release.n
    d, b = meta["d"], meta["bound"]
    cols = _check_columns(meta, d)
    _check_shape(release, (d,), "the diagonal measurements of Algorithm 2")
    _check_labels(release, [[c, c] for c in cols], "must be [columns[j], columns[j]] for the diagonal")
    delta = pace_ggm_sensitivity(n, b)
    _check_sensitivity(release, delta, "2 B**2 / n (one entry of X^T X / n, Ferrando et al. (2026) App. A)")
    alpha, beta, T, rho = meta["alpha"], meta["beta"], meta["T"], meta["rho"]
    rho_mean = _check_pace_ggm_centre(release, meta, rho)  # 0 without centring
    rho_full, rho = rho, rho - rho_mean  # below, rho is what Algorithm 1 gets
    rho_diag = meta["rho_diag"]
    if not _close(rho_diag, alpha * rho):
        _fail("metadata.rho_diag", f"must be alpha * (rho - rho_mean) = {alpha * rho!r}", rho_diag)
    if not _close(release.mechanism.rho * d, rho_diag):
        rule = f"must give d * Delta**2 / (2 sigma**2) = rho_diag = {rho_diag!r}"
        _fail("mechanism.sigma", rule, release.mechanism.sigma)
    g = release.guarantee
    if g.rho is None or not _close(g.rho, rho_full) or g.epsilon is not None:
        _fail("guarantee", f"must be rho-zCDP with rho = metadata.rho = {rho_full!r}", g.to_dict())
    rounds = meta["rounds"]
    comps = release.components[: len(release.components) - (rho_mean > 0)]
    if len(comps) != 2 * len(rounds):
        _fail("components", f"must hold a selection and a measurement per round ({2 * len(rounds)})", len(comps))
    per = (rho - rho_diag) / T
    rs, rm = beta * per, (1.0 - beta) * per
    used = rho_diag
    total = rho_diag
    for t, r in enumerate(rounds):
        where = f"metadata.rounds[{t}]"
        if r["round"] != t + 1:
            _fail(f"{where}.round", f"must be {t + 1}", r["round"])
        ent = r["entry"]
        if not ent[1] <= ent[0] < d:
            _fail(f"{where}.entry", f"must be [j, k] with 0 <= k <= j < d = {d}", ent)
        idx = r["index"]
        if idx != entry_index(ent[0], ent[1]):
            _fail(f"{where}.index", f"must be j(j+1)/2 + k = {entry_index(ent[0], ent[1])}", idx)
        z, sigma, eps, final = r["measurement"], r["sigma"], r["epsilon"], r["final"]
        got_rs, got_rm = r["rho_sel"], r["rho_meas"]
        left = rho - used
        want_final = left < 2.0 * (rs + rm)
        if want_final or final:
            rs, rm = beta * left, (1.0 - beta) * left
        if final != (t == len(rounds) - 1):
            _fail(f"{where}.final", "must be true for the last round only (Algorithm 3 lines 4-6)", final)
        if not (_close(got_rs, rs) and _close(got_rm, rm)):
            _fail(
                f"{where}.rho_sel/rho_meas",
                f"must follow Algorithm 3 from the start (beta (1-alpha) rho / T, ...) and the annealed flags: "
                f"[{rs!r}, {rm!r}]",
                [got_rs, got_rm],
            )
        if not _close(eps * eps / 8.0, got_rs):
            _fail(f"{where}.epsilon", "must be sqrt(8 rho_sel)", eps)
        if not _close(delta * delta / (2.0 * sigma * sigma), got_rm):
            _fail(f"{where}.sigma", "must be Delta / sqrt(2 rho_meas)", sigma)
        sel, meas = comps[2 * t], comps[2 * t + 1]
        label = [cols[ent[0]], cols[ent[1]]]
        for c, step, name in ((sel, "select", "exponential"), (meas, "measure", "gaussian")):
            cw = f"components[{2 * t + (step == 'measure')}]"
            if c.statistic != "pace_ggm_round" or c.metadata.get("step") != step or c.metadata.get("round") != t + 1:
                _fail(cw, f"must be the {step} step of round {t + 1}", c.statistic)
            if c.n != n or [list(x) for x in c.labels] != [label]:
                _fail(f"{cw}.n/labels", f"must be n = {n} and the selected entry {label}", [c.n, c.labels])
            if c.mechanism.family != name or not _close(float(c.mechanism.sensitivity), delta):
                _fail(f"{cw}.mechanism", f"must be {name} with sensitivity Delta = {delta!r}", c.mechanism.to_dict())
        if int(sel.values[0]) != idx or not _close(sel.mechanism.epsilon, eps):
            rule = f"round {t + 1} must select index {idx} with epsilon {eps!r}"
            _fail("components.select", rule, sel.values.tolist())
        if float(meas.values[0]) != z or not _close(meas.mechanism.sigma, sigma):
            rule = f"round {t + 1} must measure {z!r} with sigma {sigma!r}"
            _fail("components.measure", rule, meas.values.tolist())
        total += got_rs + got_rm
        used = rho if final else used + rs + rm
        if r["annealed"] and not final:
            rs, rm = 2.0 * rs, 4.0 * rm
    if not math.isclose(total + rho_mean, rho_full, rel_tol=1e-9):
        rule = f"budgets must add up to rho = {rho_full!r} with rho_diag and rho_mean (fully adaptive composition)"
        _fail("metadata.rounds", rule, total + rho_mean)


@owned("Release")
def _check_pace_ggm_centre(release: Any, meta: Mapping[str, Any], rho: float) -> float:
    """Centred ``pace_ggm`` releases: the mean component, its budget, and the centred bound; returns ``rho_mean``."""
    keys = ("center", "mean_share", "rho_mean", "data_bound", "mean")
    present = [k for k in keys if k in meta]
    comps = release.components
    has_mean = bool(comps) and comps[-1].statistic == "pace_ggm_mean"
    if not present:
        if has_mean or any(c.statistic == "pace_ggm_mean" for c in comps):
            _fail("components", "must not hold a pace_ggm_mean release without metadata.center", len(comps))
        return 0.0
    if present != list(keys) or meta["center"] is not True:
        _fail("metadata.center", f"must come with all of {list(keys)} and be true", present)
    if not has_mean or sum(c.statistic == "pace_ggm_mean" for c in comps) != 1:
        _fail("components", "must end with the one pace_ggm_mean release of a centred release", len(comps))
    n, d = release.n, meta["d"]
    share, rho_mean, b0 = meta["mean_share"], meta["rho_mean"], meta["data_bound"]
    if not _close(rho_mean, share * rho):
        _fail("metadata.rho_mean", f"must be mean_share * rho = {share * rho!r} with mean_share < 1", rho_mean)
    c = np.asarray(meta["mean"], dtype=np.float64)
    comp = comps[-1]
    if c.shape != (d,) or comp.values.shape != (d,):
        _fail("metadata.mean", f"must hold d = {d} values, as the mean component", [c.shape, comp.values.shape])
    if not np.array_equal(c, np.clip(comp.values.astype(np.float64), -b0, b0)):
        _fail("metadata.mean", "must be the released mean clipped to [-data_bound, data_bound]", c.tolist())
    want_b = b0 + float(np.max(np.abs(c)))
    if not _close(meta["bound"], want_b):
        _fail("metadata.bound", f"must be the centred bound data_bound + max|mean| = {want_b!r}", meta["bound"])
    if comp.mechanism.family != "gaussian" or comp.n != n or comp.metadata.get("step") != "mean":
        _fail("components[-1]", f"must be the Gaussian mean release of n = {n} records", comp.mechanism.to_dict())
    _check_sensitivity(comp, mean_sensitivity(n, d, b0), "2 B sqrt(d) / n (L2, the mean vector)")
    g = comp.guarantee
    if g.rho is None or not _close(g.rho, rho_mean) or not _close(comp.mechanism.rho, rho_mean):
        _fail("components[-1].guarantee", f"must be rho_mean = {rho_mean!r}-zCDP", g.to_dict())
    return rho_mean


#: The covariance statistics, by schema.
SCHEMAS: tuple[StatisticSchema, ...] = (
    StatisticSchema(
        "second_moment",
        families=("gaussian",),
        required=_SECOND_MOMENT_FIELDS,
        min_n=2,
        check=_check_second_moment,
        sensitivity="d B**2 / n in L2 on the d(d+1)/2 unique entries of X^T X / n, |x_j| <= B",
    ),
    StatisticSchema(
        "pace_ggm_round",
        families=("exponential", "gaussian"),
        required={"round": Int(minimum=1), "step": OneOf(("select", "measure"))},
        check=_check_pace_ggm_round,
        sensitivity=(
            "2 B**2 / n per entry and per selection score (Ferrando et al. 2026, App. A); checked by pace_ggm"
        ),
    ),
    StatisticSchema(
        "pace_ggm",
        families=("gaussian",),
        compositions=("sequential",),
        required={
            **_SECOND_MOMENT_FIELDS,
            "alpha": OPEN_UNIT,
            "beta": OPEN_UNIT,
            "T": Int(minimum=1),
            "rho": POSITIVE,
            "rho_diag": POSITIVE,
            "solver": STR,
            "rounds": ListOf(_ROUND, min_length=1),
        },
        optional={
            "center": BOOL,
            "mean_share": OPEN_UNIT,
            "rho_mean": POSITIVE,
            "data_bound": POSITIVE,
            "mean": FLOAT_LIST,
        },
        min_n=2,
        check=_check_pace_ggm,
        components=("pace_ggm_round", "pace_ggm_mean"),
        sensitivity="2 B**2 / n per entry of X^T X / n with |x_j| <= B (Ferrando et al. 2026, App. A.2)",
    ),
    StatisticSchema(
        "pace_ggm_mean",
        families=("gaussian",),
        required={"step": STR},
        sensitivity="2 B sqrt(d) / n in L2 on the mean vector, |x_j| <= B; checked by pace_ggm",
    ),
)
