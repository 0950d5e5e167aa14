r"""Public attribute domains of a ``dpcopula`` release (Li et al. 2014).

A DPCopula margin is a noisy histogram on a domain that the curator states *before* looking at
the data (a data-derived domain would leak). Three kinds, stored in ``metadata.domains``:

* ``{"kind": "integers", "lower": L, "upper": U}`` -- the integers ``L..U`` (one cell each);
* ``{"kind": "values", "values": [v_0, ..., v_{K-1}]}`` -- listed values (categories, codes), in
  the order that the copula uses as their total order (Li, Xiong & Jiang (2014), *Differentially Private
  Synthesization of Multi-Dimensional Data using Copula Functions*, §5.1 "imposing a total order");
* ``{"kind": "interval", "lower": a, "upper": b, "bins": K}`` -- ``[a, b]`` cut into ``K`` equal
  cells ``[a + kw, a + (k+1)w)``, the last one closed, ``w = (b - a)/K``.

Cell ``k`` of each kind is the integer code that the histogram counts and that Kendall's tau and
the median splits are computed on (ranks are what the copula sees). This module sits at the level
of the release record: it imports only NumPy and the exception family.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import current_owner, owned
from .exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError

__all__ = ["DTYPES", "MAX_CELLS", "Domain", "domain_from_spec"]

#: Largest number of cells of one stated domain (memory of the histogram and its labels).
MAX_CELLS = 10_000_000

#: Integer dtype names (NumPy and pandas' nullable ones) -> the NumPy type giving their range.
_INT_DTYPES = {
    **{f"{u}int{b}": f"{u}int{b}" for u in ("", "u") for b in (8, 16, 32, 64)},
    **{f"{u}Int{b}": f"{u.lower()}int{b}" for u in ("", "U") for b in (8, 16, 32, 64)},
}
#: Float dtype names -> the largest integer below which every integer is exact (2**(mantissa bits + 1)).
_FLOAT_DTYPES = {"float16": 2**11, "float32": 2**24, "float64": 2**53, "Float32": 2**24, "Float64": 2**53}
_BOOL_DTYPES = frozenset({"bool", "boolean"})
_TEXT_DTYPES = frozenset({"str", "string"})
_ANY_DTYPES = frozenset({"object", "category"})
#: The column dtypes a ``dpcopula`` release may record (``metadata.dtypes``): ``synthesize`` casts to them.
DTYPES = frozenset(_INT_DTYPES) | frozenset(_FLOAT_DTYPES) | _BOOL_DTYPES | _TEXT_DTYPES | _ANY_DTYPES


def _fmt(x: float) -> str:
    return f"{x:.12g}"


@dataclass(frozen=True)
class Domain:
    """A public domain of one attribute: ``kind`` with its parameters (module docstring).

    Parameters
    ----------
    kind : {"integers", "values", "interval"}
    lower, upper : int or float, optional
        Bounds (integers and interval kinds), inclusive.
    bins : int, optional
        Number of equal cells (interval kind).
    values : tuple, optional
        The listed values (values kind).

    Examples
    --------
    >>> d = Domain("interval", lower=0.0, upper=1.0, bins=4)
    >>> d.size, d.labels()[:2]
    (4, ['[0, 0.25)', '[0.25, 0.5)'])
    >>> d.encode("x", np.array([0.0, 0.3, 1.0])).tolist()
    [0, 1, 3]
    """

    kind: str
    lower: Any = None
    upper: Any = None
    bins: int | None = None
    values: tuple[Any, ...] = ()

    @property
    def size(self) -> int:
        """Number of cells ``K``."""
        if self.kind == "integers":
            return int(self.upper) - int(self.lower) + 1
        if self.kind == "interval":
            return int(self.bins or 0)
        return len(self.values)

    @property
    def width(self) -> float:
        """Cell width of an interval domain."""
        return (float(self.upper) - float(self.lower)) / float(self.bins or 1)

    def labels(self) -> list[str]:
        """One label per cell: the value, or ``"[lo, hi)"`` for interval cells."""
        if self.kind == "integers":
            return [str(i) for i in range(int(self.lower), int(self.upper) + 1)]
        if self.kind == "values":
            return [str(x) for x in self.values]
        edges = self.edges()
        out = [f"[{_fmt(a)}, {_fmt(b)})" for a, b in itertools.pairwise(edges)]
        out[-1] = out[-1][:-1] + "]"
        return out

    def edges(self) -> np.ndarray:
        """Cell edges of an interval domain, ``K + 1`` numbers."""
        return float(self.lower) + self.width * np.arange(int(self.bins or 0) + 1)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in ``metadata.domains``."""
        if self.kind == "integers":
            return {"kind": "integers", "lower": int(self.lower), "upper": int(self.upper)}
        if self.kind == "interval":
            return {"kind": "interval", "lower": float(self.lower), "upper": float(self.upper), "bins": self.bins}
        return {"kind": "values", "values": list(self.values)}

    @classmethod
    @owned("Release")
    def from_dict(cls, d: Any, where: str) -> Domain:
        """Read and check the JSON form; a bad one is a :class:`ReleaseFormatError` naming ``where``."""

        def bad(rule: str) -> ReleaseFormatError:
            text = repr(d)
            text = text if len(text) <= 120 else text[:117] + "..."
            return ReleaseFormatError(f"Release: field '{where}' {rule}; got {text}.")

        if not isinstance(d, Mapping) or d.get("kind") not in ("integers", "values", "interval"):
            raise bad("must be a domain {'kind': 'integers' | 'values' | 'interval', ...}")
        kind = d["kind"]
        keys = {
            "integers": {"kind", "lower", "upper"},
            "values": {"kind", "values"},
            "interval": {"kind", "lower", "upper", "bins"},
        }[kind]
        if set(d) != keys:
            raise bad(f"must have exactly the keys {sorted(keys)}")
        try:
            if kind == "integers":
                return _integers(where, d["lower"], d["upper"])
            if kind == "interval":
                return _interval(where, d["lower"], d["upper"], d["bins"])
            return _values(where, d["values"])
        except (NoiseawareValueError, NoiseawareTypeError) as exc:
            raise bad(f"is not a valid domain ({exc})") from exc

    # ------------------------------------------------------------------ data <-> cells
    def encode(self, name: str, column: Any) -> np.ndarray:
        """Cell codes ``0..K-1`` of a data column; values outside the domain raise ``ValueError``."""
        owner = current_owner()
        col = np.asarray(column)
        if self.kind == "values":
            import pandas as pd

            codes = np.asarray(pd.Index(list(self.values), dtype=object).get_indexer(list(col.tolist())))
            bad = codes < 0
            if np.any(bad):
                first = col[bad][0]
                raise NoiseawareValueError(
                    f"{owner}: column {name!r} has {int(bad.sum())} value(s) outside its stated domain "
                    f"(values {_short(self.values)}), e.g. {first!r}; every value must be listed in the domain."
                )
            return codes.astype(np.int64)
        if col.dtype.kind not in "biuf":
            raise NoiseawareTypeError(
                f"{owner}: column {name!r} must be numeric for a {self.kind!r} domain; got dtype {col.dtype}."
            )
        if self.kind == "integers" and col.dtype.kind in "biu":
            return self._integer_codes(name, col)
        x = col.astype(np.float64)
        if not np.all(np.isfinite(x)):
            raise NoiseawareValueError(f"{owner}: column {name!r} has {int(np.sum(~np.isfinite(x)))} NaN/inf value(s).")
        lo, hi = float(self.lower), float(self.upper)
        out = (x < lo) | (x > hi)
        if np.any(out):
            raise NoiseawareValueError(
                f"{owner}: column {name!r} has {int(out.sum())} value(s) outside its stated domain "
                f"[{_fmt(lo)}, {_fmt(hi)}], e.g. {float(x[out][0])!r}; clip or drop them, or state a wider domain."
            )
        if self.kind == "integers":
            frac = x != np.round(x)
            if np.any(frac):
                raise NoiseawareValueError(
                    f"{owner}: column {name!r} has {int(frac.sum())} non-integer value(s), e.g. {float(x[frac][0])!r}, "
                    "in an 'integers' domain; state an 'interval' domain with bins for real values."
                )
            # whole floats: exact as int64 below 2**63 (the domain lies within int64); the bounds checked exactly
            if np.any(x >= 2.0**63):
                big = float(x[x >= 2.0**63][0])
                raise NoiseawareValueError(
                    f"{owner}: column {name!r} has value(s) outside its stated domain [{self.lower}, {self.upper}], "
                    f"e.g. {big!r}; clip or drop them, or state a wider domain."
                )
            return self._integer_codes(name, x.astype(np.int64))
        k = np.floor((x - lo) / self.width).astype(np.int64)
        return np.clip(k, 0, int(self.bins or 1) - 1)

    def _integer_codes(self, name: str, col: np.ndarray) -> np.ndarray:
        """Codes ``x - lower`` of an integer column in an ``integers`` domain, in exact integer arithmetic.

        Comparing and subtracting in float64 would merge integers above ``2**53`` (a value just
        outside the domain read as inside, codes past the last cell); int64 is exact here, as the
        domain lies within int64 (checked on construction).

        Examples
        --------
        >>> d = Domain("integers", lower=2**60, upper=2**60 + 2)
        >>> from noiseaware._validation import owner_scope
        >>> d.encode("id", np.array([2**60, 2**60 + 2])).tolist()
        [0, 2]
        >>> try:
        ...     with owner_scope("demo"):
        ...         d.encode("id", np.array([2**60 + 3]))
        ... except ValueError as exc:
        ...     print(str(exc).split(", e.g.")[0])
        demo: column 'id' has 1 value(s) outside its stated domain [1152921504606846976, 1152921504606846978]
        """
        owner = current_owner()
        lo, hi = int(self.lower), int(self.upper)
        if col.dtype.kind == "u":  # uint64 above 2**63 - 1 lies outside any int64 domain
            out = col > np.uint64(2**63 - 1)
            x = np.where(out, np.uint64(0), col).astype(np.int64)
            out |= (x < lo) | (x > hi)
        else:
            x = col.astype(np.int64)
            out = (x < lo) | (x > hi)
        if np.any(out):
            raise NoiseawareValueError(
                f"{owner}: column {name!r} has {int(out.sum())} value(s) outside its stated domain [{lo}, {hi}], "
                f"e.g. {int(col[out][0])}; clip or drop them, or state a wider domain."
            )
        return x - np.int64(lo)

    def dtype_rule(self, dtype: str) -> str | None:
        """None when a column of ``dtype`` holds every value of this domain exactly, else the rule it breaks.

        The dtype a ``dpcopula`` release records is the one ``synthesize`` casts its draws to, so
        it must be one of :data:`DTYPES` and fit the domain. ``object`` and ``category`` fit any
        domain (numeric domains then come back as int64 / float64); otherwise an ``integers``
        domain needs an integer dtype whose range holds ``lower..upper``, a float dtype that
        represents them exactly, or ``bool`` for ``0..1``; an ``interval`` domain a numeric
        dtype; a ``values`` domain a dtype that holds every listed value exactly (text for
        strings, ``bool`` for booleans, numeric for numbers).

        Examples
        --------
        >>> age = Domain("integers", lower=0, upper=120)
        >>> age.dtype_rule("int64") is None, age.dtype_rule("uint8") is None
        (True, True)
        >>> age.dtype_rule("bool")
        "must be an integer dtype holding 0..120, a float dtype representing them exactly, or 'bool' for 0..1"
        >>> age.dtype_rule("datetime64[ns]")[:12]
        'must be one '
        """
        if dtype not in DTYPES:
            return f"must be one of {sorted(DTYPES)}"
        if dtype in _ANY_DTYPES:
            return None
        if self.kind == "integers":
            lo, hi = int(self.lower), int(self.upper)
            if dtype in _INT_DTYPES:
                info = np.iinfo(_INT_DTYPES[dtype])
                ok = int(info.min) <= lo and hi <= int(info.max)
            elif dtype in _FLOAT_DTYPES:
                ok = max(abs(lo), abs(hi)) <= _FLOAT_DTYPES[dtype]
            else:
                ok = dtype in _BOOL_DTYPES and 0 <= lo and hi <= 1
            if ok:
                return None
            return (
                f"must be an integer dtype holding {lo}..{hi}, a float dtype representing them exactly, "
                "or 'bool' for 0..1"
            )
        if self.kind == "interval":
            numeric = dtype in _INT_DTYPES or dtype in _FLOAT_DTYPES
            return None if numeric else "must be numeric for an 'interval' domain"
        if all(_holds(dtype, x) for x in self.values):
            return None
        return "must hold every listed value exactly ('object' or 'category' hold any)"

    def decode(self, codes: np.ndarray, within: np.ndarray | None = None) -> np.ndarray:
        """Values of cell codes; ``within`` in ``[0, 1)`` places a value inside an interval cell."""
        if self.kind == "integers":
            return int(self.lower) + codes.astype(np.int64)
        if self.kind == "values":
            vals = np.asarray(list(self.values), dtype=object)
            return vals[codes]
        w = np.zeros(codes.shape) if within is None else within
        return float(self.lower) + (codes + w) * self.width


def _holds(dtype: str, x: Any) -> bool:
    """Whether a column of ``dtype`` (one of :data:`DTYPES`, not object/category) holds the listed value ``x``."""
    if isinstance(x, str):
        return dtype in _TEXT_DTYPES
    if isinstance(x, bool):
        return dtype in _BOOL_DTYPES
    if dtype in _INT_DTYPES:
        if isinstance(x, float) and not x.is_integer():
            return False
        info = np.iinfo(_INT_DTYPES[dtype])
        return int(info.min) <= int(x) <= int(info.max)
    if dtype in _FLOAT_DTYPES:
        try:
            return bool(float(np.dtype(dtype.lower()).type(x)) == x)
        except OverflowError:
            return False
    return False


def _short(values: Sequence[Any]) -> str:
    vals = list(values)
    return repr(vals) if len(vals) <= 6 else repr(vals[:3])[:-1] + f", ... ({len(vals)} values)]"


def _cells(name: str, size: int) -> None:
    owner = current_owner()
    if size < 2:
        raise NoiseawareValueError(
            f"{owner}: domains[{name!r}] must have at least 2 cells; got {size}. A one-valued attribute carries "
            "no information for the copula: drop it."
        )
    if size > MAX_CELLS:
        raise NoiseawareValueError(f"{owner}: domains[{name!r}] must have at most {MAX_CELLS} cells; got {size}.")


def _is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def _integers(name: str, lower: Any, upper: Any) -> Domain:
    owner = current_owner()
    if not (_is_int(lower) and _is_int(upper)):
        raise NoiseawareTypeError(
            f"{owner}: domains[{name!r}] lower and upper must be integers for an integer domain; got "
            f"lower={lower!r}, upper={upper!r}. Add bins=K for an interval of real values."
        )
    if not (-(2**63) <= int(lower) and int(upper) <= 2**63 - 1):
        raise NoiseawareValueError(
            f"{owner}: domains[{name!r}] lower and upper must lie in [-2**63, 2**63 - 1] (int64, where the codes "
            f"are computed exactly); got lower={lower!r}, upper={upper!r}."
        )
    _cells(name, int(upper) - int(lower) + 1)
    return Domain("integers", lower=int(lower), upper=int(upper))


def _interval(name: str, lower: Any, upper: Any, bins: Any) -> Domain:
    owner = current_owner()
    lo, hi = _finite(name, "lower", lower), _finite(name, "upper", upper)
    if not lo < hi:
        raise NoiseawareValueError(
            f"{owner}: domains[{name!r}] must have lower < upper; got lower={lower!r}, upper={upper!r}."
        )
    if not _is_int(bins):
        raise NoiseawareTypeError(f"{owner}: domains[{name!r}] bins must be an integer; got bins={bins!r}.")
    _cells(name, int(bins))
    if not math.isfinite((hi - lo) / int(bins)) or (hi - lo) / int(bins) <= 0:
        raise NoiseawareValueError(f"{owner}: domains[{name!r}] cells would have zero width; got bins={bins!r}.")
    return Domain("interval", lower=lo, upper=hi, bins=int(bins))


def _finite(name: str, what: str, x: Any) -> float:
    owner = current_owner()
    if isinstance(x, bool) or not isinstance(x, int | float | np.integer | np.floating) or not math.isfinite(float(x)):
        raise NoiseawareValueError(f"{owner}: domains[{name!r}] {what} must be a finite number; got {what}={x!r}.")
    return float(x)


def _values(name: str, values: Any) -> Domain:
    owner = current_owner()
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise NoiseawareTypeError(f"{owner}: domains[{name!r}] must list its values; got {values!r}.")
    vals = [v.item() if isinstance(v, np.generic) else v for v in values]
    for x in vals:
        if isinstance(x, float) and not math.isfinite(x):
            raise NoiseawareValueError(f"{owner}: domains[{name!r}] values must be finite; got {x!r}.")
        if not isinstance(x, str | int | float | bool):
            raise NoiseawareTypeError(
                f"{owner}: domains[{name!r}] values must be strings or numbers; got {x!r} ({type(x).__name__})."
            )
    if len({(type(x).__name__, x) for x in vals}) != len(vals) or len(set(vals)) != len(vals):
        raise NoiseawareValueError(f"{owner}: domains[{name!r}] values must be distinct; got {_short(vals)}.")
    _cells(name, len(vals))
    return Domain("values", values=tuple(vals))


def domain_from_spec(name: str, spec: Any) -> Domain:
    """A :class:`Domain` from the curator's ``domains=`` entry for column ``name``.

    Accepted forms: ``range(L, U + 1)`` (integers ``L..U``), ``{"lower": L, "upper": U}`` with
    integer bounds (integers), ``{"lower": a, "upper": b, "bins": K}`` (interval with ``K``
    equal cells), a list of distinct values (categories; their order is the copula's order), or
    a :class:`Domain`.

    Raises
    ------
    TypeError, ValueError
        For any other form, fewer than 2 cells, ``lower >= upper``, or repeated values.

    Examples
    --------
    >>> domain_from_spec("age", range(0, 100)).to_dict()
    {'kind': 'integers', 'lower': 0, 'upper': 99}
    >>> domain_from_spec("sex", ["f", "m"]).size
    2
    """
    owner = current_owner()
    if isinstance(spec, Domain):
        return Domain.from_dict(spec.to_dict(), f"domains[{name!r}]")
    if isinstance(spec, range):
        if spec.step != 1 or len(spec) == 0:
            raise NoiseawareValueError(f"{owner}: domains[{name!r}] range must have step 1; got {spec!r}.")
        return _integers(name, spec.start, spec.stop - 1)
    if isinstance(spec, Mapping):
        keys = set(spec)
        if keys == {"lower", "upper"}:
            return _integers(name, spec["lower"], spec["upper"])
        if keys == {"lower", "upper", "bins"}:
            return _interval(name, spec["lower"], spec["upper"], spec["bins"])
        raise NoiseawareValueError(
            f"{owner}: domains[{name!r}] must be {{'lower', 'upper'}} (integers) or {{'lower', 'upper', 'bins'}} "
            f"(interval); got keys {sorted(map(str, keys))}."
        )
    if hasattr(spec, "tolist") and not isinstance(spec, np.ndarray):  # pandas Index / Categorical categories
        spec = list(spec.tolist())
    return _values(name, spec)
