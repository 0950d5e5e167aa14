"""One place for argument checks, one message shape.

Every message reads ``"<owner>: <name> <rule>; got <name>=<value>.<fix>"``, e.g.
``"TwoSidedGeometric: alpha must be in (0, 1); got alpha=1.5."``. Concrete (non-symbolic)
inputs are checked here and raise :class:`~noiseaware.exceptions.NoiseawareValueError` or
:class:`~noiseaware.exceptions.NoiseawareTypeError` at once.

The ``<owner>`` is the public name being served (``"TwoSidedGeometric"``, ``"privatize"``,
``"Release.from_json"``), not an argument of the math: the function that names the owner sets it
with :func:`owned` (a decorator) or :func:`owner_scope` (a ``with`` block), and the message builders
read it with :func:`current_owner`. It lives in a :class:`contextvars.ContextVar`, so each thread and
each asyncio task sees its own; the innermost scope wins (a public function called by another names
itself, as it did when the name was passed by hand), and outside any scope the owner is
``"noiseaware"``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import numbers
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, ParamSpec, TypeVar

import numpy as np

from .exceptions import NoiseawareTypeError, NoiseawareValueError, PrivacyWarning

__all__: list[str] = []

#: epsilon above which :func:`epsilon` warns.
EPSILON_WARN_THRESHOLD = 5.0
#: rho above which :func:`rho` warns: ``EPSILON_WARN_THRESHOLD**2 / 2 = 12.5``, the zCDP guarantee of
#: an epsilon = 5 pure-DP mechanism (Bun & Steinke 2016, "Concentrated differential privacy:
#: simplifications, extensions, and lower bounds", Proposition 1.4), so a weaker rho warns as a
#: weaker epsilon does.
RHO_WARN_THRESHOLD = EPSILON_WARN_THRESHOLD**2 / 2.0

# ----------------------------------------------------------------- representable noise
# A release must follow the law its likelihood models. Integer mechanisms return int64 (OpenDP
# saturates at the int64 limits, which the likelihood does not model); real ones return float64
# (which overflows to inf). The rule: |true value| <= B and P(|noise| >= B) < 2**-64, so that
# |value + noise| < 2 B fits with overwhelming probability. B = 2**62 for integers (2 B = 2**63,
# the int64 limit) and 2**1000 for reals (2 B = 2**1001, far below the float64 maximum ~2**1024).

#: Bound on |true value|, |bounds| and (with overwhelming probability) |noise| of integer mechanisms.
INT_BOUND = 2**62
#: Bound on |true value| and (with overwhelming probability) |noise| of real-valued mechanisms.
REAL_BOUND = 2.0**1000
#: ``log2`` of the largest tail probability ``P(|noise| >= bound)`` that is accepted.
TAIL_LOG2 = -64
_LN2 = math.log(2.0)
#: Two-sided geometric: ``P(|K| >= t) = 2 a^t / (1 + a) <= 2 exp(-t / scale) <= 2**-64`` when
#: ``t / scale >= 65 ln 2``; with ``t = 2**62``: ``scale <= 2**62 / (65 ln 2)`` (~1.0236e17).
MAX_GEOMETRIC_SCALE = INT_BOUND / (65.0 * _LN2)
#: Discrete Gaussian: sigma-subgaussian (Canonne, Kamath & Steinke 2020), so
#: ``P(|K| >= t) <= 2 exp(-t**2 / (2 sigma**2)) <= 2**-64`` when ``t**2 / (2 sigma**2) >= 65 ln 2``:
#: ``sigma <= 2**62 / sqrt(130 ln 2)`` (~4.858e17).
MAX_DISCRETE_GAUSSIAN_SIGMA = INT_BOUND / math.sqrt(130.0 * _LN2)
#: Laplace: ``P(|X| >= t) = exp(-t / b) <= 2**-64`` when ``b <= 2**1000 / (64 ln 2)`` (~2.416e299).
MAX_LAPLACE_SCALE = REAL_BOUND / (64.0 * _LN2)
#: Gaussian: ``P(|X| >= t) <= 2 exp(-t**2 / (2 sigma**2))``, as for the discrete Gaussian (~1.131e300).
MAX_GAUSSIAN_SIGMA = REAL_BOUND / math.sqrt(130.0 * _LN2)
#: Why the bounds above exist, for messages.
INT_NOISE_RULE = "so that value + noise fits in int64 (P(|noise| >= 2**62) < 2**-64)"
REAL_NOISE_RULE = "so that value + noise stays finite in float64 (P(|noise| >= 2**1000) < 2**-64)"
#: Most rows one call may simulate or synthesize (``datasets.simulate_gaussian_copula``,
#: ``datasets.demo_copula_data``, ``copula.synthesize``, ``copula.synthesize_hybrid``), checked before any
#: allocation: 10^7 rows of 5 columns are 400 MB of float64 and take a few seconds to draw.
MAX_SIMULATED_ROWS = 10_000_000
#: Smallest positive normal float64; scales below it lose precision (subnormal numbers).
TINY = 2.2250738585072014e-308

# ----------------------------------------------------------------- the owner of a message
#: The owner named when no scope is set (a private helper called directly).
DEFAULT_OWNER = "noiseaware"
_OWNER: contextvars.ContextVar[str | None] = contextvars.ContextVar("noiseaware_owner", default=None)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def current_owner(default: str = DEFAULT_OWNER) -> str:
    """The public name that messages raised now should start with (``default`` outside any scope).

    Examples
    --------
    >>> current_owner()
    'noiseaware'
    >>> with owner_scope("TwoSidedGeometric"):
    ...     current_owner()
    'TwoSidedGeometric'
    """
    return _OWNER.get() or default


@contextlib.contextmanager
def owner_scope(name: str) -> Iterator[None]:
    """Name ``name`` as the owner of the messages raised inside the ``with`` block (restored on exit).

    Examples
    --------
    >>> with owner_scope("privatize"):
    ...     positive("epsilon", -1.0)
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.NoiseawareValueError: privatize: epsilon must be a finite number > 0; got epsilon=-1.0.
    """
    token = _OWNER.set(name)
    try:
        yield
    finally:
        _OWNER.reset(token)


@contextlib.contextmanager
def fallback_owner(name: str) -> Iterator[None]:
    """Like :func:`owner_scope`, but only where no scope is set: a caller's owner wins over ``name``.

    For rules that have a natural owner of their own when checked alone (a release record's field
    types name ``"Release"``) yet speak for their caller inside a public function.
    """
    if _OWNER.get() is not None:
        yield
        return
    with owner_scope(name):
        yield


def owned(name: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Decorate a function so that the messages raised while it runs name ``name`` as their owner.

    The decorated function keeps its name, docstring and signature (:func:`functools.wraps`).
    Not for generator functions: the scope would end before their body runs.
    """

    def decorate(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(fn)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            token = _OWNER.set(name)
            try:
                return fn(*args, **kwargs)
            finally:
                _OWNER.reset(token)

        return wrapper

    return decorate


def message(name: str, rule: str, value: Any, fix: str | None = None, *, limit: int | None = None) -> str:
    """Format the one message shape used across the package (``limit``: longest shown value, clipped with ``...``)."""
    shown = repr(value)
    if limit is not None and len(shown) > limit:
        shown = shown[: limit - 3] + "..."
    text = f"{current_owner()}: {name} {rule}; got {name}={shown}."
    if fix:
        text += f" {fix}"
    return text


def refuse(name: str, rule: str, value: Any, fix: str | None = None) -> NoReturn:
    """Raise a :class:`NoiseawareValueError` in the standard shape, naming the current owner."""
    raise NoiseawareValueError(message(name, rule, value, fix))


def real(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a real scalar (bool excluded); else raise TypeError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | np.integer | np.floating):
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
            return float(value)
        raise NoiseawareTypeError(message(name, "must be a real number", value))
    try:
        return float(value)
    except OverflowError:
        raise NoiseawareValueError(
            message(name, "must be a real number within the float64 range", value)
        ) from None


def finite(name: str, value: Any) -> float:
    """Return a finite float, or raise."""
    x = real(name, value)
    if not math.isfinite(x):
        refuse(name, "must be finite", value)
    return x


def positive(name: str, value: Any) -> float:
    """Return a finite float > 0, or raise."""
    x = real(name, value)
    if not (math.isfinite(x) and x > 0):
        refuse(name, "must be a finite number > 0", value)
    return x


def nonnegative(name: str, value: Any) -> float:
    """Return a finite float >= 0, or raise."""
    x = real(name, value)
    if not (math.isfinite(x) and x >= 0):
        refuse(name, "must be a finite number >= 0", value)
    return x


def open_unit(name: str, value: Any) -> float:
    """Return a float in the open interval (0, 1), or raise."""
    x = real(name, value)
    if not (0.0 < x < 1.0):
        refuse(name, "must be in (0, 1)", value)
    return x


def _int_text(x: int) -> str:
    return "2**62" if x == INT_BOUND else str(x)


def integer(
    name: str,
    value: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    integral_floats: bool = True,
) -> int:
    """Return ``value`` as int if it is an integral scalar (bool excluded), else raise.

    An integral float (``3.0``) is accepted unless ``integral_floats=False`` (a typed record field).
    """
    if isinstance(value, bool | np.bool_):
        raise NoiseawareTypeError(message(name, "must be an integer", value))
    if isinstance(value, numbers.Integral | np.integer):
        out = int(value)
    elif (
        integral_floats
        and isinstance(value, float | np.floating)
        and math.isfinite(value)
        and float(value).is_integer()
    ):
        out = int(value)
    else:
        raise NoiseawareTypeError(message(name, "must be an integer", value))
    if minimum is not None and out < minimum:
        refuse(name, f"must be an integer >= {minimum}", value)
    if maximum is not None and out > maximum:
        refuse(name, f"must be an integer <= {_int_text(maximum)}", value)
    return out


def generator(name: str, value: Any) -> np.random.Generator:
    """A NumPy ``Generator`` from ``value``: None (fresh entropy), an integer ``>= 0`` or a ``Generator``.

    Anything else (a string, a float, a bool, a negative integer) raises instead of reaching
    :func:`numpy.random.default_rng`, whose own errors do not name the argument.
    """
    if isinstance(value, np.random.Generator):
        return value
    if value is None:
        return np.random.default_rng()
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral | np.integer):
        raise NoiseawareTypeError(
            message(name, "must be an integer >= 0, a numpy.random.Generator or None", value)
        )
    return np.random.default_rng(integer(name, value, minimum=0))


def noise_scale(
    name: str, value: Any, maximum: float, rule: str, *, minimum: float = TINY, why_min: str = ""
) -> float:
    """Return a noise scale in ``[minimum, maximum]``, or raise naming the rule (``rule``: why ``maximum``)."""
    x = positive(name, value)
    if x < minimum:
        why = why_min or "the smallest normal float64; smaller ones lose precision"
        refuse(name, f"must be >= {minimum!r} ({why})", value)
    if x > maximum:
        refuse(name, f"must be <= {maximum:.6g} {rule}", value)
    return x


def implied_guarantee(params: dict[str, Any], quantity: str, formula: str, result: float) -> None:
    """Raise unless a guarantee computed from ``params`` (``result``) is a finite float > 0.

    An infinite guarantee cannot be recorded, and one that underflows to 0 would claim more
    privacy than the mechanism gives. The message names every parameter of ``formula``.
    """
    if not (math.isfinite(result) and result > 0.0):
        got = ", ".join(f"{k}={val!r}" for k, val in params.items())
        raise NoiseawareValueError(
            f"{current_owner()}: {' and '.join(params)} must give a finite {quantity} = {formula} > 0 in float64; "
            f"got {got} ({quantity}={result!r})."
        )


def at_least(name: str, value: float, minimum: float, rule: str) -> None:
    """Raise unless ``value >= minimum`` (``rule`` says why, e.g. :data:`INT_NOISE_RULE`)."""
    if not value >= minimum:
        refuse(name, f"must be >= {minimum:.6g} {rule}", value)


def within(name: str, arr: np.ndarray, bound: float, rule: str) -> None:
    """Raise unless every entry of the numeric array ``arr`` has ``|x| <= bound``."""
    if not arr.size:
        return
    lo, hi = arr.min(), arr.max()
    worst = lo if abs(float(lo)) > abs(float(hi)) else hi
    if abs(float(worst)) > bound:
        shown = _int_text(int(bound)) if bound == INT_BOUND else f"{bound:.6g}"
        raise NoiseawareValueError(
            f"{current_owner()}: {name} must lie in [-{shown}, {shown}] {rule}; got a value of {worst.item()!r}."
        )


def epsilon(value: Any, *, name: str = "epsilon", warn: bool = True) -> float:
    """Check a pure-DP budget: finite and > 0; warn above :data:`EPSILON_WARN_THRESHOLD`."""
    eps = positive(name, value)
    if warn and eps > EPSILON_WARN_THRESHOLD:
        warnings.warn(
            f"{current_owner()}: {name}={eps!r} is above {EPSILON_WARN_THRESHOLD:g}; such a release gives "
            "little protection (a likelihood ratio of up to exp(epsilon) between neighbours).",
            PrivacyWarning,
            stacklevel=3,
        )
    return eps


def rho(value: Any, *, name: str = "rho", warn: bool = True) -> float:
    """Check a zCDP budget: finite and > 0; warn above :data:`RHO_WARN_THRESHOLD`."""
    r = positive(name, value)
    if warn and r > RHO_WARN_THRESHOLD:
        warnings.warn(
            f"{current_owner()}: {name}={r!r} is above {RHO_WARN_THRESHOLD:g} (the rho of an epsilon = "
            f"{EPSILON_WARN_THRESHOLD:g} pure-DP mechanism); such a release gives little protection.",
            PrivacyWarning,
            stacklevel=3,
        )
    return r


def delta(value: Any, *, name: str = "delta") -> float:
    """Check a delta in the open interval (0, 1)."""
    return open_unit(name, value)


def choice(name: str, value: Any, options: Sequence[str]) -> str:
    """Check that ``value`` is one of ``options`` (strings)."""
    if not isinstance(value, str):
        raise NoiseawareTypeError(message(name, f"must be one of {list(options)}", value))
    if value not in options:
        refuse(name, f"must be one of {list(options)}", value)
    return value


def bounds(lower: Any, upper: Any, *, integral: bool = False) -> tuple[float, float]:
    """Check a pair of finite bounds with ``lower <= upper``."""
    if integral:
        lo: float = integer("lower", lower)
        hi: float = integer("upper", upper)
    else:
        lo = finite("lower", lower)
        hi = finite("upper", upper)
    if lo > hi:
        raise NoiseawareValueError(
            f"{current_owner()}: bounds must satisfy lower <= upper; got lower={lower!r}, upper={upper!r}. Swap them."
        )
    return lo, hi


def _as_array(name: str, value: Any) -> np.ndarray:
    """``np.asarray(value)`` with ragged sequences, strings and non-numbers refused by name."""
    try:
        arr = np.asarray(value)
    except ValueError:
        raise NoiseawareValueError(
            f"{current_owner()}: {name} must be a rectangular array of numbers; got a ragged nested sequence "
            "(rows of different lengths). Pad or split it first."
        ) from None
    except Exception as exc:  # pragma: no cover - numpy raises many kinds
        raise NoiseawareTypeError(message(name, "must be array-like", type(value).__name__)) from exc
    if arr.dtype.kind in "USV":
        example = arr.ravel()[:1].tolist()
        raise NoiseawareTypeError(
            f"{current_owner()}: {name} must be numeric; got dtype {arr.dtype} with values such as {example}. "
            "Encode categories as numbers first."
        )
    if arr.dtype.kind == "c":
        raise NoiseawareTypeError(f"{current_owner()}: {name} must hold real numbers; got complex dtype {arr.dtype}.")
    if arr.dtype.kind == "O":
        if arr.ndim == 0 and not isinstance(arr.item(), numbers.Real):
            raise NoiseawareTypeError(
                f"{current_owner()}: {name} must be an array of numbers; got {type(value).__name__}. "
                "Pass a list, tuple or NumPy array."
            )
        for x in arr.ravel():
            if not isinstance(x, numbers.Real | np.bool_):
                raise NoiseawareTypeError(
                    f"{current_owner()}: {name} must be numeric; got {type(x).__name__} values such as {x!r}. "
                    "Encode categories as numbers first."
                )
    elif arr.dtype.kind not in "biuf":
        raise NoiseawareTypeError(f"{current_owner()}: {name} must be numeric; got dtype {arr.dtype}.")
    return arr


def _contains_bool(value: Any) -> bool:
    """Whether ``value`` (a scalar, a NumPy array or nested lists / tuples) holds a bool anywhere.

    NumPy turns ``[0, True]`` into the integers ``[0, 1]``, so a bool must be looked for before the
    conversion.
    """
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, bool | np.bool_):
            return True
        if isinstance(x, np.ndarray):
            if x.dtype.kind == "b" or (x.dtype.kind == "O" and any(isinstance(e, bool | np.bool_) for e in x.ravel())):
                return True
        elif isinstance(x, list | tuple):
            stack.extend(x)
    return False


def _no_bool(name: str, value: Any, booleans: bool) -> None:
    if not booleans and _contains_bool(value):
        raise NoiseawareTypeError(
            f"{current_owner()}: {name} must hold numbers, not true/false (a bool is not accepted as a number here)."
        )


def numeric_array(name: str, value: Any, *, booleans: bool = True) -> np.ndarray:
    """``value`` as a float64 array (NaN and inf kept, for the caller's own rule); non-numbers refused by name.

    Ragged sequences, strings, complex numbers, objects and, with ``booleans=False``, bools raise a
    :class:`NoiseawareValueError` / :class:`NoiseawareTypeError`, as do integers beyond float64.
    """
    owner = current_owner()
    _no_bool(name, value, booleans)
    arr = _as_array(name, value)
    try:
        if arr.dtype.kind == "O":
            return np.array([float(x) for x in arr.ravel()], dtype=np.float64).reshape(arr.shape)
        with np.errstate(over="ignore", invalid="ignore"):
            return arr.astype(np.float64)
    except OverflowError:
        raise NoiseawareValueError(
            f"{owner}: {name} must hold numbers within the float64 range; got an integer too large for float64."
        ) from None


#: The remedy :func:`finite_array` states by default: the curator's (``privatize``, mechanisms), whose input is data.
CURATOR_NAN_REMEDY = "Impute or drop them before privatizing."


def finite_array(
    name: str, value: Any, *, dtype: Any = np.float64, remedy: str | None = CURATOR_NAN_REMEDY
) -> np.ndarray:
    """Return ``value`` as a float64 array with no NaN or inf; raise otherwise.

    Ragged nested sequences, strings and other non-numbers raise a named error, as do Python
    integers beyond the float64 range. ``remedy`` is the message's last sentence, the fix that
    applies where the check is made: the default, :data:`CURATOR_NAN_REMEDY`, is for the curator's
    data (``privatize`` and the mechanisms); an analyst-side caller states its own (its input is a
    release's numbers, estimates or parameters, never data to impute), or ``None`` for none.
    """
    owner = current_owner()
    arr = _as_array(name, value)
    if arr.dtype.kind == "O":
        try:
            arr = np.array([float(x) for x in arr.ravel()], dtype=np.float64).reshape(arr.shape)
        except OverflowError:
            raise NoiseawareValueError(
                f"{owner}: {name} must hold numbers within the float64 range; got an integer too large for float64."
            ) from None
    with np.errstate(over="ignore", invalid="ignore"):
        arr = arr.astype(dtype)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise NoiseawareValueError(
            f"{owner}: {name} must not contain NaN or inf; got {bad} non-finite value(s)."
            + (f" {remedy}" if remedy else "")
        )
    return arr


def _integer_range_error(name: str, x: int) -> NoiseawareValueError:
    beyond = " (beyond int64)" if not -(2**63) <= x < 2**63 else ""
    return NoiseawareValueError(
        f"{current_owner()}: {name} must hold integers in [-2**62, 2**62] {INT_NOISE_RULE}; got {x}{beyond}."
    )


def integer_array(name: str, value: Any, *, booleans: bool = True) -> np.ndarray:
    """Return ``value`` as an int64 array; floats are accepted only if integral and finite.

    Every entry must lie in ``[-2**62, 2**62]`` (:data:`INT_BOUND`), compared as exact integers
    (before any rounding to float64): integer mechanisms add noise to these values in int64.
    Larger values, including uint64 and Python integers beyond int64, raise instead of wrapping
    around; so do ragged sequences, strings, complex numbers, other non-numbers and, with
    ``booleans=False`` (a record's typed field), bools.
    """
    _no_bool(name, value, booleans)
    arr = _as_array(name, value)
    if arr.dtype.kind == "b":
        return arr.astype(np.int64)
    if arr.dtype.kind == "O":
        ints = []
        for x in arr.ravel():
            if isinstance(x, numbers.Integral | np.bool_):
                ints.append(int(x))
                continue
            xf = float(x)
            if not math.isfinite(xf):
                raise NoiseawareValueError(f"{current_owner()}: {name} must not contain NaN or inf.")
            if not xf.is_integer():
                raise NoiseawareValueError(
                    f"{current_owner()}: {name} must hold integers; got non-integral values such as {[xf]}."
                )
            ints.append(int(xf))
        for x in ints:
            if abs(x) > INT_BOUND:
                raise _integer_range_error(name, x)
        return np.array(ints, dtype=np.int64).reshape(arr.shape)
    if arr.dtype.kind in "iu":
        if arr.size:
            lo, hi = int(arr.min()), int(arr.max())
            if hi > INT_BOUND:
                raise _integer_range_error(name, hi)
            if lo < -INT_BOUND:
                raise _integer_range_error(name, lo)
        return arr.astype(np.int64)
    # floats
    if not np.all(np.isfinite(arr)):
        raise NoiseawareValueError(f"{current_owner()}: {name} must not contain NaN or inf.")
    if not np.all(arr == np.round(arr)):
        raise NoiseawareValueError(
            f"{current_owner()}: {name} must hold integers; got non-integral values such as "
            f"{arr[arr != np.round(arr)].ravel()[:3].tolist()}."
        )
    if arr.size:
        for x in (arr.min(), arr.max()):
            if abs(float(x)) > INT_BOUND:
                raise _integer_range_error(name, int(x))
    return arr.astype(np.int64)


def no_total_epsilon(epsilon: Any) -> None:
    """Refuse ``epsilon=`` on a per-pair likelihood: the name means the *total* budget in ``privatize``.

    ``privatize(..., statistic="median_pairs", epsilon=e)`` splits ``e`` over the ``p(p-1)/2``
    pairs; a likelihood's noise is per pair. Taking ``epsilon`` here would be wrong by that
    factor, silently, for a user who passes the total, so the per-pair budget has its own name.
    """
    owner = current_owner()
    if epsilon is not None:
        raise NoiseawareTypeError(
            f"{owner}: epsilon= is not accepted here; got epsilon={epsilon!r}. The noise of each pair's count is "
            "set by its own budget: pass epsilon_per_pair= (privatize's epsilon is the total over the p(p-1)/2 "
            "pairs, so epsilon_per_pair = epsilon / (p(p-1)/2), recorded as release.metadata['epsilon_per_pair']), "
            "alpha= (release.mechanism.alpha), or best, build the likelihood with from_release(...)."
        )
