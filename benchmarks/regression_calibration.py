"""Interval coverage of the noise-aware regression posterior beside the noise-blind one (regression releases).

For each cell (n, rho, d): ``--reps`` replications. Each draws the parameters from the fit's prior
(coefficients ``N(0, 0.1^2)`` for the intercept and ``N(0, 0.5^2)`` for the slopes, ``sigma ~
HalfNormal(0.15)``, covariate means ``N(0, 0.05^2)``, scales ``HalfNormal(0.15)``, LKJ(2)
correlation), simulates ``n`` rows ``x ~ N(mu_x, Sigma_x)``, ``y = u'beta + sigma e`` (clipped to the
bound 1: rare values, but a clipped value breaks the model's linear-Gaussian law, so the coverage of
the replications without a clipped value is reported beside the pooled one), releases
``privatize(..., statistic="regression", method="ssp", bound=1.0, rho=rho)`` (simulation mode), and
fits two NumPyro posteriors of the model of :func:`noiseaware.regression.fit` with that prior:

* noise-aware: :class:`noiseaware.numpyro.NoisySufficientStatistics` with the release's noise scales;
* noise-blind: the same model with the noisy statistics taken as exact (scale 0);

and, beside them, AdaSSP (:func:`noiseaware.regression.adassp`, Wang 2018) on a second release of the
same rows (``method="adassp"``, the same rho) with the interval a user would add to it: the plug-in
normal interval of a ridge estimate, ``coef +- z sd``, ``sd^2 = diag(s^2 A^-1 S A^-1)``, ``A = S + lambda D``,
``S`` the noisy ``X'X``, ``s^2`` the residual variance from the noisy statistics (the noise ignored, as
AdaSSP offers no interval); an interval that cannot be formed (``s^2 <= 0`` or ``A`` singular) misses.

Coverage is the share of central 90% and 95% intervals of every coefficient that contain the
drawn truth; with parameters drawn from the prior it is nominal for a correct model (the
calibration of simulation-based calibration, Talts et al. 2018), whatever the cell's information.
The standard error of a coverage ``c`` over ``R`` replications and ``p`` coefficients is at most
``sqrt(c (1 - c) / R)`` (coefficients of one replication are not independent). NUTS compiles once per
cell and model (the release's entries are the model's argument). Run one cell per process (a process that
ran several cells died of an LLVM "Cannot allocate memory" at its second cell)::

    .venv/bin/python benchmarks/regression_calibration.py --reps 200 --ds 2 --ns 500 --rhos 0.1 \
        --seed-offset 1000000 --write --append

(the study's cell: one chain of 1000 + 1000, the defaults, and seed offset 1000000; at n = 5000, d = 5 it adds
``--skip-blind``).

A long cell can run in chunks, in parallel processes (each its own checkout, as two processes must not write one
raw file), whose rows are then put into one raw file: ``--reps 50 --first-rep 50`` runs replications 50-99 of
the same stream, and chunks tiling ``0 .. R`` are pooled into one row (:func:`pool`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import machine, raw_path, results_dir, write_section

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


def report(rows: list[dict[str, Any]], load0: float, write: bool, load_note: str | None = None) -> None:
    """Write the raw JSON rows and (with ``write``) the record rendered into the docs."""
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
        + (load_note or f"load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after the last run."),
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
    if write:
        write_section(results_dir(), "regression_calibration", text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--ns", nargs="*", type=int, default=[500, 5000])
    ap.add_argument("--rhos", nargs="*", type=float, default=[0.01, 0.1, 1.0])
    ap.add_argument("--ds", nargs="*", type=int, default=[2, 5])
    ap.add_argument("--warmup", type=int, default=STUDY_CHAIN[0])
    ap.add_argument("--draws", type=int, default=STUDY_CHAIN[1])
    ap.add_argument("--seed-offset", type=int, default=0,
                    help="added to each cell's seed: an independent replication of a cell (its row records the offset)")
    ap.add_argument("--first-rep", type=int, default=0,
                    help="run replications first-rep .. first-rep + reps - 1 of each cell's stream (a chunk; "
                    "chunks that tile 0 .. R are pooled into one row)")
    ap.add_argument("--skip-blind", action="store_true",
                    help="leave the noise-blind fit out (the noise-aware and AdaSSP results are unchanged)")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--append", action="store_true", help="add to (replace the same cells of) the saved raw rows")
    ap.add_argument("--render-only", action="store_true", help="write the record from the saved raw rows")
    ap.add_argument("--load-note", help="with --render-only: the load during the runs (as the runner recorded it)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    load0 = os.getloadavg()[0]
    rows: list[dict[str, Any]] = []
    saved = raw_path("regression_calibration.json")
    if args.append and saved.exists():  # keep the cells of earlier runs; a cell run again replaces its row
        rows = json.loads(saved.read_text())
    if args.render_only:
        report(json.loads(saved.read_text()), load0, True, args.load_note)
        return
    command = ".venv/bin/python benchmarks/regression_calibration.py " + " ".join(sys.argv[1:])
    for d in args.ds:
        for n in args.ns:
            for rho in args.rhos:
                seed = 1000 * n + 10 * d + int(rho * 100) + args.seed_offset
                res = run_cell(n, rho, d, args.reps, args.warmup, args.draws, seed=seed, first=args.first_rep,
                               blind=not args.skip_blind)
                res["command"] = command
                res["seed_offset"] = args.seed_offset
                res["warmup"], res["draws"] = args.warmup, args.draws
                rows = [r for r in rows if _key(r) != _key(res)] + [res]
                print(json.dumps({k: v for k, v in res.items() if k != "per_rep"}), flush=True)
                report(rows, load0, args.write)  # after every cell: a run cut short keeps its results


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices, compilation cache
    main()
