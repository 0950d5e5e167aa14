"""The statistic registry of :func:`noiseaware.privatize` and the helpers every statistic shares.

Each statistic is a function ``fn(data, ctx, mechanism, options) -> Release`` registered with
:func:`statistic` under the name of its schema in :mod:`noiseaware._statistics` (the release
side's typed description of the same statistic): :data:`REGISTRY` holds one
:class:`StatisticEntry` (schema and writer) per name, and ``privatize``'s :data:`STATISTICS` is a
view of its writers. The function builds its mechanism(s) first,
charges the caller's budget through :meth:`Context.charge` — before any noise is drawn — and then
draws the noise (:func:`finish` does the last two steps for single-mechanism statistics).
"""

from __future__ import annotations

import contextlib
import math
import secrets
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as v
from .._statistics import SCHEMAS, SIMULATION_NOTE, StatisticSchema
from .._validation import current_owner, owner_scope
from ..exceptions import NoiseawareTypeError, NoiseawareValueError, PrivacyWarning
from ..mechanisms import Guarantee, Mechanism
from ..release import Release, expected_guarantee, release_size_bound

__all__ = [
    "REGISTRY",
    "STATISTICS",
    "Context",
    "StatisticEntry",
    "StatisticFn",
    "censoring_counts",
    "check_size",
    "even_share",
    "finish",
    "fit_sum",
    "statistic",
]


@dataclass
class Context:
    """What a statistic needs besides the data: the budget asked for, the rng, the ledger.

    Attributes
    ----------
    epsilon, rho : float or None
        The total budget of this release (one of them).
    rng : numpy.random.Generator or None
        Simulation mode when given.
    budget : PrivacyBudget or None
        The curator's ledger; :meth:`charge` draws from it before any noise is drawn.
    """

    epsilon: float | None
    rho: float | None
    rng: np.random.Generator | None
    budget: Any = None
    charged: list[Guarantee] = field(default_factory=list)

    def require(self, kind: str) -> float:
        """The budget of ``kind`` (``"epsilon"`` or ``"rho"``), or a clear error."""
        owner = current_owner()
        if kind == "epsilon":
            if self.epsilon is None:
                raise NoiseawareValueError(f"{owner}: this mechanism needs a pure-DP budget; pass epsilon=...")
            return self.epsilon
        if self.rho is None:
            raise NoiseawareValueError(f"{owner}: this mechanism needs a zCDP budget; pass rho=...")
        return self.rho

    def charge(self, guarantee: Guarantee, label: str) -> None:
        """Charge ``guarantee`` to the budget (if any). Must be called once, before any noise."""
        if self.budget is not None:
            self.budget.charge(guarantee, label=label)
        self.charged.append(guarantee)

    def charge_release(self, guarantee: Guarantee, label: str, fix: str, **parts: Any) -> None:
        """Refuse a release too large to read back, then :meth:`charge` its ``guarantee``; before any noise.

        ``parts`` are the release's public parts for :func:`check_size` (shape, labels, mechanism,
        metadata as the statistic writes it, components); the size bound takes ``guarantee`` and the
        metadata as this run writes it (:meth:`metadata`), so the checked release is the charged one.
        ``fix`` tells the caller what to change when it is too large.
        """
        metadata = self.metadata(parts.pop("metadata"))
        check_size(fix, guarantee=guarantee, metadata=metadata, **parts)
        self.charge(guarantee, label)

    @property
    def secure(self) -> bool:
        """True unless a simulation rng was given."""
        return self.rng is None

    def key_rng(self) -> np.random.Generator:
        """Data-independent randomness that is not privacy noise (tie-breaking keys, random splits)."""
        return self.rng if self.rng is not None else np.random.default_rng(secrets.randbits(128))

    def metadata(self, meta: dict[str, Any]) -> dict[str, Any]:
        """``meta`` plus the simulation note when in simulation mode."""
        return meta if self.rng is None else {**meta, "simulation": SIMULATION_NOTE}

    def release(
        self,
        statistic: str,
        values: Any,
        labels: Sequence[tuple[str, ...]],
        mech: Mechanism,
        composition: str,
        guarantee: Guarantee,
        n: int | None,
        metadata: dict[str, Any],
        *,
        components: Sequence[Release] = (),
    ) -> Release:
        """The :class:`Release` of noisy ``values``, with this run's ``secure`` flag and :meth:`metadata`.

        ``components`` (keyword-only) are the sub-releases spent on the same data, in their order in the record.
        """
        return Release(
            statistic=statistic,
            values=values,
            labels=tuple(labels),
            mechanism=mech,
            composition=composition,
            guarantee=guarantee,
            secure=self.secure,
            n=n,
            metadata=self.metadata(metadata),
            components=tuple(components),
        )


StatisticFn = Callable[[Any, Context, "str | None", dict[str, Any]], Release]

@dataclass(frozen=True)
class StatisticEntry:
    """One statistic ``privatize`` accepts: its schema (the loader's checks) and the curator's writer.

    Attributes
    ----------
    schema : StatisticSchema
        :data:`noiseaware._statistics.SCHEMAS`'s entry of the same name (the schemas sit below the
        :class:`~noiseaware.Release` that checks them, the writers above it, so the schema is looked up,
        never written twice).
    write : callable
        ``write(data, ctx, mechanism, options) -> Release``.
    releases : tuple of str
        Every statistic a release of this writer may hold: its own, its schema's components (and
        theirs), and the ``also`` names the writer emits under another name.
    """

    schema: StatisticSchema
    write: StatisticFn
    releases: tuple[str, ...]


#: The registry: statistic name -> :class:`StatisticEntry` (schema and writer), one per statistic ``privatize``
#: accepts; filled by :func:`statistic`.
REGISTRY: dict[str, StatisticEntry] = {}


class _Writers(Mapping[str, StatisticFn]):
    """The writers of :data:`REGISTRY`, by name: a read-only view, not a second registry."""

    def __getitem__(self, name: str) -> StatisticFn:
        return REGISTRY[name].write

    def __iter__(self) -> Iterator[str]:
        return iter(REGISTRY)

    def __len__(self) -> int:
        return len(REGISTRY)


#: ``privatize``'s dispatch: statistic name -> writer, derived from :data:`REGISTRY`.
STATISTICS: Mapping[str, StatisticFn] = _Writers()


def _reachable(name: str) -> list[str]:
    out, todo = [], [name]
    while todo:
        x = todo.pop(0)
        if x not in out:
            out.append(x)
            todo.extend(SCHEMAS[x].components)
    return out


def statistic(name: str, *, also: Sequence[str] = ()) -> Callable[[StatisticFn], StatisticFn]:
    """Decorator registering the writer of statistic ``name`` (and of the ``also`` statistics it emits).

    Raises
    ------
    TypeError
        At import: ``name`` or an ``also`` name has no schema in :data:`noiseaware._statistics.SCHEMAS`,
        or ``name`` is registered twice.
    """
    missing = [x for x in (name, *also) if x not in SCHEMAS]
    if missing or name in REGISTRY:
        raise TypeError(f"statistic({name!r}): no schema for {missing}" if missing else f"{name!r} registered twice")

    def deco(fn: StatisticFn) -> StatisticFn:
        releases = tuple(dict.fromkeys(x for y in (name, *also) for x in _reachable(y)))
        REGISTRY[name] = StatisticEntry(SCHEMAS[name], fn, releases)
        return fn

    return deco


# ------------------------------------------------------------------ splitting a budget in float64
# A statistic that splits its budget composes its parts' guarantees in float64 (``Guarantee.repeat``
# multiplies, ``Guarantee.compose`` adds left to right). Rounding can make the composed total land an
# ulp above the request, and then k releases of total/k overspend total. The parts are therefore
# chosen so that the float64 composition of the parts never exceeds the total; each mechanism is
# calibrated so that its own guarantee never exceeds its part (``round_noise_up``); float64 addition
# and multiplication are monotone, so the composed guarantee never exceeds the total.
def even_share(total: float, parts: int) -> float:
    """The largest float64 ``s <= total / parts`` whose ``parts``-fold float product ``s * parts`` is ``<= total``.

    The budget of each of ``parts`` pieces composed sequentially (``Guarantee.repeat(parts)``).

    Examples
    --------
    >>> 0.3 / 37 * 37 <= 0.3, even_share(0.3, 37) * 37 <= 0.3
    (False, True)
    """
    share = total / parts
    while share > 0.0 and share * parts > total:
        share = math.nextafter(share, 0.0)
    return share


def fit_sum(total: float, before: Sequence[float], part: float, after: Sequence[float] = ()) -> float:
    """``part`` lowered, one float64 at a time, until the float sum of ``before, part, after`` is ``<= total``.

    The order is that of ``Guarantee.compose`` chained left to right. May return a value ``<= 0``
    when nothing is left (the caller refuses it).

    Examples
    --------
    >>> counts, margins = 0.1 * 0.3, 0.9 * 0.3 * 3.0 / 4.0
    >>> counts + margins + (0.9 * 0.3 - margins) <= 0.3
    False
    >>> counts + margins + fit_sum(0.3, [counts, margins], 0.9 * 0.3 - margins) <= 0.3
    True
    """

    def total_of(x: float) -> float:
        acc = 0.0
        for i, t in enumerate([*before, x, *after]):
            acc = t if i == 0 else acc + t
        return acc

    while part > 0.0 and total_of(part) > total:
        part = math.nextafter(part, 0.0)
    return part


@contextlib.contextmanager
def shares_of_checked_budget() -> Iterator[None]:
    """Calibrate mechanisms from shares of a budget that ``privatize`` has already checked (and warned about).

    ``from_epsilon`` warns for a large epsilon; a share is never larger than the total, so its
    :class:`~noiseaware.exceptions.PrivacyWarning` would only repeat the one already given.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        yield


def no_extra(options: Mapping[str, Any], allowed: set[str]) -> None:
    """Refuse options the statistic does not know."""
    owner = current_owner()
    extra = set(options) - allowed
    if extra:
        raise NoiseawareTypeError(
            f"{owner}: unexpected option(s) {sorted(extra)}; this statistic accepts {sorted(allowed) or 'none'}."
        )


def numeric_column_names(frame: Any) -> list[str]:
    """The column names of a (pandas or Dask) DataFrame whose columns are all numeric, else a TypeError."""
    bad = [str(c) for c, dt in zip(frame.columns, frame.dtypes, strict=True) if getattr(dt, "kind", "O") not in "biuf"]
    if bad:
        raise NoiseawareTypeError(
            f"{current_owner()}: data has non-numeric column(s) {bad}; encode them as numbers or drop them."
        )
    return [str(c) for c in frame.columns]


def as_matrix(data: Any, columns: Any) -> tuple[np.ndarray, list[str]]:
    """A finite float64 (n, p) matrix and its column names, from an array or DataFrame."""
    names: list[str]
    if hasattr(data, "columns") and hasattr(data, "dtypes"):  # pandas DataFrame
        names = numeric_column_names(data)
        arr = data.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        arr = v.finite_array("data", data)
        names = []
    arr = v.finite_array("data", arr)
    if arr.ndim != 2:
        raise NoiseawareValueError(f"{current_owner()}: data must be 2-D (rows are records); got shape {arr.shape}.")
    n, p = arr.shape
    if n < 2:
        raise NoiseawareValueError(f"{current_owner()}: data must have at least two rows; got {n}.")
    return arr, column_names(p, names, columns)


def column_names(p: int, names: list[str], columns: Any) -> list[str]:
    """The ``p`` column names: ``columns`` if given, else the data's own, else ``x0, x1, ...``; unique."""
    if p < 2:
        raise NoiseawareValueError(f"{current_owner()}: data must have at least two columns; got {p}.")
    if columns is not None:
        if isinstance(columns, str) or not isinstance(columns, Sequence):
            raise NoiseawareTypeError(v.message("columns", "must be a list of names", columns))
        names = [str(c) for c in columns]
        if len(names) != p:
            raise NoiseawareValueError(f"{current_owner()}: columns must name all {p} columns; got {len(names)} names.")
    if not names:
        names = [f"x{j}" for j in range(p)]
    if len(set(names)) != len(names):
        raise NoiseawareValueError(f"{current_owner()}: column names must be unique; got {names}.")
    return names


def check_size(fix: str, **parts: Any) -> None:
    """Refuse, before any budget is charged, a release whose JSON could exceed what ``Release.from_json`` reads.

    ``parts`` are those of :func:`noiseaware.release.release_size_bound` (public: shape, labels,
    mechanism, guarantee, metadata, components), so the refusal says nothing about the data.
    ``fix`` tells the caller what to change.
    """
    from .. import _io

    bound = release_size_bound(**parts)
    if bound > _io.MAX_RELEASE_BYTES:
        raise NoiseawareValueError(
            f"{current_owner()}: this release could take up to {bound:,} bytes as JSON, over the limit of "
            f"{_io.MAX_RELEASE_BYTES:,} bytes that Release.from_json reads and Release.to_json writes; it would "
            f"be spent and never read back. Nothing was charged to the budget and no noise was drawn. {fix}"
        )


def finish(
    ctx: Context,
    statistic: str,
    truth: np.ndarray,
    mech: Mechanism,
    composition: str,
    labels: Sequence[tuple[str, ...]],
    n: int | None,
    metadata: dict[str, Any],
) -> Release:
    """Charge the budget, draw the noise and assemble the :class:`Release` of one mechanism."""
    shape = tuple(np.shape(truth))
    guarantee = expected_guarantee(mech, composition, shape)
    with owner_scope(f"privatize(statistic={statistic!r})"):
        ctx.charge_release(
            guarantee,
            statistic,
            "Release fewer values (fewer cells, columns or pairs).",
            shape=shape,
            labels=labels,
            mechanism=mech,
            metadata=metadata,
        )
        noisy = mech.release(truth, rng=ctx.rng)
        return ctx.release(statistic, noisy, labels, mech, composition, guarantee, n, metadata)


def censoring_counts(x: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """``s_m = #{i : a_{m-1} <= min_j x_ij < a_m}``, ``m = 1..M+1``, with ``a_0 = 0``, ``a_{M+1} = 1``.

    Examples
    --------
    >>> x = np.array([[0.5, 0.5], [0.005, 0.995], [0.05, 0.95], [0.0, 1.0]])
    >>> censoring_counts(x, np.array([0.01, 0.1])).tolist()
    [2, 1, 1]
    """
    edges = np.concatenate([[0.0], np.asarray(candidates, dtype=np.float64), [np.inf]])
    mins = x.min(axis=1)
    idx = np.searchsorted(edges, mins, side="right") - 1  # edges[idx] <= min < edges[idx + 1]
    return np.bincount(idx, minlength=edges.size - 1)[: edges.size - 1].astype(np.int64)
