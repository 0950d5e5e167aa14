"""DPMCMC / DPreMCMC (seed 004 §4.2.2): exactness against a brute-force posterior, power, bad input.

Exactness: for d = 2 the records are scalars u_i ~ Beta(alpha_1, alpha_2) and the released
censored log-sums are S = sum_i (log max(u_i, a), log max(1 - u_i, a)) + Laplace noise. On a grid of
alpha the likelihood p(s_L | alpha) = E[prod_j Lap(s_L,j | S_j)] is an n-fold integral over the
records, computed by a product midpoint rule on the Beta quantile scale (K nodes per record;
K = 30 and K = 45 agree to 1e-3 on every compared moment). The posterior mean and sd of
alpha_1, alpha_2 and of the mean composition alpha_1 / (alpha_1 + alpha_2) under the sampler are
compared with the grid values in units of ArviZ's Monte Carlo standard error; with Z_MAX = 5 and
6 statistics a correct sampler fails with probability about 6 * 5.7e-7 < 1e-4 (MCSE estimates are
themselves noisy, so the threshold is generous). The same check rejects the posterior of a
mechanism whose Laplace scale is the mean's scale applied to the log-sum (a units slip).
"""

from __future__ import annotations

import math
from typing import Any

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
import pytest
from jax import random
from scipy import special, stats

import noiseaware as na
from noiseaware import dirichlet, results
from noiseaware._core._gamma import log_dirichlet
from noiseaware._engine import from_groups, group
from noiseaware._engine._sweep import record_sweep
from noiseaware.dirichlet import _dpmcmc_moves as moves
from noiseaware.dirichlet._dpmcmc import CUBEROOT_SAMPLER, _prepare, _run, dpmcmc, dpmcmc_batch
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError

Z_MAX = 5.0
N, A, EPS = 3, 0.05, 4.0
SHAPE, RATE = 3.0, 1.0  # user prior Gamma(3, 1) per component (keeps the grid bounded)
GRID = np.linspace(0.05, 14.0, 40)


def tiny_release(seed: int = 3) -> na.Release:
    x = np.random.default_rng(seed).dirichlet([2.0, 3.0], size=N)
    return na.privatize(x, statistic="dirichlet_logmean", epsilon=EPS, threshold=A, rng=np.random.default_rng(seed))


def grid_moments(s_sum: np.ndarray, n: int, a: float, scale: float, k: int = 30) -> dict[str, tuple[float, float]]:
    """Posterior mean and sd of alpha_1, alpha_2, composition_1 by brute force on GRID x GRID."""
    la = math.log(a)
    p = (np.arange(k) + 0.5) / k
    a1, a2 = np.meshgrid(GRID, GRID, indexing="ij")
    idx = np.stack(np.meshgrid(*[np.arange(k)] * n, indexing="ij"), -1).reshape(-1, n)
    loglik = np.empty(a1.shape)
    with np.errstate(divide="ignore"):
        for i in range(a1.shape[0]):
            for j in range(a1.shape[1]):
                u = special.betaincinv(a1[i, j], a2[i, j], p)
                s1 = np.maximum(np.log(u), la)[idx].sum(axis=1)
                s2 = np.maximum(np.log1p(-u), la)[idx].sum(axis=1)
                eta = np.exp(-(np.abs(s_sum[0] - s1) + np.abs(s_sum[1] - s2)) / scale)
                loglik[i, j] = np.log(eta.mean())
    logpost = loglik + stats.gamma.logpdf(a1, SHAPE, scale=1 / RATE) + stats.gamma.logpdf(a2, SHAPE, scale=1 / RATE)
    w = np.exp(logpost - logpost.max())
    w /= w.sum()
    out = {}
    for name, f in (("alpha_1", a1), ("alpha_2", a2), ("composition_1", a1 / (a1 + a2))):
        m = float((w * f).sum())
        out[name] = (m, math.sqrt(float((w * f * f).sum()) - m * m))
    return out


def sampler_moments(idata: Any) -> dict[str, tuple[float, float, float, float]]:
    """(mean, sd, mcse of the mean, mcse of the sd) of the same three quantities."""
    post = group(idata, "posterior")
    draws = {
        "alpha_1": post["alpha"][..., 0],
        "alpha_2": post["alpha"][..., 1],
        "composition_1": post["composition"][..., 0],
    }
    out = {}
    for name, x in draws.items():
        arr = np.asarray(x)
        sd = float(arr.std())
        mcse_var = float(np.ravel(az.mcse((arr - arr.mean()) ** 2, method="mean"))[0])
        out[name] = (float(arr.mean()), sd, float(np.ravel(az.mcse(arr, method="mean"))[0]), mcse_var / (2 * sd))
    return out


def max_z(ref: dict[str, tuple[float, float]], got: dict[str, tuple[float, float, float, float]]) -> float:
    z = []
    for name, (m, s) in ref.items():
        gm, gs, em, es = got[name]
        z += [abs(gm - m) / math.hypot(em, 1e-3), abs(gs - s) / math.hypot(es, 1e-3)]
    return max(z)


@pytest.fixture(scope="module")
def tiny() -> tuple[na.Release, Any]:  # 4 chains x 5,500 iterations of DPMCMC compiled: 13-18 s
    rel = tiny_release()
    prior = dist.Gamma(jnp.full(2, SHAPE), RATE)
    idata = dpmcmc(rel, prior=prior, draws=5000, warmup=500, chains=4, seed=11)
    return rel, idata


@pytest.mark.slow  # make test-full: the fixture's compiled sampler, 22,000 draws (13-18 s); test_arviz fits dpmcmc
def test_dpmcmc_matches_brute_force_posterior(tiny: tuple[na.Release, Any]) -> None:
    rel, idata = tiny
    s_sum = np.asarray(rel.values, dtype=np.float64)
    scale = float(rel.mechanism.scale)
    assert scale == pytest.approx(-2 * math.log(A) / EPS)  # log-sum units: -d log(a) / epsilon_1
    got = sampler_moments(idata)
    ref = grid_moments(s_sum, N, A, scale)
    assert max_z(ref, got) < Z_MAX, (ref, got)
    # power: a sampler using the mean's scale -d log(a) / (n epsilon_1) on the log-sum targets this
    wrong = grid_moments(s_sum, N, A, scale / N)
    assert max_z(wrong, got) > 3 * Z_MAX, (wrong, got)
    # the output's layout
    post = group(idata, "posterior")
    assert post["alpha"].dims == ("chain", "draw", "component")
    assert list(post["component"].values) == ["x0", "x1"]
    np.testing.assert_allclose(post["composition"].sum("component"), 1.0)
    acc = group(idata, "sample_stats")["accept_rate"]
    assert acc.shape == (4, 5000) and 0.05 < float(acc.mean()) < 1.0
    assert idata.attrs["method"] == "DPMCMC" and idata.attrs["latent_records"] == N
    assert idata.attrs["a"] == A and idata.attrs["prior"].startswith("user")
    assert results.fit_kind(idata) == "dirichlet.dpmcmc" and idata.attrs["noiseaware_default_var"] == "alpha"
    np.testing.assert_allclose(dirichlet.posterior_mean(idata), results.draws(idata).mean(axis=0))
    assert results.release(idata) == rel and dirichlet.observed_parts(idata)[0].n == N
    with pytest.raises(NoiseawareValueError, match="must record its prior"):
        dirichlet.prior(idata)  # a user's NumPyro prior is described, not recorded


@pytest.mark.slow  # 80 s under load
def test_dpremcmc_replicated_records_carry_n_records_of_information() -> None:
    """DPreMCMC with b = n / r records: near DPMCMC when the noise is small, and as precise.

    With epsilon = 5 and n = 120 the release nearly fixes S_0, so both routes concentrate around
    the same composition; the replicated likelihood must make the b = 12 records as informative as
    120 (posterior sd within a factor 1.6 of DPMCMC's), whereas 12 unreplicated records would be
    sqrt(10) = 3.2 times less precise.
    """
    x = np.random.default_rng(5).dirichlet([4.0, 6.0, 8.0], size=120)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=5.0, threshold=1e-3, rng=np.random.default_rng(6))
    exact = dpmcmc(rel, draws=800, warmup=200, chains=2, seed=1, check_mixing=False)
    rep = dpmcmc(rel, draws=800, warmup=200, chains=2, seed=2, replicates=10, check_mixing=False)
    assert rep.attrs["method"] == "DPreMCMC" and rep.attrs["latent_records"] == 12 and rep.attrs["weight"] == 10.0
    ce, cr = group(exact, "posterior")["composition"], group(rep, "posterior")["composition"]
    sd_e = ce.std(("chain", "draw")).values
    sd_r = cr.std(("chain", "draw")).values
    assert np.all(np.abs(ce.mean(("chain", "draw")).values - cr.mean(("chain", "draw")).values) < 3 * sd_e)
    assert np.all((sd_r / sd_e > 1 / 1.6) & (sd_r / sd_e < 1.6)), (sd_e, sd_r)
    truth = np.array([4.0, 6.0, 8.0]) / 18.0
    assert np.all(np.abs(cr.mean(("chain", "draw")).values - truth) < 5 * sd_r + 0.01)


def test_bad_input() -> None:
    rel = tiny_release()
    with pytest.raises(NoiseawareTypeError, match=r"release must be a noiseaware\.Release"):
        dpmcmc(np.zeros(2))
    other = na.privatize(np.ones((10, 2)), statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(0))
    with pytest.raises(NoiseawareValueError, match="statistic must be 'dirichlet_logmean'"):
        dpmcmc(other)
    with pytest.raises(NoiseawareValueError, match="replicates must be"):
        dpmcmc(rel, replicates=0)
    with pytest.raises(NoiseawareValueError, match="replicates must be at most the number of records n=3"):
        dpmcmc(rel, replicates=4)
    with pytest.raises(NoiseawareValueError, match="draws must be"):
        dpmcmc(rel, draws=0)
    with pytest.raises(NoiseawareTypeError, match="prior must be None"):
        dpmcmc(rel, prior="gamma")
    with pytest.raises(NoiseawareValueError, match=r"prior must be a NumPyro distribution over alpha of shape \(2,\)"):
        dpmcmc(rel, prior=dist.Gamma(jnp.ones(3), 1.0))
    with pytest.raises(NoiseawareValueError, match="prior must have a finite log-density"):
        dpmcmc(rel, prior=lambda alpha: jnp.where(jnp.sum(alpha) > 100.0, 0.0, -jnp.inf))
    with pytest.raises(NoiseawareValueError, match="init\\['alpha'\\] must have shape"):
        dpmcmc(rel, init={"alpha": [1.0, -1.0]}, chains=1)
    with pytest.raises(NoiseawareValueError, match="init must name exactly"):
        dpmcmc(rel, init={"beta": [1.0, 1.0]}, chains=1)
    with pytest.raises(NoiseawareValueError, match="part must be an index"):
        dpmcmc(rel, part=1)
    with pytest.raises(NoiseawareTypeError, match="progressbar must be True or False"):
        dpmcmc(rel, progressbar="yes")


@pytest.mark.slow  # long; moved out of the fast suite to keep it under 10 minutes
def test_batch_matches_each_brute_force_posterior_and_compiles_once() -> None:
    """dpmcmc_batch: each release's draws follow its own posterior; one compiled program serves both calls."""
    from noiseaware.dirichlet._dpmcmc import _PROGRAMS

    rels = [tiny_release(3), tiny_release(8)]
    prior = dist.Gamma(jnp.full(2, SHAPE), RATE)
    fits = dpmcmc_batch(rels, prior=prior, draws=4000, warmup=500, chains=4, seed=5, check_mixing=False)
    refs = [grid_moments(np.asarray(r.values, dtype=np.float64), N, A, float(r.mechanism.scale)) for r in rels]
    for rel, idata, ref in zip(rels, fits, refs, strict=True):
        assert idata.attrs["a"] == A and group(idata, "posterior")["alpha"].shape == (4, 4000, 2)
        assert results.release(idata) == rel
        assert max_z(ref, sampler_moments(idata)) < Z_MAX, (ref, sampler_moments(idata))
    hits = _PROGRAMS.info["hits"]
    again = dpmcmc_batch(rels[::-1], prior=prior, draws=200, warmup=100, chains=4, seed=6, check_mixing=False)
    assert _PROGRAMS.info["hits"] == hits + 1  # same shape and prior: no new program
    # the data are inputs, not constants: the reversed order gives the reversed posteriors
    assert type(again) is list and all(results.fit_kind(f) == "dirichlet.dpmcmc" for f in again)
    m = [float(results.draws(f, "composition")[:, 0].mean()) for f in fits]
    m2 = [float(results.draws(f, "composition")[:, 0].mean()) for f in again]
    if abs(m[0] - m[1]) > 0.05:
        assert abs(m2[0] - m[1]) < abs(m2[0] - m[0]), (m, m2)


def test_batch_bad_input() -> None:
    rel = tiny_release()
    other = na.privatize(np.random.default_rng(0).dirichlet([2.0, 3.0], size=5), statistic="dirichlet_logmean",
                         epsilon=1.0, threshold=A, rng=np.random.default_rng(0))
    with pytest.raises(NoiseawareValueError, match="releases must share d and the number of latent records"):
        dpmcmc_batch([rel, other], draws=10, warmup=10)
    with pytest.raises(NoiseawareValueError, match="releases must hold at least one release"):
        dpmcmc_batch([])
    with pytest.raises(NoiseawareTypeError, match="releases must be a list of releases"):
        dpmcmc_batch(rel)
    with pytest.raises(NoiseawareValueError, match="draws must be"):
        dpmcmc_batch([rel], draws=0)


# ----------------------------------------------------------------------------- the joint move
def _joint_only(rel: na.Release, prior: object, *, ignore_noise: bool = False, **kw: object) -> Any:
    """Record sweeps plus the joint move, no draw of alpha | records: the move alone moves alpha."""
    prep = _prepare(rel, prior, 4, 11, 1, part=None, init=None, joint_move=True)
    factory = moves._joint_move_cuberoot
    if ignore_noise:  # a wrong move: its ratio leaves out the noise density of the moved records

        def factory(log_prior, b, d, steps):  # type: ignore[no-untyped-def]
            right = moves._joint_move_cuberoot(log_prior, b, d, steps)
            return lambda key, alpha, logx, log_noise, h, chol: right(key, alpha, logx, lambda r: 0.0, h, chol)

    raw = _run([prep], prior, int(kw["draws"]), int(kw["warmup"]), 12, False,  # type: ignore[call-overload]
               alpha_given_records=False, move_factory=factory, sampler=CUBEROOT_SAMPLER)
    alpha = raw["alpha"][0]
    return from_groups({"posterior": {"alpha": alpha, "composition": alpha / alpha.sum(-1, keepdims=True)},
                        "sample_stats": {k: raw[k][0] for k in ("joint_accept_prob", "joint_step_size")}})


@pytest.mark.slow  # long; moved out of the fast suite to keep it under 10 minutes
def test_joint_move_alone_leaves_the_posterior_invariant() -> None:
    """Only the joint move updates alpha (between record sweeps): still the brute-force posterior.

    And the same check rejects a move whose acceptance ratio forgets the noise density.
    """
    rel = tiny_release()
    prior = dist.Gamma(jnp.full(2, SHAPE), RATE)
    idata = _joint_only(rel, prior, draws=4000, warmup=400)
    s_sum = np.asarray(rel.values, dtype=np.float64)
    ref = grid_moments(s_sum, N, A, float(rel.mechanism.scale))
    got = sampler_moments(idata)
    assert max_z(ref, got) < Z_MAX, (ref, got)
    stats = group(idata, "sample_stats")
    assert 0.1 < float(stats["joint_accept_prob"].mean()) < 0.6  # adapted towards 0.3
    assert np.all(np.asarray(stats["joint_step_size"])[:, -1] > 0)
    bad = sampler_moments(_joint_only(rel, prior, ignore_noise=True, draws=1500, warmup=300))
    print(f"max z: {max_z(ref, got):.2f} with the joint move, {max_z(ref, bad):.1f} with a move that ignores the noise")
    assert max_z(ref, bad) > 2 * Z_MAX, (ref, bad)


@pytest.mark.slow  # 110 s under load; exactness of the move stays in the fast suite
def test_joint_move_improves_mixing_of_alpha() -> None:
    """n = 300, d = 3, epsilon = 1: ESS of alpha per iteration with the move vs plain augmentation.

    Measured (2 chains x 400 draws, 200 warmup): min bulk ESS of alpha about 4 without the move,
    about 170 with it (JOINT_STEPS = 10 Metropolis-Hastings steps per iteration). The test asks
    for a factor of 5 and at least 50.
    """
    x = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=300)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, threshold=1e-3, rng=np.random.default_rng(1))
    kw = dict(draws=400, warmup=200, chains=2, seed=3, check_mixing=False)
    plain = dpmcmc(rel, joint_move=False, **kw)  # type: ignore[arg-type]
    joint = dpmcmc(rel, **kw)  # type: ignore[arg-type]
    ess_plain = float(az.ess(group(plain, "posterior")[["alpha"]], method="bulk")["alpha"].min())
    ess_joint = float(az.ess(group(joint, "posterior")[["alpha"]], method="bulk")["alpha"].min())
    print(f"min bulk ESS of alpha: {ess_plain:.1f} without the joint move, {ess_joint:.1f} with it")
    assert ess_joint > 5 * ess_plain and ess_joint > 50, (ess_plain, ess_joint)
    joint_stats, plain_stats = group(joint, "sample_stats"), group(plain, "sample_stats")
    assert "joint_accept_prob" in joint_stats and "joint_accept_prob" not in plain_stats
    assert 0.1 < float(joint_stats["alpha_accept_prob"].mean()) < 0.6


def test_joint_move_input() -> None:
    rel = tiny_release()
    with pytest.raises(NoiseawareValueError, match="joint_move needs the exact DPMCMC target"):
        dpmcmc(rel, replicates=3, joint_move=True)
    with pytest.raises(NoiseawareTypeError, match="joint_move must be True, False or None"):
        dpmcmc(rel, joint_move="yes")


# ----------------------------------------------------------------------------- issue 15 item 3: the new kernels
def _with_sampler(rel: na.Release, prior: object, sampler: object, *, seed: int, draws: int, warmup: int,
                  alpha_given_records: bool = True, move_factory: object = None,
                  joint: bool = True) -> Any:
    from noiseaware.dirichlet._dpmcmc import _Sampler

    assert isinstance(sampler, _Sampler)
    prep = _prepare(rel, prior, 4, seed, 1, part=None, init=None, joint_move=joint)
    raw = _run([prep], prior, draws, warmup, seed + 1, False, alpha_given_records=alpha_given_records,
               move_factory=move_factory, sampler=sampler, fallback=None)  # type: ignore[arg-type]
    alpha = raw["alpha"][0]
    stats = {k: raw[k][0] for k in ("accept_rate", "joint_accept_prob", "joint_step_size")}
    return from_groups({"posterior": {"alpha": alpha, "composition": alpha / alpha.sum(-1, keepdims=True)},
                        "sample_stats": stats})


@pytest.mark.slow  # 80 s under load (two compiled programs); the new joint move is in the fast exactness test
def test_window_sweep_matches_brute_force_and_a_wrong_window_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record sweep on one record of three per iteration (a random window): still the grid posterior.

    The default sampler updates a window of the records per iteration (``SWEEP_FRACTION`` of them,
    at least ``SWEEP_MIN``); on the tiny case the window is forced down to one record, and the joint
    move is off so that only the window sweep moves the records. A window sweep
    that forgets the fixed records' part of the log-sum (compares s_dp with the window's part alone)
    is rejected by the same check.
    """
    import noiseaware.dirichlet._dpmcmc as m

    rel = tiny_release()
    prior = dist.Gamma(jnp.full(2, SHAPE), RATE)
    sampler = m._Sampler("cuberoot", 0.34, 1, 10, 5)
    assert sampler.sweep_records(N) == 1 and m.DEFAULT_SAMPLER.sweep_records(N) == N
    assert m.DEFAULT_SAMPLER.sweep_records(5000) == 500 and m.DEFAULT_SAMPLER.sweep_records(1500) == 300
    assert m.DEFAULT_SAMPLER.sweep_records(300) == 300
    ref = grid_moments(np.asarray(rel.values, dtype=np.float64), N, A, float(rel.mechanism.scale))
    got = _with_sampler(rel, prior, sampler, seed=21, draws=4000, warmup=400, joint=False)
    assert float(group(got, "sample_stats")["accept_rate"].mean()) > 0.05
    z_ok = max_z(ref, sampler_moments(got))
    def wrong(key, logx, alpha, s_dp, k, statistic, laplace):  # type: ignore[no-untyped-def]
        b = logx.shape[0]  # as m._window_sweep, but the other records' part of the log-sum is forgotten
        k_off, k_sweep = random.split(key)
        idx = (random.randint(k_off, (), 0, b) + jnp.arange(k)) % b
        new_sub, acc = record_sweep(k_sweep, logx[idx], alpha, s_dp, latent=lambda kk, a: log_dirichlet(kk, a, (k,)),
                                    statistic=statistic, log_density=laplace, per_record=False)
        return logx.at[idx].set(new_sub), acc

    monkeypatch.setattr(m, "_window_sweep", wrong)
    bad = _with_sampler(rel, prior, sampler, seed=21, draws=1500, warmup=300, joint=False,
                        move_factory=m._joint_move_cuberoot)  # a factory: a fresh program, not the cache
    z_bad = max_z(ref, sampler_moments(bad))
    print(f"max z: {z_ok:.2f} with the window sweep, {z_bad:.1f} with a window sweep that ignores the other records")
    assert z_ok < Z_MAX, (ref, sampler_moments(got))
    assert z_bad > 2 * Z_MAX, (ref, sampler_moments(bad))


@pytest.mark.slow  # ~30 s
def test_cuberoot_joint_move_alone_is_exact_and_a_missing_jacobian_is_caught() -> None:
    """Only the Wilson-Hilferty joint move updates alpha (between full record sweeps): the grid posterior.

    The same move with the Jacobian of the map left out of the ratio is rejected.
    """
    import noiseaware.dirichlet._dpmcmc as m

    rel = tiny_release()
    prior = dist.Gamma(jnp.full(2, SHAPE), RATE)
    sampler = m._Sampler("cuberoot", 1.0, 0, 10, 5)
    ref = grid_moments(np.asarray(rel.values, dtype=np.float64), N, A, float(rel.mechanism.scale))
    got = _with_sampler(rel, prior, sampler, seed=31, draws=4000, warmup=400, alpha_given_records=False)
    z_ok = max_z(ref, sampler_moments(got))
    assert 0.1 < float(group(got, "sample_stats")["joint_accept_prob"].mean()) < 0.6

    def no_jacobian(log_prior, b, d, steps):  # type: ignore[no-untyped-def]
        return m._joint_move_cuberoot(log_prior, b, d, steps, jacobian=False)

    bad = _with_sampler(rel, prior, sampler, seed=31, draws=2000, warmup=400, alpha_given_records=False,
                        move_factory=no_jacobian)
    z_bad = max_z(ref, sampler_moments(bad))
    print(f"max z: {z_ok:.2f} with the cube-root joint move, {z_bad:.1f} without its Jacobian")
    assert z_ok < Z_MAX, (ref, sampler_moments(got))
    assert z_bad > 2 * Z_MAX, (ref, sampler_moments(bad))


@pytest.mark.slow  # a long exactness study of one kernel (make test-slow)
def test_surrogate_joint_move_alone_is_exact_and_a_missing_jacobian_is_caught() -> None:
    """Only the surrogate-transition joint move updates alpha (between full record sweeps): the grid posterior.

    The same move with the Jacobian of the map left out of its exact density is rejected. (A move
    that skips the correction, i.e. samples the O(d) surrogate, is not distinguishable here: with
    n = 3 records and this much noise the surrogate is nearly exact, max z about 5.)
    """
    import noiseaware.dirichlet._dpmcmc as m

    rel = tiny_release()
    prior = dist.Gamma(jnp.full(2, SHAPE), RATE)
    sampler = m._Sampler("surrogate", 1.0, 0, 1, 5, 40)
    ref = grid_moments(np.asarray(rel.values, dtype=np.float64), N, A, float(rel.mechanism.scale))
    got = _with_sampler(rel, prior, sampler, seed=41, draws=4000, warmup=400, alpha_given_records=False)
    z_ok = max_z(ref, sampler_moments(got))
    assert 0.2 < float(group(got, "sample_stats")["joint_accept_prob"].mean()) <= 1.0

    def no_jacobian(log_prior, b, d, rounds, surrogate_steps):  # type: ignore[no-untyped-def]
        return m._joint_move_surrogate(log_prior, b, d, rounds, surrogate_steps=surrogate_steps, jacobian=False)

    bad = _with_sampler(rel, prior, sampler, seed=41, draws=2000, warmup=400, alpha_given_records=False,
                        move_factory=no_jacobian)
    z_bad = max_z(ref, sampler_moments(bad))
    print(f"max z: {z_ok:.2f} with the surrogate joint move, {z_bad:.1f} without its Jacobian")
    assert z_ok < Z_MAX, (ref, sampler_moments(got))
    assert z_bad > 2 * Z_MAX, (ref, sampler_moments(bad))


def _surrogate_expansion_and_autodiff(jac_factor: float) -> dict[str, np.ndarray]:
    """The closed-form expansion and its automatic-differentiation references, in one compiled program.

    Compiled once (``jac_factor`` is an argument, not a constant), so both parametrisations of the
    test below share the program; evaluated op by op the same arithmetic took about 18 s.
    """
    return {k: np.asarray(v) for k, v in _surrogate_program(jnp.float64(jac_factor)).items()}


@jax.jit
def _surrogate_program(jac_factor):  # type: ignore[no-untyped-def]
    b, d = 400, 3
    alpha = jnp.array([0.6, 2.0, 5.0])
    lam = jnp.log(alpha) + 0.05
    p = moves._power(alpha)
    g = jnp.exp(log_dirichlet(random.key(3), alpha, (b,)) + 0.7)
    mean, sd = moves._power_moments(alpha, p)
    z = (g**p - mean) / sd
    zc = z - z.mean(axis=0)
    log_a, w = jnp.log(1e-2), 1.0

    def records(theta):  # type: ignore[no-untyped-def]
        mm, ss = moves._power_moments(jnp.exp(theta[:d]), p)
        u = mm + ss * (zc + theta[d:])
        y = jnp.log(u) / p
        return u, y, y - jax.nn.logsumexp(y, axis=-1, keepdims=True)

    def dens(theta):  # type: ignore[no-untyped-def]
        u, y, _ = records(theta)
        a = jnp.exp(theta[:d])
        jac = b * jnp.sum(jnp.log(moves._power_moments(a, p)[1])) - jnp.sum(jnp.log(u))
        return jnp.sum(a * y.sum(axis=0)) - jnp.sum(jnp.exp(y)) - b * jnp.sum(jax.scipy.special.gammaln(a)) + (
            jac_factor * jac
        )

    def total(theta):  # type: ignore[no-untyped-def]
        return w * jnp.sum(jnp.maximum(records(theta)[2], log_a), axis=0)

    theta = jnp.concatenate([lam, jnp.zeros(d)])
    grad, curv, t, jac_t = moves._surrogate_expansion(lam, zc, p, w, log_a, jac_factor)
    return {
        "censored": jnp.sum(records(theta)[2] <= log_a),
        "grad": grad, "curv": curv, "t": t, "jac_t": jac_t,
        "grad_ad": jax.grad(dens)(theta), "hessian_ad": jax.hessian(dens)(theta),
        "t_direct": total(theta), "jac_t_ad": jax.jacfwd(total)(theta),
        "curv_without_jacobian": moves._surrogate_expansion(lam, zc, p, w, log_a, 0.0)[1],
    }


@pytest.mark.slow  # make test-full: the surrogate and its autodiff compiled per case (6 s)
@pytest.mark.parametrize("jac_factor", [1.0, 0.0])
def test_surrogate_expansion_matches_automatic_differentiation(jac_factor: float) -> None:
    """The closed-form gradient and c-curvature of D and T, dT/d(lambda, c) of the surrogate move against autodiff.

    The separability that makes the c-curvature diagonal is checked on the full Hessian, and a
    wrong curvature (the Jacobian's term left out) is caught by the same comparison.
    """
    r = _surrogate_expansion_and_autodiff(jac_factor)
    assert int(r["censored"]) > 0  # censored elements: their zero derivative is checked
    np.testing.assert_allclose(r["grad"], r["grad_ad"], rtol=1e-9, atol=1e-8)
    h_cc = r["hessian_ad"][3:, 3:]
    np.testing.assert_allclose(h_cc - np.diag(np.diag(h_cc)), 0.0, atol=1e-8)  # separable: diagonal
    np.testing.assert_allclose(r["curv"], np.diag(h_cc), rtol=1e-9)
    np.testing.assert_allclose(r["t"], r["t_direct"], rtol=1e-12)
    np.testing.assert_allclose(r["jac_t"], r["jac_t_ad"], rtol=1e-9, atol=1e-8)  # d/d(lambda, c)
    if jac_factor:
        assert not np.allclose(r["curv_without_jacobian"], np.diag(h_cc), rtol=1e-3)


@pytest.mark.slow  # a long run to find where the surrogate is centred (make test-slow)
def test_surrogate_reference_is_fixed_at_the_warmup_geometric_mean_of_alpha() -> None:
    """At the end of warmup the surrogate's reference point is set to exp(mean log alpha) over warmup's second half.

    It is then fixed (the kept draws see one kernel); the moving average it followed before would
    fail the first comparison.
    """
    import noiseaware.dirichlet._dpmcmc as m

    prep = m._prepare(tiny_release(), None, 2, 5, 1, part=None, init=None, joint_move=None)
    init, advance, data = m._stage([prep], None, m.DEFAULT_SAMPLER)
    state = init(random.split(random.key(0), 2).reshape(1, 2), jnp.asarray(prep.inits[None]), data)
    warmup, target = jnp.asarray(2 * m.CHUNK, jnp.int32), jnp.asarray(m.RWM_TARGET_ACCEPT)
    draws, refs = [], []
    for _ in range(3):
        state, res = advance(state, data, warmup, target)
        draws.append(np.asarray(res[0]))
        refs.append(np.asarray(state.alpha_ref))
    alpha = np.concatenate(draws, axis=2)  # (release, chain, iteration, d)
    expected = np.exp(np.log(alpha[:, :, m.CHUNK : 2 * m.CHUNK]).mean(axis=2))
    np.testing.assert_allclose(refs[1], expected, rtol=1e-12)
    np.testing.assert_array_equal(refs[2], refs[1])


@pytest.mark.slow  # a long run of the fallback path (make test-slow)
def test_surrogate_move_falls_back_to_the_cuberoot_move_when_its_correction_rejects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the surrogate move's correction accepts too rarely in warmup, the run restarts with the cube-root move.

    With an unreachable threshold the returned draws are the cube-root kernels' (the sampler attribute
    says so and the joint step statistics are theirs); with a threshold of 0 the surrogate run is kept.
    """
    import noiseaware.dirichlet._dpmcmc as m

    rel = tiny_release()
    monkeypatch.setattr(m, "SURROGATE_MIN_ACCEPT", 1.01)
    prep = m._prepare(rel, None, 2, 5, 1, part=None, init=None, joint_move=None)
    raw = m._run([prep], None, 100, 200, 5, False)
    assert raw["sampler"] == m.CUBEROOT_SAMPLER and raw["fallback_from"] == m.DEFAULT_SAMPLER
    assert raw["alpha"].shape == (1, 2, 100, 2)
    from noiseaware._engine import check_settings

    idata = m._idata(raw, 0, prep, rel, None, check_settings(chains=2, draws=100, warmup=200, seed=5))
    assert "started again" in idata.attrs["sampler"] and "cuberoot map" in idata.attrs["sampler"]
    monkeypatch.setattr(m, "SURROGATE_MIN_ACCEPT", 0.0)
    kept = dpmcmc(rel, chains=2, draws=100, warmup=200, seed=5, check_mixing=False)
    assert "started again" not in kept.attrs["sampler"] and "O(d) surrogate" in kept.attrs["sampler"]


_DEVICES_CHILD = """
import jax, numpy as np
import noiseaware as na
na.config.configure(cache=False)  # float64 and the host devices, as a script does
import noiseaware.dirichlet._dpmcmc as m
assert jax.local_device_count() >= 2, jax.local_device_count()
x = np.random.default_rng(3).dirichlet([2.0, 3.0], size=3)
rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=2.0, threshold=1e-3, rng=np.random.default_rng(3))
prep = m._prepare(rel, None, 4, 9, 1, part=None, init=None, joint_move=None)
one = m._run([prep], None, 100, 100, 9, False, devices=1)
spread = m._run([prep], None, 100, 100, 9, False)
assert one["alpha"].shape == (1, 4, 100, 2)
np.testing.assert_allclose(spread["alpha"], one["alpha"], rtol=1e-7)  # rounding of two programs only
assert not np.allclose(one["alpha"][0, 0], one["alpha"][0, 1])  # the chains differ from each other
print("same draws")
"""


@pytest.mark.slow  # fits in a second interpreter with two host devices (make test-slow)
def test_chains_spread_over_devices_give_the_same_draws_as_one_device() -> None:
    """The chain groups run each chain on its own key: the draws of one device.

    In a fresh process with two XLA host devices (``NOISEAWARE_HOST_DEVICES=2``, whatever the
    machine's core count), a run with the chains spread over both is compared with one on a single
    device.
    """
    import os
    import subprocess
    import sys

    env = {**os.environ, "NOISEAWARE_HOST_DEVICES": "2"}
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", _DEVICES_CHILD], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "same draws" in out.stdout
