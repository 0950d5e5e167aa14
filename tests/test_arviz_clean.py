"""ArviZ's default calls on every fit type are clean: no error, no warning, with nothing chosen for them.

A user's first calls on a result are ``az.summary(fit)``, ``az.plot_trace(fit)``, ``az.plot_posterior(fit)``
(``az.plot_dist`` under ArviZ 1, which has no ``plot_posterior``) and, where the fit stores a
``log_likelihood`` group, ``az.loo(fit)``. Each runs here on every variable of the posterior (no ``var_names``,
no ``coords``) with warnings as errors: a constant in the posterior (a correlation matrix's unit diagonal, a
Cholesky factor's zeros) fails ``az.plot_trace`` (a kernel density of a constant) and makes ``az.summary``
divide 0 by 0. The fits are those of ``tests/test_arviz.py`` (``tests/conftest.py``'s ``shared_fit``), made
once per test session.

Two warnings that are about the run's length or a third party, not the result, are let through by name:
ArviZ's Pareto-k advice in ``az.loo`` (its threshold ``1 - 1/log10(S)`` is 0.52 at the S = 120 draws of these
small fits), and ArviZ 0.23's own call into a matplotlib 3.11 deprecation (its issue).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import arviz as az
import numpy as np
import pytest

from noiseaware._engine import group, group_names
from tests.conftest import FITS

ARVIZ_1 = int(az.__version__.split(".")[0]) >= 1

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _strict() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", ".*alias_mapping to normalize_kwargs", DeprecationWarning)  # ArviZ 0.23
        yield
    plt.close("all")


@pytest.fixture(scope="module", params=sorted(FITS))
def fit(request: pytest.FixtureRequest, shared_fit: Callable[[str], Any]) -> Any:
    return shared_fit(request.param)


def test_nothing_constant_in_the_posterior(fit: Any) -> None:
    """Every entry of every posterior variable varies over the draws (what ArviZ's defaults need)."""
    post = group(fit, "posterior")
    for name, da in post.data_vars.items():
        x = np.asarray(da.values, dtype=np.float64)
        flat = x.reshape(x.shape[0] * x.shape[1], -1)
        const = np.ptp(flat, axis=0) == 0
        assert not const.any(), f"{name}: {int(const.sum())} of {const.size} entries constant"


def test_summary(fit: Any) -> None:
    table = az.summary(fit)
    assert len(table) > 0
    rhat = np.asarray(table["r_hat"], dtype=np.float64)
    assert np.all(np.isfinite(rhat))


def test_plot_trace(fit: Any) -> None:
    out = az.plot_trace(fit, backend="matplotlib") if ARVIZ_1 else az.plot_trace(fit)
    assert out is not None


def test_plot_posterior(fit: Any) -> None:
    out = az.plot_dist(fit, backend="matplotlib") if ARVIZ_1 else az.plot_posterior(fit)
    assert out is not None


def test_loo_where_a_log_likelihood_is_stored(fit: Any) -> None:
    if "log_likelihood" not in group_names(fit):  # no valid pointwise split: az.loo must refuse, not return an elpd
        with pytest.raises((TypeError, KeyError, ValueError), match=r"(?i)log.likelihood"):
            az.loo(fit)
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*Pareto distribution is greater than", UserWarning)  # S = 120 draws
        warnings.filterwarnings("ignore", ".*Pareto k diagnostic", UserWarning)
        loo = az.loo(fit)
    assert np.isfinite(loo.elpd if ARVIZ_1 else loo.elpd_loo)
