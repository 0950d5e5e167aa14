"""Where the first regression calibration study's shortfall came from: four diagnostics of ``regression.fit``'s model.

The first calibration study (``benchmarks/regression_calibration.py``, one chain of 250 + 250 per fit) found the
noise-aware coverage a little under nominal (most in the cell n = 5000, rho = 0.1, d = 2); the study at
1000 + 1000 that followed is within two standard errors in every cell. Each part here removes one suspect, on
that cell's setting (``ssp`` releases, bound 1, the study's prior and the first study's one chain of NUTS); parameters
are drawn from the prior as in the study (``draw_truth``), rows are never clipped unless said:

* ``moments``: the model's moments of the statistics (``NoisySufficientStatistics`` without noise) against
  the mean and standard deviation of ``Z'Z`` over many simulated data sets of the same parameters
  (z-scores of the mean differences; ratios of the standard deviations).
* ``exact``: the study's near-noiseless side row (n = 5000, rho = 10000, d = 2, its seeds and its
  clipped rows): the exact posterior of the coefficients given exact statistics, in closed form (the
  Gaussian linear model's posterior given ``sigma`` is normal; ``sigma`` on a fine grid), against the
  NUTS intervals the study recorded for the same replications (``benchmarks/results/raw/
  regression_calibration.json``).
* ``paired``: the same parameters and the same release noise, with the statistics either computed from
  simulated rows or drawn from the model's own normal law (n = 5000, rho = 0.1, d = 2): the normal
  approximation alone differs between the two.
* ``chains``: statistics drawn from the model's own normal law (so the model is right by construction)
  and NUTS chains of two lengths on the same data: what the sampler alone costs in coverage.

Run a part (its row replaces an earlier one of the same part) and render the record::

    .venv/bin/python benchmarks/regression_diagnostics.py --part paired --write
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import _study
import numpy as np
from _regression_diagnosis import part_chains, part_exact, part_moments, part_paired
from _study import machine, raw_path

PARTS = {"moments": part_moments, "exact": part_exact, "paired": part_paired, "chains": part_chains}


def _loads(text: str) -> str:
    """``"load before: 3.1, 2.0, 2.0, after: 3.3, ..."`` as ``"3.1 before, 3.3 after"`` (one-minute averages)."""
    before, after = (text.split(f"{w}:")[1].split(",")[0].strip() for w in ("before", "after"))
    return f"{before} before, {after} after"


def _se(c: float, reps: int) -> float:
    return float(np.sqrt(c * (1.0 - c) / reps))


def report(rows: dict[str, Any]) -> tuple[str, list[str]]:
    """The record's Markdown from the saved parts, and its headline."""
    order = [k for k in PARTS if k in rows]
    lines = [
        "## Regression calibration: where the shortfall comes from",
        "",
        *(f"Command ({k}): `{rows[k]['command']}`; load average ({k}): {_loads(rows[k]['load'])}; "
          f"{rows[k]['seconds']:.0f} s.  " for k in order),
        f"Machine: {machine()}.",
        "",
    ]
    headline = []
    if "moments" in rows:
        m = rows["moments"]
        lines += [
            f"**Moments.** {m['truths']} parameter draws, n = {m['n']}, {m['datasets']} simulated data sets each, "
            f"{m['entries']} entries: the largest |z| of a mean difference per draw "
            f"{', '.join(f'{z:.1f}' for z in m['max_abs_z'])} (the largest of {m['entries']} standard normals is "
            f"about 2 to 2.5); simulated / model standard deviation {m['sd_ratio_min']:.3f}-{m['sd_ratio_max']:.3f} "
            f"(each ratio has a standard error of about {100 / np.sqrt(2 * m['datasets']):.1f}%). The model's moments "
            "are those of the rows.",
            "",
        ]
    if "exact" in rows:
        e = rows["exact"]
        lines += [
            f"**Exact posterior at rho = {e['rho']:g}.** On the {e['reps']} replications of the study's "
            f"near-noiseless row (n = {e['n']}, d = {e['d']}), the closed-form posterior given exact statistics "
            f"covers {e['exact90']:.3f} / {e['exact95']:.3f} (90% / 95%); the recorded NUTS intervals (one chain "
            f"of 250 + 250, the noise-aware model) cover {e['nuts90']:.3f} / {e['nuts95']:.3f}, with "
            f"{e['nuts_divergences']} divergent transitions. At 95%, NUTS misses {e['nuts_miss_exact_hit95']} "
            f"coefficient intervals that the exact posterior covers, and covers {e['nuts_hit_exact_miss95']} "
            "that it misses. That row measures the "
            "sampler on a near-exact likelihood, not the model.",
            "",
        ]
    if "paired" in rows:
        p = rows["paired"]
        lines += [
            f"**Rows against the normal law.** n = {p['n']}, rho = {p['rho']:g}, d = {p['d']}, {p['reps']} "
            f"replications, the same parameters and release noise; one chain of {p['chain'][0]} + {p['chain'][1]}. "
            f"Statistics from simulated rows: {p['rows90']:.3f} / {p['rows95']:.3f}; drawn from the model's normal "
            f"law: {p['normal90']:.3f} / {p['normal95']:.3f} (90% / 95%); the two agree on "
            f"{100 * p['agree95']:.1f}% of the 95% intervals' hits (standard errors of one coverage: "
            f"{_se(0.9, p['reps']):.3f} / {_se(0.95, p['reps']):.3f}).",
            "",
        ]
        headline.append(f"Rows against the model's normal law (n = {p['n']}, rho = {p['rho']:g}, d = {p['d']}): "
                        f"{p['rows90']:.3f} / {p['rows95']:.3f} against {p['normal90']:.3f} / {p['normal95']:.3f}.")
    if "chains" in rows:
        c = rows["chains"]
        lengths = sorted(int(k[5:]) for k in c if k.startswith("chain"))
        cells = "; ".join(
            f"{w} + {w}: {c[f'chain{w}']['90']:.3f} / {c[f'chain{w}']['95']:.3f} ({c[f'chain{w}']['divergences']} "
            "divergent transitions)" for w in lengths)
        lines += [
            f"**Chain length, the model right by construction.** n = {c['n']}, rho = {c['rho']:g}, d = {c['d']}, "
            f"{c['reps']} replications whose statistics are drawn from the model's own law, one chain of each length "
            f"on the same data (90% / 95%): {cells}. Standard errors {_se(0.9, c['reps']):.3f} / "
            f"{_se(0.95, c['reps']):.3f}.",
            "",
        ]
        headline.append(f"The model right by construction, one chain of each length: {cells}.")
    return "\n".join(lines), headline


def main() -> None:
    ap = _study.parser(__doc__, write="flag")
    ap.add_argument("--part", choices=sorted(PARTS), help="run this part (its row replaces an earlier one)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    saved = raw_path("regression_diagnostics.json")
    rows = json.loads(saved.read_text()) if saved.exists() else {}
    if args.part:
        with _study.Run(args, uptime=False) as run:
            row = PARTS[args.part]()
        row["seconds"] = run.wall
        row["command"] = ".venv/bin/python benchmarks/regression_diagnostics.py " + " ".join(sys.argv[1:])
        before, after = (", ".join(f"{x:.2f}" for x in load.avg) for load in (run.before, run.after))
        row["load"] = f"load before: {before}, after: {after}"
        rows[args.part] = row
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps(rows, indent=1) + "\n")
        print(json.dumps(row), flush=True)
    if args.write:
        text, headline = report(rows)
        _study.Run(args, uptime=False).record("regression_diagnostics", text, headline=headline)


if __name__ == "__main__":
    _study.main(main)
