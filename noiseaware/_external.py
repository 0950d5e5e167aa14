"""Releases made elsewhere: an OpenDP measurement's output, or noise parameters a publisher states.

The two readers behind :meth:`noiseaware.Release.from_opendp` and
:meth:`noiseaware.Release.from_published`. Both build an ordinary release (statistic ``"counts"``
for integer noise, ``"vector"`` for real noise, one ``"joint"`` application of the stated
sensitivity), so every likelihood reads it like a release of :func:`noiseaware.privatize`. They
take the release class as their first argument (they are its class methods) and import nothing
above the mechanisms.

What such a release can and cannot claim: its ``mechanism`` is the noise law that OpenDP's
measurement implements (named by the OpenDP constructor that built it, and checked against its
privacy map and on public probes) or that the publisher states; its ``guarantee`` is the one that
law gives at the stated sensitivity. That the values were really drawn that way, and that the
sensitivity is the true one, rests on whoever made the release: ``secure`` is false (noiseaware
did not draw them) and ``provenance`` names the maker, never ``"noiseaware"``.

The rules on who made a record (:func:`check_provenance`, :func:`check_secure_maker`) are also
those of :class:`noiseaware.hierarchy.NoisyHierarchy`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from . import _validation as v
from ._validation import current_owner, owned
from .exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError
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


def check_provenance(provenance: Any, *, external: bool = False) -> str:
    """``provenance`` if it is a non-empty printable text of at most :data:`MAX_PROVENANCE` characters.

    With ``external=True`` (the readers of releases made elsewhere) the name ``"noiseaware"`` (in any
    case, spaces aside) is refused too: it is reserved for what noiseaware drew itself.
    """
    if not isinstance(provenance, str):
        raise NoiseawareTypeError(
            v.message("provenance", "must be a string naming who made the release", provenance, limit=200)
        )
    if not provenance.strip() or len(provenance) > MAX_PROVENANCE or not provenance.isprintable():
        raise NoiseawareValueError(
            v.message("provenance", f"must be printable text of 1 to {MAX_PROVENANCE} characters", provenance,
                      limit=200)
        )
    if external and provenance.strip().casefold() == NOISEAWARE:
        raise NoiseawareValueError(
            v.message("provenance", f"must name who made the release; {NOISEAWARE!r} is reserved for releases "
                      "noiseaware drew itself (privatize)", provenance,
                      "Name the maker, e.g. 'OpenDP 0.16' or 'US Census Bureau 2020 NMF'.")
        )
    return provenance


def made_by_noiseaware(provenance: str) -> bool:
    """True when a record's ``provenance`` says noiseaware drew it (exactly :data:`NOISEAWARE`)."""
    return provenance == NOISEAWARE


def check_secure_maker(provenance: str, secure: bool) -> None:
    """Refuse ``secure=True`` on a record whose ``provenance`` says noiseaware did not draw it.

    ``secure`` means noiseaware drew the noise with OpenDP's exact samplers; a record made
    elsewhere (OpenDP's own output, an agency's file) can state its law but not that. The one rule
    of :class:`~noiseaware.Release` and :class:`~noiseaware.hierarchy.NoisyHierarchy`.
    """
    owner = current_owner()
    if secure and not made_by_noiseaware(provenance):
        raise ReleaseFormatError(
            f"{owner}: field 'secure' is true but field 'provenance' is {provenance!r}: only a record noiseaware drew "
            f"itself (provenance {NOISEAWARE!r}) can be 'secure'; a record made elsewhere has secure false. Refusing "
            "an inconsistent (possibly tampered) record."
        )


def check_record_provenance(provenance: Any) -> str:
    """:func:`check_provenance` for a record's field: a failure is a :class:`ReleaseFormatError` naming the field."""
    try:
        return check_provenance(provenance)
    except (NoiseawareValueError, NoiseawareTypeError) as exc:
        raise ReleaseFormatError(str(exc)) from None


def _labels(labels: Any, size: int) -> list[tuple[str, ...]]:
    if labels is None:
        return [(str(i),) for i in range(size)]
    if isinstance(labels, str | bytes) or not isinstance(labels, Sequence | np.ndarray):
        raise NoiseawareTypeError(v.message("labels", "must be a list with one label per value", labels))
    out = [tuple(str(s) for s in (lab if isinstance(lab, list | tuple) else (lab,))) for lab in labels]
    if len(out) != size:
        raise NoiseawareValueError(f"{current_owner()}: labels must give one label per value ({size}); got {len(out)}.")
    return out


def _values(values: Any, integer: bool) -> np.ndarray:
    owner = current_owner()
    try:
        arr = np.atleast_1d(np.asarray(values))
    except (TypeError, ValueError) as exc:
        raise NoiseawareTypeError(f"{owner}: values must be an array of numbers; got {values!r}.") from exc
    if arr.dtype.kind not in "iuf" or arr.size == 0:
        raise NoiseawareTypeError(v.message("values", "must be a non-empty array of numbers", values, limit=120))
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
        labels=_labels(labels, values.size),
        mechanism=mech,
        composition="joint",
        guarantee=mech.guarantee() if guarantee is None else guarantee,
        secure=False,
        n=n,
        metadata=meta,
        provenance=check_provenance(provenance, external=True),
    )


# ------------------------------------------------------------------------------------------ OpenDP
#: The OpenDP constructors whose noise law is named here: the law by the carrier (integers or floats).
_NAMED_LAWS: dict[str, tuple[str, str]] = {
    "make_laplace": ("geometric", "laplace"),
    "make_geometric": ("geometric", "geometric"),
    "make_gaussian": ("discrete_gaussian", "gaussian"),
}
#: The output measure each named constructor must have (its privacy map is stated in it).
_NAMED_MEASURE = {"make_laplace": "MaxDivergence", "make_geometric": "MaxDivergence",
                  "make_gaussian": "ZeroConcentratedDivergence"}
#: Combinators that change the accounting of a measurement, not its noise.
_ADAPTERS = ("make_pureDP_to_zCDP", "make_zCDP_to_approxDP", "make_approximate", "make_fix_delta",
             "make_fixed_approxDP_to_approxDP", "make_population_amplification")
#: The largest value of each distance type d_in may take: its map is checked at 3 d_in.
_DISTANCE_MAX: dict[str, int | float] = {"i32": 2**31 - 1, "i64": 2**63 - 1, "f64": sys.float_info.max}


def _constructor(measurement: Any) -> tuple[str, dict[str, Any]]:
    """``(name, keyword arguments)`` of the OpenDP constructor that built ``measurement``; refuse every other kind.

    OpenDP's Python constructors record their own call on the measurement (``__opendp_dict__``, what
    ``opendp.prelude.serialize`` writes); a measurement that is not the direct output of
    ``make_laplace``, ``make_geometric`` or ``make_gaussian`` (a combinator's, a chain's, a
    composition's, another mechanism's) adds noise of a law this reader cannot name.
    """
    owner = current_owner()
    record = getattr(measurement, "__opendp_dict__", None)
    if not isinstance(record, Mapping) or not isinstance(record.get("__kwargs__"), Mapping):
        raise NoiseawareValueError(
            f"{owner}: the measurement does not say which OpenDP constructor built it (it has no __opendp_dict__), "
            "so its noise law cannot be named. Pass a measurement built by opendp.measurements.make_laplace, "
            "make_geometric or make_gaussian (or their then_* forms)."
        )
    name, module = record.get("__function__"), record.get("__module__")
    pass_inner = "Pass the noise measurement itself (make_laplace, make_geometric or make_gaussian) and its own output."
    if module == "combinators" and name in _ADAPTERS:
        raise NoiseawareValueError(
            f"{owner}: the measurement is {name}(...), a measure adapter: it changes how OpenDP accounts the "
            "privacy loss, not the noise, whose law is that of the measurement inside it (e.g. still Laplace "
            f"under make_pureDP_to_zCDP). {pass_inner} Convert the guarantee afterwards if you need another measure."
        )
    if module == "combinators" and name == "make_chain_pm":
        raise NoiseawareValueError(
            f"{owner}: the measurement is make_chain_pm(...), noise followed by post-processing (a measurement >> "
            "function): its output is a function of the noisy values, not input + noise, so the values do not "
            f"follow the noise law. {pass_inner} Post-process the release's values in your model instead."
        )
    if module == "combinators" and name == "make_chain_mt":
        raise NoiseawareValueError(
            f"{owner}: the measurement is make_chain_mt(...), a chained measurement (a transformation >> noise). "
            f"{pass_inner} Its d_in is the transformation's sensitivity (the transformation's map at your d_in)."
        )
    if module == "combinators" and "composition" in str(name):
        raise NoiseawareValueError(
            f"{owner}: the measurement is {name}(...), a composition: it releases several outputs, each with its own "
            "noise law. Call Release.from_opendp once per noise measurement, with that measurement's own output; "
            "the releases' guarantees compose sequentially."
        )
    if module != "measurements" or name not in _NAMED_LAWS:
        raise NoiseawareValueError(
            f"{owner}: measurement must add noise to numbers with a law noiseaware can name: one built by "
            f"make_laplace, make_geometric or make_gaussian; got one built by {module}.{name}(...). Anything "
            "composed, adapted or post-processed is not read: pass the noise measurement itself."
        )
    return str(name), dict(record["__kwargs__"])


def _opendp_shape(measurement: Any) -> tuple[str, dict[str, Any], str, str, str]:
    """``(constructor, its keyword arguments, carrier, distance type, measure)`` of a named noise measurement.

    Anything else is refused.
    """
    owner = current_owner()
    try:
        from opendp.mod import Measurement
    except ImportError as exc:  # pragma: no cover - OpenDP is a dependency
        raise NoiseawareValueError(f"{owner}: OpenDP is not installed; pip install opendp.") from exc
    if not isinstance(measurement, Measurement):
        raise NoiseawareTypeError(
            f"{owner}: measurement must be an OpenDP Measurement (e.g. opendp.measurements.make_laplace(...)); "
            f"got {type(measurement).__name__}."
        )
    name, kwargs = _constructor(measurement)
    domain = str(measurement.input_domain.type)
    metric = str(measurement.input_metric.type).split("<")[0]
    measure = str(measurement.output_measure.type)
    distance = str(measurement.input_distance_type)
    atom = domain.removeprefix("VectorDomain<").removesuffix(">")
    carrier = atom.removeprefix("AtomDomain<").removesuffix(">")
    ok_domain = atom.startswith("AtomDomain<") and carrier in _PROBE
    metrics = ("L1Distance", "AbsoluteDistance") if measure == "MaxDivergence" else ("L2Distance", "AbsoluteDistance")
    if not ok_domain or measure != _NAMED_MEASURE[name] or metric not in metrics or distance not in _DISTANCE_MAX:
        raise NoiseawareValueError(
            f"{owner}: measurement must add noise to numbers: an input domain of i32, i64 or f64 atoms (or a "
            "vector of them), the L1 or absolute distance under MaxDivergence (make_laplace, make_geometric) or "
            "the L2 or absolute distance under ZeroConcentratedDivergence (make_gaussian), in i32, i64 or f64; got "
            f"{name}({measurement.input_domain}, {measurement.input_metric}) -> {measurement.output_measure}."
        )
    if name == "make_geometric" and kwargs.get("bounds") is not None:
        raise NoiseawareValueError(
            f"{owner}: the measurement is make_geometric(..., bounds={kwargs['bounds']!r}): a make_geometric with "
            "bounds clamps its output to them, so the values are censored, not input + noise. Rebuild it without "
            "bounds, or model the censoring yourself."
        )
    if kwargs.get("k") is not None:
        raise NoiseawareValueError(
            f"{owner}: the measurement was built with k={kwargs['k']!r}: its noise lies on a lattice of spacing "
            "2**k, a law noiseaware does not model. Rebuild it without k (OpenDP's finest lattice)."
        )
    return name, kwargs, carrier, distance, measure


def _privacy_map(measurement: Any, d_in: Any) -> float:
    try:
        return float(measurement.map(d_in))
    except Exception as exc:  # OpenDP raises its own OpenDPException (or a ValueError) on a bad distance
        raise NoiseawareValueError(f"{current_owner()}: OpenDP's privacy map refused d_in={d_in!r}: {exc}") from None


def _d_in(d_in: Any, distance: str, geometric: bool) -> int | float:
    """``d_in`` in the measurement's distance type, small enough that the map can be checked at ``3 d_in``.

    Integral for an integer distance and for the geometric law (whose sensitivity is an integer,
    even under a float metric); returned as a float for a float distance.
    """
    top = _DISTANCE_MAX[distance]
    rule = f"so that OpenDP's privacy map can be checked at 3 d_in in its distance type {distance}"
    if distance == "f64" and not geometric:
        d = v.positive("d_in", d_in)
        if d > top / 3.0:
            v.refuse("d_in", f"must be at most {top / 3.0:.6g} {rule}", d_in)
        return d
    limit = min(int(top) // 3, v.INT_BOUND) if geometric else int(top) // 3
    d_int = v.integer("d_in", d_in, minimum=1)
    if d_int > limit:
        v.refuse("d_in", f"must be an integer of at most {limit} {rule}", d_in)
    return float(d_int) if distance == "f64" else d_int


def _probe(measurement: Any, carrier: str, reach: float) -> None:
    """Invoke the measurement on public probes ``(-P, 0, P)``: each output must lie within the noise's reach.

    A measurement whose output is not ``input + noise`` of the read scale fails this. The probes are
    public constants, not data, so invoking the measurement spends nothing.
    """
    owner = current_owner()
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
            f"{owner}: the measurement's output is not input + noise of the scale it was built with: on the public "
            f"probes {probes} it moved a value by {gap:.6g}, beyond the noise's reach {reach:.6g} (probability "
            "below 2**-64)."
        )


def _output_size(measurement: Any, values: np.ndarray) -> None:
    """The values must be one output of the measurement: one number for an atom, ``size`` for a sized vector."""
    owner = current_owner()
    domain = measurement.input_domain
    if not str(domain.type).startswith("VectorDomain<"):
        want: int | None = 1
        what = "an atom measurement returns one number per invocation"
    else:
        want = getattr(domain, "size", None)
        what = f"its input domain is a vector of size {want}"
    if want is not None and values.size != want:
        raise NoiseawareValueError(
            f"{owner}: value must be one output of the measurement, {want} number(s) ({what}); got {values.size}. "
            "Outputs of several invocations are several releases, whose guarantees compose: call from_opendp "
            "once per output."
        )


@owned("Release.from_opendp")
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
    r"""A release of the output of an OpenDP additive-noise measurement, its law named by its constructor.

    Only a measurement whose noise law noiseaware can name is read: the direct output of one of
    OpenDP's constructors below (or its ``then_*`` form), which record their own call on the
    measurement (``measurement.__opendp_dict__``, what ``opendp.prelude.serialize`` writes). The
    constructor and the input domain's carrier fix the family, the constructor's ``scale`` the
    noise parameter:

    * ``make_laplace`` or ``make_geometric`` (without ``bounds``) on integers
      (``MaxDivergence``): ``geometric`` (the discrete Laplace) of that ``scale``;
    * ``make_gaussian`` on integers (``ZeroConcentratedDivergence``): ``discrete_gaussian``
      with ``sigma = scale``;
    * ``make_laplace`` on floats: ``laplace`` of that ``scale``;
    * ``make_gaussian`` on floats: ``gaussian`` with ``sigma = scale``.

    Anything else is refused with what to pass instead: a measure adapter
    (``make_pureDP_to_zCDP`` changes the accounting, not the noise, which stays Laplace), a
    chain with post-processing (``make_chain_pm``, ``measurement >> function``: the output is a
    function of the noisy values), a chain ``transformation >> noise`` (``make_chain_mt``), a
    composition (several outputs, several laws), any other mechanism, a ``make_geometric`` with
    ``bounds`` (it clamps its output) and a measurement built with a lattice ``k``.

    The named law is then checked against the measurement: its guarantee
    (``epsilon = d_in / scale`` for the Laplace laws; ``rho = d_in^2 / (2 sigma^2)`` for the
    Gaussian ones, Canonne, Kamath & Steinke (2020), *The Discrete Gaussian for Differential
    Privacy*, Theorem 4) must equal OpenDP's map at ``d_in``, ``2 d_in`` and ``3 d_in`` (relative
    1e-9), and the measurement, invoked on the public probes ``(-P, 0, P)`` (``P = 2**60``,
    ``2**29`` for i32), must move each by less than the noise's ``2**-64`` reach. ``value`` must
    be one output of the measurement: one number for an atom domain, ``size`` numbers for a
    vector domain of fixed size.

    The release has statistic ``"counts"`` (integer noise) or ``"vector"`` (real noise), one
    ``"joint"`` application with ``mechanism.sensitivity = d_in`` (the L1 or L2 sensitivity of the
    whole vector), OpenDP's map at ``d_in`` as its guarantee (equal to the named law's up to
    OpenDP's upward rounding in the last digit), ``secure=False`` (noiseaware did not
    draw the value, and cannot tell that it came from this measurement) and
    ``metadata.source`` describing the measurement and its map.

    Parameters
    ----------
    measurement : opendp.mod.Measurement
        The noise measurement itself (``make_laplace``, ``make_geometric`` without ``bounds``,
        ``make_gaussian``, without ``k``), over an ``atom_domain`` or ``vector_domain`` of
        ``i32``, ``i64`` or ``f64``, with an i32, i64 or f64 distance.
    value : scalar or array_like
        What the measurement returned (one invocation).
    d_in : int or float
        The input distance (sensitivity) at which the guarantee is stated, in the type of the
        measurement's input metric: an integer for an integer distance (``l1_distance(T="i64")``,
        ``absolute_distance(T="i64")``, also under ``make_gaussian``), a float for a float
        distance; at most a third of the type's largest value (the map is checked at ``3 d_in``).
    labels : sequence, optional
        One label (or tuple of labels) per value; default ``("0",), ("1",), ...``.
    provenance : str, optional
        Who made the release; default ``"OpenDP <version>"``. Not ``"noiseaware"``, which is
        reserved for releases noiseaware drew itself.
    n : int, optional
        Number of records, when public.

    Returns
    -------
    Release

    Raises
    ------
    NoiseawareTypeError
        ``measurement`` is not an OpenDP ``Measurement``; ``value`` is not numeric; ``d_in`` is
        not an integer for an integer distance.
    NoiseawareValueError
        The measurement is not one of the named constructors' (with what to pass instead); its
        map disagrees with the named law; a probe moved beyond the noise's reach; ``d_in`` out of
        range or refused by the map; ``value`` is not one output of the measurement; an invalid
        or reserved ``provenance``.

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
    if provenance is not None:
        check_provenance(provenance, external=True)
    name, kwargs, carrier, distance, measure = _opendp_shape(measurement)
    integer = carrier in _INTEGER_CARRIERS
    pure = measure == "MaxDivergence"
    family = _NAMED_LAWS[name][0 if integer else 1]
    d = _d_in(d_in, distance, family == "geometric")
    values = _values(value, integer)
    _output_size(measurement, values)
    out = _privacy_map(measurement, d)
    if not (math.isfinite(out) and out > 0):
        raise NoiseawareValueError(f"{owner}: OpenDP's privacy map gives {out!r} at d_in={d!r}; expected a finite "
                                   "loss > 0.")
    scale = v.positive("the measurement's scale", kwargs.get("scale"))
    mech: Mechanism
    if family == "geometric":
        mech = GeometricMechanism(scale=scale, sensitivity=int(d))
    elif family == "laplace":
        mech = LaplaceMechanism(scale, float(d))
    elif family == "discrete_gaussian":
        mech = DiscreteGaussianMechanism(scale, float(d))
    else:
        mech = GaussianMechanism(scale, float(d))
    law_loss = float(mech.guarantee().epsilon if pure else mech.guarantee().rho)  # type: ignore[arg-type]
    reach = (_LOG_TAIL * scale if pure else scale * math.sqrt(2.0 * _LOG_TAIL)) + 1.0
    for k in (1, 2, 3):
        got = out if k == 1 else _privacy_map(measurement, d * k)
        want = law_loss * (k if pure else k * k)
        if not math.isclose(got, want, rel_tol=_MAP_RTOL):
            raise NoiseawareValueError(
                f"{owner}: OpenDP's privacy map at d_in={d * k!r} is {got!r}, but the {family} law of scale {scale!r} "
                f"gives {want!r} there: the measurement is not the {name} it says it is."
            )
    _probe(measurement, carrier, reach)
    from importlib.metadata import version as _version

    version = _version("opendp")
    source = (
        f"OpenDP {version}: {measurement.input_domain}, {measurement.input_metric} -> {measurement.output_measure}; "
        f"map({d!r}) = {out!r}"
    )
    return _build(
        cls,
        values,
        mech,
        labels=labels,
        provenance=f"OpenDP {version}" if provenance is None else provenance,
        n=n,
        source=source,
        guarantee=Guarantee(epsilon=out) if pure else Guarantee(rho=out),
    )


# ---------------------------------------------------------------------------------- published noise
def _keys(name: str, keys: list[Any]) -> list[str]:
    """The group keys as strings; refuse two different keys that are the same string (``1`` and ``"1"``).

    Group keys are compared as strings (a release's labels and the returned mapping's keys are
    strings), so two keys that differ but print alike would silently share one group or one
    parameter.
    """
    owner = current_owner()
    first: dict[str, Any] = {}
    out = []
    for key in keys:
        text = str(key)
        if text in first:
            seen = first[text]
            try:
                same = isinstance(seen, str) == isinstance(key, str) and bool(seen == key)
            except Exception:  # an object whose == does not give a truth value is not the same key
                same = False
            if not same:
                raise NoiseawareValueError(
                    f"{owner}: {name} holds the keys {seen!r} and {key!r}, which are different but the same as text "
                    f"({text!r}); group keys are compared as strings. Give each group one spelling."
                )
        else:
            first[text] = key
        out.append(text)
    return out


def _one_mechanism(family: str, param: str, x: Any, sensitivity: Any, where: str) -> Mechanism:
    """The mechanism of ``family`` with noise parameter ``param = x`` (``where`` names it in errors)."""
    x = v.open_unit(where, x) if param == "alpha" else v.positive(where, x)
    if family == "geometric":
        scale = -1.0 / math.log(x) if param == "alpha" else x
        return GeometricMechanism(scale=scale, sensitivity=sensitivity)
    if family == "laplace":
        return LaplaceMechanism(scale=x, sensitivity=sensitivity)
    sigma = math.sqrt(x) if param == "variance" else x
    if family == "discrete_gaussian":
        return DiscreteGaussianMechanism(sigma=sigma, sensitivity=sensitivity)
    return GaussianMechanism(sigma=sigma, sensitivity=sensitivity)


@owned("Release.from_published")
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
        Who made the release, e.g. ``"US Census Bureau 2020 NMF"`` (printable, at most 160 characters;
        not ``"noiseaware"``, which is reserved for releases noiseaware drew itself).
    scale, alpha, sigma, variance : float or mapping, exactly one
        The stated noise parameter: a number for all values, or with ``groups`` a mapping from
        each group key to its parameter (per query, per geographic level, or per value with one
        group per value).
    sensitivity : int or float, default 1
        L1 / L2 sensitivity of each release's values together (an integer for ``geometric``).
    groups : sequence, optional
        One group key per value (converted to ``str``); then one release per group is returned.
        Each records its own guarantee; groups about the same people compose sequentially. Two
        different keys with the same text (``1`` and ``"1"``), among the groups or among the
        parameter mapping's keys, are refused rather than merged.
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
        group without a parameter or a parameter without values; two group keys with the same
        text; non-integer values for an integer family; an invalid or reserved ``provenance``.
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
        v.refuse("family", f"must be one of {list(PUBLISHED_FAMILIES)}", family)
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
        sens: Any = v.integer("sensitivity", sensitivity, minimum=1, maximum=v.INT_BOUND)
    else:
        sens = v.positive("sensitivity", sensitivity)
    vals = _values(values, integer)
    labs = _labels(labels, vals.size)
    check_provenance(provenance, external=True)
    if source is not None and not isinstance(source, str):
        raise NoiseawareTypeError(v.message("source", "must be a string", source))
    if groups is None:
        if isinstance(stated, Mapping) or (isinstance(stated, Sequence | np.ndarray) and not isinstance(stated, str)):
            raise NoiseawareValueError(
                f"{owner}: {param} is given per group or per value; pass groups= (one group key per value) and "
                f"{param} as a mapping from group key to its value."
            )
        mech = _one_mechanism(family, param, stated, sens, param)
        return _build(cls, vals, mech, labels=labs, provenance=provenance, n=n, source=source)
    if isinstance(groups, str | bytes) or not isinstance(groups, Sequence | np.ndarray):
        raise NoiseawareTypeError(v.message("groups", "must be a list with one group key per value", groups))
    keys = _keys("groups", list(groups))
    if len(keys) != vals.size:
        raise NoiseawareValueError(f"{owner}: groups must give one group key per value ({vals.size}); got {len(keys)}.")
    if not isinstance(stated, Mapping):
        raise NoiseawareTypeError(
            f"{owner}: with groups=, {param} must be a mapping from each group key to its {param}; got "
            f"{type(stated).__name__}."
        )
    table = dict(zip(_keys(param, list(stated)), stated.values(), strict=True))
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
        mech = _one_mechanism(family, param, table[key], sens, f"{param}[{key!r}]")
        out[key] = _build(cls, flat[idx], mech, labels=[labs[i] for i in idx], provenance=provenance,
                          n=n, source=source)
    return out
