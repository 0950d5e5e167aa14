"""``Noisy(dist, noise)``: the noisy version of a discrete base, in both PPLs.

References are independent brute-force sums: the base pmf from SciPy, the noise pmf from
:mod:`references` (``scipy.stats.dlaplace``; a direct discrete Gaussian normalizer), summed
over the *whole* base support (not a window around the observation) in float64.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import special, stats

import noiseaware as na
from noiseaware._core import _noisy

from . import references as ref

ALPHA, SIGMA = 0.6, 2.5
NOISES = {"geometric": {"alpha": ALPHA}, "discrete_gaussian": {"sigma": SIGMA}}
#: chi-square rejection level (spurious failure rate below 1e-4 over all the tests here)
P_REJECT = 1e-7
N_DRAWS = 20_000


def noise_logpmf(family, par, d):
    if family == "geometric":
        return ref.geometric_noise_logpmf(d, par)
    return ref.dg_logpmf(d, 0, par)


def ref_logpmf(base_logpmf, support, family, par, y):
    """``log sum_k b(k) g(y - k)`` over every ``k`` of ``support`` (the whole base support)."""
    k = np.asarray(support, dtype=np.float64)
    lb = base_logpmf(k)
    y = np.atleast_1d(np.asarray(y, dtype=np.float64))
    out = np.full(y.shape, -np.inf)
    for i, yi in enumerate(y):
        if np.isfinite(yi) and yi == np.floor(yi):
            out[i] = special.logsumexp(lb + noise_logpmf(family, par, yi - k))
    return out


# --------------------------------------------------------------------------- the bases
@dataclass(frozen=True)
class Base:
    id: str
    numpyro: Any  # (jnp module, dist module, params) -> distribution
    pymc: Any  # (pm, params) -> .dist()
    logpmf: Any  # (params, k) -> log P(X = k), SciPy
    params: dict
    support: tuple[int, int]  # the whole support, or all but < 1e-300 of the mass
    values: tuple[int, int]  # observed values tested: a range around the bulk
    grad: str | None = None
    #: relative accuracy of NumPyro's own log-pmf of this base (its negative binomials go through
    #: jax.scipy's betaln, off by up to ~1e-6); the convolution is then checked against a brute-force
    #: sum of that same log-pmf, and the base itself against SciPy at this tolerance
    numpyro_base_rtol: float | None = None


def _zip_logpmf(p, k):
    with np.errstate(divide="ignore"):
        return np.logaddexp(
            np.where(k == 0, math.log(p["gate"]), -np.inf), math.log1p(-p["gate"]) + stats.poisson.logpmf(k, p["mu"])
        )


BASES = [
    Base(
        "poisson",
        lambda d, p: d.Poisson(p["mu"]),
        lambda pm, p: pm.Poisson.dist(mu=p["mu"]),
        lambda p, k: stats.poisson.logpmf(k, p["mu"]),
        {"mu": 3.7},
        (0, 2500),
        (-30, 45),
        grad="mu",
    ),
    Base(
        "poisson-large",
        lambda d, p: d.Poisson(p["mu"]),
        lambda pm, p: pm.Poisson.dist(mu=p["mu"]),
        lambda p, k: stats.poisson.logpmf(k, p["mu"]),
        {"mu": 250.0},
        (0, 2500),
        (180, 320),
    ),
    Base(
        "binomial",
        lambda d, p: d.Binomial(p["n"], p["p"]),
        lambda pm, p: pm.Binomial.dist(n=p["n"], p=p["p"]),
        lambda p, k: stats.binom.logpmf(k, p["n"], p["p"]),
        {"n": 30, "p": 0.35},
        (0, 30),
        (-25, 60),
        grad="p",
    ),
    Base(  # support narrower than the window: the sum is the full convolution
        "binomial-n4",
        lambda d, p: d.Binomial(p["n"], p["p"]),
        lambda pm, p: pm.Binomial.dist(n=p["n"], p=p["p"]),
        lambda p, k: stats.binom.logpmf(k, p["n"], p["p"]),
        {"n": 4, "p": 0.8},
        (0, 4),
        (-20, 25),
    ),
    Base(  # NumPyro NegativeBinomial2(mean, concentration); PyMC NegativeBinomial(mu, alpha)
        "negbin-mean",
        lambda d, p: d.NegativeBinomial2(p["mu"], p["alpha"]),
        lambda pm, p: pm.NegativeBinomial.dist(mu=p["mu"], alpha=p["alpha"]),
        lambda p, k: stats.nbinom.logpmf(k, p["alpha"], p["alpha"] / (p["alpha"] + p["mu"])),
        {"mu": 6.0, "alpha": 2.5},
        (0, 2500),
        (-25, 60),
        grad="mu",
        numpyro_base_rtol=1e-5,
    ),
    Base(  # NumPyro NegativeBinomialProbs(r, probs=success); PyMC NegativeBinomial(n=r, p=1-probs)
        "negbin-probs",
        lambda d, p: d.NegativeBinomialProbs(p["r"], p["q"]),
        lambda pm, p: pm.NegativeBinomial.dist(n=p["r"], p=1.0 - p["q"]),
        lambda p, k: stats.nbinom.logpmf(k, p["r"], 1.0 - p["q"]),
        {"r": 3.0, "q": 0.4},
        (0, 2500),
        (-25, 40),
        numpyro_base_rtol=1e-5,
    ),
    Base(  # a generic base: any discrete log-pmf works (PyMC: psi is the Poisson weight)
        "zero-inflated-poisson",
        lambda d, p: d.ZeroInflatedPoisson(p["gate"], p["mu"]),
        lambda pm, p: pm.ZeroInflatedPoisson.dist(psi=1.0 - p["gate"], mu=p["mu"]),
        _zip_logpmf,
        {"gate": 0.3, "mu": 9.0},
        (0, 2500),
        (-25, 45),
    ),
    Base(  # the category index plus noise
        "categorical",
        lambda d, p: d.Categorical(np.asarray(p["p"])),
        lambda pm, p: pm.Categorical.dist(p=np.asarray(p["p"])),
        lambda p, k: np.log(np.asarray(p["p"]))[k.astype(int)],
        {"p": (0.1, 0.2, 0.7)},
        (0, 2),
        (-20, 22),
    ),
]
BASE_IDS = [b.id for b in BASES]
OUTLIERS = (-600, 900)


def values_of(base):
    lo, hi = base.values
    return np.concatenate([np.arange(lo, hi + 1), OUTLIERS]).astype(np.float64)


def reference(base, family, par, y, params=None):
    p = base.params if params is None else params
    k = np.arange(base.support[0], base.support[1] + 1)
    return ref_logpmf(lambda kk: base.logpmf(p, kk), k, family, par, y)


def f64(params):
    return {k: (np.float64(x) if isinstance(x, float) else x) for k, x in params.items()}


def numpyro_logp(base, noise, y, params=None):
    import numpyro.distributions as dist

    import noiseaware.numpyro as nan

    d = nan.Noisy(base.numpyro(dist, f64(base.params if params is None else params)), **noise, validate_args=False)
    return np.asarray(d.log_prob(y))


_PYMC_MEMO: dict = {}


def pymc_logp(base, family, y):
    """One compiled function per base for both noise families (PyTensor compilation is the cost)."""
    key = (base.id, y.tobytes())
    if key not in _PYMC_MEMO:
        import pymc as pm
        import pytensor

        import noiseaware.pymc as nap

        yi = y.astype(np.int64)
        outs = [pm.logp(nap.Noisy.dist(base.pymc(pm, f64(base.params)), **NOISES[f]), yi) for f in NOISES]
        vals = pytensor.function([], outs)()
        _PYMC_MEMO[key] = dict(zip(NOISES, vals, strict=True))
    return _PYMC_MEMO[key][family]


def check_exact(got, want, spec):
    """Relative 1e-10 where log p >= -40 (the guarantee); a certified lower bound elsewhere."""
    assert got.shape == want.shape
    assert np.all(np.isneginf(got)[np.isneginf(want)])
    # -inf for a possible value only far below the floor (a base's own log-pmf may underflow there,
    # e.g. PyMC's ZeroInflatedPoisson at k ~ 900 for mu = 9)
    assert np.all(want[np.isneginf(got) & np.isfinite(want)] < _noisy.LOG_FLOOR - 100)
    inside = np.isfinite(want) & (want >= _noisy.LOG_FLOOR)
    assert inside.sum() >= 10
    assert np.max(np.abs(np.expm1(got[inside] - want[inside]))) <= 1e-10
    # everywhere: p_hat <= p, and (p - p_hat)/p <= g(w+1)/p_hat (the certificate)
    fin = np.isfinite(got) & np.isfinite(want)
    assert np.all(got[fin] <= want[fin] + 1e-12)
    rel_err = -np.expm1(got[fin] - want[fin])
    bound = np.exp(np.minimum(_noisy.log_error_bound(spec, got[fin]), 0.0))
    assert np.all(rel_err <= bound + 1e-12)


# --------------------------------------------------------------------------- core facts
@pytest.mark.parametrize(
    "family,par",
    [
        ("geometric", 0.05),
        ("geometric", 0.6),
        ("geometric", 0.97),
        ("discrete_gaussian", 0.3),
        ("discrete_gaussian", 2.5),
        ("discrete_gaussian", 40.0),
    ],
)
def test_half_width_is_the_smallest_with_a_proven_tail(family, par):
    w = _noisy.half_width(family, par)
    target = 1e-12 * math.exp(_noisy.LOG_FLOOR)
    assert _noisy.tail_bound(family, par, w) <= target
    assert w == 0 or _noisy.tail_bound(family, par, w - 1) > target
    # the bound is >= the exact tail (mpmath, 40 digits), equal for the geometric family
    import mpmath as mp

    mp.mp.dps = 40
    if family == "geometric":
        a = mp.mpf(par)
        exact = 2 * (1 - a) / (1 + a) * mp.nsum(lambda d: a**d, [w + 1, mp.inf])
        assert abs(exact / mp.mpf(_noisy.tail_bound(family, par, w)) - 1) < 1e-12
    else:
        s = mp.mpf(par)
        f = lambda d: mp.exp(-(d**2) / (2 * s**2))  # noqa: E731
        z = 1 + 2 * mp.nsum(f, [1, mp.inf])
        exact = 2 * mp.nsum(f, [w + 1, mp.inf]) / z
        assert exact <= mp.mpf(_noisy.tail_bound(family, par, w))
    spec, _ = _noisy.noise_spec({"family": family, _noisy.FAMILIES[family]: par})
    assert spec.width == 2 * w + 1 and spec.log_g_next <= math.log(spec.tail / 2) + 1e-12


def test_noise_variance_is_exact():
    spec, _ = _noisy.noise_spec(sigma=SIGMA)
    d = np.arange(-400, 401, dtype=np.float64)
    assert spec.variance == pytest.approx(np.sum(d**2 * np.exp(ref.dg_logpmf(d, 0, SIGMA))), rel=1e-13)
    spec, _ = _noisy.noise_spec(alpha=ALPHA)
    assert spec.variance == pytest.approx(np.sum(d**2 * np.exp(ref.geometric_noise_logpmf(d, ALPHA))), rel=1e-13)


# --------------------------------------------------------------------------- exactness
@pytest.mark.parametrize("family", list(NOISES))
@pytest.mark.parametrize("base", BASES, ids=BASE_IDS)
def test_numpyro_exact(base, family):
    y = values_of(base)
    yy = np.concatenate([y, [2.5, np.inf]])
    spec, _ = _noisy.noise_spec(**NOISES[family])
    got = numpyro_logp(base, NOISES[family], yy)
    want = reference(base, family, spec.par, yy)
    if base.numpyro_base_rtol is None:
        check_exact(got, want, spec)
        return
    import numpyro.distributions as dist

    own = base.numpyro(dist, f64(base.params))
    k = np.arange(base.support[0], base.support[1] + 1)
    np.testing.assert_allclose(
        np.asarray(own.log_prob(k))[:60], base.logpmf(base.params, k)[:60], rtol=base.numpyro_base_rtol
    )
    ok = want >= _noisy.LOG_FLOOR
    np.testing.assert_allclose(got[ok], want[ok], rtol=base.numpyro_base_rtol)
    check_exact(got, ref_logpmf(lambda kk: np.asarray(own.log_prob(kk)), k, family, spec.par, yy), spec)


@pytest.mark.parametrize("family", list(NOISES))
@pytest.mark.parametrize("base", BASES, ids=BASE_IDS)
def test_pymc_exact_and_agrees_with_numpyro(base, family):
    y = values_of(base)
    spec, _ = _noisy.noise_spec(**NOISES[family])
    got = pymc_logp(base, family, y)
    check_exact(got, reference(base, family, spec.par, y), spec)
    other = numpyro_logp(base, NOISES[family], y)
    both = np.isfinite(got) & np.isfinite(other)
    assert np.all(np.isfinite(other) | np.isneginf(got))
    np.testing.assert_allclose(got[both], other[both], rtol=base.numpyro_base_rtol or 1e-12, atol=1e-12)


def test_outlier_beyond_the_floor_is_a_certified_lower_bound():
    """The documented limit: geometric noise, a huge Poisson mean and y = 0 (log p ~ -mu (1 - alpha))."""
    base = BASES[0]
    params = {"mu": 5000.0}
    spec, _ = _noisy.noise_spec(alpha=ALPHA)
    got = numpyro_logp(base, {"alpha": ALPHA}, np.array([0.0]), params)
    k = np.arange(0, 20000)
    want = ref_logpmf(lambda kk: stats.poisson.logpmf(kk, 5000.0), k, "geometric", ALPHA, [0.0])
    assert want[0] < _noisy.LOG_FLOOR
    assert got[0] <= want[0] and math.log(-math.expm1(got[0] - want[0])) <= _noisy.log_error_bound(spec, got[0])


MULTI_P = np.array([0.2, 0.3, 0.5])
MULTI_N = 6
MULTI_Y = np.array([[1, 2, 3], [0, 0, 0], [-4, 9, 1], [12, -6, 2], [6, 0, 0], [2, 2, 2]], dtype=np.float64)


def multinomial_reference(family, par, y, p=MULTI_P, N=MULTI_N):
    comps = np.array([c for c in itertools.product(range(N + 1), repeat=len(p)) if sum(c) == N])
    lb = stats.multinomial.logpmf(comps, N, p)
    return np.array([special.logsumexp(lb + noise_logpmf(family, par, yi[None, :] - comps).sum(axis=1)) for yi in y])


@pytest.mark.parametrize("family", list(NOISES))
def test_multinomial_exact_both_ppls(family):
    import numpyro.distributions as dist
    import pymc as pm

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    par = NOISES[family][_noisy.FAMILIES[family]]
    want = multinomial_reference(family, par, MULTI_Y)
    got_np = np.asarray(nan.Noisy(dist.Multinomial(MULTI_N, MULTI_P), **NOISES[family]).log_prob(MULTI_Y))
    logits = np.log(MULTI_P) + 0.7  # MultinomialLogits normalizes
    got_lg = np.asarray(nan.Noisy(dist.Multinomial(MULTI_N, logits=logits), **NOISES[family]).log_prob(MULTI_Y))
    got_pm = pm.logp(
        nap.Noisy.dist(pm.Multinomial.dist(MULTI_N, MULTI_P), **NOISES[family]), MULTI_Y.astype(int)
    ).eval()
    for got in (got_np, got_lg, got_pm):
        assert np.max(np.abs(np.expm1(got - want))) <= 1e-10
    noisy = nan.Noisy(dist.Multinomial(MULTI_N, MULTI_P), **NOISES[family], validate_args=False)
    half = np.asarray(noisy.log_prob(MULTI_Y + 0.5))
    assert np.all(np.isneginf(half))


# --------------------------------------------------------------------------- gradients
GRAD_BASES = [b for b in BASES if b.grad]


def _fd(base, family, par, y, h=1e-6):
    theta = base.params[base.grad]
    up = reference(base, family, par, y, {**base.params, base.grad: theta + h}).sum()
    dn = reference(base, family, par, y, {**base.params, base.grad: theta - h}).sum()
    return (up - dn) / (2 * h)


@pytest.mark.parametrize("base", GRAD_BASES, ids=[b.id for b in GRAD_BASES])
def test_gradients_in_the_base_parameter(base):
    import jax
    import numpyro.distributions as dist
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    y = np.arange(base.values[0], base.values[1] + 1, 5).astype(np.float64)
    theta0 = base.params[base.grad]
    th = pt.dscalar("theta")
    grads = []
    for noise in NOISES.values():
        lp = pm.logp(nap.Noisy.dist(base.pymc(pm, {**base.params, base.grad: th}), **noise), y.astype(int)).sum()
        grads.append(pt.grad(lp, th))
    g_pm = pytensor.function([th], grads)(theta0)  # one compilation for both noise families
    for i, (family, noise) in enumerate(NOISES.items()):
        fd = _fd(base, family, noise[_noisy.FAMILIES[family]], y)

        def f(theta, noise=noise):
            return nan.Noisy(base.numpyro(dist, {**base.params, base.grad: theta}), **noise).log_prob(y).sum()

        for g in (float(jax.grad(f)(theta0)), float(g_pm[i])):
            assert abs(g - fd) <= 1e-6 * max(1.0, abs(fd)), (family, g, fd)


def test_multinomial_gradient():
    import jax
    import jax.numpy as jnp
    import numpyro.distributions as dist

    import noiseaware.numpyro as nan

    def probs(q):
        return jnp.stack([q, 0.3, 0.7 - q]) if isinstance(q, jax.Array) else np.array([q, 0.3, 0.7 - q])

    f = lambda q: nan.Noisy(dist.Multinomial(MULTI_N, probs(q)), alpha=ALPHA).log_prob(MULTI_Y).sum()  # noqa: E731
    h = 1e-6
    fd = (
        multinomial_reference("geometric", ALPHA, MULTI_Y, probs(0.2 + h)).sum()
        - multinomial_reference("geometric", ALPHA, MULTI_Y, probs(0.2 - h)).sum()
    ) / (2 * h)
    assert abs(float(jax.grad(f)(0.2)) - fd) <= 1e-6 * max(1.0, abs(fd))


# --------------------------------------------------------------------------- draws
def chi2_pvalue(draws, logpmf, lo, hi):
    """Pearson chi-square of integer draws against a pmf on [lo, hi]; tail bins pooled to expected >= 5."""
    k = np.arange(lo, hi + 1)
    expected = np.exp(logpmf(k.astype(np.float64))) * draws.size
    observed = np.bincount(np.clip(draws - lo, 0, hi - lo).astype(np.int64), minlength=k.size).astype(float)
    obs_b, exp_b, o, e = [], [], 0.0, 0.0
    for oi, ei in zip(observed, expected, strict=True):
        o, e = o + oi, e + ei
        if e >= 5:
            obs_b.append(o)
            exp_b.append(e)
            o, e = 0.0, 0.0
    obs_b[-1] += o
    exp_b[-1] += e
    obs_b, exp_b = np.array(obs_b), np.array(exp_b)
    exp_b *= obs_b.sum() / exp_b.sum()
    return stats.chisquare(obs_b, exp_b).pvalue


DRAW_CASES = [("poisson", "geometric", {"alpha": 0.63}), ("binomial", "discrete_gaussian", {"sigma": 3.0})]


@pytest.mark.parametrize("bid,family,wrong", DRAW_CASES)
@pytest.mark.parametrize("front", ["numpyro", "pymc"])
def test_draws_match_the_exact_pmf_and_reject_wrong_noise(front, bid, family, wrong):
    base = BASES[BASE_IDS.index(bid)]
    noise = NOISES[family]
    if front == "numpyro":
        import jax
        import numpyro.distributions as dist

        import noiseaware.numpyro as nan

        draws = np.asarray(
            nan.Noisy(base.numpyro(dist, base.params), **noise).sample(jax.random.PRNGKey(7), (N_DRAWS,))
        )
    else:
        import pymc as pm

        import noiseaware.pymc as nap

        draws = np.asarray(pm.draw(nap.Noisy.dist(base.pymc(pm, base.params), **noise, size=N_DRAWS), random_seed=7))
    assert draws.shape == (N_DRAWS,) and draws.dtype.kind == "i"
    lo, hi = base.values
    par = noise[_noisy.FAMILIES[family]]
    wpar = wrong[_noisy.FAMILIES[family]]
    assert chi2_pvalue(draws, lambda k: reference(base, family, par, k), lo, hi) > P_REJECT
    assert chi2_pvalue(draws, lambda k: reference(base, family, wpar, k), lo, hi) < P_REJECT


def test_multinomial_draws_per_cell():
    import jax
    import numpyro.distributions as dist

    import noiseaware.numpyro as nan

    draws = np.asarray(
        nan.Noisy(dist.Multinomial(MULTI_N, MULTI_P), alpha=ALPHA).sample(jax.random.PRNGKey(3), (N_DRAWS,))
    )
    assert draws.shape == (N_DRAWS, 3)
    for j in range(3):  # each cell: Binomial(N, p_j) + noise
        marg = lambda k, a, j=j: ref_logpmf(  # noqa: E731
            lambda kk: stats.binom.logpmf(kk, MULTI_N, MULTI_P[j]), np.arange(MULTI_N + 1), "geometric", a, k
        )
        assert chi2_pvalue(draws[:, j], lambda k: marg(k, ALPHA), -15, 21) > P_REJECT
    assert min(chi2_pvalue(draws[:, j], lambda k: marg(k, 0.66), -15, 21) for j in range(3)) < P_REJECT


# --------------------------------------------------------------------------- NumPyro idiom
def test_numpyro_shapes_jit_vmap_plate_and_moments():
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro import handlers

    import noiseaware.numpyro as nan

    mu = jnp.array([1.0, 5.0, 20.0])
    d = nan.Noisy(dist.Poisson(mu), sigma=SIGMA)
    assert d.batch_shape == (3,) and d.event_shape == ()
    y = jnp.array([[0.0, 3.0, 40.0], [-2.0, 5.0, 18.0]])
    eager = np.asarray(d.log_prob(y))
    assert eager.shape == (2, 3)
    np.testing.assert_allclose(jax.jit(lambda v: d.log_prob(v))(y), eager, rtol=0, atol=1e-12)
    vm = jax.vmap(lambda m: nan.Noisy(dist.Poisson(m), sigma=SIGMA).log_prob(y[0]))(mu)
    np.testing.assert_allclose(np.diag(np.asarray(vm)), eager[0], rtol=0, atol=1e-12)
    # the distribution is a pytree: it crosses jit boundaries
    np.testing.assert_allclose(jax.jit(lambda dd: dd.log_prob(y))(d), eager, rtol=0, atol=1e-12)
    assert d.sample(jax.random.PRNGKey(0), (4,)).shape == (4, 3)
    np.testing.assert_allclose(d.mean, mu)
    spec, _ = _noisy.noise_spec(sigma=SIGMA)
    np.testing.assert_allclose(d.variance, mu + spec.variance, rtol=1e-14)

    def model(obs=None):
        rate = numpyro.sample("rate", dist.Gamma(2.0, 0.5))
        with numpyro.plate("cells", 4):
            numpyro.sample("y", nan.Noisy(dist.Poisson(rate), alpha=ALPHA), obs=obs)

    obs = jnp.array([1, -2, 3, 4])
    tr = handlers.trace(handlers.seed(model, 0)).get_trace(obs)
    site = tr["y"]
    lp = np.asarray(site["fn"].log_prob(site["value"]))
    rate = float(tr["rate"]["value"])
    want = ref_logpmf(lambda k: stats.poisson.logpmf(k, rate), np.arange(0, 400), "geometric", ALPHA, np.asarray(obs))
    assert lp.shape == (4,) and np.max(np.abs(lp - want)) < 1e-10


# --------------------------------------------------------------------------- posterior
RATE_TRUE, RATE_EPS = 12.0, 0.5


@pytest.fixture(scope="module")
def rate_data():
    rng = np.random.default_rng(5)
    x = rng.poisson(RATE_TRUE, size=8)
    u = rng.random((2, 8))
    a = math.exp(-RATE_EPS)
    return (x + np.floor(np.log1p(-u[0]) / math.log(a)) - np.floor(np.log1p(-u[1]) / math.log(a))).astype(int)


@pytest.fixture(scope="module")
def rate_grid(rate_data):
    """Exact posterior of the rate under Gamma(2, 0.1), on a fine grid with the brute-force likelihood."""
    a = math.exp(-RATE_EPS)
    lam = np.linspace(0.01, 60, 6000)
    k = np.arange(0, 300)
    lpk = stats.poisson.logpmf(k[None, :], lam[:, None])
    lg = ref.geometric_noise_logpmf(rate_data[:, None] - k[None, :], a)  # (n, k)
    ll = special.logsumexp(lpk[:, None, :] + lg[None, :, :], axis=-1).sum(axis=1)
    lp = ll + stats.gamma.logpdf(lam, 2.0, scale=10.0)
    w = np.exp(lp - lp.max())
    w /= w.sum()
    mean = float(np.sum(w * lam))
    return mean, float(np.sqrt(np.sum(w * (lam - mean) ** 2)))


def test_numpyro_nuts_matches_exact_grid_posterior(rate_data, rate_grid):
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    import noiseaware.numpyro as nan

    def model(y):
        rate = numpyro.sample("rate", dist.Gamma(2.0, 0.1))
        with numpyro.plate("cells", y.shape[0]):
            numpyro.sample("y", nan.Noisy(dist.Poisson(rate), epsilon=RATE_EPS), obs=y)

    mcmc = MCMC(NUTS(model), num_warmup=300, num_samples=1500, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(1), rate_data)
    draws = np.asarray(mcmc.get_samples()["rate"])
    mean, sd = rate_grid
    assert abs(mean - RATE_TRUE) < 4 * sd
    assert abs(draws.mean() - mean) < 0.25 * sd, (draws.mean(), mean, sd)
    assert abs(draws.std() / sd - 1) < 0.2


@pytest.mark.slow  # PyTensor compiles NUTS: ~10 s with a warm compile cache, a minute or more cold
def test_pymc_nuts_matches_exact_grid_posterior(rate_data, rate_grid):
    import pymc as pm

    import noiseaware.pymc as nap

    with pm.Model():
        rate = pm.Gamma("rate", 2.0, 0.1)
        nap.Noisy("y", pm.Poisson.dist(rate), epsilon=RATE_EPS, observed=rate_data)
        idata = pm.sample(
            draws=1500, tune=500, chains=1, cores=1, random_seed=3, progressbar=False, compute_convergence_checks=False
        )
    draws = idata.posterior["rate"].values.ravel()
    mean, sd = rate_grid
    assert abs(draws.mean() - mean) < 0.25 * sd
    assert abs(draws.std() / sd - 1) < 0.2


# --------------------------------------------------------------------------- releases
@pytest.fixture(scope="module")
def counts_release():
    return na.privatize(np.array([3, 0, 7, 12, 5, 1]), statistic="counts", epsilon=1.0, sensitivity=1)


def test_from_release_both_ppls(counts_release):
    import numpyro.distributions as dist
    import pymc as pm
    from numpyro import handlers

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    rel = counts_release
    assert rel.mechanism.family == "geometric" and rel.secure
    mu = np.array([2.0, 1.0, 6.0, 10.0, 4.0, 2.0])
    want = sum(
        ref_logpmf(lambda k, m=m: stats.poisson.logpmf(k, m), np.arange(300), "geometric", rel.mechanism.alpha, [y])[0]
        for m, y in zip(mu, rel.values, strict=True)
    )
    with pm.Model() as model:
        t = nap.Noisy.from_release("y", rel, pm.Poisson.dist(mu))
    np.testing.assert_array_equal(model.rvs_to_values[t].data, rel.values)
    assert abs(float(model.compile_logp()({})) - want) < 1e-10
    with pm.Model() as model2:  # one rate for every cell: the shape comes from the release
        nap.Noisy.from_release("y", rel, pm.Poisson.dist(4.0))
    assert model2.rvs_to_values[model2["y"]].data.shape == (6,)

    site = handlers.trace(lambda: nan.Noisy.from_release("y", rel, dist.Poisson(mu))).get_trace()["y"]
    np.testing.assert_array_equal(np.asarray(site["value"]), rel.values)
    assert site["fn"].alpha == pytest.approx(rel.mechanism.alpha, rel=1e-15)
    assert abs(float(site["fn"].log_prob(site["value"]).sum()) - want) < 1e-10
    site = handlers.trace(lambda: nan.Noisy.from_release("y", rel, dist.Poisson(4.0))).get_trace()["y"]
    assert site["fn"].batch_shape == (6,)


def test_from_release_takes_the_release_second_and_refuses_the_old_order(counts_release):
    """Noisy.from_release(name, release, dist) as every other from_release; the former order is refused."""
    import numpyro.distributions as dist
    import pymc as pm
    from numpyro import handlers

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    rel = counts_release
    new = handlers.trace(lambda: nan.Noisy.from_release("y", rel, dist.Poisson(3.0))).get_trace()["y"]
    np.testing.assert_array_equal(np.asarray(new["value"]), rel.values)
    want = float(nan.Noisy(dist.Poisson(3.0), alpha=rel.mechanism.alpha).log_prob(rel.values).sum())
    assert float(new["fn"].log_prob(new["value"]).sum()) == pytest.approx(want, rel=1e-12)
    with pytest.raises(TypeError, match=r"release must be a noiseaware\.Release"):
        nan.Noisy.from_release("y", dist.Poisson(3.0), rel)

    with pm.Model() as model:
        nap.Noisy.from_release("y", rel, pm.Poisson.dist(3.0))
    np.testing.assert_array_equal(model.rvs_to_values[model["y"]].data, rel.values)
    assert float(model.compile_logp()({})) == pytest.approx(want, rel=1e-6)  # each PPL's window, DEFAULT_TOL
    with pm.Model(), pytest.raises(TypeError, match=r"release must be a noiseaware\.Release"):
        nap.Noisy.from_release("y", pm.Poisson.dist(3.0), rel)
    # keywords name the roles in either position; a release in neither is still refused
    site = handlers.trace(lambda: nan.Noisy.from_release("y", dist=dist.Poisson(3.0), release=rel)).get_trace()["y"]
    np.testing.assert_array_equal(np.asarray(site["value"]), rel.values)
    with pytest.raises(TypeError, match=r"release must be a noiseaware\.Release"):
        nan.Noisy.from_release("y", dist.Poisson(3.0), dist.Poisson(2.0))


def test_discrete_gaussian_release_sets_sigma():
    import numpyro.distributions as dist

    import noiseaware.numpyro as nan

    rel = na.privatize(np.array([5, 12, 40]), statistic="counts", rho=0.5, sensitivity=1, rng=np.random.default_rng(1))
    d = nan.Noisy(dist.Poisson(np.array([5.0, 12.0, 40.0])), noise=rel)
    assert d.spec.family == "discrete_gaussian" and d.sigma == rel.mechanism.sigma and d.alpha is None


# --------------------------------------------------------------------------- prior predictive
PRIOR_MU = 5.0


def _check_noisy_moments(draws, observed):
    spec, _ = _noisy.noise_spec(alpha=ALPHA)
    var = PRIOR_MU + spec.variance
    n = draws.size
    assert draws.dtype.kind == "i" and np.any(draws < 0)  # noise is there: a Poisson is never negative
    assert not np.all(draws.reshape(-1, observed.size) == observed)
    assert abs(draws.mean() - PRIOR_MU) < 5 * math.sqrt(var / n)
    assert abs(draws.var() / var - 1) < 0.15


def test_prior_predictive_numpyro():
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import Predictive

    import noiseaware.numpyro as nan

    observed = np.arange(10)

    def model(y=None):
        with numpyro.plate("cells", 10):
            numpyro.sample("y", nan.Noisy(dist.Poisson(PRIOR_MU), alpha=ALPHA), obs=y)

    draws = np.asarray(Predictive(model, num_samples=600)(jax.random.PRNGKey(4))["y"])
    assert draws.shape == (600, 10)
    _check_noisy_moments(draws, observed)


def test_prior_predictive_pymc():
    import pymc as pm

    import noiseaware.pymc as nap

    observed = np.arange(10)
    with pm.Model():
        nap.Noisy("y", pm.Poisson.dist(PRIOR_MU), alpha=ALPHA, observed=observed)
        idata = pm.sample_prior_predictive(draws=600, random_seed=4)
    draws = idata.prior_predictive["y"].values.reshape(600, 10)
    _check_noisy_moments(draws, observed)


# --------------------------------------------------------------------------- PyMC logcdf
def test_pymc_logcdf_matches_cumulative_reference():
    import pymc as pm

    import noiseaware.pymc as nap

    base = BASES[0]
    y = np.arange(-30, 45)
    for family, noise in NOISES.items():
        par = noise[_noisy.FAMILIES[family]]
        got = pm.logcdf(nap.Noisy.dist(pm.Poisson.dist(np.float64(3.7)), **noise), y).eval()
        full = np.arange(-400, 45)
        pmf = np.exp(reference(base, family, par, full))
        with np.errstate(divide="ignore"):
            want = np.log(np.cumsum(pmf))[-y.size :]
        ok = want >= _noisy.LOG_FLOOR
        assert np.max(np.abs(np.expm1(got[ok] - want[ok]))) <= 1e-10
        assert np.all(got <= want + 1e-12)


# --------------------------------------------------------------------------- bad input
def test_bad_noise_arguments_name_the_argument():
    import numpyro.distributions as dist
    import pymc as pm

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    np_base = dist.Poisson(2.0)
    cases = [
        ({"alpha": 1.5}, ValueError, r"alpha must be in \(0, 1\); got alpha=1.5"),
        ({"alpha": 0.0}, ValueError, "alpha must be in"),
        ({"noise": {"family": "geometric", "alpha": -0.1}}, ValueError, "alpha must be in"),
        ({"sigma": 0.0}, ValueError, "sigma must be a finite number > 0"),
        ({"sigma": -1.0}, ValueError, "sigma must be"),
        ({"noise": {"family": "discrete_gaussian", "sigma": -2.0}}, ValueError, "sigma must be"),
        ({"epsilon": -1.0}, ValueError, "epsilon must be"),
        ({"noise": {"family": "laplace", "scale": 1.0}}, ValueError, r"noise\['family'\]"),
        ({"noise": {"family": "geometric", "sigma": 1.0}}, ValueError, "'alpha'"),
        ({"noise": 0.5}, TypeError, "noise must be a mapping"),
        ({"alpha": 0.5, "sigma": 1.0}, ValueError, "exactly one of noise, alpha, epsilon or sigma"),
        ({}, ValueError, "exactly one of"),
        ({"alpha": 0.5, "tol": 0.5}, ValueError, "tol must be"),
    ]
    for kwargs, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            nan.Noisy(np_base, **kwargs)
        with pytest.raises(exc, match=msg):
            nap.Noisy.dist(pm.Poisson.dist(2.0), **kwargs)


def test_bad_bases_and_releases():
    import jax
    import jax.numpy as jnp
    import numpyro.distributions as dist
    import pymc as pm

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    with pytest.raises(ValueError, match="dist must be a discrete distribution"):
        nan.Noisy(dist.Normal(0.0, 1.0), alpha=0.5)
    with pytest.raises(ValueError, match="dist must be a discrete distribution"):
        nap.Noisy.dist(pm.Normal.dist(), alpha=0.5)
    with pytest.raises(TypeError, match="dist must be"):
        nan.Noisy(3, alpha=0.5)
    with pytest.raises(TypeError, match="dist must be"):
        nap.Noisy.dist(np.array(3), alpha=0.5)
    with pytest.raises(ValueError, match="event shape"):
        nan.Noisy(dist.Poisson(jnp.ones(3)).to_event(1), alpha=0.5)
    with pytest.raises(ValueError, match="the only multivariate base is Multinomial"):
        nap.Noisy.dist(pm.DirichletMultinomial.dist(5, np.ones(3)), alpha=0.5)
    with pytest.raises(ValueError, match=r"total count N=2000 .* refusing"):
        nan.Noisy(dist.Multinomial(2000, MULTI_P), alpha=0.5)
    with pytest.raises(ValueError, match="refusing"):
        nap.Noisy.dist(pm.Multinomial.dist(2000, MULTI_P), alpha=0.5)
    with pytest.raises(ValueError, match="concrete total_count"):
        jax.jit(lambda n: nan.Noisy(dist.Multinomial(n, MULTI_P), alpha=0.5).log_prob(MULTI_Y))(6)
    with pytest.raises(ValueError, match="n must be a concrete integer"):
        nap.Noisy.dist(pm.Multinomial.dist(pm.Poisson.dist(4), MULTI_P), alpha=0.5)

    pairs = na.privatize(
        np.random.default_rng(0).normal(size=(60, 3)),
        statistic="median_pairs",
        epsilon=1.0,
        rng=np.random.default_rng(1),
    )
    vec = na.privatize(np.array([0.5, 2.0]), statistic="vector", epsilon=1.0, sensitivity=1.0)
    for rel in (pairs, vec):
        with pytest.raises(ValueError, match="statistic must be 'counts'"):
            nan.Noisy(dist.Poisson(2.0), noise=rel)
        with pytest.raises(ValueError, match="statistic must be 'counts'"):
            nan.Noisy.from_release("y", rel, dist.Poisson(2.0))
        with pytest.raises(ValueError, match="statistic must be 'counts'"), pm.Model():
            nap.Noisy.from_release("y", rel, pm.Poisson.dist(2.0))
    with pytest.raises(TypeError, match=r"release must be a noiseaware\.Release"):
        _noisy.release_noise({"statistic": "counts"})


def test_a_counts_release_with_another_mechanism_is_refused(counts_release):
    """The schema forbids it today; the guard stays for records the schema may admit later."""
    from noiseaware.mechanisms import LaplaceMechanism

    fake = object.__new__(type(counts_release))
    for f in ("statistic", "values", "labels", "composition", "guarantee", "secure", "n", "metadata"):
        object.__setattr__(fake, f, getattr(counts_release, f))
    object.__setattr__(fake, "mechanism", LaplaceMechanism.from_epsilon(1.0))
    with pytest.raises(ValueError, match=r"mechanism family must be one of .* got family='laplace'"):
        _noisy.noise_spec(fake)


# --------------------------------------------------------------------------- docs
DOC = Path(__file__).resolve().parents[2] / "docs" / "noisy.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def _run_snippet(index):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(SNIPPETS[index], f"{DOC.name}[snippet {index}]", "exec"), {"__name__": "__doc_snippet__"})
    return out.getvalue()


def test_doc_numpyro_example_runs():
    assert len(SNIPPETS) == 2
    assert "posterior mean of beta" in _run_snippet(0)


@pytest.mark.slow  # PyTensor compiles NUTS (as above)
def test_doc_pymc_example_runs():
    assert "posterior mean of beta" in _run_snippet(1)


# --------------------------------------------------------------------------- negligible noise, observed data
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 800.0}, r"epsilon / sensitivity must be <= 708\.396 .*got epsilon=800\.0"),
        ({"epsilon": 1e308}, r"epsilon / sensitivity must be <= 708\.396 .*got epsilon=1e\+308"),
        ({"noise": {"family": "geometric", "epsilon": 10.0, "sensitivity": 1e-2}}, r"epsilon / sensitivity = 1000\.0"),
        ({"alpha": 1e-310}, r"alpha must be >= 2\.2250738585072014e-308 .*got alpha=1e-310"),
        ({"sigma": 1e-300}, r"sigma must be >= 1e-150 .*got sigma=1e-300"),
    ],
)
def test_negligible_noise_is_refused_clearly_in_both_front_ends(kwargs, match):
    """exp(-800) underflows to 0 ("math domain error") and sigma**2 to 0 (ZeroDivisionError) otherwise."""
    import numpyro.distributions as dist
    import pymc as pm

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    with pytest.raises(na.exceptions.NoiseawareValueError, match=match) as a:
        nan.Noisy(dist.Poisson(2.0), **kwargs)
    with pytest.raises(na.exceptions.NoiseawareValueError, match=match) as b:
        nap.Noisy.dist(pm.Poisson.dist(2.0), **kwargs)
    assert str(a.value) == str(b.value) and "base distribution itself" in str(a.value)


@pytest.mark.parametrize(
    "kwargs", [{"alpha": _noisy.MIN_ALPHA}, {"epsilon": 708.0}, {"sigma": _noisy.MIN_SIGMA}, {"sigma": 0.01}]
)
def test_smallest_accepted_noise_is_the_base_law_in_both_front_ends(kwargs):
    """At the limits the noise is 0 in float64: log P(Y = y) = log P(X = y) exactly inside the support."""
    import numpyro.distributions as dist
    import pymc as pm

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    y = np.arange(0, 8)
    got_np = np.asarray(nan.Noisy(dist.Poisson(2.0), **kwargs).log_prob(y))
    got_pm = pm.logp(nap.Noisy.dist(pm.Poisson.dist(2.0), **kwargs), y).eval()
    # each against its own base (either PPL's Poisson may round 2.0 through float32), and SciPy loosely
    np.testing.assert_allclose(got_np, np.asarray(dist.Poisson(2.0).log_prob(y)), rtol=1e-12)
    np.testing.assert_allclose(got_pm, pm.logp(pm.Poisson.dist(2.0), y).eval(), rtol=1e-12)
    np.testing.assert_allclose(got_pm, stats.poisson.logpmf(y, 2.0), rtol=1e-6)


def test_non_integer_observed_counts_both_front_ends_agree():
    """PyMC used to truncate an observed 3.5 to 3; NumPyro gives it -inf. Neither may treat it as 3."""
    import numpyro.distributions as dist
    import pymc as pm

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    d = nan.Noisy(dist.Poisson(2.0), alpha=0.5, validate_args=False)
    assert np.isneginf(float(d.log_prob(3.5))) and np.isneginf(float(d.log_prob(np.inf)))
    with pytest.warns(UserWarning, match="Out-of-support"):  # NumPyro's idiom with validate_args=True
        nan.Noisy(dist.Poisson(2.0), alpha=0.5, validate_args=True).log_prob(3.5)
    for bad in (3.5, np.array([3.0, 3.5]), np.array([np.inf, 1.0])):
        with pm.Model(), pytest.raises(na.exceptions.NoiseawareValueError, match="observed must hold integer counts"):
            nap.Noisy("y", pm.Poisson.dist(2.0), alpha=0.5, observed=bad)
    with pm.Model(), pytest.raises(na.exceptions.NoiseawareValueError, match=r"such as \[2\.5\]"):
        nap.Noisy("y", pm.Poisson.dist(2.0), alpha=0.5, observed=pm.Data("d", np.array([1.0, 2.5])))
    # integer-valued floats, and NaN (a missing value, imputed by PyMC), are accepted and agree
    obs = np.array([3.0, 0.0, -2.0])
    with pm.Model() as model:
        nap.Noisy("y", pm.Poisson.dist(2.0), alpha=0.5, observed=obs)
    np.testing.assert_allclose(float(model.compile_logp()({})), float(d.log_prob(obs).sum()), rtol=1e-6)
    with pm.Model() as model, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # PyMC casts the NaN of a missing value to int64
        warnings.simplefilter("ignore", pm.exceptions.ImputationWarning)
        nap.Noisy("y", pm.Poisson.dist(2.0), alpha=0.5, observed=np.array([3.0, np.nan]))
    assert "y_unobserved" in model.named_vars
