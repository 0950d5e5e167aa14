"""The field rules of a release's metadata: one type per field, one message shape, one loop that reads them.

A statistic's metadata field is declared once with a field type that knows its range (:class:`Int`,
:class:`Float`, :class:`OneOf`, :class:`ListOf`, :class:`Record`); :func:`read_fields` checks a
mapping against such declarations (unknown keys, missing keys, each value's type) and returns the
typed values. Messages come from :mod:`noiseaware._validation` (``"Release: <field> <rule>; got
<field>=<value>."``); every failure is a :class:`~noiseaware.exceptions.ReleaseFormatError` naming the
field and the rule.

The rules sit in ``_core`` (below the mechanisms, the schemas of :mod:`noiseaware._statistics` and the
release record) so that a statistic's typed declaration (such as
:class:`noiseaware._core._regression_release.RegressionMetadata`) is read by ``_core``'s readers,
checked by the loader's schema and filled by the curator's writer with the same rules.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from .. import _validation as v
from ..exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError

__all__ = [
    "ENTRY_ORDER",
    "FieldType",
    "Float",
    "Instance",
    "Int",
    "ListOf",
    "OneOf",
    "Record",
    "read_fields",
]

OWNER = "Release"
#: Longest shown value in a message (a release can hold long lists).
_SHOWN = 120

#: Order of the ``d(d+1)/2`` unique entries of a second-moment matrix in a release (covariance and regression).
ENTRY_ORDER = "lower triangle j >= k, row-major: (0,0), (1,0), (1,1), (2,0), ...; index = j(j+1)/2 + k"


def fail(field_name: str, rule: str, value: Any) -> NoReturn:
    """Raise the :class:`ReleaseFormatError` ``"Release: <field_name> <rule>; got <field_name>=<value>."``."""
    raise ReleaseFormatError(v.message(OWNER, field_name, rule, value, limit=_SHOWN))


@contextlib.contextmanager
def as_format_error() -> Iterator[None]:
    """A failed argument check of :mod:`noiseaware._validation` is a malformed release here."""
    try:
        yield
    except ReleaseFormatError:
        raise
    except (NoiseawareValueError, NoiseawareTypeError) as exc:
        raise ReleaseFormatError(str(exc)) from None


#: A field type: takes the JSON path and the value, returns the typed value or raises.
FieldType = Callable[[str, Any], Any]


@dataclass(frozen=True)
class Int:
    """An integer (a float such as ``3.0`` is refused, as is a bool) in ``[minimum, maximum]``."""

    minimum: int | None = None
    maximum: int | None = None

    def __call__(self, name: str, x: Any) -> int:
        with as_format_error():
            return v.integer(OWNER, name, x, minimum=self.minimum, maximum=self.maximum, integral_floats=False)


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
        with as_format_error():
            out = v.finite(OWNER, name, x)
        if (
            (self.gt is not None and not out > self.gt)
            or (self.ge is not None and not out >= self.ge)
            or (self.lt is not None and not out < self.lt)
            or (self.le is not None and not out <= self.le)
        ):
            fail(name, f"must be {self.rule}", x)
        return out


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
COMMON_OPTIONAL: dict[str, FieldType] = {"simulation": STR, "source": STR}


def read_fields(
    meta: Mapping[str, Any], required: Mapping[str, FieldType], optional: Mapping[str, FieldType], statistic: str
) -> dict[str, Any]:
    """The typed values of ``meta``'s fields, each checked by its field type, in declaration order.

    ``meta`` may hold the ``required`` keys, the ``optional`` ones and :data:`COMMON_OPTIONAL`'s, and
    must hold every ``required`` key; each value is checked (and converted) by its field type under
    the path ``metadata.<key>``. The one loop behind :meth:`noiseaware._statistics.StatisticSchema.validate`
    and the typed declarations' ``from_dict``.

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
    fields = {**required, **optional, **COMMON_OPTIONAL}
    unknown = sorted(set(meta) - set(fields))
    if unknown:
        fail("metadata", f"has unknown key(s) {unknown} for statistic {statistic!r}", dict(meta))
    typed: dict[str, Any] = {}
    for key, typ in fields.items():
        if key in meta:
            typed[key] = typ(f"metadata.{key}", meta[key])
        elif key in required:
            fail(f"metadata.{key}", f"is missing (required for statistic {statistic!r})", None)
    return typed
