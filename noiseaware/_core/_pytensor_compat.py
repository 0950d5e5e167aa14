r"""What differs between the supported PyTensor versions: the one place that knows (imported by the PyTensor side only).

The package runs on PyTensor 2.x (with PyMC 5) and PyTensor 3.x (with PyMC 6). Each difference
is detected from the installed PyTensor's own signatures, not from its version string, and is
hidden behind one function here, so that the ops and the PyMC front end are written once:

* **A random variable's next rng.** PyTensor 3 asks a caller of a ``RandomVariable`` to take the
  updated generator with the draw (``op(..., return_next_rng=True)`` returns ``(next_rng, draw)``)
  and warns (``DeprecationWarning``) when it is hidden; PyTensor 2.x has no such argument and
  hides it (it is the draw node's first output). :func:`rv_with_next_rng`.
* **``Op.infer_shape``.** PyTensor 3 calls ``infer_shape(node, input_shapes)`` and warns about an
  ``fgraph`` parameter; PyTensor 2.x calls ``infer_shape(fgraph, node, input_shapes)``.
  :func:`infer_shape_method`.
* **An Op's vector-Jacobian product.** PyTensor 3 asks ``Op.pullback(inputs, outputs,
  cotangents)`` and warns (``FutureWarning``) about an ``L_op``; PyTensor 2.x asks ``Op.L_op``
  with the same arguments. :func:`with_pullback`.

This module imports PyTensor at its top.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from pytensor.graph.op import Op
from pytensor.tensor.random.op import RandomVariable

__all__ = [
    "HAS_PULLBACK",
    "INFER_SHAPE_TAKES_FGRAPH",
    "RV_RETURNS_NEXT_RNG",
    "infer_shape_method",
    "rv_with_next_rng",
    "with_pullback",
]

#: PyTensor >= 3: ``RandomVariable.__call__`` takes ``return_next_rng`` (and warns without it); 2.x: it does not.
RV_RETURNS_NEXT_RNG = "return_next_rng" in inspect.signature(RandomVariable.__call__).parameters
#: PyTensor 2.x: ``Op.infer_shape(fgraph, node, input_shapes)``; PyTensor >= 3: ``Op.infer_shape(node, input_shapes)``.
INFER_SHAPE_TAKES_FGRAPH = "fgraph" in inspect.signature(RandomVariable.infer_shape).parameters
#: PyTensor >= 3: gradients through ``Op.pullback``; 2.x: through ``Op.L_op`` (no ``pullback``).
HAS_PULLBACK = hasattr(Op, "pullback")

_OpType = TypeVar("_OpType", bound=type)


def rv_with_next_rng(op: RandomVariable, *params: Any, rng: Any, size: Any = None) -> tuple[Any, Any]:
    """``(next_rng, draw)`` of the random variable ``op(*params, size=size, rng=rng)`` on every PyTensor.

    ``rng`` is a shared generator (``pytensor.shared(np.random.default_rng())``); ``next_rng`` is
    its update, which a ``SymbolicRandomVariable`` built on the draw lists among its outputs.
    """
    if RV_RETURNS_NEXT_RNG:
        next_rng, draw = op(*params, size=size, rng=rng, return_next_rng=True)
        return next_rng, draw
    draw = op(*params, size=size, rng=rng)
    return draw.owner.outputs[0], draw


def infer_shape_method(fn: Callable[[Any, Any, list[Any]], list[Any]]) -> Callable[..., list[Any]]:
    """An ``Op.infer_shape`` written as ``fn(self, node, input_shapes)``, in the signature the installed PyTensor calls.

    Use it in a class body: ``infer_shape = infer_shape_method(_infer_shape)``.
    """
    if not INFER_SHAPE_TAKES_FGRAPH:
        return fn

    def infer_shape(self: Any, fgraph: Any, node: Any, input_shapes: list[Any]) -> list[Any]:
        """The output shapes of ``node`` from its ``input_shapes`` (``fgraph`` unused)."""
        return fn(self, node, input_shapes)

    return infer_shape


def with_pullback(cls: _OpType) -> _OpType:
    """Class decorator: an Op's ``pullback`` (its vector-Jacobian product) is also its ``L_op`` under PyTensor 2.x."""
    if not HAS_PULLBACK:
        cls.L_op = cls.pullback  # type: ignore[attr-defined]
    return cls

