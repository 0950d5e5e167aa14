"""Shared plumbing of the PyMC front end: filtered imports, size handling, parameter conversion.

Imported first by :mod:`noiseaware.pymc`: it silences two notices that are not about
noiseaware's use of PyTensor (ArviZ's import-time ``FutureWarning`` about its refactor, and
PyTensor's one-time "could not link to a BLAS" ``UserWarning``; no operation here uses BLAS)
and resolves the lazy BLAS probe so it does not fire later.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=r"(?s).*ArviZ is undergoing", category=FutureWarning)
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS", category=UserWarning)
    import pymc as pm  # noqa: F401  (imported here first, under the filters)
    import pytensor
    import pytensor.tensor as pt
    from pymc.distributions.dist_math import check_parameters
    from pymc.distributions.shape_utils import rv_size_is_none

    _ = pytensor.config.blas__ldflags  # resolve the lazy BLAS probe now, warning silenced

from pytensor.tensor.random.op import RandomVariable

from .. import _core
from .. import _validation as v
from .._core import _specs
from .._validation import current_owner
from ..exceptions import NoiseawareTypeError, NoiseawareValueError

__all__: list[str] = []

PT = _core.get_backend("pytensor")
NP = _core.get_backend("numpy")
#: Family of each integer code (constant inputs of the random variables).
NOISE_FAMILY_BY_CODE = {code: family for family, code in _specs.NOISE_CODES.items()}


class CountRV(RandomVariable):
    """A ``RandomVariable`` of integer counts, printed under the name of its distribution.

    A subclass named ``<Distribution>RV`` sets ``name``, ``signature`` and ``rng_fn``; its
    ``dtype`` is ``int64`` and its ``_print_name`` (what ``model.str_repr()`` and the LaTeX
    representation of a model show) is ``<Distribution>``.
    """

    dtype = "int64"
    _print_name: tuple[str, str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        law = cls.__name__.removesuffix("RV")
        cls._print_name = (law, f"\\operatorname{{{law}}}")


def spec_draw(spec: Any, rng: np.random.Generator, shape: tuple[int, ...], **prepared: Any) -> np.ndarray:
    """The spec's draw of ``shape`` with NumPy uniforms from ``rng``, as ``int64`` counts (an ``rng_fn`` body)."""
    return np.asarray(spec.part("draw")(NP, rng.random, shape, **prepared)).astype(np.int64)


def shape_of(size: Any, *params: Any) -> tuple[int, ...]:
    """The draw shape: ``size`` or the broadcast shape of the parameters."""
    if size is not None:
        return tuple(size)
    return tuple(np.broadcast_shapes(*(np.shape(p) for p in params)))


def scalar_int(x: Any) -> int:
    """The integer in a constant input that PyTensor may have expanded to shape (1, ..., 1)."""
    return int(np.asarray(x).reshape(-1)[0])


def rv_sizes(x: Any) -> Any:
    """Sizes as ``rng_fn`` gets them: an int when all equal (PyTensor may expand a scalar), else an array."""
    arr = np.asarray(x, dtype=np.int64)
    return int(arr.reshape(-1)[0]) if arr.size == 1 else arr


def const_int(name: str, x: Any) -> int:
    """The integer value of a constant tensor (data such as ``N``); raise if it is symbolic."""
    try:
        val = pt.get_underlying_scalar_constant_value(x)
    except Exception as exc:
        raise NoiseawareValueError(
            f"{current_owner()}: {name} must be a concrete integer (it fixes a table computed once per data set); "
            f"got a symbolic {name}."
        ) from exc
    return v.integer(name, np.asarray(val).item())


def noise_family(code: Any) -> str:
    """The noise family of a constant noise-code input (:data:`NOISE_FAMILY_BY_CODE`); raise if it is symbolic."""
    return NOISE_FAMILY_BY_CODE[const_int("noise", code)]


def const_float(name: str, x: Any) -> float:
    """The float value of a constant tensor; raise if it is symbolic."""
    owner = current_owner()
    try:
        return float(np.asarray(pt.get_underlying_scalar_constant_value(x)).item())
    except Exception as exc:
        raise NoiseawareValueError(f"{owner}: {name} must be a concrete number; got a symbolic {name}.") from exc


def _size_roots(x: Any) -> list[Any] | None:
    """The shared variables a size depends on, or None when it depends on a free variable."""
    from pytensor.graph.basic import Constant
    from pytensor.graph.traversal import graph_inputs
    from pytensor.tensor.sharedvar import TensorSharedVariable

    # random variables have a shared *generator* among their roots: only data containers pass
    roots = list(graph_inputs([x]))
    if not all(isinstance(r, Constant | TensorSharedVariable) for r in roots):
        return None
    return [r for r in roots if isinstance(r, TensorSharedVariable)]


def size_value(name: str, x: Any, minimum: int) -> tuple[Any, bool]:
    """Current value of a size (constant, ``pm.Data`` or plain) and whether it lives in ``pm.Data``."""
    owner = current_owner()
    if not isinstance(x, pytensor.graph.basic.Variable):
        return _core.concrete_sizes(name, x, minimum), False
    if isinstance(x, pt.TensorConstant):
        return _core.concrete_sizes(name, np.asarray(x.data), minimum), False
    shared = _size_roots(x)
    if shared is None:
        raise NoiseawareTypeError(
            f"{owner}: {name} must be concrete data (an int, an array of ints, or a pm.Data container); got a "
            f"{name} that depends on a random variable ({x}). {name} fixes the static window of each exact sum "
            "(O(sqrt n) terms), so it cannot be a parameter of the model."
        )
    return _core.concrete_sizes(name, np.asarray(x.eval()), minimum), bool(shared)


def size_input(name: str, x: Any, minimum: int) -> tuple[Any, Any]:
    """``(tensor input, current value)`` of a size argument of ``dist``; pm.Data stays symbolic."""
    val, shared = size_value(name, x, minimum)
    return (pt.cast(x, "int64") if shared else pt.constant(val, dtype="int64")), val


def sizes_guard(res: Any, sizes: dict[str, Any], values: dict[str, Any]) -> Any:
    """Make a stale log-probability fail loudly when a pm.Data size changed after it was built."""
    owner = current_owner()
    conds = [pt.all(pt.eq(sizes[k], values[k])) for k in sizes if not isinstance(sizes[k], pt.TensorConstant)]
    if not conds:
        return res
    return check_parameters(
        res,
        *conds,
        msg=f"{owner}: a size held in pm.Data ({', '.join(sizes)}) changed after this log-probability was built; "
        "sizes fix the exact windows, so rebuild it (pm.sample and model.compile_logp do)",
        can_be_replaced_by_ninf=False,
    )


def sized(size: Any, x: Any, event: tuple[Any, ...] = (), *, dtype: str | None = None) -> Any:
    """A support point ``x`` filled to shape ``size + event`` when ``size`` is given, cast to ``dtype`` if named."""
    if not rv_size_is_none(size):
        x = pt.full((*tuple(size), *event), x)
    return x if dtype is None else pt.cast(x, dtype)


def as_float(x: Any) -> Any:
    """A float64 tensor."""
    return pt.as_tensor_variable(x, dtype="float64")


def alpha_arg(alpha: Any, epsilon: Any, sensitivity: Any, *, name: str = "epsilon") -> Any:
    """``alpha`` as a tensor from exactly one of ``alpha`` or ``epsilon`` (:func:`_specs.resolve_alpha`)."""
    return _specs.resolve_alpha(alpha, epsilon, sensitivity, name=name, to_float=as_float, exp=pt.exp)


def pair_alpha_arg(alpha: Any, epsilon_per_pair: Any, epsilon: Any) -> Any:
    """``alpha`` of a pair's count from ``alpha`` or ``epsilon_per_pair``; the total ``epsilon`` is refused.

    See :func:`noiseaware._validation.no_total_epsilon` for why the per-pair budget has its own name.
    """
    v.no_total_epsilon(epsilon)
    return alpha_arg(alpha, epsilon_per_pair, 1.0, name="epsilon_per_pair")


def check_integer_observed(observed: Any) -> None:
    """Refuse concrete observed counts that are not integers (NaN, a missing value, is allowed).

    PyMC casts the observed data of an integer-valued variable to its dtype, so ``3.5`` would
    silently become ``3``; the NumPyro front end gives such a value ``-inf``. Data held in a
    ``pm.Data`` container is checked at its current value; other symbolic values are left alone.

    Raises
    ------
    NoiseawareValueError
        If a finite entry is not an integer, or an entry is infinite.
    """
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant, Variable

    if observed is None:
        return
    if isinstance(observed, SharedVariable):
        observed = observed.get_value(borrow=True)
    elif isinstance(observed, Constant):
        observed = observed.data
    elif isinstance(observed, Variable):
        return
    mask = np.ma.getmaskarray(observed) if np.ma.isMaskedArray(observed) else None
    try:
        arr = np.asarray(np.ma.getdata(observed), dtype=np.float64)
    except (TypeError, ValueError):
        return  # not numbers: PyMC's own conversion reports it
    if mask is not None:
        arr = np.where(mask, np.nan, arr)
    with np.errstate(invalid="ignore"):
        bad = arr[~np.isnan(arr) & ~(np.isfinite(arr) & (np.floor(arr) == arr))]
    if bad.size:
        raise NoiseawareValueError(
            f"{current_owner()}: observed must hold integer counts (NaN for a missing value); got {bad.size} value(s) "
            f"that are not, such as {bad[:3].tolist()}. PyMC would truncate them silently; round them first "
            "if that is what is meant."
        )


def observed_kwargs(values: np.ndarray, kwargs: dict[str, Any], batch: Any = None) -> dict[str, Any]:
    """Keyword arguments of ``from_release``'s variable: ``observed`` defaults to the release's values.

    ``observed=None`` makes a free variable shaped like the release (a prior draw of the
    release); any other value is observed instead. ``pm.sample_prior_predictive`` and
    ``pm.sample_posterior_predictive`` draw observed variables in any case.

    ``batch`` is the symbolic batch shape of the variable's parameters, for releases whose cells
    are independent given the parameters (counts). When it depends on a ``pm.Data`` container and
    equals the release's shape now, the variable takes it as its ``shape`` (PyMC's idiom
    ``observed=y, shape=x.shape``), so after ``pm.set_data`` changes the container's shape,
    ``pm.sample_posterior_predictive(..., predictions=True)`` draws for the new units. A
    ``shape``, ``size`` or ``dims`` given by the caller wins.
    """
    out = dict(kwargs)
    if "observed" not in out:
        out["observed"] = values
        if batch is not None and not {"shape", "size", "dims"} & out.keys():
            follow = data_shape(batch, np.shape(values))
            if follow is not None:
                out["shape"] = follow
    elif out["observed"] is None:
        del out["observed"]
        out.setdefault("shape", np.shape(values))
    return out


def param_batch(*params: Any) -> Any:
    """The symbolic broadcast shape of the parameters (an int64 vector); None when all are scalars.

    What ``from_release`` passes to :func:`observed_kwargs` as ``batch``, for the parameters of one
    released cell (a vector-valued parameter enters by its batch part, e.g. ``probs[..., 0]``).
    """
    shape = pt.broadcast_shape(*(pt.as_tensor_variable(p) for p in params))
    return pt.stack([pt.cast(s, "int64") for s in shape]) if shape else None


def data_shape(batch: Any, shape: tuple[int, ...]) -> Any:
    """``batch`` (a symbolic shape) when it depends on a ``pm.Data`` container and equals ``shape`` now, else None."""
    from pytensor.graph.traversal import graph_inputs
    from pytensor.tensor.sharedvar import TensorSharedVariable

    batch = pt.as_tensor_variable(batch, dtype="int64") if not isinstance(batch, pt.TensorVariable) else batch
    if batch.ndim != 1 or not any(isinstance(r, TensorSharedVariable) for r in graph_inputs([batch])):
        return None
    now = tuple(int(k) for k in np.asarray(batch.eval(mode="FAST_COMPILE")))
    return batch if now == tuple(shape) else None


def noise_from_generator(rng: np.random.Generator, family: str, par: Any, shape: tuple[int, ...]) -> np.ndarray:
    """NumPy noise draws of ``shape`` through the spec's uniform transforms."""
    u = rng.random(_specs.noise_uniform_shape(family, shape))
    return np.asarray(_specs.noise_from_uniforms(NP, family, np.broadcast_to(par, shape), u))


def checked(res: Any, rules: dict[str, str], conds: dict[str, Any]) -> Any:
    """``check_parameters(res, *conditions, msg=...)`` with the spec's rule texts.

    E.g. ``"r must be in (-1, 1), alpha in (0, 1)"`` for ``r`` and ``alpha``.

    ``conds`` maps a parameter name to one condition or a tuple of conditions.
    """
    texts = [rules[k] for k in conds]
    msg = ", ".join([texts[0], *(t.replace(" must be ", " ", 1) for t in texts[1:])])
    flat = [c for k in conds for c in (conds[k] if isinstance(conds[k], tuple) else (conds[k],))]
    return check_parameters(res, *flat, msg=msg)
