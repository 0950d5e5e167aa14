"""Float64 for the duration of one fit: the scoped form of ``jax_enable_x64`` (engine, private)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["float64", "same_float64"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def float64(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``fn`` with JAX's float64 on (``jax.enable_x64(True)``), restoring the setting afterwards.

    The fits' programs are traced and compiled inside the scope, so they are float64 programs
    whatever the process-wide setting is; the user's own ``jax_enable_x64`` is left as it was
    (nothing is changed at import, and nothing outlives the fit).
    """

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        import jax

        with jax.enable_x64(True):
            return fn(*args, **kwargs)

    return wrapper


def same_float64(target: Callable[_P, _R]) -> Callable[_P, _R]:
    """``target`` to run in another thread under the calling thread's float64 setting.

    ``jax.enable_x64`` is a thread-local scope: a thread started inside a fit would otherwise trace
    its programs with the process-wide setting.
    """
    import jax

    x64 = bool(jax.config.read("jax_enable_x64"))

    @functools.wraps(target)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with jax.enable_x64(x64):
            return target(*args, **kwargs)

    return wrapper
