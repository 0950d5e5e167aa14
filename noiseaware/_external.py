"""Releases made elsewhere: an OpenDP measurement's output, or noise parameters a publisher states.

The two readers behind :meth:`noiseaware.Release.from_opendp` and
:meth:`noiseaware.Release.from_published`. Both build an ordinary release (statistic ``"counts"``
for integer noise, ``"vector"`` for real noise, one ``"joint"`` application of the stated
sensitivity), so every likelihood reads it like a release of :func:`noiseaware.privatize`. They
take the release class as their first argument (they are its class methods) and import nothing
above the mechanisms.

What such a release can and cannot claim: its ``mechanism`` is the noise law that OpenDP's
measurement implements (read from the measurement and checked against its privacy map) or that
the publisher states; its ``guarantee`` is the one that law gives at the stated sensitivity. That
the values were really drawn that way, and that the sensitivity is the true one, rests on whoever
made the release: ``secure`` is false (noiseaware did not draw them) and ``provenance`` names the
maker.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from . import _validation as v
from .exceptions import NoiseawareTypeError, NoiseawareValueError
from .mechanisms import (
    DiscreteGaussianMechanism,
    GaussianMechanism,
    GeometricMechanism,
    Guarantee,
    LaplaceMechanism,
    Mechanism,
)

__all__ = ["MAX_PROVENANCE", "NOISEAWARE", "PUBLISHED_FAMILIES"]

R = TypeVar("R")

#: The provenance of every release that noiseaware drew itself (:func:`noiseaware.privatize`).
NOISEAWARE = "noiseaware"
#: Longest ``provenance`` text, in characters.
MAX_PROVENANCE = 160
#: The noise families :meth:`Release.from_published` reads, with the parameters each may be stated by.
PUBLISHED_FAMILIES: dict[str, tuple[str, ...]] = {
    "geometric": ("scale", "alpha"),
    "laplace": ("scale",),
    "discrete_gaussian": ("sigma", "variance"),
    "gaussian": ("sigma", "variance"),
}
#: Probe inputs' magnitude by carrier type: far outside any plausible bounds, inside the type.
_PROBE = {"i32": 2.0**29, "i64": 2.0**60, "f64": 2.0**60}
_INTEGER_CARRIERS = ("i32", "i64")
#: Relative agreement demanded between OpenDP's privacy map and the law's guarantee.
_MAP_RTOL = 1e-9
#: ``P(|noise| > reach) < 2**-64`` for the probes (the reach of ``_statistics._rules`` for integers).
_LOG_TAIL = 64.0 * math.log(2.0)


def check_provenance(owner: str, provenance: Any) -> str:
    """``provenance`` if it is a non-empty printable text of at most :data:`MAX_PROVENANCE` characters."""
    if not isinstance(provenance, str):
        raise NoiseawareTypeError(
            v.message(owner, "provenance", "must be a string naming who made the release", provenance, limit=200)
        )
    if not provenance.strip() or len(provenance) > MAX_PROVENANCE or not provenance.isprintable():
        raise NoiseawareValueError(
            v.message(owner, "provenance", f"must be printable text of 1 to {MAX_PROVENANCE} characters", provenance,
                      limit=200)
        )
    return provenance


def _labels(owner: str, labels: Any, size: int) -> list[tuple[str, ...]]:
    if labels is None:
        return [(str(i),) for i in range(size)]
    if isinstance(labels, str | bytes) or not isinstance(labels, Sequence | np.ndarray):
        raise NoiseawareTypeError(v.message(owner, "labels", "must be a list with one label per value", labels))
    out = [tuple(str(s) for s in (lab if isinstance(lab, list | tuple) else (lab,))) for lab in labels]
    if len(out) != size:
        raise NoiseawareValueError(f"{owner}: labels must give one label per value ({size}); got {len(out)}.")
    return out


def _values(owner: str, values: Any, integer: bool) -> np.ndarray:
    try:
        arr = np.atleast_1d(np.asarray(values))
    except (TypeError, ValueError) as exc:
        raise NoiseawareTypeError(f"{owner}: values must be an array of numbers; got {values!r}.") from exc
    if arr.dtype.kind not in "iuf" or arr.size == 0:
        raise NoiseawareTypeError(v.message(owner, "values", "must be a non-empty array of numbers", values, limit=120))
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise NoiseawareValueError(f"{owner}: values must be finite; got a NaN or infinity.")
    if integer:
        if arr.dtype.kind == "f" and not np.all(arr == np.round(arr)):
            raise NoiseawareValueError(f"{owner}: values must be integers for integer noise; got {arr.ravel()[:5]}.")
        if arr.dtype.kind in "fu" and not np.all(np.abs(arr.astype(np.float64)) < 2.0**63):
            raise NoiseawareValueError(f"{owner}: values must fit in int64 for integer noise; got {arr.ravel()[:5]}.")
        return arr.astype(np.int64)
    return arr.astype(np.float64)


def _build(
    cls: type[R],
    owner: str,
    values: np.ndarray,
    mech: Mechanism,
    *,
    labels: Any,
    provenance: str,
    n: int | None,
    source: str | None,
    guarantee: Guarantee | None = None,
) -> R:
    integer = mech.output_kind == "integer"
    vals = values if integer else values.ravel()
    meta: dict[str, Any] = {"sensitivity_norm": "l1" if mech.family in ("geometric", "laplace") else "l2"}
    if source is not None:
        meta["source"] = source
    return cls(  # type: ignore[call-arg]
        statistic="counts" if integer else "vector",
        values=vals,
        labels=_labels(owner, labels, values.size),
        mechanism=mech,
        composition="joint",
        guarantee=mech.guarantee() if guarantee is None else guarantee,
        secure=False,
        n=n,
        metadata=meta,
        provenance=check_provenance(owner, provenance),
    )


# ------------------------------------------------------------------------------------------ OpenDP
def _opendp_shape(owner: str, measurement: Any) -> tuple[str, str, str]:
    """``(carrier, metric, measure)`` of an additive-noise OpenDP measurement; refuse anything else."""
    try:
        from opendp.mod import Measurement
    except ImportError as exc:  # pragma: no cover - OpenDP is a dependency
        raise NoiseawareValueError(f"{owner}: OpenDP is not installed; pip install opendp.") from exc
    if not isinstance(measurement, Measurement):
        raise NoiseawareTypeError(
            f"{owner}: measurement must be an OpenDP Measurement (e.g. opendp.measurements.make_laplace(...)); "
            f"got {type(measurement).__name__}."
        )
    domain = str(measurement.input_domain.type)
    metric = str(measurement.input_metric.type).split("<")[0]
    measure = str(measurement.output_measure.type)
    atom = domain.removeprefix("VectorDomain<").removesuffix(">")
    carrier = atom.removeprefix("AtomDomain<").removesuffix(">")
    ok_domain = atom.startswith("AtomDomain<") and carrier in _PROBE
    want = {"MaxDivergence": ("L1Distance", "AbsoluteDistance"), "ZeroConcentratedDivergence": ("L2Distance",
                                                                                               "AbsoluteDistance")}
    if not ok_domain or measure not in want or metric not in want[measure]:
        raise NoiseawareValueError(
            f"{owner}: measurement must add noise to numbers: an input domain of i32, i64 or f64 atoms (or a "
            "vector of them), the L1 or absolute distance under MaxDivergence (make_laplace, make_geometric) or "
            "the L2 or absolute distance under ZeroConcentratedDivergence (make_gaussian); got "
            f"{measurement.input_domain} with {measurement.input_metric} -> {measurement.output_measure}. "
            "A chained measurement (a transformation >> noise) is not read: pass the noise measurement itself."
        )
    return carrier, metric, measure


def _privacy_map(owner: str, measurement: Any, d_in: Any) -> float:
    try:
        return float(measurement.map(d_in))
    except Exception as exc:  # OpenDP raises its own OpenDPException on a bad distance
        raise NoiseawareValueError(f"{owner}: OpenDP's privacy map refused d_in={d_in!r}: {exc}") from None


def _probe(owner: str, measurement: Any, carrier: str, reach: float) -> None:
    """Invoke the measurement on public probes ``(-P, 0, P)``: each output must lie within the noise's reach.

    A censored measurement (``make_geometric`` with ``bounds``, which clamps its output to them) or
    any output that is not ``input + noise`` of the read scale fails this. The probes are public
    constants, not data, so invoking the measurement spends nothing.
    """
    big = _PROBE[carrier]
    probes: list[Any] = [-big, 0.0, big]
    if carrier in _INTEGER_CARRIERS:
        probes = [int(x) for x in probes]
    vector = str(measurement.input_domain.type).startswith("VectorDomain<")
    size = getattr(measurement.input_domain, "size", None) if vector else None
    try:
        if vector:
            k = size or 3
            arg = [probes[i % 3] for i in range(k)]
            out = list(measurement(arg))
        else:
            arg = probes
            out = [measurement(x) for x in probes]
    except Exception as exc:
        raise NoiseawareValueError(
            f"{owner}: the measurement could not be invoked on the public probe inputs {probes}: {exc}"
        ) from None
    gap = float(max(abs(o - x) for o, x in zip(out, arg, strict=True)))  # exact for integers
    if not gap <= reach:
        raise NoiseawareValueError(
            f"{owner}: the measurement's output is not input + noise of the scale its privacy map implies: on the "
            f"public probes {probes} it moved a value by {gap:.6g}, beyond the noise's reach {reach:.6g} "
            "(probability below 2**-64). A make_geometric with bounds clamps its output to them; rebuild it "
            "without bounds, or model the censoring yourself."
        )


def _snap(measurement: Any, d: float, read: float, pure: bool) -> float:
    """The shortest decimal scale whose rebuilt measurement has exactly the same privacy map as ``measurement``.

    The scale read off the map, ``d / map(d)``, can be a few units in the last place off the
    scale the measurement was built with (the map rounds up). Rebuilding the measurement on its own
    input domain and metric with the read scale rounded to 1, 2, ..., 17 significant digits, the
    first whose map equals the measurement's exactly at ``d``, ``2 d`` and ``3 d`` is returned;
    ``read`` itself when none does (e.g. a float measurement built with its own lattice ``k``).
    """
    from .mechanisms._opendp import _dp

    want = [measurement.map(d * k) for k in (1, 2, 3)]
    with _dp() as dp:
        make = dp.m.make_laplace if pure else dp.m.make_gaussian
        for digits in range(1, 18):
            cand = float(f"{read:.{digits}g}")
            try:
                twin = make(measurement.input_domain, measurement.input_metric, scale=cand)
                if [twin.map(d * k) for k in (1, 2, 3)] == want:
                    return cand
            except Exception:  # a candidate OpenDP refuses is just not the scale
                continue
    return read


def from_opendp(  # noqa: D417 - cls is bound: these are Release's class methods
    cls: type[R],
    measurement: Any,
    value: Any,
    *,
    d_in: Any,
    labels: Sequence[Any] | None = None,
    provenance: str | None = None,
    n: int | None = None,
) -> R:
    r"""A release of the output of an OpenDP additive-noise measurement, its law read from the measurement.

    The measurement's input domain (integer or float atoms), input metric and output measure
    fix the noise family; its privacy map at ``d_in`` fixes the scale:

    * ``make_laplace`` or ``make_geometric`` on integers (``MaxDivergence``): ``geometric``
      (the discrete Laplace), ``scale = d_in / map(d_in)``;
    * ``make_gaussian`` on integers (``ZeroConcentratedDivergence``): ``discrete_gaussian``,
      ``sigma = d_in / sqrt(2 map(d_in))``;
    * ``make_laplace`` on floats: ``laplace``, ``scale = d_in / map(d_in)``;
    * ``make_gaussian`` on floats: ``gaussian``, ``sigma = d_in / sqrt(2 map(d_in))``.

    (``epsilon = d_in / scale`` for the Laplace laws; ``rho = d_in^2 / (2 sigma^2)`` for the
    Gaussian ones, Canonne, Kamath & Steinke (2020), *The Discrete Gaussian for Differential
    Privacy*, Theorem 4.) The read law is then checked: its guarantee must equal OpenDP's map at
    ``d_in``, ``2 d_in`` and ``3 d_in`` (an additive mechanism's map is linear, or quadratic under
    zCDP, in the distance), and the measurement, invoked on the public probes ``(-P, 0, P)``
    (``P = 2**60``, ``2**29`` for i32), must move each by less than the noise's ``2**-64`` reach,
    which refuses a censored ``make_geometric(..., bounds=...)``.

    The release has statistic ``"counts"`` (integer noise) or ``"vector"`` (real noise), one
    ``"joint"`` application with ``mechanism.sensitivity = d_in`` (the L1 or L2 sensitivity of the
    whole vector), OpenDP's map at ``d_in`` as its guarantee (equal to the read law's up to
    OpenDP's upward rounding in the last digit), ``secure=False`` (noiseaware did not
    draw the value, and cannot tell that it came from this measurement) and
    ``metadata.source`` describing the measurement and its map.

    Parameters
    ----------
    measurement : opendp.mod.Measurement
        The noise measurement itself (``make_laplace``, ``make_geometric`` without ``bounds``,
        ``make_gaussian``), over an ``atom_domain`` or ``vector_domain`` of ``i32``, ``i64`` or
        ``f64``; not a chain ``transformation >> noise``.
    value : scalar or array_like
        What the measurement returned.
    d_in : int or float
        The input distance (sensitivity) at which the guarantee is stated: an integer for the
        integer L1 / absolute distance, a float for the L2 distance and float inputs.
    labels : sequence, optional
        One label (or tuple of labels) per value; default ``("0",), ("1",), ...``.
    provenance : str, optional
        Who made the release; default ``"OpenDP <version>"``.
    n : int, optional
        Number of records, when public.

    Returns
    -------
    Release

    Raises
    ------
    NoiseawareTypeError
        ``measurement`` is not an OpenDP ``Measurement``; ``value`` is not numeric.
    NoiseawareValueError
        The measurement is not additive noise of a family above; its map disagrees with the
        read law; a probe moved beyond the noise's reach; ``d_in`` is refused by the map.

    Examples
    --------
    >>> import opendp.prelude as dp, noiseaware as na
    >>> dp.enable_features("contrib")
    >>> space = dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64")
    >>> meas = dp.m.make_laplace(*space, scale=2.5)
    >>> rel = na.Release.from_opendp(meas, meas([12, 30, 7]), d_in=1)
    >>> rel.mechanism.family, rel.mechanism.scale, rel.guarantee.epsilon, rel.secure
    ('geometric', 2.5, 0.4, False)
    >>> dp.disable_features("contrib")
    """
    owner = "Release.from_opendp"
    carrier, _metric, measure = _opendp_shape(owner, measurement)
    integer = carrier in _INTEGER_CARRIERS
    pure = measure == "MaxDivergence"
    d: int | float
    if integer and pure:
        d = v.integer(owner, "d_in", d_in, minimum=1, maximum=v.INT_BOUND)
    else:
        d = v.positive(owner, "d_in", d_in)
    out = _privacy_map(owner, measurement, d)
    if not (math.isfinite(out) and out > 0):
        raise NoiseawareValueError(f"{owner}: OpenDP's privacy map gives {out!r} at d_in={d!r}; expected a finite "
                                   "loss > 0.")
    mech: Mechanism
    if pure:
        scale = _snap(measurement, d, float(d) / out, pure)
        mech = GeometricMechanism(scale=scale, sensitivity=int(d)) if integer else LaplaceMechanism(scale, float(d))
        law_loss = mech.guarantee().epsilon
        reach = _LOG_TAIL * scale + 1.0
    else:
        sigma = _snap(measurement, d, float(d) / math.sqrt(2.0 * out), pure)
        mech = DiscreteGaussianMechanism(sigma, float(d)) if integer else GaussianMechanism(sigma, float(d))
        law_loss = mech.guarantee().rho
        reach = sigma * math.sqrt(2.0 * _LOG_TAIL) + 1.0
    for k in (1, 2, 3):
        got = _privacy_map(owner, measurement, d * k)
        want = float(law_loss) * (k if pure else k * k)  # type: ignore[arg-type]
        if not math.isclose(got, want, rel_tol=_MAP_RTOL):
            raise NoiseawareValueError(
                f"{owner}: OpenDP's privacy map at d_in={d * k!r} is {got!r}, but the {mech.family} law read at "
                f"d_in={d!r} gives {want!r}: the measurement is not one additive-noise mechanism."
            )
    _probe(owner, measurement, carrier, reach)
    values = _values(owner, value, integer)
    from importlib.metadata import version as _version

    version = _version("opendp")
    source = (
        f"OpenDP {version}: {measurement.input_domain}, {measurement.input_metric} -> {measurement.output_measure}; "
        f"map({d!r}) = {out!r}"
    )
    return _build(
        cls,
        owner,
        values,
        mech,
        labels=labels,
        provenance=f"OpenDP {version}" if provenance is None else provenance,
        n=n,
        source=source,
        guarantee=Guarantee(epsilon=out) if pure else Guarantee(rho=out),
    )


# ---------------------------------------------------------------------------------- published noise
def _one_mechanism(owner: str, family: str, param: str, x: Any, sensitivity: Any, where: str) -> Mechanism:
    """The mechanism of ``family`` with noise parameter ``param = x`` (``where`` names it in errors)."""
    x = v.open_unit(owner, where, x) if param == "alpha" else v.positive(owner, where, x)
    if family == "geometric":
        scale = -1.0 / math.log(x) if param == "alpha" else x
        return GeometricMechanism(scale=scale, sensitivity=sensitivity)
    if family == "laplace":
        return LaplaceMechanism(scale=x, sensitivity=sensitivity)
    sigma = math.sqrt(x) if param == "variance" else x
    if family == "discrete_gaussian":
        return DiscreteGaussianMechanism(sigma=sigma, sensitivity=sensitivity)
    return GaussianMechanism(sigma=sigma, sensitivity=sensitivity)


def from_published(  # noqa: D417 - cls is bound: these are Release's class methods
    cls: type[R],
    values: Any,
    *,
    family: str,
    provenance: str,
    scale: Any = None,
    alpha: Any = None,
    sigma: Any = None,
    variance: Any = None,
    sensitivity: Any = 1,
    groups: Sequence[Any] | None = None,
    labels: Sequence[Any] | None = None,
    n: int | None = None,
    source: str | None = None,
) -> R | dict[str, R]:
    r"""A release (or one per group) of noisy values whose noise law a publisher states.

    For statistical agencies' and other tools' releases (the 2020 US Census Noisy Measurement
    Files state a discrete Gaussian variance per query; Tumult Analytics or SmartNoise reports
    state a scale): the stated parameter becomes the release's mechanism, so every likelihood
    reads it with ``from_release`` like a release of :func:`noiseaware.privatize`.

    ============================  ==============================================================
    ``family``                    stated by
    ============================  ==============================================================
    ``"geometric"``               ``scale`` or ``alpha`` (:math:`\alpha = e^{-1/\text{scale}}`),
                                  :math:`P(k) \propto \alpha^{|k|}`
    ``"discrete_gaussian"``       ``sigma`` or ``variance`` :math:`= \sigma^2`,
                                  :math:`P(k) \propto e^{-k^2/(2\sigma^2)}`
    ``"laplace"``                 ``scale`` :math:`b`, density :math:`e^{-|x|/b}/(2b)`
    ``"gaussian"``                ``sigma`` or ``variance`` :math:`= \sigma^2`
    ============================  ==============================================================

    ``variance`` of the discrete Gaussian is its parameter :math:`\sigma^2` (what the Census
    Bureau's files state); the law's own variance is at most :math:`\sigma^2` (Canonne, Kamath &
    Steinke (2020), *The Discrete Gaussian for Differential Privacy*) and, by direct summation,
    below it by 2.1e-7 relative at :math:`\sigma = 1` and by less than 1e-31 at :math:`\sigma = 2`
    (14% at :math:`\sigma = 0.5`).

    Integer families give statistic ``"counts"`` (the values' shape kept), real ones
    ``"vector"`` (flattened). Each release is one ``"joint"`` application of the law with the
    stated L1 (Laplace laws) or L2 (Gaussian laws) ``sensitivity`` of its values, and records
    the guarantee that law gives at that sensitivity (``sensitivity / scale``-DP or
    ``sensitivity**2 / (2 sigma**2)``-zCDP). That guarantee is what the stated parameters
    *imply*; that the noise was drawn that way and the sensitivity is right rest on the
    publisher, named by ``provenance``, and the release has ``secure=False``.

    Parameters
    ----------
    values : array_like
        The published noisy values (integers for the integer families).
    family : {"geometric", "discrete_gaussian", "laplace", "gaussian"}
        The noise law.
    provenance : str
        Who made the release, e.g. ``"US Census Bureau 2020 NMF"`` (printable, at most 160 characters).
    scale, alpha, sigma, variance : float or mapping, exactly one
        The stated noise parameter: a number for all values, or with ``groups`` a mapping from
        each group key to its parameter (per query, per geographic level, or per value with one
        group per value).
    sensitivity : int or float, default 1
        L1 / L2 sensitivity of each release's values together (an integer for ``geometric``).
    groups : sequence, optional
        One group key per value (converted to ``str``); then one release per group is returned.
        Each records its own guarantee; groups about the same people compose sequentially.
    labels : sequence, optional
        One label (or tuple of labels) per value; default ``("0",), ("1",), ...``.
    n : int, optional
        Number of records, when public.
    source : str, optional
        Free text kept as ``metadata.source`` (e.g. the file and the table the values came from).

    Returns
    -------
    Release or dict of str to Release
        One release, or with ``groups`` one per group key (in order of first appearance), each
        holding its values in their original order.

    Raises
    ------
    NoiseawareValueError
        Unknown family; not exactly one parameter of the family; a parameter out of range; a
        group without a parameter or a parameter without values; non-integer values for an
        integer family; an invalid ``provenance``.
    NoiseawareTypeError
        Non-numeric values, labels or groups of the wrong type.

    Examples
    --------
    >>> import noiseaware as na
    >>> rel = na.Release.from_published([1021, 17, 0], family="discrete_gaussian", variance=4.0,
    ...                                 provenance="a statistics office")
    >>> rel.mechanism.sigma, rel.guarantee.rho, rel.provenance, rel.secure
    (2.0, 0.125, 'a statistics office', False)
    >>> rels = na.Release.from_published([5, 9, 130], family="geometric", alpha={"tract": 0.5, "county": 0.25},
    ...                                  groups=["tract", "tract", "county"], provenance="an agency")
    >>> {k: (r.values.tolist(), round(r.mechanism.alpha, 12)) for k, r in rels.items()}
    {'tract': ([5, 9], 0.5), 'county': ([130], 0.25)}
    """
    owner = "Release.from_published"
    if family not in PUBLISHED_FAMILIES:
        v.fail(owner, "family", f"must be one of {list(PUBLISHED_FAMILIES)}", family)
    given = {k: x for k, x in {"scale": scale, "alpha": alpha, "sigma": sigma, "variance": variance}.items()
             if x is not None}
    allowed = PUBLISHED_FAMILIES[family]
    if len(given) != 1 or next(iter(given)) not in allowed:
        raise NoiseawareValueError(
            f"{owner}: give exactly one noise parameter of family {family!r}, one of {list(allowed)}; got "
            f"{sorted(given) or 'none'}."
        )
    param, stated = next(iter(given.items()))
    integer = family in ("geometric", "discrete_gaussian")
    if integer and family == "geometric":
        sens: Any = v.integer(owner, "sensitivity", sensitivity, minimum=1, maximum=v.INT_BOUND)
    else:
        sens = v.positive(owner, "sensitivity", sensitivity)
    vals = _values(owner, values, integer)
    labs = _labels(owner, labels, vals.size)
    check_provenance(owner, provenance)
    if source is not None and not isinstance(source, str):
        raise NoiseawareTypeError(v.message(owner, "source", "must be a string", source))
    if groups is None:
        if isinstance(stated, Mapping) or (isinstance(stated, Sequence | np.ndarray) and not isinstance(stated, str)):
            raise NoiseawareValueError(
                f"{owner}: {param} is given per group or per value; pass groups= (one group key per value) and "
                f"{param} as a mapping from group key to its value."
            )
        mech = _one_mechanism(owner, family, param, stated, sens, param)
        return _build(cls, owner, vals, mech, labels=labs, provenance=provenance, n=n, source=source)
    if isinstance(groups, str | bytes) or not isinstance(groups, Sequence | np.ndarray):
        raise NoiseawareTypeError(v.message(owner, "groups", "must be a list with one group key per value", groups))
    keys = [str(g) for g in groups]
    if len(keys) != vals.size:
        raise NoiseawareValueError(f"{owner}: groups must give one group key per value ({vals.size}); got {len(keys)}.")
    if not isinstance(stated, Mapping):
        raise NoiseawareTypeError(
            f"{owner}: with groups=, {param} must be a mapping from each group key to its {param}; got "
            f"{type(stated).__name__}."
        )
    table = {str(k): x for k, x in stated.items()}
    missing = sorted(set(keys) - set(table))
    if missing:
        raise NoiseawareValueError(f"{owner}: {param} has no value for group(s) {missing[:10]}.")
    unused = sorted(set(table) - set(keys))
    if unused:
        raise NoiseawareValueError(f"{owner}: {param} names group(s) {unused[:10]} that no value belongs to.")
    flat, where = vals.ravel(), np.asarray(keys)
    out: dict[str, R] = {}
    for key in dict.fromkeys(keys):
        idx = np.flatnonzero(where == key)
        mech = _one_mechanism(owner, family, param, table[key], sens, f"{param}[{key!r}]")
        out[key] = _build(cls, owner, flat[idx], mech, labels=[labs[i] for i in idx], provenance=provenance,
                          n=n, source=source)
    return out
