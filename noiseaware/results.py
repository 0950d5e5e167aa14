r"""Reading a fit's result: plain functions over the host stack's own container.

Every fit of the package (``copula.fit``, ``dirichlet.fit``, ``regression.fit``, ...) returns what
the installed stack's ``pm.sample`` returns -- an :class:`xarray.DataTree` under ArviZ >= 1, an
:class:`arviz.InferenceData` under ArviZ 0.x -- so every ArviZ function takes it as it is
(``az.summary``, ``az.plot_trace``, ``az.loo`` where the fit stores a ``log_likelihood`` group,
``to_netcdf`` / ``az.from_netcdf``). The fit records what it knows about the run in the result's
root ``attrs`` (``noiseaware_result``: which fit; ``noiseaware_default_var``; the sampler settings
``noiseaware_seed``, ``noiseaware_chains``, ...; the fit's own records such as ``noiseaware_prior``),
and these functions read only the groups and those attributes, so they work as well on a result
read back from a file, and on ``pm.sample``'s own results. :func:`group` reads one group as an
:class:`xarray.Dataset` on either stack (``group(fit, "posterior")``), :func:`group_names` lists
them, and :func:`from_groups` builds such a container from arrays (a result of one's own sampler,
or a doctest's), through the installed ArviZ's public ``from_dict``; :func:`release_attrs` is the
``attrs`` entry that records a release in it.

Examples
--------
>>> import numpy as np
>>> import noiseaware.results as nr
>>> res = nr.from_groups({"posterior": {"mu": np.random.default_rng(0).normal(size=(2, 500))}})
>>> nr.draws(res, "mu").shape
(1000,)
>>> lo, hi = nr.interval(res, 0.9)
>>> bool(lo < 0 < hi)
True
"""

from __future__ import annotations

from ._engine._host import from_groups, group, group_names
from ._engine._result import (
    diagnostics,
    draws,
    fit_kind,
    interval,
    plot,
    release,
    release_attrs,
    settings,
    summary,
)

__all__ = [
    "diagnostics",
    "draws",
    "fit_kind",
    "from_groups",
    "group",
    "group_names",
    "interval",
    "plot",
    "release",
    "release_attrs",
    "settings",
    "summary",
]
