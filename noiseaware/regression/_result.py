r"""Reading a regression fit's result: the names of its coefficients (:func:`coefficients`)."""

from __future__ import annotations

from typing import Any

from .. import _validation as v
from .._engine import group, has_group, is_result
from .._validation import owned
from ..exceptions import NoiseawareTypeError

__all__ = ["coefficients"]


@owned("noiseaware.regression.coefficients")
def coefficients(fit: Any) -> tuple[str, ...]:
    r"""The names of the coefficients of a regression fit: the release's design columns, in order.

    ``"(intercept)"`` first when the release has an intercept, then the covariates by name. They
    are the coordinates of the dimension ``coefficient`` of the posterior variable ``beta``, so
    ``noiseaware.results.draws(fit, "beta")[:, j]`` are the draws of ``coefficients(fit)[j]``.

    Parameters
    ----------
    fit : xarray.DataTree or arviz.InferenceData
        The result of :func:`noiseaware.regression.fit` (or the same read back with
        ``az.from_netcdf``): a posterior variable ``beta`` whose last dimension is ``coefficient``.

    Returns
    -------
    tuple of str

    Raises
    ------
    NoiseawareTypeError
        If ``fit`` is not such a result.

    Examples
    --------
    A stand-in for a fit's result, built as the fit builds it:

    >>> import numpy as np
    >>> from noiseaware.results import from_groups
    >>> fit = from_groups(
    ...     {"posterior": {"beta": np.zeros((2, 50, 3)), "sigma": np.ones((2, 50))}},
    ...     dims={"beta": ["coefficient"]},
    ...     coords={"coefficient": ["(intercept)", "x0", "x1"]},
    ...     attrs={"noiseaware_result": "regression.fit", "noiseaware_default_var": "beta"},
    ... )
    >>> coefficients(fit)
    ('(intercept)', 'x0', 'x1')
    """
    beta = None
    if is_result(fit) and has_group(fit, "posterior"):
        post = group(fit, "posterior")
        if "beta" in post.data_vars and post["beta"].dims[-1] == "coefficient" and "coefficient" in post.coords:
            beta = post["beta"]
    if beta is None:
        raise NoiseawareTypeError(
            v.message(
                "fit",
                "must be the result of regression.fit (an xarray.DataTree under ArviZ 1, an arviz.InferenceData "
                "under ArviZ 0.x) with a posterior variable beta of dimension coefficient",
                type(fit).__name__,
            )
        )
    return tuple(str(c) for c in beta["coefficient"].values)
