"""One place for argument checks, one message shape.

Every message reads ``"<owner>: <name> <rule>; got <name>=<value>.<fix>"``, e.g.
``"TwoSidedGeometric: alpha must be in (0, 1); got alpha=1.5."``. Concrete (non-symbolic)
inputs are checked here and raise :class:`~noiseaware.exceptions.NoiseawareValueError` or
:class:`~noiseaware.exceptions.NoiseawareTypeError` at once.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .exceptions import NoiseawareTypeError, NoiseawareValueError, PrivacyWarning

__all__: list[str] = []

#: epsilon above which :func:`check_epsilon` warns.
EPSILON_WARN_THRESHOLD = 5.0


def message(owner: str, name: str, rule: str, value: Any, fix: str | None = None) -> str:
    """Format the one message shape used across the package."""
    text = f"{owner}: {name} {rule}; got {name}={value!r}."
    if fix:
        text += f" {fix}"
    return text


def fail(owner: str, name: str, rule: str, value: Any, fix: str | None = None) -> None:
    """Raise a :class:`NoiseawareValueError` in the standard shape."""
    raise NoiseawareValueError(message(owner, name, rule, value, fix))


def real(owner: str, name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a real scalar (bool excluded); else raise TypeError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | np.integer | np.floating):
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
            return float(value)
        raise NoiseawareTypeError(message(owner, name, "must be a real number", value))
    return float(value)


def finite(owner: str, name: str, value: Any) -> float:
    """Return a finite float, or raise."""
    x = real(owner, name, value)
    if not math.isfinite(x):
        fail(owner, name, "must be finite", value)
    return x


def positive(owner: str, name: str, value: Any) -> float:
    """Return a finite float > 0, or raise."""
    x = real(owner, name, value)
    if not (math.isfinite(x) and x > 0):
        fail(owner, name, "must be a finite number > 0", value)
    return x


def nonnegative(owner: str, name: str, value: Any) -> float:
    """Return a finite float >= 0, or raise."""
    x = real(owner, name, value)
    if not (math.isfinite(x) and x >= 0):
        fail(owner, name, "must be a finite number >= 0", value)
    return x


def open_unit(owner: str, name: str, value: Any) -> float:
    """Return a float in the open interval (0, 1), or raise."""
    x = real(owner, name, value)
    if not (0.0 < x < 1.0):
        fail(owner, name, "must be in (0, 1)", value)
    return x


def integer(owner: str, name: str, value: Any, *, minimum: int | None = None) -> int:
    """Return ``value`` as int if it is an integral scalar (bool excluded), else raise."""
    if isinstance(value, bool):
        raise NoiseawareTypeError(message(owner, name, "must be an integer", value))
    if isinstance(value, numbers.Integral | np.integer):
        out = int(value)
    elif isinstance(value, float | np.floating) and math.isfinite(value) and float(value).is_integer():
        out = int(value)
    else:
        raise NoiseawareTypeError(message(owner, name, "must be an integer", value))
    if minimum is not None and out < minimum:
        fail(owner, name, f"must be an integer >= {minimum}", value)
    return out


def epsilon(owner: str, value: Any, *, name: str = "epsilon", warn: bool = True) -> float:
    """Check a pure-DP budget: finite and > 0; warn above :data:`EPSILON_WARN_THRESHOLD`."""
    eps = positive(owner, name, value)
    if warn and eps > EPSILON_WARN_THRESHOLD:
        warnings.warn(
            f"{owner}: {name}={eps!r} is above {EPSILON_WARN_THRESHOLD:g}; such a release gives "
            "little protection (a likelihood ratio of up to exp(epsilon) between neighbours).",
            PrivacyWarning,
            stacklevel=3,
        )
    return eps


def delta(owner: str, value: Any, *, name: str = "delta") -> float:
    """Check a delta in the open interval (0, 1)."""
    return open_unit(owner, name, value)


def choice(owner: str, name: str, value: Any, options: Sequence[str]) -> str:
    """Check that ``value`` is one of ``options`` (strings)."""
    if not isinstance(value, str):
        raise NoiseawareTypeError(message(owner, name, f"must be one of {list(options)}", value))
    if value not in options:
        fail(owner, name, f"must be one of {list(options)}", value)
    return value


def bounds(owner: str, lower: Any, upper: Any, *, integral: bool = False) -> tuple[float, float]:
    """Check a pair of finite bounds with ``lower <= upper``."""
    if integral:
        lo: float = integer(owner, "lower", lower)
        hi: float = integer(owner, "upper", upper)
    else:
        lo = finite(owner, "lower", lower)
        hi = finite(owner, "upper", upper)
    if lo > hi:
        raise NoiseawareValueError(
            f"{owner}: bounds must satisfy lower <= upper; got lower={lower!r}, upper={upper!r}. Swap them."
        )
    return lo, hi


def finite_array(owner: str, name: str, value: Any, *, dtype: Any = np.float64) -> np.ndarray:
    """Return ``value`` as a float64 array with no NaN or inf; raise otherwise."""
    try:
        arr = np.asarray(value)
    except Exception as exc:  # pragma: no cover - numpy raises many kinds
        raise NoiseawareTypeError(message(owner, name, "must be array-like", type(value).__name__)) from exc
    if arr.dtype.kind not in "biuf":
        raise NoiseawareTypeError(
            f"{owner}: {name} must be numeric; got dtype {arr.dtype}. Encode categories as numbers first."
        )
    arr = arr.astype(dtype)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise NoiseawareValueError(
            f"{owner}: {name} must not contain NaN or inf; got {bad} non-finite value(s). "
            "Impute or drop them before privatizing."
        )
    return arr


def integer_array(owner: str, name: str, value: Any) -> np.ndarray:
    """Return ``value`` as an int64 array; floats are accepted only if integral and finite."""
    arr = np.asarray(value)
    if arr.dtype.kind == "b":
        return arr.astype(np.int64)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise NoiseawareValueError(f"{owner}: {name} must not contain NaN or inf.")
        if not np.all(arr == np.round(arr)):
            raise NoiseawareValueError(
                f"{owner}: {name} must hold integers; got non-integral values such as "
                f"{arr[arr != np.round(arr)].ravel()[:3].tolist()}."
            )
        return arr.astype(np.int64)
    raise NoiseawareTypeError(f"{owner}: {name} must be an integer array; got dtype {arr.dtype}.")
