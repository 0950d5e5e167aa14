"""Benchmark: log-probability plus gradient of the noisy two-way table, windowed vs full sum.

Run:  .venv/bin/python benchmarks/bench_distributions.py [--write docs/benchmarks.md]

JAX, float64, jitted once and reused; each figure is the minimum over repeats of the mean time
of a batch of calls (block_until_ready). The windowed sums are the public
:class:`noiseaware.numpyro.NoisyTwoWayTable` and :class:`~noiseaware.numpyro.CompositeCopulaLikelihood`;
the full-sum baseline, written here from Wang et al. (2026) eq. (17), sums the same law over the
whole support (every ``t``), measured in the same run.
"""

from __future__ import annotations

import math
import time

import _study
import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from noiseaware.numpyro import CompositeCopulaLikelihood, NoisyTwoWayTable

EPS_PAIR = 1.0


def timeit(fn, *args, number=200, repeat=7):
    out = fn(*args)
    jax.block_until_ready(out)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            out = fn(*args)
        jax.block_until_ready(out)
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def pair_fn(n):
    """Value and gradient in ``r`` of the package's windowed log-pmf, and its window's width."""
    alpha = math.exp(-EPS_PAIR)

    def lp(r, y):
        return NoisyTwoWayTable(r, n, alpha=alpha).log_prob(y).sum()

    return jax.jit(jax.value_and_grad(lp)), NoisyTwoWayTable(0.0, n, alpha=alpha).table.width


def full_sum_fn(n):
    r"""The baseline: ``log P(T + D = y)`` summed over every ``t`` of the support, eq. (17).

    ``T`` Fisher's noncentral hypergeometric (``N = n``, ``K = m = ceil(n/2)``, log odds
    :math:`\psi(r) = 2\log((\pi + 2\arcsin r)/(\pi - 2\arcsin r))`, eqs. 7-9), ``D`` two-sided
    geometric with ``alpha = exp(-EPS_PAIR)``.
    """
    h = math.ceil(n / 2)
    t = jnp.arange(max(0, 2 * h - n), h + 1, dtype=jnp.float64)
    lg = jsp.gammaln
    base = lg(h + 1.0) - lg(t + 1.0) - lg(h - t + 1.0) + lg(n - h + 1.0) - lg(h - t + 1.0) - lg(n - 2 * h + t + 1.0)
    log_alpha = -EPS_PAIR
    log_norm_noise = math.log1p(-math.exp(log_alpha)) - math.log1p(math.exp(log_alpha))

    def lp(r, y):
        a = 2.0 * jnp.arcsin(r)
        psi = 2.0 * (jnp.log(jnp.pi + a) - jnp.log(jnp.pi - a))
        logw = base + t * psi
        return jsp.logsumexp(logw + log_norm_noise + log_alpha * jnp.abs(y - t)) - jsp.logsumexp(logw)

    return jax.jit(jax.value_and_grad(lp))


def composite_fn(n, p):
    alpha = math.exp(-EPS_PAIR)
    k = p * (p - 1) // 2

    def lp(R, y):
        return CompositeCopulaLikelihood(R, n, alpha=alpha).log_prob(y).sum()

    return jax.jit(jax.value_and_grad(lp)), k


def main(argv=None):
    ap = _study.parser(__doc__, write="str")
    ap.add_argument("--full-max", type=int, default=10**6, help="largest n for the full-sum baseline")
    args = ap.parse_args(argv)
    rows = []
    run = _study.Run(args, uptime=False)
    for n in [10**3, 10**4, 10**5, 10**6]:
        h = math.ceil(n / 2)
        y = jnp.asarray(float(round(h * (0.5 + 0.3 / 3))))
        r = jnp.asarray(0.3)
        f, width = pair_fn(n)
        tw = timeit(f, r, y, repeat=7)
        if n <= args.full_max:
            g = full_sum_fn(n)
            tf = timeit(g, r, y, number=20 if n >= 10**5 else 200, repeat=5)
            v1, v2 = f(r, y), g(r, y)
            diff = max(abs(float(v1[0] - v2[0])), abs(float(v1[1] - v2[1])))
        else:
            tf, diff = float("nan"), float("nan")
        rows.append((n, width, tw, tf, diff))
        print(
            f"n={n:>8}  window={width:>6}  windowed={tw * 1e6:9.1f} us  full={tf * 1e6:11.1f} us  "
            f"ratio={tf / tw:8.1f}  |diff|={diff:.1e}",
            flush=True,
        )
    n, p = 10**6, 10
    cf, k = composite_fn(n, p)
    rng = np.random.default_rng(0)
    R = jnp.asarray(np.corrcoef(rng.normal(size=(p, 3 * p))))
    y = jnp.full((k,), float(round(math.ceil(n / 2) * 0.5)))
    tc = timeit(cf, R, y, number=50)
    load0, load1 = run.before, run.stop().after
    print(f"composite p={p} ({k} pairs) n={n}: {tc * 1e3:.3f} ms; load average {load0} -> {load1}", flush=True)
    write(run, rows, tc, k, f"{load0} -> {load1}")


def write(run, rows, tc, k, load):
    lines = [
        "## Noise-aware distributions (`benchmarks/bench_distributions.py`)",
        "",
        "Command: `.venv/bin/python benchmarks/bench_distributions.py --write docs/benchmarks.md`",
        "",
        f"Machine: {_study.machine()}. JAX float64, jitted once, `value_and_grad` of the log-probability with",
        "respect to r (one call = value + gradient), per-pair epsilon = 1; minimum over repeats (7; 5 for",
        "the full sum) of the mean over a batch of calls. Baseline: the same law summed over the whole support",
        "(a full sum over all t, written in the script from eq. 17), measured in the same run. Load average",
        f"(1, 5, 15 min) at the start and end of the run: {load} (2 cores, shared with other jobs).",
        "",
        "| n | window W | windowed (µs) | full sum (µs) | full / windowed | max abs diff |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n, w, tw, tf, diff in rows:
        lines.append(f"| {n:,} | {w:,} | {tw * 1e6:.1f} | {tf * 1e6:.1f} | {tf / tw:.1f} | {diff:.1e} |")
    lines += [
        "",
        f"Composite likelihood, p = 10 ({k} pairs), n = 10^6, value + gradient w.r.t. R: **{tc * 1e3:.3f} ms**.",
        "",
        "Targets (issue 3): one pair at n = 10^6 in <= 50 µs; 45-pair composite at n = 10^6 in <= 3 ms.",
        "",
    ]
    one = [tw for n, _, tw, _, _ in rows if n == 10**6]
    if one:
        t1 = one[0]
        lines.append(
            f"Status: one pair at n = 10^6 **{t1 * 1e6:.1f} µs — {'met' if t1 <= 50e-6 else 'not met'}**; "
            f"45-pair composite **{tc * 1e3:.2f} ms — {'met' if tc <= 3e-3 else 'not met'}**. The windowed cost "
            f"grows like the window (O(sqrt n)): {rows[0][2] * 1e6:.1f} µs at n = {rows[0][0]:,} to "
            f"{t1 * 1e6:.1f} µs at n = 10^6, while the full sum grows linearly."
        )
        lines.append("")
    run.record("distributions", "\n".join(lines))


if __name__ == "__main__":
    _study.main(main)
