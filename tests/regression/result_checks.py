"""A fit's result is the host's container, goes through ArviZ, and survives a netCDF round trip.

One check shared by the tests of ``regression.fit``, ``covariance.fit`` and ``hierarchy.fit``: the result is
an ``xarray.DataTree`` under ArviZ 1 (an ``arviz.InferenceData`` under ArviZ 0.x), never a subclass; ``az.summary``
and ``az.plot_trace`` take it as it is; ``to_netcdf`` then ``az.from_netcdf`` gives a copy on which every function
of :mod:`noiseaware.results` answers as on the original (``az.loo`` too where a pointwise ``log_likelihood`` group
is stored); all with warnings as errors, but for ArviZ 0.23's own call of a helper that matplotlib 3.11 deprecates.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import arviz as az
import numpy as np
import pytest
import xarray as xr

from noiseaware import results
from noiseaware._engine import group, group_names, has_group

ARVIZ_1 = int(az.__version__.split(".")[0]) >= 1


@contextmanager
def _strict() -> Iterator[None]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # ArviZ 0.23's trace plot calls a matplotlib helper deprecated in matplotlib 3.11 (ArviZ's issue)
            warnings.filterwarnings("ignore", ".*alias_mapping to normalize_kwargs", DeprecationWarning)
            yield
    finally:
        plt.close("all")


def _same_release(a: Any, b: Any) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a.to_dict() == b.to_dict())


def check_host_result(fit: Any, kind: str, default_var: str, tmp_path: Path) -> Any:
    """Run the checks of the module docstring on ``fit``; return its copy read back from netCDF."""
    assert type(fit) is (xr.DataTree if ARVIZ_1 else az.InferenceData)  # never a subclass
    assert results.fit_kind(fit) == kind and fit.attrs["noiseaware_default_var"] == default_var
    path = tmp_path / f"{kind}.nc"
    with _strict():
        table = az.summary(fit, var_names=[default_var])
        assert {"mean", "sd", "ess_bulk", "r_hat"} <= set(table.columns) and len(table) > 0
        az.plot_trace(fit, var_names=[default_var])
        fit.to_netcdf(str(path))
        copy = az.from_netcdf(str(path))
        assert type(copy) is type(fit) and sorted(group_names(copy)) == sorted(group_names(fit))
        post, post_copy = group(fit, "posterior"), group(copy, "posterior")
        for name in post.data_vars:
            np.testing.assert_array_equal(post_copy[name].values, post[name].values)
            assert post_copy[name].dims == post[name].dims
        # the noiseaware.results functions read the copy as they read the fit
        assert results.fit_kind(copy) == kind
        assert results.settings(copy) == results.settings(fit) is not None
        assert _same_release(results.release(copy), results.release(fit))
        np.testing.assert_array_equal(results.draws(copy), results.draws(fit, default_var))
        for a, b in zip(results.interval(copy, 0.9), results.interval(fit, 0.9), strict=True):
            np.testing.assert_allclose(a, b)
        diag, diag_copy = results.diagnostics(fit), results.diagnostics(copy)
        assert diag_copy == pytest.approx(diag, rel=1e-12, nan_ok=True)  # a mean summed in another order
        summary, summary_fit = (results.summary(x, 0.9, var_names=[default_var]) for x in (copy, fit))
        assert list(summary.index) == list(summary_fit.index) and list(summary.columns) == list(summary_fit.columns)
        np.testing.assert_allclose(summary.to_numpy(dtype=float), summary_fit.to_numpy(dtype=float), rtol=1e-10)
        results.plot(copy, str(tmp_path / f"{kind}.png"), var_names=[default_var])
        assert (tmp_path / f"{kind}.png").stat().st_size > 0
        if has_group(copy, "log_likelihood"):
            loo = az.loo(copy)
            assert np.isfinite(float(loo.elpd if ARVIZ_1 else loo["elpd_loo"]))
    return copy
