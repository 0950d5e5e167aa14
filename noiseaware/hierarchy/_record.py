r"""The record of a hierarchy of noisy counts: geographies, queries, published variances, invariants.

A :class:`NoisyHierarchy` is the shape of a Census-style noisy measurement file (NMF): a tree of
geographic units (for example states > counties > tracts), the same queries measured at every
unit (a ``"total"`` and cells that sum to it), each measurement an integer count plus discrete
Gaussian noise whose parameter :math:`\sigma^2` is published per level and query, and totals that
are published exactly (invariants; here the root level's ``"total"``, as the 2020 Census publishes
state populations). McCartan, Simko & Imai (2023), *Making differential privacy work for census
data users*, describe the published files; Cumings-Menon & Zhuravlev (2024), *Least squares
estimation for hierarchical data*, the Census Bureau's estimate from them.

It is the analyst's side of the contract for noise someone else drew: the record carries the
noisy values and everything needed to model the noise (family ``"discrete_gaussian"``, the
``variance`` of each level and query, which totals are exact, who made the release, whether it
was a seeded simulation), and it is checked field by field on construction and on load.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._core._backend import get_backend
from .._core._noise import discrete_gaussian_variance, rho_of_sigma
from .._io import JSONRecord
from ..exceptions import ReleaseFormatError

__all__ = ["SCHEMA", "NoisyHierarchy"]

#: The ``"schema"`` field of a hierarchy record.
SCHEMA = "noiseaware.hierarchy"
_SCHEMA_VERSION = 1
_FAMILY = "discrete_gaussian"
_OWNER = "NoisyHierarchy"
_KEYS = {
    "schema", "schema_version", "family", "levels", "units", "parents", "queries", "values", "variance",
    "secure", "simulation", "provenance",
}


def _bad(field: str, rule: str, got: Any) -> ReleaseFormatError:
    shown = repr(got)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return ReleaseFormatError(f"{_OWNER}: field '{field}' {rule}; got {shown}.")


@dataclass(frozen=True, eq=False)
class NoisyHierarchy(JSONRecord):
    r"""Noisy counts over a tree of geographies, with published variances and exact totals.

    Level 0 is the root level (e.g. states); level ``l`` units have a parent at level ``l - 1``.
    Every unit carries the same queries: ``queries[0] == "total"`` and the cells
    ``queries[1:]``, whose true counts sum to the total. The true counts of a unit are the sums over
    the leaf units (e.g. tracts) below it.

    Measurement model: for level ``l``, unit ``u`` and query ``q``,

    .. math:: y_{luq} = a_q^\top s_{lu} + D_{luq}, \quad
              D_{luq} \sim \mathcal N_{\mathbb Z}(0, \sigma_{lq}^2)\ \text{independent},

    with :math:`s_{lu}` the unit's true cell counts, :math:`a_q` the unit vector of cell ``q`` or
    the all-ones vector for ``"total"``, and :math:`\mathcal N_{\mathbb Z}` the discrete Gaussian
    (Canonne, Kamath & Steinke (2020), *The discrete Gaussian for differential privacy*).
    ``variance[l, q]`` is the published :math:`\sigma_{lq}^2` (the parameter, as the Census Bureau
    publishes it; the noise's exact variance is below it by at most ``2e-7`` relative for
    :math:`\sigma \ge 1`, :meth:`noise_variance`). ``variance[l, q] == 0`` marks an invariant:
    ``values[l][:, q]`` is published exactly. Invariants are allowed at the root level's
    ``"total"`` only (the state populations of the 2020 Census).

    Parameters
    ----------
    levels : sequence of str
        Level names, root first (``("state", "county", "tract")``).
    units : sequence of sequence of str
        Unit names per level (unique within a level).
    parents : sequence of array_like of int
        ``parents[l - 1][i]``: index at level ``l - 1`` of unit ``i`` of level ``l`` (``l >= 1``).
        Every unit above the leaf level has at least one child.
    queries : sequence of str
        ``("total", cell_1, ..., cell_C)`` with ``C >= 1``.
    values : sequence of array_like of int
        ``values[l]`` of shape ``(len(units[l]), len(queries))``: the published counts.
    variance : array_like of float
        Shape ``(len(levels), len(queries))``: the discrete Gaussian's :math:`\sigma^2` per level
        and query; ``0`` for an invariant.
    secure : bool
        True when the noise was drawn with an exact sampler by the publisher; False for a seeded
        simulation (:func:`~noiseaware.hierarchy.synthetic_nmf`) or a transcription.
    simulation : bool
        True for a seeded simulation (never publish it).
    provenance : str
        Who made the release and from what (free text, e.g. ``"US Census Bureau, 2020 NMF"``).

    Raises
    ------
    ReleaseFormatError
        When a field breaks its rule (the message names the field and the rule).

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware.hierarchy import NoisyHierarchy
    >>> h = NoisyHierarchy(levels=("state", "tract"), units=(("s",), ("t1", "t2")), parents=([0, 0],),
    ...                    queries=("total", "a", "b"), values=([[10, 4, 7]], [[5, 2, 3], [6, 1, 4]]),
    ...                    variance=[[0.0, 4.0, 4.0], [9.0, 9.0, 9.0]], secure=False, simulation=True,
    ...                    provenance="example")
    >>> h.n_measurements, h.invariants()
    (8, {'state': {'total': [10]}})
    """

    levels: tuple[str, ...]
    units: tuple[tuple[str, ...], ...]
    parents: tuple[np.ndarray, ...]
    queries: tuple[str, ...]
    values: tuple[np.ndarray, ...]
    variance: np.ndarray
    secure: bool
    simulation: bool
    provenance: str

    def __post_init__(self) -> None:
        levels = self._names("levels", self.levels)
        if len(levels) < 2:
            raise _bad("levels", "must name at least two levels (root and leaves)", self.levels)
        L = len(levels)
        units = tuple(self._names(f"units[{lev}]", u) for lev, u in zip(levels, _seq("units", self.units, L)))
        queries = self._names("queries", self.queries)
        if len(queries) < 2 or queries[0] != "total":
            raise _bad("queries", "must be ('total', cell, ...) with at least one cell", self.queries)
        Q = len(queries)
        parents = []
        for lev, p in enumerate(_seq("parents", self.parents, L - 1), start=1):
            arr = _int_array(f"parents[{lev - 1}]", p, (len(units[lev]),))
            n_up = len(units[lev - 1])
            if arr.size and (arr.min() < 0 or arr.max() >= n_up):
                raise _bad(f"parents[{lev - 1}]", f"must hold indices of level {levels[lev - 1]!r} in [0, {n_up})", p)
            if np.bincount(arr, minlength=n_up).min() == 0:
                raise _bad(f"parents[{lev - 1}]", f"must give every unit of level {levels[lev - 1]!r} a child", p)
            arr.setflags(write=False)
            parents.append(arr)
        vals = []
        for lev, x in enumerate(_seq("values", self.values, L)):
            arr = _int_array(f"values[{lev}]", x, (len(units[lev]), Q))
            arr.setflags(write=False)
            vals.append(arr)
        var = np.array(self.variance, dtype=np.float64, copy=True)
        if var.shape != (L, Q) or not np.all(np.isfinite(var)) or np.any(var < 0):
            raise _bad("variance", f"must be finite and >= 0 with shape ({L}, {Q})", self.variance)
        zero = var == 0
        if zero[1:].any() or zero[0, 1:].any():
            raise _bad("variance", "may be 0 (an invariant) only at the root level's 'total'", var.tolist())
        if np.any((var > 0) & (var < 1e-6)) or np.any(var > 1e30):
            raise _bad("variance", "must be 0 or in [1e-6, 1e30] (a representable discrete Gaussian)", var.tolist())
        var.setflags(write=False)
        for name in ("secure", "simulation"):
            if not isinstance(getattr(self, name), bool):
                raise _bad(name, "must be true or false", getattr(self, name))
        if self.secure and self.simulation:
            raise _bad("secure", "cannot be true for a seeded simulation ('simulation' is true)", self.secure)
        if not isinstance(self.provenance, str):
            raise _bad("provenance", "must be a string", self.provenance)
        for name, val in (("levels", levels), ("units", units), ("queries", queries), ("parents", tuple(parents)),
                          ("values", tuple(vals)), ("variance", var)):
            object.__setattr__(self, name, val)
        self._check_consistency()

    @staticmethod
    def _names(field: str, names: Any) -> tuple[str, ...]:
        if isinstance(names, str | bytes) or not isinstance(names, Sequence):
            raise _bad(field, "must be a sequence of strings", names)
        out = tuple(names)
        if not out or not all(isinstance(s, str) and s for s in out) or len(set(out)) != len(out):
            raise _bad(field, "must be non-empty, unique, non-empty strings", names)
        return out

    def _check_consistency(self) -> None:
        """Values published exactly are counts, so they must be non-negative."""
        for lev in range(len(self.levels)):
            exact = self.variance[lev] == 0
            if exact.any() and np.any(self.values[lev][:, exact] < 0):
                raise _bad(f"values[{lev}]", "must be >= 0 where published exactly (a count)", self.values[lev])

    # ------------------------------------------------------------------ views
    @property
    def n_cells(self) -> int:
        """Number of cells ``C`` (queries besides ``"total"``)."""
        return len(self.queries) - 1

    @property
    def cells(self) -> tuple[str, ...]:
        """The cell queries, ``queries[1:]``."""
        return self.queries[1:]

    @property
    def n_measurements(self) -> int:
        """Number of noisy measurements (invariants not counted)."""
        return int(sum(len(u) * int(np.sum(self.variance[lev] > 0)) for lev, u in enumerate(self.units)))

    @property
    def leaf_parents(self) -> np.ndarray:
        """For each leaf unit, the index of its root-level ancestor."""
        idx = np.arange(len(self.units[-1]))
        for p in reversed(self.parents):
            idx = p[idx]
        return idx

    def invariants(self) -> dict[str, dict[str, list[int]]]:
        """The totals published exactly: ``{level: {query: [values]}}``."""
        out: dict[str, dict[str, list[int]]] = {}
        for lev, name in enumerate(self.levels):
            for q, query in enumerate(self.queries):
                if self.variance[lev, q] == 0:
                    out.setdefault(name, {})[query] = self.values[lev][:, q].tolist()
        return out

    def root_totals(self) -> np.ndarray | None:
        """The exact root-level totals (int64), or None when they are measured with noise."""
        return None if self.variance[0, 0] > 0 else np.asarray(self.values[0][:, 0], dtype=np.int64)

    def sigma(self) -> np.ndarray:
        r""":math:`\sigma_{lq} = \sqrt{\mathrm{variance}_{lq}}`, shape ``(levels, queries)`` (0 at invariants)."""
        return np.sqrt(self.variance)

    def noise_variance(self) -> np.ndarray:
        r"""The exact variance :math:`E[D^2]` of each level's and query's discrete Gaussian noise (0 at invariants)."""
        s = self.sigma()
        out = np.zeros_like(s)
        pos = s > 0
        out[pos] = np.asarray(discrete_gaussian_variance(get_backend("numpy"), s[pos]))
        return out

    def rho(self) -> float:
        r"""The zCDP guarantee for one person (who adds 1 to one leaf cell: one cell and the total of each level).

        :math:`\rho = \sum_l \big(\rho(\sigma_{l,\mathrm{total}}) + \max_c \rho(\sigma_{l,c})\big)`,
        :math:`\rho(\sigma) = 1/(2\sigma^2)` (``rho_of_sigma`` of the noise-law registry; zCDP
        composes additively, Bun & Steinke (2016), *Concentrated differential privacy*). Invariants
        are not private and are left out (publishing them is a disclosure the guarantee does not cover).
        """
        total = 0.0
        for lev in range(len(self.levels)):
            s = self.sigma()[lev]
            if s[0] > 0:
                total += rho_of_sigma(1.0, float(s[0]))
            total += max(rho_of_sigma(1.0, float(x)) for x in s[1:])
        return total

    # ------------------------------------------------------------ serialization
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping (``{"schema": "noiseaware.hierarchy", "schema_version": 1, "family": ...}``)."""
        return {
            "schema": SCHEMA,
            "schema_version": _SCHEMA_VERSION,
            "family": _FAMILY,
            "levels": list(self.levels),
            "units": [list(u) for u in self.units],
            "parents": [p.tolist() for p in self.parents],
            "queries": list(self.queries),
            "values": [x.tolist() for x in self.values],
            "variance": self.variance.tolist(),
            "secure": self.secure,
            "simulation": self.simulation,
            "provenance": self.provenance,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NoisyHierarchy:
        """Rebuild and check a record from :meth:`to_dict`'s mapping; unknown or missing keys are refused."""
        if not isinstance(data, Mapping):
            raise _bad("(record)", "must be a JSON object", type(data).__name__)
        keys = set(data)
        if keys != _KEYS:
            raise _bad("(keys)", f"must be exactly {sorted(_KEYS)}", sorted(keys ^ _KEYS))
        if data["schema"] != SCHEMA or data["schema_version"] != _SCHEMA_VERSION:
            got = (data["schema"], data["schema_version"])
            raise _bad("schema", f"must be {SCHEMA!r} version {_SCHEMA_VERSION}", got)
        if data["family"] != _FAMILY:
            raise _bad("family", f"must be {_FAMILY!r} (the noise law modelled here)", data["family"])
        return cls(
            levels=data["levels"], units=data["units"], parents=data["parents"], queries=data["queries"],
            values=data["values"], variance=data["variance"], secure=data["secure"],
            simulation=data["simulation"], provenance=data["provenance"],
        )

    def to_json(self, path: str | os.PathLike[str] | None = None, *, overwrite: bool = False) -> str:
        """JSON text of :meth:`to_dict`; written atomically to ``path`` when given."""
        text = json.dumps(self.to_dict())
        if path is not None:
            from .._io import atomic_write_text

            atomic_write_text(path, text + "\n", overwrite=overwrite, owner="NoisyHierarchy.to_json")
        return text

    @classmethod
    def from_json(cls, source: str | os.PathLike[str]) -> NoisyHierarchy:
        """Read a record from a JSON file or from JSON text, and check it.

        Path or text, and the bounds on what is read, as in :meth:`noiseaware.Release.from_json`.
        """
        from .._io import load_json_source

        return cls.from_dict(load_json_source(source, owner="NoisyHierarchy.from_json"))


def _seq(field: str, x: Any, n: int) -> tuple[Any, ...]:
    if isinstance(x, str | bytes) or not isinstance(x, Sequence) or len(x) != n:
        raise _bad(field, f"must be a sequence of {n} entries (one per level)", x)
    return tuple(x)


def _int_array(field: str, x: Any, shape: tuple[int, ...]) -> np.ndarray:
    try:
        arr = np.array(x, copy=True)
    except (TypeError, ValueError) as err:
        raise _bad(field, f"must be an integer array of shape {shape}", x) from err
    if arr.shape != shape:
        raise _bad(field, f"must have shape {shape}", arr.shape)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        arr = arr.astype(np.float64)
        if np.any(np.abs(arr) > v.INT_BOUND):
            raise _bad(field, f"must be integers of magnitude <= {v.INT_BOUND}", x)
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu" or (arr.size and np.max(np.abs(arr.astype(np.float64))) > v.INT_BOUND):
        raise _bad(field, f"must hold integers of magnitude <= {v.INT_BOUND}", x)
    return arr.astype(np.int64)
