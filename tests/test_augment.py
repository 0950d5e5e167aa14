"""Data-augmentation MCMC (noiseaware.augment): exactness against enumerated posteriors, power, API.

Exactness: for a 2x2 table of N records with a Dirichlet(1) prior the posterior given any noisy
release is a finite mixture of Dirichlets, p(pi | s_dp) = sum_c w_c Dir(pi | 1 + c), whose weights
are computed by enumerating the latent tables c (cell-level noise) or by convolving the per-answer
latent assignments (randomized response). Each run is compared on the posterior mean and sd of
the four cells (8 statistics) in units of ArviZ's Monte Carlo standard errors. With Z_MAX = 5 and
24 such statistics in this file, a correct sampler fails with probability about
24 * 5.7e-7 < 1e-4; the same check is shown to reject a mechanism density of the wrong scale.
"""

from __future__ import annotations

import itertools
import math

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from scipy import special

from noiseaware import Release, results
from noiseaware._engine import from_groups, group
from noiseaware.augment import AugmentationModel, check_mixing, mechanism_log_density, sample
from noiseaware.exceptions import MixingWarning
from noiseaware.mechanisms import DiscreteGaussianMechanism, GeometricMechanism, LaplaceMechanism, RandomizedResponse

Z_MAX = 5.0
N = 40
SDP = np.array([20, -2, 9, 11])  # a noisy 2x2 table (one cell negative), sums to 38, not N
SCALE = 3.0
DRAWS, WARMUP, CHAINS = 5000, 500, 4


def table_model(n: int) -> None:
    pi = numpyro.sample("pi", dist.Dirichlet(jnp.ones(4)))
    with numpyro.plate("records", n):
        numpyro.sample("x", dist.Categorical(pi))


def one_hot(x, s_dp):
    return jax.nn.one_hot(x, 4)


def dirichlet_posterior(key, x, theta):
    return {"pi": jax.random.dirichlet(key, 1.0 + jnp.bincount(x, length=4))}


def answers(x, s_dp):
    """Cell (male&admitted, male&rejected, female&admitted, female&rejected) -> (male, admitted)."""
    return jnp.stack([1 - x // 2, 1 - x % 2])


# ----------------------------------------------------------------------------- references
def mixture_moments(weights: np.ndarray, tables: np.ndarray, alpha: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sd of each cell under sum_c w_c Dirichlet(alpha + c)."""
    w = weights / weights.sum()
    a = tables + alpha
    total = a.sum(axis=1, keepdims=True)
    mean = w @ (a / total)
    second = w @ (a * (a + 1) / (total * (total + 1)))
    return mean, np.sqrt(second - mean**2)


def exact_cell_noise(mechanism, sdp: np.ndarray, n: int, alpha: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Enumerate all 4-cell tables summing to n: w_c ∝ eta(s_dp | c) DirMult(c | n, alpha)."""
    tables = np.array([c for c in itertools.product(range(n + 1), repeat=3) if sum(c) <= n])
    tables = np.column_stack([tables, n - tables.sum(axis=1)])
    logw = mechanism.log_prob(sdp[None, :], tables).sum(axis=1)
    logw += special.gammaln(tables + alpha).sum(axis=1) - special.gammaln(tables + 1.0).sum(axis=1)  # DirMult
    return mixture_moments(np.exp(logw - logw.max()), tables, alpha)


def exact_randomized_response(observed_cells: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Posterior under two-answer randomized response: convolve each record's latent cell.

    Records whose noisy answers fall in cell y have true cell c with weight theta_c M[c, y]; grouping
    records by (y, c) the posterior is sum_K W(K) Dir(1 + K) with
    W(K) = prod_c Gamma(1 + K_c) * sum_{L: colsums K} prod_y n_y! / prod_c L_yc! prod M[c, y]^L_yc.
    """
    bits = np.array([[1, 1], [1, 0], [0, 1], [0, 0]])
    m = np.prod(np.where(bits[:, None, :] == bits[None, :, :], p, 1 - p), axis=2)  # M[c, y]
    n_y = np.bincount(observed_cells, minlength=4)
    weights: dict[tuple[int, ...], float] = {(0, 0, 0, 0): 1.0}
    for y in range(4):
        comps = [c for c in itertools.product(range(n_y[y] + 1), repeat=4) if sum(c) == n_y[y]]
        factors = [
            math.factorial(n_y[y]) / math.prod(math.factorial(k) for k in c) * math.prod(m[:, y] ** np.array(c))
            for c in comps
        ]
        new: dict[tuple[int, ...], float] = {}
        for k, wk in weights.items():
            for c, f in zip(comps, factors, strict=True):
                key = tuple(a + b for a, b in zip(k, c, strict=True))
                new[key] = new.get(key, 0.0) + wk * f
        weights = new
    tables = np.array(list(weights))
    w = np.array(list(weights.values())) * np.exp(special.gammaln(tables + 1.0).sum(axis=1))
    return mixture_moments(w, tables)


def _ess_mean(x: np.ndarray) -> float:
    return float(np.ravel(az.ess(x, method="mean"))[0])


def mcse_mean(x: np.ndarray) -> float:
    return float(x.std(ddof=1)) / math.sqrt(_ess_mean(x))


def mcse_sd(x: np.ndarray) -> float:
    """Monte Carlo error of the sd of draws x (chain, draw): delta method on the ESS of (x - mean)^2.

    (ArviZ's method="sd" is the same formula; computed here because it fails with numba and NumPy 2.)
    """
    d2 = (x - x.mean()) ** 2
    ess = _ess_mean(d2)
    var = d2.mean()
    return math.sqrt(((d2**2).mean() - var**2) / ess / var / 4.0)


def max_z(idata, mean: np.ndarray, sd: np.ndarray) -> float:
    """Largest |estimate - exact| / MCSE over the cells' posterior means and sds."""
    draws = np.asarray(group(idata, "posterior")["pi"])  # (chain, draw, 4)
    z = []
    for j in range(draws.shape[-1]):
        x = draws[..., j]
        z.append(abs(x.mean() - mean[j]) / mcse_mean(x))
        z.append(abs(x.std() - sd[j]) / mcse_sd(x))
    return float(max(z))


def test_reference_sums_match_each_other() -> None:
    # the enumeration (cell noise) and the convolution (record noise) agree where both apply:
    # noiseless data (p -> 1) gives Dirichlet(1 + observed counts)
    obs = np.repeat(np.arange(4), [3, 1, 2, 2])
    mean, sd = exact_randomized_response(obs, 1.0 - 1e-12)
    a = 1.0 + np.array([3, 1, 2, 2])
    np.testing.assert_allclose(mean, a / a.sum(), rtol=1e-9)
    np.testing.assert_allclose(sd, np.sqrt(a * (a.sum() - a) / (a.sum() ** 2 * (a.sum() + 1))), rtol=1e-6)


# ----------------------------------------------------------------------------- exactness
def test_discrete_laplace_conjugate_matches_exact_posterior() -> None:
    mech = GeometricMechanism(scale=SCALE)
    mean, sd = exact_cell_noise(mech, SDP, N)
    aug = AugmentationModel(
        statistic=one_hot,
        log_density=mechanism_log_density(mech),
        model=table_model,
        model_args=(N,),
        posterior=dirichlet_posterior,
    )
    idata = sample(aug, SDP, draws=DRAWS, warmup=WARMUP, chains=CHAINS, seed=11)
    assert max_z(idata, mean, sd) < Z_MAX
    acc = group(idata, "sample_stats")["accept_rate"]
    assert acc.shape == (CHAINS, DRAWS) and 0.3 < float(acc.mean()) < 1.0


@pytest.mark.slow  # make test-full: a compiled NUTS-within-Gibbs sampler (7 s)
def test_discrete_gaussian_release_nuts_matches_exact_posterior() -> None:
    mech = DiscreteGaussianMechanism(sigma=SCALE)
    release = Release(
        statistic="counts",
        values=SDP,
        labels=[("Male", "Admitted"), ("Male", "Rejected"), ("Female", "Admitted"), ("Female", "Rejected")],
        mechanism=mech,
        composition="joint",
        guarantee=mech.guarantee(),
        secure=False,
        n=N,
    )
    mean, sd = exact_cell_noise(mech, SDP, N)
    aug = AugmentationModel(statistic=one_hot, model=table_model, model_args=(N,))  # NUTS in HMCGibbs
    idata = sample(aug, release, draws=DRAWS, warmup=WARMUP, chains=CHAINS, seed=12)
    assert max_z(idata, mean, sd) < Z_MAX
    assert idata.attrs["mechanism"] == "discrete_gaussian"
    assert int(group(idata, "sample_stats")["diverging"].sum()) == 0
    assert results.release(idata) == release and results.fit_kind(idata) == "augment.sample"


def test_randomized_response_release_matches_exact_posterior() -> None:
    n, p = 24, 0.75
    observed_cells = np.repeat(np.arange(4), [9, 3, 5, 7])
    bits = np.array([[1, 1], [1, 0], [0, 1], [0, 0]])
    rr = RandomizedResponse.from_coin_flips(k=2)
    assert rr.p == p
    release = Release(
        statistic="randomized_response",
        values=bits[observed_cells],
        labels=[(str(i), col) for i in range(n) for col in ("male", "admitted")],
        mechanism=rr,
        composition="per_record",
        guarantee=rr.guarantee().repeat(2),
        secure=False,
        n=n,
    )
    mean, sd = exact_randomized_response(observed_cells, p)
    aug = AugmentationModel(statistic=answers, model=table_model, model_args=(n,), posterior=dirichlet_posterior)
    idata = sample(aug, release, draws=DRAWS, warmup=WARMUP, chains=CHAINS, seed=13)
    assert idata.attrs["per_record"] == 1
    assert max_z(idata, mean, sd) < Z_MAX


def test_exactness_check_rejects_a_mis_scaled_mechanism() -> None:
    # the sampler is run with a density of twice the true scale; the check must fail clearly
    truth = GeometricMechanism(scale=SCALE)
    mean, sd = exact_cell_noise(truth, SDP, N)
    aug = AugmentationModel(
        statistic=one_hot,
        log_density=mechanism_log_density(GeometricMechanism(scale=2 * SCALE)),
        model=table_model,
        model_args=(N,),
        posterior=dirichlet_posterior,
    )
    idata = sample(aug, SDP, draws=DRAWS, warmup=WARMUP, chains=CHAINS, seed=14)
    assert max_z(idata, mean, sd) > 2 * Z_MAX


# ----------------------------------------------------------------------------- mixing
def _ar1(rho: float, chains: int = 4, draws: int = 1000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.zeros((chains, draws))
    e = rng.standard_normal((chains, draws)) * math.sqrt(1 - rho**2)
    x[:, 0] = rng.standard_normal(chains)
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + e[:, t]
    return x


def test_check_mixing_flags_sticky_chains_only() -> None:
    good = from_groups({"posterior": {"theta": _ar1(0.0)}})
    assert check_mixing(good) == []
    sticky = from_groups({"posterior": {"theta": _ar1(0.99)}})  # ESS ~ 4000 * 0.005 = 20
    with pytest.warns(MixingWarning, match=r"bulk ESS .* lag-1 autocorrelation 0\.9"):
        problems = check_mixing(sticky)
    assert len(problems) == 1 and problems[0].startswith("theta")
    stuck = from_groups({"posterior": {"theta": _ar1(0.0) + np.arange(4)[:, None]}})  # chains disagree
    assert "R-hat" in check_mixing(stuck, warn=False)[0]


def test_sample_warns_on_short_run_and_keeps_records() -> None:
    aug = AugmentationModel(
        statistic=one_hot,
        log_density=mechanism_log_density(GeometricMechanism(scale=SCALE)),
        latent=lambda key, th: jax.random.categorical(key, jnp.log(th["pi"]), shape=(N,)),
        posterior=dirichlet_posterior,
    )
    inits = [{"pi": np.full(4, 0.25)}, {"pi": np.array([0.7, 0.1, 0.1, 0.1])}]
    with pytest.warns(MixingWarning, match="poor mixing"):
        idata = sample(aug, SDP, init=inits, draws=30, warmup=0, chains=2, seed=3, keep_records=True)
    assert group(idata, "posterior")["x"].shape == (2, 30, N)
    assert group(idata, "posterior")["pi"].shape == (2, 30, 4)
    assert int(group(idata, "posterior")["x"].max()) <= 3


# ----------------------------------------------------------------------------- API and bad input
def test_mechanism_log_density_matches_the_mechanisms() -> None:
    s_dp, s = np.array([3.0, -1.0, 7.0]), np.array([2.0, 0.0, 7.0])
    for mech in (GeometricMechanism(scale=1.7), DiscreteGaussianMechanism(sigma=2.5), LaplaceMechanism(scale=0.8)):
        got = float(mechanism_log_density(mech)(jnp.asarray(s_dp), jnp.asarray(s)))
        assert got == pytest.approx(float(mech.log_prob(s_dp, s).sum()), rel=1e-12)
    rr = RandomizedResponse(k=3, p=0.6)
    got = float(mechanism_log_density(rr)(jnp.array([0.0, 2.0]), jnp.array([0.0, 1.0])))
    assert got == pytest.approx(float(rr.log_prob(np.array([0, 2]), np.array([0, 1])).sum()), rel=1e-12)


def test_bad_input_is_named() -> None:
    from noiseaware.mechanisms import BTGM

    with pytest.raises(ValueError, match="mechanism family must be one of"):
        mechanism_log_density(BTGM(scale=1.0, lower=0, upper=5))  # a table of posterior means
    with pytest.raises(TypeError, match="statistic must be a callable"):
        AugmentationModel(statistic=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="give model="):
        AugmentationModel(statistic=one_hot, posterior=dirichlet_posterior)
    with pytest.raises(TypeError, match="records must be a site name"):
        AugmentationModel(statistic=one_hot, model=table_model, records=3)  # type: ignore[arg-type]
    aug = AugmentationModel(statistic=one_hot, model=table_model, model_args=(N,))
    with pytest.raises(ValueError, match="must give log_density="):
        sample(aug, SDP)
    with pytest.raises(TypeError, match="model must be an AugmentationModel"):
        sample(table_model, SDP)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="draws must be an integer >= 1"):
        sample(aug, SDP, draws=0)
    with pytest.raises(ValueError, match="sdp must not contain NaN"):
        sample(aug, np.array([1.0, np.nan, 2.0, 3.0]))
    mech = GeometricMechanism(scale=SCALE)
    rel = Release(
        statistic="counts", values=SDP, labels=[(str(i),) for i in range(4)], mechanism=mech,
        composition="joint", guarantee=mech.guarantee(), secure=False,
    )
    both = AugmentationModel(statistic=one_hot, log_density=mechanism_log_density(mech), model=table_model)
    with pytest.raises(ValueError, match="the release carries its mechanism"):
        sample(both, rel)
    with pytest.raises(ValueError, match="one dict per chain"):
        sample(aug, rel, init=[{"pi": np.full(4, 0.25)}], chains=2)


# ----------------------------------------------------------------------------- joint moves
N_GAUSS, PRIOR_SD, NOISE_SD, S_GAUSS = 20, 3.0, 4.0, 31.0


def gauss_model() -> None:
    mu = numpyro.sample("mu", dist.Normal(0.0, PRIOR_SD))
    with numpyro.plate("records", N_GAUSS):
        numpyro.sample("x", dist.Normal(mu, 1.0))


def gauss_shift_move(key, theta, x, log_noise, step):  # type: ignore[no-untyped-def]
    """mu' = mu + step z and every record shifted by mu' - mu: f(x'|mu') = f(x|mu), Jacobian 1."""
    k_z, k_u = jax.random.split(key)
    mu = theta["mu"]
    mu_new = mu + step * jax.random.normal(k_z)
    x_new = x + (mu_new - mu)
    log_r = (dist.Normal(0.0, PRIOR_SD).log_prob(mu_new) - dist.Normal(0.0, PRIOR_SD).log_prob(mu)
             + log_noise(x_new) - log_noise(x))
    ok = jnp.log(jax.random.uniform(k_u)) < log_r
    return {"mu": jnp.where(ok, mu_new, mu)}, jnp.where(ok, x_new, x), jnp.exp(jnp.minimum(log_r, 0.0))


@pytest.mark.slow  # make test-full: compiled samplers per move (6 s)
@pytest.mark.parametrize("route", ["nuts", "joint_only"])
def test_joint_move_keeps_the_exact_posterior(route: str) -> None:
    """x_i ~ N(mu, 1), s_dp = sum x_i + N(0, 4^2): p(mu | s_dp) is normal in closed form.

    ``nuts``: record sweep, NUTS for mu | x (HMCGibbs), then the joint move (its new values are
    written back into NUTS's state). ``joint_only``: record sweep and three joint moves, no other
    update of mu. Mean and sd of mu within Z_MAX Monte Carlo standard errors.
    """
    prec = 1 / PRIOR_SD**2 + N_GAUSS**2 / (N_GAUSS + NOISE_SD**2)
    mean, sd = N_GAUSS * S_GAUSS / (N_GAUSS + NOISE_SD**2) / prec, prec**-0.5
    log_norm = -math.log(NOISE_SD) - 0.5 * math.log(2 * math.pi)
    aug = AugmentationModel(
        statistic=lambda x, s_dp: jnp.reshape(x, (1,)),
        log_density=lambda s_dp, s: jnp.sum(log_norm - 0.5 * ((s_dp - s) / NOISE_SD) ** 2),
        model=gauss_model,
        posterior=(lambda key, x, theta: theta) if route == "joint_only" else None,
        joint_move=gauss_shift_move,
    )
    idata = sample(aug, np.array([S_GAUSS]), init={"mu": 0.0}, draws=3000, warmup=500, chains=CHAINS, seed=4,
                   check_mixing=False, joint_repeats=3 if route == "joint_only" else 1)
    mu = np.asarray(group(idata, "posterior")["mu"])
    m_err = float(np.ravel(az.mcse(mu, method="mean"))[0])
    s_err = float(np.ravel(az.mcse((mu - mu.mean()) ** 2, method="mean"))[0]) / (2 * mu.std())
    assert abs(mu.mean() - mean) < Z_MAX * m_err and abs(mu.std() - sd) < Z_MAX * s_err, (mu.mean(), mu.std(), mean, sd)
    jacc = group(idata, "sample_stats")["joint_accept_prob"]
    assert jacc.shape == (CHAINS, 3000) and 0.15 < float(jacc.mean()) < 0.5  # adapted towards 0.3
    step = np.asarray(group(idata, "sample_stats")["joint_step_size"])
    assert np.ptp(step, axis=1).max() == 0.0  # fixed after warmup
    assert "joint move" in idata.attrs["sampler"]


def test_joint_move_bad_input() -> None:
    aug = AugmentationModel(statistic=lambda x, s_dp: jnp.reshape(x, (1,)), model=gauss_model,
                            log_density=lambda s_dp, s: -jnp.sum((s_dp - s) ** 2), joint_move=gauss_shift_move)
    with pytest.raises(ValueError, match=r"joint_target_accept must be in \(0, 1\)"):
        sample(aug, np.array([1.0]), joint_target_accept=1.5)
    with pytest.raises(ValueError, match="joint_repeats must be"):
        sample(aug, np.array([1.0]), joint_repeats=0)
    with pytest.raises(TypeError, match="joint_move must be a callable"):
        AugmentationModel(statistic=lambda x, s_dp: x, model=gauss_model, joint_move=3)


def test_nuts_target_given_twice_or_without_nuts_is_refused() -> None:
    """``target_accept`` is NUTS's target: refused with ``posterior=`` and when nuts_kwargs sets it too."""
    log_density = lambda s_dp, s: -jnp.sum((s_dp - s) ** 2)  # noqa: E731
    conj = AugmentationModel(statistic=answers, model=table_model, model_args=(4,), posterior=dirichlet_posterior,
                             log_density=log_density)
    with pytest.raises(ValueError, match=r"with posterior= there is no NUTS step; got target_accept=0\.9"):
        sample(conj, np.array([2.0, 2.0]), target_accept=0.9)
    nuts = AugmentationModel(statistic=answers, model=table_model, model_args=(4,), log_density=log_density)
    with pytest.raises(ValueError, match="give the NUTS target once"):
        sample(nuts, np.array([2.0, 2.0]), target_accept=0.85, nuts_kwargs={"target_accept_prob": 0.9})
