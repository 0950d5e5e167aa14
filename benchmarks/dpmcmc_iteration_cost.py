"""Where an iteration of ``dirichlet.dpmcmc`` spends its time: wall time per iteration, by ablation.

On one simulated release (as ``dpmcmc_speed.py`` makes them), 4 chains on all local devices, the
default kernels are timed per iteration (1000 iterations after a compiled warm-up block), then with
one part at a time replaced by a stand-in of no cost -- the record sweep, the joint move, the exact
Gamma draw of the joint move's totals (a normal draw instead) -- and with XLA's default compiler
options instead of the engine's (``noiseaware._engine._compile``). The stand-ins make *wrong*
samplers: their draws are not used, only their time. The differences say what each part costs.
Not run in CI::

    .venv/bin/python benchmarks/dpmcmc_iteration_cost.py --n 5000 --d 3
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("NOISEAWARE_JAX_CACHE", "0")  # every variant compiles cold (none reuses another's program)
sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax.numpy as jnp
from _report import load
from dpmcmc_speed import release
from jax import random

from noiseaware._engine._compile import xla_defaults
from noiseaware.dirichlet import _dpmcmc as M
from noiseaware.dirichlet import _dpmcmc_moves as MOVES

ITERATIONS = 1000


def ms_per_iteration(prep: Any) -> float:
    """Compile and run one block, then time ``ITERATIONS`` iterations (no warmup, no fallback)."""
    M._PROGRAMS.clear()
    M._run([prep], None, M.CHUNK, 0, 0, False, sampler=M.DEFAULT_SAMPLER)
    t0 = time.perf_counter()
    M._run([prep], None, ITERATIONS, 0, 1, False, sampler=M.DEFAULT_SAMPLER, fallback=None)
    return (time.perf_counter() - t0) / ITERATIONS * 1e3


@contextmanager
def replaced(name: str, value: Any, table: Any = M) -> Iterator[None]:
    """``table.name = value`` within the block (``table`` a module or a dict)."""
    get, put = (table.__getitem__, table.__setitem__) if isinstance(table, dict) else (
        lambda k: getattr(table, k), lambda k, v: setattr(table, k, v))
    before = get(name)
    put(name, value)
    try:
        yield
    finally:
        put(name, before)


def no_sweep(key: Any, logx: Any, *args: Any) -> tuple[Any, Any]:
    return logx, jnp.ones((), jnp.float64)


def no_joint_move(log_prior: Callable[..., Any], b: int, d: int, rounds: int, **kw: Any) -> Callable[..., Any]:
    def move(key: Any, alpha0: Any, logx0: Any, *args: Any) -> Any:
        one = jnp.ones((), jnp.float64)
        return alpha0, logx0, one, one, jnp.concatenate([jnp.log(alpha0), jnp.zeros((d,), jnp.float64)])

    return move


def normal_totals(key: Any, a: Any, shape: tuple[int, ...]) -> Any:
    return jnp.log(a) + 0.01 * random.normal(key, shape, dtype=jnp.float64)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--d", type=int, default=3)
    p.add_argument("--eps", type=float, default=1.0)
    args = p.parse_args(argv)
    prep = M._prepare(release(args.n, args.d, args.eps, 0), None, 4, 0, 1, part=None, init=None, joint_move=None)
    load0 = load()
    variants: list[tuple[str, Any]] = [
        ("default (engine's XLA options)", None),
        ("XLA's default options", xla_defaults()),
        ("record sweep replaced (no cost)", replaced("_window_sweep", no_sweep)),
        ("joint move replaced (no cost)", replaced("surrogate", no_joint_move, M._JOINT_MAPS)),
        ("joint move's Gamma totals: a normal draw", replaced("loggamma", normal_totals, MOVES)),
    ]
    print(f"n = {args.n}, d = {args.d}, epsilon = {args.eps}: ms per iteration (4 chains, all local devices)")
    base = None
    for label, ctx in variants:
        if ctx is None:
            ms = ms_per_iteration(prep)
            base = ms
        else:
            with ctx:
                ms = ms_per_iteration(prep)
        print(f"  {label:44s} {ms:6.3f}" + (f"  ({ms - base:+.3f})" if base is not None and ctx else ""), flush=True)
    print(f"load before: {load0}\nload after: {load()}")
    return 0


if __name__ == "__main__":
    import noiseaware.config

    noiseaware.config.configure()  # the documented set-up: float64, host devices, compilation cache
    raise SystemExit(main())
