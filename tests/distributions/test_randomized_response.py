"""RandomizedResponse: the exact posterior behind randomized-response answers, in both PPLs.

The likelihood of each answer is ``o + (p - o) pi_y`` (the true category summed out); these tests
compare NUTS on it with the exact posterior on a grid (built from the mechanism's transition
matrix, entry by entry), and show that the noise-blind model (the answers taken as the truth) fails
the same check.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import noiseaware as na
from noiseaware.mechanisms import RandomizedResponse as RRMechanism

THETA_TRUE, N, EPS = 0.3, 400, 1.0


@pytest.fixture(scope="module")
def rr_release():
    x = (np.random.default_rng(5).random(N) < THETA_TRUE).astype(np.int64)
    return na.privatize(x, statistic="randomized_response", epsilon=EPS, categories=2, rng=np.random.default_rng(6))


def _grid(answers: np.ndarray, p: float, blind: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Exact posterior of theta (uniform prior) on a grid: sum over true categories x of P(x) Q[x, y]."""
    theta = np.linspace(1e-4, 1 - 1e-4, 20001)
    Q = RRMechanism(k=2, p=p).transition_matrix() if not blind else np.eye(2)
    pi = np.stack([1 - theta, theta], axis=-1)  # (G, 2)
    answer = pi @ Q  # (G, 2): P(Y = y | theta)
    counts = np.bincount(answers, minlength=2)
    lp = counts[0] * np.log(answer[:, 0]) + counts[1] * np.log(answer[:, 1])
    w = np.exp(lp - special.logsumexp(lp))
    return theta, w


def _check_against_grid(draws: np.ndarray, theta: np.ndarray, w: np.ndarray, ess: float) -> float:
    """|z| of the posterior mean of the draws against the grid mean, with the Monte Carlo s.e. from ESS."""
    mean = float(np.sum(w * theta))
    sd = float(np.sqrt(np.sum(w * (theta - mean) ** 2)))
    return abs(draws.mean() - mean) / (sd / np.sqrt(ess))


def _ess(draws: np.ndarray) -> float:
    import arviz as az

    return float(az.ess(draws.reshape(1, -1)))


def test_numpyro_nuts_matches_the_exact_grid_posterior_and_the_blind_model_does_not(rr_release):
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    import noiseaware.numpyro as nan

    def model():
        theta = numpyro.sample("theta", dist.Uniform(0.0, 1.0))
        probs = jax.numpy.stack([1 - theta, theta])
        nan.RandomizedResponse.from_release("y", rr_release, probs=probs)

    mcmc = MCMC(NUTS(model), num_warmup=300, num_samples=1000, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(2))
    draws = np.asarray(mcmc.get_samples()["theta"])
    answers = rr_release.values[:, 0]
    theta, w = _grid(answers, rr_release.mechanism.p)
    z = _check_against_grid(draws, theta, w, _ess(draws))
    assert z < 4.5, z  # two-sided p = 7e-6 (z = 0.5 at this seed)
    # the quantiles too (5%, 50%, 95%) within 0.02 (the grid's posterior sd is about 0.05)
    cdf = np.cumsum(w)
    for q in (0.05, 0.5, 0.95):
        assert abs(np.quantile(draws, q) - theta[np.searchsorted(cdf, q)]) < 0.02, q
    # the same check rejects the noise-blind posterior (answers taken as the true categories): z = 43 at this seed
    tb, wb = _grid(answers, rr_release.mechanism.p, blind=True)
    assert _check_against_grid(draws, tb, wb, _ess(draws)) > 20


@pytest.mark.slow  # PyTensor compiles NUTS
def test_pymc_nuts_matches_the_exact_grid_posterior(rr_release):
    import pymc as pm

    import noiseaware.pymc as nap

    with pm.Model():
        theta = pm.Uniform("theta", 0.0, 1.0)
        nap.RandomizedResponse.from_release("y", rr_release, probs=pm.math.stack([1 - theta, theta]))
        idata = pm.sample(
            draws=2000, tune=500, chains=1, cores=1, random_seed=3, progressbar=False, compute_convergence_checks=False
        )
    draws = idata.posterior["theta"].values.ravel()
    theta, w = _grid(rr_release.values[:, 0], rr_release.mechanism.p)
    assert _check_against_grid(draws, theta, w, _ess(draws)) < 4.5


def test_softmax_regression_composes_in_both_ppls_and_they_agree() -> None:
    """Per-record probabilities from a softmax regression (k = 3, two answers per record): same log-density."""
    import jax
    import jax.numpy as jnp
    import numpyro
    import pymc as pm
    from numpyro import handlers

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    rng = np.random.default_rng(0)
    n = 60
    x = rng.normal(size=n)
    codes = rng.integers(0, 3, size=(n, 2))
    rel = na.privatize(
        codes, statistic="randomized_response", epsilon=2.0, categories=3, columns=["a", "b"], rng=rng
    )
    beta = np.array([[0.0, 0.5, -0.3], [0.0, 1.2, 0.4]])  # intercepts and slopes per category

    def eta(xp):
        return beta[0] + xp[:, None] * beta[1]

    def model():
        probs = jax.nn.softmax(jnp.asarray(eta(x)), axis=-1)
        with numpyro.plate("records", n):
            nan.RandomizedResponse.from_release("b", rel, probs=probs, answer="b")

    tr = handlers.trace(handlers.seed(model, 0)).get_trace()
    lp_np = float(tr["b"]["fn"].log_prob(tr["b"]["value"]).sum())
    np.testing.assert_array_equal(np.asarray(tr["b"]["value"]), rel.values[:, 1])
    with pm.Model() as m:
        probs = pm.math.softmax(pm.math.constant(eta(x)), axis=-1)
        nap.RandomizedResponse.from_release("b", rel, probs=probs, answer=1)
    lp_pm = float(m.compile_logp()({}))
    # by hand: o + (p - o) pi_y
    p = rel.mechanism.p
    off = (1 - p) / 2
    pi = special.softmax(eta(x), axis=-1)
    want = float(np.sum(np.log(off + (p - off) * pi[np.arange(n), rel.values[:, 1]])))
    assert abs(lp_np - want) < 1e-9 and abs(lp_pm - want) < 1e-9
    # all answers at once: probs broadcast over (n, q, k)
    with pm.Model() as m2:
        nap.RandomizedResponse.from_release("y", rel, probs=np.full((n, 2, 3), 1 / 3))
    assert tuple(m2["y"].shape.eval()) == (n, 2)
    assert abs(float(m2.compile_logp()({})) - 2 * n * np.log(1 / 3)) < 1e-9  # uniform probs: every answer 1/3


def test_from_release_refuses_what_it_cannot_model() -> None:
    import numpyro.distributions  # noqa: F401

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    rr = na.privatize(np.array([0, 1, 2, 1]), statistic="randomized_response", epsilon=1.0, categories=3)
    counts = na.privatize(np.array([3, 4]), statistic="counts", epsilon=1.0, sensitivity=1)
    cases = [
        ((counts, np.full(3, 1 / 3)), {}, r"must be a 'randomized_response' release; got statistic='counts'"),
        ((rr, np.full(2, 0.5)), {}, r"probs must have k=3 categories on its last axis \(the release's\); got 2"),
        ((rr, np.full(3, 1 / 3)), {"answer": "zz"}, r"answer must name one of the release's answers \['x0'\]"),
        ((rr, np.full(3, 1 / 3)), {"answer": 1}, r"answer must be a column name in \['x0'\] or an index in \[0, 1\)"),
    ]
    for args, kw, match in cases:
        with pytest.raises(ValueError, match=match):
            nan.RandomizedResponse.from_release("y", *args, **kw)
        with pytest.raises(ValueError, match=match):
            import pymc as pm

            with pm.Model():
                nap.RandomizedResponse.from_release("y", *args, **kw)
    with pytest.raises(ValueError, match=r"p \(the probability of a truthful answer\) must be in \[1/k, 1\)"):
        nan.RandomizedResponse(np.full(3, 1 / 3), p=0.2)
    with pytest.raises(ValueError, match=r"k >= 2 category probabilities on its last axis"):
        nap.RandomizedResponse.dist(np.array([1.0]), p=0.9)
