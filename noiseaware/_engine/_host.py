"""The host stack's result container, built and read through ArviZ's public API (engine, private).

Every fit returns what the installed stack's ``pm.sample`` returns: an :class:`xarray.DataTree` under
ArviZ >= 1, an :class:`arviz.InferenceData` under ArviZ 0.x. This module is the one place that
knows the difference: it builds the container from groups of arrays (``arviz.from_dict`` of each
version) and reads and writes its groups and root attributes, so the fits and the result
functions (:mod:`noiseaware.results`) are written once for both.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = [
    "arviz_major",
    "from_groups",
    "group",
    "group_names",
    "has_group",
    "is_result",
    "set_group",
]


@functools.cache
def arviz_major() -> int:
    """The installed ArviZ's major version (0 or 1)."""
    import arviz as az

    return int(str(az.__version__).split(".")[0])


def _netcdf_attr(value: Any) -> Any:
    # netCDF attributes hold strings, numbers and flat numeric arrays: booleans become ints
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, list | tuple) and all(isinstance(x, bool | np.bool_) for x in value):
        return [int(x) for x in value]
    return value


def from_groups(
    groups: Mapping[str, Any],
    *,
    dims: Mapping[str, Any] | None = None,
    coords: Mapping[str, Any] | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> Any:
    """The host container of ``groups`` (name -> dict of arrays or :class:`xarray.Dataset`).

    A dict group goes through ``arviz.from_dict`` (``(chain, draw, ...)`` arrays for the sampled
    groups: ``posterior``, ``sample_stats``, ``log_likelihood``, ...; any shape for
    ``observed_data`` and ``constant_data``), with ``dims`` and ``coords`` as ArviZ takes them; a
    Dataset group is added as it is. ``attrs`` go to the root (``result.attrs`` under both ArviZs).

    Examples
    --------
    >>> import numpy as np
    >>> res = from_groups({"posterior": {"mu": np.zeros((2, 10))}}, attrs={"noiseaware_seed": 1})
    >>> group(res, "posterior")["mu"].shape, res.attrs["noiseaware_seed"]
    ((2, 10), 1)
    """
    import arviz as az
    import xarray as xr

    dicts = {k: dict(g) for k, g in groups.items() if not isinstance(g, xr.Dataset)}
    datasets = {k: g for k, g in groups.items() if isinstance(g, xr.Dataset)}
    used = {n for g in dicts.values() for n in g}
    dims_ = {k: list(d) for k, d in (dims or {}).items() if k in used}
    if arviz_major() >= 1:
        res = az.from_dict(dicts, dims=dims_ or None, coords=dict(coords) if coords else None)
    else:
        res = az.from_dict(**dicts, dims=dims_ or None, coords=dict(coords) if coords else None)
    for name, ds in datasets.items():
        set_group(res, name, ds)
    res.attrs.update({k: _netcdf_attr(x) for k, x in (attrs or {}).items()})
    return res


def is_result(obj: Any) -> bool:
    """Whether ``obj`` is the host's result container (a DataTree or an ArviZ 0.x InferenceData)."""
    import xarray as xr

    if isinstance(obj, xr.DataTree):
        return True
    if arviz_major() < 1:
        import arviz as az

        return isinstance(obj, az.InferenceData)
    return False


def group_names(result: Any) -> list[str]:
    """The names of ``result``'s groups (``posterior``, ``sample_stats``, ...)."""
    import xarray as xr

    if isinstance(result, xr.Dataset):  # a bare posterior (check_mixing takes one)
        return ["posterior"]
    if isinstance(result, xr.DataTree):
        return [str(k) for k in result.children]
    return [str(k) for k in result.groups()]


def has_group(result: Any, name: str) -> bool:
    """Whether ``result`` has the group ``name``."""
    return name in group_names(result)


def group(result: Any, name: str) -> Any:
    """Group ``name`` of ``result`` as an :class:`xarray.Dataset` (``result`` may also be a Dataset)."""
    import xarray as xr

    if isinstance(result, xr.Dataset):
        if name != "posterior":
            raise KeyError(name)
        return result
    if isinstance(result, xr.DataTree):
        return result[name].to_dataset()
    return result[name]


def set_group(result: Any, name: str, ds: Any) -> None:
    """Put ``ds`` (an :class:`xarray.Dataset`) into ``result`` as group ``name``, in place."""
    import xarray as xr

    if isinstance(result, xr.DataTree):
        result[name] = xr.DataTree(dataset=ds)
    elif name in result.groups():
        setattr(result, name, ds)
    else:
        result.add_groups({name: ds})
