"""Every law's ``from_release`` takes its shape from parameters held in data containers, as the host PPL does.

PyMC: a law built by ``from_release`` with a parameter that depends on a ``pm.Data`` container (length 3, the
release's length) draws, after ``pm.set_data`` gives the container length 5, predictions of shape
``(chain, draw, 5)`` in ``pm.sample_posterior_predictive(..., predictions=True)`` (PyMC's own idiom is
``observed=y, shape=x.shape``; ``from_release`` does it for the caller, and keeps the release's shape when the
parameters do not depend on data). NumPyro: the law's batch shape is its parameters' broadcast shape, so
:class:`numpyro.infer.Predictive` of the law with new data draws for the new units.

One case per law of the registry (``tests/distributions/cases.py``), each with a release of 3 values and a
parameter of length 3; :data:`NOT_APPLICABLE` gives the reason for a law without one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import noiseaware as na

from .cases import CASES

#: Laws of the registry whose release has no axis of units, with the reason.
NOT_APPLICABLE: dict[str, str] = {
    # the p(p-1)/2 pairs are the event (one released vector, from one correlation matrix R): a release has no
    # batch of units for R's data to index, and its counts and per-pair alpha are fixed by the release
    "CompositeCopulaLikelihood": "one released vector of pairs (the event); no axis of units",
}


def _pairs() -> Any:
    x = np.random.default_rng(3).normal(size=(301, 3))
    return na.privatize(x, statistic="median_pairs", epsilon=1.5, rng=np.random.default_rng(0))


def _counts(**noise: Any) -> Any:
    return na.privatize(np.array([10, 12, 14]), statistic="counts", sensitivity=1, rng=np.random.default_rng(1),
                        **noise)


def _answers() -> Any:
    return na.privatize(np.array([0, 1, 1]), statistic="randomized_response", epsilon=1.0, categories=2,
                        rng=np.random.default_rng(2))


def _logistic(z: Any) -> Any:
    """``(1 - q, q)`` with ``q = sigmoid(z)``: the issue's logistic regression on a covariate in ``pm.Data``."""
    import pymc as pm

    q = pm.math.sigmoid(z)
    return pm.math.stack([1 - q, q], axis=-1)


#: law -> (release, data of length 3, data of length 5, PyMC builder (name, release, data tensor), NumPyro law
#: built from the data directly).
PYMC_CASES: dict[str, tuple[Callable[[], Any], np.ndarray, np.ndarray, Callable[..., Any]]] = {
    "TwoSidedGeometric": (
        lambda: _counts(epsilon=1.0), np.array([10, 12, 14]), np.array([1, 2, 3, 4, 500]),
        lambda nap, rel, d: nap.TwoSidedGeometric.from_release("y", rel, loc=d),
    ),
    "DiscreteGaussian": (
        lambda: _counts(rho=0.5), np.array([10, 12, 14]), np.array([1, 2, 3, 4, 500]),
        lambda nap, rel, d: nap.DiscreteGaussian.from_release("y", rel, loc=d),
    ),
    "NoisyHypergeom": (
        _pairs, np.array([0.5, 0.0, -0.5]), np.array([0.5, 0.0, -0.5, 1.0, -1.0]),
        lambda nap, rel, d: nap.NoisyHypergeom.from_release("y", rel, log_odds=d),
    ),
    "NoisyTwoWayTable": (
        _pairs, np.array([0.4, 0.1, -0.3]), np.array([0.4, 0.1, -0.3, 0.8, -0.8]),
        lambda nap, rel, d: nap.NoisyTwoWayTable.from_release("y", rel, r=d),
    ),
    "RandomizedResponse": (
        _answers, np.array([-1.0, 0.0, 2.0]), np.array([-1.0, 0.0, 2.0, -50.0, 50.0]),
        lambda nap, rel, d: nap.RandomizedResponse.from_release("y", rel, probs=_logistic(d)),
    ),
}


def test_every_law_of_the_registry_has_a_case_or_a_reason() -> None:
    laws = {c.name for c in CASES}
    assert laws == set(PYMC_CASES) | set(NOT_APPLICABLE)
    assert not set(PYMC_CASES) & set(NOT_APPLICABLE)


def _pymc_predictions(law: str, draws: int = 20) -> tuple[np.ndarray, Any]:
    import pymc as pm
    import pytensor

    import noiseaware.pymc as nap
    from noiseaware._engine import group
    from noiseaware.results import from_groups

    make, three, five, build = PYMC_CASES[law]
    rel = make()
    assert rel.values.shape[0] == 3
    # the Python linker also in the slow tier (the package's draws run in Python, where Numba warns it falls back)
    with pytensor.config.change_flags(linker="py"), pm.Model():
        d = pm.Data("d", three)
        pm.Normal("s", 0.0, 1.0)  # a free variable for the (stand-in) posterior
        y = build(nap, rel, d)
        assert y.eval().shape[0] == 3  # the release's units while the data has their number
        pm.set_data({"d": five})
        post = from_groups({"posterior": {"s": np.zeros((1, draws))}})
        pred = pm.sample_posterior_predictive(post, predictions=True, random_seed=1, progressbar=False)
    return np.asarray(group(pred, "predictions")["y"].values), five


# each case compiles its own small graphs through the Python linker: about 0.5-2.5 s
@pytest.mark.parametrize("law", sorted(PYMC_CASES))
def test_pymc_predictions_follow_the_data(law: str) -> None:
    y, _ = _pymc_predictions(law)
    assert y.shape[:3] == (1, 20, 5)
    assert y.dtype.kind == "i"


def test_pymc_predictions_are_drawn_from_the_new_units_parameters() -> None:
    """The new units' answers follow their own probabilities, not the release's units'.

    Unit 4 (z = -50) is of category 0 and unit 5 (z = 50) of category 1 for sure; each answers truthfully
    with probability ``p = e / (1 + e)`` at epsilon = 1, so over 1000 draws the share of answers 1 is
    0.27 and 0.73 (sd 0.014; the tolerance 0.07 is 5 sd, and the units' swap is 33 sd away).
    """
    y, _ = _pymc_predictions("RandomizedResponse", draws=1000)
    p = np.e / (1 + np.e)
    share = y[0, :, 3:].mean(axis=0)  # unit 4: true category 0; unit 5: true category 1
    np.testing.assert_allclose(share, [1 - p, p], atol=0.07)


# --------------------------------------------------------------------------- NumPyro
def _numpyro_law(law: str, rel: Any, d: Any) -> Any:
    import jax
    import jax.numpy as jnp

    import noiseaware.numpyro as nan

    args = {
        "TwoSidedGeometric": lambda: nan.TwoSidedGeometric(loc=d, alpha=rel.mechanism.alpha),
        "DiscreteGaussian": lambda: nan.DiscreteGaussian(loc=d, sigma=rel.mechanism.sigma),
        "NoisyHypergeom": lambda: nan.NoisyHypergeom(N=rel.n, K=(rel.n + 1) // 2, m=(rel.n + 1) // 2, log_odds=d,
                                                     alpha=0.5),
        "NoisyTwoWayTable": lambda: nan.NoisyTwoWayTable(r=d, n=rel.n, alpha=0.5),
        "RandomizedResponse": lambda: nan.RandomizedResponse(
            probs=jnp.stack([1 - jax.nn.sigmoid(d), jax.nn.sigmoid(d)], axis=-1), p=0.75
        ),
    }
    return args[law]()


@pytest.mark.parametrize("law", sorted(PYMC_CASES))
def test_numpyro_batch_shape_follows_the_parameters(law: str) -> None:
    import jax
    import numpyro
    from numpyro.infer import Predictive

    make, three, five, _ = PYMC_CASES[law]
    rel = make()

    def model(d: Any) -> None:
        law_ = _numpyro_law(law, rel, d)
        with numpyro.plate("units", law_.batch_shape[0]):
            numpyro.sample("y", law_)

    for data in (three, five):
        y = Predictive(model, num_samples=7)(jax.random.PRNGKey(0), data)["y"]
        assert np.asarray(y).shape == (7, len(data))
