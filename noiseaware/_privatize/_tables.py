"""Tables and vectors with a stated sensitivity, and record-level randomized response."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import current_owner, owned, owner_scope
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..mechanisms import (
    DiscreteGaussianMechanism,
    GaussianMechanism,
    GeometricMechanism,
    LaplaceMechanism,
    Mechanism,
    RandomizedResponse,
)
from ..release import Release
from . import _dask
from ._common import Context, even_share, finish, no_extra, statistic

__all__: list[str] = []


@owned("privatize")
def _cell_labels(data: Any, arr: np.ndarray, labels: Any) -> list[tuple[str, ...]]:
    if labels is not None:
        if isinstance(labels, str | bytes) or not isinstance(labels, Sequence | np.ndarray):
            raise NoiseawareTypeError(
                v.message("labels", "must be a list with one label (or tuple of labels) per cell", labels)
            )
        labs = [tuple(str(s) for s in (lab if isinstance(lab, list | tuple) else (lab,))) for lab in labels]
        if len(labs) != arr.size:
            raise NoiseawareValueError(f"privatize: labels must give one label per cell ({arr.size}); got {len(labs)}.")
        return labs
    pandas_like = hasattr(data, "index") and not callable(data.index)
    if pandas_like and hasattr(data, "columns") and arr.ndim == 2:
        return [(str(r), str(c)) for r in data.index for c in data.columns]
    if pandas_like and arr.ndim == 1:
        return [(str(r),) for r in data.index]
    return [tuple(str(i) for i in idx) for idx in np.ndindex(*arr.shape)]


def _additive_budget(ctx: Context, options: dict[str, Any], mech_name: str, sens: float) -> Mechanism:
    """The mechanism from its budget (``epsilon`` or ``rho``) or its noise (``scale`` or ``sigma``), exactly one."""
    owner = current_owner()
    pure = mech_name in ("geometric", "laplace")
    cls: Any = {
        "geometric": GeometricMechanism,
        "laplace": LaplaceMechanism,
        "discrete_gaussian": DiscreteGaussianMechanism,
        "gaussian": GaussianMechanism,
    }[mech_name]
    budget, noise, other_budget, other_noise = ("epsilon", "scale", "rho", "sigma") if pure else (
        "rho", "sigma", "epsilon", "scale"
    )
    given, par = getattr(ctx, budget), options.get(noise)
    if getattr(ctx, other_budget) is not None or options.get(other_noise) is not None:
        kind = "pure DP" if pure else "zCDP"
        raise NoiseawareValueError(
            f"{owner}: mechanism {mech_name!r} is {kind}; give {budget}=... or {noise}=..., "
            f"not {other_budget}/{other_noise}."
        )
    if (given is None) == (par is None):
        raise NoiseawareValueError(f"{owner}: give exactly one of {budget}=... or {noise}=... for {mech_name!r}.")
    if par is not None:
        return cls(**{noise: v.positive(noise, par)}, sensitivity=sens)
    build = cls.from_epsilon if pure else cls.from_rho
    return build(float(given), sensitivity=sens)  # type: ignore[no-any-return]


def _stated_sensitivity(
    statistic: str,
    data: Any,
    ctx: Context,
    mechanism: str | None,
    options: dict[str, Any],
    *,
    families: tuple[str, str],
    read: Callable[[Any], np.ndarray],
    missing: str,
) -> Release:
    """The one route of ``counts`` and ``vector``: a stated sensitivity, additive noise on every entry.

    ``families`` is (pure-DP family, zCDP family); ``read(raw)`` checks the data and returns
    its array; ``missing`` says which sensitivity to state.
    """
    owner = f"privatize(statistic={statistic!r})"
    with owner_scope(owner):
        no_extra(options, {"sensitivity", "labels", "n", "scale", "sigma"})
        pure, zcdp = families
        default = zcdp if (ctx.rho is not None or options.get("sigma") is not None) else pure
        mech_name = v.choice("mechanism", mechanism or default, families)
        if "sensitivity" not in options:
            raise NoiseawareValueError(f"{owner}: {missing}")
        if _dask.is_dask(data):  # e.g. a Dask groupby's table: small, computed here (_dask.py)
            data = _dask.materialize(data)
        arr = read(data.to_numpy() if hasattr(data, "to_numpy") else data)
        if mech_name == "geometric":  # integer noise needs an integer sensitivity
            sens: float = v.integer("sensitivity", options["sensitivity"], minimum=1)
        else:
            sens = v.positive("sensitivity", options["sensitivity"])
        mech = _additive_budget(ctx, options, mech_name, sens)
        labels = _cell_labels(data, arr, options.get("labels"))
        n = options.get("n")
        n = None if n is None else v.integer("n", n, minimum=1)
        meta = {"sensitivity_norm": "l1" if mech_name == pure else "l2"}
        return finish(ctx, statistic, arr, mech, "joint", labels, n, meta)


def _read_counts(raw: Any) -> np.ndarray:
    arr = v.integer_array("data", raw)
    if arr.size == 0:
        raise NoiseawareValueError(f"{current_owner()}: data must hold at least one count.")
    if arr.min() < 0:
        raise NoiseawareValueError(f"{current_owner()}: counts must be >= 0; got a minimum of {arr.min()}.")
    return arr


def _read_vector(raw: Any) -> np.ndarray:
    arr = v.finite_array("data", raw)
    if arr.ndim != 1 or arr.size == 0:
        raise NoiseawareValueError(f"{current_owner()}: data must be a non-empty 1-D vector; got shape {arr.shape}.")
    return arr


@statistic("counts")
def _counts(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """Integer counts (vector or table) with a stated sensitivity, noise on every cell."""
    missing = (
        "state the sensitivity of the table (L1 for geometric, L2 for discrete_gaussian), "
        "e.g. sensitivity=2 when one record may move between two cells."
    )
    return _stated_sensitivity(
        "counts", data, ctx, mechanism, options, families=("geometric", "discrete_gaussian"), read=_read_counts,
        missing=missing,
    )


@statistic("vector")
def _vector(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """A real vector with a stated L1 (Laplace) or L2 (Gaussian) sensitivity."""
    missing = "state the vector's sensitivity (L1 for laplace, L2 for gaussian)."
    return _stated_sensitivity(
        "vector", data, ctx, mechanism, options, families=("laplace", "gaussian"), read=_read_vector, missing=missing
    )


@statistic("randomized_response")
@owned("privatize(statistic='randomized_response')")
def _randomized_response(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """Record-level k-ary randomized response on each categorical answer (Eng et al. 2024, Example 1).

    ``data`` holds category codes ``0..k-1``, shape (n, q): q answers per record. The budget is
    split evenly over the q answers of a record (sequential within a record, parallel across
    records); alternatively give ``p=`` (probability of a truthful answer) directly.
    """
    owner = "privatize(statistic='randomized_response')"
    no_extra(options, {"categories", "p", "columns"})
    if mechanism not in (None, "randomized_response"):
        v.refuse("mechanism", "must be 'randomized_response'", mechanism)
    raw = data.to_numpy() if hasattr(data, "to_numpy") else data
    arr = v.integer_array("data", raw)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise NoiseawareValueError(f"{owner}: data must be (n, q) category codes; got shape {arr.shape}.")
    if "categories" not in options:
        raise NoiseawareValueError(f"{owner}: give categories=k, the (public) number of categories per answer.")
    k = v.integer("categories", options["categories"], minimum=2)
    q = arr.shape[1]
    if "p" in options:
        if ctx.epsilon is not None or ctx.rho is not None:
            raise NoiseawareValueError(f"{owner}: give either epsilon=... or p=..., not both.")
        mech = RandomizedResponse(k=k, p=options["p"])
    else:
        eps = ctx.require("epsilon")
        mech = RandomizedResponse.from_epsilon(even_share(eps, q), k)
    if hasattr(data, "columns"):
        names = [str(c) for c in data.columns]
    else:
        cols = options.get("columns")
        if cols is not None and (isinstance(cols, str | bytes) or not isinstance(cols, Sequence | np.ndarray)):
            raise NoiseawareTypeError(v.message("columns", "must be a list of names", cols))
        names = [str(c) for c in (cols if cols is not None else [f"x{j}" for j in range(q)])]
    if len(names) != q:
        raise NoiseawareValueError(f"{owner}: columns must name all {q} answers; got {len(names)}.")
    labels = [(str(i), names[j]) for i in range(arr.shape[0]) for j in range(q)]
    meta: dict[str, Any] = {"columns": names, "answers_per_record": q, "categories": k}
    return finish(ctx, "randomized_response", arr, mech, "per_record", labels, int(arr.shape[0]), meta)


