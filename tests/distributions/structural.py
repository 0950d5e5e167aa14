"""The structural registry: one entry per public distribution, built the same way in both PPLs.

Where ``cases.py`` holds exact references for the discrete laws, this registry holds what the
structural checks of ``test_structural.py`` need for *every* class, continuous and wrapper
ones included: a builder per PPL (``Noisy`` wraps a PPL-specific base), a value, a parameter
to batch over, the moments that are defined, and a release to read with ``from_release``.
Data only: the tests have no per-class branches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

import noiseaware as na

R3 = np.array([[1.0, 0.5, -0.2], [0.5, 1.0, 0.3], [-0.2, 0.3, 1.0]])
LCDS_ALPHA = np.array([2.2, 3.3, 4.4])
LCDS_S0 = np.array([-1.6, -1.1, -0.8])
SIGMA2 = np.array([[1.0, 0.3], [0.3, 2.0]])
COV_PAIRS = [[0, 0], [1, 0], [1, 1]]
#: a regression with an intercept and one covariate: Z = [1, x, y], n = 300, Gaussian noise of sd 4 per entry
REG_SCALE = np.array([[0.0, 4.0, 4.0], [4.0, 4.0, 4.0], [4.0, 4.0, 4.0]])
REG_PARAMS = {"beta": np.array([0.2, 0.5]), "sigma": 0.3, "mu_x": np.array([0.1]), "cov_x": np.array([[0.2]]),
              "n": 300, "scale": REG_SCALE, "intercept": True, "family": "gaussian"}


@dataclass(frozen=True)
class Entry:
    name: str
    #: keyword parameters shared by both PPLs (PyMC's ``.dist`` and NumPyro's constructor)
    params: dict[str, Any]
    #: a value in the support (shape: batch + event of ``params``)
    value: np.ndarray
    #: (parameter, array of values along a new leading axis) for vmap / batch checks
    batch: tuple[str, np.ndarray]
    #: which of ``mean`` / ``variance`` NumPyro defines
    moments: tuple[str, ...] = ("mean", "variance")
    #: extra keyword arguments per PPL (``Noisy``'s base; LCDS's latent for a log-density)
    numpyro_extra: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    pymc_extra: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    #: the first positional argument per PPL (``Noisy``'s base distribution), from the params
    numpyro_first: Callable[[dict[str, Any]], Any] | None = None
    pymc_first: Callable[[dict[str, Any]], Any] | None = None
    event_dim: int = 0
    #: discrete with a ``logcdf`` in PyMC (self-consistency check)
    logcdf: bool = False
    #: a release this class reads, and ``from_release``'s extra arguments
    release: str = ""
    release_args: dict[str, Any] = field(default_factory=dict)
    #: why NumPyro's ``infer_shapes`` cannot tell the shapes from the array arguments (None: it can)
    no_infer_shapes: str | None = None
    #: parameter overrides for ``from_release`` (rates near the release's cells)
    release_params: dict[str, Any] = field(default_factory=dict)
    #: latent variables ``from_release("y", ...)`` adds (the same names in both PPLs)
    latent: tuple[str, ...] = ()


def _np_poisson(p: dict[str, Any]) -> Any:
    import numpyro.distributions as dist

    return dist.Poisson(p["rate"])


def _pm_poisson(p: dict[str, Any]) -> Any:
    import pymc as pm

    return pm.Poisson.dist(np.asarray(p["rate"], dtype=np.float64))  # float64 (a bare 4.0 becomes float32)


def _split(first: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Drop the parameter that goes into the positional base."""

    def extra(p: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in p.items() if k != first}

    return extra


ENTRIES: list[Entry] = [
    Entry(
        "TwoSidedGeometric",
        {"loc": 3, "alpha": 0.6},
        np.array(5.0),
        ("alpha", np.array([0.2, 0.5, 0.8])),
        logcdf=True,
        release="counts_geometric",
        release_args={"loc": np.array([5, 12, 40])},
    ),
    Entry(
        "DiscreteGaussian",
        {"loc": -2, "sigma": 1.7},
        np.array(0.0),
        ("sigma", np.array([0.5, 1.0, 4.0])),
        release="counts_dgauss",
        release_args={"loc": np.array([5, 12, 40])},
    ),
    Entry(
        "NoisyHypergeom",
        {"N": 101, "K": 40, "m": 57, "log_odds": 0.7, "alpha": 0.8},
        np.array(25.0),
        ("log_odds", np.array([-1.0, 0.0, 2.5])),
        logcdf=True,
        release="median_pairs",
        release_args={"log_odds": np.zeros(3)},
    ),
    Entry(
        "NoisyTwoWayTable",
        {"r": 0.4, "n": 301, "alpha": 0.7},
        np.array(90.0),
        ("r", np.array([-0.5, 0.0, 0.5])),
        logcdf=True,
        release="median_pairs",
        release_args={"r": np.array([0.4, 0.1, -0.3])},
    ),
    Entry(
        "CompositeCopulaLikelihood",
        {"R": R3, "n": 301, "alpha": 0.7},
        np.array([100.0, 60.0, 85.0]),
        ("alpha", np.array([0.3, 0.6, 0.9])),
        event_dim=1,
        release="median_pairs",
        release_args={"R": np.array([[1.0, 0.4, 0.1], [0.4, 1.0, -0.3], [0.1, -0.3, 1.0]])},
    ),
    Entry(
        "Noisy",
        {"rate": 4.0, "alpha": 0.5},
        np.array(3.0),
        ("rate", np.array([1.0, 4.0, 9.0])),
        numpyro_first=_np_poisson,
        pymc_first=_pm_poisson,
        numpyro_extra=_split("rate"),
        pymc_extra=_split("rate"),
        no_infer_shapes="the shapes come from the base distribution, not from an array argument",
        logcdf=True,
        release="counts_geometric",
        release_params={"rate": np.array([5.0, 12.0, 40.0])},
    ),
    Entry(
        "RandomizedResponse",
        {"probs": np.array([0.2, 0.5, 0.3]), "p": 0.7},
        np.array(1.0),
        ("p", np.array([0.4, 0.7, 0.9])),
        release="randomized_response",
        release_args={"probs": np.array([0.3, 0.3, 0.4])},
    ),
    Entry(
        "LaplaceCensoredDirichletStat",
        {"alpha": LCDS_ALPHA, "n": 500, "a": 0.01, "scale": 0.05},
        np.array([-1.5, -1.2, -0.7]),
        ("scale", np.array([0.02, 0.05, 0.1])),
        # given its latent S_0 the law has a log-density (the Laplace noise around it)
        numpyro_extra=lambda p: {**p, "s0": LCDS_S0},
        pymc_extra=lambda p: {**p, "s0": LCDS_S0},
        event_dim=1,
        release="dirichlet_logmean",
        release_args={"alpha": LCDS_ALPHA},
        latent=("y_s0", "y_s0_z"),
    ),
    Entry(
        "NoisyCovarianceEntries",
        {"sigma": SIGMA2, "n": 400, "pairs": COV_PAIRS, "precision": np.array([400.0, 500.0, 300.0])},
        np.array([1.05, 0.25, 2.1]),
        ("sigma", np.array([SIGMA2, 2.0 * SIGMA2, np.eye(2)])),
        moments=("mean",),
        event_dim=1,
        no_infer_shapes="the event length is the number of measured pairs (data), not a shape of sigma",
        release="pace_ggm",
        release_args={"sigma": np.eye(3)},
    ),
    Entry(
        "NoisySufficientStatistics",
        REG_PARAMS,
        # entries (1,0), (1,1), (2,0), (2,1), (2,2) of Z'Z near their mean n E[z_a z_b]
        np.array([31.0, 63.0, 76.0, 31.0, 52.0]),
        ("sigma", np.array([0.2, 0.3, 0.5])),
        moments=("mean",),
        event_dim=1,
        no_infer_shapes="the event length is the number of released entries (data: scale), not a parameter shape",
        release="regression",
        release_args={"beta": np.array([0.1, 0.4, -0.3]), "sigma": 0.3, "mu_x": np.zeros(2), "cov_x": 0.2 * np.eye(2)},
    ),
]
BY_NAME = {e.name: e for e in ENTRIES}

#: (test, class) pairs in the slow suite: the same property is checked fast elsewhere
#: (``test_moments_cdf.py`` checks these log-CDFs against brute force; ``test_dirichlet_pd.py`` the
#: PyMC prior predictive), and each costs ~10 s of PyTensor compilation on a loaded 2-core machine.
SLOW: frozenset[tuple[str, str]] = frozenset(
    {
        ("logcdf", "NoisyHypergeom"),
        ("logcdf", "NoisyTwoWayTable"),
        ("protocol", "centered"),
        ("protocol", "predictive"),
    }
)


def params_for(test: str, items: list[Any], key: Callable[[Any], str]) -> list[Any]:
    """``pytest.param`` per item with its id, marked slow where :data:`SLOW` says so."""
    import pytest

    return [pytest.param(x, id=key(x), marks=[pytest.mark.slow] if (test, key(x)) in SLOW else []) for x in items]


def numpyro_dist(e: Entry, params: dict[str, Any] | None = None) -> Any:
    import noiseaware.numpyro as nan

    p = dict(e.params if params is None else params)
    first = () if e.numpyro_first is None else (e.numpyro_first(p),)
    kw = e.numpyro_extra(p) if e.numpyro_extra is not None else p
    return getattr(nan, e.name)(*first, **kw)


def pymc_dist(e: Entry, params: dict[str, Any] | None = None, **size: Any) -> Any:
    import noiseaware.pymc as nap

    p = dict(e.params if params is None else params)
    first = () if e.pymc_first is None else (e.pymc_first(p),)
    kw = e.pymc_extra(p) if e.pymc_extra is not None else p
    return getattr(nap, e.name).dist(*first, **kw, **size)


@cache
def release(kind: str) -> Any:
    """The releases the entries read (simulation mode: seeded, marked as simulations)."""
    rng = np.random.default_rng(11)
    if kind == "counts_geometric":
        return na.privatize(np.array([5, 12, 40]), statistic="counts", epsilon=1.0, sensitivity=1, rng=rng)
    if kind == "counts_dgauss":
        return na.privatize(np.array([5, 12, 40]), statistic="counts", rho=0.5, sensitivity=1, rng=rng)
    if kind == "median_pairs":
        x = np.random.default_rng(3).normal(size=(301, 3))
        return na.privatize(x, statistic="median_pairs", epsilon=1.5, rng=rng)
    if kind == "dirichlet_logmean":
        x = np.random.default_rng(5).dirichlet(LCDS_ALPHA, size=800)
        return na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, rng=rng)
    if kind == "randomized_response":
        x = np.random.default_rng(7).integers(0, 3, size=40)
        return na.privatize(x, statistic="randomized_response", epsilon=1.0, categories=3, rng=rng)
    if kind == "pace_ggm":
        x = np.random.default_rng(0).uniform(-1, 1, size=(300, 3))
        return na.privatize(x, statistic="pace_ggm", rho=2.0, bound=1.0, rng=rng)
    if kind == "regression":
        g = np.random.default_rng(8)
        x = np.clip(g.normal(0.0, 0.45, size=(400, 2)), -1, 1)
        y = np.clip(0.1 + x @ [0.4, -0.3] + 0.3 * g.normal(size=400), -1, 1)
        return na.privatize(np.column_stack([x, y]), statistic="regression", response="x2", bound=1.0, rho=1.0, rng=rng)
    raise KeyError(kind)
