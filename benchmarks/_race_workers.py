"""The workers of speed_race.py and what they share: the release, ESS and R-hat, CPU time, one process per fit."""

from __future__ import annotations

import json
import math
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import _study
import numpy as np


def load_release(path: str):
    """Read the benchmark's seeded simulation release (its PrivacyWarning is expected here)."""
    import noiseaware as na

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", na.exceptions.PrivacyWarning)
        return na.Release.from_json(path)


def cpu_seconds(who: int) -> float:
    """User + system CPU seconds of this process (``RUSAGE_SELF``) or of its reaped children."""
    ru = resource.getrusage(who)
    return ru.ru_utime + ru.ru_stime


def min_bulk_ess(draws: np.ndarray) -> tuple[float, float]:
    """Minimum bulk ESS and maximum R-hat over the pairs; ``draws`` has shape (chains, draws, k)."""
    import arviz as az

    ds = az.convert_to_dataset({"r": draws})
    ess = np.asarray(az.ess(ds, method="bulk")["r"].values)
    rhat = np.asarray(az.rhat(ds)["r"].values)
    return float(ess.min()), float(rhat.max())


def posterior_summary(r: np.ndarray, chains: int, draws: int, warmup: int) -> dict:
    """Min bulk ESS, max R-hat, settings, and per-pair mean and sd of ``r`` (chains, draws, pairs)."""
    ess, rhat = min_bulk_ess(r)
    post = r.reshape(-1, r.shape[-1])
    return {
        "ess": ess,
        "rhat": rhat,
        "chains": chains,
        "draws": draws,
        "warmup": warmup,
        "mean": post.mean(0).tolist(),
        "sd": post.std(0, ddof=1).tolist(),
    }


#: Environment variable carrying ``--fit-options`` (JSON) to the NumPyro workers.
FIT_OPTIONS_ENV = "SPEED_RACE_FIT_OPTIONS"

HERE = _study.HERE
#: From this n on, only noiseaware runs (Stan and the PyMC route would not finish in a session).
NOISEAWARE_ONLY_N = 10**6


def worker_noiseaware(
    backend: str, release_path: str, chains: int, draws: int, warmup: int, seed: int, out_path: str
) -> dict:
    import warnings

    import arviz  # noqa: F401  (imports are not timed: a user's script has them loaded already)

    if backend == "numpyro":  # configured by _study.main (float64, one host device per core, the cache)
        import numpyro  # noqa: F401
    else:
        import pymc  # noqa: F401
    from noiseaware.copula import fit, pair_draws

    release = load_release(release_path)
    # --fit-options (NumPyro only), handed over by the parent process
    opts = json.loads(os.environ.get(FIT_OPTIONS_ENV, "{}")) if backend == "numpyro" else {}
    la0 = _study.Load.now(uptime=False)
    c0 = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = fit(release, backend=backend, chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=False,
              **opts)
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - c0
    la1 = _study.Load.now(uptime=False)
    pairs = np.asarray(pair_draws(res)["R"].values)  # (chains, draws, p(p-1)/2): R's pairs in row order
    p = (1 + math.isqrt(1 + 8 * pairs.shape[-1])) // 2
    out = {
        "wall_s": wall,
        "cpu_s": cpu,
        "compile_s": math.nan,
        **posterior_summary(pairs, chains, draws, warmup),
        "load": f"{la0} -> {la1}",
    }
    if backend == "numpyro":
        ss = res["sample_stats"]
        if "n_steps" in ss:
            out["mean_leapfrog"] = float(np.asarray(ss["n_steps"]).mean())
    # the fit's figures are saved first, so they survive a time limit hit while measuring compile time
    Path(out_path).write_text(json.dumps(out))
    # compile time: the first fit's wall time less that of a second, identical fit (another seed) in the same
    # process, which finds every program compiled; the second fit's CPU is the sampling's (with preconditioning)
    t1 = time.perf_counter()
    c1 = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a MixingWarning of the rerun is not this benchmark's business
        fit(release, backend=backend, chains=chains, draws=draws, warmup=warmup, seed=seed + 1, progressbar=False,
            **opts)
    out["rerun_s"] = time.perf_counter() - t1
    out["compile_s"] = max(wall - out["rerun_s"], 0.0)
    out["sample_cpu_s"] = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - c1
    if backend == "numpyro":
        from noiseaware.config import host_devices
        from noiseaware.numpyro import NoisyTwoWayTable

        # two windows (numerator and normalizer) of the table's static width, per pair
        width = NoisyTwoWayTable(0.0, release.n, alpha=0.5).table.width
        out["terms_per_gradient"] = 2 * (p * (p - 1) // 2) * int(width)
        out["devices"] = host_devices()["devices"]
    return out


def run_worker(
    args: list[str],
    timeout: float | None,
    env: dict[str, str] | None = None,
    script: Path | None = None,
    python: str | None = None,
) -> dict:
    """Run this script (or ``script``, a baseline's copy) as a worker in a fresh process (own session, killed as a
    group on timeout), with this interpreter or ``python`` (another stack's, for a baseline)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        out_path = fh.name
    cmd = [python or sys.executable, str(script or HERE / "speed_race.py"), "--worker", *args, "--out", out_path]
    proc = subprocess.Popen(cmd, start_new_session=True, env=None if env is None else {**os.environ, **env})
    t0 = time.perf_counter()
    c0 = cpu_seconds(resource.RUSAGE_CHILDREN)
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        partial = Path(out_path)
        if partial.exists() and partial.stat().st_size > 0:  # the fit finished; its compile-time rerun did not
            out = json.loads(partial.read_text())
            partial.unlink()
            out["note"] = f"compile-time rerun stopped at the time limit of {timeout:.0f} s"
            out["process_cpu_s"] = cpu_seconds(resource.RUSAGE_CHILDREN) - c0
            return out
        return {"error": f"stopped at the time limit of {timeout:.0f} s", "elapsed_s": time.perf_counter() - t0}
    try:
        if rc != 0:
            return {"error": f"worker exited with code {rc}"}
        out = json.loads(Path(out_path).read_text())
        out["process_cpu_s"] = cpu_seconds(resource.RUSAGE_CHILDREN) - c0
        return out
    finally:
        Path(out_path).unlink(missing_ok=True)


def make_release(n: int, p: int, seed: int, path: str) -> np.ndarray:
    from scipy import stats

    import noiseaware as na
    from noiseaware.datasets import random_correlation, simulate_gaussian_copula

    rng = np.random.default_rng(seed)
    R = random_correlation(p, rng)
    x = simulate_gaussian_copula(n, R, tuple(stats.norm() for _ in range(p)), rng)
    release = na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(seed + 1))
    with warnings.catch_warnings():  # a seeded simulation release, saved for the workers only
        warnings.simplefilter("ignore", na.exceptions.PrivacyWarning)
        release.to_json(path, allow_simulation=True, overwrite=True)
    return R


def baseline_tree(rev: str, tmp: str) -> Path:
    """A detached git worktree of ``rev`` under ``tmp`` (removed from git's list at exit)."""
    import atexit

    root = HERE.parent
    tree = Path(tmp) / "baseline"
    subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(tree), rev], check=True,
                   capture_output=True)
    atexit.register(subprocess.run, ["git", "-C", str(root), "worktree", "remove", "--force", str(tree)],
                    capture_output=True, check=False)
    return tree
