r"""PyTensor nodes evaluated by the core's own JAX functions (imported only by the PyTensor backend).

Some core math compiles far too slowly as a PyTensor graph. :class:`JaxMeanCov` is one PyTensor
node whose value is a backend-neutral core function compiled by JAX and whose gradient is JAX's
vector-Jacobian product of it (:class:`JaxMeanCovGrad`), so the math stays written once, in the
core's ``xp`` style, and PyTensor's JAX linker (nutpie, NumPyro through PyMC) runs the same JAX
functions. The function is a property of the node, passed by the core module that owns it, so this
module imports no math module.

Its user: :func:`noiseaware._core._dirichlet.logmean_moments` with the PyTensor backend and
``moments="censored"`` (Guo, Barrientos & Peña (2022), *Differentially Private Inference for
Compositional Data*, Supplement S1). Built as a PyTensor graph, those moments (a 256-term series
and a 141-node quadrature, with their gradient) compiled to 75-180 C modules on a fresh machine,
about a minute before a first censored PyMC fit could start, and PyTensor's fusion of the gradient
built an ``Add`` of more than 32 inputs that its Python implementation cannot run. JAX compiles
the value and the product once per censoring-series length, in seconds.

This module imports PyTensor at its top; JAX is imported when a node is first evaluated.

**Forked processes.** JAX cannot run in a process forked after it started its backends (its threads
do not survive the fork, and the child waits for them forever). PyMC's multiprocess ``pm.sample``
forks its chains on Linux after evaluating the model in the parent, so a node evaluated in such a
child raises :class:`~noiseaware.exceptions.NoiseawareError` with the remedy (``cores=1``,
``mp_ctx="spawn"``, or a JAX-based sampler) instead of hanging.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from .._validation import current_owner, owner_scope
from ..exceptions import NoiseawareError, NoiseawareValueError
from ._pytensor_compat import infer_shape_method, with_pullback

__all__ = ["JaxMeanCov", "JaxMeanCovGrad", "jax_mean_cov"]

#: ``fn(bk, x, c, *static) -> (mean (d,), cov (d, d))``: a core function in the ``xp`` style.
MeanCovFunction = Callable[..., tuple[Any, Any]]

#: Whether this process was forked after JAX started its backends (set in the child by the fork hook).
_FORKED_AFTER_JAX = False


def _after_fork_in_child() -> None:
    global _FORKED_AFTER_JAX
    xla_bridge = sys.modules.get("jax._src.xla_bridge")
    if xla_bridge is not None and xla_bridge.backends_are_initialized():
        _FORKED_AFTER_JAX = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def _check_can_run_jax() -> None:
    """Raise, rather than hang, in a process forked after JAX started (PyMC's multiprocess sampling)."""
    owner = current_owner()
    if _FORKED_AFTER_JAX:
        raise NoiseawareError(
            f"{owner}: this PyTensor node is evaluated by JAX, which cannot run in a process forked after JAX "
            "started (PyMC's multiprocess sampling forks its chains). Pass cores=1, or mp_ctx='spawn' (or "
            "'forkserver'), to pm.sample, or sample with nuts_sampler='numpyro' or 'nutpie'."
        )


def jax_mean_cov(fn: MeanCovFunction, x: Any, c: Any, static: tuple[Any, ...]) -> tuple[Any, Any]:
    """The PyTensor outputs ``(mean (d,), cov (d, d))`` of ``fn(jax_backend, x, c, *static)``, one node.

    ``fn`` must be a module-level function (the node is pickled with a reference to it), ``x`` one
    ``(d,)`` vector (differentiated), ``c`` a scalar (public data: not differentiated) and ``static``
    hashable arguments fixed at compile time.
    """
    mean, cov = cast(list[Any], JaxMeanCov(fn, tuple(static))(x, c))
    return mean, cov


@functools.cache
def _jax_functions(fn: MeanCovFunction, static: tuple[Any, ...]) -> tuple[Any, Any]:
    """``(x, c) -> (mean, cov)`` and its vector-Jacobian product in ``x``, compiled once per ``(fn, static)``."""
    import jax

    from ._backend import get_backend

    jbk = get_backend("jax")

    def value(x: Any, c: Any) -> Any:
        return fn(jbk, x, c, *static)

    def pullback(x: Any, c: Any, g_mean: Any, g_cov: Any) -> Any:
        return jax.vjp(lambda z: value(z, c), x)[1]((g_mean, g_cov))[0]

    return jax.jit(value), jax.jit(pullback)


@with_pullback
class JaxMeanCov(Op):
    r"""``(x, c) -> (mean, cov)`` evaluated by JAX: ``fn(jax_backend, x, c, *static)``.

    ``x`` is one ``(d,)`` vector and ``c`` a scalar; the node's properties are ``fn`` and ``static``.
    The gradient in ``x`` is :class:`JaxMeanCovGrad`; ``c`` is public data and has no gradient (asking
    for one raises PyTensor's ``NullTypeGradError``, never a silent zero).
    """

    __props__ = ("fn", "static")

    def __init__(self, fn: MeanCovFunction, static: tuple[Any, ...]) -> None:
        self.fn, self.static = fn, tuple(static)
        _register_jax()  # JAX evaluates this node anyway
        _register_numba()

    def make_node(self, *inputs: Any) -> Apply:
        x = pt.as_tensor_variable(inputs[0], dtype="float64")
        c = pt.as_tensor_variable(inputs[1], dtype="float64")
        if x.type.ndim != 1 or c.type.ndim != 0:
            raise NoiseawareValueError(
                f"{self.fn.__name__}: the PyTensor node takes one vector and a scalar; got ndim {x.type.ndim} "
                f"and {c.type.ndim}."
            )
        d = x.type.shape[0]
        return Apply(self, [x, c], [pt.tensor(dtype="float64", shape=(d,)), pt.tensor(dtype="float64", shape=(d, d))])

    def perform(self, node: Apply, inputs: Sequence[Any], outputs: list[Any]) -> None:
        # Copies, not np.asarray views: a view of a JAX buffer is read-only, and PyTensor may overwrite
        # an Op's outputs (its in-place rewrites, e.g. an in-place Elemwise on ``cov``).
        with owner_scope(self.fn.__name__):
            _check_can_run_jax()
            mean, cov = _jax_functions(self.fn, self.static)[0](*inputs)
            outputs[0][0] = np.array(mean, dtype=np.float64)
            outputs[1][0] = np.array(cov, dtype=np.float64)

    def _infer_shape(self, node: Apply, shapes: list[Any]) -> list[Any]:
        (d,) = shapes[0]
        return [(d,), (d, d)]

    infer_shape = infer_shape_method(_infer_shape)

    def pullback(self, inputs: Sequence[Any], outputs: Sequence[Any], grads: Sequence[Any]) -> list[Any]:
        """The vector-Jacobian product in ``x`` (:class:`JaxMeanCovGrad`); none in ``c``."""
        g = [pt.zeros_like(o) if isinstance(gr.type, DisconnectedType) else gr for o, gr in zip(outputs, grads)]
        return [JaxMeanCovGrad(self.fn, self.static)(*inputs, *g), grad_not_implemented(self, 1, inputs[1])]


class JaxMeanCovGrad(Op):
    """``(x, c, g_mean, g_cov) -> d<g, (mean, cov)>/dx`` by JAX (the gradient of :class:`JaxMeanCov`)."""

    __props__ = ("fn", "static")

    def __init__(self, fn: MeanCovFunction, static: tuple[Any, ...]) -> None:
        self.fn, self.static = fn, tuple(static)

    def make_node(self, *inputs: Any) -> Apply:
        ins = [pt.as_tensor_variable(z, dtype="float64") for z in inputs]  # x, c, g_mean, g_cov
        return Apply(self, ins, [ins[0].type()])

    def perform(self, node: Apply, inputs: Sequence[Any], outputs: list[Any]) -> None:
        with owner_scope(self.fn.__name__):
            _check_can_run_jax()
            outputs[0][0] = np.array(_jax_functions(self.fn, self.static)[1](*inputs), dtype=np.float64)  # a copy

    def _infer_shape(self, node: Apply, shapes: list[Any]) -> list[Any]:
        return [shapes[0]]

    infer_shape = infer_shape_method(_infer_shape)


@functools.cache
def _register_jax() -> None:
    """PyTensor's JAX backend (nutpie, NumPyro through PyMC) runs the core's JAX functions themselves."""
    from pytensor.link.jax.dispatch import jax_funcify

    @jax_funcify.register(JaxMeanCov)
    def _value_jax(op: JaxMeanCov, **kwargs: Any) -> Any:
        return _jax_functions(op.fn, op.static)[0]

    @jax_funcify.register(JaxMeanCovGrad)
    def _grad_jax(op: JaxMeanCovGrad, **kwargs: Any) -> Any:
        return _jax_functions(op.fn, op.static)[1]


@functools.cache
def _register_numba() -> None:
    """PyTensor's Numba backend (the default mode from PyTensor 3) calls the same JAX functions.

    Numba cannot call JAX from compiled code, so each node runs its ``perform`` (one JAX call) from
    Numba's object mode, as the C backend runs it from Python: one Python call per evaluation of the
    node, whatever its size. Unregistered, the Numba backend reaches the same call by its fallback
    for unknown Ops, with a ``UserWarning`` ("Numba will use object mode ...") about a slowdown that
    does not apply here. Without Numba (optional under PyTensor 2.x) there is nothing to register.
    """
    try:
        import numba
        from pytensor.link.numba.dispatch import numba_funcify
        from pytensor.link.numba.dispatch.basic import get_numba_type, numba_njit
    except ImportError:
        return

    def object_mode(op: Op, node: Apply, **kwargs: Any) -> Any:
        types = [get_numba_type(o.type) for o in node.outputs]
        ret_type = types[0] if len(types) == 1 else numba.types.Tuple(types)

        def py_perform(inputs: tuple[Any, ...]) -> Any:
            storage: list[list[Any]] = [[None] for _ in node.outputs]
            op.perform(node, inputs, storage)
            return storage[0][0] if len(storage) == 1 else tuple(o[0] for o in storage)

        @numba_njit
        def perform(*inputs: Any) -> Any:
            with numba.objmode(ret=ret_type):
                ret = py_perform(inputs)
            return ret

        return perform

    numba_funcify.register(JaxMeanCov)(object_mode)
    numba_funcify.register(JaxMeanCovGrad)(object_mode)
