"""LaplaceCensoredDirichletStat (seed 004 eq. 6 and its censoring-aware form) in NumPyro and PyMC.

Statistical checks are seeded; their thresholds give a spurious-failure rate below 1e-4 (stated per
test), and each is shown to reject a wrong implementation on the same draws.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import optimize, special, stats

import noiseaware as na
from noiseaware._core import _dirichlet as core
from noiseaware._core import get_backend
from noiseaware.exceptions import NoiseawareValueError

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
nan = pytest.importorskip("noiseaware.numpyro")
pm = pytest.importorskip("pymc")
pt = pytest.importorskip("pytensor.tensor")
pytensor = pytest.importorskip("pytensor")
nap = pytest.importorskip("noiseaware.pymc")

NP = get_backend("numpy")
MODES = ("censored", "asymptotic")
#: two-sided normal quantile with tail 1e-4 / (number of comparisons), by Bonferroni
Z_1E4 = {k: float(stats.norm.isf(0.5e-4 / k)) for k in (1, 2, 3, 6, 12)}


def _asym_moments(alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eq. (6) moments written independently of the package (SciPy polygamma)."""
    a0 = alpha.sum()
    mean = special.digamma(alpha) - special.digamma(a0)
    cov = np.diag(special.polygamma(1, alpha)) - special.polygamma(1, a0)
    return mean, cov


# --------------------------------------------------------------------------- PyMC helpers (compiled once)
@functools.cache
def pymc_joint_fn(mode: str, n: int, a: float):
    """Compiled PyTensor ``(joint logp, d/d alpha, d/d s0)``; FAST_COMPILE keeps the test quick (same graph)."""
    value, s0, alpha, scale = pt.dvector("value"), pt.dvector("s0"), pt.dvector("alpha"), pt.dscalar("scale")
    out = nap.LaplaceCensoredDirichletStat.joint_logp(value, s0, alpha, n, a, scale, moments=mode)
    outs = [out, pytensor.grad(out, alpha), pytensor.grad(out, s0)]
    return pytensor.function([value, s0, alpha, scale], outs, mode="FAST_COMPILE")


@functools.cache
def numpyro_joint(mode: str, n: int, a: float):
    def f(value, s0, alpha, scale):
        return nan.LaplaceCensoredDirichletStat(alpha, n=n, a=a, scale=scale, moments=mode).joint_log_prob(value, s0)

    return jax.jit(f)


# --------------------------------------------------------------------------- 1. density of S_L vs Monte Carlo
ALPHA2 = np.array([2.0, 5.0])
N2 = 200
B2 = 0.1
OFFSETS = np.array([[0, 0], [1, 0], [0, 1], [-1, -1], [1.5, -1.0], [-0.5, 0.8]])


def true_density_mc(pts: np.ndarray, a: float, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Unbiased Monte Carlo estimate of the density of S_L at ``pts`` under the *real* mechanism.

    ``p(s) = E_D[prod_j Laplace(s_j; S_0(D, a)_j, b)]`` with ``D`` = ``n`` Dirichlet records: the
    Laplace convolution is exact, so no normal approximation enters. d = 2, so x_2 = 1 - x_1.
    """
    rng = np.random.default_rng(seed)
    x = rng.beta(ALPHA2[0], ALPHA2[1], size=(m, N2))
    s0 = np.stack([np.log(np.maximum(x, a)).mean(1), np.log(np.maximum(1.0 - x, a)).mean(1)], axis=-1)
    k = np.exp(-np.abs(pts[:, None, :] - s0[None]).sum(-1) / B2) / (2 * B2) ** 2
    return k.mean(1), k.std(1) / math.sqrt(m)


def model_density_is(pts: np.ndarray, a: float, mode: str, n: int, k: int, seed: int):
    """The model's density of S_L, integrating the front end's joint density over S_0 by importance sampling.

    Proposal: a normal with the package-independent eq. (6) mean and twice its covariance.
    """
    qmean, qcov = _asym_moments(ALPHA2)
    q = stats.multivariate_normal(qmean, 2.0 * qcov / N2)
    s0 = q.rvs(size=k, random_state=np.random.default_rng(seed))
    logq = q.logpdf(s0)
    f = numpyro_joint(mode, n, a)
    batched = jax.jit(jax.vmap(jax.vmap(f, (None, 0, None, None)), (0, None, None, None)))
    lj = np.asarray(batched(jnp.asarray(pts), jnp.asarray(s0), jnp.asarray(ALPHA2), B2))
    w = np.exp(lj - logq)
    return w.mean(1), w.std(1) / math.sqrt(k)


@pytest.fixture(scope="module")
def density_cases():
    out = {}
    for a in (1e-3, 0.1):
        mu = np.asarray(nan.LaplaceCensoredDirichletStat(ALPHA2, n=N2, a=a, scale=B2).latent.mean)
        pts = mu + B2 * OFFSETS
        out[a] = (pts, *true_density_mc(pts, a, m=50_000, seed=11))
    return out


@pytest.mark.parametrize(
    ("a", "mode", "n", "accept"),
    [
        (1e-3, "censored", N2, True),
        (1e-3, "asymptotic", N2, True),  # eq. (6) is right when censoring is negligible
        (0.1, "censored", N2, True),  # ... and the censored moments stay right at a large a
        (0.1, "asymptotic", N2, False),  # eq. (6) is wrong at a = 0.1 (P(x_1 < a) = 0.11)
        (1e-3, "censored", N2 // 2, False),  # wrong implementation: Sigma / (n / 2)
    ],
)
def test_density_of_s_l_against_monte_carlo(density_cases, a, mode, n, accept):
    # 6 points: |z| < Z(1e-4 / 6) for all has false-rejection probability < 1e-4 (Bonferroni).
    # The normal approximation of S_0 (n = 200) is a bias below the Monte Carlo error here.
    pts, p_true, se_true = density_cases[a]
    p_mod, se_mod = model_density_is(pts, a, mode, n, k=100_000, seed=5)
    z = (p_mod - p_true) / np.sqrt(se_true**2 + se_mod**2)
    assert np.all(se_true / p_true < 0.005)  # the test has power: 0.5% relative precision
    if accept:
        assert np.max(np.abs(z)) < Z_1E4[6], z
    else:
        assert np.max(np.abs(z)) > 3 * Z_1E4[6], z


# --------------------------------------------------------------------------- 2. backends agree
def _points(d: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(4):
        alpha = rng.uniform(0.6, 8.0, size=d)
        mean, cov = _asym_moments(alpha)
        s0 = rng.multivariate_normal(mean, cov / 300)
        yield alpha, s0, s0 + rng.laplace(0, 0.05, size=d), float(rng.uniform(0.01, 0.2))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("d", [3])
def test_backends_agree_with_core(mode, d):
    n, a = 400, 0.05
    fj = numpyro_joint(mode, n, a)
    fp = pymc_joint_fn(mode, n, a)
    for alpha, s0, sl, scale in _points(d, seed=d):
        ref = core.stat_joint_logdensity(NP, sl, s0, alpha, n, math.log(a), scale, mode)
        assert np.isfinite(ref)
        assert abs(float(fj(sl, s0, alpha, scale)) - ref) < 1e-9
        assert abs(float(fp(sl, s0, alpha, scale)[0]) - ref) < 1e-9
        mean, cov = core.logmean_moments(NP, alpha, math.log(a), mode)
        lat = nan.LaplaceCensoredDirichletStat(alpha, n=n, a=a, scale=scale, moments=mode).latent
        np.testing.assert_allclose(np.asarray(lat.mean), mean, rtol=0, atol=1e-12)
        np.testing.assert_allclose(np.asarray(lat.covariance_matrix), cov / n, rtol=0, atol=1e-12)


def test_core_closed_form_is_gaussian_plus_laplace():
    # the joint density is exactly N(s0; mu, Sigma/n) * prod Laplace(s_L; s0, b), with SciPy's densities
    alpha, n, a, b = np.array([2.2, 3.3, 4.4]), 500, 1e-4, 0.03
    mean, cov = _asym_moments(alpha)
    rng = np.random.default_rng(0)
    s0 = rng.multivariate_normal(mean, cov / n)
    sl = s0 + rng.laplace(0, b, 3)
    ref = stats.multivariate_normal(mean, cov / n).logpdf(s0) + stats.laplace(s0, b).logpdf(sl).sum()
    got = core.stat_joint_logdensity(NP, sl, s0, alpha, n, math.log(a), b, "asymptotic")
    assert abs(got - ref) < 1e-10


def test_censored_moments_against_simulation():
    # mean and covariance of log max(x_j, a) for d = 3 at a heavy threshold, vs 4e5 records.
    # Per-entry z with the sample variance; 3 + 6 comparisons, |z| < Z(1e-4/12).
    alpha, a, m = np.array([1.5, 3.0, 4.5]), 0.08, 400_000
    x = np.random.default_rng(3).dirichlet(alpha, size=m)
    lx = np.log(np.maximum(x, a))
    mean, cov = core.logmean_moments(NP, alpha, math.log(a), "censored")
    z_mean = (lx.mean(0) - mean) / (lx.std(0) / math.sqrt(m))
    c = lx - lx.mean(0)
    prods = c[:, :, None] * c[:, None, :]
    iu = np.triu_indices(3)
    z_cov = (prods.mean(0) - cov)[iu] / (prods.std(0)[iu] / math.sqrt(m))
    assert np.max(np.abs(z_mean)) < Z_1E4[12]
    assert np.max(np.abs(z_cov)) < Z_1E4[12]
    # the eq. (6) mean is far off at this threshold (power of the same check)
    asym, _ = core.logmean_moments(NP, alpha, math.log(a), "asymptotic")
    assert np.max(np.abs((lx.mean(0) - asym) / (lx.std(0) / math.sqrt(m)))) > 10 * Z_1E4[12]


# --------------------------------------------------------------------------- 3. from_release
def _release(split=None, seed=0):
    x = np.random.default_rng(seed).dirichlet([2.2, 3.3, 4.4], size=800)
    kw = {} if split is None else {"split": split}
    return na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(seed), **kw)


@pytest.mark.parametrize(("split", "part", "row"), [(None, None, 0), (0.25, None, 1), (0.25, 0, 0)])
def test_from_release_reads_every_parameter(split, part, row):
    import numpyro
    from numpyro.infer.util import log_density

    rel = _release(split)
    meta = rel.metadata
    n_l = meta["n_parts"][row]
    d = int(meta["d"])
    a = float(meta["a"])
    # by hand from Algorithm 1: S_L = noisy log-sums / n_l, scale = -d log(a) / (n_l epsilon_1)
    s_l = np.asarray(rel.values, dtype=float).reshape(len(meta["n_parts"]), d)[row] / n_l
    scale = -d * math.log(a) / (n_l * float(meta["epsilon_1"]))
    assert abs(scale - float(rel.mechanism.scale) / n_l) < 1e-12
    alpha = np.array([2.0, 3.0, 5.0])
    s0 = s_l + 0.01
    for mode in MODES if split is None else ("asymptotic",):  # reading the release does not depend on the mode
        ref = core.stat_joint_logdensity(NP, s_l, s0, alpha, n_l, math.log(a), scale, mode)

        def model(mode=mode):
            nan.LaplaceCensoredDirichletStat.from_release(
                "s", rel, jnp.asarray(alpha), part=part, moments=mode, parameterization="centered"
            )

        lp, _ = log_density(model, (), {}, {"s_s0": jnp.asarray(s0)})
        assert abs(float(lp) - ref) < 1e-9
        tr = numpyro.handlers.trace(numpyro.handlers.seed(model, 0)).get_trace()
        np.testing.assert_allclose(np.asarray(tr["s"]["value"]), s_l, rtol=0, atol=1e-14)

        with pm.Model() as m:
            nap.LaplaceCensoredDirichletStat.from_release(
                "s", rel, alpha, part=part, moments=mode, parameterization="centered"
            )
        got = m.compile_logp(mode="FAST_COMPILE")({"s_s0": s0})
        assert abs(float(got) - ref) < 1e-9
        np.testing.assert_allclose(np.asarray(m.rvs_to_values[m["s"]].data), s_l, rtol=0, atol=1e-14)


def test_from_release_rejects_other_releases():
    with pytest.raises(TypeError, match=r"noiseaware\.Release"):
        nan.LaplaceCensoredDirichletStat.from_release("s", {"values": [1.0]}, np.ones(3))
    rel = _release(0.25)
    with pytest.raises(ValueError, match="part must be an index"):
        nan.LaplaceCensoredDirichletStat.from_release("s", rel, np.ones(3), part=2)
    with pm.Model(), pytest.raises(ValueError, match="part must be an index"):
        nap.LaplaceCensoredDirichletStat.from_release("s", rel, np.ones(3), part=5)


# --------------------------------------------------------------------------- 4. gradients
@pytest.mark.parametrize("mode", MODES)
def test_gradients_match_finite_differences(mode):
    n, a, b = 400, 0.05, 0.04
    alpha = np.array([1.3, 2.7, 6.1])
    mean, _ = _asym_moments(alpha)
    s0 = mean + 0.02
    sl = s0 - 0.015

    def f_core(al):
        return core.stat_joint_logdensity(NP, sl, s0, al, n, math.log(a), b, mode)

    h = 1e-5
    fd = np.array([(f_core(alpha + h * e) - f_core(alpha - h * e)) / (2 * h) for e in np.eye(3)])
    g_jax = np.asarray(jax.grad(numpyro_joint(mode, n, a), argnums=2)(sl, s0, alpha, b))
    np.testing.assert_allclose(g_jax, fd, rtol=1e-6, atol=1e-6)
    _, g_pm, g_s0_pm = pymc_joint_fn(mode, n, a)(sl, s0, alpha, b)
    np.testing.assert_allclose(g_pm, fd, rtol=1e-6, atol=1e-6)
    fd_s0 = np.array(
        [
            (
                core.stat_joint_logdensity(NP, sl, s0 + h * e, alpha, n, math.log(a), b, mode)
                - core.stat_joint_logdensity(NP, sl, s0 - h * e, alpha, n, math.log(a), b, mode)
            )
            / (2 * h)
            for e in np.eye(3)
        ]
    )
    np.testing.assert_allclose(g_s0_pm, fd_s0, rtol=1e-6, atol=1e-5)
    # a wrong gradient (the eq. 6 moments' gradient under the censored density) is distinguishable
    if mode == "censored":
        g_other = np.asarray(jax.grad(numpyro_joint("asymptotic", n, a), argnums=2)(sl, s0, alpha, b))
        assert np.max(np.abs(g_other - fd)) > 1e-2


# --------------------------------------------------------------------------- 5. sampling moments
def _check_sample_moments(draws: np.ndarray, mean: np.ndarray, cov_n: np.ndarray, b: float, lap_var: float) -> bool:
    """z-tests of the mean, the variances and the variance of the sum; Bonferroni over 2d + 1 tests."""
    m, d = draws.shape
    var = np.diag(cov_n) + lap_var
    z = [(draws.mean(0) - mean) / np.sqrt(var / m)]
    kappa4 = 3.0 * lap_var**2  # fourth cumulant of Laplace noise of variance lap_var (excess kurtosis 3)
    z.append((draws.var(0, ddof=1) - var) / np.sqrt((2 * var**2 + kappa4) / m))
    ssum = draws.sum(1)
    vs = cov_n.sum() + d * lap_var
    z.append(np.atleast_1d((ssum.var(ddof=1) - vs) / math.sqrt((2 * vs**2 + d * kappa4) / m)))
    zz = np.concatenate(z)
    return bool(np.max(np.abs(zz)) < float(stats.norm.isf(0.5e-4 / zz.size)))


@pytest.mark.slow  # make test-full: a Monte Carlo check of the moments (7 s)
@pytest.mark.parametrize("mode", MODES)
def test_prior_predictive_moments(mode):
    alpha, n, a, b = np.array([2.2, 3.3, 4.4]), 400, 0.05, 0.03
    mean, cov = core.logmean_moments(NP, alpha, math.log(a), mode)
    m = 20_000
    xj = np.asarray(
        nan.LaplaceCensoredDirichletStat(alpha, n=n, a=a, scale=b, moments=mode).sample(jax.random.PRNGKey(3), (m,))
    )
    rv = nap.LaplaceCensoredDirichletStat.dist(alpha, n, a, b, moments=mode)
    xp = np.asarray(pm.draw(rv, draws=m, random_seed=4))
    for draws in (xj, xp):
        assert draws.shape == (m, 3)
        assert _check_sample_moments(draws, mean, cov / n, b, 2 * b**2)
        # rejects a wrong implementation: Laplace variance b^2 instead of 2 b^2
        assert not _check_sample_moments(draws, mean, cov / n, b, b**2)


# --------------------------------------------------------------------------- 6. bad parameters
def test_bad_parameters_numpyro():
    good = dict(alpha=np.array([2.0, 3.0]), n=100, a=0.01, scale=0.1)
    for over, name in [({"alpha": np.array([-1.0, 3.0])}, "alpha"), ({"scale": -0.1}, "scale")]:
        p = {**good, **over}
        with pytest.raises(ValueError, match=name):
            nan.LaplaceCensoredDirichletStat(**p, validate_args=True)
    for over, name in [({"n": 0}, "n"), ({"a": 1.0}, "a"), ({"alpha": np.array([2.0])}, "alpha")]:
        with pytest.raises(NoiseawareValueError, match=name):
            nan.LaplaceCensoredDirichletStat(**{**good, **over})
    with pytest.raises(NoiseawareValueError, match="moments"):
        nan.LaplaceCensoredDirichletStat(**good, moments="exact")
    with pytest.raises(NoiseawareValueError, match="no closed form"):
        nan.LaplaceCensoredDirichletStat(**good).log_prob(np.zeros(2))


def test_bad_parameters_pymc():
    from pymc.logprob.utils import ParameterValueError

    # The parameter checks sit before the moments (``_moments``, ``_checked_scale``, ``latent``): the
    # same code for both moment modes. The asymptotic moments keep these checks from compiling the
    # censored series, whose C code the censored tests here compile and evaluate. What is checked (the
    # error, and the -inf of PyMC's check_bounds rewrite, which ``compile_logp`` adds in every mode)
    # does not depend on the mode: FAST_COMPILE, no C code.
    kw = {"moments": "asymptotic"}
    fast = "FAST_COMPILE"
    sl = s0 = np.array([-1.0, -0.5])
    with pytest.raises(ParameterValueError, match="alpha must be > 0"):
        nap.LaplaceCensoredDirichletStat.joint_logp(sl, s0, np.array([-1.0, 2.0]), 100, 0.01, 0.1, **kw).eval(mode=fast)
    with pytest.raises(ParameterValueError, match="scale must be > 0"):
        nap.LaplaceCensoredDirichletStat.joint_logp(
            sl, s0, np.array([1.0, 2.0]), 100, 0.01, pt.constant(-0.1), **kw
        ).eval(mode=fast)
    with pytest.raises(NoiseawareValueError, match="scale"):
        nap.LaplaceCensoredDirichletStat.dist(np.array([1.0, 2.0]), 100, 0.01, -0.1)
    with pytest.raises(NoiseawareValueError, match="observed"), pm.Model():
        nap.LaplaceCensoredDirichletStat("s", np.array([1.0, 2.0]), 100, 0.01, 0.1, observed=np.array([1.0, np.nan]))
    # inside a model, PyMC turns the check into logp = -inf (check_bounds)
    with pm.Model() as m:
        al = pm.Data("al", np.array([1.0, 2.0]))
        nap.LaplaceCensoredDirichletStat("s", al, n=10, a=0.01, scale=0.1, observed=sl, **kw)
    logp = m.compile_logp(mode=fast)
    assert np.isfinite(logp(m.initial_point()))
    m.set_data("al", np.array([-1.0, 2.0]))
    assert logp(m.initial_point()) == -np.inf


# --------------------------------------------------------------------------- 7. censoring bias of eq. (6)
def _fit_alpha(s_l: np.ndarray, mode: str, n: int, a: float, b: float, alpha0: np.ndarray) -> np.ndarray:
    """Maximize the Gaussian approximation N(s_L; mu(alpha), Sigma(alpha)/n + 2 b^2 I) of the model."""

    @jax.jit
    def nll(log_alpha):
        law = nan.LaplaceCensoredDirichletStat(jnp.exp(log_alpha), n=n, a=a, scale=b, moments=mode)
        lat = law.latent
        cov = lat.covariance_matrix + 2 * b**2 * jnp.eye(s_l.size)
        return -core.mvn_logpdf(get_backend("jax"), jnp.asarray(s_l), lat.mean, cov)

    vg = jax.jit(jax.value_and_grad(nll))
    res = optimize.minimize(
        lambda z: tuple(np.asarray(t, dtype=float) for t in vg(z)), np.log(alpha0), jac=True, method="L-BFGS-B"
    )
    assert res.success, res.message
    return np.exp(res.x)


@pytest.mark.slow  # a Monte Carlo study of the bias (make test-slow)
def test_censored_moments_remove_the_bias_of_eq6_at_large_a():
    alpha_true = np.array([2.2, 3.3, 4.4])
    n, a = 20_000, 0.1  # P(x_1 < 0.1) = 0.22
    x = np.random.default_rng(7).dirichlet(alpha_true, size=n)
    rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=4.0, threshold=a, rng=np.random.default_rng(8))
    from noiseaware._core._dirichlet_release import select_part

    p = select_part(rel, None)
    for mode, unbiased in (("censored", True), ("asymptotic", False)):
        hat = _fit_alpha(p.s_l, mode, p.n, p.a, p.scale, alpha0=np.ones(3))
        # sampling covariance of hat by the delta method at the truth: J^-1 (Sigma/n + 2b^2) J^-T
        def mean_of(al, mode=mode):
            return nan.LaplaceCensoredDirichletStat(al, n=n, a=a, scale=p.scale, moments=mode).latent.mean

        f = jax.jacfwd(mean_of)
        jac = np.asarray(f(jnp.asarray(alpha_true)))
        _, cov = core.logmean_moments(NP, alpha_true, math.log(a), "censored")  # the truth's censored covariance
        vs = cov / n + 2 * p.scale**2 * np.eye(3)
        cov_hat = np.linalg.solve(jac, np.linalg.solve(jac, vs).T)
        diff = hat - alpha_true
        chi2 = float(diff @ np.linalg.solve(cov_hat, diff))
        limit = float(stats.chi2.isf(1e-4, 3))
        if unbiased:
            assert chi2 < limit, (hat, chi2)
        else:
            assert chi2 > 10 * limit, (hat, chi2)
            assert np.all(np.abs(diff / alpha_true) > 0.05)  # and the bias is material (> 5%)


@pytest.mark.slow  # make test-full: compiles the censored moments in two PyTensor backends (16 s)
def test_pymc_censored_moments_are_one_jax_node_in_both_pytensor_backends():
    """The censored moments in PyMC: one node run by the core's JAX code, the same under the C and JAX linkers.

    The joint log-density and its gradient in ``alpha`` against the core in NumPy and central
    differences of it.
    """
    import pytensor
    import pytensor.graph.traversal
    import pytensor.tensor as pt

    import noiseaware.pymc as nap
    from noiseaware._core._pytensor_ops import JaxMeanCov

    sl, s0, n, a, scale = np.array([-1.5, -1.0, -0.8]), np.array([-1.45, -1.05, -0.82]), 400, 0.05, 0.05
    alpha = pt.tensor("alpha", dtype="float64", shape=(3,))  # a model's alpha has a static shape
    lp = nap.LaplaceCensoredDirichletStat.joint_logp(sl, s0, alpha, n, a, scale)
    grad = pt.grad(lp, alpha)
    nodes = pytensor.graph.traversal.ancestors([lp, grad])
    assert len({v.owner for v in nodes if v.owner is not None and isinstance(v.owner.op, JaxMeanCov)}) == 1
    x = np.array([1.7, 2.9, 4.2])
    lc, gc = pytensor.function([alpha], [lp, grad])(x)
    with pytest.warns(UserWarning, match="Skipping Check"):  # PyTensor's JAX linker drops PyMC's parameter checks
        lj, gj = pytensor.function([alpha], [lp, grad], mode="JAX")(x)
    np.testing.assert_allclose([lj, *np.asarray(gj)], [lc, *gc], rtol=1e-12, atol=1e-12)

    def ref(al: np.ndarray) -> float:
        return float(core.stat_joint_logdensity(NP, sl, s0, al, n, math.log(a), scale, "censored"))

    assert abs(float(lc) - ref(x)) < 1e-9
    h = 1e-6
    fd = [(ref(x + h * e) - ref(x - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(gc, fd, rtol=1e-6, atol=1e-6)


def test_jax_node_outputs_are_writeable_copies_for_pytensor_in_place_rewrites():
    """PyTensor's in-place rewrites write into an Op's outputs: the JAX node must hand over owned arrays.

    ``np.asarray`` of a JAX array is a read-only view of JAX's buffer; under PyTensor's Python linker an
    in-place ``Mul`` on the covariance raised ("assignment destination is read-only").
    """
    import pytensor.tensor as pt

    from noiseaware._core._dirichlet import _censored_moments
    from noiseaware._core._pytensor_ops import JaxMeanCov, JaxMeanCovGrad

    x, c = np.array([1.7, 2.9, 4.2]), np.array(math.log(0.05))
    op = JaxMeanCov(_censored_moments, (67,))
    node = op.make_node(pt.tensor(dtype="float64", shape=(3,)), pt.tensor(dtype="float64", shape=()))
    outs: list[list] = [[None], [None]]
    op.perform(node, [x, c], outs)
    assert all(o[0].flags.writeable and o[0].flags.owndata for o in outs)
    gop = JaxMeanCovGrad(_censored_moments, (67,))
    gout: list[list] = [[None]]
    gop.perform(gop.make_node(x, c, np.ones(3), np.ones((3, 3))), [x, c, np.ones(3), np.ones((3, 3))], gout)
    assert gout[0][0].flags.writeable and gout[0][0].flags.owndata


def test_pytensor_censored_moments_take_a_traced_threshold_and_refuse_its_gradient():
    """The core's PyTensor route: a symbolic threshold is an input of the node (its value matches NumPy).

    The threshold is public data: a gradient in it is refused, not silently zero. The second-order term
    alone has no PyTensor route of its own (it is inside the node), which says so.
    """
    from pytensor.gradient import NullTypeGradError

    pbk = get_backend("pytensor")
    alpha, log_a = pt.tensor("alpha", dtype="float64", shape=(3,)), pt.dscalar("log_a")
    mean, cov = core.logmean_moments(pbk, alpha, log_a, "censored", core.pair_series_terms(math.log(0.05)))
    x = np.array([0.4, 1.3, 2.2])
    got = pytensor.function([alpha, log_a], [mean, cov])(x, math.log(0.05))
    want = core.logmean_moments(NP, x, math.log(0.05), "censored")
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-14)
    with pytest.raises(NullTypeGradError):
        pt.grad(pt.sum(cov), log_a)
    with pytest.raises(NoiseawareValueError, match="logmean_moments"):
        core.pair_censoring_term(pbk, alpha, math.log(0.05))
