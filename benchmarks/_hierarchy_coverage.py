"""The coverage study of hierarchy_calibration.py: its designs, one replication (ours and GLS), pooled
coverage, the record."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass
from typing import Any

import _study
import numpy as np
from _study import machine, raw_path

from noiseaware import hierarchy


def _load_line(before: str, after: str) -> str:
    """The load line of a record: 1-minute load averages before and after, then the two ``uptime`` lines."""
    one = [re.search(r"load average: ([0-9.]+)", u) for u in (before, after)]
    b, a = (m.group(1) if m else "?" for m in one)
    return f"Load average {b} before, {a} after (`uptime` before: `{before}`; after: `{after}`)."


def header(title: str, cmd: str, run: Any) -> list[str]:
    """The first lines of a record of this study: its title, the command, the machine and the load."""
    return [f"## {title}", "", f"Command: `{cmd}`  ", f"Machine: {machine()}.  ", _load_line(*run.loads), ""]


@dataclass(frozen=True)
class Design:
    """One design of the coverage study: the synthetic tree, its tract population, and the fit's settings."""

    label: str
    shape: tuple[int, int, int]
    mean_population: float
    chains: int
    draws: int
    warmup: int
    sweeps: int

    def about(self) -> str:
        """The design in words, for the record."""
        s, c, t = self.shape
        return (f"{s} states x {c} counties x {t} tracts ({s * c * t} tracts), 3 cells, mean tract population "
                f"{self.mean_population:g}; fit: {self.chains} chains x ({self.warmup} warmup + {self.draws} draws), "
                f"{self.sweeps} count sweep(s) per draw")


#: The two designs of ``coverage``: NMF-like tract counts of tens, and a sparse file of a couple of people a tract.
DESIGNS = {
    "moderate": Design("moderate", (2, 3, 4), 60.0, chains=4, draws=1500, warmup=1000, sweeps=1),
    "sparse": Design("sparse", (2, 2, 3), 2.0, chains=4, draws=2500, warmup=1000, sweeps=2),
}


#: Seed offsets of the designs' files (a replication's truth and noise: ``rng=[offset, rep]``).
_SEED = {"moderate": 1000, "sparse": 2000}


#: The groups of intervals reported: tract totals, tract cells, and cells whose true count is at most 5.
GROUPS = ("tract totals", "tract cells", "cells with true count <= 5")


SMALL = 5


def _integer_interval(x: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Central interval of integer draws ``x`` (draws first), inclusive: ``(lo, hi, posterior mass of [lo, hi])``.

    ``lo`` and ``hi`` are the ``(1 - prob) / 2`` and ``(1 + prob) / 2`` quantiles taken as draws (lower and
    higher), so each tail outside holds at most ``(1 - prob) / 2`` of the draws and the interval's own
    posterior mass is at least ``prob`` (more where the draws are few distinct integers).
    """
    lo = np.quantile(x, (1 - prob) / 2, axis=0, method="lower")
    hi = np.quantile(x, (1 + prob) / 2, axis=0, method="higher")
    return lo, hi, ((x >= lo) & (x <= hi)).mean(axis=0)


def _tract_ess(counts: np.ndarray) -> np.ndarray:
    """Bulk ESS (ArviZ) of every tract total from ``counts`` of dims (chain, draw, leaf, cell)."""
    import arviz as az

    from noiseaware.results import from_groups

    tot = counts.sum(axis=3).astype(np.float64)
    return np.asarray(az.ess(from_groups({"posterior": {"t": tot}}), method="bulk")["t"])


def replication(design: Design, rep: int, prob: float = 0.9) -> dict[str, Any]:
    """One file of ``design`` (a new truth and new noise), fitted by ``hierarchy.fit`` and by GLS.

    Returns the row of the raw record: the truth per tract (total, cells), whether each interval covers it,
    the widths, our intervals' posterior mass, the fit's diagnostics and the tract totals' bulk ESS; a fit
    that raises gives a row with ``"error"`` (counted as a failure, never dropped).
    """
    from noiseaware import results

    sim = hierarchy.synthetic_nmf(*design.shape, mean_population=design.mean_population,
                                  rng=np.random.default_rng([_SEED[design.label], rep]))
    rel = sim.release
    truth = np.concatenate([sim.truth.sum(axis=1, keepdims=True), sim.truth], axis=1)  # (tracts, 1 + cells)
    row: dict[str, Any] = {"design": design.label, "rep": rep, "truth": truth.tolist()}
    glo, ghi = hierarchy.gls(rel).interval(prob)
    row.update(gls=_covered(glo, ghi, truth).tolist(), gls_width=np.round(ghi - glo, 4).tolist(),
               gls_below_zero=bool((glo[:, 1:] < 0).any()))
    t = time.perf_counter()
    try:
        res = hierarchy.fit(rel, chains=design.chains, draws=design.draws, warmup=design.warmup,
                            sweeps=design.sweeps, seed=rep, check_mixing=False)
    except Exception as err:  # a failure is a result of the study: recorded, reported
        row.update(error=f"{type(err).__name__}: {err}", seconds=time.perf_counter() - t)
        return row
    row["seconds"] = time.perf_counter() - t
    counts = np.asarray(results.group(res, "posterior")["counts"])  # (chain, draw, leaf, cell)
    pooled = results.draws(res, "counts")  # (chains * draws, leaf, cell)
    ours = np.concatenate([pooled.sum(axis=2, keepdims=True), pooled], axis=2)
    lo, hi, mass = _integer_interval(ours, prob)
    ess = _tract_ess(counts)
    diag = results.diagnostics(res)
    row.update(ours=_covered(lo, hi, truth).tolist(), ours_width=(hi - lo).tolist(),
               ours_mass=np.round(mass, 4).tolist(),
               totals_exact=_meets_totals(pooled, rel),
               divergences=int(diag["divergences"]), accept_rate=diag["accept_rate"], r_hat_max=diag["r_hat_max"],
               ess_tract_total_min=float(ess.min()), ess_tract_total_median=float(np.median(ess)),
               programs_compiled=int(res.attrs["noiseaware_programs_compiled"]))
    return row


def _meets_totals(pooled: np.ndarray, rel: hierarchy.NoisyHierarchy) -> bool:
    """Whether every draw's leaf counts sum to each state's exact total."""
    state = np.asarray(rel.leaf_parents)
    per_state = np.stack([pooled[:, state == s].sum(axis=(1, 2)) for s in range(len(rel.units[0]))], axis=1)
    return bool((per_state == np.asarray(rel.values[0][:, 0])[None, :]).all())


def _covered(lo: np.ndarray, hi: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """1 where ``[lo, hi]`` holds the truth, else 0 (int: the raw record stays small)."""
    return ((truth >= lo) & (truth <= hi)).astype(np.int64)


def _select(rows: list[dict[str, Any]], key: str, group: str) -> list[np.ndarray]:
    """Per replication, the values of ``key`` (e.g. ``"ours"``, ``"gls_width"``) of the intervals in ``group``."""
    out = []
    for r in rows:
        x, truth = np.asarray(r[key]), np.asarray(r["truth"])
        if group == "tract totals":
            out.append(x[:, 0])
        elif group == "tract cells":
            out.append(x[:, 1:].ravel())
        else:
            out.append(x[:, 1:][truth[:, 1:] <= SMALL])
    return out


def _pooled(per_rep: list[np.ndarray]) -> tuple[float, float, int]:
    """Pooled mean, its standard error with the replications as clusters (intervals of one file are
    correlated), and the number of intervals."""
    n = np.array([x.size for x in per_rep], dtype=np.float64)
    s = np.array([x.sum() for x in per_rep], dtype=np.float64)
    N = n.sum()
    if N == 0:
        return float("nan"), float("nan"), 0
    mean = s.sum() / N
    R = len(per_rep)
    se = float(np.sqrt(R / max(R - 1, 1) * np.sum((s - mean * n) ** 2)) / N) if R > 1 else float("nan")
    return float(mean), se, int(N)


def summarize(rows: list[dict[str, Any]], prob: float = 0.9) -> dict[str, dict[str, float]]:
    """Per group and method: coverage, its binomial band half-width, its SE by replication, width, mass."""
    ok = [r for r in rows if "error" not in r]
    out: dict[str, dict[str, float]] = {}
    for group in GROUPS:
        for method in ("ours", "gls"):
            cov, se, n = _pooled(_select(ok, method, group))
            width = _pooled(_select(ok, f"{method}_width", group))[0]
            mass = _pooled(_select(ok, "ours_mass", group))[0] if method == "ours" else float("nan")
            band = 1.96 * np.sqrt(prob * (1 - prob) / n) if n else float("nan")
            out[f"{group}|{method}"] = {"coverage": cov, "band": float(band), "se_rep": se, "n": n,
                                        "width": width, "mass": mass}
    return out


def coverage(designs: list[str], reps: int, run: _study.Run, deadline: float) -> None:
    """Run ``reps`` replications of each design (interleaved, so a deadline stops both alike) and report."""
    rows: dict[str, list[dict[str, Any]]] = {d: [] for d in designs}
    stopped = False
    for rep in range(reps):
        if run.elapsed() > deadline:
            stopped = True
            break
        for name in designs:
            rows[name].append(replication(DESIGNS[name], rep))
        if (rep + 1) % 10 == 0:
            print(f"rep {rep + 1}: {run.elapsed():.0f} s", flush=True)
            report_coverage(rows, reps, run, stopped)
    report_coverage(rows, reps, run, stopped)


def coverage_headline(name: str, rows: list[dict[str, Any]]) -> str:
    """One headline line per design: 90% coverage and width of tract totals and of cells near zero."""
    s = summarize(rows)

    def fig(key: str) -> str:
        return f"{s[key]['coverage']:.3f} (width {s[key]['width']:.1f})"

    fails = sum("error" in r for r in rows)
    return (f"{name} design, {len(rows)} replications ({fails} failed fits): 90% coverage of tract totals "
            f"{fig('tract totals|ours')} noise-aware, {fig('tract totals|gls')} GLS; cells with true count <= {SMALL}: "
            f"{fig(f'{GROUPS[2]}|ours')} noise-aware, {fig(f'{GROUPS[2]}|gls')} GLS")


def _design_part(design: Design, rows: list[dict[str, Any]], requested: int) -> list[str]:
    """The report's part for one design: what ran, the sampler's health, and the coverage table."""
    ok = [r for r in rows if "error" not in r]
    fails = [r for r in rows if "error" in r]
    s = summarize(rows)
    table = ["| intervals | method | n intervals | 90% coverage | binomial 95% band of 0.90 | SE by replication | "
             "mean width | posterior mass of our intervals |", "|---|---|---|---|---|---|---|---|"]
    for group in GROUPS:
        for method in ("ours", "gls"):
            f = s[f"{group}|{method}"]
            mass = f"{f['mass']:.3f}" if method == "ours" else "-"
            table.append(f"| {group} | {method} | {f['n']} | {f['coverage']:.3f} | {0.9 - f['band']:.3f} to "
                         f"{0.9 + f['band']:.3f} | {f['se_rep']:.3f} | {f['width']:.1f} | {mass} |")
    health = "no fit succeeded."
    if ok:
        ess_min = np.array([r["ess_tract_total_min"] for r in ok])
        div = np.array([r["divergences"] for r in ok])
        comp = [r["programs_compiled"] for r in ok]
        sec = np.array([r["seconds"] for r in ok])
        health = (
            f"Fits: median {np.median(sec):.1f} s (first, with compilation: {ok[0]['seconds']:.0f} s); programs "
            f"compiled: {sum(comp)} in {len(ok)} fits ({comp[0]} by the first). Every draw met the exact state "
            f"totals: {all(r['totals_exact'] for r in ok)}. Smallest bulk ESS of a tract total per fit: median "
            f"{np.median(ess_min):.0f}, smallest {ess_min.min():.0f} (of {design.chains * design.draws} draws), "
            f"under 400 in {int((ess_min < 400).sum())} fits; largest R-hat of the counts "
            f"{max(r['r_hat_max'] for r in ok):.3f}, over 1.01 in {sum(r['r_hat_max'] > 1.01 for r in ok)} fits. "
            f"Count moves: mean probability "
            f"of leaving the current point {np.mean([r['accept_rate'] for r in ok]):.2f}. Divergent NUTS steps "
            f"(the rates' update) in the kept draws: {int(div.sum())} of {len(ok) * design.chains * design.draws} "
            f"({100 * div.sum() / (len(ok) * design.chains * design.draws):.2f}%), in {int((div > 0).sum())} of "
            f"{len(ok)} fits. Replications where a GLS "
            f"interval for a cell reached below zero: {sum(r['gls_below_zero'] for r in rows)} of {len(rows)}.")
    failed = ("Failed fits: " + "; ".join(f"rep {r['rep']}: {r['error']}" for r in fails) + ".") if fails \
        else "Failed fits: none."
    return [f"### {design.label.capitalize()} design: {design.about()}", "",
            f"{len(rows)} of {requested} replications requested ran. {failed}", "", health, "", *table, ""]


def report_coverage(rows: dict[str, list[dict[str, Any]]], requested: int, run: _study.Run, stopped: bool) -> None:
    """Write the raw rows and the record (or print the report)."""
    seconds = run.stop().wall
    raw = raw_path("hierarchy_calibration.json")
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(rows) + "\n")
    cmd = ("nice " if os.nice(0) > 0 else "") + ".venv/bin/python benchmarks/hierarchy_calibration.py " + " ".join(
        sys.argv[1:])
    ran = min(len(r) for r in rows.values())
    stop = (f"The deadline stopped the study after {ran} of {requested} replications." if stopped
            else f"{ran} of {requested} replications ran" + ("." if ran == requested else " (a partial record, "
                                                                                         "written while running)."))
    text = "\n".join([
        *header("Census-style hierarchy: coverage of 90% intervals for tract counts, noise-aware posterior and GLS",
                cmd, run),
        f"Synthetic NMF-shaped files (`hierarchy.synthetic_nmf`: a total and 3 cells per unit, discrete Gaussian "
        "noise of variance 4 at state cells and counties and 9 at tracts, state totals exact), a new truth and "
        "new noise in each replication. Ours: `hierarchy.fit` with its defaults (the integer posterior, "
        "hierarchical prior), central 90% intervals of the integer draws, inclusive (each tail outside holds at "
        "most 5% of the draws, so an interval's own posterior mass is 0.90 or more: its mean is in the last "
        "column); GLS: the normal intervals of `hierarchy.gls`. Coverage is pooled over the replications' "
        "tracts. The binomial band is where a pooled coverage of independent intervals falls with probability "
        "0.95 when the true coverage is 0.90; the intervals of one file are correlated, so the SE by "
        "replication (the replications as clusters) is the fairer yardstick of the estimate's noise. "
        f"Wall time {seconds:.0f} s. {stop}",
        "",
        *[line for name, rs in rows.items() for line in _design_part(DESIGNS[name], rs, requested)],
    ])
    if not run.record("hierarchy_calibration", text,
                      headline=[coverage_headline(name, rs) for name, rs in rows.items() if rs]):
        print(text)
