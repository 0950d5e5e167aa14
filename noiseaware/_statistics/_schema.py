"""The schema types: what a release of one statistic may hold, its field types and the rules every family shares.

A schema states each metadata field once, with a field type that knows its range (:class:`Int`,
:class:`Float`, :class:`OneOf`, :class:`ListOf`, :class:`Record`); :meth:`StatisticSchema.validate`
checks them all in one loop. Field types and messages come from :mod:`noiseaware._validation` (one
message shape, ``"Release: <field> <rule>; got <field>=<value>."``); every failure is a
:class:`~noiseaware.exceptions.ReleaseFormatError` naming the field and the rule.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NoReturn

import numpy as np

from .. import _validation as v
from ..exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError
from ._rules import IMPLAUSIBLE_LOG2, noise_reach

__all__ = ["FieldType", "StatisticSchema"]

#: Relative tolerance for floats that the loader recomputes from other fields.
_RTOL = 1e-9

#: The text put in ``metadata["simulation"]`` of a release drawn with a seeded numpy Generator.
SIMULATION_NOTE = (
    "SIMULATION: noise drawn from a seeded numpy Generator; replaying the seed removes the noise exactly. "
    "Not a private release: never publish it."
)

_OWNER = "Release"
#: Longest shown value in a message (a release can hold long lists).
_SHOWN = 120


def _fail(field_name: str, rule: str, value: Any) -> NoReturn:
    raise ReleaseFormatError(v.message(_OWNER, field_name, rule, value, limit=_SHOWN))


@contextlib.contextmanager
def _as_format_error() -> Iterator[None]:
    """A failed argument check of :mod:`noiseaware._validation` is a malformed release here."""
    try:
        yield
    except ReleaseFormatError:
        raise
    except (NoiseawareValueError, NoiseawareTypeError) as exc:
        raise ReleaseFormatError(str(exc)) from None


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_RTOL, abs_tol=0.0)


# ----------------------------------------------------------------------------- field types
#: A field type: takes the JSON path and the value, returns the typed value or raises.
FieldType = Callable[[str, Any], Any]


@dataclass(frozen=True)
class Int:
    """An integer (a float such as ``3.0`` is refused, as is a bool) in ``[minimum, maximum]``."""

    minimum: int | None = None
    maximum: int | None = None

    def __call__(self, name: str, x: Any) -> int:
        with _as_format_error():
            return v.integer(_OWNER, name, x, minimum=self.minimum, maximum=self.maximum, integral_floats=False)


@dataclass(frozen=True)
class Float:
    """A finite number, bounded below by ``gt`` (open) or ``ge`` (closed), above by ``lt`` or ``le``.

    Examples
    --------
    >>> Float(gt=0.0, le=1.0)("metadata.rate", 1)
    1.0
    >>> Float(gt=0.0, le=1.0)("metadata.rate", 1.5)
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.ReleaseFormatError: Release: metadata.rate must be in (0, 1]; got metadata.rate=1.5.
    """

    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None

    @property
    def rule(self) -> str:
        """The bounds in words: ``"> 0"``, ``"in (0, 1)"``, ``""`` when unbounded."""
        lo = f"({self.gt:g}" if self.gt is not None else None if self.ge is None else f"[{self.ge:g}"
        hi = f"{self.lt:g})" if self.lt is not None else None if self.le is None else f"{self.le:g}]"
        if lo is not None and hi is not None:
            return f"in {lo}, {hi}"
        if lo is not None:
            return f"{'>' if lo[0] == '(' else '>='} {lo[1:]}"
        if hi is not None:
            return f"{'<' if hi[-1] == ')' else '<='} {hi[:-1]}"
        return ""

    def __call__(self, name: str, x: Any) -> float:
        with _as_format_error():
            out = v.finite(_OWNER, name, x)
        if (
            (self.gt is not None and not out > self.gt)
            or (self.ge is not None and not out >= self.ge)
            or (self.lt is not None and not out < self.lt)
            or (self.le is not None and not out <= self.le)
        ):
            _fail(name, f"must be {self.rule}", x)
        return out


@dataclass(frozen=True)
class Instance:
    """A value of one Python type as JSON reads it (``str``, ``bool``), named in words for the message."""

    kind: type
    words: str

    def __call__(self, name: str, x: Any) -> Any:
        if not isinstance(x, self.kind):
            _fail(name, f"must be {self.words}", x)
        return x


@dataclass(frozen=True)
class OneOf:
    """One of the listed strings."""

    options: tuple[str, ...]

    def __call__(self, name: str, x: Any) -> str:
        if not isinstance(x, str) or x not in self.options:
            rule = f"must be {self.options[0]!r}" if len(self.options) == 1 else f"must be one of {list(self.options)}"
            _fail(name, rule, x)
        return x


@dataclass(frozen=True)
class ListOf:
    """A list of ``item`` values (any values when ``item`` is None), of a given length or at least ``min_length``."""

    item: FieldType | None = None
    min_length: int = 0
    length: int | None = None
    unique: bool = False

    def __call__(self, name: str, x: Any) -> list[Any]:
        if not isinstance(x, Sequence) or isinstance(x, str):
            _fail(name, "must be a list", x)
        out = list(x) if self.item is None else [self.item(f"{name}[{i}]", e) for i, e in enumerate(x)]
        if self.length is not None and len(out) != self.length:
            _fail(name, f"must hold {self.length} entries", x)
        if len(out) < self.min_length:
            _fail(name, f"must hold at least {self.min_length} entr{'y' if self.min_length == 1 else 'ies'}", x)
        if self.unique and len(set(out)) != len(out):
            _fail(name, "must hold unique entries", out)
        return out


@dataclass(frozen=True)
class Record:
    """An object with exactly the keys of ``fields``, each of its type."""

    fields: Mapping[str, FieldType]

    def __call__(self, name: str, x: Any) -> dict[str, Any]:
        if not isinstance(x, Mapping) or set(x) != set(self.fields):
            _fail(name, f"must be an object with keys {sorted(self.fields)}", x)
        return {key: typ(f"{name}.{key}", x[key]) for key, typ in self.fields.items()}


INT: FieldType = Int()
FLOAT: FieldType = Float()
POSITIVE: FieldType = Float(gt=0.0)
NONNEGATIVE: FieldType = Float(ge=0.0)
OPEN_UNIT: FieldType = Float(gt=0.0, lt=1.0)
STR: FieldType = Instance(str, "a string")
BOOL: FieldType = Instance(bool, "true or false")
ANY_LIST: FieldType = ListOf()
STR_LIST: FieldType = ListOf(STR)
FLOAT_LIST: FieldType = ListOf(FLOAT)
INT_LIST: FieldType = ListOf(INT)
#: Column names: strings, none repeated.
NAMES: FieldType = ListOf(STR, unique=True)

#: Metadata keys any statistic may carry (free text): the simulation note, and provenance.
_COMMON_OPTIONAL: dict[str, FieldType] = {"simulation": STR, "source": STR}


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
        ``check(release, meta)``, ``meta`` the typed metadata values: the cross-field rules
        (sensitivity, shapes, labels, ...); raises :class:`ReleaseFormatError`.
    components : tuple of str
        Statistics that may appear in ``Release.components``.
    sensitivity : str
        The sensitivity rule under :data:`NEIGHBOURS`, for the docs.
    """

    name: str
    families: tuple[str, ...]
    compositions: tuple[str, ...] = ("joint",)
    required: Mapping[str, FieldType] = field(default_factory=dict)
    optional: Mapping[str, FieldType] = field(default_factory=dict)
    min_n: int | None = 1
    check: Callable[[Any, Mapping[str, Any]], None] | None = None
    components: tuple[str, ...] = ()
    sensitivity: str = ""

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
        meta = release.metadata
        fields = {**self.required, **self.optional, **_COMMON_OPTIONAL}
        unknown = sorted(set(meta) - set(fields))
        if unknown:
            _fail("metadata", f"has unknown key(s) {unknown} for statistic {self.name!r}", dict(meta))
        typed: dict[str, Any] = {}
        for key, typ in fields.items():
            if key in meta:
                typed[key] = typ(f"metadata.{key}", meta[key])
            elif key in self.required:
                _fail(f"metadata.{key}", f"is missing (required for statistic {self.name!r})", None)
        for i, c in enumerate(release.components):
            if c.statistic not in self.components:
                _fail(
                    f"components[{i}].statistic",
                    f"must be one of {list(self.components) or 'none'} in a {self.name!r} release",
                    c.statistic,
                )
        if self.check is not None:
            self.check(release, MappingProxyType(typed))


# ----------------------------------------------------------------------------- shared rules
def _check_sensitivity(release: Any, expected: float, rule: str) -> None:
    got = float(release.mechanism.sensitivity)
    if not _close(got, expected):
        _fail("mechanism.sensitivity", f"must be {rule} = {expected!r} under substitution neighbours", got)


def _check_shape(release: Any, shape: tuple[int, ...], what: str) -> None:
    if release.values.shape != shape:
        _fail("shape", f"must be {list(shape)} ({what})", list(release.values.shape))


def _check_integer_values(release: Any, what: str) -> None:
    if release.values.dtype.kind != "i":
        _fail("dtype", f"must be int64 for {what}", str(release.values.dtype))


def _check_labels(release: Any, want: list[list[str]], rule: str, where: str = "labels") -> None:
    got = [list(lab) for lab in release.labels]
    if got != want:
        _fail(where, rule, got)


def _check_columns(meta: Mapping[str, Any], count: int) -> list[str]:
    cols: list[str] = meta["columns"]
    if len(cols) != count:
        _fail("metadata.columns", f"must name {count} column(s)", cols)
    return cols


def _check_epsilon(meta: Mapping[str, Any], key: str, epsilon: float | None, whose: str) -> None:
    """``metadata.<key>`` states the epsilon of ``whose`` (a mechanism or a component)."""
    if epsilon is None or not _close(epsilon, meta[key]):
        _fail(f"metadata.{key}", f"must equal {whose}'s epsilon ({epsilon!r})", meta[key])


def _upper_pairs(p: int) -> list[list[int]]:
    """The column pairs ``[j, k]``, ``j < k``, of ``p`` columns in row-major order."""
    iu, ju = np.triu_indices(p, 1)
    return [[int(i), int(j)] for i, j in zip(iu, ju, strict=True)]


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
