"""Generic suite: every registered case against every backend (no per-class branches here)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from . import backends
from .cases import CASES, NO_CASE

CASE_IDS = [c.id for c in CASES]
#: Chi-square tests reject at p < 1e-7: with ~30 such tests the chance of any spurious failure
#: is below 3e-6 (and the seeds are fixed).
P_REJECT = 1e-7
N_DRAWS = 20_000


def cases_with(cap):
    return [pytest.param(c, id=c.id) for c in CASES if cap in c.caps]


all_cases = [pytest.param(c, id=c.id) for c in CASES]
backend_names = pytest.mark.parametrize("bname", backends.BACKENDS)


def test_every_exported_distribution_has_a_case():
    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    def dists(module) -> set[str]:  # __all__ also lists sentinels such as RELEASE_VALUES
        return {name for name in module.__all__ if isinstance(getattr(module, name), type)}

    assert dists(nan) == dists(nap)
    covered = {c.name for c in CASES} | set(NO_CASE)
    assert dists(nap) <= covered, dists(nap) - covered


_LOGP_MEMO: dict = {}


def cached_logp(bname, case, x):
    """``logp`` at the case's own parameters, memoized within a worker (shared by two tests)."""
    key = (bname, case.id, x.shape, x.tobytes())
    if key not in _LOGP_MEMO:
        _LOGP_MEMO[key] = backends.get(bname).logp(case, case.params, x)
    return _LOGP_MEMO[key]


def values_for(be, case):
    """The case's values, without non-integers for a backend whose value type is int64 (PyMC)."""
    if be.non_integer_values:
        return case.values
    keep = np.all(
        np.isfinite(case.values) & (case.values == np.round(case.values)), axis=tuple(range(1, case.values.ndim))
    )
    return case.values[keep]


@backend_names
@pytest.mark.parametrize("case", all_cases)
def test_reference_agreement(case, bname):
    be = backends.get(bname)
    x = values_for(be, case)
    got = cached_logp(bname, case, x)
    want = case.reference(case.params, x)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    fin = np.isfinite(want)
    assert np.max(np.abs(got[fin] - want[fin])) <= case.tol


@pytest.mark.parametrize("case", all_cases)
def test_backend_agreement(case):
    x = values_for(backends.get("pymc"), case)
    vals = [cached_logp(b, case, x) for b in backends.BACKENDS]
    fin = np.isfinite(vals[0])
    for other in vals[1:]:
        np.testing.assert_array_equal(np.isfinite(other), fin)
        assert np.max(np.abs(other[fin] - vals[0][fin])) <= 1e-9


@backend_names
@pytest.mark.parametrize("case", cases_with("normalization"))
def test_mass_sums_to_one(case, bname):
    _, lo, hi = case.marginals[0]
    k = np.arange(lo, hi + 1, dtype=np.float64)
    total = np.sum(np.exp(backends.get(bname).logp(case, case.params, k)))
    assert abs(total - 1.0) < 1e-11


@pytest.mark.parametrize("bname", ["numpy", "numpyro", "pymc"])
@pytest.mark.parametrize("case", cases_with("cdf"))
def test_cdf_consistent_with_pmf(case, bname):
    be = backends.get(bname)
    _, lo, hi = case.marginals[0]
    k = np.arange(lo, hi + 1, dtype=np.float64)
    cdf = be.cdf(case, case.params, k)
    pmf = np.exp(be.logp(case, case.params, k))
    np.testing.assert_allclose(np.diff(cdf), pmf[1:], rtol=1e-9, atol=1e-15)
    assert cdf[0] < 1e-13 and abs(cdf[-1] - 1.0) < 1e-13
    np.testing.assert_allclose(cdf, case.cdf_reference(case.params, k), rtol=1e-10, atol=1e-15)
    if be.non_integer_values:  # non-integer arguments use the floor
        np.testing.assert_allclose(be.cdf(case, case.params, k[:-1] + 0.5), cdf[:-1], rtol=1e-12)


def chi2_pvalue(draws, logpmf, lo, hi):
    """Pearson chi-square of integer draws against a pmf on [lo, hi]; bins pooled to expected >= 5."""
    k = np.arange(lo, hi + 1)
    expected = np.exp(logpmf(k.astype(np.float64))) * draws.size
    observed = np.bincount(np.clip(draws - lo, 0, hi - lo).astype(np.int64), minlength=k.size).astype(float)
    # pool from both ends into bins with expected >= 5
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


@backend_names
@pytest.mark.parametrize("case", cases_with("sample"))
def test_samples_match_pmf_and_reject_wrong_law(case, bname):
    draws = np.asarray(backends.get(bname).sample(case, case.params, N_DRAWS, seed=20260))
    assert draws.shape == (N_DRAWS,) if case.event_dim == 0 else draws.shape[0] == N_DRAWS
    assert np.all(draws == np.round(draws))
    cols = draws.reshape(N_DRAWS, -1)
    for j, (marg, lo, hi) in enumerate(case.marginals):
        p_ok = chi2_pvalue(cols[:, j], lambda k, m=marg: m(case.params, k), lo, hi)
        assert p_ok > P_REJECT, (j, p_ok)
    # the same test has power against a slightly wrong law (in at least one component)
    p_wrong = min(
        chi2_pvalue(cols[:, j], lambda k, m=marg: m(case.wrong, k), lo, hi)
        for j, (marg, lo, hi) in enumerate(case.marginals)
    )
    assert p_wrong < P_REJECT


@pytest.mark.parametrize("bname", ["numpyro", "pymc"])
@pytest.mark.parametrize("case", cases_with("grad"))
def test_gradients_match_finite_differences(case, bname):
    be = backends.get(bname)
    core = backends.get("numpy")
    fin = np.isfinite(case.reference(case.params, case.values))
    x = case.values[fin]
    got = be.grads(case, case.params, case.grad_params, x)
    for pname in case.grad_params:
        theta = float(case.params[pname])
        h = 1e-5 * max(1.0, abs(theta))
        up = core.logp(case, {**case.params, pname: theta + h}, x).sum()
        dn = core.logp(case, {**case.params, pname: theta - h}, x).sum()
        fd = (up - dn) / (2 * h)
        assert abs(got[pname] - fd) <= 1e-5 * max(1.0, abs(fd)), (pname, got[pname], fd)


@backend_names
@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.batch is not None])
def test_shapes_and_broadcasting(case, bname):
    be = backends.get(bname)
    pname, pvals = case.batch
    vals = values_for(be, case)
    x = vals[None, :]
    got = be.logp(case, {**case.params, pname: pvals}, x)
    assert got.shape == (pvals.shape[0], x.shape[1])
    for i in range(pvals.shape[0]):
        want = backends.get("numpy").logp(case, {**case.params, pname: float(pvals[i, 0])}, vals)
        np.testing.assert_allclose(got[i], want, rtol=0, atol=1e-12)
    if be.name != "numpy":
        draws = be.sample(case, {**case.params, pname: pvals}, 4, seed=1)
        assert np.shape(draws) == (4, pvals.shape[0], 1)


@pytest.mark.parametrize("case", all_cases)
def test_numpyro_jit_and_vmap(case):
    import jax

    be = backends.get("numpyro")
    eager = be.logp(case, case.params, case.values)
    np.testing.assert_allclose(be.jit_logp(case, case.params, case.values), eager, rtol=0, atol=1e-12)
    vm = np.asarray(jax.vmap(lambda v: be.dist(case, case.params).log_prob(v))(case.values))
    np.testing.assert_allclose(vm, eager, rtol=0, atol=1e-12)
    draws = jax.jit(lambda key: be.dist(case, case.params).sample(key, (3,)))(jax.random.PRNGKey(0))
    assert draws.shape == (3, *be.dist(case, case.params).event_shape)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.bad])
def test_bad_parameters_numpyro(case):
    import jax

    be = backends.get("numpyro")
    for override, pname, _ in case.bad:
        params = {**case.params, **override}
        with pytest.raises(ValueError, match=pname):
            be.dist(case, params, validate_args=True)
        with pytest.raises(ValueError, match=pname):
            jax.jit(lambda v, p=params: be.dist(case, p, validate_args=True).log_prob(v))(case.values)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.bad])
def test_bad_parameters_pymc(case):
    from pymc.logprob.utils import ParameterValueError

    be = backends.get("pymc")
    for override, _, rule in case.bad:
        with pytest.raises(ParameterValueError, match=rule.replace("(", r"\(").replace(")", r"\)")):
            be.logp(case, {**case.params, **override}, values_for(be, case))
