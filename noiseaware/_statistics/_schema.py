"""The schema types: what a release of one statistic may hold, its field types and the rules every family shares.

A schema states each metadata field once, with a field type that knows its range (:class:`Int`,
:class:`Float`, :class:`OneOf`, :class:`ListOf`, :class:`Record`), or names the statistic's typed
declaration that states them (``declaration=``, a frozen record with ``REQUIRED``, ``OPTIONAL`` and
``from_dict``, such as :class:`noiseaware._core._regression_release.RegressionMetadata`);
:meth:`StatisticSchema.validate` checks them all in one loop (:func:`noiseaware._core._fields.read_fields`).
The field types live in :mod:`noiseaware._core._fields`, below the readers that use them, and are
re-exported here; their messages come from :mod:`noiseaware._validation` (one message shape,
``"Release: <field> <rule>; got <field>=<value>."``); every failure is a
:class:`~noiseaware.exceptions.ReleaseFormatError` naming the field and the rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .._core._fields import (
    ANY_LIST,
    BOOL,
    COMMON_OPTIONAL,
    FLOAT,
    FLOAT_LIST,
    INT,
    INT_LIST,
    NAMES,
    NONNEGATIVE,
    OPEN_UNIT,
    POSITIVE,
    STR,
    STR_LIST,
    FieldType,
    Float,
    Instance,
    Int,
    ListOf,
    OneOf,
    Record,
    read_fields,
)
from .._core._fields import fail as _fail
from .._validation import owned
from ._rules import IMPLAUSIBLE_LOG2, noise_reach

#: The schema type, and the field types of :mod:`noiseaware._core._fields` that the family modules use.
__all__ = [
    "ANY_LIST",
    "BOOL",
    "COMMON_OPTIONAL",
    "FLOAT",
    "FLOAT_LIST",
    "FieldType",
    "Float",
    "INT",
    "INT_LIST",
    "Instance",
    "Int",
    "ListOf",
    "NAMES",
    "NONNEGATIVE",
    "OPEN_UNIT",
    "OneOf",
    "POSITIVE",
    "Record",
    "STR",
    "STR_LIST",
    "StatisticSchema",
    "read_fields",
]

#: Relative tolerance for floats that the loader recomputes from other fields.
_RTOL = 1e-9

#: The text put in ``metadata["simulation"]`` of a release drawn with a seeded numpy Generator.
SIMULATION_NOTE = (
    "SIMULATION: noise drawn from a seeded numpy Generator; replaying the seed removes the noise exactly. "
    "Not a private release: never publish it."
)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_RTOL, abs_tol=0.0)


@dataclass(frozen=True)
class StatisticSchema:
    """What a release of one statistic may hold.

    Each metadata field is stated once, with its type and range (:class:`Int`, :class:`Float`,
    :class:`ListOf`, ...); :meth:`validate` checks them all and hands their typed values to
    ``check``, which holds only the rules between fields.

    Parameters
    ----------
    name : str
        The statistic's name (``Release.statistic``).
    families : tuple of str
        Mechanism families the statistic can be released with.
    compositions : tuple of str
        Allowed ``Release.composition`` values (default: one joint release).
    required : mapping of str to field type
        Metadata keys that must be present, with their types.
    optional : mapping of str to field type
        Metadata keys that may be present. Any other key is refused.
    min_n : int or None
        The smallest ``Release.n`` the statistic allows; None when ``n`` may be absent.
    check : callable, optional
        ``check(release, meta)``, ``meta`` the typed metadata values (the declaration's record when
        ``declaration`` is given): the cross-field rules (sensitivity, shapes, labels, ...); raises
        :class:`ReleaseFormatError`.
    components : tuple of str
        Statistics that may appear in ``Release.components``.
    sensitivity : str
        The sensitivity rule under :data:`NEIGHBOURS`, for the docs.
    declaration : type, optional
        The statistic's typed metadata record: its ``REQUIRED`` and ``OPTIONAL`` field types become
        ``required`` and ``optional`` (which must then be left empty) and :meth:`validate` reads the
        metadata with its ``from_dict``, so that the loader's checks are the declaration's.
    """

    name: str
    families: tuple[str, ...]
    compositions: tuple[str, ...] = ("joint",)
    required: Mapping[str, FieldType] = field(default_factory=dict)
    optional: Mapping[str, FieldType] = field(default_factory=dict)
    min_n: int | None = 1
    check: Callable[[Any, Any], None] | None = None
    components: tuple[str, ...] = ()
    sensitivity: str = ""
    declaration: Any = None

    def __post_init__(self) -> None:
        if self.declaration is not None:
            if self.required or self.optional:
                raise TypeError(
                    f"StatisticSchema {self.name!r}: fields in declaration= or in required=/optional=, not both"
                )
            object.__setattr__(self, "required", MappingProxyType(dict(self.declaration.REQUIRED)))
            object.__setattr__(self, "optional", MappingProxyType(dict(self.declaration.OPTIONAL)))

    @owned("Release")
    def validate(self, release: Any) -> None:
        """Raise :class:`ReleaseFormatError` unless ``release`` satisfies this schema."""
        fam = release.mechanism.family
        if fam not in self.families:
            _fail("mechanism.family", f"must be one of {list(self.families)} for statistic {self.name!r}", fam)
        if release.composition not in self.compositions:
            _fail(
                "composition",
                f"must be one of {list(self.compositions)} for statistic {self.name!r} "
                "(the composition rule is fixed by the statistic, not chosen by the file)",
                release.composition,
            )
        if self.min_n is not None:
            if release.n is None:
                _fail("n", f"must be given for statistic {self.name!r}", None)
            Int(minimum=self.min_n)("n", release.n)
        meta: Any
        if self.declaration is not None:
            meta = self.declaration.from_dict(release.metadata)
        else:
            meta = MappingProxyType(read_fields(release.metadata, self.required, self.optional, self.name))
        for i, c in enumerate(release.components):
            if c.statistic not in self.components:
                _fail(
                    f"components[{i}].statistic",
                    f"must be one of {list(self.components) or 'none'} in a {self.name!r} release",
                    c.statistic,
                )
        if self.check is not None:
            self.check(release, meta)


# ----------------------------------------------------------------------------- shared rules
@owned("Release")
def _check_sensitivity(release: Any, expected: float, rule: str) -> None:
    got = float(release.mechanism.sensitivity)
    if not _close(got, expected):
        _fail("mechanism.sensitivity", f"must be {rule} = {expected!r} under substitution neighbours", got)


@owned("Release")
def _check_shape(release: Any, shape: tuple[int, ...], what: str) -> None:
    if release.values.shape != shape:
        _fail("shape", f"must be {list(shape)} ({what})", list(release.values.shape))


@owned("Release")
def _check_integer_values(release: Any, what: str) -> None:
    if release.values.dtype.kind != "i":
        _fail("dtype", f"must be int64 for {what}", str(release.values.dtype))


@owned("Release")
def _check_labels(release: Any, want: list[list[str]], rule: str, where: str = "labels") -> None:
    got = [list(lab) for lab in release.labels]
    if got != want:
        _fail(where, rule, got)


@owned("Release")
def _check_columns(meta: Mapping[str, Any], count: int) -> list[str]:
    cols: list[str] = meta["columns"]
    if len(cols) != count:
        _fail("metadata.columns", f"must name {count} column(s)", cols)
    return cols


@owned("Release")
def _check_epsilon(meta: Mapping[str, Any], key: str, epsilon: float | None, whose: str) -> None:
    """``metadata.<key>`` states the epsilon of ``whose`` (a mechanism or a component)."""
    if epsilon is None or not _close(epsilon, meta[key]):
        _fail(f"metadata.{key}", f"must equal {whose}'s epsilon ({epsilon!r})", meta[key])


def _upper_pairs(p: int) -> list[list[int]]:
    """The column pairs ``[j, k]``, ``j < k``, of ``p`` columns in row-major order."""
    iu, ju = np.triu_indices(p, 1)
    return [[int(i), int(j)] for i, j in zip(iu, ju, strict=True)]


@owned("Release")
def _check_pairs(release: Any, meta: Mapping[str, Any]) -> None:
    """The :data:`_PAIR_FIELDS` of a pairwise statistic agree with each other, the labels and the mechanism."""
    p = meta["p"]
    cols = _check_columns(meta, p)
    _check_shape(release, (p * (p - 1) // 2,), f"one value per column pair, p = {p}")
    want = _upper_pairs(p)
    if meta["pairs"] != want:
        _fail(
            "metadata.pairs",
            f"must list every column pair j < k of p = {p} columns once, in row-major order",
            meta["pairs"],
        )
    labels = [[cols[i], cols[j]] for i, j in want]
    _check_labels(release, labels, "must be the column names of each pair, [columns[j], columns[k]]")
    _check_epsilon(meta, "epsilon_per_pair", release.mechanism.guarantee().epsilon, "the mechanism")


@owned("Release")
def _check_reach(release: Any, lower: float, upper: float | None) -> None:
    """Values must lie within the noise's reach ``T`` of the true values' range ``[lower, upper]``."""
    t = noise_reach(release.mechanism)
    if t is None:
        return
    vals = release.values
    lo = lower - t
    hi = math.inf if upper is None else upper + t
    bad = (vals < lo) | (vals > hi)
    if np.any(bad):
        _fail(
            "values",
            f"must lie in [{lo:g}, {hi:g}]: the true values lie in [{lower:g}, {hi - t:g}] and the "
            f"{release.mechanism.family} noise exceeds {t:g} with probability below 2**-{IMPLAUSIBLE_LOG2}",
            vals[bad].ravel()[:5].tolist(),
        )


#: The fields of a pairwise statistic (one value per column pair, each with ``epsilon_per_pair``).
_PAIR_FIELDS: dict[str, FieldType] = {
    "columns": NAMES,
    "p": Int(minimum=2),
    "pairs": ListOf(ListOf(INT, length=2)),
    "epsilon_per_pair": POSITIVE,
}
