"""Base class, guarantee record and registry of mechanisms."""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from .._core import _noise
from .._validation import owned, owner_scope
from ..exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError

__all__ = ["MECHANISMS", "Guarantee", "Mechanism", "mechanism_from_dict", "round_noise_up"]

#: At most this many one-float steps when rounding a calibrated noise parameter up (a few suffice).
_MAX_NUDGES = 256


def round_noise_up(
    name: str, request: float, value: float, toward: float, guarantee: Callable[[float], float]
) -> float:
    """A calibrated noise parameter moved, one float64 at a time, until its guarantee is within the request.

    Calibration computes a noise parameter from the budget asked for (``scale = sensitivity /
    epsilon``, ``sigma = sensitivity / sqrt(2 rho)``, ``p`` of randomized response) in floating
    point, and the guarantee recomputed from that parameter may land a few units in the last
    place *above* the request. Then ``k`` releases of ``total / k`` overspend ``total``. This
    moves ``value`` toward ``toward`` (more noise) with :func:`math.nextafter` until
    ``guarantee(value) <= request``, so the guarantee a release records never exceeds what was
    asked. The guarantee must be non-increasing in the direction of ``toward``.

    Raises
    ------
    NoiseawareValueError
        If no float64 within a few hundred steps gives a guarantee within the request (the
        request is finer than the parameter's float64 resolution), naming ``name``.

    Examples
    --------
    >>> rho = 0.3 / 7
    >>> sigma = 1.0 / math.sqrt(2.0 * rho)
    >>> 0.5 * (1.0 / sigma) ** 2 <= rho
    False
    >>> s = round_noise_up("rho", rho, sigma, math.inf, lambda x: 0.5 * (1.0 / x) ** 2)
    >>> 0.5 * (1.0 / s) ** 2 <= rho, s > sigma
    (True, True)
    """
    x = value
    for _ in range(_MAX_NUDGES):
        if guarantee(x) <= request:
            return x
        x = math.nextafter(x, toward)
    raise NoiseawareValueError(
        v.message(
            name,
            "must be large enough that some float64 noise parameter has a guarantee within it",
            request,
            f"The closest, near {value!r}, gives {guarantee(x)!r}. Use a larger {name}.",
        )
    )


@dataclass(frozen=True)
class Guarantee:
    """A differential-privacy guarantee.

    A pure guarantee has ``epsilon`` and ``delta == 0``; an approximate one has both; a
    zero-concentrated one has ``rho`` (and may carry an implied ``epsilon`` as well, e.g. the
    exponential mechanism, which is both epsilon-DP and epsilon**2/8-zCDP, Ferrando, Fuentes, Mullins, Musco & Sheldon
    (2026), *Private Adaptive Covariance Estimation via Gaussian Graphical Models*, Prop. 3.5).

    Parameters
    ----------
    epsilon : float or None
        Pure / approximate DP parameter.
    delta : float
        Approximate DP parameter, 0 for pure DP.
    rho : float or None
        zCDP parameter.
    """

    epsilon: float | None = None
    delta: float = 0.0
    rho: float | None = None

    @owned("Guarantee")
    def __post_init__(self) -> None:
        if self.epsilon is None and self.rho is None:
            raise ReleaseFormatError("Guarantee: give epsilon or rho; got neither.")
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", v.nonnegative("epsilon", self.epsilon))
        if self.rho is not None:
            object.__setattr__(self, "rho", v.nonnegative("rho", self.rho))
        d = v.nonnegative("delta", self.delta)
        if d >= 1.0:
            v.refuse("delta", "must be in [0, 1)", self.delta)
        object.__setattr__(self, "delta", d)

    @property
    def kind(self) -> str:
        """``"pure"``, ``"approximate"`` or ``"zcdp"``."""
        if self.epsilon is not None:
            return "pure" if self.delta == 0.0 else "approximate"
        return "zcdp"

    def compose(self, other: Guarantee) -> Guarantee:
        """Sequential composition: epsilons, deltas and rhos add (where both have them)."""
        eps = None if self.epsilon is None or other.epsilon is None else self.epsilon + other.epsilon
        rho = None if self.rho is None or other.rho is None else self.rho + other.rho
        if eps is None and rho is None:
            # pure + zCDP: convert the pure part to zCDP (Bun & Steinke 2016, Prop. 1.4)
            rho = self.as_rho() + other.as_rho()
        return Guarantee(epsilon=eps, delta=self.delta + other.delta if eps is not None else 0.0, rho=rho)

    @owned("Guarantee.repeat")
    def repeat(self, k: int) -> Guarantee:
        """k-fold sequential composition of this guarantee."""
        k = v.integer("k", k, minimum=1)
        return Guarantee(
            epsilon=None if self.epsilon is None else self.epsilon * k,
            delta=self.delta * k,
            rho=None if self.rho is None else self.rho * k,
        )

    def as_rho(self) -> float:
        """The zCDP parameter implied by this guarantee (pure epsilon gives epsilon**2/2)."""
        if self.rho is not None:
            return self.rho
        if self.delta != 0.0:
            raise ReleaseFormatError("Guarantee: an (epsilon, delta) guarantee implies no rho-zCDP bound.")
        return float(self.epsilon) ** 2 / 2.0  # type: ignore[arg-type]

    def isclose(self, other: Guarantee, rel: float = 1e-9) -> bool:
        """Equality up to floating-point rounding."""

        def same(a: float | None, b: float | None) -> bool:
            if a is None or b is None:
                return a is b
            return math.isclose(a, b, rel_tol=rel, abs_tol=1e-300)

        return same(self.epsilon, other.epsilon) and same(self.rho, other.rho) and same(self.delta, other.delta)

    def describe(self) -> str:
        """A one-line human description."""
        parts = []
        if self.epsilon is not None:
            parts.append(f"{self.epsilon:.6g}-DP" if self.delta == 0 else f"({self.epsilon:.6g}, {self.delta:.3g})-DP")
        if self.rho is not None:
            parts.append(f"{self.rho:.6g}-zCDP")
        return " and ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping."""
        return {"epsilon": self.epsilon, "delta": self.delta, "rho": self.rho}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "guarantee") -> Guarantee:
        """Inverse of :meth:`to_dict`; errors name the field."""
        if not isinstance(d, Mapping):
            raise ReleaseFormatError(f"Release: field '{where}' must be an object; got {d!r}.")
        unknown = set(d) - {"epsilon", "delta", "rho"}
        if unknown:
            raise ReleaseFormatError(f"Release: field '{where}' has unknown keys {sorted(unknown)}.")
        try:
            return cls(epsilon=d.get("epsilon"), delta=d.get("delta", 0.0), rho=d.get("rho"))
        except (ValueError, TypeError) as exc:
            raise ReleaseFormatError(f"Release: field '{where}' is invalid: {exc}") from exc


class Mechanism(abc.ABC):
    """A differentially private mechanism: exact output law, guarantee and two samplers.

    Subclasses are frozen dataclasses. Every mechanism exposes

    * ``log_prob(output, value)`` -- exact ``log P(output | true value)`` (vectorized, float64);
    * ``guarantee()`` -- the :class:`Guarantee` computed from its parameters;
    * ``release(value, rng=None)`` -- secure (OpenDP) sampling when ``rng`` is None, seeded
      simulation from a :class:`numpy.random.Generator` otherwise;
    * ``to_dict()`` / :func:`mechanism_from_dict` for the :class:`~noiseaware.Release` record.
    """

    family: ClassVar[str]
    #: "integer", "real" or "category"
    output_kind: ClassVar[str]
    #: True when output = value + noise with noise independent of value.
    additive: ClassVar[bool] = False

    def guarantee(self) -> Guarantee:
        """The privacy guarantee of one application: the registry law's (``NOISE_LAWS[family].guarantee_of``).

        Written once, in the law; a mechanism without a noise law (the exponential mechanism) overrides it.
        """
        return Guarantee(**_noise.NOISE_LAWS[self.family].guarantee_of(self))

    @abc.abstractmethod
    def log_prob(self, output: Any, value: Any) -> np.ndarray:
        """Exact ``log P(output | value)``; ``-inf`` outside the support."""

    @abc.abstractmethod
    def _release_secure(self, value: np.ndarray) -> np.ndarray: ...

    @abc.abstractmethod
    def _release_simulated(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...

    def _check_value(self, value: Any) -> np.ndarray:
        """True values as an array, refused beyond the range whose noisy output is representable.

        Integer mechanisms: ``|value| <= 2**62``;
        with ``P(|noise| >= 2**62) < 2**-64`` (enforced on the scale) the int64 output cannot
        saturate. Real ones: ``|value| <= 2**1000``, so that ``value + noise`` stays finite.
        """
        owner = type(self).__name__
        with owner_scope(owner):
            if self.output_kind == "real":
                arr = v.finite_array("value", value)
                v.within("value", arr, v.REAL_BOUND, v.REAL_NOISE_RULE)
                return arr
            return v.integer_array("value", value)

    def release(self, value: Any, rng: np.random.Generator | None = None) -> np.ndarray:
        """Privatize ``value`` (array-like of true values).

        Parameters
        ----------
        value : array_like
            True values (integers for integer mechanisms).
        rng : numpy.random.Generator, optional
            When None (default) the release is drawn with OpenDP's exact samplers. When given,
            the draw is a seeded floating-point *simulation*, not a secure release.

        Returns
        -------
        numpy.ndarray
            Same shape as ``value``.
        """
        arr = self._check_value(value)
        if rng is None:
            out = self._release_secure(arr)
        else:
            if not isinstance(rng, np.random.Generator):
                raise NoiseawareTypeError(
                    f"{type(self).__name__}.release: rng must be a numpy.random.Generator or None; "
                    f"got rng={rng!r}. Use numpy.random.default_rng(seed)."
                )
            out = self._release_simulated(arr, rng)
        return np.asarray(out).reshape(arr.shape)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping with the family name and every parameter."""
        d: dict[str, Any] = {"family": self.family}
        for f in fields(self):  # type: ignore[arg-type]
            d[f.name] = getattr(self, f.name)
        return d


#: Every mechanism class by its ``family`` name (what :func:`mechanism_from_dict` reads).
MECHANISMS: dict[str, type[Mechanism]] = {}


def register(cls: type[Mechanism]) -> type[Mechanism]:
    """Class decorator adding a mechanism to :data:`MECHANISMS`."""
    MECHANISMS[cls.family] = cls
    return cls


def mechanism_from_dict(d: Mapping[str, Any], where: str = "mechanism") -> Mechanism:
    """Rebuild a mechanism from :meth:`Mechanism.to_dict` output; errors name the field."""
    if not isinstance(d, Mapping):
        raise ReleaseFormatError(f"Release: field '{where}' must be an object; got {d!r}.")
    family = d.get("family")
    if not isinstance(family, str) or family not in MECHANISMS:
        raise ReleaseFormatError(
            f"Release: field '{where}.family' must be one of {sorted(MECHANISMS)}; got {family!r}."
        )
    cls = MECHANISMS[family]
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    extra = set(d) - set(names) - {"family"}
    if extra:
        raise ReleaseFormatError(f"Release: field '{where}' has unknown keys {sorted(extra)} for {family!r}.")
    missing = [n for n in names if n not in d]
    if missing:
        raise ReleaseFormatError(f"Release: field '{where}.{missing[0]}' is missing for family {family!r}.")
    kwargs = {n: d[n] for n in names}
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        # the validation message names the parameter; prefix the JSON path
        raise ReleaseFormatError(f"Release: field '{where}' is invalid: {exc}") from exc
