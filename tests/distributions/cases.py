"""The registry of distribution test cases: data, not code paths.

Each :class:`Case` names an exported distribution, concrete constructor parameters (the same
keyword arguments in every backend), test values, an independent reference log-pmf (from
:mod:`references`), the support window that holds all but < 1e-13 of the mass, and its
capabilities. The generic tests in ``test_generic.py`` run every case against every backend.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import references as ref


@dataclass(frozen=True)
class Case:
    id: str
    name: str
    params: dict[str, Any]
    values: np.ndarray
    reference: Callable[[dict[str, Any], np.ndarray], np.ndarray]
    #: per event component j: (reference marginal log-pmf(params, k), support lo, support hi)
    marginals: tuple[tuple[Callable[[dict[str, Any], np.ndarray], np.ndarray], int, int], ...]
    event_dim: int = 0
    tol: float = 1e-9
    caps: frozenset[str] = frozenset({"normalization", "sample", "grad"})
    grad_params: tuple[str, ...] = ()
    #: (parameter overrides, parameter name, rule text in the PyMC message)
    bad: tuple[tuple[dict[str, Any], str, str], ...] = ()
    #: parameters of a wrong implementation that the chi-square test must reject
    wrong: dict[str, Any] = field(default_factory=dict)
    #: a batch of one parameter, for the shape/broadcasting test: (name, values of shape (3, 1))
    batch: tuple[str, np.ndarray] | None = None
    cdf_reference: Callable[[dict[str, Any], np.ndarray], np.ndarray] | None = None


def _alpha(p: dict[str, Any]) -> float:
    if "alpha" in p:
        return float(p["alpha"])
    eps = p["epsilon_per_pair"] if "epsilon_per_pair" in p else p["epsilon"]
    return math.exp(-float(eps) / float(p.get("sensitivity", 1.0)))


def _geom_tail(alpha: float, tol: float = 1e-15) -> int:
    return math.ceil((math.log(tol) + math.log1p(-alpha)) / math.log(alpha)) + 1


# --------------------------------------------------------------------------- references per law
def _tsg_ref(p, k):
    return ref.tsg_logpmf(k, p["loc"], _alpha(p))


def _tsg_cdf(p, k):
    return ref.tsg_cdf(k, p["loc"], _alpha(p))


def _dg_ref(p, k):
    return ref.dg_logpmf(k, p["loc"], p["sigma"])


def _hyper_ref(p, y):
    if "sigma" in p:
        noise = lambda d: ref.dg_logpmf(d, 0, p["sigma"])  # noqa: E731
    else:
        noise = lambda d: ref.geometric_noise_logpmf(d, _alpha(p))  # noqa: E731
    return ref.noisy_fisher_logpmf(y, p["N"], p["K"], p["m"], p["log_odds"], noise)


def _twoway_ref(p, y):
    h = math.ceil(p["n"] / 2)
    a = _alpha(p)
    return ref.noisy_fisher_logpmf(
        y, p["n"], h, h, ref.copula_log_odds(p["r"]), lambda d: ref.geometric_noise_logpmf(d, a)
    )


def _composite_pair(j: int):
    def marginal(p, y):
        R = np.asarray(p["R"])
        iu, ju = np.triu_indices(R.shape[0], 1)
        return _twoway_ref({"r": float(R[iu[j], ju[j]]), "n": p["n"], "alpha": p["alpha"]}, y)

    return marginal


def _composite_ref(p, y):
    y = np.atleast_2d(y)
    k = y.shape[-1]
    return sum(_composite_pair(j)(p, y[:, j]) for j in range(k))


def _rr_ref(p, y):
    return ref.rr_answer_logpmf(y, p["probs"], p["p"])


# --------------------------------------------------------------------------- the registry
def _tsg_case(cid: str, params: dict[str, Any], grads: tuple[str, ...], bad, wrong) -> Case:
    a = _alpha(params)
    w = _geom_tail(a)
    loc = params["loc"]
    vals = np.concatenate([np.arange(loc - 15, loc + 16), [loc + 0.5, np.inf]]).astype(np.float64)
    return Case(
        id=cid,
        name="TwoSidedGeometric",
        params=params,
        values=vals,
        reference=_tsg_ref,
        marginals=((_tsg_ref, loc - w, loc + w),),
        caps=frozenset({"normalization", "sample", "grad", "cdf"}),
        grad_params=grads,
        bad=bad,
        wrong=wrong,
        batch=("loc", np.array([[-2.0], [0.0], [7.0]])),
        cdf_reference=_tsg_cdf,
    )


def _hyper_support(N, K, m, tail):
    return max(0, m - (N - K)) - tail, min(K, m) + tail


CASES: list[Case] = [
    _tsg_case(
        "tsg-alpha",
        {"loc": 3, "alpha": 0.6},
        ("alpha",),
        (({"alpha": 1.5}, "alpha", "alpha must be in (0, 1)"), ({"alpha": -0.1}, "alpha", "alpha must be in (0, 1)")),
        {"loc": 3, "alpha": 0.66},
    ),
    _tsg_case(
        "tsg-epsilon",
        {"loc": -4, "epsilon": 0.5, "sensitivity": 2.0},
        ("epsilon",),
        (),
        {"loc": -4, "epsilon": 0.6, "sensitivity": 2.0},
    ),
    Case(
        id="dg-small-sigma",
        name="DiscreteGaussian",
        params={"loc": -2, "sigma": 0.7},
        values=np.array([-9.0, -5, -3, -2, -1, 0, 4, 1.5]),
        reference=_dg_ref,
        marginals=((_dg_ref, -2 - 12, -2 + 12),),
        grad_params=("sigma",),
        bad=(({"sigma": -1.0}, "sigma", "sigma must be > 0"),),
        wrong={"loc": -2, "sigma": 0.77},
        batch=("sigma", np.array([[0.3], [1.0], [4.0]])),
    ),
    Case(
        id="dg-large-sigma",
        name="DiscreteGaussian",
        params={"loc": 10, "sigma": 25.0},
        values=np.array([-300.0, -40, 0, 9, 10, 11, 60, 200, 10.25]),
        reference=_dg_ref,
        marginals=((_dg_ref, 10 - 250, 10 + 250),),
        grad_params=("sigma",),
        bad=(({"sigma": 0.0}, "sigma", "sigma must be > 0"),),
        wrong={"loc": 10, "sigma": 27.5},
    ),
    Case(
        id="hypergeom-geometric-odd",
        name="NoisyHypergeom",
        params={"N": 101, "K": 40, "m": 57, "log_odds": 0.7, "alpha": 0.8},
        values=np.array([-30.0, 0, 10, 22, 25, 28, 40, 57, 90, 25.5]),
        reference=_hyper_ref,
        marginals=((_hyper_ref, *_hyper_support(101, 40, 57, _geom_tail(0.8))),),
        grad_params=("log_odds", "alpha"),
        bad=(({"alpha": 1.0}, "alpha", "alpha must be in (0, 1)"),),
        wrong={"N": 101, "K": 40, "m": 57, "log_odds": 0.9, "alpha": 0.8},
        batch=("log_odds", np.array([[-1.0], [0.0], [2.5]])),
    ),
    Case(
        id="hypergeom-dgauss",
        name="NoisyHypergeom",
        params={"N": 200, "K": 100, "m": 100, "log_odds": -1.2, "sigma": 3.5},
        values=np.array([-20.0, 0, 20, 38, 45, 50, 100, 130, 7.5]),
        reference=_hyper_ref,
        marginals=((_hyper_ref, -40, 140),),
        grad_params=("log_odds", "sigma"),
        bad=(({"sigma": -2.0}, "sigma", "sigma must be > 0"),),
        wrong={"N": 200, "K": 100, "m": 100, "log_odds": -1.0, "sigma": 3.5},
    ),
    Case(
        id="twoway-windowed",
        name="NoisyTwoWayTable",
        params={"r": 0.6, "n": 20001, "alpha": math.exp(-0.05)},
        values=np.array([-500.0, 2000, 6500, 7000, 7048, 7100, 7500, 10001, 14000, 7048.5]),
        reference=_twoway_ref,
        marginals=((_twoway_ref, 6000, 8200),),
        grad_params=("r", "alpha"),
        bad=(({"r": 1.2}, "r", "r must be in (-1, 1)"), ({"alpha": 2.0}, "alpha", "alpha in (0, 1)")),
        wrong={"r": 0.62, "n": 20001, "alpha": math.exp(-0.05)},
        batch=("r", np.array([[-0.9], [0.0], [0.9]])),
    ),
    Case(
        id="twoway-odd-small",
        name="NoisyTwoWayTable",
        params={"r": -0.3, "n": 51, "epsilon_per_pair": 1.0},
        values=np.array([-10.0, 0, 1, 5, 10, 26, 40, 3.25]),
        reference=_twoway_ref,
        marginals=((_twoway_ref, 1 - _geom_tail(math.exp(-1.0)), 26 + _geom_tail(math.exp(-1.0))),),
        grad_params=("r", "epsilon_per_pair"),
        wrong={"r": 0.0, "n": 51, "epsilon_per_pair": 1.0},
    ),
    Case(
        id="composite-p3",
        name="CompositeCopulaLikelihood",
        params={"R": np.array([[1.0, 0.5, -0.2], [0.5, 1.0, 0.3], [-0.2, 0.3, 1.0]]), "n": 1001, "alpha": 0.7},
        values=np.array([[330.0, 215, 300], [250, 250, 250], [-3, 600, 260], [330.5, 215, 300]]),
        reference=_composite_ref,
        marginals=tuple((_composite_pair(j), 100, 450) for j in range(3)),
        event_dim=1,
        caps=frozenset({"sample", "grad"}),
        grad_params=("alpha",),
        bad=(({"alpha": 1.5}, "alpha", "alpha in (0, 1)"),),
        wrong={"R": np.array([[1.0, 0.56, -0.2], [0.5, 1.0, 0.3], [-0.2, 0.3, 1.0]]), "n": 1001, "alpha": 0.7},
    ),
    Case(
        id="randomized-response-k3",
        name="RandomizedResponse",
        params={"probs": np.array([0.2, 0.5, 0.3]), "p": 0.7},
        values=np.array([0.0, 1, 2, 3, -1, 1.5, np.inf]),
        reference=_rr_ref,
        marginals=((_rr_ref, 0, 2),),
        grad_params=("p",),
        bad=(({"probs": np.array([0.5, 0.6, 0.3])}, "probs", "probs must be a probability vector"),),
        wrong={"probs": np.array([0.2, 0.5, 0.3]), "p": 0.8},
        batch=("p", np.array([[0.4], [0.7], [0.95]])),
    ),
]

#: Exported names without a case, each with the reason (none today).
NO_CASE: dict[str, str] = {
    # continuous, multivariate, with a latent S_0 in its NUTS form: the discrete-pmf checks of this
    # registry do not apply; tests/test_dirichlet_stat.py checks it in both backends against Monte Carlo
    "LaplaceCensoredDirichletStat": "continuous multivariate; see tests/test_dirichlet_stat.py",
    # a wrapper whose first argument is a host-PPL base distribution (no backend-neutral
    # parameters for this registry); every base x noise x PPL is checked in test_noisy.py
    "Noisy": "wraps a PyMC / NumPyro base distribution; see tests/distributions/test_noisy.py",
    # continuous multivariate Gaussian in the entries of a covariance matrix (seed 002): checked
    # against SciPy with a brute-force Isserlis covariance in both PPLs in its own module
    "NoisyCovarianceEntries": "continuous multivariate; see tests/covariance/test_distribution.py",
    # continuous multivariate normal (or Laplace given latent statistics) in the entries of Z'Z: checked
    # against exact quadrature, SciPy and an exact Wishart posterior in tests/regression
    "NoisySufficientStatistics": "continuous multivariate; see tests/regression/test_core.py and test_distribution.py",
}
