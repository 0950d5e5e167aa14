"""Generic mechanism tests driven by the case registry in mechanism_cases.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from noiseaware import mechanisms as M
from noiseaware.mechanisms import _opendp

from .mechanism_cases import CASE_IDS, CASES, Case

P_THRESHOLD = 1e-6  # spurious failure rate of each goodness-of-fit test


def _discrete(c: Case) -> bool:
    return c.support is not None


def _log_prob(mech: M.Mechanism, out, value):
    if isinstance(mech, M.ExponentialMechanism):
        return mech.log_prob(out, value)
    return mech.log_prob(out, value)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_normalized(case: Case) -> None:
    if _discrete(case):
        total = math.fsum(np.exp(_log_prob(case.mech, case.support, case.value)))
        assert abs(total - 1.0) < 1e-9
    else:
        f = lambda y: float(np.exp(case.mech.log_prob(y, case.value)))  # noqa: E731
        total = (
            integrate.quad(f, -np.inf, case.value, epsabs=1e-13)[0]
            + integrate.quad(f, case.value, np.inf, epsabs=1e-13)[0]
        )
        assert abs(total - 1.0) < 1e-9


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_matches_independent_reference(case: Case) -> None:
    if _discrete(case):
        got = np.exp(_log_prob(case.mech, case.support, case.value))
        np.testing.assert_allclose(got, case.ref_pmf(case.support), rtol=1e-10, atol=1e-14)
    else:
        x = case.value + np.linspace(-20, 20, 81)
        got = case.mech.noise_cdf(x - case.value)
        np.testing.assert_allclose(got, case.ref_cdf(x), rtol=1e-10, atol=1e-14)
        # density is the derivative of the reference cdf
        h = 1e-5
        num = (case.ref_cdf(x + h) - case.ref_cdf(x - h)) / (2 * h)
        np.testing.assert_allclose(np.exp(case.mech.log_prob(x, case.value)), num, rtol=1e-5, atol=1e-10)


@pytest.mark.parametrize(
    "case", [c for c in CASES if getattr(c.mech, "additive", False) and _discrete(c)], ids=lambda c: c.id
)
def test_cdf_is_cumulative_pmf(case: Case) -> None:
    k = case.support - case.value
    pmf = np.exp(case.mech.noise_logpmf(k))
    lower_tail = case.mech.noise_cdf(k[0] - 1)
    np.testing.assert_allclose(case.mech.noise_cdf(k), lower_tail + np.cumsum(pmf), rtol=0, atol=1e-12)


def test_out_of_support_is_minus_inf() -> None:
    g = M.GeometricMechanism(scale=2.0)
    assert np.isneginf(g.log_prob(1.5, 0))
    tgm = M.TGM.from_epsilon(1.0, 0, 5)
    assert np.isneginf(tgm.log_prob([-1, 6], 2)).all()
    rgm = M.RGM(1.0, 0, 5)
    assert np.isneginf(rgm.log_prob([-1, 6, 2.5], 2)).all()
    btgm = M.BTGM.from_epsilon(1.0, 0, 5)
    assert np.isneginf(btgm.log_prob(2.0, 2))  # 2.0 is not a BTGM output
    assert np.isneginf(M.RandomizedResponse(k=3, p=0.5).log_prob([3, -1], 0)).all()
    assert np.isneginf(M.DiscreteGaussianMechanism(1.0).log_prob(0.5, 0))


# ------------------------------------------------------------------------------------ privacy
def _max_log_ratio(case: Case) -> float:
    worst = 0.0
    for x, xp in case.neighbours:
        if _discrete(case):
            ys = case.support if not isinstance(case.mech, M.GeometricMechanism) else np.arange(x - 300, x + 301)
        else:
            ys = np.linspace(x - 30, x + 30, 6001)
        lp = case.mech.log_prob(ys, x)
        lq = case.mech.log_prob(ys, xp)
        ok = np.isfinite(lp) | np.isfinite(lq)
        assert np.all(np.isfinite(lp[ok]) & np.isfinite(lq[ok])), "support must not depend on the input"
        worst = max(worst, float(np.max(np.abs(lp[ok] - lq[ok]))))
    return worst


@pytest.mark.parametrize("case", [c for c in CASES if c.neighbours], ids=lambda c: c.id)
def test_exact_privacy_loss_equals_claim(case: Case) -> None:
    assert case.mech.guarantee().epsilon == pytest.approx(case.claimed, rel=1e-12)
    assert _max_log_ratio(case) == pytest.approx(case.claimed, abs=1e-9)


def _exp_worst(em: M.ExponentialMechanism, base: np.ndarray) -> float:
    d = em.sensitivity
    worst = 0.0
    for shifts in np.array(np.meshgrid(*[[-d, 0.0, d]] * base.size)).reshape(base.size, -1).T:
        lp = em.log_prob(np.arange(base.size), base)
        lq = em.log_prob(np.arange(base.size), base + shifts)
        worst = max(worst, float(np.max(np.abs(lp - lq))))
    return worst


def test_exponential_mechanism_exact_privacy_loss() -> None:
    """The loss never exceeds epsilon and reaches it when the other candidates dominate."""
    em = M.ExponentialMechanism(epsilon=1.2, sensitivity=0.5)
    rng = np.random.default_rng(3)
    for _ in range(20):
        assert _exp_worst(em, rng.normal(0, 2, size=3)) <= 1.2 + 1e-12
    # candidate 0 has negligible weight: the bound exp(epsilon) is attained to 1e-9
    assert _exp_worst(em, np.array([-60.0, 0.0, 0.0])) == pytest.approx(1.2, abs=1e-9)
    assert em.guarantee().rho == pytest.approx(1.2**2 / 8)


@pytest.mark.parametrize("sigma,sens", [(0.7, 1), (2.5, 1), (6.25, 2), (30.0, 3)])
def test_discrete_gaussian_renyi_divergence_equals_claim(sigma: float, sens: int) -> None:
    """For integer orders a and integer shifts, D_a = a * rho exactly (brute-force sums)."""
    m = M.DiscreteGaussianMechanism(sigma=sigma, sensitivity=sens)
    ys = np.arange(-int(40 * sigma) - 10 * sens, int(40 * sigma) + 10 * sens + 1)
    lp = m.log_prob(ys, 0)
    lq = m.log_prob(ys, sens)
    for a in (2, 3, 5, 10):
        from scipy.special import logsumexp

        d_a = logsumexp(a * lp + (1 - a) * lq) / (a - 1)
        assert d_a / a == pytest.approx(m.rho, rel=1e-9)


def test_gaussian_renyi_divergence_equals_claim() -> None:
    m = M.GaussianMechanism(sigma=1.7, sensitivity=0.9)
    for a in (1.5, 2.0, 7.0):
        f = lambda y: math.exp(a * m.log_prob(y, 0.0) + (1 - a) * m.log_prob(y, 0.9))  # noqa: E731
        d_a = math.log(integrate.quad(f, -40, 40, epsabs=1e-14)[0]) / (a - 1)
        assert d_a / a == pytest.approx(m.rho, rel=1e-8)


@pytest.mark.parametrize(
    "kind,mech,d_in,claim",
    [
        ("discrete_laplace", M.GeometricMechanism.from_epsilon(0.3, sensitivity=2), 2, ("epsilon", 0.3)),
        ("laplace", M.LaplaceMechanism.from_epsilon(0.8, sensitivity=1.5), 1.5, ("epsilon", 0.8)),
        ("discrete_gaussian", M.DiscreteGaussianMechanism(sigma=6.25, sensitivity=2**0.5), 2**0.5, ("rho", None)),
        ("gaussian", M.GaussianMechanism.from_rho(0.25, sensitivity=1.0), 1.0, ("rho", 0.25)),
    ],
)
def test_guarantee_agrees_with_opendp_privacy_map(kind, mech, d_in, claim) -> None:
    scale = getattr(mech, "scale", None) or mech.sigma
    theirs = _opendp.privacy_map(kind, scale, d_in)
    ours = getattr(mech.guarantee(), claim[0])
    assert theirs == pytest.approx(ours, rel=1e-9)
    if claim[1] is not None:
        assert ours == pytest.approx(claim[1], rel=1e-12)


def test_exponential_guarantee_agrees_with_opendp() -> None:
    em = M.ExponentialMechanism(epsilon=0.9, sensitivity=2.0)
    assert _opendp.privacy_map("gumbel_max", em.scale, 2.0) == pytest.approx(em.guarantee().rho, rel=1e-9)


# --------------------------------------------------------------------- BTGM / RGM specifics
def _btgm_brute(m: float, alpha: float, lo: int, hi: int) -> float:
    grid = np.arange(lo, hi + 1, dtype=float)
    logw = np.abs(m - grid) * math.log(alpha)
    w = np.exp(logw - logw.max())
    return float((w * grid).sum() / w.sum())


@pytest.mark.parametrize("eps", [1e-3, 0.05, 0.25, 1.0, 4.0, 10.0])
@pytest.mark.parametrize("lo,hi", [(0, 1), (0, 25), (3, 40), (0, 2000)])
def test_btgm_closed_form_equals_brute_force_posterior_mean(eps: float, lo: int, hi: int) -> None:
    alpha = math.exp(-eps)
    ms = np.unique(np.concatenate([np.arange(lo - 5, min(hi, lo + 30) + 1), np.arange(max(lo, hi - 30), hi + 6)]))
    closed = M.btgm_posterior_mean(ms, alpha, lo, hi)
    brute = np.array([_btgm_brute(float(np.clip(m, lo, hi)), alpha, lo, hi) for m in ms])
    np.testing.assert_allclose(closed, brute, rtol=1e-9 / max(1, hi), atol=1e-9 * max(1, hi - lo) ** 0.5)


def test_btgm_is_strictly_increasing_inside_range() -> None:
    tab = M.BTGM.from_epsilon(0.1, 0, 50).table
    assert np.all(np.diff(tab) > 0)
    assert tab[0] > 0 and tab[-1] < 50


@pytest.mark.parametrize("eps,lo,hi,sens", [(0.25, 0, 25, 1), (1.0, 0, 500, 1), (0.01, 0, 10, 1), (2.0, 0, 30, 3)])
def test_rgm_epsilon_prime_solves_s1_with_brute_force_g(eps, lo, hi, sens) -> None:
    rgm = M.RGM(epsilon=eps, lower=lo, upper=hi, sensitivity=sens)
    ep = rgm.epsilon_prime
    assert 0 < ep <= eps
    # brute-force g: largest ratio of normalizers over neighbouring true values in [L, U]
    z = np.array([np.exp(rgm.log_normalizer(m)) for m in range(lo, hi + 1)])
    ratios = [z[j] / z[i] for i in range(z.size) for j in range(z.size) if abs(i - j) <= sens]
    assert ep + math.log(max(ratios)) == pytest.approx(eps, abs=1e-12)


def test_rgm_rejects_inconsistent_epsilon_prime() -> None:
    with pytest.raises(ValueError, match="epsilon_prime"):
        M.RGM(epsilon=1.0, lower=0, upper=10, epsilon_prime=0.9)


# ------------------------------------------------------------------------------- sampling
def _chisq_pvalue(samples: np.ndarray, case: Case) -> float:
    if _discrete(case):
        if isinstance(case.mech, M.BTGM):
            idx = np.searchsorted(case.support, samples - 1e-9)
            idx = np.clip(idx, 0, case.support.size - 1)
            if not np.allclose(case.support[idx], samples, rtol=1e-12, atol=0):
                return 0.0  # outputs the claimed law gives probability 0
            cats = idx
            probs = case.ref_pmf(case.support)
        else:
            cats = samples - case.support[0]
            assert cats.min() >= 0 or isinstance(case.mech, M.GeometricMechanism | M.DiscreteGaussianMechanism)
            probs = case.ref_pmf(case.support)
            inside = (cats >= 0) & (cats < case.support.size)
            cats = np.where(inside, cats, -1)
        counts = np.bincount(cats[cats >= 0].astype(int), minlength=case.support.size).astype(float)
        n = samples.size
        exp = probs * n
        # pool cells with small expectation into their neighbours, left to right
        obs_p, exp_p, acc_o, acc_e = [], [], 0.0, 0.0
        for o, e in zip(counts, exp, strict=True):
            acc_o += o
            acc_e += e
            if acc_e >= 10:
                obs_p.append(acc_o)
                exp_p.append(acc_e)
                acc_o = acc_e = 0.0
        # mass outside the support window (if any) joins the last cell
        outside = n - counts.sum()
        acc_o += outside
        acc_e += n - exp.sum()
        obs_p[-1] += acc_o
        exp_p[-1] += acc_e
        obs, ex = np.array(obs_p), np.array(exp_p)
    else:
        u = case.ref_cdf(samples)
        obs = np.bincount(np.minimum((u * 40).astype(int), 39), minlength=40).astype(float)
        ex = np.full(40, samples.size / 40)
    stat = float(((obs - ex) ** 2 / ex).sum())
    return float(stats.chi2.sf(stat, obs.size - 1))


def _draw(mech: M.Mechanism, value, n: int, rng=None) -> np.ndarray:
    if isinstance(mech, M.ExponentialMechanism):
        return mech.release(np.broadcast_to(value, (n, np.size(value))), rng=rng)
    return mech.release(np.full(n, value), rng=rng)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_simulation_sampler_fits_its_law_and_wrong_scale_is_rejected(case: Case) -> None:
    rng = np.random.default_rng(abs(hash(case.id)) % 2**32)
    assert _chisq_pvalue(_draw(case.mech, case.value, case.sim_draws, rng), case) > P_THRESHOLD
    assert _chisq_pvalue(_draw(case.wrong, case.value, case.sim_draws, rng), case) < P_THRESHOLD


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_secure_sampler_fits_its_law_and_wrong_scale_is_rejected(case: Case) -> None:
    assert _chisq_pvalue(_draw(case.mech, case.value, case.secure_draws), case) > P_THRESHOLD
    # the same threshold at the same number of draws has the power to reject 10% off
    rng = np.random.default_rng(7)
    assert _chisq_pvalue(_draw(case.wrong, case.value, case.secure_draws, rng), case) < P_THRESHOLD


def test_secure_is_default_and_simulation_needs_generator() -> None:
    g = M.GeometricMechanism.from_epsilon(1.0)
    with pytest.raises(TypeError, match=r"rng must be a numpy\.random\.Generator"):
        g.release([1, 2], rng=123)  # type: ignore[arg-type]
    a = g.release([0] * 5, rng=np.random.default_rng(1))
    b = g.release([0] * 5, rng=np.random.default_rng(1))
    assert np.array_equal(a, b)


def test_range_mechanisms_refuse_true_values_outside_bounds() -> None:
    for mech in (M.TGM.from_epsilon(1.0, 0, 5), M.BTGM.from_epsilon(1.0, 0, 5), M.RGM(1.0, 0, 5)):
        with pytest.raises(ValueError, match=r"must lie in \[lower, upper\]"):
            mech.release([6])


# ------------------------------------------------------------------------------ parameters
@pytest.mark.parametrize(
    "factory,match",
    [
        (lambda: M.GeometricMechanism(scale=0.0), "scale must be a finite number > 0; got scale=0.0"),
        (lambda: M.GeometricMechanism(scale=float("nan")), "scale must be a finite number > 0"),
        (lambda: M.GeometricMechanism(scale="1"), "scale must be a real number"),
        (lambda: M.GeometricMechanism(scale=1.0, sensitivity=0), "sensitivity must be an integer >= 1"),
        (lambda: M.GeometricMechanism.from_alpha(1.5), r"alpha must be in \(0, 1\); got alpha=1.5"),
        (lambda: M.GeometricMechanism.from_epsilon(-1.0), "epsilon must be a finite number > 0"),
        (lambda: M.GeometricMechanism.from_epsilon(float("inf")), "epsilon must be a finite number > 0"),
        (lambda: M.LaplaceMechanism(scale=-2.0), "scale must be a finite number > 0"),
        (lambda: M.GaussianMechanism(sigma=0.0), "sigma must be a finite number > 0"),
        (lambda: M.DiscreteGaussianMechanism.from_rho(0.0), "rho must be a finite number > 0"),
        (lambda: M.RandomizedResponse(k=1, p=0.9), "k must be an integer >= 2"),
        (lambda: M.RandomizedResponse(k=2, p=0.3), r"p must be in \[1/k, 1\)"),
        (lambda: M.TGM.from_epsilon(1.0, 5, 2), "lower <= upper"),
        (lambda: M.RGM(epsilon=1.0, lower=0, upper=2.5), "upper must be an integer"),
        (lambda: M.ExponentialMechanism(epsilon=0.0), "epsilon must be a finite number > 0"),
    ],
)
def test_bad_parameters_raise_named_errors(factory, match) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        factory()


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_mechanism_dict_round_trip(case: Case) -> None:
    d = case.mech.to_dict()
    assert M.mechanism_from_dict(d) == case.mech


def test_discrete_gaussian_normalizer_branches_agree() -> None:
    # Poisson summation (sigma >= 1) against the direct sum at the switch point and far above
    for s in (1.0, 1.3, 5.0, 200.0):
        k = np.arange(-int(40 * s) - 5, int(40 * s) + 6, dtype=float)
        from scipy.special import logsumexp

        assert M.discrete_gaussian_log_normalizer(s) == pytest.approx(
            float(logsumexp(-(k**2) / (2 * s * s))), rel=1e-14
        )


@pytest.mark.parametrize("case", [c for c in CASES if isinstance(c.mech, M.TGM | M.RGM)], ids=lambda c: c.id)
def test_bounded_cdf_is_cumulative_law(case: Case) -> None:
    sup = case.support
    pmf = case.ref_pmf(sup)
    np.testing.assert_allclose(case.mech.cdf(sup, case.value), np.cumsum(pmf), rtol=0, atol=1e-12)
    assert case.mech.cdf(sup[0] - 1, case.value) == 0.0
    assert case.mech.cdf(sup[-1] + 5, case.value) == pytest.approx(1.0, abs=1e-12)
    # broadcasting over true values
    assert case.mech.cdf(sup[:, None], np.array([case.value, case.value])).shape == (sup.size, 2)
