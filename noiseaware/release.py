"""The :class:`Release` record: the contract between data curator and analyst.

A release carries the noisy values *and* everything needed to model the noise exactly: the
statistic, labels, ``n``, the mechanism with all its parameters, how the mechanism was applied
(``composition``), the resulting guarantee, whether it was drawn securely, and a schema
version. Likelihoods read their noise parameters from it (``from_release``), so model and
release cannot disagree.

JSON layout (schema version 2)::

    {"schema": "noiseaware.release", "schema_version": 2, "noiseaware_version": "0.1.0",
     "statistic": "median_pairs", "n": 1000,
     "values": [...], "shape": [10], "dtype": "int64",
     "labels": [["x1", "x2"], ...],
     "mechanism": {"family": "geometric", "scale": 10.0, "sensitivity": 1},
     "composition": "sequential",
     "guarantee": {"epsilon": 1.0, "delta": 0.0, "rho": null},
     "secure": true, "provenance": "noiseaware", "metadata": {...}, "components": [...]}

``provenance`` (new in schema version 2) says who made the release: ``"noiseaware"`` for
:func:`~noiseaware.privatize`, the maker's name for :meth:`Release.from_opendp` and
:meth:`Release.from_published`. A version-1 record (no such field) was made by noiseaware and
loads with ``provenance="noiseaware"``, provided its ``noiseaware_version`` names a writer of
version 1 (a development build before 0.1.0): every version from 0.1.0 writes version 2, so a
version-1 record naming one is a downgrade (a record of another maker would load as noiseaware's)
and is refused. A ``"noiseaware"`` release never carries ``metadata.source``, which only the
readers of releases made elsewhere write; and ``n`` is at most ``2**62``.

``composition`` says how ``guarantee`` follows from ``mechanism``: ``"sequential"`` -- the
mechanism was applied once per value and the guarantees add (Wang, Feldman & Reiter (2026), *Differentially Private
Bayesian Inference for Gaussian Copula Correlations*, Prop. 2.4; e.g. one
geometric draw per median pair, each of sensitivity 1); ``"joint"`` -- one application to the
whole vector, ``mechanism.sensitivity`` being the vector's L1 / L2 sensitivity; ``"parallel"``
-- applications to disjoint records (the guarantee of one); ``"per_record"`` -- values of shape
(n, q) are q record-level answers per record (e.g. randomized response): sequential within a
record, parallel across records, so the guarantee is q times the mechanism's. ``components`` holds sub-releases
spent on the same data (e.g. the threshold-selection counts of Guo, Barrientos & Peña (2022), *Differentially Private
Inference for Compositional Data*, Algorithm 1); their
guarantees compose sequentially with the main one.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from . import _external
from . import _validation as v
from ._core._record import ReleaseRecord
from ._io import MAX_RELEASE_BYTES, JSONRecord
from ._statistics import SCHEMAS, SIMULATION_NOTE
from ._validation import current_owner, owned
from ._version import __version__
from .exceptions import NoiseawareTypeError, NoiseawareValueError, PrivacyWarning, ReleaseFormatError
from .mechanisms import Guarantee, Mechanism, mechanism_from_dict

__all__ = ["COMPOSITIONS", "MAX_RELEASE_BYTES", "SCHEMA", "SCHEMA_VERSION", "Release"]

#: The ``"schema"`` field of every release record.
SCHEMA = "noiseaware.release"
#: The release record's schema version, written to and checked on load (``"schema_version"``).
SCHEMA_VERSION = 2
#: Older schema versions that :meth:`Release.from_dict` still reads (version 1: no ``provenance``).
_READABLE_VERSIONS = (1, SCHEMA_VERSION)
#: How a release's parts compose their privacy loss (the ``"composition"`` field).
COMPOSITIONS = ("sequential", "joint", "parallel", "per_record")
_REQUIRED_KEYS = (
    "schema_version",
    "statistic",
    "values",
    "shape",
    "dtype",
    "labels",
    "mechanism",
    "composition",
    "guarantee",
    "secure",
)
_TOP_KEYS = {*_REQUIRED_KEYS, "schema", "noiseaware_version", "n", "metadata", "components", "provenance"}


#: Deepest nesting accepted in ``metadata`` (the schemas need at most 3 levels).
_MAX_METADATA_DEPTH = 16


#: The first noiseaware release, as (major, minor, micro), that writes schema version 2: every public version.
_FIRST_VERSION_2_WRITER = (0, 1, 0)
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?((?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview|dev)\d*)*)"
                      r"(?:[-_.]?post\d*)?(?:\+[0-9A-Za-z.]+)?")


def _writes_version_2(version: str) -> bool | None:
    """Whether noiseaware ``version`` writes release schema version 2: None when ``version`` is not a version.

    Every release from :data:`_FIRST_VERSION_2_WRITER` on (``0.1.0``) writes version 2; only
    development builds before it (``0.1.0.dev3``, ``0.0.9``) wrote version 1.

    Examples
    --------
    >>> _writes_version_2("0.1.0"), _writes_version_2("0.1.0.dev3"), _writes_version_2("1.2"), _writes_version_2("x")
    (True, False, True, None)
    """
    m = _VERSION.fullmatch(version.strip())
    if m is None:
        return None
    release = (int(m[1]), int(m[2]), int(m[3] or 0))
    return release > _FIRST_VERSION_2_WRITER or (release == _FIRST_VERSION_2_WRITER and not m[4])


def _check_version_1_writer(version: Any, f: Any) -> None:
    """A version-1 record names its writer (every version-1 writer did), and that writer wrote version 1.

    A version-1 record loads as made by noiseaware (it has no ``provenance``), so a record of
    another maker downgraded to version 1 would claim noiseaware drew it; ``noiseaware_version``
    tells such a downgrade apart from a genuine old record.
    """
    wrote = _writes_version_2(version) if isinstance(version, str) else None
    if wrote is None:
        raise ReleaseFormatError(
            f"Release: field '{f('noiseaware_version')}' must name the noiseaware version that wrote this version-1 "
            f"record (every version-1 writer wrote it); got {_short_repr(version)}."
        )
    if wrote:
        raise ReleaseFormatError(
            f"Release: field '{f('schema_version')}' is 1, but field '{f('noiseaware_version')}' says noiseaware "
            f"{version} wrote it, and that version writes schema version {SCHEMA_VERSION} (with 'provenance'). A "
            "record downgraded to version 1 would load as drawn by noiseaware; refusing an inconsistent (possibly "
            "tampered) record. Read the original record, or make the release again."
        )


def check_simulation_write(simulation: bool, allow_simulation: Any, fix: str) -> None:
    """Refuse to serialize a simulation record unless ``allow_simulation=True``; warn when allowed.

    A simulation's noise is a replay of a seeded generator, so anyone who guesses the seed removes it
    exactly. The one rule of :meth:`Release.to_json` and
    :meth:`~noiseaware.hierarchy.NoisyHierarchy.to_json`; ``fix`` names the secure alternative.
    """
    owner = current_owner()
    if not isinstance(allow_simulation, bool):
        raise NoiseawareTypeError(v.message("allow_simulation", "must be True or False", allow_simulation))
    if not simulation:
        return
    if not allow_simulation:
        raise NoiseawareValueError(
            f"{owner}: this is a SIMULATION record (secure=False, noise from a seeded numpy Generator); replaying the "
            "seed removes the noise exactly, so it must never be published. Pass allow_simulation=True to serialize "
            f"it for a simulation study, {fix}."
        )
    warnings.warn(
        f"{owner}: serializing a SIMULATION record (secure=False); it protects nobody. Never publish it.",
        PrivacyWarning,
        stacklevel=3,
    )


def warn_simulation_read() -> None:
    """Warn (:class:`~noiseaware.exceptions.PrivacyWarning`) that a record just read is a simulation."""
    owner = current_owner()
    warnings.warn(
        f"{owner}: this record is a SIMULATION (secure=False): its noise came from a seeded numpy Generator and "
        "protects nobody. Use it for simulation studies only.",
        PrivacyWarning,
        stacklevel=3,
    )


def _freeze(obj: Any, depth: int = 0) -> Any:
    """Deep-copy JSON-like metadata into immutable containers (at most 16 levels deep)."""
    if depth > _MAX_METADATA_DEPTH:
        raise ReleaseFormatError(f"Release: field 'metadata' is nested more than {_MAX_METADATA_DEPTH} levels deep.")
    if isinstance(obj, Mapping):
        return MappingProxyType({str(k): _freeze(x, depth + 1) for k, x in obj.items()})
    if isinstance(obj, list | tuple):
        return tuple(_freeze(x, depth + 1) for x in obj)
    if isinstance(obj, np.ndarray):
        return _freeze(obj.tolist(), depth)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return _freeze(float(obj), depth)
    if obj is None or isinstance(obj, str | bool | int | float):
        if isinstance(obj, float) and not math.isfinite(obj):
            raise ReleaseFormatError(f"Release: metadata values must be finite; got {obj!r}.")
        return obj
    raise ReleaseFormatError(f"Release: metadata must be JSON-like; got a {type(obj).__name__}.")


def _thaw(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {k: _thaw(x) for k, x in obj.items()}
    if isinstance(obj, tuple):
        return [_thaw(x) for x in obj]
    return obj


def _short_repr(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text)} digits)"


def expected_guarantee(mechanism: Mechanism, composition: str, shape: tuple[int, ...]) -> Guarantee:
    """The guarantee implied by applying ``mechanism`` to values of ``shape`` under ``composition``."""
    g = mechanism.guarantee()
    size = math.prod(shape)
    if composition == "sequential" and size > 1:
        return g.repeat(size)
    if composition == "per_record" and len(shape) == 2 and shape[1] > 1:
        return g.repeat(shape[1])
    return g


# ------------------------------------------------------------------------ serialized size
#: Characters of the widest JSON text of one value: an int64 (``-9223372036854775808``) and a
#: float64 (``repr`` with 17 significant digits, sign and exponent: ``-2.2250738585072014e-308``).
_WIDEST_INT, _WIDEST_FLOAT = 20, 24
_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})


def _container_size(count: int, inner: int, depth: int, indent: int) -> int:
    """Characters of a non-empty JSON array/object at ``depth`` whose items' own texts total ``inner``."""
    return 2 + count * (1 + indent * (depth + 1)) + (count - 1) + inner + 1 + indent * depth


def _items_size(items: list[Any] | tuple[Any, ...], depth: int, indent: int) -> int:
    """Total characters of the items of a JSON array at ``depth`` (their separators not included)."""
    types = set(map(type, items))
    if types <= _SCALARS:  # numbers and strings: one C-speed compact encoding
        return len(json.dumps(items, separators=(",", ":"))) - 2 - (len(items) - 1)
    if types <= {list, tuple} and set(map(type, itertools.chain.from_iterable(items))) <= _SCALARS:  # labels
        compact = len(json.dumps(items, separators=(",", ":"))) - 2 - (len(items) - 1)
        lengths = list(map(len, items))
        nonempty = len(lengths) - lengths.count(0)
        return compact + sum(lengths) * (1 + indent * (depth + 2)) + nonempty * (1 + indent * (depth + 1))
    return sum(json_size(x, depth + 1, indent) for x in items)


def json_size(obj: Any, depth: int = 0, indent: int = 2) -> int:
    """Exactly ``len(json.dumps(obj, indent=indent))`` for JSON-ready ``obj`` at nesting ``depth``, without the text.

    Mapping keys are written as ``str(key)`` (as a release's metadata stores them); tuples as
    arrays; NumPy arrays and scalars as their ``tolist()``. Long flat arrays and arrays of short
    arrays (labels) are measured with one compact C encoding, not item by item.

    Examples
    --------
    >>> obj = {"labels": [["age", "17"], ["sex", "f"]], "n": 10, "x": [1.5, None, "ü"], "e": {}}
    >>> json_size(obj) == len(json.dumps(obj, indent=2))
    True
    """
    if isinstance(obj, np.ndarray):
        obj = obj.tolist()
    elif isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, Mapping):
        if not obj:
            return 2
        inner = sum(len(json.dumps(str(k))) + 2 + json_size(x, depth + 1, indent) for k, x in obj.items())
        return _container_size(len(obj), inner, depth, indent)
    if isinstance(obj, list | tuple):
        if not obj:
            return 2
        return _container_size(len(obj), _items_size(obj, depth, indent), depth, indent)
    return len(json.dumps(obj))


def integer_output(mechanism: Mechanism) -> bool:
    """True when a release of ``mechanism`` stores int64 values (integer or category outputs; not BTGM's reals)."""
    return mechanism.output_kind in ("integer", "category") and mechanism.family != "btgm"


def release_size_bound(
    *,
    shape: tuple[int, ...],
    labels: Any,
    mechanism: Mechanism,
    guarantee: Guarantee,
    metadata: Mapping[str, Any],
    components: tuple[Mapping[str, Any], ...] = (),
    extra: int = 0,
    depth: int = 0,
) -> int:
    """Most bytes that :meth:`Release.to_json` (with its final newline) can take for a release of these parts.

    Exact for the labels, metadata, mechanism and guarantee (:func:`json_size`); each noisy value
    counted at the widest text its type allows (an int64 or a float64, :func:`integer_output`), so the
    bound holds whatever noise is drawn; a fixed allowance covers the small fields (schema,
    versions, statistic, ``n``, ``dtype``, ``composition``, ``secure``, the keys). Computed from
    public parts only, so a statistic can refuse an oversized release before it charges any budget
    or draws any noise. ``components`` are the keyword arguments of this function for each
    sub-release; ``extra`` adds characters for metadata fields not given in ``metadata``.
    """
    indent = 2
    count = math.prod(shape)
    width = _WIDEST_INT if integer_output(mechanism) else _WIDEST_FLOAT
    values = 2 if count == 0 else _container_size(count, count * width, depth + 1, indent)
    subs = [release_size_bound(**c, depth=depth + 2) for c in components]
    total = (
        values
        + json_size(list(shape), depth + 1, indent)
        + json_size(labels, depth + 1, indent)
        + json_size(mechanism.to_dict(), depth + 1, indent)
        + json_size(guarantee.to_dict(), depth + 1, indent)
        + json_size(_thaw(_freeze(metadata)), depth + 1, indent)
        + (2 if not subs else _container_size(len(subs), sum(subs), depth + 1, indent))
    )
    # the 16 keys, the small fields (each at most 160 characters: version, statistic, provenance...), braces
    return total + extra + 16 * (1 + indent * (depth + 1) + 160) + 2 + indent * depth + 1


# ----------------------------------------------------------------- reading a record, field by field
_Name = Callable[[str], str]

#: The plain fields' rules, in field order: the value's test and what the field must be (given the value).
_FIELD_RULES: dict[str, tuple[Callable[[Any], bool], Callable[[Any], str]]] = {
    "shape": (
        lambda x: isinstance(x, list) and all(isinstance(s, int) and s >= 0 for s in x),
        lambda x: f"must be a list of sizes; got {x!r}.",
    ),
    "dtype": (lambda x: x in ("int64", "float64"), lambda x: f"must be 'int64' or 'float64'; got {x!r}."),
    "labels": (
        lambda x: isinstance(x, list) and all(isinstance(y, list) and all(isinstance(s, str) for s in y) for y in x),
        lambda x: "must be a list of lists of strings.",
    ),
    "n": (
        lambda x: x is None or (isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= v.INT_BOUND),
        lambda x: f"must be an integer in [1, 2**62] or null; got {_short_repr(x)}.",
    ),
    "secure": (lambda x: isinstance(x, bool), lambda x: f"must be true or false; got {x!r}."),
    "metadata": (lambda x: isinstance(x, Mapping), lambda x: "must be an object."),
    "components": (lambda x: isinstance(x, list), lambda x: "must be a list."),
}


def _field(d: Mapping[str, Any], f: _Name, name: str, default: Any = None) -> Any:
    """``d[name]`` (``default`` when absent) if it passes :data:`_FIELD_RULES`, else the error naming the field."""
    value = d.get(name, default)
    ok, must = _FIELD_RULES[name]
    if not ok(value):
        raise ReleaseFormatError(f"Release: field '{f(name)}' {must(value)}")
    return value


def _read_header(d: Any, where: str, f: _Name) -> None:
    """A JSON object with this record's ``schema``, no unknown field and every required one."""
    if not isinstance(d, Mapping):
        raise ReleaseFormatError(f"Release: the record{(' ' + where) if where else ''} must be a JSON object.")
    if d.get("schema") != SCHEMA:
        raise ReleaseFormatError(f"Release: field '{f('schema')}' must be {SCHEMA!r}; got {d.get('schema')!r}.")
    unknown = set(d) - _TOP_KEYS
    if unknown:
        raise ReleaseFormatError(f"Release: unknown field(s) {sorted(unknown)}{(' in ' + where) if where else ''}.")
    for key in _REQUIRED_KEYS:
        if key not in d:
            raise ReleaseFormatError(f"Release: field '{f(key)}' is missing.")


def _read_version(d: Mapping[str, Any], f: _Name) -> tuple[int, str]:
    """``(schema_version, provenance)``: a version-1 record (no provenance) is read as version 2 by noiseaware."""
    sv = d["schema_version"]
    if not isinstance(sv, int) or isinstance(sv, bool):
        raise ReleaseFormatError(f"Release: field '{f('schema_version')}' must be an integer; got {sv!r}.")
    if sv == 1:  # version 1 had no provenance: every such record was drawn by noiseaware
        if "provenance" in d:
            raise ReleaseFormatError(
                f"Release: field '{f('provenance')}' is not part of schema version 1; a record that has it "
                f"must say schema_version {SCHEMA_VERSION}."
            )
        _check_version_1_writer(d.get("noiseaware_version"), f)
        return SCHEMA_VERSION, _external.NOISEAWARE
    if sv != SCHEMA_VERSION:
        raise ReleaseFormatError(
            f"Release: field '{f('schema_version')}' must be one of {list(_READABLE_VERSIONS)}; got {sv!r}. "
            "Upgrade noiseaware to read newer records."
        )
    if "provenance" not in d:
        raise ReleaseFormatError(f"Release: field '{f('provenance')}' is missing.")
    provenance = d["provenance"]
    if not isinstance(provenance, str):
        raise ReleaseFormatError(f"Release: field '{f('provenance')}' must be a string; got {_short_repr(provenance)}.")
    return sv, provenance


def _read_values(d: Mapping[str, Any], f: _Name, shape: list[int], dtype: str) -> np.ndarray:
    """``values`` as an array of ``shape`` and ``dtype``: numbers (integers for int64), in range, as many as needed."""
    raw = d["values"]
    if not isinstance(raw, list) or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in raw):
        raise ReleaseFormatError(f"Release: field '{f('values')}' must be a flat list of numbers.")
    if dtype == "int64" and not all(isinstance(x, int) for x in raw):
        raise ReleaseFormatError(f"Release: field '{f('values')}' must hold integers for dtype int64.")
    lo, hi = (-(2**63), 2**63 - 1) if dtype == "int64" else (-sys.float_info.max, sys.float_info.max)
    far = next((x for x in raw if isinstance(x, int) and not lo <= x <= hi), None)
    if far is not None:  # JSON integers are unbounded; NumPy would raise OverflowError
        raise ReleaseFormatError(
            f"Release: field '{f('values')}' must hold {dtype} values (integers in [-2**63, 2**63 - 1] for int64, "
            f"finite for float64); got {_short_repr(far)}."
        )
    if math.prod(shape) != len(raw):
        raise ReleaseFormatError(
            f"Release: field '{f('values')}' has {len(raw)} entries but 'shape' {shape} needs {math.prod(shape)}."
        )
    return np.asarray(raw, dtype=dtype).reshape(shape)


@dataclass(frozen=True, eq=False)
class Release(ReleaseRecord, JSONRecord):
    """A differentially private release and the exact description of its noise.

    Build one with :func:`noiseaware.privatize`; read one with :meth:`from_json`; make one of a
    release made elsewhere with :meth:`from_opendp` (an OpenDP measurement's output) or
    :meth:`from_published` (noise parameters a publisher states).

    Parameters
    ----------
    statistic : str
        What was released (``"median_pairs"``, ``"counts"``, ``"vector"``, ...).
    values : numpy.ndarray
        The noisy values (stored read-only).
    labels : tuple of tuple of str
        One label per value in C order, e.g. the column pair ``("x1", "x2")`` of a count.
    mechanism : Mechanism
        The mechanism applied to each value (see ``composition``).
    composition : {"sequential", "joint", "parallel", "per_record"}
        How ``guarantee`` follows from ``mechanism`` (module docstring).
    guarantee : Guarantee
        The total guarantee of this release including ``components``; checked on creation.
    secure : bool
        True when noiseaware drew the noise with OpenDP's exact samplers; False for seeded
        simulations and for releases made elsewhere (:meth:`from_opendp`, :meth:`from_published`).
    n : int or None
        Number of records, when public.
    metadata : mapping
        Statistic-specific public information (column names, bounds, thresholds, ...).
    components : tuple of Release
        Sub-releases spent on the same data; their guarantees add to this one.
    schema_version : int
        Version of the record layout.
    provenance : str
        Who made the release: ``"noiseaware"`` (the default, :func:`~noiseaware.privatize`) or the
        maker named by :meth:`from_opendp` / :meth:`from_published`. Printable, 1 to 160 characters.
        Only a ``"noiseaware"`` release can be ``secure`` or a simulation.

    Raises
    ------
    ReleaseFormatError
        If the parts are inconsistent (label count, dtype, guarantee, ...).

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).normal(size=(50, 3))
    >>> rel = na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(1))
    >>> rel.labels
    (('x0', 'x1'), ('x0', 'x2'), ('x1', 'x2'))
    >>> rel.secure, rel.guarantee.epsilon
    (False, 1.0)
    """

    statistic: str
    values: np.ndarray
    labels: tuple[tuple[str, ...], ...]
    mechanism: Mechanism
    composition: str
    guarantee: Guarantee
    secure: bool
    n: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    components: tuple[Release, ...] = ()
    schema_version: int = SCHEMA_VERSION
    provenance: str = _external.NOISEAWARE

    from_opendp: ClassVar[classmethod[Release, ..., Release]] = classmethod(_external.from_opendp)
    from_published: ClassVar[classmethod[Release, ..., Release | dict[str, Release]]] = classmethod(
        _external.from_published
    )

    @owned("Release")
    def __post_init__(self) -> None:
        if not isinstance(self.statistic, str) or self.statistic not in SCHEMAS:
            raise ReleaseFormatError(
                f"Release: field 'statistic' must be one of {sorted(SCHEMAS)}; got {self.statistic!r}."
            )
        if not isinstance(self.mechanism, Mechanism):
            raise ReleaseFormatError(f"Release: field 'mechanism' must be a Mechanism; got {self.mechanism!r}.")
        if self.composition not in COMPOSITIONS:
            raise ReleaseFormatError(
                f"Release: field 'composition' must be one of {list(COMPOSITIONS)}; got {self.composition!r}."
            )
        if not isinstance(self.secure, bool):
            raise ReleaseFormatError(f"Release: field 'secure' must be true or false; got {self.secure!r}.")
        _external.check_record_provenance(self.provenance)
        if self.schema_version != SCHEMA_VERSION:
            raise ReleaseFormatError(
                f"Release: field 'schema_version' must be {SCHEMA_VERSION}; got {self.schema_version!r}. "
                "Upgrade noiseaware to read newer records."
            )
        vals = np.array(self.values, copy=True)
        if vals.dtype.kind not in "iuf" or vals.size == 0:
            raise ReleaseFormatError(f"Release: field 'values' must be a non-empty numeric array; got {vals!r}.")
        if vals.dtype.kind == "f" and not np.all(np.isfinite(vals)):
            raise ReleaseFormatError("Release: field 'values' must be finite.")
        vals = vals.astype(np.int64 if vals.dtype.kind in "iu" else np.float64)
        if integer_output(self.mechanism):
            if vals.dtype.kind == "f":
                if not np.all(vals == np.round(vals)):
                    raise ReleaseFormatError(
                        f"Release: field 'values' must be integers for mechanism {self.mechanism.family!r}."
                    )
                vals = vals.astype(np.int64)
        vals.setflags(write=False)
        object.__setattr__(self, "values", vals)
        labels = tuple(tuple(str(s) for s in (lab if isinstance(lab, list | tuple) else (lab,))) for lab in self.labels)
        if len(labels) != vals.size:
            raise ReleaseFormatError(
                f"Release: field 'labels' must hold one label per value ({vals.size}); got {len(labels)}."
            )
        object.__setattr__(self, "labels", labels)
        if self.n is not None:
            object.__setattr__(self, "n", v.integer("n", self.n, minimum=1, maximum=v.INT_BOUND))
        object.__setattr__(self, "metadata", _freeze(dict(self.metadata)))
        comps = tuple(self.components)
        for i, c in enumerate(comps):
            if not isinstance(c, Release):
                raise ReleaseFormatError(f"Release: field 'components[{i}]' must be a Release.")
        object.__setattr__(self, "components", comps)
        if not isinstance(self.guarantee, Guarantee):
            raise ReleaseFormatError(f"Release: field 'guarantee' must be a Guarantee; got {self.guarantee!r}.")
        expected = expected_guarantee(self.mechanism, self.composition, vals.shape)
        for c in comps:
            expected = expected.compose(c.guarantee)
        if not self.guarantee.isclose(expected):
            raise ReleaseFormatError(
                f"Release: field 'guarantee' ({self.guarantee.describe()}) is inconsistent with the mechanism, "
                f"which gives {expected.describe()} under {self.composition!r} composition of {vals.size} value(s)."
            )
        self._check_secure_flag()
        SCHEMAS[self.statistic].validate(self)

    @owned("Release")
    def _check_secure_flag(self) -> None:
        """``secure`` must not contradict ``metadata.simulation``; components share the release's flag.

        ``secure=False`` alone means only "not drawn by noiseaware's OpenDP samplers" (e.g. values
        transcribed from a published release); ``metadata.simulation`` marks a replayable seeded
        simulation, which can never be secure.
        """
        _external.check_secure_maker(self.provenance, self.secure)
        made_here = _external.made_by_noiseaware(self.provenance)
        if self.simulation and not made_here:
            raise ReleaseFormatError(
                f"Release: field 'provenance' is {self.provenance!r}, but only a release noiseaware drew itself "
                f"(provenance {_external.NOISEAWARE!r}) can be 'secure' or a simulation; a release made elsewhere "
                "has secure=false. Refusing an inconsistent (possibly tampered) record."
            )
        if made_here and "source" in self.metadata:
            raise ReleaseFormatError(
                f"Release: field 'metadata.source' is written only by Release.from_opendp and Release.from_published "
                f"(releases made elsewhere), but field 'provenance' is {_external.NOISEAWARE!r}: a release noiseaware "
                "drew itself has no source. Refusing an inconsistent (possibly tampered) record."
            )
        if self.secure and self.simulation:
            raise ReleaseFormatError(
                "Release: field 'secure' is true but 'metadata.simulation' says the noise came from a seeded "
                "numpy Generator; a release cannot be both. Refusing an inconsistent (possibly tampered) record."
            )
        for i, c in enumerate(self.components):
            if c.provenance != self.provenance:
                raise ReleaseFormatError(
                    f"Release: field 'components[{i}].provenance' ({c.provenance!r}) must match the release's "
                    f"({self.provenance!r}): all parts of one release are made by the same maker."
                )
            if c.secure != self.secure or c.simulation != self.simulation:
                raise ReleaseFormatError(
                    f"Release: field 'components[{i}].secure' ({c.secure}) and its simulation note must match "
                    f"the release's ('secure' {self.secure}): all parts of one release are drawn the same way."
                )

    # ------------------------------------------------------------------ views
    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of :attr:`values`."""
        return tuple(self.values.shape)

    @property
    def simulation(self) -> bool:
        """True for a seeded simulation release (``privatize(..., rng=...)``): never publish it."""
        return "simulation" in self.metadata

    @property
    def epsilon(self) -> float | None:
        """Total epsilon of the guarantee (None for a zCDP-only guarantee)."""
        return self.guarantee.epsilon

    # ------------------------------------------------------------ serialization
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping (see the module docstring for the layout)."""
        return {
            "schema": SCHEMA,
            "schema_version": self.schema_version,
            "noiseaware_version": __version__,
            "statistic": self.statistic,
            "n": self.n,
            "values": self.values.ravel().tolist(),
            "shape": list(self.values.shape),
            "dtype": str(self.values.dtype),
            "labels": [list(lab) for lab in self.labels],
            "mechanism": self.mechanism.to_dict(),
            "composition": self.composition,
            "guarantee": self.guarantee.to_dict(),
            "secure": self.secure,
            "provenance": self.provenance,
            "metadata": _thaw(self.metadata),
            "components": [c.to_dict() for c in self.components],
        }

    @owned("Release.to_json")
    def to_json(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        indent: int | None = 2,
        overwrite: bool = False,
        allow_simulation: bool = False,
    ) -> str:
        """Serialize to JSON; write it to ``path`` when given. Floats round-trip exactly.

        Parameters
        ----------
        path : path-like, optional
            Where to write. The file is written to a temporary file in the same directory and
            renamed onto ``path``, so a failed write (full disk, interrupt) never leaves a
            truncated release or destroys an existing file.
        indent : int or None
            JSON indentation.
        overwrite : bool
            Replace an existing file at ``path``. Default False: an existing file is refused.
        allow_simulation : bool
            Required to serialize a simulation release (``secure=False``, made with ``rng=``):
            its noise is a replay of a seeded generator, so anyone who guesses the seed removes
            it exactly. Such a release is for simulation studies only; serializing it warns
            with a :class:`~noiseaware.exceptions.PrivacyWarning` even when allowed.

        Returns
        -------
        str
            The JSON text.

        Raises
        ------
        NoiseawareValueError
            A simulation release (``metadata.simulation`` set) without ``allow_simulation=True``; a
            text over :data:`MAX_RELEASE_BYTES` (256 MiB, newline included), the most
            :meth:`from_json` reads; or a ``path`` that exists and is not a regular file.
        OutputExistsError
            ``path`` exists and ``overwrite`` is False.
        """
        check_simulation_write(self.simulation, allow_simulation,
                               "or make a secure release with privatize(...) without rng=")
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        from . import _io

        if len(text) + 1 > _io.MAX_RELEASE_BYTES:  # ASCII text (json.dumps escapes the rest), plus the newline
            smaller = " (indent=None writes it more compactly)" if indent is not None else ""
            raise NoiseawareValueError(
                f"Release.to_json: this release is {len(text) + 1:,} bytes as JSON, over the limit of "
                f"{_io.MAX_RELEASE_BYTES:,} bytes that Release.from_json reads; it is not written, since it "
                f"could never be read back{smaller}."
            )
        if path is not None:
            from ._io import atomic_write_text

            atomic_write_text(path, text + "\n", overwrite=overwrite)
        return text

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "") -> Release:
        """Rebuild a release from :meth:`to_dict` output; errors name the offending field."""

        def f(name: str) -> str:
            return f"{where}{name}"

        _read_header(d, where, f)  # the record's fields are checked in field order: the first bad one is named
        sv, provenance = _read_version(d, f)
        shape, dtype = _field(d, f, "shape"), _field(d, f, "dtype")
        values = _read_values(d, f, shape, dtype)
        labels, n, secure = _field(d, f, "labels"), _field(d, f, "n"), _field(d, f, "secure")
        metadata, comps_raw = _field(d, f, "metadata", {}), _field(d, f, "components", [])
        components = tuple(cls.from_dict(c, where=f"{f('components')}[{i}].") for i, c in enumerate(comps_raw))
        mechanism = mechanism_from_dict(d["mechanism"], where=f("mechanism"))
        guarantee = Guarantee.from_dict(d["guarantee"], where=f("guarantee"))
        try:
            return cls(
                statistic=d["statistic"],
                values=values,
                labels=tuple(tuple(lab) for lab in labels),
                mechanism=mechanism,
                composition=d["composition"],
                guarantee=guarantee,
                secure=secure,
                n=n,
                metadata=metadata,
                components=components,
                schema_version=sv,
                provenance=provenance,
            )
        except ReleaseFormatError as exc:
            if where:
                raise ReleaseFormatError(f"{exc} (in {where.rstrip('.')})") from exc
            raise

    @classmethod
    @owned("Release.from_json")
    def from_json(cls, source: str | os.PathLike[str]) -> Release:
        """Read a release from a JSON file path, or from JSON text.

        **Path or text.** Every :class:`os.PathLike` is a path. A ``str`` is a path when it ends
        with ``.json`` (any case, surrounding whitespace aside) or names an existing file;
        otherwise it is JSON text when it starts with ``{`` (what :meth:`to_json` returns) and a
        path when it does not. So ``"{run}.json"`` is always a file name, and a truncated record
        ``"{..."`` is reported as invalid JSON.

        Files (and JSON text) are read with bounded resources: at most
        :data:`MAX_RELEASE_BYTES` (256 MiB, the most :meth:`to_json` writes), strict
        UTF-8, JSON nesting at most 64 deep, and every field checked against the statistic's schema
        (``docs/release-format.md``) before any analysis allocates memory from it.

        Raises
        ------
        ReleaseFormatError
            If the file is not valid JSON, or a field is missing, malformed or inconsistent;
            the message names the field.
        """
        from ._io import load_json_source

        rel = cls.from_dict(load_json_source(source))
        if rel.simulation:
            warn_simulation_read()
        return rel

    # ----------------------------------------------------------------- display
    @owned("Release.summary")
    def summary(self, max_rows: int = 20) -> str:
        """A readable multi-line description of the release and its guarantee."""
        from ._io import printable

        max_rows = v.integer("max_rows", max_rows, minimum=0)
        m = self.mechanism.to_dict()
        params = ", ".join(f"{k}={val!r}" for k, val in m.items() if k != "family")
        lines = [
            f"Release of {self.statistic!r}" + (f" (n={self.n})" if self.n is not None else ""),
            f"  mechanism : {m['family']}({params}), composition {self.composition!r}",
            f"  guarantee : {self.guarantee.describe()}",
            "  sampling  : "
            + (
                "secure (OpenDP exact samplers)"
                if self.secure
                else "SIMULATION (numpy rng) - not a secure release"
                if self.simulation
                else "made elsewhere: noiseaware did not draw it (secure=False)"
            ),
            f"  made by   : {printable(self.provenance)}",
        ]
        for c in self.components:
            lines.append(f"  component : {c.statistic!r}, {c.guarantee.describe()}")
        if self.simulation:
            lines.append(f"  WARNING   : {SIMULATION_NOTE}")
        flat = self.values.ravel()
        lines.append(f"  values    : {flat.size}")
        for lab, val in list(zip(self.labels, flat.tolist(), strict=True))[:max_rows]:
            lines.append(f"    {printable(' x '.join(lab)):<30} {val}")
        if flat.size > max_rows:
            lines.append(f"    ... ({flat.size - max_rows} more)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"Release(statistic={self.statistic!r}, n={self.n}, values={self.values.ravel()[:6].tolist()}"
            f"{'...' if self.values.size > 6 else ''}, mechanism={self.mechanism!r}, "
            f"guarantee={self.guarantee.describe()!r}, secure={self.secure})"
        )
