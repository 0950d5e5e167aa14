"""``privatize`` on Dask: n = 10^6 in memory vs Dask, and n up to 10^8 from Parquet in bounded memory (issue 15 item 5).

Part 1: ``median_pairs`` (and ``dirichlet_logmean``) on the same n x p data in memory (NumPy) and as
a Dask array of row blocks, same ``rng`` seed: wall times and a check that the releases are
identical. Part 2: ``median_pairs`` on an n x p Parquet data set written once into a temporary
directory (one file per block of rows, deleted afterwards) and read with ``dask.dataframe.read_parquet``,
secure mode (OpenDP noise), Dask's threaded scheduler; the process's peak resident memory is
recorded next to the data's size.

Run::

    .venv/bin/python benchmarks/privatize_dask.py --n-mem 1000000 --n-parquet 100000000 --write docs/benchmarks.md
"""

from __future__ import annotations

import os
import resource
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import _study
import numpy as np


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _same(a, b) -> bool:
    return bool(np.array_equal(a.values, b.values) and a.metadata == b.metadata and a.labels == b.labels)


def part1(n: int, p: int, chunk: int) -> list[str]:
    import dask.array as da

    import noiseaware as na

    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, p))
    rows = []
    t0 = time.perf_counter()
    mem = na.privatize(x, "median_pairs", epsilon=1.0, rng=np.random.default_rng(1))
    t_mem = time.perf_counter() - t0
    dx = da.from_array(x, chunks=(chunk, p))
    t0 = time.perf_counter()
    dsk = na.privatize(dx, "median_pairs", epsilon=1.0, rng=np.random.default_rng(1))
    t_dsk = time.perf_counter() - t0
    t0 = time.perf_counter()
    na.privatize(dx, "median_pairs", epsilon=1.0)
    t_sec = time.perf_counter() - t0
    rows.append(
        f"| median_pairs | {n:,} × {p} | {t_mem:.2f} | {t_dsk:.2f} (secure: {t_sec:.2f}) | "
        f"{t_dsk / t_mem:.2f} | {_same(mem, dsk)} |"
    )
    comp = rng.dirichlet(np.ones(p), size=n)
    t0 = time.perf_counter()
    mem = na.privatize(comp, "dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(2))
    t_mem = time.perf_counter() - t0
    t0 = time.perf_counter()
    dsk = na.privatize(
        da.from_array(comp, chunks=(chunk, p)), "dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(2)
    )
    t_dsk = time.perf_counter() - t0
    rows.append(
        f"| dirichlet_logmean | {n:,} × {p} | {t_mem:.2f} | {t_dsk:.2f} | {t_dsk / t_mem:.2f} | {_same(mem, dsk)} |"
    )
    return rows


def part2(n: int, p: int, rows_per_file: int, tmp_root: str | None) -> tuple[str, dict]:
    import dask.dataframe as dd
    import pyarrow as pa
    import pyarrow.parquet as pq

    import noiseaware as na

    tmp = Path(tempfile.mkdtemp(prefix="na-parquet-", dir=tmp_root))
    try:
        t0 = time.perf_counter()
        rng = np.random.default_rng(3)
        names = [f"x{j}" for j in range(p)]
        R = 0.5 * np.eye(p) + 0.5  # equicorrelated, so that the counts carry signal
        chol = np.linalg.cholesky(R)
        for i, start in enumerate(range(0, n, rows_per_file)):
            m = min(rows_per_file, n - start)
            block = rng.standard_normal((m, p)) @ chol.T
            pq.write_table(pa.table({c: block[:, j] for j, c in enumerate(names)}), tmp / f"part-{i:05d}.parquet")
            del block
        t_gen = time.perf_counter() - t0
        size = sum(f.stat().st_size for f in tmp.glob("*.parquet"))
        rss_before = _rss_mb()
        frame = dd.read_parquet(str(tmp))
        t0 = time.perf_counter()
        rel = na.privatize(frame, "median_pairs", epsilon=1.0)
        t_priv = time.perf_counter() - t0
        info = {"gen_s": t_gen, "bytes": size, "priv_s": t_priv, "rss_before": rss_before, "rss_after": _rss_mb()}
        h = rel.metadata["high_count"]
        r_hat = np.cos(np.pi * (1 - np.asarray(rel.values, dtype=float) / h))  # sin-type estimate, for a sanity look
        info["r_mean"] = float(r_hat.mean())
        return str(tmp), info
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = _study.parser(__doc__, write="str")
    ap.add_argument("--n-mem", type=int, default=1_000_000)
    ap.add_argument("--n-parquet", type=int, default=10_000_000)
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--chunk", type=int, default=100_000, help="rows per Dask block in part 1")
    ap.add_argument("--rows-per-file", type=int, default=1_000_000)
    ap.add_argument("--tmp", default=None, help="where to write the temporary Parquet files")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")  # simulation-release and utility notices
    import dask

    dask.config.set(scheduler="threads", num_workers=os.cpu_count())
    run = _study.Run(args, uptime=False)
    rows = part1(args.n_mem, args.p, args.chunk)
    print("\n".join(rows), flush=True)
    load1 = _study.Load.now(uptime=False).one
    _, info = part2(args.n_parquet, args.p, args.rows_per_file, args.tmp)
    load0, load2 = run.before.one, run.stop().after.one
    print(info, flush=True)

    gb = info["bytes"] / 1e9
    per_1e8 = info["priv_s"] * 1e8 / args.n_parquet
    lines = [
        "## privatize on Dask: in memory vs Dask, and Parquet larger than memory (issue 15 item 5)\n",
        f"Command: `.venv/bin/python benchmarks/privatize_dask.py --n-mem {args.n_mem} --n-parquet {args.n_parquet} "
        f"--p {args.p} --write docs/benchmarks.md`",
        f"Machine: {_study.machine()}; Dask's threaded scheduler with {os.cpu_count()} threads; 1-minute load average "
        f"{load0:.2f} at the start, {load1:.2f} after part 1, {load2:.2f} at the end (shared machine).\n",
        f"**Part 1**, same data and `rng` seed, Dask blocks of {args.chunk:,} rows (simulation mode, so the key stream "
        "is drawn in the driver as in memory; *secure* is the same Dask call with OpenDP noise and per-block keys):\n",
        "| statistic | n × p | in memory (s) | Dask array (s) | Dask / memory | identical release |",
        "|---|---|---:|---:|---:|---|",
        *rows,
        "",
        f"**Part 2**, `median_pairs`, secure mode, from Parquet: n = {args.n_parquet:,}, p = {args.p} "
        f"({args.n_parquet // args.rows_per_file} files of {args.rows_per_file:,} rows, {gb:.2f} GB on disk, written "
        f"in {info['gen_s']:.0f} s and deleted afterwards), read by `dask.dataframe.read_parquet`:\n",
        f"* `privatize` wall time: **{info['priv_s']:.1f} s** ({info['priv_s'] / args.n_parquet * 1e9:.0f} ns per "
        f"row; at the same rate n = 10^8 would take {per_1e8 / 60:.1f} min);",
        f"* peak resident memory of the process: {info['rss_after']:.0f} MB ({info['rss_before']:.0f} MB before the "
        f"call; the data are {args.n_parquet * args.p * 8 / 1e9:.1f} GB as float64).",
        "",
        "Three passes, each re-reading the files: lengths, finiteness check and the first radix histogram "
        "(top 16 bits of each column) together; one pass gathering the candidates of the median's bin; the "
        "pass that adds up A^T A. The key pass is skipped: continuous data have no ties at the median.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    run.record("privatize_dask", text)
    return 0


if __name__ == "__main__":
    _study.main(main)
