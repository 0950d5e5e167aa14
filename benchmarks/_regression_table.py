"""The record of regression_calibration.py: raw rows, pooling of chunks, the study's cells and its coverage table."""

from __future__ import annotations

import json
from typing import Any

import _study
import numpy as np
from _study import machine, raw_path


def _bits(hits: np.ndarray) -> str:
    """One replication's hits, one per coefficient, as a string of 0 and 1 (compact in the raw file)."""
    return "".join("1" if h else "0" for h in np.asarray(hits, dtype=bool))


def _unbits(reps: list[str]) -> np.ndarray:
    """``(reps, d + 1)`` booleans from :func:`_bits` strings."""
    return np.array([[c == "1" for c in r] for r in reps], dtype=bool).reshape(len(reps), -1)


def _dump(rows: list[dict[str, Any]]) -> str:
    """The raw rows as JSON, each row's per-replication record on one line of its own per field."""
    marks = {}
    out = []
    for i, r in enumerate(rows):
        if "per_rep" in r:
            r = dict(r, per_rep={k: f"@{i}:{k}@" for k in r["per_rep"]})
            marks.update({f'"@{i}:{k}@"': json.dumps(v, separators=(",", ":")) for k, v in rows[i]["per_rep"].items()})
        out.append(r)
    text = json.dumps(out, indent=1)
    for mark, value in marks.items():
        text = text.replace(mark, value)
    return text + "\n"


def summarise(row: dict[str, Any]) -> dict[str, Any]:
    """Fill a row's summary (coverage, its worst coefficient, SBC, clipping) from its per-replication record."""
    from scipy import stats

    rec = row["per_rep"]
    clean = np.array(rec["clean"], dtype=bool)
    out = dict(row, reps=int(clean.size), clipped=float(np.mean(rec["clipped"])), adassp_formed=int(sum(rec["formed"])),
               unclipped_reps=int(clean.sum()))
    for level in ("90", "95"):
        h = _unbits(rec[f"aware{level}"])[clean]
        out[f"aware{level}_unclipped"] = float(h.mean()) if h.size else float("nan")
    for name in ("aware", "blind", "adassp"):
        for level in ("90", "95"):
            if f"{name}{level}" not in rec:  # the noise-blind fit left out (``--skip-blind``)
                continue
            h = _unbits(rec[f"{name}{level}"])  # (reps, d + 1)
            out[f"{name}{level}"] = float(h.mean())
            out[f"{name}{level}_min"] = float(h.mean(axis=0).min())
    counts = np.histogram(np.array(rec["ranks"]).ravel(), bins=10, range=(0, 100))[0]
    out["sbc_chi2_p"] = float(stats.chisquare(counts).pvalue)
    return out


def pool(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Join the chunks of one cell run (same cell and seed offset, replication ranges that tile ``[0, R)``).

    Rows without a per-replication record, or chunks that do not tile a range from 0, are kept as they are.
    The joined row's seconds are the sum of the chunks' wall times (processes that may have run side by side).
    """
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(_key(r)[:5], []).append(r)
    out: list[dict[str, Any]] = []
    for group in groups.values():
        chunks = sorted((r for r in group if "per_rep" in r), key=lambda r: r.get("first_rep", 0))
        ends = [r.get("first_rep", 0) for r in chunks[1:]]
        tiled = len(chunks) > 1 and chunks[0].get("first_rep", 0) == 0 and all(
            c.get("first_rep", 0) + c["reps"] == e for c, e in zip(chunks, ends, strict=False))
        if not tiled:
            out.extend(group)
            continue
        common = [k for k in chunks[0]["per_rep"] if all(k in c["per_rep"] for c in chunks)]  # a fit left out of one
        rec = {k: [v for c in chunks for v in c["per_rep"][k]] for k in common}
        joined = dict(chunks[0], first_rep=0, per_rep=rec, chunks=len(chunks),
                      seconds=sum(c["seconds"] for c in chunks),
                      aware_divergences=sum(c["aware_divergences"] for c in chunks),
                      blind_divergences=None if any(c["blind_divergences"] is None for c in chunks)
                      else sum(c["blind_divergences"] for c in chunks),
                      command="; ".join(dict.fromkeys(c["command"] for c in chunks)))
        out.extend([r for r in group if "per_rep" not in r] + [summarise(joined)])
    return out


STUDY_CHAIN = (1000, 1000)  # warm-up and kept draws of the study's one chain per fit; other lengths are side runs


STUDY_OFFSET = 1000000  # the study's seed offset (fresh seeds); rows with another offset are side runs


STUDY_GRID = {"n": (500, 5000), "rho": (0.01, 0.1, 1.0), "d": (2, 5)}  # the study's cells; others are side runs


def _in_grid(r: dict[str, Any]) -> bool:
    return all(r[k] in v for k, v in STUDY_GRID.items())


def _chain(r: dict[str, Any]) -> tuple[int, int]:
    """A row's (warm-up, draws)."""
    return r["warmup"], r["draws"]


def _counted(r: dict[str, Any]) -> bool:
    """Whether a row is a study cell (the study's seed offset, chain and grid; not a lone chunk)."""
    return (r.get("seed_offset", 0) == STUDY_OFFSET and not r.get("first_rep", 0) and _chain(r) == STUDY_CHAIN
            and _in_grid(r))


def _key(r: dict[str, Any]) -> tuple[int, int, float, int, tuple[int, int], int]:
    """A row's cell, run (seed offset, chain length) and chunk; :func:`pool` joins rows alike but for the chunk."""
    return r["d"], r["n"], r["rho"], r.get("seed_offset", 0), _chain(r), r.get("first_rep", 0)


def _offset(r: dict[str, Any]) -> str:
    """A row's notes: how it differs from the study's design, and whether the status counts it."""
    offset, notes = r.get("seed_offset", 0), []
    if offset != STUDY_OFFSET:
        notes.append("the first study's seeds" if offset == 0 else f"seed offset {offset}")
    if _chain(r) != STUDY_CHAIN:
        notes.append(f"chain {_chain(r)[0]} + {_chain(r)[1]}")
    if not _in_grid(r):
        notes.append("outside the study's grid")
    if r.get("first_rep", 0):
        notes.append(f"replications {r['first_rep']}-{r['first_rep'] + r['reps'] - 1} alone")
    if r.get("chunks", 0):
        notes.append(f"{r['chunks']} chunks pooled")
    if not _counted(r):
        notes.append("not counted")
    return f" ({'; '.join(notes)})" if notes else ""


def _span(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}" if values else "none run"


def report(rows: list[dict[str, Any]], run: _study.Run, load_note: str | None = None) -> None:
    """Write the raw JSON rows and (with ``--write``) the record rendered into the docs."""
    raw = raw_path("regression_calibration.json")
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(_dump(rows))
    cmds = list(dict.fromkeys(r["command"] for r in rows))
    rows = pool(rows)
    side = [r for r in rows if not _counted(r)]
    rows = [r for r in rows if _counted(r)]
    aware = [r["aware90"] for r in rows] + [r["aware95"] for r in rows]
    blind = [r[f"blind{lv}"] for lv in ("90", "95") for r in rows if f"blind{lv}" in r]
    full = [r for r in rows if r["reps"] >= 200]
    within = [r for r in full if all(abs(r[f"aware{lv}"] - nom) <= 2.0 * np.sqrt(nom * (1.0 - nom) / r["reps"])
                                     for lv, nom in (("90", 0.9), ("95", 0.95)))]
    met = len(full) == 12 and len(within) == 12
    reps = sorted({r["reps"] for r in rows})
    lines = [
        "## Noise-aware regression posterior: interval coverage beside the noise-blind posterior and AdaSSP",
        "",
        "Commands (each row's run): " + "; ".join(f"`{c}`" for c in cmds) + "  ",
        f"Machine: {machine()}; "
        + (load_note or f"load average {run.before.one:.1f} before, {run.stop().after.one:.1f} after the last run."),
        "",
        f"Status: {'met' if met else 'not met'} (goal: at least 200 replications in each of 12 cells, noise-aware "
        f"coverage nominal within two standard errors); {len(rows)} of 12 cells run "
        f"({'/'.join(map(str, reps))} replications), {len(full)} at 200 or more, {len(within)} of those within two "
        f"standard errors at both levels. Noise-aware coverage {_span(aware)}, noise-blind {_span(blind)} (90% and 95% "
        "intervals).",
        "",
        "Parameters drawn from the fit's prior per replication (see the script's docstring); `ssp` releases "
        "(Gaussian noise, zCDP rho); coverage pooled over all d + 1 coefficients (worst coefficient in brackets); "
        "a standard error of a pooled coverage c over R replications is taken as sqrt(c (1 - c) / R), an upper bound "
        "(the coefficients of one replication are not independent): two of them are 0.042 / 0.031 at R = 200 for "
        "90% / 95%. AdaSSP: its own `adassp` release of the same rows with a plug-in ridge interval that ignores the "
        "noise (the script's docstring); 'formed': replications whose interval could be formed (else it counts as "
        f"a miss). The status counts the study's rows: one chain of {STUDY_CHAIN[0]} + {STUDY_CHAIN[1]} per fit, "
        f"seed offset {STUDY_OFFSET} (`--seed-offset`). The other rows are side runs: the first study (seed offset "
        "0, one chain of 250 + 250; one cell missed), its repeats with other seeds, and a cell on the first "
        "study's seeds at a longer chain. At n = 5000, d = 5 the study left the noise-blind fit out "
        "(`--skip-blind`; its 'not run' columns): those fits cost most of the time there, and the first study's "
        "rows give the noise-blind coverage of those cells. A cell run in chunks (`--first-rep`, separate "
        "processes) is one stream of replications pooled into one row; its seconds are the chunks' sum.",
        "",
        "| n | rho | d | reps | aware 90% | aware 95% | blind 90% | blind 95% | AdaSSP 90% | AdaSSP 95% "
        "| AdaSSP formed | aware 90% / 95%, replications without clipping | SBC chi2 p (aware) | clipped "
        "| divergences (aware / blind) | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cov(r: dict[str, Any], key: str) -> str:
        return f"{r[key]:.3f} ({r[key + '_min']:.2f})" if key in r else "not run"

    for r in sorted(rows + side, key=_key):
        cells = [cov(r, f"{m}{lv}") for m in ("aware", "blind", "adassp") for lv in ("90", "95")]
        cells.append(f"{r['adassp_formed']} / {r['reps']}" if "adassp_formed" in r else "not run")
        cells.append(f"{r['aware90_unclipped']:.3f} / {r['aware95_unclipped']:.3f} ({r['unclipped_reps']})"
                     if "unclipped_reps" in r else "not run")
        lines.append(
            f"| {r['n']} | {r['rho']:g} | {r['d']} | {r['reps']}{_offset(r)} | " + " | ".join(cells)
            + f" | {r['sbc_chi2_p']:.3f} | {r['clipped']:.1e} | {r['aware_divergences']} / "
            f"{'not run' if r['blind_divergences'] is None else r['blind_divergences']} | "
            f"{r['seconds']:.0f} |"
        )
    text = "\n".join(lines) + "\n"
    run.record("regression_calibration", text)
