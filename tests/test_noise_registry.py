"""The noise-law registry (``_core._noise.NOISE_LAWS``): one law per family, read by the mechanisms."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from noiseaware import mechanisms
from noiseaware._core import _noise, get_backend

NB = get_backend("numpy")
mpmath.mp.dps = 50


@pytest.mark.parametrize("sigma", [0.05, 0.3, 0.7, 0.999, 1.0, 1.0001, 2.5, 40.0, 1e6])
def test_discrete_gaussian_normalizer_against_mpmath(sigma):
    s = mpmath.mpf(sigma)
    K = int(60 * max(sigma, 1) + 20) if sigma < 1e3 else None
    if K is not None:
        z = mpmath.fsum(mpmath.exp(-(mpmath.mpf(k) ** 2) / (2 * s * s)) for k in range(-K, K + 1))
    else:  # theta form, exact in mpmath
        z = s * mpmath.sqrt(2 * mpmath.pi) * mpmath.jtheta(3, 0, mpmath.exp(-2 * mpmath.pi**2 * s * s))
    want = float(mpmath.log(z))
    got_core = float(_noise.discrete_gaussian_log_normalizer(NB, sigma))
    got_mech = mechanisms.discrete_gaussian_log_normalizer(sigma)
    assert got_core == got_mech  # one normaliser
    assert abs(got_core - want) <= 4e-16 * max(1.0, abs(want)), (got_core, want)


def test_every_additive_family_has_one_law_and_the_mechanisms_use_it():
    additive = {name for name, cls in mechanisms.MECHANISMS.items() if getattr(cls, "additive", False)}
    laws_additive = {name for name, law in _noise.NOISE_LAWS.items() if law.additive}
    assert additive == laws_additive, (additive, laws_additive)
    k = np.array([-7.0, -1.0, 0.0, 2.0, 30.0])
    cases = {
        "geometric": (mechanisms.GeometricMechanism(scale=2.5), -1 / 2.5),
        "discrete_gaussian": (mechanisms.DiscreteGaussianMechanism(sigma=1.7), 1.7),
        "laplace": (mechanisms.LaplaceMechanism(scale=0.8), 0.8),
        "gaussian": (mechanisms.GaussianMechanism(sigma=3.0), 3.0),
    }
    assert set(cases) == additive
    for fam, (mech, par) in cases.items():
        law = _noise.NOISE_LAWS[fam]
        np.testing.assert_array_equal(mech.noise_logpmf(k), law.logpdf(NB, k, 0.0, par))
        if law.integer:  # a pmf sums to one
            kk = np.arange(-400, 401, dtype=float)
            assert math.fsum(np.exp(law.logpdf(NB, kk, 0.0, par))) == pytest.approx(1.0, abs=1e-13)


def test_geometric_law_exact_at_huge_scale():
    """At scale 1e17 alpha rounds to 1 in float64; the log_alpha form stays exact."""
    m = mechanisms.GeometricMechanism(scale=1e17)
    assert m.alpha == 1.0  # what the alpha parameterisation would have to work with
    la = mpmath.mpf(-1) / mpmath.mpf(1e17)
    want = float(mpmath.log((1 - mpmath.exp(la)) / (1 + mpmath.exp(la))))
    assert float(m.noise_logpmf(0.0)) == pytest.approx(want, rel=1e-15)
    assert float(m.noise_logcdf(-1.0)) == pytest.approx(
        float(mpmath.log(mpmath.exp(la) / (1 + mpmath.exp(la)))), rel=1e-15
    )


@pytest.mark.parametrize("fam", sorted(f for f, law in _noise.NOISE_LAWS.items() if law.additive))
def test_laws_agree_across_backends(fam):
    import pytensor.tensor as pt

    import noiseaware.numpyro  # noqa: F401  (float64 in JAX)

    law = _noise.NOISE_LAWS[fam]
    par = -0.4 if law.parameter == "log_alpha" else 1.3
    x = np.array([-3.0, 0.0, 1.0, 4.0])
    want = law.logpdf(NB, x, 0.5 if not law.integer else 0.0, par)
    jb = get_backend("jax")
    got_j = np.asarray(law.logpdf(jb, jb.asarray(x), 0.5 if not law.integer else 0.0, par))
    got_p = law.logpdf(get_backend("pytensor"), pt.as_tensor(x), 0.5 if not law.integer else 0.0, par).eval()
    np.testing.assert_allclose(got_j, want, rtol=1e-14)
    np.testing.assert_allclose(got_p, want, rtol=1e-14)
    if law.logcdf is not None:
        grid = np.arange(-3000, 3001, dtype=float) * (1.0 if law.integer else 0.01)
        dens = np.exp(law.logpdf(NB, grid, 0.0, par))
        cdf = np.cumsum(dens) * (1.0 if law.integer else 0.01)
        got = np.exp(law.logcdf(NB, grid, 0.0, par))
        tol = 1e-12 if law.integer else 1e-2  # Riemann sum for the continuous law
        np.testing.assert_allclose(got[::500], cdf[::500], atol=tol)


# ---------------------------------------------------------------------------------------------
# The whole registry: every mechanism family with a closed-form output law has one entry, and the
# mechanisms, augment and the front ends read it. Independent references are written out here.


#: One mechanism per family, with the parameters its law reads.
def _cases():
    return {
        "geometric": mechanisms.GeometricMechanism(scale=2.5),
        "discrete_gaussian": mechanisms.DiscreteGaussianMechanism(sigma=1.7),
        "laplace": mechanisms.LaplaceMechanism(scale=0.8),
        "gaussian": mechanisms.GaussianMechanism(sigma=3.0),
        "randomized_response": mechanisms.RandomizedResponse(k=5, p=0.6),
        "tgm": mechanisms.TGM(scale=1.5, lower=-3, upper=6),
        "btgm": mechanisms.BTGM(scale=1.5, lower=-3, upper=6),
        "rgm": mechanisms.RGM(epsilon=0.7, lower=-3, upper=6),
    }


def test_registry_is_complete():
    """Every mechanism family is in the registry except the exponential mechanism (a selection rule)."""
    assert set(mechanisms.MECHANISMS) - set(_noise.NOISE_LAWS) == {"exponential"}
    assert set(_noise.NOISE_LAWS) <= set(mechanisms.MECHANISMS)
    assert set(_cases()) == set(_noise.NOISE_LAWS)
    for fam, law in _noise.NOISE_LAWS.items():
        assert law.family == fam and law.rule, fam
        assert law.parameters[0] == law.parameter


def _reference_logpmf(fam, mech, s, m):
    """Independent brute-force laws (no registry code): written from the seed papers' definitions."""
    if fam == "randomized_response":
        k, p = mech.k, mech.p
        return np.where((s >= 0) & (s < k), np.where(s == m, math.log(p), math.log((1 - p) / (k - 1))), -np.inf)
    a = math.exp(-1.0 / mech.scale) if fam in ("tgm", "btgm") else math.exp(-mech.epsilon_prime / mech.sensitivity)
    L, U = mech.lower, mech.upper
    ks = np.arange(-400, 401)
    out = np.full(np.broadcast(s, m).shape, -np.inf)
    for idx in np.ndindex(out.shape):
        si, mi = np.broadcast_to(s, out.shape)[idx], np.broadcast_to(m, out.shape)[idx]
        if not (L <= si <= U):
            continue
        if fam == "rgm":
            z = math.fsum(a ** abs(j - mi) for j in range(L, U + 1))
            out[idx] = math.log(a ** abs(si - mi) / z)
        else:  # TGM: clamp of m + K, K two-sided geometric, summed over the noise
            pk = (1 - a) / (1 + a) * a ** np.abs(ks)
            y = np.clip(mi + ks, L, U)
            out[idx] = math.log(math.fsum(pk[y == si]))
    return out


@pytest.mark.parametrize("fam", ["randomized_response", "tgm", "btgm", "rgm"])
def test_output_laws_match_brute_force_and_the_mechanisms(fam):
    mech = _cases()[fam]
    law = _noise.NOISE_LAWS[fam]
    params = law.params_of(mech)
    if fam == "randomized_response":
        s, m = np.arange(-1, 6, dtype=float)[:, None], np.arange(0, 5, dtype=float)[None, :]
    else:
        s, m = np.arange(-4, 8, dtype=float)[:, None], np.arange(-3, 7, dtype=float)[None, :]
    got = law.logpdf(NB, s, m, *params)
    want = _reference_logpmf(fam, mech, s, m)
    fin = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), fin)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-12, atol=0)
    out = mech.table[(s - mech.lower).clip(0, mech.upper - mech.lower).astype(int)] if fam == "btgm" else s
    mech_lp = mech.log_prob(out, m)
    if fam == "btgm":  # the mechanism maps its released posterior means back to the TGM output
        inside = (s >= mech.lower) & (s <= mech.upper)
        np.testing.assert_array_equal(np.where(inside, mech_lp, -np.inf), got)
    else:
        np.testing.assert_array_equal(mech_lp, got)
    # a pmf over the outputs, for every true value
    np.testing.assert_allclose(np.exp(got).sum(axis=0)[: m.size], 1.0, rtol=1e-12)
    # and the brute-force check can fail: a wrong parameter is told apart
    wrong = tuple(p * 1.3 if isinstance(p, float) else p for p in params)
    assert np.max(np.abs(law.logpdf(NB, s, m, *wrong)[fin] - want[fin])) > 1e-3


def test_tgm_logcdf_is_the_cumulative_pmf():
    mech = _cases()["tgm"]
    law = _noise.NOISE_LAWS["tgm"]
    s = np.arange(-6, 10, dtype=float)[:, None]
    m = np.arange(-3, 7, dtype=float)[None, :]
    pmf = np.exp(law.logpdf(NB, s, m, *law.params_of(mech)))
    cdf = np.exp(law.logcdf(NB, s, m, *law.params_of(mech)))
    np.testing.assert_allclose(cdf, np.cumsum(pmf, axis=0), rtol=1e-12, atol=1e-300)


def test_gaussian_logcdf_deep_tails_every_backend():
    import pytensor.tensor as pt
    from scipy import stats

    import noiseaware.numpyro  # noqa: F401  (float64 in JAX)

    law = _noise.NOISE_LAWS["gaussian"]
    x = np.array([-120.0, -38.0, -5.0, 0.0, 3.0, 9.0])
    want = stats.norm.logcdf(x, loc=1.0, scale=2.0)
    for name in ("numpy", "jax", "pytensor"):
        bk = get_backend(name)
        got = law.logcdf(bk, bk.asarray(x) if name != "pytensor" else pt.as_tensor(x), 1.0, 2.0)
        got = got.eval() if name == "pytensor" else np.asarray(got)
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("fam", ["randomized_response", "tgm", "rgm"])
def test_output_laws_agree_across_backends(fam):
    import pytensor.tensor as pt

    import noiseaware.numpyro  # noqa: F401

    mech = _cases()[fam]
    law = _noise.NOISE_LAWS[fam]
    s = np.array([-4.0, -3.0, 0.0, 2.0, 4.0, 6.0, 7.0])
    m = np.array([0.0, 1.0, -3.0, 2.0, 4.0, 5.0, 9.0])
    want = law.logpdf(NB, s, m, *law.params_of(mech))
    jb = get_backend("jax")
    got_j = np.asarray(law.logpdf(jb, jb.asarray(s), jb.asarray(m), *law.params_of(mech)))
    got_p = law.logpdf(get_backend("pytensor"), pt.as_tensor(s), pt.as_tensor(m), *law.params_of(mech)).eval()
    np.testing.assert_allclose(got_j, want, rtol=1e-14)
    np.testing.assert_allclose(got_p, want, rtol=1e-14)


@pytest.mark.parametrize("fam", sorted(f for f, law in _noise.NOISE_LAWS.items() if law.draw is not None))
def test_draws_from_uniforms_follow_the_law(fam):
    """Chi-square goodness of fit of the registry's draws against its own density (and a wrong one fails)."""
    from scipy import stats

    mech = _cases()[fam]
    law = _noise.NOISE_LAWS[fam]
    params = law.params_of(mech)
    rng = np.random.default_rng(7)
    n = 40_000
    value = 2.0
    out = np.asarray(law.draw(NB, rng.random(law.uniform_shape((n,))), np.full(n, value), *params))
    if law.integer:
        lo, hi = np.quantile(out, [0.001, 0.999])
        cells = np.arange(lo, hi + 1)
        probs = np.exp(law.logpdf(NB, cells, value, *params))
    else:  # continuous: 30 cells of a grid, probabilities by the CDF
        lo, hi = np.quantile(out, [0.001, 0.999])
        edges = np.linspace(lo, hi, 31)
        cdf = np.exp(law.logcdf(NB, edges, value, *params))
        probs = np.diff(cdf)
        cells = edges

    def chi2_p(p_cells):
        if law.integer:
            obs = np.array([(out == c).sum() for c in cells], dtype=float)
        else:
            obs = np.histogram(out, bins=edges)[0].astype(float)
        keep = p_cells * n > 5
        exp_ = p_cells[keep] / p_cells[keep].sum() * obs[keep].sum()
        return stats.chisquare(obs[keep], exp_).pvalue

    assert chi2_p(probs) > 1e-4
    # the same test rejects the law of a mechanism twice as noisy
    wrong = tuple(p * 2.0 if name in ("log_alpha", "scale", "sigma") else p for name, p in zip(law.parameters, params))
    if fam == "geometric" or fam in ("tgm", "btgm"):
        wrong = tuple(p * 0.5 if name == "log_alpha" else p for name, p in zip(law.parameters, params))
    if fam == "randomized_response":
        wrong = (params[0], 0.4)
    if law.integer:
        wprobs = np.exp(law.logpdf(NB, cells, value, *wrong))
    else:
        wprobs = np.diff(np.exp(law.logcdf(NB, edges, value, *wrong)))
    assert chi2_p(wprobs) < 1e-6


@pytest.mark.parametrize("fam", sorted(mechanisms.MECHANISMS))
def test_each_guarantee_is_written_once_in_its_law(fam):
    """A mechanism with a noise law takes ``guarantee()`` from it (no formula of its own); the others override it."""
    from noiseaware.mechanisms._base import Guarantee, Mechanism

    cls = mechanisms.MECHANISMS[fam]
    law = _noise.NOISE_LAWS.get(fam)
    if law is None:  # the exponential mechanism: a selection rule over scores, not a noise law
        assert cls.guarantee is not Mechanism.guarantee
        return
    assert cls.guarantee is Mechanism.guarantee, f"{cls.__name__} writes its guarantee again"
    mech = _cases()[fam]
    assert mech.guarantee() == Guarantee(**law.guarantee_of(mech))


@pytest.mark.parametrize("fam", ["geometric", "laplace", "tgm", "btgm", "randomized_response"])
def test_pure_guarantee_of_the_law_is_its_largest_log_ratio(fam):
    """Brute force on the law's own density: epsilon is the largest log-ratio between neighbouring inputs."""
    mech = _cases()[fam]
    law = _noise.NOISE_LAWS[fam]
    eps = law.guarantee_of(mech)["epsilon"]
    params = law.params_of(mech)
    if fam == "randomized_response":
        out, pairs = np.arange(mech.k, dtype=np.float64), [(0.0, 1.0), (1.0, 0.0)]
    elif fam in ("tgm", "btgm"):
        out = np.arange(mech.lower, mech.upper + 1, dtype=np.float64)
        pairs = [(m, m + 1.0) for m in range(mech.lower, mech.upper)]
    else:  # integer outputs for the geometric law (its pmf is -inf elsewhere)
        out = np.arange(-40.0, 41.0) if law.integer else np.linspace(-40.0, 40.0, 801)
        pairs = [(0.0, float(mech.sensitivity))]
    worst = max(
        float(np.max(np.abs(law.logpdf(NB, out, a, *params) - law.logpdf(NB, out, b, *params)))) for a, b in pairs
    )
    assert worst == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("fam", ["tgm", "rgm", "randomized_response", "geometric"])
def test_augment_reads_the_registry(fam):
    from noiseaware.augment import mechanism_log_density

    mech = _cases()[fam]
    s_dp = np.array([0.0, 2.0, 4.0])
    s = np.array([1.0, 2.0, 0.0])
    got = float(mechanism_log_density(mech)(s_dp, s))
    want = float(np.sum(mech.log_prob(s_dp, s)))
    assert got == pytest.approx(want, rel=1e-14)
