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
was a seeded simulation), and it is checked field by field on construction and on load, with the
field types and the one message shape of :class:`noiseaware.Release`'s metadata
(:mod:`noiseaware._core._fields`, owner ``"NoisyHierarchy"``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _external
from .. import _validation as v
from .._core._backend import get_backend
from .._core._fields import BOOL, NAME, STR, Array, FieldType, Float, Int, ListOf, OneOf, fail, read_record
from .._core._noise import discrete_gaussian_variance, rho_of_sigma
from .._io import JSONRecord
from .._statistics import IMPLAUSIBLE_LOG2
from .._validation import owned

__all__ = ["SCHEMA", "NoisyHierarchy"]

#: The ``"schema"`` field of a hierarchy record.
SCHEMA = "noiseaware.hierarchy"
_SCHEMA_VERSION = 1
_FAMILY = "discrete_gaussian"
_OWNER = "NoisyHierarchy"
#: The largest published variance (a discrete Gaussian's sigma**2 that float64 represents with room to spare).
_MAX_VARIANCE = 1e30
#: The record's fields and their types (the structure between them: :meth:`NoisyHierarchy._check_structure`).
_FIELDS: dict[str, FieldType] = {
    "levels": ListOf(NAME, min_length=2, unique=True),
    "units": ListOf(ListOf(NAME, min_length=1, unique=True)),
    "parents": ListOf(Array(Int(minimum=0), ndim=1)),
    "queries": ListOf(NAME, min_length=2, unique=True),
    "values": ListOf(Array(Int(), ndim=2)),
    "variance": Array(Float(ge=0.0, le=_MAX_VARIANCE), ndim=2),
    "secure": BOOL,
    "simulation": BOOL,
    "provenance": STR,
}
#: The header of the JSON record (:meth:`NoisyHierarchy.to_dict`), before its fields.
_HEADER: dict[str, FieldType] = {
    "schema": OneOf((SCHEMA,)),
    "schema_version": Int(minimum=_SCHEMA_VERSION, maximum=_SCHEMA_VERSION),
    "family": OneOf((_FAMILY,)),
}
_WHAT = f"schema {SCHEMA!r}"


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
        True only when noiseaware drew the noise with its exact samplers (``provenance``
        ``"noiseaware"``), the rule of :class:`noiseaware.Release`; False for a file made elsewhere
        (an agency's NMF: its law is stated, not drawn here), a transcription, or a seeded
        simulation (:func:`~noiseaware.hierarchy.synthetic_nmf`).
    simulation : bool
        True for a seeded simulation (never publish it): :meth:`to_json` needs
        ``allow_simulation=True`` and :meth:`from_json` warns, as for a release.
    provenance : str
        Who made the release and from what (e.g. ``"US Census Bureau, 2020 NMF"``): printable text
        of 1 to 160 characters, as a release's.

    Raises
    ------
    ReleaseFormatError
        When a field breaks its rule (the message names the field and the rule): names, shapes,
        integer values (exact integers in ``[-2**62, 2**62]``, no bools, no complex numbers, no
        ragged rows), variances, flags, provenance, and counts that do not sum up the tree within
        the reach of their noise (:meth:`_check_consistency`).

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

    @owned(_OWNER)
    def __post_init__(self) -> None:
        typed = read_record({name: getattr(self, name) for name in _FIELDS}, _FIELDS, {}, what=_WHAT)
        typed["levels"], typed["queries"] = tuple(typed["levels"]), tuple(typed["queries"])
        typed["units"] = tuple(tuple(u) for u in typed["units"])
        typed["parents"], typed["values"] = tuple(typed["parents"]), tuple(typed["values"])
        self._check_structure(typed)
        _external.check_record_provenance(typed["provenance"])
        _external.check_secure_maker(typed["provenance"], typed["secure"])
        for arr in (typed["variance"], *typed["parents"], *typed["values"]):
            arr.setflags(write=False)
        for name, val in typed.items():
            object.__setattr__(self, name, val)
        self._check_consistency()

    @staticmethod
    @owned(_OWNER)
    def _check_structure(typed: Mapping[str, Any]) -> None:
        """The rules between the typed fields: one entry per level, the tree, the shapes, where invariants sit."""
        levels, units, queries = typed["levels"], typed["units"], typed["queries"]
        L, Q = len(levels), len(queries)
        for name, count in (("units", L), ("parents", L - 1), ("values", L)):
            if len(typed[name]) != count:
                fail(name, f"must hold {count} entries (one per level{' below the root' * (name == 'parents')})",
                     typed[name])
        if queries[0] != "total":
            fail("queries", "must be ('total', cell, ...) with at least one cell", list(queries))
        for lev, arr in enumerate(typed["parents"], start=1):
            name, n_up = f"parents[{lev - 1}]", len(units[lev - 1])
            if arr.shape != (len(units[lev]),):
                fail(name, f"must have shape {(len(units[lev]),)} (one parent per unit of level {levels[lev]!r})",
                     arr.shape)
            if arr.max(initial=0) >= n_up:
                fail(name, f"must hold indices of level {levels[lev - 1]!r} in [0, {n_up})", arr.tolist())
            if np.min(np.bincount(arr, minlength=n_up)) == 0:
                fail(name, f"must give every unit of level {levels[lev - 1]!r} a child", arr.tolist())
        for lev, arr in enumerate(typed["values"]):
            if arr.shape != (len(units[lev]), Q):
                fail(f"values[{lev}]", f"must have shape {(len(units[lev]), Q)}", arr.shape)
        var = typed["variance"]
        if var.shape != (L, Q):
            fail("variance", f"must have shape ({L}, {Q}) (levels, queries)", var.shape)
        zero = var == 0
        if zero[1:].any() or zero[0, 1:].any():
            fail("variance", "may be 0 (an invariant) only at the root level's 'total'", var.tolist())
        if np.any((var > 0) & (var < 1e-6)):
            fail("variance", f"must be 0 or in [1e-6, {_MAX_VARIANCE:g}] (a representable discrete Gaussian)",
                 var.tolist())
        if typed["secure"] and typed["simulation"]:
            fail("secure", "cannot be true for a seeded simulation ('simulation' is true)", True)

    @owned(_OWNER)
    def _check_consistency(self) -> None:
        r"""The values are counts that sum up the tree, each within the reach of its noise.

        The true counts are non-negative integers; every unit's cells sum to its total, and every
        parent's count of each query is the sum of its children's. So, with :math:`R(V)` the
        ``2**-64`` reach of discrete Gaussian noise of total variance :math:`V` (a sum of
        independent discrete Gaussians is sub-Gaussian with the sum of their :math:`\sigma^2`,
        Canonne, Kamath & Steinke (2020), *The discrete Gaussian for differential privacy*;
        :math:`R(V) = \lceil\sqrt{2 \cdot 64 \log 2 \cdot V}\rceil + 1`), a record is refused when

        * a value published exactly is negative, or a noisy value lies below :math:`-R(\sigma^2)`;
        * under an exact root total :math:`T`, a value of its subtree lies above :math:`T + R(\sigma^2)`;
        * a unit's cells minus its total, or the sum of a parent's children minus the parent, for any
          query, lies further than :math:`R(V)` from 0, :math:`V` the variance of that difference's
          noise (0 when all its terms are exact: then it must be 0).

        A true record passes each check but with probability below ``2**-63``; a state total that
        disagrees with its counties (which made :func:`~noiseaware.hierarchy.gls` return negative
        tract totals) does not.
        """
        var, L, Q = self.variance, len(self.levels), len(self.queries)
        kids = [np.bincount(p, minlength=len(u)) for p, u in zip(self.parents, self.units[:-1], strict=True)]
        biggest = max(int(np.abs(y).max(initial=0)) for y in self.values)
        terms = max(Q, *(int(np.max(k)) + 1 for k in kids))
        exact_int: Any = object if biggest * terms >= 2**62 else np.int64  # int64 sums when they cannot overflow
        ys = [y.astype(exact_int) for y in self.values]
        for lev in range(L):
            y, s2 = self.values[lev], var[lev]
            exact = s2 == 0
            if exact.any() and np.any(y[:, exact] < 0):
                fail(f"values[{lev}]", "must be >= 0 where published exactly (a count)", y.tolist())
            low = -_reach(s2)
            bad = ~exact[None, :] & (y < low[None, :])
            if bad.any():
                u, q = map(int, np.argwhere(bad)[0])
                fail(f"values[{lev}][{u}][{q}]", f"must be >= {int(low[q])}: a count (>= 0) plus discrete "
                     f"Gaussian noise of variance {s2[q]:g}, below {int(low[q])} with probability below "
                     f"2**-{IMPLAUSIBLE_LOG2}", int(y[u, q]))
            _check_zero(f"values[{lev}]", "the sum of its cells minus its total",
                        ys[lev][:, 1:].sum(axis=1) - ys[lev][:, 0], np.full(len(y), float(s2.sum())), exact_int)
        root = self.root_totals()
        anc = np.arange(len(self.units[0]))
        for lev in range(1, L):
            anc = anc[self.parents[lev - 1]]
            y, s2 = self.values[lev], var[lev]
            if root is not None:
                top = root[anc][:, None] + _reach(s2)[None, :]
                bad = y > top
                if bad.any():
                    u, q = map(int, np.argwhere(bad)[0])
                    fail(f"values[{lev}][{u}][{q}]", f"must be <= {int(top[u, q])}: a count below the exact "
                         f"total {int(root[anc[u]])} of its root unit, plus noise of variance {s2[q]:g}",
                         int(y[u, q]))
            n_up = len(self.units[lev - 1])
            sums = np.zeros((n_up, Q), dtype=exact_int)
            if exact_int is object:
                sums[:] = 0
            np.add.at(sums, self.parents[lev - 1], ys[lev])
            diff = sums - ys[lev - 1]
            for q, query in enumerate(self.queries):
                _check_zero(f"values[{lev - 1}]", f"its children's {query!r} (level {self.levels[lev]!r}) summed "
                            f"minus its own {query!r}", diff[:, q], kids[lev - 1] * var[lev, q] + var[lev - 1, q],
                            exact_int)

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

    def root_subtrees(self) -> list[tuple[np.ndarray, ...]]:
        """For each root unit, the indices of its subtree's units at every level, in the release's order.

        ``root_subtrees()[s][l]`` (int64, increasing) lists the units of level ``l`` below root unit
        ``s`` (``[s]`` at level 0); the lists of one level partition its units. They map the parts
        of :meth:`split_by_root` back onto the whole file.
        """
        out: list[list[np.ndarray]] = [[np.array([s], dtype=np.int64)] for s in range(len(self.units[0]))]
        anc = np.arange(len(self.units[0]))
        for p in self.parents:
            anc = anc[p]
            order = np.argsort(anc, kind="stable")
            bounds = np.searchsorted(anc[order], np.arange(len(self.units[0]) + 1))
            for s, part in enumerate(out):
                part.append(order[bounds[s]:bounds[s + 1]].astype(np.int64))
        return [tuple(part) for part in out]

    @owned("NoisyHierarchy.split_by_root")
    def split_by_root(self) -> list[NoisyHierarchy]:
        r"""One record per root unit: its subtree, with the same levels, queries and variances.

        Part ``s`` holds root unit ``s`` and every unit below it, in the release's order within each
        level, its parents re-indexed into the part and its values the release's rows; levels,
        queries, variances, flags and provenance are the release's. Each part is checked like any
        record.

        **Why the split is exact.** The root totals :math:`T_s` are published exactly and every
        noisy measurement is of one unit, so it lies in exactly one part, with independent noise.
        The likelihood therefore factorizes over root units,
        :math:`p(y \mid n) = \prod_s p(y_s \mid n_s)`, and the constraint
        :math:`\sum_{t \in s, c} n_{tc} = T_s` binds each part alone. Under a prior that factorizes
        over root units too (``prior="uniform"`` of :func:`~noiseaware.hierarchy.fit`), the
        posterior of the whole file is the product of the parts' posteriors,
        :math:`p(n \mid y, T) = \prod_s p(n_s \mid y_s, T_s)`: fitting the parts apart and
        stitching their draws side by side (:func:`noiseaware.distributed.fit_hierarchy`) samples
        the whole file's posterior. A prior with parameters shared across root units
        (``prior="hierarchical"``: :math:`\sigma_{\text{county}}`, :math:`\sigma_{\text{tract}}`)
        does not factorize: fitting the parts apart gives each root unit its own copy of them, an
        approximation (good when every root unit has many counties and tracts to learn them from).

        Returns
        -------
        list of NoisyHierarchy
            One per root unit, in the order of ``units[0]``.

        Raises
        ------
        NoiseawareValueError
            If the root totals are not published exactly: the parts then share no constraint, but
            :func:`~noiseaware.hierarchy.fit` needs exact root totals to allocate, so the parts could
            not be fitted either.

        Examples
        --------
        >>> from noiseaware.hierarchy import synthetic_nmf
        >>> rel = synthetic_nmf(2, 3, 4, rng=0).release
        >>> parts = rel.split_by_root()
        >>> [p.units[0] for p in parts], sum(p.n_measurements for p in parts) == rel.n_measurements
        ([('s0',), ('s1',)], True)
        """
        if self.root_totals() is None:
            v.refuse("variance[0][0]",
                   "must be 0: the root level's totals published exactly (so the parts are independent given them)",
                   float(self.variance[0, 0]), "Fit the whole file with hierarchy.fit instead.")
        parts = []
        for idx in self.root_subtrees():
            parents = []
            for lev in range(1, len(self.levels)):
                local = np.full(len(self.units[lev - 1]), -1, dtype=np.int64)
                local[idx[lev - 1]] = np.arange(len(idx[lev - 1]))
                parents.append(local[self.parents[lev - 1][idx[lev]]])
            parts.append(NoisyHierarchy(
                levels=self.levels, units=tuple(tuple(self.units[lev][i] for i in ix) for lev, ix in enumerate(idx)),
                parents=tuple(parents), queries=self.queries,
                values=tuple(self.values[lev][ix] for lev, ix in enumerate(idx)), variance=self.variance,
                secure=self.secure, simulation=self.simulation, provenance=self.provenance,
            ))
        return parts

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

    @owned("NoisyHierarchy.rho")
    def rho(self, neighbours: str = "substitution") -> float:
        r"""The zCDP guarantee of the noisy measurements, under substitution neighbours (the package's relation).

        **Neighbours** (``neighbours="substitution"``, the default, the relation every statistic of the
        package is stated under; ``docs/security.md``): two data sets with the same number of persons
        that differ in one person's record, that is one
        person moved from leaf ``t1``, cell ``c1`` to leaf ``t2``, cell ``c2``. At every level where
        the two leaves' ancestors differ, two units' totals change by 1, unit ``u1``'s cell ``c1``
        and unit ``u2``'s cell ``c2`` by 1; where they share the unit, only its two cells change (nothing
        if ``c1 = c2``). With :math:`\rho_{lq} = 1/(2\sigma_{lq}^2)` (``rho_of_sigma`` of the noise-law
        registry; 0 at invariants) and zCDP composing additively over the independent measurements
        (Bun & Steinke (2016), *Concentrated differential privacy: simplifications, extensions, and
        lower bounds*), the worst case moves the person between leaves whose ancestors differ from
        level ``d`` down, ``d`` the shallowest level at which two units of the tree can differ (0
        when there are two root units):

        .. math:: \rho = \sum_{l \ge d} 2\rho_{l,\mathrm{total}} + \max\Big(\max_{c_1 \ne c_2}
                  \big(B_{c_1} + B_{c_2}\big),\ \max_c 2\sum_{l \ge d}\rho_{lc}\Big),
                  \qquad B_c = \sum_l \rho_{lc}.

        ``neighbours="add_remove"``: one person added or removed, who adds 1 to one leaf cell,
        so to that cell and the total of its unit at every level:
        :math:`\rho = \sum_l \rho_{l,\mathrm{total}} + \max_c B_c`, about half the substitution
        figure (0.486 against 0.972 for the default :func:`~noiseaware.hierarchy.synthetic_nmf` file).

        Invariants are not private and are left out (publishing them is a disclosure the guarantee
        does not cover; a person moved between root units changes them).

        Parameters
        ----------
        neighbours : {"substitution", "add_remove"}
            The neighbour relation.

        Returns
        -------
        float
            :math:`\rho` (0.0 when no neighbour changes a noisy measurement).

        Examples
        --------
        >>> from noiseaware.hierarchy import synthetic_nmf
        >>> rel = synthetic_nmf(2, 3, 4, rng=0).release
        >>> round(rel.rho(), 4), round(rel.rho("add_remove"), 4)
        (0.9722, 0.4861)
        """
        v.choice("neighbours", neighbours, ("substitution", "add_remove"))
        sig = self.sigma()
        r = np.array([[rho_of_sigma(1.0, float(x)) if x > 0 else 0.0 for x in row] for row in sig])
        cells = r[:, 1:]
        per_cell = cells.sum(axis=0)  # B_c
        if neighbours == "add_remove":
            return float(r[:, 0].sum() + per_cell.max())
        L = len(self.levels)
        if len(self.units[0]) >= 2:
            d = 0
        else:
            d = next((lev for lev in range(1, L) if np.max(np.bincount(self.parents[lev - 1])) >= 2), L)
        totals = 2.0 * float(r[d:, 0].sum())
        same_cell = 2.0 * float(cells[d:].sum(axis=0).max()) if d < L else 0.0
        two_cells = float(np.sort(per_cell)[-2:].sum()) if per_cell.size >= 2 else 0.0
        return totals + max(same_cell, two_cells)

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
    @owned(_OWNER)
    def from_dict(cls, data: Mapping[str, Any]) -> NoisyHierarchy:
        """Rebuild and check a record from :meth:`to_dict`'s mapping; unknown or missing keys are refused.

        The header (``schema``, ``schema_version``, ``family``) and every field are read by their field
        types (the same rules as a :class:`noiseaware.Release`'s metadata, with the same message shape),
        then the record is built and checked as on construction.
        """
        typed = read_record(data, {**_HEADER, **_FIELDS}, {}, what=_WHAT)
        return cls(**{name: typed[name] for name in _FIELDS})

    @owned("NoisyHierarchy.to_json")
    def to_json(
        self, path: str | os.PathLike[str] | None = None, *, overwrite: bool = False, allow_simulation: bool = False
    ) -> str:
        """JSON text of :meth:`to_dict`; written atomically to ``path`` when given.

        Parameters
        ----------
        path : path-like, optional
            Where to write (atomically, as :meth:`noiseaware.Release.to_json` writes).
        overwrite : bool
            Replace an existing file at ``path``.
        allow_simulation : bool
            Required to serialize a simulation (``simulation=True``, e.g. a
            :func:`~noiseaware.hierarchy.synthetic_nmf` file), which then warns with a
            :class:`~noiseaware.exceptions.PrivacyWarning`: the rule of
            :meth:`noiseaware.Release.to_json`.

        Returns
        -------
        str
            The JSON text.

        Raises
        ------
        NoiseawareValueError
            A simulation without ``allow_simulation=True``; a ``path`` that is not a regular file.
        OutputExistsError
            ``path`` exists and ``overwrite`` is False.
        """
        from ..release import check_simulation_write

        check_simulation_write(self.simulation, allow_simulation,
                               "or transcribe a published file (simulation=False)")
        text = json.dumps(self.to_dict())
        if path is not None:
            from .._io import atomic_write_text

            atomic_write_text(path, text + "\n", overwrite=overwrite)
        return text

    @classmethod
    @owned("NoisyHierarchy.from_json")
    def from_json(cls, source: str | os.PathLike[str]) -> NoisyHierarchy:
        """Read a record from a JSON file or from JSON text, and check it.

        Path or text, and the bounds on what is read, as in :meth:`noiseaware.Release.from_json`;
        a simulation warns with a :class:`~noiseaware.exceptions.PrivacyWarning`, as there.
        """
        from .._io import load_json_source
        from ..release import warn_simulation_read

        rec = cls.from_dict(load_json_source(source))
        if rec.simulation:
            warn_simulation_read()
        return rec


#: ``2 * 64 * log(2)``: ``R(V) = ceil(sqrt(_TAIL * V)) + 1`` bounds a discrete Gaussian sum's noise (``_reach``).
_TAIL = 2.0 * IMPLAUSIBLE_LOG2 * math.log(2.0)


def _reach(variance: Any) -> np.ndarray:
    """The ``2**-64`` reach of discrete Gaussian noise of total variance ``variance`` (0 where it is 0), float64."""
    var = np.asarray(variance, dtype=np.float64)
    return np.where(var > 0, np.ceil(np.sqrt(_TAIL * var)) + 1.0, 0.0)


@owned(_OWNER)
def _check_zero(field: str, what: str, diff: np.ndarray, variance: np.ndarray, exact_int: Any) -> None:
    """Refuse a difference of counts, 0 in the true counts, beyond the reach of its noise (one variance per row)."""
    reach = _reach(variance)
    if exact_int is object:
        bound: np.ndarray = np.array([int(r) for r in reach], dtype=object)
        bad = np.asarray(np.abs(diff) > bound, dtype=bool)
    else:
        bad = np.abs(diff) > np.minimum(reach, 2.0**62).astype(np.int64)
    if bad.any():
        u = int(np.argmax(bad))
        fail(f"{field}[{u}]", f"must be consistent: {what} is 0 in the true counts, and its noise exceeds "
             f"{int(reach[u])} in magnitude with probability below 2**-{IMPLAUSIBLE_LOG2 - 1}", int(diff[u]))
