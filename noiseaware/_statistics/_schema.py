"""The schema types: what a release of one statistic may hold, its field types and the rules every family shares.

Field types and messages come from :mod:`noiseaware._validation` (one message shape,
``"Release: <field> <rule>; got <field>=<value>."``); every failure is a
:class:`~noiseaware.exceptions.ReleaseFormatError` naming the field and the rule.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from .. import _validation as v
from ..exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError
from ._rules import IMPLAUSIBLE_LOG2, noise_reach

__all__ = ["FieldType", "StatisticSchema"]

#: Relative tolerance for floats that the loader recomputes from other fields.
_RTOL = 1e-9

#: Metadata keys any statistic may carry (free text): the simulation note, and provenance.
_COMMON_OPTIONAL = ("simulation", "source")

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
def _int(name: str, x: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    with _as_format_error():
        return v.integer(_OWNER, name, x, minimum=minimum, maximum=maximum, integral_floats=False)


def _float(name: str, x: Any, *, lo: float | None = None, hi: float | None = None, open_lo: bool = False) -> float:
    with _as_format_error():
        out = v.finite(_OWNER, name, x)
    if lo is not None and (out < lo or (open_lo and out == lo)):
        _fail(name, f"must be {'>' if open_lo else '>='} {lo:g}", x)
    if hi is not None and out > hi:
        _fail(name, f"must be <= {hi:g}", x)
    return out


def _str(name: str, x: Any) -> str:
    if not isinstance(x, str):
        _fail(name, "must be a string", x)
    return x


def _str_list(name: str, x: Any) -> list[str]:
    if not isinstance(x, Sequence) or isinstance(x, str) or not all(isinstance(s, str) for s in x):
        _fail(name, "must be a list of strings", x)
    return list(x)


def _float_list(name: str, x: Any) -> list[float]:
    if not isinstance(x, Sequence) or isinstance(x, str):
        _fail(name, "must be a list of numbers", x)
    return [_float(f"{name}[{i}]", e) for i, e in enumerate(x)]


def _int_list(name: str, x: Any, minimum: int | None = None) -> list[int]:
    if not isinstance(x, Sequence) or isinstance(x, str):
        _fail(name, "must be a list of integers", x)
    return [_int(f"{name}[{i}]", e, minimum) for i, e in enumerate(x)]


#: A field type: takes the JSON path and the value, returns the typed value or raises.
FieldType = Callable[[str, Any], Any]

INT: FieldType = _int
FLOAT: FieldType = _float
STR: FieldType = _str
STR_LIST: FieldType = _str_list
FLOAT_LIST: FieldType = _float_list
INT_LIST: FieldType = _int_list


def _bool(name: str, x: Any) -> bool:
    if not isinstance(x, bool):
        _fail(name, "must be true or false", x)
    return x


BOOL: FieldType = _bool


def _any_list(name: str, x: Any) -> list[Any]:
    if not isinstance(x, Sequence) or isinstance(x, str):
        _fail(name, "must be a list", x)
    return list(x)




@dataclass(frozen=True)
class StatisticSchema:
    """What a release of one statistic may hold.

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
    needs_n : bool
        Whether ``Release.n`` must be given.
    check : callable, optional
        ``check(release)``: the cross-field rules (sensitivity, shapes, labels, ...); raises
        :class:`ReleaseFormatError`.
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
    needs_n: bool = True
    check: Callable[[Any], None] | None = None
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
        if self.needs_n and release.n is None:
            _fail("n", f"must be given for statistic {self.name!r}", None)
        meta = release.metadata
        allowed = set(self.required) | set(self.optional) | set(_COMMON_OPTIONAL)
        unknown = sorted(set(meta) - allowed)
        if unknown:
            _fail("metadata", f"has unknown key(s) {unknown} for statistic {self.name!r}", dict(meta))
        for key, typ in self.required.items():
            if key not in meta:
                _fail(f"metadata.{key}", f"is missing (required for statistic {self.name!r})", None)
            typ(f"metadata.{key}", meta[key])
        for key, typ in self.optional.items():
            if key in meta:
                typ(f"metadata.{key}", meta[key])
        for key in _COMMON_OPTIONAL:
            if key in meta:
                _str(f"metadata.{key}", meta[key])
        for i, c in enumerate(release.components):
            if c.statistic not in self.components:
                _fail(
                    f"components[{i}].statistic",
                    f"must be one of {list(self.components) or 'none'} in a {self.name!r} release",
                    c.statistic,
                )
        if self.check is not None:
            self.check(release)




# ----------------------------------------------------------------------------- shared rules
def _meta(release: Any, key: str) -> Any:
    return release.metadata[key]


def _sensitivity(release: Any) -> float:
    return float(release.mechanism.sensitivity)


def _check_sensitivity(release: Any, expected: float, rule: str) -> None:
    got = _sensitivity(release)
    if not _close(got, expected):
        _fail("mechanism.sensitivity", f"must be {rule} = {expected!r} under substitution neighbours", got)


def _check_columns(release: Any, count: int, key: str = "columns") -> list[str]:
    cols = _str_list(f"metadata.{key}", _meta(release, key))
    if len(cols) != count:
        _fail(f"metadata.{key}", f"must name {count} column(s)", cols)
    if len(set(cols)) != len(cols):
        _fail(f"metadata.{key}", "must hold unique names", cols)
    return cols


def _check_pairs(release: Any) -> None:
    """``p``, ``columns``, ``pairs`` and the labels of a pairwise statistic agree."""
    p = _int("metadata.p", _meta(release, "p"), minimum=2)
    cols = _check_columns(release, p)
    k = p * (p - 1) // 2
    if release.values.shape != (k,):
        _fail("shape", f"must be [{k}] (one value per column pair, p = {p})", list(release.values.shape))
    pairs = _any_list("metadata.pairs", _meta(release, "pairs"))
    iu, ju = np.triu_indices(p, 1)
    want = [[int(i), int(j)] for i, j in zip(iu, ju, strict=True)]
    got = []
    for t, pq in enumerate(pairs):
        if not isinstance(pq, Sequence) or isinstance(pq, str) or len(pq) != 2:
            _fail(f"metadata.pairs[{t}]", "must be a pair [j, k]", pq)
        got.append([_int(f"metadata.pairs[{t}][0]", pq[0]), _int(f"metadata.pairs[{t}][1]", pq[1])])
    if got != want:
        _fail(
            "metadata.pairs",
            f"must list every column pair j < k of p = {p} columns once, in row-major order",
            got,
        )
    labels = [list(lab) for lab in release.labels]
    want_labels = [[cols[i], cols[j]] for i, j in want]
    if labels != want_labels:
        _fail("labels", "must be the column names of each pair, [columns[j], columns[k]]", labels)


def _check_epsilon_per_pair(release: Any) -> None:
    eps_pair = _float("metadata.epsilon_per_pair", _meta(release, "epsilon_per_pair"), lo=0.0, open_lo=True)
    g = release.mechanism.guarantee()
    if g.epsilon is None or not _close(g.epsilon, eps_pair):
        _fail("metadata.epsilon_per_pair", f"must equal the mechanism's epsilon ({g.epsilon!r})", eps_pair)



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



_PAIR_FIELDS: dict[str, FieldType] = {
    "columns": STR_LIST,
    "p": INT,
    "pairs": _any_list,
    "epsilon_per_pair": FLOAT,
}

