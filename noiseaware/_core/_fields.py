"""The field rules of a release's metadata: one type per field, one message shape, one loop that reads them.

A statistic's metadata field is declared once with a field type that knows its range (:class:`Int`,
:class:`Float`, :class:`Text`, :class:`OneOf`, :class:`ListOf`, :class:`Record`, :class:`Array`);
:func:`read_fields` checks a mapping against such declarations (unknown keys, missing keys, each
value's type) and returns the typed values. Messages come from :mod:`noiseaware._validation`
(``"<Owner>: <field> <rule>; got <field>=<value>."``, the owner ``"Release"`` unless a reader of another
record sets its own with :func:`noiseaware._validation.owner_scope`); every failure is a
:class:`~noiseaware.exceptions.ReleaseFormatError`
naming the field and the rule. The other record of published noise,
:class:`noiseaware.hierarchy.NoisyHierarchy`, reads its fields with the same types and
:func:`read_record`, owner ``"NoisyHierarchy"``.

The rules sit in ``_core`` (below the mechanisms, the schemas of :mod:`noiseaware._statistics` and the
release record) so that a statistic's typed declaration (such as
:class:`noiseaware._core._regression_release.RegressionMetadata`) is read by ``_core``'s readers,
checked by the loader's schema and filled by the curator's writer with the same rules.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

import numpy as np

from .. import _validation as v
from .._validation import current_owner, owner_scope
from ..exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError

__all__ = [
    "ENTRY_ORDER",
    "Array",
    "FieldType",
    "Float",
    "Instance",
    "Int",
    "ListOf",
    "OneOf",
    "Record",
    "Text",
    "fail",
    "read_fields",
    "read_record",
]

OWNER = "Release"
#: Longest shown value in a message (a release can hold long lists).
_SHOWN = 120

#: Order of the ``d(d+1)/2`` unique entries of a second-moment matrix in a release (covariance and regression).
ENTRY_ORDER = "lower triangle j >= k, row-major: (0,0), (1,0), (1,1), (2,0), ...; index = j(j+1)/2 + k"


def fail(field_name: str, rule: str, value: Any) -> NoReturn:
    """Raise the :class:`ReleaseFormatError` ``"<owner>: <field_name> <rule>; got <field_name>=<value>."``.

    Examples
    --------
    >>> with v.owner_scope("NoisyHierarchy"):
    ...     fail("secure", "must be true or false", 1)
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.ReleaseFormatError: NoisyHierarchy: secure must be true or false; got secure=1.
    """
    with owner_scope(current_owner(OWNER)):
        raise ReleaseFormatError(v.message(field_name, rule, value, limit=_SHOWN))


@contextlib.contextmanager
def as_format_error() -> Iterator[None]:
    """A failed argument check of :mod:`noiseaware._validation` is a malformed release here.

    Checked alone (outside any owner scope), a field names the :data:`OWNER` ``"Release"``.
    """
    try:
        with v.fallback_owner(OWNER):
            yield
    except ReleaseFormatError:
        raise
    except (NoiseawareValueError, NoiseawareTypeError) as exc:
        raise ReleaseFormatError(str(exc)) from None


class FieldType(Protocol):
    """A field type: takes the JSON path and the value; returns the typed value or raises (naming the current owner)."""

    def __call__(self, name: str, x: Any) -> Any:
        """The typed value of field ``name``, or a :class:`ReleaseFormatError` naming the current owner."""


@dataclass(frozen=True)
class Int:
    """An integer (a float such as ``3.0`` is refused, as is a bool) in ``[minimum, maximum]``."""

    minimum: int | None = None
    maximum: int | None = None

    def __call__(self, name: str, x: Any) -> int:
        with as_format_error():
            return v.integer(name, x, minimum=self.minimum, maximum=self.maximum, integral_floats=False)

    def holds(self, arr: np.ndarray) -> np.ndarray:
        """Which entries of an int64 array :meth:`__call__` accepts (for :class:`Array`)."""
        ok = np.ones(arr.shape, dtype=bool)
        if self.minimum is not None:
            ok &= arr >= self.minimum
        if self.maximum is not None:
            ok &= arr <= self.maximum
        return ok


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
        with owner_scope(current_owner(OWNER)):
            with as_format_error():
                out = v.finite(name, x)
            if not self.holds(np.asarray(out)):
                fail(name, f"must be {self.rule}", x)
            return out

    def holds(self, arr: np.ndarray) -> np.ndarray:
        """Which entries of a float64 array :meth:`__call__` accepts: finite and within the bounds."""
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(arr)
            for bound, inside in ((self.gt, np.greater), (self.ge, np.greater_equal),
                                  (self.lt, np.less), (self.le, np.less_equal)):
                if bound is not None:
                    ok &= inside(arr, bound)
        return np.asarray(ok, dtype=bool)


@dataclass(frozen=True)
class Instance:
    """A value of one Python type as JSON reads it (``str``, ``bool``), named in words for the message."""

    kind: type
    words: str

    def __call__(self, name: str, x: Any) -> Any:
        if not isinstance(x, self.kind):
            fail(name, f"must be {self.words}", x)
        return x


@dataclass(frozen=True)
class Text:
    """A string of at least ``min_length`` characters (a name: ``Text(1)``)."""

    min_length: int = 0

    def __call__(self, name: str, x: Any) -> str:
        if not isinstance(x, str) or len(x) < self.min_length:
            fail(name, "must be a non-empty string" if self.min_length == 1 else
                 f"must be a string of at least {self.min_length} characters", x)
        return x


@dataclass(frozen=True)
class OneOf:
    """One of the listed strings."""

    options: tuple[str, ...]

    def __call__(self, name: str, x: Any) -> str:
        if not isinstance(x, str) or x not in self.options:
            rule = f"must be {self.options[0]!r}" if len(self.options) == 1 else f"must be one of {list(self.options)}"
            fail(name, rule, x)
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
            fail(name, "must be a list", x)
        out = list(x) if self.item is None else [self.item(f"{name}[{i}]", e) for i, e in enumerate(x)]
        if self.length is not None and len(out) != self.length:
            fail(name, f"must hold {self.length} entries", x)
        if len(out) < self.min_length:
            fail(name, f"must hold at least {self.min_length} entr{'y' if self.min_length == 1 else 'ies'}", x)
        if self.unique and len(set(out)) != len(out):
            fail(name, "must hold unique entries", out)
        return out


@dataclass(frozen=True)
class Record:
    """An object with exactly the keys of ``fields``, each of its type."""

    fields: Mapping[str, FieldType]

    def __call__(self, name: str, x: Any) -> dict[str, Any]:
        if not isinstance(x, Mapping) or set(x) != set(self.fields):
            fail(name, f"must be an object with keys {sorted(self.fields)}", x)
        return {key: typ(f"{name}.{key}", x[key]) for key, typ in self.fields.items()}


@dataclass(frozen=True)
class Array:
    """An ``ndim``-dimensional array of numbers (nested lists as JSON reads them), each entry of type ``item``.

    ``item`` is an :class:`Int` (entries read by :func:`noiseaware._validation.integer_array`: exact
    integers in ``[-2**62, 2**62]``, an int64 array) or a :class:`Float` (entries read by
    :func:`noiseaware._validation.numeric_array`, a float64 array). Bools, complex numbers, text and
    ragged rows are refused; an entry outside ``item``'s range is refused by ``item`` itself, under its
    path (``name[i][j]``), so an array entry and a scalar field of the same type break the same rule.
    Returns a fresh, writable array; the shape is the caller's cross-field rule.

    Examples
    --------
    >>> Array(Float(ge=0.0), ndim=2)("variance", [[1.0, 2.0], [0.5, 0.0]]).shape
    (2, 2)
    >>> Array(Float(ge=0.0), ndim=2)("variance", [[1.0, 2.0], [0.5, float("nan")]])
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.ReleaseFormatError: Release: variance[1][1] must be finite; got variance[1][1]=nan.
    """

    item: Int | Float
    ndim: int

    def __call__(self, name: str, x: Any) -> np.ndarray:
        integer = isinstance(self.item, Int)
        with as_format_error():
            read = v.integer_array if integer else v.numeric_array
            arr = np.array(read(name, x, booleans=False), dtype=np.int64 if integer else np.float64, copy=True)
        if arr.ndim != self.ndim:
            fail(name, f"must be a {self.ndim}-dimensional array", x)
        bad = ~self.item.holds(arr)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            self.item(name + "".join(f"[{i}]" for i in idx), arr[idx].item())  # raises: the entry's rule
        return arr


INT: FieldType = Int()
FLOAT: FieldType = Float()
POSITIVE: FieldType = Float(gt=0.0)
NONNEGATIVE: FieldType = Float(ge=0.0)
OPEN_UNIT: FieldType = Float(gt=0.0, lt=1.0)
STR: FieldType = Instance(str, "a string")
#: A name: a non-empty string.
NAME: FieldType = Text(1)
BOOL: FieldType = Instance(bool, "true or false")
ANY_LIST: FieldType = ListOf()
STR_LIST: FieldType = ListOf(STR)
FLOAT_LIST: FieldType = ListOf(FLOAT)
INT_LIST: FieldType = ListOf(INT)
#: Column names: strings, none repeated.
NAMES: FieldType = ListOf(STR, unique=True)

#: Metadata keys any statistic may carry (free text): the simulation note, and provenance.
COMMON_OPTIONAL: dict[str, FieldType] = {"simulation": STR, "source": STR}


def read_fields(
    meta: Mapping[str, Any],
    required: Mapping[str, FieldType],
    optional: Mapping[str, FieldType],
    statistic: str,
) -> dict[str, Any]:
    """The typed values of ``meta``'s fields, each checked by its field type, in declaration order.

    ``meta`` may hold the ``required`` keys, the ``optional`` ones and :data:`COMMON_OPTIONAL`'s, and
    must hold every ``required`` key; each value is checked (and converted) by its field type under
    the path ``metadata.<key>``. The one loop behind :meth:`noiseaware._statistics.StatisticSchema.validate`
    and the typed declarations' ``from_dict`` (:func:`read_record` with the metadata's path).

    Raises
    ------
    ReleaseFormatError
        An unknown key, a missing required key, or a value its field type refuses.

    Examples
    --------
    >>> read_fields({"p": 3}, {"p": Int(minimum=2)}, {}, "demo")
    {'p': 3}
    >>> read_fields({"p": 1}, {"p": Int(minimum=2)}, {}, "demo")
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.ReleaseFormatError: Release: metadata.p must be an integer >= 2; got metadata.p=1.
    """
    return read_record(meta, required, {**optional, **COMMON_OPTIONAL}, what=f"statistic {statistic!r}",
                       prefix="metadata.")


def read_record(
    data: Any,
    required: Mapping[str, FieldType],
    optional: Mapping[str, FieldType],
    *,
    what: str,
    prefix: str = "",
) -> dict[str, Any]:
    """The typed values of a JSON object's fields: unknown keys, missing keys and each value's type checked.

    ``data`` must be a mapping holding every ``required`` key and no key outside ``required`` and
    ``optional``; each value is checked (and converted) by its field type under the path
    ``<prefix><key>``, in declaration order. ``what`` names the record kind in the messages
    (``"statistic 'counts'"``); the object itself is named ``prefix`` without its dot, or ``record``.

    Raises
    ------
    ReleaseFormatError
        ``data`` not a mapping, an unknown key, a missing required key, or a value its field type refuses.

    Examples
    --------
    >>> with v.owner_scope("Demo"):
    ...     read_record({"secure": "yes"}, {"secure": BOOL}, {}, what="schema 'demo'")
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.ReleaseFormatError: Demo: secure must be true or false; got secure='yes'.
    >>> with v.owner_scope("Demo"):
    ...     read_record({"secure": True, "x": 1}, {"secure": BOOL}, {}, what="schema 'demo'")
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.ReleaseFormatError: Demo: record has unknown key(s) ['x'] for schema 'demo';
    got record={'secure': True, 'x': 1}.
    """
    container = prefix.rstrip(".") or "record"
    if not isinstance(data, Mapping):
        fail(container, "must be a JSON object", data)
    fields = {**required, **optional}
    unknown = sorted(map(str, set(data) - set(fields)))
    if unknown:
        fail(container, f"has unknown key(s) {unknown} for {what}", dict(data))
    typed: dict[str, Any] = {}
    for key, typ in fields.items():
        if key in data:
            typed[key] = typ(f"{prefix}{key}", data[key])
        elif key in required:
            fail(f"{prefix}{key}", f"is missing (required for {what})", None)
    return typed
