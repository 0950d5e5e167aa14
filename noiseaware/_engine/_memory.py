"""Memory planning of a NUTS fit: estimate before allocating, refuse up front (engine, private).

A fit estimates what it will hold -- its preconditioner's program, the sampler's gradient
workspace over all chains, the stored draws -- and either chooses the dense preconditioner
(while its program is small enough and everything fits) or the diagonal one, or refuses with
a message naming the estimate and the limit, before anything is compiled or allocated.
:func:`compiled_bytes` reads XLA's own figure for a compiled program, so that a fit can decide
on the measured figure once a program is compiled.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .._validation import current_owner
from ..exceptions import NoiseawareValueError

__all__ = ["AUTO_DENSE_MAX_BYTES", "MemoryPlan", "compiled_bytes", "gib", "memory_limit", "plan_memory"]

#: ``preconditioner="auto"`` takes the dense Laplace scale while its program needs at most this
#: (e.g. ``copula.fit``: 0.27 GB at p = 10, n = 10^6 and 0.7 GB at p = 60, n = 300).
AUTO_DENSE_MAX_BYTES = 2**30


def memory_limit() -> int | None:
    """Bytes of memory this process may use: physical memory, or a lower cgroup limit (None: unknown)."""
    limit: int | None = None
    try:
        limit = int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - no sysconf (Windows)
        limit = None
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and (limit is None or int(text) < limit):
            limit = int(text)
    return limit


def gib(nbytes: float) -> str:
    """Bytes as ``"1.5 GiB"`` or ``"300 MiB"``.

    Examples
    --------
    >>> gib(3 * 2**30), gib(2**20)
    ('3 GiB', '1 MiB')
    """
    return f"{nbytes / 2**30:.3g} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.3g} MiB"


@dataclass(frozen=True)
class MemoryPlan:
    """What a fit will hold in memory, estimated before anything is allocated."""

    p: int
    preconditioner: str  # "dense" or "diagonal" ("none" without one)
    preconditioner_bytes: int  # the preconditioner's program (freed before sampling)
    sampler_bytes: int  # NUTS's gradient workspace, all chains
    draws_bytes: int  # the stored draws and their copies
    limit_bytes: int | None

    @property
    def total_bytes(self) -> int:
        return max(self.preconditioner_bytes, self.sampler_bytes) + self.draws_bytes


def plan_memory(
    p: int,
    *,
    preconditioner: str,
    dense_bytes: int,
    diagonal_bytes: int,
    sampler_bytes: int,
    stored_bytes: int,
    describe: str,
    auto_dense_max: int = AUTO_DENSE_MAX_BYTES,
) -> MemoryPlan:
    """Choose the preconditioner (``"auto"``, ``"dense"``, ``"diagonal"`` or ``"none"``) and check the fit fits.

    ``"auto"`` takes the dense one while its program needs at most ``auto_dense_max`` and the fit
    fits in memory. Raises :class:`NoiseawareValueError` (the current owner, ``describe`` the fit, the
    estimate, its parts and the limit, and a fix) when the plan exceeds the memory limit.
    """
    limit = memory_limit()
    kind = preconditioner
    if kind == "auto":
        fits = limit is None or max(dense_bytes, sampler_bytes) + stored_bytes <= limit
        kind = "dense" if dense_bytes <= auto_dense_max and fits else "diagonal"
    pre = {"dense": dense_bytes, "diagonal": diagonal_bytes}.get(kind, 0)
    plan = MemoryPlan(p, kind, pre, sampler_bytes, stored_bytes, limit)
    if limit is not None and plan.total_bytes > limit:
        fix = "use fewer chains or draws, or fit fewer columns at a time"
        if kind == "dense" and max(diagonal_bytes, sampler_bytes) + stored_bytes <= limit:
            fix = "use preconditioner='diagonal' (or 'auto')"
        parts = (
            f"({kind} preconditioner {gib(pre)}, sampler {gib(sampler_bytes)}, stored draws {gib(stored_bytes)}) "
            if kind != "none"
            else f"(stored draws {gib(stored_bytes)}) "
        )
        raise NoiseawareValueError(
            f"{current_owner()}: a fit at {describe} needs about {gib(plan.total_bytes)} {parts}"
            f"but the memory limit is {gib(limit)}; {fix}."
        )
    return plan


def compiled_bytes(compiled: Any) -> int | None:
    """XLA's memory figure for a compiled program (temporaries, arguments, outputs); None if unknown."""
    try:
        mem = compiled.memory_analysis()
    except Exception:  # pragma: no cover - backends without memory analysis
        return None
    if mem is None:  # pragma: no cover
        return None
    return int(mem.temp_size_in_bytes + mem.argument_size_in_bytes + mem.output_size_in_bytes)
