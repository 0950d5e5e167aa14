"""``jax.jit`` with the XLA:CPU options a program is measured to run fastest with (private).

XLA:CPU in jaxlib 0.10 hands reductions to YNNPACK ("YNN fusions", ``__ynn_fusion`` in the compiled
HLO) by default. For the sums over the records axis of an ``(n, d)`` array with a short minor axis
(d = 3-6) that ``dirichlet.dpmcmc`` computes every iteration, those fusions are several times slower
than XLA's own loop fusions (``docs/benchmarks.md``, "dpmcmc: effective draws per second"). :func:`jit`
compiles with YNN fusions for dot products only. It is used where it was measured to help: ``dirichlet.dpmcmc`` and the
compiled sampler of ``augment.sample`` (``benchmarks/bench_augment.py``). The NUTS programs of
``copula.fit`` and ``dirichlet.fit`` run as fast either way; they keep XLA's defaults.

The option is experimental in XLA and may be renamed or dropped by a later jaxlib; it is probed once
on a trivial program, and where it is not accepted (or the default backend is not the CPU) programs
are compiled with XLA's defaults. ``NOISEAWARE_XLA_DEFAULTS=1`` (:data:`noiseaware.config.XLA_DEFAULTS_ENV`)
compiles with XLA's defaults always (for comparisons; read once per process).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from ..config import XLA_DEFAULTS_ENV

__all__ = ["CPU_OPTIONS", "compiler_options", "jit", "options_key"]

#: Per-program XLA debug options (``jax.jit(..., compiler_options=...)``): YNN fusions for dot products only.
CPU_OPTIONS: dict[str, str] = {"xla_cpu_experimental_ynn_fusion_type": "LIBRARY_FUSION_TYPE_DOT"}


@functools.cache
def compiler_options() -> dict[str, str] | None:
    """:data:`CPU_OPTIONS` where the default backend is the CPU and this jaxlib accepts them, else None."""
    if os.environ.get(XLA_DEFAULTS_ENV, "").strip().lower() in {"1", "true", "on", "yes"}:
        return None
    import jax
    import jax.numpy as jnp

    if jax.default_backend() != "cpu":
        return None
    try:
        jax.jit(lambda x: jnp.sum(x, axis=0), compiler_options=CPU_OPTIONS).lower(jnp.ones((2, 3))).compile()
    except Exception:  # an unknown option or value (a jaxlib without it): XLA's defaults
        return None
    return dict(CPU_OPTIONS)


def options_key() -> tuple[tuple[str, str], ...]:
    """The options :func:`jit` would use now, hashable (part of a program cache's key).

    So that a program compiled with other options is never reused.
    """
    return tuple(sorted((compiler_options() or {}).items()))


def jit(fn: Callable[..., Any], **kwargs: Any) -> Any:
    """``jax.jit(fn, **kwargs)`` compiled with :func:`compiler_options`."""
    import jax

    return jax.jit(fn, compiler_options=compiler_options(), **kwargs)
