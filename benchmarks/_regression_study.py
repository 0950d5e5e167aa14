"""The simulation of regression_calibration.py: true parameters, releases, the three posteriors of a cell."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from _regression_table import _bits, summarise

import noiseaware as na
from noiseaware.regression import read_regression

SCALES = {"intercept": 0.1, "slope": 0.5, "sigma": 0.15, "x_loc": 0.05, "x": 0.15, "eta": 2.0}


def released_entries(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of a release's entries: the lower triangle of ``Z'Z`` (row-major) without the public ``n``."""
    rows, cols = np.tril_indices(d + 2)
    return rows[1:], cols[1:]


def make_mcmc(d: int, n: int, scale: np.ndarray, warmup: int, draws: int) -> Any:
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    from noiseaware.numpyro import NoisySufficientStatistics

    beta_scale = jnp.asarray([SCALES["intercept"]] + [SCALES["slope"]] * d)

    def model(obs: Any) -> None:
        beta = numpyro.sample("beta", dist.Normal(jnp.zeros(d + 1), beta_scale).to_event(1))
        sigma = numpyro.sample("sigma", dist.HalfNormal(SCALES["sigma"]))
        mu_x = numpyro.sample("mu_x", dist.Normal(jnp.zeros(d), SCALES["x_loc"]).to_event(1))
        sd_x = numpyro.sample("sd_x", dist.HalfNormal(SCALES["x"] * jnp.ones(d)).to_event(1))
        corr = numpyro.sample("corr_x_chol", dist.LKJCholesky(d, SCALES["eta"]))
        low = sd_x[:, None] * corr
        numpyro.sample("stats", NoisySufficientStatistics(beta, sigma, mu_x, low @ low.T, n=n, scale=scale), obs=obs)

    return make_runner(model, d, n, scale, warmup, draws)


def make_runner(model: Any, d: int, n: int, scale: np.ndarray, warmup: int, draws: int) -> Any:
    """One chain of NUTS as one compiled function of ``(key, obs)``, through NumPyro's functional ``hmc``.

    ``MCMC.run`` compiles its sampling loop again at every call, even with ``jit_model_args``, and a process
    that keeps the executables of hundreds of runs exhausts the memory maps (LLVM "Cannot allocate
    memory"); this program is compiled once per cell and model. The chain starts uniform in
    ``(-2, 2)`` on the unconstrained scale (NumPyro's default ``init_to_uniform``).
    Returns ``(beta draws (draws, d + 1), divergent transitions after warm-up)``.
    """
    import jax
    import jax.numpy as jnp
    from numpyro.infer.hmc import hmc
    from numpyro.infer.util import initialize_model

    rows, _ = released_entries(d)
    info = initialize_model(jax.random.PRNGKey(0), model, model_args=(jnp.zeros(rows.size),), dynamic_args=True)
    init_kernel, sample_kernel = hmc(potential_fn_gen=info.potential_fn, algo="NUTS")
    leaves, tree = jax.tree.flatten(info.param_info.z)

    def run(key: Any, obs: Any) -> tuple[Any, Any]:
        k_init, k_run = jax.random.split(key)
        keys = jax.random.split(k_init, len(leaves))
        z0 = jax.tree.unflatten(tree, [jax.random.uniform(k, jnp.shape(a), minval=-2.0, maxval=2.0)
                                       for k, a in zip(keys, leaves, strict=True)])
        state = init_kernel(z0, num_warmup=warmup, model_args=(obs,), rng_key=k_run)

        def step(s: Any, _: Any) -> tuple[Any, tuple[Any, Any]]:
            s = sample_kernel(s, model_args=(obs,))
            return s, (s.z, s.diverging)

        _, (zs, div) = jax.lax.scan(step, state, None, length=warmup + draws)
        zs = jax.tree.map(lambda a: a[warmup:], zs)
        return jax.vmap(info.postprocess_fn(obs))(zs)["beta"], jnp.sum(div[warmup:])

    return jax.jit(run)


def draw_truth(rng: np.random.Generator, d: int) -> dict[str, np.ndarray]:
    import jax
    import numpyro.distributions as dist

    corr = np.asarray(dist.LKJCholesky(d, SCALES["eta"]).sample(jax.random.PRNGKey(int(rng.integers(2**31)))))
    sd = np.abs(rng.normal(0.0, SCALES["x"], size=d))
    low = sd[:, None] * corr
    return {
        "beta": rng.normal(0.0, [SCALES["intercept"]] + [SCALES["slope"]] * d),
        "sigma": np.abs(rng.normal(0.0, SCALES["sigma"])),
        "mu_x": rng.normal(0.0, SCALES["x_loc"], size=d),
        "cov_x": low @ low.T,
    }


def adassp_hits(release: Any, beta: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Whether AdaSSP's plug-in 90% / 95% intervals contain ``beta`` (module docstring); bounds are 1."""
    from scipy import stats

    est = na.regression.adassp(release)
    m = np.asarray(est.moments, dtype=np.float64)
    p = m.shape[0] - 1
    sxx, sxy, syy = m[:p, :p], m[:p, p], m[p, p]
    coef = np.asarray(est.coef)
    pen = np.ones(p)
    pen[0] = 0.0  # the intercept is not regularised
    a = sxx + est.ridge * np.diag(pen)
    s2 = (syy - 2.0 * coef @ sxy + coef @ sxx @ coef) / (n - p)
    out = {}
    try:
        a_inv = np.linalg.inv(a)
        var = s2 * np.diag(a_inv @ sxx @ a_inv)
    except np.linalg.LinAlgError:
        var = np.full(p, -1.0)
    out["formed"] = np.array([bool(np.all(var > 0))])
    for level, q in (("90", 0.95), ("95", 0.975)):
        half = stats.norm.ppf(q) * np.sqrt(np.where(var > 0, var, np.nan))
        out[level] = np.abs(coef - beta) <= half  # NaN compares False: a missing interval misses
    return out


def _methods(blind: bool) -> tuple[str, ...]:
    return ("aware", "blind", "adassp") if blind else ("aware", "adassp")


def run_cell(n: int, rho: float, d: int, reps: int, warmup: int, draws: int, seed: int,
             first: int = 0, blind: bool = True) -> dict[str, Any]:
    """Replications ``first .. first + reps - 1`` of a cell: its summary row and per-replication record.

    The replications of a cell are one stream (the data of replication ``r`` come from the cell's generator after
    those of ``0, ..., r - 1``; its releases and chain from seeds ``seed + r``), so the chunks ``[0, 50)``,
    ``[50, 100)``, ... run in separate processes are together the same replications as one run of ``[0, 200)``:
    :func:`pool` joins them. The data of skipped replications are drawn and discarded (cheap beside NUTS).
    ``blind=False`` leaves the noise-blind fit out (its columns read "not run"); the noise-aware and AdaSSP
    results are the same as with it (each fit has its own key; the data do not depend on the fits).
    """
    import jax

    rng = np.random.default_rng(seed)
    rows, cols = released_entries(d)
    models: dict[str, Any] = {}
    rec: dict[str, list[Any]] = {"clean": [], "clipped": [], "formed": [], "ranks": [],
                                 **{f"{m}{lv}": [] for m in _methods(blind) for lv in ("90", "95")}}
    divergences = {"aware": 0, "blind": 0}
    t0 = time.perf_counter()
    for r in range(first + reps):
        th = draw_truth(rng, d)
        x = rng.multivariate_normal(th["mu_x"], th["cov_x"], size=n)
        y = th["beta"][0] + x @ th["beta"][1:] + th["sigma"] * rng.normal(size=n)
        if r < first:
            continue
        data = np.column_stack([x, y])
        rec["clipped"].append(float(np.mean(np.abs(data) > 1.0)))
        rec["clean"].append(bool(np.all(np.abs(data) <= 1.0)))
        rel = na.privatize(np.clip(data, -1.0, 1.0), statistic="regression", response=f"x{d}", bound=1.0, rho=rho,
                           rng=np.random.default_rng(seed + r))
        st = read_regression(rel)
        ada = na.privatize(np.clip(data, -1.0, 1.0), statistic="regression", response=f"x{d}", bound=1.0, rho=rho,
                           method="adassp", rng=np.random.default_rng(seed + r + 10**6))
        ada_hits = adassp_hits(ada, th["beta"], n)
        rec["formed"].append(bool(ada_hits.pop("formed")[0]))
        for level, h in ada_hits.items():
            rec[f"adassp{level}"].append(_bits(h))
        obs = np.asarray(st.moments)[rows, cols]
        if not models:
            models["aware"] = make_mcmc(d, n, np.asarray(st.scale), warmup, draws)
            if blind:
                models["blind"] = make_mcmc(d, n, np.zeros_like(np.asarray(st.scale)), warmup, draws)
        for name, runner in models.items():
            beta_draws, n_div = runner(jax.random.PRNGKey(seed + r), obs)
            post = np.asarray(beta_draws)
            divergences[name] += int(n_div)
            for level, q in (("90", 0.05), ("95", 0.025)):
                lo, hi = np.quantile(post, [q, 1.0 - q], axis=0)
                rec[f"{name}{level}"].append(_bits((lo <= th["beta"]) & (th["beta"] <= hi)))
            if name == "aware":
                thin = post[:: max(1, post.shape[0] // 99)][:99]
                rec["ranks"].append(np.sum(thin < th["beta"], axis=0).tolist())
    row: dict[str, Any] = {"n": n, "rho": rho, "d": d, "first_rep": first, "per_rep": rec,
                           "aware_divergences": divergences["aware"],
                           "blind_divergences": divergences["blind"] if blind else None,
                           "seconds": time.perf_counter() - t0}
    return summarise(row)
