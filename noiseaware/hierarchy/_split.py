r"""The parts of a hierarchy release fitted apart, stitched into one result (:func:`stitch`).

:meth:`NoisyHierarchy.split_by_root` cuts a release into one record per root unit; under a prior that
factorizes over root units the whole file's posterior is the product of the parts' (the method's
docstring says why), so the parts' results, put side by side, are a result of the whole file.
:func:`noiseaware.distributed.fit_hierarchy` fits the parts on Dask and stitches them here.
"""

from __future__ import annotations

from typing import Any

from .. import _validation as v
from .._engine import check_mixing
from .._validation import owned
from ._data import model_data
from ._fit import _BLOCK, _INTEGER_BLOCK

__all__ = ["PART_DIM", "check_stitched_mixing", "stitch"]

#: The new dimension along which :func:`stitch` stacks what each part has one of.
PART_DIM = "part"


@owned("hierarchy.stitch")
def stitch(release: Any, parts: list[Any]) -> Any:
    """Stitch the results of :func:`~noiseaware.hierarchy.fit` on ``release.split_by_root()``'s parts into one.

    * Posterior variables with a ``leaf`` dimension (``counts``, ``integer_counts``, ``log_rate``):
      concatenated along it, in the release's order of its finest units (coordinates as
      ``hierarchy.fit(release)`` gives them).
    * Variables with a ``measurement`` dimension (groups ``log_likelihood`` and ``observed_data``):
      concatenated along it, in the whole file's order (that of ``hierarchy.fit`` on it), so that
      ``az.loo`` reads the stitched result as a whole-file fit.
    * Everything a part has one of (``sample_stats``' acceptance rates, the hierarchical prior's
      per-part scales, county effects and cell profile): stacked along a new dimension
      :data:`PART_DIM` (``"part"``; coordinates the root units' names), after ``chain`` and
      ``draw``; where the parts' arrays differ in shape (root units with different numbers of
      counties), concatenated along their first own dimension instead.

    The first part's result is reused (its groups replaced) and returned, its ``attrs`` those of the
    first part's fit.

    Parameters
    ----------
    release : NoisyHierarchy
        The whole file.
    parts : list of results
        ``hierarchy.fit(part, ...)`` for each part of ``release.split_by_root()``, in that order, with
        the same chains and draws.

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        The host's container, as the parts'.

    Raises
    ------
    NoiseawareValueError
        If ``parts`` does not hold one result per root unit.

    Examples
    --------
    >>> from noiseaware import hierarchy
    >>> rel = hierarchy.synthetic_nmf(2, 2, 2, rng=0).release
    >>> parts = [hierarchy.fit(p, prior="uniform", chains=1, draws=20, warmup=20, seed=s, check_mixing=False)
    ...          for s, p in enumerate(rel.split_by_root())]  # doctest: +SKIP
    >>> stitch(rel, parts).posterior["counts"].shape  # doctest: +SKIP
    (1, 20, 8, 3)
    """
    import numpy as np
    import xarray as xr

    from .._engine import group, group_names, set_group

    subtrees = release.root_subtrees()
    if len(parts) != len(subtrees):
        v.refuse("parts", f"must hold one result per root unit ({len(subtrees)})", len(parts))
    leaf_order = np.argsort(np.concatenate([ix[-1] for ix in subtrees]), kind="stable")
    # measurement m of a part is (level l, local unit j, query q): its flat position in the whole file's tables
    Q = len(release.queries)
    start = np.concatenate([[0], np.cumsum([len(u) * Q for u in release.units])])
    whole_index = model_data(release).index
    pos = []
    for ix, part in zip(subtrees, release.split_by_root(), strict=True):
        sizes = np.asarray([len(u) * Q for u in part.units])
        pstart = np.concatenate([[0], np.cumsum(sizes)])
        local = model_data(part).index
        lev = np.searchsorted(pstart, local, side="right") - 1
        rest = local - pstart[lev]
        unit = np.concatenate(ix)[np.concatenate([[0], np.cumsum([len(i) for i in ix])])[lev] + rest // Q]
        pos.append(np.searchsorted(whole_index, start[lev] + unit * Q + rest % Q))
    meas_order = np.argsort(np.concatenate(pos), kind="stable")
    names = list(release.units[0])

    def join(dsets: list[Any]) -> Any:
        out = {}
        for var in dsets[0].data_vars:
            arrs = [d[var] for d in dsets]
            dims = arrs[0].dims
            if "leaf" in dims:
                out[var] = xr.concat(arrs, dim="leaf").isel(leaf=leaf_order)
            elif "measurement" in dims:
                out[var] = xr.concat(arrs, dim="measurement").isel(measurement=meas_order)
            elif len({a.shape for a in arrs}) == 1:
                stacked = xr.concat(arrs, dim=PART_DIM).assign_coords({PART_DIM: names})
                out[var] = stacked.transpose(*[d for d in ("chain", "draw") if d in dims], PART_DIM, ...)
            else:
                own = next(d for d in dims if d not in ("chain", "draw"))
                out[var] = xr.concat(arrs, dim=own)
        return xr.Dataset(out, attrs=dict(dsets[0].attrs))

    first = parts[0]
    for name in group_names(first):
        set_group(first, name, join([group(p, name) for p in parts]))
    return first


def check_stitched_mixing(result: Any, *, owner: str) -> list[str]:
    """:func:`noiseaware.hierarchy.fit`'s mixing check of ``counts``, on a stitched result, in the name of ``owner``.

    Warns with a :class:`~noiseaware.exceptions.MixingWarning` naming the sampler block of the result's
    route (``attrs["noiseaware_method"]``); returns the failing names, as ``check_mixing`` does.
    """
    block = _INTEGER_BLOCK if result.attrs.get("noiseaware_method", "integer") == "integer" else _BLOCK
    return check_mixing(result, ["counts"], owner=owner, block=block)
