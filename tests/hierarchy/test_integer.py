"""The integer route of hierarchy.fit against exact enumeration of the integer posterior, and its guarantees.

The reference is written here, independently of the package: every composition of the root total into the
leaf cells, weighted by the product over the noisy measurements of exp(-(y - true)^2 / (2 sigma^2)) (the
discrete Gaussian's pmf up to its normalizer, which does not depend on the true count), under the uniform prior
over compositions.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from noiseaware import hierarchy, results
from noiseaware._engine import group
from noiseaware.exceptions import NoiseawareValueError
from noiseaware.hierarchy import NoisyHierarchy, aggregate
from noiseaware.hierarchy._integer import PROGRAMS

#: One tree shape (1 state, 2 counties, 2 tracts each, 2 cells: 8 leaf cells) at several sizes, so one compiled
#: program serves every fit of the fast tier: the issue's tree (14 people; the relaxation's cell [0, 1] had mean
#: 0.123 against 0.206), and sparse ones (mean tract population 0.3, 1 and 2).
TREES = {"issue": (4.0, 5), "sparse_0.3": (0.3, 0), "sparse_1": (1.0, 2), "sparse_2": (2.0, 0)}
#: The fast tier's run: a sweep of this tree takes about 0.1 ms, so 2 x 8,000 draws take a second or two
#: (bulk ESS about 3,000 per cell).
RUN = {"chains": 2, "draws": 8_000, "warmup": 1_000, "prior": "uniform", "check_mixing": False}


def _release(name: str) -> NoisyHierarchy:
    mean, seed = TREES[name]
    return hierarchy.synthetic_nmf(1, 2, 2, cells=("a", "b"), mean_population=mean, rng=seed).release


def exact_moments(rel: NoisyHierarchy, variance_factor: float = 1.0,
                  log_prior: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and sd of every leaf cell by enumerating all integer allocations (one root unit).

    ``log_prior`` maps the allocations ``(allocations, leaves, cells)`` to their log-prior (default: uniform).
    """
    total = int(rel.values[0][0, 0])
    n_leaf, n_cell = len(rel.units[-1]), rel.n_cells
    k = n_leaf * n_cell
    # stars and bars: every composition of `total` into k non-negative parts
    bars = np.array(list(itertools.combinations(range(total + k - 1), k - 1)), dtype=np.int64).reshape(-1, k - 1)
    edges = np.concatenate([np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), total + k - 1)], axis=1)
    x = (np.diff(edges, axis=1) - 1).reshape(-1, n_leaf, n_cell)
    logw = np.zeros(len(x)) if log_prior is None else np.asarray(log_prior(x), dtype=np.float64)
    for lev, tab in enumerate(aggregate(rel, x.transpose(1, 2, 0))):  # (units, queries, allocations)
        for q in range(n_cell + 1):
            var = rel.variance[lev, q] * variance_factor
            if var > 0:
                logw -= ((rel.values[lev][:, q][:, None] - tab[:, q]) ** 2 / (2.0 * var)).sum(axis=0)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    mean = np.einsum("a,aij->ij", w, x)
    sd = np.sqrt(np.einsum("a,aij->ij", w, (x - mean) ** 2))
    return mean, sd


def disagreements(counts: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> list[str]:
    """Cells whose posterior mean is more than 3 Monte Carlo SE off, or whose sd is more than 10% off.

    ``counts`` has shape (chains, draws, leaves, cells); the Monte Carlo SE of a mean is its sd over the
    square root of its bulk ESS (ArviZ), so it accounts for the chain's autocorrelation.
    """
    import arviz as az

    from noiseaware.results import from_groups

    ess = np.asarray(az.ess(from_groups({"posterior": {"n": counts.astype(np.float64)}}), method="bulk")["n"])
    flat = counts.reshape(-1, *counts.shape[2:])
    ours, ours_sd = flat.mean(axis=0), flat.std(axis=0)
    bad = []
    for idx in np.ndindex(mean.shape):
        if sd[idx] < 1e-9:  # a cell the data fix exactly (not in these trees)
            continue
        se = ours_sd[idx] / np.sqrt(ess[idx]) if ours_sd[idx] > 0 else sd[idx] / np.sqrt(ess[idx])
        if abs(ours[idx] - mean[idx]) > 3.0 * se:
            bad.append(f"mean{idx}: {ours[idx]:.4f} vs exact {mean[idx]:.4f} (3 SE = {3 * se:.4f}, ESS {ess[idx]:.0f})")
        if abs(ours_sd[idx] - sd[idx]) > 0.1 * sd[idx]:
            bad.append(f"sd{idx}: {ours_sd[idx]:.4f} vs exact {sd[idx]:.4f}")
    return bad


@pytest.fixture(scope="module")
def fits() -> dict[str, Any]:
    """One integer fit per tree; the first compiles the program, the others reuse it."""
    return {name: hierarchy.fit(_release(name), seed=11, **RUN) for name in TREES}


@pytest.mark.parametrize("name", list(TREES))
def test_integer_posterior_matches_exact_enumeration(fits: dict[str, Any], name: str) -> None:
    rel = _release(name)
    counts = np.asarray(group(fits[name], "posterior")["counts"])
    mean, sd = exact_moments(rel)
    assert disagreements(counts, mean, sd) == []


def test_check_rejects_a_misspecified_sampler(fits: dict[str, Any]) -> None:
    # the same sampler on the issue's tree, compared with the posterior of a likelihood whose variance is 2x
    # (a sampler with the wrong noise scale): the check must see it
    rel = _release("issue")
    counts = np.asarray(group(fits["issue"], "posterior")["counts"])
    assert len(disagreements(counts, *exact_moments(rel, variance_factor=2.0))) >= 4


@pytest.mark.slow  # the relaxed route's NUTS fit and its compile (19 s at load 9)
def test_check_rejects_the_relaxation() -> None:
    # the continuous relaxation (NUTS on real counts, rounded) on the issue's tree: cell [0, 1] had mean 0.123
    # against the exact 0.206
    rel = _release("issue")
    res = hierarchy.fit(rel, method="relaxed", chains=2, draws=3000, warmup=1000, seed=3, prior="uniform",
                        check_mixing=False)
    relaxed = np.asarray(group(res, "posterior")["integer_counts"])
    bad = disagreements(relaxed, *exact_moments(rel))
    assert bad, "the check passed the relaxation"


def test_every_draw_is_integer_and_meets_the_totals(fits: dict[str, Any]) -> None:
    for name, res in fits.items():
        counts = results.draws(res)
        assert counts.dtype == np.int64 and np.all(counts >= 0)
        assert np.all(counts.sum(axis=(1, 2)) == _release(name).root_totals()[0])
        post = group(res, "posterior")
        assert post["counts"].dims == ("chain", "draw", "leaf", "cell")
        assert res.attrs["noiseaware_method"] == "integer" and res.attrs["noiseaware_prior"] == "uniform"


def test_second_release_of_the_same_shape_compiles_nothing(fits: dict[str, Any]) -> None:
    before = dict(PROGRAMS.info)
    rel = hierarchy.synthetic_nmf(1, 2, 2, cells=("a", "b"), mean_population=3.0, rng=99).release
    res = hierarchy.fit(rel, seed=12, **RUN)
    assert PROGRAMS.info["hits"] == before["hits"] + 1 and PROGRAMS.info["misses"] == before["misses"]
    assert res.attrs["noiseaware_programs_compiled"] == 0  # what the result tells a user
    assert np.all(results.draws(res).sum(axis=(1, 2)) == rel.root_totals()[0])


def test_a_root_total_of_zero(fits: dict[str, Any]) -> None:
    rel = _release("sparse_0.3")
    values = [x.copy() for x in rel.values]
    values[0][0, 0] = 0
    zero = NoisyHierarchy(**{**rel.__dict__, "values": tuple(values)})
    res = hierarchy.fit(zero, seed=1, **RUN)
    assert np.all(results.draws(res) == 0)


def test_sparse_files_of_the_issue_complete() -> None:
    # the relaxed route crashed after sampling on the first; every draw here meets the totals by construction
    for mean in (2.0, 0.3):
        rel = hierarchy.synthetic_nmf(1, 2, 3, cells=tuple("abcdefgh"), mean_population=mean, rng=0).release
        res = hierarchy.fit(rel, prior="uniform", chains=2, draws=200, warmup=200, seed=0, check_mixing=False)
        counts = results.draws(res)
        assert np.all(counts.sum(axis=(1, 2)) == rel.root_totals()[0]) and np.all(counts >= 0)


@pytest.mark.slow  # two programs (hierarchical prior, user model) with their NUTS steps: 158 s at load 9 on 2 cores
def test_hierarchical_prior_and_a_user_model() -> None:
    rel = hierarchy.synthetic_nmf(1, 2, 3, cells=tuple("abcdefgh"), mean_population=2.0, rng=0).release
    res = hierarchy.fit(rel, chains=2, draws=300, warmup=300, seed=0, check_mixing=False)
    counts = results.draws(res)
    assert np.all(counts.sum(axis=(1, 2)) == rel.root_totals()[0])
    post = group(res, "posterior")
    assert {"sigma_tract", "log_rate", "profile"} <= set(post.data_vars)
    assert post["log_rate"].dims == ("chain", "draw", "leaf", "cell")

    import numpyro
    import numpyro.distributions as dist

    x = np.linspace(-1.0, 1.0, 6)

    def my_rates() -> None:
        a = numpyro.sample("a", dist.Normal(0.0, 1.0).expand([8]).to_event(1))
        b = numpyro.sample("b", dist.Normal(0.0, 1.0))
        numpyro.sample("log_rate", dist.Normal(a + b * x[:, None], 0.5).to_event(2))

    res = hierarchy.fit(rel, model=my_rates, chains=2, draws=200, warmup=200, seed=1, check_mixing=False)
    assert {"a", "b", "log_rate", "counts"} <= set(group(res, "posterior").data_vars)
    assert res.attrs["noiseaware_prior"] == "model"


def test_bad_arguments_are_refused() -> None:
    rel = _release("issue")
    with pytest.raises(NoiseawareValueError, match="method must be one of"):
        hierarchy.fit(rel, method="exact")
    with pytest.raises(NoiseawareValueError, match="backend must be 'numpyro' with method='integer'"):
        hierarchy.fit(rel, backend="pymc")
    with pytest.raises(NoiseawareValueError, match="model must be a callable NumPyro model"):
        hierarchy.fit(rel, method="relaxed", model=lambda: None)

    def no_rates() -> None:
        import numpyro
        import numpyro.distributions as dist

        numpyro.sample("z", dist.Normal(0.0, 1.0))

    with pytest.raises(NoiseawareValueError, match="must have a site 'log_rate'"):
        hierarchy.fit(rel, model=no_rates)


def test_relaxed_draws_always_round_to_the_totals() -> None:
    # the relaxed route's rounding must take every real draw: mass in a few cells (the issue's crash), a root
    # total of 0, float drift in the sums, a cell a hair below -1/2 and a cell that is not finite
    from noiseaware.hierarchy._rounding import onto_totals

    rng = np.random.default_rng(0)
    groups = np.array([0, 0, 0, 1, 1, 2])
    totals = np.array([13, 0, 4])
    draws = np.full((50, 6, 8), -0.5)
    draws[:, 0, 0] = 13 + 0.5 * 23  # group 0's mass in one cell (its 23 others at -1/2)
    draws[:, 3:5, :] = 0.0  # group 1: total 0
    draws[:10, 0, 0] -= 3.0
    draws[:10, 1, :3] += 1.0  # ... or in four
    draws[:, 5, :] = rng.dirichlet(np.ones(8), size=50) * (4 + 4.0) - 0.5  # group 2: spread
    draws[20] *= 1 + 1e-7  # float drift past the rounding's tolerance
    draws[30, 2, 3] = -0.5 - 1e-6
    draws[40, 5, 1] = np.nan
    with pytest.raises(NoiseawareValueError):
        hierarchy.round_to_totals(draws, groups, totals)  # before the fix: the fit was lost here
    fixed = onto_totals(draws, groups, totals)
    out = hierarchy.round_to_totals(fixed, groups, totals)
    for g, t in enumerate(totals):
        assert np.all(out[:, groups == g].sum(axis=(1, 2)) == t)
    assert np.all(out >= 0) and np.all(out[:, 3:5] == 0)
    clean = [i for i in range(50) if i not in (20, 30, 40)]
    np.testing.assert_allclose(fixed[clean], draws[clean], atol=1e-9)  # valid draws are left as they are


# -- the Dirichlet-multinomial prior (gamma tract rates integrated out) ----------------------------------------

#: Fixed parameters of the nested Dirichlet-multinomial for the 4 tracts x 2 cells of the issue's tree: the cells'
#: alpha = kappa * p (kappa = 3, p = (0.7, 0.3)) and the tract populations' a_t.
DM_ALPHA = np.array([[2.1, 0.9]] * 4)
DM_A_TRACT = np.array([0.8, 1.5, 2.5, 1.2])


def nested_dm_reference(x: np.ndarray, a_tract: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """log p(n | T): DirMult(N; T, a) times the tracts' DirMult(n_t; N_t, alpha_t), from SciPy (one root unit)."""
    from scipy.stats import dirichlet_multinomial

    pop = x.sum(axis=2)
    total = int(pop[0].sum())
    out = dirichlet_multinomial.logpmf(pop, a_tract, total)
    for t in range(x.shape[1]):
        out = out + dirichlet_multinomial.logpmf(x[:, t], alpha[t], pop[:, t])
    return out


def _dm_fixed_fit(name: str, seed: int) -> np.ndarray:
    """The count sweep alone under the Dirichlet-multinomial with the fixed parameters above: the counts' draws."""
    import jax

    from noiseaware._engine import check_settings
    from noiseaware.hierarchy._integer import PriorBlock, integer_tree, sample_integer

    rel = _release(name)
    st = check_settings(chains=2, draws=8_000, warmup=1_000, seed=seed, check_mixing=False)
    fixed = {"alpha": DM_ALPHA, "a_tract": DM_A_TRACT, "kappa": DM_ALPHA.sum(axis=1)}
    with jax.enable_x64(True):
        out = sample_integer(integer_tree(rel), rel, st, block=PriorBlock("dirmult", None, None),
                             cache_key=("test-dirmult",), fixed=fixed)
    return out["counts"]


@pytest.mark.parametrize("name", ["issue", "sparse_1"])
def test_dirichlet_multinomial_sweep_matches_exact_enumeration(name: str) -> None:
    rel = _release(name)
    counts = _dm_fixed_fit(name, seed=5)
    assert np.all(counts.sum(axis=(2, 3)) == rel.root_totals()[0])
    right = exact_moments(rel, log_prior=lambda x: nested_dm_reference(x, DM_A_TRACT, DM_ALPHA))
    assert disagreements(counts, *right) == []
    # the same draws against the posterior of a prior ratio with alpha off by one: the check must see it
    wrong = exact_moments(rel, log_prior=lambda x: nested_dm_reference(x, DM_A_TRACT, DM_ALPHA + 1.0))
    assert len(disagreements(counts, *wrong)) >= 2


def test_nested_dirichlet_multinomial_logpmf_against_scipy() -> None:
    import jax
    import jax.numpy as jnp

    from noiseaware.hierarchy._dirmult import nested_dirmult_logpmf

    rng = np.random.default_rng(3)
    leaf_root = np.array([0, 0, 0, 1, 1])
    alpha = rng.uniform(0.2, 4.0, size=(5, 3))
    a_tract = rng.uniform(0.3, 5.0, size=5)
    with jax.enable_x64(True):
        for _ in range(5):
            counts = rng.integers(0, 9, size=(5, 3))
            counts[1] = 0  # an empty tract
            terms = {"alpha": jnp.asarray(alpha), "a_tract": jnp.asarray(a_tract), "kappa": jnp.asarray(alpha.sum(1))}
            got = float(nested_dirmult_logpmf(jnp.asarray(counts, dtype=jnp.float64), terms, jnp.asarray(leaf_root), 2))
            ref = sum(float(nested_dm_reference(counts[leaf_root == s][None], a_tract[leaf_root == s],
                                                alpha[leaf_root == s])[0]) for s in range(2))
            assert got == pytest.approx(ref, rel=1e-12, abs=1e-10)


def test_lgamma_positive_against_scipy() -> None:
    import jax
    import jax.numpy as jnp
    from scipy.special import digamma, gammaln

    from noiseaware.hierarchy._dirmult import lgamma_positive

    x = np.concatenate([np.geomspace(1e-6, 1e9, 20_000), np.arange(1.0, 3000.0), np.arange(0.0, 3000.0) + 0.37])
    with jax.enable_x64(True):
        got = np.asarray(lgamma_positive(jnp.asarray(x)))
    ref = gammaln(x)
    assert np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1.0)) < 1e-13
    with jax.enable_x64(True):  # its derivative (the NUTS step's gradient): the digamma function
        grad = np.asarray(jax.vmap(jax.grad(lgamma_positive))(jnp.asarray(x)))
    assert np.max(np.abs(grad - digamma(x)) / np.maximum(np.abs(digamma(x)), 1.0)) < 1e-13


def test_dirichlet_multinomial_prior_is_the_integer_routes() -> None:
    rel = _release("issue")
    with pytest.raises(NoiseawareValueError, match="prior must be one of"):
        hierarchy.fit(rel, method="relaxed", prior="dirichlet_multinomial")


@pytest.mark.slow  # the NUTS step of the prior's parameters compiles (about 60 s on 2 shared cores)
def test_dirichlet_multinomial_fit() -> None:
    rel = hierarchy.synthetic_nmf(2, 2, 3, mean_population=2.0, rng=np.random.default_rng([2000, 53])).release
    res = hierarchy.fit(rel, prior="dirichlet_multinomial", chains=2, draws=500, warmup=500, seed=53,
                        check_mixing=False)
    counts = results.draws(res)
    root = np.asarray(rel.leaf_parents)
    for s, total in enumerate(rel.root_totals()):
        assert np.all(counts[:, root == s].sum(axis=(1, 2)) == total)
    assert np.mean(np.asarray(group(res, "sample_stats")["diverging"])) < 0.01
    post = group(res, "posterior")
    assert {"counts", "nu", "kappa", "eta_county", "profile", "sigma_county"} <= set(post.data_vars)
    assert res.attrs["noiseaware_prior"] == "dirichlet_multinomial"
