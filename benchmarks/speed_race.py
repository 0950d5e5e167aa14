"""Speed race: Bayes-NA by noiseaware (NumPyro, PyMC) against the paper's Stan approach (PyStan).

Run:  .venv/bin/python benchmarks/speed_race.py [--write docs/benchmarks.md] [--cases 5820x7,100000x5,1000000x10]

Seed ``000_3eff9b68025f505f.txt`` §3.3 fits Bayes-NA, ``p(R | t~) ∝ LKJ(R | 1) prod_{j<j'} P(t~_jj' | R_jj')``
(eqs. 17-18), in Stan, summing the full support of the noncentral hypergeometric normalizer
(eq. 11) and of the convolution with two-sided geometric noise (eq. 17) at every log-density
evaluation. ``STAN_PROGRAM`` below is that program, written from the equations (log-binomial
constants as transformed data, both sums vectorised with ``log_sum_exp``; nothing windowed).

For each case, one release is made with ``noiseaware.privatize(x, statistic="median_pairs",
epsilon=1, rng=...)`` on data from ``noiseaware.datasets.simulate_gaussian_copula`` and fitted by
every engine, each in a fresh Python process (so JIT / C++ compilation is counted):

- ``numpyro``: ``noiseaware.copula.fit(release, backend="numpyro")`` (plus ``--fit-options``, JSON keywords);
- ``pymc``: ``noiseaware.copula.fit(release, backend="pymc")``;
- ``stan``: ``stan.build(STAN_PROGRAM, data=...)`` then ``posterior.sample(num_chains=4, ...)``.

Every engine runs at the same settings (4 chains x 1000 warmup + 1000 draws by default) in one run.
``--stan-reduced`` lets Stan run fewer iterations where the full run would not finish in a session
(``STAN_REDUCED``); such a run is labelled "reduced run" and no ratio to it is printed, since ESS
per second at unequal settings is not a fair comparison. Reported: wall time including compilation,
the compile time and the wall time without it, the minimum bulk ESS over the p(p-1)/2 correlations,
ESS per second, and ratios to Stan in the same run. Before racing, the Stan log density is checked
against noiseaware's composite log-likelihood plus NumPyro's ``LKJCholesky`` log density at a few R.

Exit code 2 (with a message) when PyStan is not installed: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

STAN_PROGRAM = """\
// Bayes-NA for Gaussian-copula correlations (seed 000, eqs. 17-18), the paper's Stan approach:
// every log-density evaluation sums the FULL support of the noncentral hypergeometric normalizer
// (eq. 11) and of the convolution with two-sided geometric noise (eq. 17), for every pair.
data {
  int<lower=2> p;                      // variables
  int<lower=1> K;                      // pairs, p (p - 1) / 2
  int<lower=1> S;                      // support size of T
  vector[S] t;                         // support points lo .. hi
  vector[S] logw;                      // log choose(Kc, t) + log choose(N - Kc, m - t)
  array[K] int y;                      // noisy counts
  vector<lower=0, upper=1>[K] alpha;   // exp(-epsilon_pair / sensitivity)
  array[K] int<lower=1, upper=p> row;
  array[K] int<lower=1, upper=p> col;
  real<lower=0> eta;                   // LKJ concentration (1 in the paper)
}
transformed data {
  vector[K] log_norm = log1m(alpha) - log1p(alpha);
  array[K] vector[S] log_noise;        // log P(D = y - t) without its normalizer
  for (k in 1:K) log_noise[k] = log(alpha[k]) * abs(y[k] - t);
}
parameters {
  cholesky_factor_corr[p] L;
}
model {
  matrix[p, p] R = multiply_lower_tri_self_transpose(L);
  target += lkj_corr_cholesky_lpdf(L | eta);
  for (k in 1:K) {
    real a = 2 * asin(R[row[k], col[k]]);
    real psi = 2 * (log(pi() + a) - log(pi() - a));       // eq. (9)
    vector[S] base = logw + psi * t;                       // eq. (10) numerators
    target += log_norm[k] + log_sum_exp(base + log_noise[k]) - log_sum_exp(base);  // eq. (17)
  }
}
generated quantities {
  corr_matrix[p] R = multiply_lower_tri_self_transpose(L);
}
"""

DEFAULT_CASES = "5820x7,100000x5,1000000x10"
# Stan's (warmup, draws) per chain where the full 1000 + 1000 would not finish in a benchmark session on
# this shared 2-core machine (about 45 minutes at n = 5820 under a load average of 7); used only with
# --stan-reduced (the default runs Stan at the same settings as the other engines).
STAN_REDUCED = {5820: (250, 250), 100000: (100, 100)}
# Time limits (s) per Stan run where the --stan-timeout default is too long for a benchmark session.
STAN_TIMEOUT = {100000: 600.0}
NOISEAWARE_ONLY_N = 10**6
ENGINE_LABELS = {
    "numpyro": "numpyro (1st process, empty compile cache)",
    "numpyro_warm": "numpyro (2nd process, cache from the 1st)",
    "numpyro_base": "numpyro at BASE (1st process, empty compile cache)",
    "numpyro_base_warm": "numpyro at BASE (2nd process, cache from the 1st)",
}


# ----------------------------------------------------------------------------------------------
# helpers shared by the workers
# ----------------------------------------------------------------------------------------------


def load_release(path: str):
    """Read the benchmark's seeded simulation release (its PrivacyWarning is expected here)."""
    import noiseaware as na

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", na.exceptions.PrivacyWarning)
        return na.Release.from_json(path)


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


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


def stan_data(release, eta: float = 1.0) -> dict:
    """The Stan program's data for a ``median_pairs`` release (exact margins N = n, K = m = ceil(n/2))."""
    from scipy.special import gammaln

    if release.statistic != "median_pairs" or release.mechanism.family != "geometric":
        raise ValueError(f"stan_data: needs a geometric median_pairs release; got {release.statistic!r}.")
    n, p = int(release.n), int(release.metadata["p"])
    h = math.ceil(n / 2)
    lo, hi = max(0, 2 * h - n), h
    t = np.arange(lo, hi + 1, dtype=np.float64)

    def lchoose(a, b):
        return gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)

    logw = lchoose(h, t) + lchoose(n - h, h - t)
    logw -= logw.max()
    pairs = np.asarray([list(pq) for pq in release.metadata["pairs"]], dtype=np.int64).reshape(-1, 2)
    iu, ju = pairs[:, 0], pairs[:, 1]
    alpha = np.broadcast_to(np.asarray(release.mechanism.alpha, dtype=np.float64), (iu.size,))
    return {
        "p": p,
        "K": int(iu.size),
        "S": int(t.size),
        "t": t.tolist(),
        "logw": logw.tolist(),
        "y": np.rint(np.asarray(release.values, dtype=np.float64)).astype(int).tolist(),
        "alpha": alpha.tolist(),
        "row": (iu + 1).tolist(),
        "col": (ju + 1).tolist(),
        "eta": float(eta),
    }


def _test_matrices(p: int, count: int, seed: int) -> list[np.ndarray]:
    from noiseaware.datasets import random_correlation

    rng = np.random.default_rng(seed)
    return [random_correlation(p, rng) for _ in range(count)]


# ----------------------------------------------------------------------------------------------
# workers (each runs in its own process)
# ----------------------------------------------------------------------------------------------


#: Environment variable carrying ``--fit-options`` (JSON) to the NumPyro workers.
FIT_OPTIONS_ENV = "SPEED_RACE_FIT_OPTIONS"


def worker_noiseaware(
    backend: str, release_path: str, chains: int, draws: int, warmup: int, seed: int, out_path: str
) -> dict:
    import warnings

    import arviz  # noqa: F401  (imports are not timed: a user's script has them loaded already)

    if backend == "numpyro":
        import noiseaware

        # the documented set-up (README, "Analyst"): float64, one host device per core, the compilation cache
        noiseaware.config.configure()
        import numpyro  # noqa: F401
    else:
        import pymc  # noqa: F401
    from noiseaware.copula import fit, pair_draws

    release = load_release(release_path)
    # --fit-options (NumPyro only), handed over by the parent process
    opts = json.loads(os.environ.get(FIT_OPTIONS_ENV, "{}")) if backend == "numpyro" else {}
    la0 = loadavg()
    c0 = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = fit(release, backend=backend, chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=False,
              **opts)
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - c0
    la1 = loadavg()
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


def worker_stan(release_path: str, chains: int, draws: int, warmup: int, seed: int, recompile: bool) -> dict:
    import httpstan.cache
    import httpstan.models
    import stan


    release = load_release(release_path)
    data = stan_data(release)
    model_name = httpstan.models.calculate_model_name(STAN_PROGRAM)
    cached = model_name in httpstan.cache.list_model_names()
    if cached and recompile:
        httpstan.cache.delete_model_directory(model_name)
        cached = False
    la0 = loadavg()
    t0 = time.perf_counter()
    c0 = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
    posterior = stan.build(STAN_PROGRAM, data=data, random_seed=seed)
    build_s = time.perf_counter() - t0
    build_cpu = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - c0
    t1 = time.perf_counter()
    fitted = posterior.sample(num_chains=chains, num_samples=draws, num_warmup=warmup)
    sample_s = time.perf_counter() - t1
    la1 = loadavg()
    p = data["p"]
    iu, ju = np.triu_indices(p, 1)
    R = np.asarray(fitted["R"])  # (p, p, draws * chains), chain-major blocks of draws
    R = R.reshape(p, p, chains, draws)
    r = np.moveaxis(R[iu, ju], 0, -1)  # (chains, draws, k)
    leap = np.asarray(fitted["n_leapfrog__"]).ravel()
    return {
        "build_s": build_s,
        "build_cached": cached,
        "sample_s": sample_s,
        **posterior_summary(r, chains, draws, warmup),
        "mean_leapfrog": float(leap.mean()),
        "build_cpu_s": build_cpu,  # the C++ compiler runs in reaped child processes: counted
        # two full sums over the support (numerator with the noise, normalizer), per pair
        "terms_per_gradient": 2 * data["K"] * data["S"],
        "load": f"{la0} -> {la1}",
    }


def worker_check(release_path: str, seed: int) -> dict:
    """Stan's log density vs noiseaware's composite log-likelihood + LKJCholesky at a few R."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpyro.distributions as dist
    import stan

    from noiseaware import numpyro as nan

    release = load_release(release_path)
    data = stan_data(release)
    p = data["p"]
    posterior = stan.build(STAN_PROGRAM, data=data, random_seed=seed)
    obs = jnp.asarray(np.asarray(release.values, dtype=np.float64))
    rows = []
    for R in _test_matrices(p, 4, seed):
        L = np.linalg.cholesky(R)
        theta = posterior.unconstrain_pars({"L": L.tolist()})  # type: ignore[arg-type]
        lp_stan = float(posterior.log_prob(theta, adjust_transform=False))
        cl = float(nan.CompositeCopulaLikelihood(jnp.asarray(R), release.n, alpha=data["alpha"]).log_prob(obs))
        lkj = float(dist.LKJCholesky(p, concentration=data["eta"]).log_prob(jnp.asarray(L)))
        rows.append({"stan": lp_stan, "composite": cl, "lkj": lkj, "diff": lp_stan - (cl + lkj)})
    return {"rows": rows}


# ----------------------------------------------------------------------------------------------
# orchestration
# ----------------------------------------------------------------------------------------------


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
    cmd = [python or sys.executable, str(script or Path(__file__).resolve()), "--worker", *args, "--out", out_path]
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


def parse_cases(text: str) -> list[tuple[int, int]]:
    cases = []
    for item in text.split(","):
        n, p = item.lower().split("x")
        cases.append((int(float(n)), int(p)))
    return cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", default=None, help="write the 'speed_race' section of this Markdown report")
    ap.add_argument("--cases", default=DEFAULT_CASES, help="comma-separated NxP cases (default %(default)s)")
    ap.add_argument("--engines", default="numpyro,pymc,stan", help="comma-separated subset of numpyro,pymc,stan")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--stan-timeout", type=float, default=1500.0, help="time limit per Stan run, seconds")
    ap.add_argument("--timeout", type=float, default=1500.0, help="time limit per noiseaware fit, seconds")
    ap.add_argument("--stan-recompile", action="store_true", help="drop httpstan's cached build of the program first")
    ap.add_argument("--stan-reduced", action="store_true", help="let Stan run STAN_REDUCED iterations (no ratios then)")
    ap.add_argument("--stan-full", action="store_true", help="the default (kept for old command lines)")
    ap.add_argument("--baseline", default=None, metavar="REV",
                    help="also race the NumPyro fit of git revision REV (its own code and worker, in a temporary "
                         "worktree) right after this tree's, against the same Stan run")
    ap.add_argument("--baseline-python", default=None, metavar="PYTHON",
                    help="the interpreter of the baseline's worker (default: this one), e.g. .venv-compat/bin/python "
                         "to race the baseline revision on the previous stack (Python 3.11, PyMC 5, JAX 0.10)")
    ap.add_argument("--fit-options", default="{}",
                    help="JSON keywords for the NumPyro fits, e.g. '{\"mass_matrix\": \"dense\"}' (default none)")
    ap.add_argument("--worker", nargs="+", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        kind, release_path, *rest = args.worker
        opts = [int(x) for x in rest]
        if kind == "stan":
            result = worker_stan(release_path, *opts[:4], recompile=bool(opts[4]))
        elif kind == "check":
            result = worker_check(release_path, opts[0])
        else:
            result = worker_noiseaware(kind, release_path, *opts[:4], out_path=args.out)
        Path(args.out).write_text(json.dumps(result))
        return 0

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if "stan" in engines and importlib.util.find_spec("stan") is None:
        print(
            "speed_race: PyStan is not installed, so the Stan side of the race cannot run.\n"
            "Install the benchmark extra:  pip install -e '.[bench]'   (pystan >= 3.10, Linux/macOS), "
            "or run without Stan:  --engines numpyro,pymc",
            file=sys.stderr,
        )
        return 2

    command = "python benchmarks/speed_race.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    tmp = tempfile.mkdtemp(prefix="speed_race_")
    results: dict = {"cases": [], "command": command.strip()}
    recompile = args.stan_recompile
    base = baseline_tree(args.baseline, tmp) if args.baseline else None
    if base is not None:
        results["baseline"] = args.baseline
    for n, p in parse_cases(args.cases):
        rel_path = os.path.join(tmp, f"release_{n}_{p}.json")
        make_release(n, p, args.seed + n + p, rel_path)
        case: dict = {"n": n, "p": p, "k": p * (p - 1) // 2}
        print(f"== n = {n}, p = {p} ({case['k']} pairs), load {loadavg()}", flush=True)
        base_args = [str(args.chains), str(args.draws), str(args.warmup), str(args.seed)]
        use_stan = "stan" in engines and n < NOISEAWARE_ONLY_N
        for eng in engines:
            if eng == "stan":
                if not use_stan:
                    continue
                full = (args.warmup, args.draws)
                warm, dr = STAN_REDUCED.get(n, full) if args.stan_reduced else full
                sargs = [str(args.chains), str(dr), str(warm), str(args.seed), str(int(recompile))]
                limit = args.stan_timeout
                if args.stan_reduced:
                    limit = min(limit, STAN_TIMEOUT.get(n, math.inf))
                res = run_worker(["stan", rel_path, *sargs], limit)
                recompile = False
                if "error" in res:
                    res.update(chains=args.chains, warmup=warm, draws=dr)
                else:
                    res["wall_s"] = res["build_s"] + res["sample_s"]
                    res["compile_s"] = res["build_s"]
                    res["cpu_s"] = res["process_cpu_s"]  # the whole worker: build, sampling processes
                    # httpstan's sampling processes are counted only once the worker has exited and been
                    # reaped, so the sampling's CPU is the worker's total less the build's
                    res["sample_cpu_s"] = res["process_cpu_s"] - res["build_cpu_s"]
                    res["reduced"] = (warm, dr) != (args.warmup, args.draws)
            elif eng == "pymc" and n >= NOISEAWARE_ONLY_N:
                continue
            elif eng == "numpyro":
                # first process: an empty JAX compilation cache (a first-ever fit of this shape); second
                # process: the cache the first one wrote (what every later session fitting this shape gets)
                cache = os.path.join(tmp, f"jax_cache_{n}_{p}")
                env = {"NOISEAWARE_JAX_CACHE": cache, FIT_OPTIONS_ENV: args.fit_options}
                res = run_worker([eng, rel_path, *base_args], args.timeout, env=env)
                case[eng] = res
                print(f"   {eng:8s} {summary_line(res)}", flush=True)
                eng, res = "numpyro_warm", run_worker([eng, rel_path, *base_args], args.timeout, env=env)
                if base is not None:  # the baseline revision, right after, on the same release and load
                    case[eng] = res
                    print(f"   {eng:8s} {summary_line(res)}", flush=True)
                    benv = {**env, "NOISEAWARE_JAX_CACHE": cache + "_base", "PYTHONPATH": str(base)}
                    script = base / "benchmarks" / "speed_race.py"
                    for tag in ("numpyro_base", "numpyro_base_warm"):
                        res = run_worker(["numpyro", rel_path, *base_args], args.timeout, env=benv, script=script,
                                         python=args.baseline_python)
                        case[tag] = res
                        print(f"   {tag:8s} {summary_line(res)}", flush=True)
                    continue
            else:
                res = run_worker([eng, rel_path, *base_args], args.timeout)
            case[eng] = res
            print(f"   {eng:8s} {summary_line(res)}", flush=True)
        if use_stan:  # after the race, so that the first Stan run of the race pays its own C++ build
            chk = run_worker(["check", rel_path, str(args.seed)], None)
            case["check"] = chk
            for row in chk.get("rows", []):
                print(
                    f"   log-density check: Stan {row['stan']:.10f}  noiseaware CL + LKJ "
                    f"{row['composite'] + row['lkj']:.10f}  diff {row['diff']:+.3e}",
                    flush=True,
                )
        results["cases"].append(case)
    text = report(results)
    print(text)
    if args.write:
        from _report import write_section

        write_section(args.write, "speed_race_before_after" if args.baseline else "speed_race", text)
    return 0


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


def _sampling_s(res: dict) -> float:
    return res["wall_s"] - res["compile_s"]


def summary_line(res: dict) -> str:
    if "error" in res:
        return f"ERROR: {res['error']}"
    return (
        f"wall {res['wall_s']:8.1f} s (compile {res['compile_s']:6.1f} s)  min bulk ESS {res['ess']:7.0f}  "
        f"ESS/s {res['ess'] / res['wall_s']:8.2f} (excl. compile {res['ess'] / _sampling_s(res):8.2f})  "
        f"CPU {res.get('cpu_s', float('nan')):7.1f} s  "
        f"max R-hat {res['rhat']:.3f}  load {res['load']}"
    )


def report(results: dict) -> str:
    import platform

    cpu = platform.machine()
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    libs = ", ".join(f"{d} {_version(d)}" for d in ("noiseaware", "jax", "numpyro", "pymc", "pystan", "httpstan"))
    machine = f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}; {libs}"
    lines = [
        "## Speed race: noiseaware vs the paper's Stan approach (`benchmarks/speed_race.py`)",
        "",
        f"Command: `{results['command']}`",
        "",
        f"Machine: {machine}.",
        "Shared 2-core machine: the load average (1 min) at the start and end of each run is shown.",
        "",
        "Releases: `privatize(x, statistic='median_pairs', epsilon=1.0, rng=...)` on",
        "`simulate_gaussian_copula` data (standard normal margins; R from `random_correlation`);",
        "the same release for every engine. Each engine runs in a fresh process. Stan: the program in",
        "the script (eqs. 17-18, LKJ(1), full sums over the support at every evaluation), built with",
        "`stan.build` and sampled with `posterior.sample(num_chains=4, ...)`; its compile time is the",
        "`stan.build` time (C++ compilation unless httpstan had the program cached). noiseaware: `copula.fit`;",
        "its compile time is its wall time less that of an identical second `fit` (another seed) in the same",
        "process; the 1st process starts with an empty JAX compilation cache, the 2nd with the cache the 1st",
        "wrote. The host has 2 XLA CPU devices (noiseaware's default, one per core). ESS: minimum",
        "bulk ESS (ArviZ) over the p(p-1)/2 correlations. ESS/s uses the wall time including",
        "compilation; the column 'excl.' uses the wall time minus the compile time. CPU s: user + system",
        "CPU time of the fit (noiseaware: the `fit` call, PyMC's chain processes included; Stan: the whole",
        "worker process tree, build and sampling processes included); ESS per CPU second is the",
        "figure least distorted by the other jobs on this machine.",
        "",
        "| n | p | engine | chains x (warmup + draws) | wall incl. compile (s) | compile (s) | wall excl. (s) "
        "| CPU s | mean leapfrog | min bulk ESS | max R-hat | ESS/s | ESS/s excl. | ESS/CPU s "
        "| vs Stan: ESS/s | excl. | ESS/CPU s | load |",
        "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    notes = []
    for case in results["cases"]:
        stan_res = case.get("stan")
        stan_ok = stan_res is not None and "error" not in stan_res
        stan_bound = None  # upper bound on Stan's ESS/s when it was stopped at the time limit
        if stan_res is not None and "elapsed_s" in stan_res:
            kept = stan_res["chains"] * stan_res["draws"]
            stan_bound = kept / stan_res["elapsed_s"]
            notes.append(
                f"n = {case['n']:,}, p = {case['p']}: Stan ({stan_res['chains']} x ({stan_res['warmup']} + "
                f"{stan_res['draws']})) was {stan_res['error']}; it would have kept at most {kept} draws, so its "
                f"ESS per second is below {kept} / {stan_res['elapsed_s']:.0f} s = {stan_bound:.3f}, and the ratios "
                "'>=' in the table are lower bounds."
            )
        for eng in ("numpyro", "numpyro_warm", "numpyro_base", "numpyro_base_warm", "pymc", "stan"):
            res = case.get(eng)
            if res is None:
                continue
            if "error" in res:
                lines.append(f"| {case['n']:,} | {case['p']} | {eng} | | {res['error']} |" + " |" * 13)
                continue
            if res.get("note"):
                notes.append(f"n = {case['n']:,}, p = {case['p']}, {eng}: {res['note']} (compile time not measured).")
            label = ENGINE_LABELS.get(eng, eng).replace("BASE", str(results.get("baseline")))
            label += " (reduced run)" if res.get("reduced") else ""
            if eng == "stan" and res.get("build_cached"):
                label += " (build cached)"
            eps, epsx, epc = res["ess"] / res["wall_s"], res["ess"] / _sampling_s(res), res["ess"] / res["cpu_s"]
            if stan_ok and eng != "stan" and not stan_res.get("reduced"):
                r1 = eps / (stan_res["ess"] / stan_res["wall_s"])
                r2 = epsx / (stan_res["ess"] / _sampling_s(stan_res))
                r3 = epc / (stan_res["ess"] / stan_res["cpu_s"])
                ratio, ratiox, ratioc = f"{r1:,.1f}x", f"{r2:,.1f}x", f"{r3:,.1f}x"
            elif stan_bound is not None and eng != "stan":
                ratio, ratiox, ratioc = f">= {eps / stan_bound:,.1f}x", "", ""
            else:
                ratio = ratiox = ratioc = ""
            leap = f"{res['mean_leapfrog']:.1f}" if "mean_leapfrog" in res else ""
            lines.append(
                f"| {case['n']:,} | {case['p']} | {label} | {res['chains']} x ({res['warmup']} + {res['draws']}) "
                f"| {res['wall_s']:.1f} | {res['compile_s']:.1f} | {_sampling_s(res):.1f} | {res['cpu_s']:.1f} "
                f"| {leap} "
                f"| {res['ess']:.0f} | {res['rhat']:.3f} | {eps:.2f} | {epsx:.2f} | {epc:.2f} | {ratio} | {ratiox} "
                f"| {ratioc} | {res['load']} |"
            )
        if "numpyro" in case and "stan" in case and stan_ok and "error" not in case["numpyro"]:
            a, b = np.asarray(case["numpyro"]["mean"]), np.asarray(stan_res["mean"])
            sd = np.asarray(stan_res["sd"])
            notes.append(
                f"n = {case['n']:,}, p = {case['p']}: posterior means NumPyro vs Stan differ by at most "
                f"{np.max(np.abs(a - b)):.4f} (= {np.max(np.abs(a - b) / sd):.2f} posterior sd)."
            )
        for row_set in [case.get("check", {}).get("rows", [])]:
            if row_set:
                d = np.asarray([r["diff"] for r in row_set])
                notes.append(
                    f"n = {case['n']:,}, p = {case['p']}: log-density check at {d.size} random R: Stan's "
                    f"`log_prob(adjust_transform=False)` minus (noiseaware composite log-likelihood + NumPyro "
                    f"`LKJCholesky` log density) = {d.mean():+.3e}, spread (max - min) {np.ptp(d):.1e}."
                )
    lines += ["", *[f"- {x}" for x in notes], ""]
    lines += _per_gradient(results)
    lines += _targets(results)
    return "\n".join(lines)


def _per_gradient(results: dict) -> list[str]:
    """Cost per gradient: terms summed per gradient and sampling CPU per leapfrog step, per engine."""
    out = [
        "Cost per gradient (one leapfrog step = one gradient of the log density). Terms: the exp/log terms one",
        "gradient sums (NumPyro: two windows of the table's static width per pair; Stan: two full sums over",
        "the support per pair). CPU per step: the sampling's CPU seconds (NumPyro: the CPU of the identical second",
        "fit in the same process, preconditioning included; Stan: the worker's CPU less that of `stan.build`) over",
        "chains x (warmup + draws) x mean leapfrog steps of the kept draws (warmup assumed alike).",
        "",
        "| n | p | engine | devices | terms per gradient | mean leapfrog | sampling CPU s | CPU per step (us) "
        "| CPU per term (ns) |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for case in results["cases"]:
        for eng in ("numpyro", "numpyro_warm", "stan"):
            res = case.get(eng)
            if res is None or "error" in res or "sample_cpu_s" not in res or "mean_leapfrog" not in res:
                continue
            steps = res["chains"] * (res["warmup"] + res["draws"]) * res["mean_leapfrog"]
            per_step = res["sample_cpu_s"] / steps
            terms = res.get("terms_per_gradient")
            out.append(
                f"| {case['n']:,} | {case['p']} | {ENGINE_LABELS.get(eng, eng)} | {res.get('devices', '')} "
                f"| {terms:,} | {res['mean_leapfrog']:.1f} | {res['sample_cpu_s']:.1f} | {per_step * 1e6:.1f} "
                f"| {per_step / terms * 1e9:.2f} |"
            )
    return [*out, ""]


def _targets(results: dict) -> list[str]:
    out = ["Targets (NHANES size: a fit <= 9 s including compilation, >= 55x Stan's ESS per second):", ""]
    for case in results["cases"]:
        res = case.get("numpyro")
        if res is None or "error" in res:
            continue
        if (case["n"], case["p"]) == (5820, 7):
            for eng in ("numpyro", "numpyro_warm", "numpyro_base", "numpyro_base_warm"):
                res = case.get(eng)
                if res is None or "error" in res:
                    continue
                who = ENGINE_LABELS[eng].replace("BASE", str(results.get("baseline")))
                ok = res["wall_s"] <= 9.0
                out.append(
                    f"- n = 5,820, p = 7, 4 x 1000 draws NumPyro fit <= 9 s wall including compilation, {who}: "
                    f"**{res['wall_s']:.1f} s — {'met' if ok else 'not met'}** (load {res['load']})."
                )
                st = case.get("stan")
                if st is not None and "error" not in st and not st.get("reduced"):
                    r1 = (res["ess"] / res["wall_s"]) / (st["ess"] / st["wall_s"])
                    r2 = (res["ess"] / _sampling_s(res)) / (st["ess"] / _sampling_s(st))
                    r3 = (res["ess"] / res["cpu_s"]) / (st["ess"] / st["cpu_s"])
                    need = (r1, r3)  # the two measures: per wall second incl. compilation, per CPU second
                    verdict = "met" if min(need) >= 55 else "not met" if max(need) < 55 else "met on one measure"
                    out.append(
                        f"- NumPyro >= 55x Stan's ESS per second, {who}: **{r1:.1f}x on wall time including "
                        f"compilation, {r3:.1f}x per CPU second — {verdict}** ({r2:.1f}x excluding compilation)."
                    )
            res = case["numpyro"]
        if case["n"] >= NOISEAWARE_ONLY_N:
            ok = res["wall_s"] <= 120.0
            out.append(
                f"- n = {case['n']:,}, p = {case['p']} full NumPyro fit <= 2 minutes: "
                f"**{res['wall_s']:.1f} s — {'met' if ok else 'not met'}** (load {res['load']})."
            )
    return out


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices, compilation cache
    sys.exit(main())
