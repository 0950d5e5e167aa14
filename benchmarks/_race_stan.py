"""The Stan side of speed_race.py: the paper's Stan program and its data, the Stan worker, the log-density check."""

from __future__ import annotations

import math
import resource
import time

import _study
import numpy as np
from _race_workers import cpu_seconds, load_release, posterior_summary

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
    la0 = _study.Load.now(uptime=False)
    t0 = time.perf_counter()
    c0 = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
    posterior = stan.build(STAN_PROGRAM, data=data, random_seed=seed)
    build_s = time.perf_counter() - t0
    build_cpu = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - c0
    t1 = time.perf_counter()
    fitted = posterior.sample(num_chains=chains, num_samples=draws, num_warmup=warmup)
    sample_s = time.perf_counter() - t1
    la1 = _study.Load.now(uptime=False)
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
    import jax.numpy as jnp  # float64: configured by _study.main
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
