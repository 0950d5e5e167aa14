"""Stan's ESS per draw over several seeds on speed_race.py's NHANES-size release (issue 15 item 1).

Issue 15 asks for "a mass matrix that gives at least Stan's ESS per draw". ESS per draw (minimum
bulk ESS over the 21 correlations, over 4 x 1000 kept draws) varies by +-0.15 from seed to seed
on this release for NumPyro (``copula_mass.py``), so Stan's figure needs more than the one run
``speed_race.py`` makes. This script fits the same release (n = 5,820, p = 7, ``speed_race.py``'s
seed) with the paper's Stan program (``speed_race.STAN_PROGRAM``, PyStan, 4 x (1000 + 1000)) for
``--seeds`` sampler seeds, each in a fresh worker of ``speed_race.py``, and reports ESS per draw,
mean leapfrog steps and the wall time per seed. About 20-25 minutes per seed on 2 cores.
Needs PyStan (``pip install -e '.[bench]'``). Not run in CI::

    .venv/bin/python benchmarks/stan_seeds.py --seeds 0 1 2 --write docs/benchmarks.md
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import _study
import numpy as np


def main(argv: list[str] | None = None) -> int:
    p = _study.parser(__doc__)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="Stan's random_seed values")
    p.add_argument("--timeout", type=float, default=3600.0, help="time limit per Stan run, seconds")
    p.add_argument("--jsonl", type=Path, help="append each seed's result to this file as it finishes")
    args = p.parse_args(argv)
    if importlib.util.find_spec("stan") is None:
        print("PyStan is not installed: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    import speed_race as sr

    run = _study.Run(args)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "release.json")
        sr.make_release(5820, 7, 2026 + 5820 + 7, path)  # speed_race.py's release for this case
        for seed in args.seeds:
            res = sr.run_worker(["stan", path, "4", "1000", "1000", str(seed), "0"], args.timeout)
            res["seed"] = seed
            rows.append(res)
            print(json.dumps({k: v for k, v in res.items() if k not in ("mean", "sd")}), flush=True)
            if args.jsonl:
                with args.jsonl.open("a") as fh:
                    fh.write(json.dumps(res) + "\n")
    run.stop()
    load0, load1 = run.loads
    ok = [r for r in rows if "error" not in r]
    lines = ["| seed | ESS per draw | max R-hat | mean leapfrog | sampling wall s |", "|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['seed']} | {r['error']} | | | |")
        else:
            lines.append(f"| {r['seed']} | {r['ess'] / 4000:.2f} | {r['rhat']:.3f} | {r['mean_leapfrog']:.1f} "
                         f"| {r['sample_s']:.0f} |")
    if ok:
        epd = np.array([r["ess"] / 4000 for r in ok])
        lines.append(f"| mean ({len(ok)} seeds) | {epd.mean():.2f} (min {epd.min():.2f}, max {epd.max():.2f}) | | "
                     f"{np.mean([r['mean_leapfrog'] for r in ok]):.1f} | |")
    table = "\n".join(lines)
    print(f"load before: {load0}\nload after: {load1}\n\n{table}")
    about = ("n = 5,820, p = 7 (speed_race.py's release), 4 x (1000 + 1000), the paper's Stan program; "
             "ESS = min bulk ESS over the 21 correlations.")
    run.record_run("stan_seeds", "Stan's ESS per draw over seeds (issue 15 item 1)", table, about=about,
                   argv=argv, script="stan_seeds.py")
    return 0


if __name__ == "__main__":
    _study.main(main)
