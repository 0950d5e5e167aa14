"""Reproduce seed 004 §5.1 (Figures 1-2): Dirichlet inference from DP releases of the mean-log statistic.

Seed ``004_f9e752609791d825.txt`` (Guo, Barrientos, Peña), §5.1 and Supplement S5. Not run in CI;
writes the ``dirichlet`` section of ``docs/reproduction.md``. Resumable: raw per-data-set results go
to a JSON file (``--results``) that later runs extend, and ``--report`` rebuilds the section from it::

    nice -n 10 .venv/bin/python benchmarks/reproduce_dirichlet.py --datasets 50 --minutes 30
    .venv/bin/python benchmarks/reproduce_dirichlet.py --report --write docs/reproduction.md

On Dask (``pip install -e '.[dask]'``): ``--dask local`` runs the missing (cell, method, data set)
tasks on a ``LocalCluster`` of ``--workers`` processes, ``--dask tcp://host:8786`` on a running
scheduler, through :func:`noiseaware.distributed.fit_many`; each finished task is written atomically
to ``--results-dir`` (one JSON file per task) and merged into ``--results`` as it arrives, so an
interrupted run resumes where it stopped::

    .venv/bin/python benchmarks/reproduce_dirichlet.py --dask local --workers 2 --datasets 50

Settings (seed §5.1): ``alpha_3 = (2.2, 3.3, 4.4)``, ``alpha_5 = (2.2, 3.3, 4.4, 5.5, 6.6)``,
``n in {1000, 5000}``, ``epsilon in {0.5, 1.5}``; the threshold ``a`` is chosen by Algorithm 1
(DPSS) with ``t_c = 0.01`` from ``(1e-6, ..., 0.1)`` with ``epsilon_2 = 0.25 epsilon``, and
``S_L`` is released with ``epsilon_1 = 0.75 epsilon``; the split approaches (p4) use
``n_1 = 0.25 n``. Each data set gets two releases of the same records: one without split (DPBoots
and the p1 approaches) and one with ``split=0.25`` (DPABC_p4), each with the full budget -- one
method per release, as in the seed's comparisons.

Methods (``--methods``): ``DPBoots`` (Algorithm 2, B = 1000), ``DPMCMC_p1`` (exact augmentation
MCMC with the joint move), ``DPreMCMC_p1`` (``replicates=5``, i.e. ``b = n/5`` latent records),
``DPABC_p1`` and ``DPABC_p4`` (10,000 proposals, 10% kept), ``DPapprox_p1`` (NUTS on eq. 6,
``moments="asymptotic"``) and ``DPapprox_p1_cens`` (the censoring-aware moments; not in the seed).

Metrics per data set (medians over data sets are reported, as in Figures 1-2):

* MSE of ``alpha``: the posterior (or bootstrap) mean of ``mean_j (alpha_j - alpha_true_j)^2``
  over the draws, i.e. squared bias plus variance. The squared error of the point estimate (the
  draws' mean) is stored too (``se_alpha``).
* the same for ``E[x | alpha] = alpha / sum(alpha)``.
* predictive coverage (seed §5.1): simulate the posterior predictive (one record per draw, 4000
  records), take the 95% Mahalanobis ellipsoid of its first ``d - 1`` coordinates around its
  mean, and report the fraction of 20,000 records from the true Dirichlet inside it.
* wall time of the method call; for the MCMC routes the max split R-hat and min bulk ESS of alpha.
"""

from __future__ import annotations

import argparse
import fcntl
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import _study
from _dirichlet_study import (
    CELLS,
    DEFAULT_METHODS,
    METHODS,
    RESULTS,
    load,
    make_data,
    metrics,
    parse_cell,
    run_method,
    save,
)
from _dirichlet_tables import report
from _study import machine


def run(args: argparse.Namespace) -> None:
    """Fill in missing (cell, method, data set) results, data set index outermost, until the deadline."""
    deadline = time.time() + 60 * args.minutes
    data = load(args.results)
    lock_path = Path(tempfile.gettempdir()) / f"{args.results.name}.lock"
    for i in range(args.datasets):
        for cell in args.cells:
            todo = [m for m in args.methods if f"{cell}|{m}|{i}" not in data["runs"]]
            if not todo:
                continue
            alpha = parse_cell(cell)[1]
            _, full, split = make_data(cell, i)
            for method in todo:
                if time.time() > deadline:
                    print("deadline reached", flush=True)
                    return
                seed = 1000 * i + METHODS.index(method)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    draws, info = run_method(method, full, split, seed)
                elapsed = time.perf_counter() - t0
                rec = {**metrics(draws, alpha, seed), **info, "time_s": elapsed, "a": full.metadata["a"]}
                with open(lock_path, "w") as lock:  # another process may share the file
                    fcntl.flock(lock, fcntl.LOCK_EX)
                    data = load(args.results)
                    data["runs"][f"{cell}|{method}|{i}"] = rec
                    data.setdefault("meta", {})["machine"] = machine()
                    save(args.results, data)
                diag = f" rhat={info['rhat_max']:.3f} ess={info['ess_min']:.0f}" if "rhat_max" in info else ""
                print(
                    f"{cell} {method:>16} #{i}: {elapsed:6.1f}s mse_alpha={rec['mse_alpha']:.3g} "
                    f"cov={rec['coverage']:.3f}{diag}",
                    flush=True,
                )


# ----------------------------------------------------------------------------- Dask
def task_id(cell: str, method: str, i: int) -> str:
    """The fit_many key of one task (letters, digits, '.', '_', '-')."""
    return f"{cell}_{method}_{i}"


def dask_task(release: Any) -> dict[str, Any]:
    """One (cell, method, data set) task on a worker; the task is named in the release's provenance."""
    cell, method, i_text = release.metadata["source"].split("|", 3)[1:]
    i = int(i_text)
    alpha = parse_cell(cell)[1]
    _, full, split = make_data(cell, i)
    seed = 1000 * i + METHODS.index(method)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draws, info = run_method(method, full, split, seed)
    elapsed = time.perf_counter() - t0
    return {**metrics(draws, alpha, seed), **info, "time_s": elapsed, "a": full.metadata["a"]}


def run_dask(args: argparse.Namespace) -> None:
    """The missing tasks on Dask (fit_many), results merged as they arrive; resumable."""
    import dataclasses

    from noiseaware.distributed import fit_many

    deadline = time.time() + 60 * args.minutes
    data = load(args.results)
    releases = {}
    names = {}
    for i in range(args.datasets):
        for cell in args.cells:
            for method in args.methods:
                if f"{cell}|{method}|{i}" in data["runs"]:
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _, full, _ = make_data(cell, i)
                    source = f"reproduce_dirichlet|{cell}|{method}|{i}"
                    rel = dataclasses.replace(full, metadata={**full.metadata, "source": source})
                releases[task_id(cell, method, i)] = rel
                names[task_id(cell, method, i)] = f"{cell}|{method}|{i}"
    print(f"{len(releases)} task(s) to run on Dask ({args.dask})", flush=True)
    address = None if args.dask == "local" else args.dask
    lock_path = Path(tempfile.gettempdir()) / f"{args.results.name}.lock"
    outs = fit_many(releases, dask_task, address=address, n_workers=args.workers, results_dir=args.results_dir)
    try:
        for out in outs:
            if not out.ok:
                print(f"{names[out.key]} FAILED on {out.worker}: {out.error}", flush=True)
                continue
            with open(lock_path, "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                data = load(args.results)
                data["runs"][names[out.key]] = out.result
                data.setdefault("meta", {})["machine"] = machine()
                save(args.results, data)
            rec = out.result
            print(
                f"{names[out.key]}: {rec['time_s']:6.1f}s mse_alpha={rec['mse_alpha']:.3g} cov={rec['coverage']:.3f}"
                f"{' (stored)' if out.cached else ''}",
                flush=True,
            )
            if time.time() > deadline:
                print("deadline reached", flush=True)
                break
    finally:
        outs.close()


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = _study.parser(__doc__)
    p.add_argument("--datasets", type=int, default=50, help="data sets per cell (indices 0..N-1; done ones skipped)")
    p.add_argument("--cells", default=",".join(CELLS), help=f"comma-separated, from {CELLS}")
    p.add_argument("--methods", default=",".join(DEFAULT_METHODS), help=f"comma-separated, from {METHODS}")
    p.add_argument("--minutes", type=float, default=1e9, help="start no new fit after this many minutes")
    p.add_argument("--results", type=Path, default=RESULTS, help="raw results JSON (read and extended)")
    p.add_argument("--report", action="store_true", help="only rebuild the report from --results")
    p.add_argument("--command", default=None, help="command line recorded in the report")
    p.add_argument("--dask", default=None, help="run on Dask: 'local' (a LocalCluster) or a scheduler address")
    p.add_argument("--workers", type=int, default=None, help="LocalCluster workers (--dask local)")
    p.add_argument(
        "--results-dir", type=Path, default=Path(__file__).resolve().parent / ".reproduce_dirichlet_tasks",
        help="per-task results of --dask runs (resume directory)",
    )
    args = p.parse_args(argv)
    args.cells = [c for c in args.cells.split(",") if c]
    args.methods = [m for m in args.methods.split(",") if m]
    for c in args.cells:
        if c not in CELLS:
            p.error(f"unknown cell {c!r}; choose from {CELLS}")
    for m in args.methods:
        if m not in METHODS:
            p.error(f"unknown method {m!r}; choose from {METHODS}")
    if not args.report:
        if args.dask:
            run_dask(args)
        else:
            run(args)
    data = load(args.results)
    if "machine" not in data.get("meta", {}):  # runs before the machine was recorded: same machine, now
        import numpyro  # noqa: F401  (so that machine() names the library versions)

        data.setdefault("meta", {})["machine"] = machine()
        save(args.results, data)
    command = args.command or "nice -n 10 .venv/bin/python benchmarks/reproduce_dirichlet.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    text = report(data, command)
    print(text)
    _study.Run(args, uptime=False).record("reproduce_dirichlet", text)
    return 0


if __name__ == "__main__":
    _study.main(main)
