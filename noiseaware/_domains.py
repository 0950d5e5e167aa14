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

from .exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError

__all__ = ["MAX_CELLS", "Domain", "domain_from_spec"]

#: Largest number of cells of one stated domain (memory of the histogram and its labels).
MAX_CELLS = 10_000_000


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
    >>> d.encode("demo", "x", np.array([0.0, 0.3, 1.0])).tolist()
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
                return _integers("Release", where, d["lower"], d["upper"])
            if kind == "interval":
                return _interval("Release", where, d["lower"], d["upper"], d["bins"])
            return _values("Release", where, d["values"])
        except (NoiseawareValueError, NoiseawareTypeError) as exc:
            raise bad(f"is not a valid domain ({exc})") from exc

    # ------------------------------------------------------------------ data <-> cells
    def encode(self, owner: str, name: str, column: Any) -> np.ndarray:
        """Cell codes ``0..K-1`` of a data column; values outside the domain raise ``ValueError``."""
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
            return (x - lo).astype(np.int64)
        k = np.floor((x - lo) / self.width).astype(np.int64)
        return np.clip(k, 0, int(self.bins or 1) - 1)

    def decode(self, codes: np.ndarray, within: np.ndarray | None = None) -> np.ndarray:
        """Values of cell codes; ``within`` in ``[0, 1)`` places a value inside an interval cell."""
        if self.kind == "integers":
            return int(self.lower) + codes.astype(np.int64)
        if self.kind == "values":
            vals = np.asarray(list(self.values), dtype=object)
            return vals[codes]
        w = np.zeros(codes.shape) if within is None else within
        return float(self.lower) + (codes + w) * self.width


def _short(values: Sequence[Any]) -> str:
    vals = list(values)
    return repr(vals) if len(vals) <= 6 else repr(vals[:3])[:-1] + f", ... ({len(vals)} values)]"


def _cells(owner: str, name: str, size: int) -> None:
    if size < 2:
        raise NoiseawareValueError(
            f"{owner}: domains[{name!r}] must have at least 2 cells; got {size}. A one-valued attribute carries "
            "no information for the copula: drop it."
        )
    if size > MAX_CELLS:
        raise NoiseawareValueError(f"{owner}: domains[{name!r}] must have at most {MAX_CELLS} cells; got {size}.")


def _is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def _integers(owner: str, name: str, lower: Any, upper: Any) -> Domain:
    if not (_is_int(lower) and _is_int(upper)):
        raise NoiseawareTypeError(
            f"{owner}: domains[{name!r}] lower and upper must be integers for an integer domain; got "
            f"lower={lower!r}, upper={upper!r}. Add bins=K for an interval of real values."
        )
    _cells(owner, name, int(upper) - int(lower) + 1)
    return Domain("integers", lower=int(lower), upper=int(upper))


def _interval(owner: str, name: str, lower: Any, upper: Any, bins: Any) -> Domain:
    lo, hi = _finite(owner, name, "lower", lower), _finite(owner, name, "upper", upper)
    if not lo < hi:
        raise NoiseawareValueError(
            f"{owner}: domains[{name!r}] must have lower < upper; got lower={lower!r}, upper={upper!r}."
        )
    if not _is_int(bins):
        raise NoiseawareTypeError(f"{owner}: domains[{name!r}] bins must be an integer; got bins={bins!r}.")
    _cells(owner, name, int(bins))
    if not math.isfinite((hi - lo) / int(bins)) or (hi - lo) / int(bins) <= 0:
        raise NoiseawareValueError(f"{owner}: domains[{name!r}] cells would have zero width; got bins={bins!r}.")
    return Domain("interval", lower=lo, upper=hi, bins=int(bins))


def _finite(owner: str, name: str, what: str, x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float | np.integer | np.floating) or not math.isfinite(float(x)):
        raise NoiseawareValueError(f"{owner}: domains[{name!r}] {what} must be a finite number; got {what}={x!r}.")
    return float(x)


def _values(owner: str, name: str, values: Any) -> Domain:
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
    _cells(owner, name, len(vals))
    return Domain("values", values=tuple(vals))


def domain_from_spec(owner: str, name: str, spec: Any) -> Domain:
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
    >>> domain_from_spec("demo", "age", range(0, 100)).to_dict()
    {'kind': 'integers', 'lower': 0, 'upper': 99}
    >>> domain_from_spec("demo", "sex", ["f", "m"]).size
    2
    """
    if isinstance(spec, Domain):
        return Domain.from_dict(spec.to_dict(), f"domains[{name!r}]")
    if isinstance(spec, range):
        if spec.step != 1 or len(spec) == 0:
            raise NoiseawareValueError(f"{owner}: domains[{name!r}] range must have step 1; got {spec!r}.")
        return _integers(owner, name, spec.start, spec.stop - 1)
    if isinstance(spec, Mapping):
        keys = set(spec)
        if keys == {"lower", "upper"}:
            return _integers(owner, name, spec["lower"], spec["upper"])
        if keys == {"lower", "upper", "bins"}:
            return _interval(owner, name, spec["lower"], spec["upper"], spec["bins"])
        raise NoiseawareValueError(
            f"{owner}: domains[{name!r}] must be {{'lower', 'upper'}} (integers) or {{'lower', 'upper', 'bins'}} "
            f"(interval); got keys {sorted(map(str, keys))}."
        )
    if hasattr(spec, "tolist") and not isinstance(spec, np.ndarray):  # pandas Index / Categorical categories
        spec = list(spec.tolist())
    return _values(owner, name, spec)
