"""noiseaware.dirichlet: Minka MLE, DPBoots (non-stalling truncated draw), DPABC, the NUTS fit, bad input, SBC."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from scipy import optimize, special, stats

import noiseaware as na
from noiseaware import dirichlet as nd
from noiseaware import results
from noiseaware._engine import group
from noiseaware.exceptions import NoiseawareValueError

ALPHA3 = np.array([2.2, 3.3, 4.4])


def _release(alpha=ALPHA3, n=5000, epsilon=4.0, seed=0, **kw):
    x = np.random.default_rng(seed).dirichlet(alpha, size=n)
    return na.privatize(x, statistic="dirichlet_logmean", epsilon=epsilon, rng=np.random.default_rng(seed + 1), **kw)


# --------------------------------------------------------------------------- MLE
@pytest.mark.parametrize(
    "alpha", [[0.05, 0.3], [0.5, 0.5, 0.5], [2.2, 3.3, 4.4], [2.0, 20.0, 2.0], [300.0, 500.0, 40.0]]
)
@pytest.mark.parametrize("method", ["newton", "fixed-point"])
def test_mle_matches_scipy_optimize(alpha, method):
    x = np.random.default_rng(1).dirichlet(alpha, size=3000)
    x = np.clip(x, 1e-300, None)
    x = x / x.sum(1, keepdims=True)
    s = np.log(x).mean(0)
    res = nd.dirichlet_mle_from_stats(s, len(x), method=method, max_iter=200_000)
    assert res.converged
    # independent reference: maximize scipy.stats.dirichlet's log-likelihood over log alpha
    ref = optimize.minimize(
        lambda la: -nd.dirichlet_loglik(np.exp(la), s, len(x)) / len(x),
        np.log(res.alpha) + 0.3,
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20_000},
    )
    np.testing.assert_allclose(res.alpha, np.exp(ref.x), rtol=2e-5)
    # the fixed point is a stationary point: the gradient vanishes
    grad = special.digamma(res.alpha.sum()) - special.digamma(res.alpha) + s
    assert np.max(np.abs(grad)) < 1e-8
    # and beats any nearby point on scipy's own log-likelihood
    assert stats.dirichlet(res.alpha).logpdf(x.T).sum() >= stats.dirichlet(res.alpha * 1.01).logpdf(x.T).sum()


def test_mle_from_records_equals_mle_from_stats_and_batches():
    x = np.random.default_rng(2).dirichlet(ALPHA3, size=500)
    a = nd.dirichlet_mle(x).alpha
    b = nd.dirichlet_mle_from_stats(np.log(x).mean(0)).alpha
    np.testing.assert_allclose(a, b, rtol=1e-12)
    s = np.stack([np.log(x[:250]).mean(0), np.log(x[250:]).mean(0)])
    batch = nd.dirichlet_mle_from_stats(s).alpha
    np.testing.assert_allclose(batch[1], nd.dirichlet_mle_from_stats(s[1]).alpha, rtol=1e-9)


@pytest.mark.parametrize(
    ("x", "match"),
    [
        (np.array([[0.5, 0.5], [0.0, 1.0]]), "positive parts"),
        (np.array([[0.5, 0.6], [0.2, 0.8]]), "sum to 1"),
        (np.array([[1.0], [1.0]]), "d >= 2"),
        (np.array([[0.5, 0.5]]), "n >= 2"),
        (np.array([[0.5, 0.5], [np.nan, 0.5]]), "x"),
    ],
)
def test_mle_bad_input(x, match):
    with pytest.raises(ValueError, match=match):
        nd.dirichlet_mle(x)


def test_mle_outside_range_has_no_mle():
    with pytest.raises(NoiseawareValueError, match="Range"):
        nd.dirichlet_mle_from_stats(np.array([-0.1, -0.2]))


# --------------------------------------------------------------------------- truncated Laplace draw
def _rejection(s_l, m, size, rng):
    out, tried = [], 0
    while sum(len(o) for o in out) < size:
        s = s_l - rng.laplace(0, m, size=(100_000, len(s_l)))
        out.append(s[special.logsumexp(s, axis=1) <= 0])
        tried += 100_000
    return np.concatenate(out)[:size], size / tried


def _ks_all(a, b):
    cols = [stats.ks_2samp(a[:, j], b[:, j]).pvalue for j in range(a.shape[1])]
    cols.append(stats.ks_2samp(special.logsumexp(a, axis=1), special.logsumexp(b, axis=1)).pvalue)
    return min(cols), len(cols)


@pytest.mark.parametrize("s_l", [np.log([0.36, 0.33, 0.33]), np.log([0.5, 0.3, 0.3])])
def test_truncated_draw_matches_rejection_where_rejection_is_cheap(s_l):
    # exact reference: the paper's rejection sampler; 4 KS tests, Bonferroni at 1e-4
    m, size = 0.03, 6000
    ref, acc = _rejection(s_l, m, size, np.random.default_rng(0))
    assert acc < 0.5  # the truncation binds
    ours = nd.truncated_laplace_range(s_l, m, size, sweeps=30, rng=1)
    pmin, k = _ks_all(ref, ours)
    assert pmin > 1e-4 / k
    # a wrong implementation -- the untruncated noise clipped onto the range by the L1 projection -- is rejected
    wrong = nd.l1_projection(s_l - np.random.default_rng(2).laplace(0, m, size=(size, 3)))
    assert _ks_all(ref, wrong)[0] < 1e-4 / k


def test_truncated_draw_far_outside_range_does_not_stall():
    # S_L 1000 Laplace scales outside Range(S_0): rejection would accept with probability < exp(-1000)
    s_l, m = np.array([0.2, 0.1, 0.3]), 1e-3
    gap = special.logsumexp(s_l)  # > 0: outside; every draw needs sum(eps) >= gap, P <= P(Gamma(3, m) >= gap)
    assert stats.gamma(3, scale=m).logsf(gap) < -190
    t0 = time.perf_counter()
    draws = nd.truncated_laplace_range(s_l, m, 1000, sweeps=100, rng=3)
    elapsed = time.perf_counter() - t0
    assert elapsed < 30.0  # ~1 s unloaded; the rejection sampler of Supplement S5 ran for days
    assert np.all(special.logsumexp(draws, axis=1) <= 0)
    assert np.all(draws < 0)
    # mixing: 100 sweeps give the same law as 1000 sweeps (4 KS tests, Bonferroni at 1e-4)
    long = nd.truncated_laplace_range(s_l, m, 1000, sweeps=1000, rng=4)
    pmin, k = _ks_all(draws, long)
    assert pmin > 1e-4 / k
    # the draws hug the boundary within a few scales, centred on the L1 projection
    assert np.all(special.logsumexp(draws, axis=1) > -30 * m)
    np.testing.assert_allclose(draws.mean(0), nd.l1_projection(s_l), atol=0.01)


# --------------------------------------------------------------------------- DPBoots
def test_dpboots_from_release_recovers_alpha():
    rel = _release()
    res = nd.dpboots(rel, B=300, rng=5)
    assert res.alpha.shape == (300, 3) and res.n_failed == 0
    assert np.all(special.logsumexp(res.s0_draws, axis=1) <= 0)
    lo, hi = res.interval(0.999)
    assert np.all((lo < ALPHA3) & (ALPHA3 < hi)), (lo, hi)
    assert np.all(np.abs(np.median(res.alpha, 0) / ALPHA3 - 1) < 0.1)
    np.testing.assert_allclose(res.composition.mean(0), ALPHA3 / ALPHA3.sum(), atol=0.01)
    assert res.part.n == 5000 and res.part.a == rel.metadata["a"]


def test_dpboots_large_threshold_release_completes():
    # seed 004 Supplement S5: a fixed a = 0.1 with alpha_4 = (2, 20, 2) stalled the rejection sampler
    rel = _release(alpha=np.array([2.0, 20.0, 2.0]), n=5000, epsilon=1.5, threshold=0.1, seed=3)
    p = nd.parts(rel)[0]
    gap = special.logsumexp(p.s_l)
    assert gap > 20 * p.scale  # S_L lies many Laplace scales outside Range(S_0)
    t0 = time.perf_counter()
    res = nd.dpboots(rel, B=200, sweeps=50, rng=6)
    assert time.perf_counter() - t0 < 60.0
    assert np.all(special.logsumexp(res.s0_draws, axis=1) <= 0)
    assert np.all(np.isfinite(res.alpha_star))


# --------------------------------------------------------------------------- DPABC
def test_dpabc_p4_recovers_alpha_and_p1_the_mean_composition():
    rel = _release(split=0.25)
    res = nd.dpabc(rel, "p4", n_sims=3000, prior_draws=400, rng=7)
    assert res.alpha.shape == (300, 3)
    assert np.all(np.abs(res.posterior_mean / ALPHA3 - 1) < 0.1), res.posterior_mean
    assert res.part.n == rel.metadata["n_parts"][1]
    res1 = nd.dpabc(rel, "p1", n_sims=3000, rng=8)
    np.testing.assert_allclose(res1.composition.mean(0), ALPHA3 / ALPHA3.sum(), atol=0.03)
    assert res1.delta >= res1.distances.max() - 1e-15


# --------------------------------------------------------------------------- NUTS fit
@pytest.mark.slow  # long; moved out of the fast suite to keep it under 10 minutes
def test_fit_numpyro_p1_censored_recovers_alpha():
    rel = _release(threshold=0.05, epsilon=1.0)  # a large fixed threshold: the censored moments matter
    res = nd.fit(rel, prior="p1", moments="censored", chains=1, draws=250, warmup=250, seed=1, check_mixing=False)
    post = results.draws(res, "alpha")
    assert post.shape == (250, 3)
    z = (post.mean(0) - ALPHA3) / post.std(0)
    assert np.all(np.abs(z) < 4.0), (post.mean(0), post.std(0))
    lo, hi = results.interval(res, 0.99, var="composition")
    truth = ALPHA3 / ALPHA3.sum()
    assert np.all((lo < truth) & (truth < hi))
    np.testing.assert_allclose(results.draws(res, "composition"), post / post.sum(1, keepdims=True))
    assert set(group(res, "posterior").data_vars) >= {"alpha", "composition", "s0_s0"}
    assert res.attrs["noiseaware_moments"] == "censored" and res.attrs["noiseaware_backend"] == "numpyro"


@pytest.mark.slow
def test_fit_p3_uses_d2_with_an_elicited_prior():
    rel = _release(split=0.25, seed=4)
    res = nd.fit(
        rel, prior="p3", moments="asymptotic", chains=1, draws=200, warmup=200, seed=2, prior_draws=300,
        check_mixing=False,
    )
    parts = nd.observed_parts(res)
    assert nd.prior(res).corr is None and len(parts) == 1
    np.testing.assert_array_equal(parts[0].s_l, nd.parts(rel)[1].s_l)
    assert parts[0].n == rel.metadata["n_parts"][1] and json.loads(res.attrs["noiseaware_prior"])["kind"] == "p3"
    assert np.all(np.abs(nd.posterior_mean(res) / ALPHA3 - 1) < 0.15)


# --------------------------------------------------------------------------- bad input
def test_routes_bad_input():
    rel = _release(n=400)
    with pytest.raises(TypeError, match="Release"):
        nd.dpboots({"values": [1, 2]})
    with pytest.raises(ValueError, match="B"):
        nd.dpboots(rel, B=0)
    with pytest.raises(ValueError, match="no split"):
        nd.dpabc(rel, "p4")
    with pytest.raises(ValueError, match="prior"):
        nd.dpabc(rel, "p2")
    with pytest.raises(ValueError, match="no split"):
        nd.fit(rel, prior="p3")
    with pytest.raises(ValueError, match="backend"):
        nd.fit(rel, backend="stan")
    with pytest.raises(ValueError, match="moments"):
        nd.fit(rel, moments="exact")
    with pytest.raises(ValueError, match="cores"):
        nd.fit(rel, cores=2)
    with pytest.raises(ValueError, match="part"):
        nd.dpboots(rel, part=1)
    counts = na.privatize(np.arange(20), statistic="counts", epsilon=1.0, sensitivity=2, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="dirichlet_logmean"):
        nd.parts(counts)


# --------------------------------------------------------------------------- SBC (slow)
@pytest.mark.slow
def test_sbc_nuts_route():
    """Simulation-based calibration of NUTS on the latent-S_0 model (Talts et al. 2018).

    alpha ~ Gamma(8, 2) iid (d = 2), S_L ~ LaplaceCensoredDirichletStat (the model NUTS targets,
    sampled exactly: S_0 from its Gaussian law, then Laplace noise), posterior by NUTS on the model of
    ``dirichlet.fit`` (``LaplaceCensoredDirichletStat.observe``, non-centred S_0). The 200 replicates
    run as independent NUTS chains, each with its own adaptation (dense mass, step size), vmapped in
    one compiled program with the data and the Laplace scale as arguments, so the program compiles
    once for both fits below. The ranks of alpha_1, alpha_2 and of the joint log-likelihood among
    99 thinned draws are uniform: chi-square on 10 bins, 3 statistics, Bonferroni at 1e-4. The same
    ranks under a fit with the Laplace scale halved in the likelihood are rejected.

    The asymptotic moments keep the test to about two minutes on 2 cores (the censored moments' 256-term series
    cost 40 times more per gradient; they are checked against quadrature elsewhere).
    """
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer.hmc import hmc
    from numpyro.infer.util import initialize_model

    import noiseaware.numpyro as nan

    n, a, b, reps, d, mom = 400, 0.01, 0.04, 200, 2, "asymptotic"
    warmup, draws, thin = 400, 792, 8

    def model(s_l, scale):
        alpha = numpyro.sample("alpha", dist.Gamma(8.0, 2.0).expand([d]).to_event(1))
        nan.LaplaceCensoredDirichletStat.observe("s", alpha, n, a, scale, s_l, moments=mom)

    def law(alpha, scale):
        return nan.LaplaceCensoredDirichletStat(alpha, n=n, a=a, scale=scale, moments=mom)

    def latent(alpha):
        lat = law(alpha, b).latent
        return lat.loc, lat.scale_tril

    def loglik(alpha, z, s_l, scale):  # log p(S_L, S_0 | alpha) at the non-centred S_0 = mu + L z
        loc, tril = latent(alpha)
        return law(alpha, scale).joint_log_prob(s_l, loc + tril @ z)

    # simulate: alpha from the prior, then S_0 and S_L exactly under the model
    rng = np.random.default_rng(0)
    alpha = rng.gamma(8.0, 0.5, size=(reps, d))
    z_true = rng.standard_normal((reps, d))
    loc, tril = jax.vmap(latent)(jnp.asarray(alpha))
    s_l = loc + jnp.einsum("rij,rj->ri", tril, jnp.asarray(z_true)) + b * jnp.asarray(rng.laplace(size=(reps, d)))

    key = jax.random.PRNGKey(0)
    _, potential_fn_gen, _, _ = initialize_model(key, model, model_args=(s_l[0], b), dynamic_args=True)
    init_kernel, sample_kernel = hmc(potential_fn_gen=potential_fn_gen, algo="NUTS")

    def chain(key, s_l, scale, init):
        state = init_kernel(init, warmup, dense_mass=True, model_args=(s_l, scale), rng_key=key)

        def step(state, _):
            state = sample_kernel(state, model_args=(s_l, scale))
            return state, state.z

        _, zs = jax.lax.scan(step, state, None, length=warmup + draws)
        return jax.tree_util.tree_map(lambda t: t[warmup:][::thin][:99], zs)

    run = jax.jit(jax.vmap(chain, in_axes=(0, 0, None, 0)))
    ll_v = jax.vmap(jax.vmap(loglik, in_axes=(0, 0, None, None)), in_axes=(0, 0, 0, None))

    def ranks(scale, seed):
        keys = jax.random.split(jax.random.PRNGKey(seed), reps)
        init = {  # numpyro's init_to_uniform: uniform(-2, 2) on the unconstrained scale
            "alpha": jnp.asarray(rng.uniform(-2, 2, size=(reps, d))),
            "s_s0_z": jnp.asarray(rng.uniform(-2, 2, size=(reps, d))),
        }
        zs = run(keys, s_l, scale, init)
        post_alpha, post_z = jnp.exp(zs["alpha"]), zs["s_s0_z"]  # (reps, 99, d)
        ll_post = np.asarray(ll_v(post_alpha, post_z, s_l, scale))
        ll_true = np.asarray(
            jax.vmap(loglik, in_axes=(0, 0, 0, None))(jnp.asarray(alpha), jnp.asarray(z_true), s_l, scale)
        )
        post_alpha = np.asarray(post_alpha)
        assert post_alpha.shape == (reps, 99, d)
        r = [np.sum(post_alpha[:, :, j] < alpha[:, None, j], axis=1) for j in range(d)]
        r.append(np.sum(ll_post < ll_true[:, None], axis=1))
        return np.stack(r, axis=1)

    def pmin(r):
        return min(stats.chisquare(np.bincount(r[:, j] // 10, minlength=10)).pvalue for j in range(r.shape[1]))

    assert pmin(ranks(b, 1)) > 1e-4 / 3
    assert pmin(ranks(b / 2, 2)) < 1e-4 / 3
