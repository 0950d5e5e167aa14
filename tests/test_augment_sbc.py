"""Simulation-based calibration of the data-augmentation sampler (issue 5, part 4; slow).

Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman 2018, arXiv:1804.06788):
draw theta from the prior, the confidential data from f(. | theta) and the release from the
mechanism; run the sampler on the release and record the rank of the true theta among M thinned
posterior draws. For a correct sampler the rank is uniform on {0, ..., M}, so the ranks of many
replicates, binned into 10 equal bins, pass a chi-square test of uniformity. We rank each of the
four cell probabilities and the log-likelihood log p(s_dp | theta) (the marginal likelihood of the
release, tractable for these tiny models), as the engineering guide asks.

Replicates are run together: L independent data sets stacked into one `AugmentationModel` whose
parameter is an (L, 4) array (replicate l's records are drawn from, and update, row l only), so the
joint posterior factorizes into the L single-data-set posteriors and one call of `sample` runs L
independent chains of the same sampler. Draws are thinned so that the remaining autocorrelation is
negligible (measured at lag THIN below 0.02 for these models).

Threshold: SBC_TESTS chi-square statistics (three calibrated runs x five ranked quantities) are
each tested at level ALPHA = 1e-4 / SBC_TESTS (Bonferroni), so a correct sampler fails this file
with probability below 1e-4. The same test is shown to reject samplers that use a mis-scaled
mechanism density (randomized response believed to keep answers with p = 0.9 instead of 3/4;
discrete Laplace noise of a third of the true scale, caught by the log-likelihood rank).
Runtime: about 2-3 minutes on 2 shared cores.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from scipy import special, stats

from noiseaware._engine import group
from noiseaware.augment import AugmentationModel, mechanism_log_density, sample
from noiseaware.mechanisms import GeometricMechanism, RandomizedResponse

pytestmark = pytest.mark.slow

M = 99  # thinned posterior draws per replicate: ranks 0..99, ten per bin
BINS = 10
SBC_TESTS = 3 * 5
ALPHA = 1e-4 / SBC_TESTS
BITS = np.array([[1, 1], [1, 0], [0, 1], [0, 0]])  # cell -> (male, admitted), as in examples/dapper_ucb_rr.py


def rank_pvalues(draws: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Chi-square p-values of the binned ranks, one per column: draws (M, L, k), truth (L, k)."""
    assert draws.shape[0] == M
    ranks = (draws < truth[None]).sum(axis=0)  # (L, k), in 0..M
    counts = np.stack([np.bincount(ranks[:, j] * BINS // (M + 1), minlength=BINS) for j in range(ranks.shape[1])])
    return np.asarray(stats.chisquare(counts, axis=1).pvalue)


def thinned(idata, thin: int) -> np.ndarray:
    pi = np.asarray(group(idata, "posterior")["pi"])[0]  # one chain: (draws, L, 4)
    return pi[thin - 1 :: thin]


# ----------------------------------------------------------------------------- randomized response
P_RR = 0.75  # two fair coin flips per answer (seed 001 §5, Example 1)
RR_N, RR_THIN, RR_WARMUP = 10, 20, 200


def rr_matrix(p: float) -> np.ndarray:
    """P(noisy cell y | true cell c) for two answers, each kept with probability p."""
    return np.prod(np.where(BITS[:, None, :] == BITS[None, :, :], p, 1.0 - p), axis=2)


def simulate_rr(n_rep: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """theta (L, 4) from the Dirichlet(1) prior; each record's two answers randomized by two coin flips."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.ones(4), size=n_rep)
    u = rng.random((n_rep, RR_N, 1))
    cells = (u > np.cumsum(theta, axis=1)[:, None, :3]).sum(axis=2).ravel()  # inverse-cdf draw per record
    answers = BITS[cells]
    keep = rng.random(answers.shape) < 0.5  # first flip heads: keep the answer, else a fresh fair coin
    noisy = np.where(keep, answers, rng.integers(0, 2, answers.shape))
    return theta, noisy


def rr_loglik(theta: np.ndarray, noisy: np.ndarray) -> np.ndarray:
    """log p(s_dp | theta) per replicate: each record's noisy cell ~ Categorical(theta @ R); theta (..., L, 4)."""
    cells = (noisy @ np.array([-2, -1]) + 3).reshape(-1, RR_N)
    n_y = np.stack([np.bincount(c, minlength=4) for c in cells])  # (L, 4)
    return (n_y * np.log(theta @ rr_matrix(P_RR))).sum(axis=-1)


def rr_answers(x, s_dp_i):
    return jnp.stack([1 - x // 2, 1 - x % 2])


def rr_augmentation(n_rep: int, p_sampler: float, nuts: bool) -> AugmentationModel:
    """n_rep stacked replicates of RR_N records each; theta = pi, an (n_rep, 4) array."""
    rep = np.repeat(np.arange(n_rep), RR_N)

    def latent(key, theta):
        return jax.random.categorical(key, jnp.log(theta["pi"])[rep])

    def posterior(key, x, theta):
        counts = jax.nn.one_hot(x, 4).reshape(n_rep, RR_N, 4).sum(axis=1)
        return {"pi": jax.random.dirichlet(key, 1.0 + counts)}

    def model() -> None:
        pi = numpyro.sample("pi", dist.Dirichlet(jnp.ones((n_rep, 4))).to_event(1))
        with numpyro.plate("records", n_rep * RR_N):
            numpyro.sample("x", dist.Categorical(pi[rep]))

    return AugmentationModel(
        statistic=rr_answers,
        log_density=mechanism_log_density(RandomizedResponse(k=2, p=p_sampler)),
        model=model if nuts else None,
        latent=None if nuts else latent,
        posterior=None if nuts else posterior,
        per_record=True,
    )


def run_rr(n_rep: int, p_sampler: float, *, nuts: bool, seed: int) -> np.ndarray:
    """p-values (4 cells + log-likelihood) of SBC for randomized response; the sampler assumes p_sampler."""
    theta, noisy = simulate_rr(n_rep, seed)
    aug = rr_augmentation(n_rep, p_sampler, nuts)
    idata = sample(aug, noisy, init={"pi": np.full((n_rep, 4), 0.25)}, draws=M * RR_THIN, warmup=RR_WARMUP,
                   chains=1, seed=seed, check_mixing=False)
    draws = thinned(idata, RR_THIN)
    ll = rank_pvalues(rr_loglik(draws, noisy)[..., None], rr_loglik(theta, noisy)[:, None])
    return np.concatenate([rank_pvalues(draws, theta), ll])


# ----------------------------------------------------------------------------- discrete Laplace on counts
SCALE = 2.0
DL_L, DL_N, DL_THIN, DL_WARMUP = 200, 10, 10, 100
DL_REP = np.repeat(np.arange(DL_L), DL_N)


def simulate_counts(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """theta (L, 4) from the prior, cell counts of DL_N records, two-sided geometric noise on each cell."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.ones(4), size=DL_L)
    counts = np.stack([rng.multinomial(DL_N, t) for t in theta])
    alpha = GeometricMechanism(scale=SCALE).alpha
    noise = rng.geometric(1.0 - alpha, counts.shape) - rng.geometric(1.0 - alpha, counts.shape)
    return theta, counts + noise


def tables(n: int) -> np.ndarray:
    t = np.array([c for c in itertools.product(range(n + 1), repeat=3) if sum(c) <= n])
    return np.column_stack([t, n - t.sum(axis=1)])


def counts_loglik(theta: np.ndarray, sdp: np.ndarray) -> np.ndarray:
    """log p(s_dp | theta) = log sum_c Multinomial(c | n, theta) eta(s_dp | c), by enumerating tables c."""
    tab = tables(DL_N)  # (T, 4)
    log_noise = GeometricMechanism(scale=SCALE).log_prob(sdp[:, None, :], tab[None]).sum(axis=-1)  # (L, T)
    log_coef = special.gammaln(DL_N + 1.0) - special.gammaln(tab + 1.0).sum(axis=1)  # (T,)
    log_mult = log_coef + np.einsum("tk,...lk->...lt", tab, np.log(theta))  # (..., L, T)
    return special.logsumexp(log_mult + log_noise, axis=-1)


def dl_statistic(x, s_dp):
    """Record x = 4 * replicate + cell adds one to its replicate's cell."""
    return jax.nn.one_hot(x, 4 * DL_L).reshape(DL_L, 4)


def dl_latent(key, theta):
    return 4 * jnp.asarray(DL_REP) + jax.random.categorical(key, jnp.log(theta["pi"])[DL_REP])


def dl_posterior(key, x, theta):
    return {"pi": jax.random.dirichlet(key, 1.0 + jnp.bincount(x, length=4 * DL_L).reshape(DL_L, 4))}


def run_counts(scale_sampler: float, seed: int) -> np.ndarray:
    theta, sdp = simulate_counts(seed)
    aug = AugmentationModel(
        statistic=dl_statistic,
        log_density=mechanism_log_density(GeometricMechanism(scale=scale_sampler)),
        latent=dl_latent,
        posterior=dl_posterior,
    )
    idata = sample(aug, sdp, init={"pi": np.full((DL_L, 4), 0.25)}, draws=M * DL_THIN, warmup=DL_WARMUP,
                   chains=1, seed=seed, check_mixing=False)
    draws = thinned(idata, DL_THIN)
    ll = rank_pvalues(counts_loglik(draws, sdp)[..., None], counts_loglik(theta, sdp)[:, None])
    return np.concatenate([rank_pvalues(draws, theta), ll])


# ----------------------------------------------------------------------------- tests
def test_rank_test_detects_nonuniform_ranks_and_passes_uniform_ones() -> None:
    # the helper itself: exact posterior draws give uniform ranks; draws from a too-narrow law do not
    rng = np.random.default_rng(0)
    truth = rng.normal(size=(1000, 1))
    assert rank_pvalues(rng.normal(size=(M, 1000, 1)), truth).min() > ALPHA
    assert rank_pvalues(0.7 * rng.normal(size=(M, 1000, 1)), truth).max() < ALPHA


def test_sbc_randomized_response_conjugate() -> None:
    p = run_rr(1000, P_RR, nuts=False, seed=101)
    assert p.min() > ALPHA, p


def test_sbc_randomized_response_nuts_in_hmcgibbs() -> None:
    p = run_rr(400, P_RR, nuts=True, seed=102)  # NUTS on 1,200 free parameters
    assert p.min() > ALPHA, p


def test_sbc_discrete_laplace_counts_scan_sweep() -> None:
    p = run_counts(SCALE, seed=103)
    assert p.min() > ALPHA, p


def test_sbc_rejects_a_mis_scaled_mechanism_density() -> None:
    # the sampler believes each answer is kept with p = 0.9 (less noise than the true 3/4)
    p = run_rr(1000, 0.9, nuts=False, seed=104)
    assert p.min() < ALPHA, p


def test_sbc_log_likelihood_rank_rejects_a_mis_scaled_counts_density() -> None:
    # the sampler's discrete Laplace scale is a third of the truth; with ten records per table the cell
    # ranks barely notice, the rank of the log-likelihood does
    p = run_counts(SCALE / 3, seed=105)
    assert p.min() < ALPHA, p
