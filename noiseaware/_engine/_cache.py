"""Compile once, data as arguments: the one cache of compiled samplers (engine, private).

A fit's compiled program takes the release's numbers as *arguments*, so its cache key is only what
shapes the program (sizes, model structure, sampler settings) -- never the data. A second release of
the same shape then reuses the compiled program. :class:`ProgramCache` is the small LRU cache
``dirichlet.fit``, ``dirichlet.dpmcmc`` and ``copula.fit`` keep their programs in.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["ProgramCache"]


class ProgramCache:
    """Least-recently-used cache of compiled programs keyed by their static configuration.

    Parameters
    ----------
    maxsize : int
        Programs kept (each holds an XLA executable); the least recently used is dropped first.

    Attributes
    ----------
    info : dict
        ``hits`` and ``misses`` counters (for tests and benchmarks; :meth:`clear` resets them).

    Notes
    -----
    Not thread-safe. An unhashable key (e.g. a prior object without ``__hash__``) builds the
    program for that call only, uncached.

    Examples
    --------
    >>> cache = ProgramCache(maxsize=2)
    >>> cache.get(("d", 3), lambda: "program for d=3")
    'program for d=3'
    >>> cache.get(("d", 3), lambda: "not built again")
    'program for d=3'
    >>> cache.info["hits"], cache.info["misses"]
    (1, 1)
    """

    def __init__(self, maxsize: int = 16) -> None:
        self.maxsize = int(maxsize)
        self._programs: OrderedDict[Hashable, Any] = OrderedDict()
        self.info = {"hits": 0, "misses": 0}

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The program for ``key``: from the cache, or ``build()`` now and kept."""
        try:
            program = self._programs.get(key)
        except TypeError:  # unhashable: no caching
            self.info["misses"] += 1
            return build()
        if program is not None:
            self.info["hits"] += 1
            self._programs.move_to_end(key)
            return program
        self.info["misses"] += 1
        program = build()
        self._programs[key] = program
        while len(self._programs) > self.maxsize:
            self._programs.popitem(last=False)
        return program

    def clear(self) -> None:
        """Drop every program and reset the counters."""
        self._programs.clear()
        self.info.update(hits=0, misses=0)

    def __len__(self) -> int:
        return len(self._programs)

    def __contains__(self, key: object) -> bool:
        try:
            return key in self._programs
        except TypeError:
            return False
