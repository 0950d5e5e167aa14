"""The NUTS implementation behind the PyMC backends (``pm.sample``'s ``nuts_sampler``): choice, completeness, exactness.

``copula.fit`` and ``covariance.fit`` with ``backend="pymc"`` run their PyMC model with nutpie,
NumPyro or PyMC's own NUTS (``noiseaware._engine.pymc_sample``). The fast suite checks the default
against the exact grid posterior (``tests/test_copula_fit.py``); here each implementation is
checked the same way (slow), plus the choice and the refusal of a short run.
"""

from __future__ import annotations

import importlib.util
import math

import arviz as az
import numpy as np
import pytest

import noiseaware as na
from noiseaware._engine import NUTS_SAMPLERS, nuts_sampler_choice
from noiseaware._engine._pymc import _check_complete
from noiseaware.results import from_groups

INSTALLED = [s for s in ("nutpie", "numpyro") if importlib.util.find_spec(s) is not None] + ["pymc"]


def test_auto_is_the_first_installed_implementation() -> None:
    assert nuts_sampler_choice() == INSTALLED[0]
    assert nuts_sampler_choice("auto") == INSTALLED[0]
    for name in INSTALLED:
        assert nuts_sampler_choice(name) == name
    assert set(NUTS_SAMPLERS) == {"auto", "nutpie", "numpyro", "pymc"}


def test_unknown_implementation_is_refused() -> None:
    with pytest.raises(ValueError, match="nuts_sampler"):
        nuts_sampler_choice("stan")


@pytest.mark.skipif(importlib.util.find_spec("nutpie") is not None, reason="nutpie is installed")
def test_nutpie_when_absent_names_the_extra() -> None:
    with pytest.raises(ValueError, match=r"noiseaware\[pymc-fast\]"):
        nuts_sampler_choice("nutpie")


def test_nuts_sampler_applies_to_the_pymc_backend_only() -> None:
    from noiseaware import copula, covariance

    x = np.random.default_rng(0).normal(size=(100, 2))
    pairs = na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match="nuts_sampler applies to backend='pymc' only"):
        copula.fit(pairs, nuts_sampler="pymc")
    cov = na.privatize(np.clip(x / 4, -1, 1), statistic="second_moment", rho=1.0, bound=1.0,
                       rng=np.random.default_rng(2))
    with pytest.raises(ValueError, match="nuts_sampler applies to backend='pymc' only"):
        covariance.fit(cov, nuts_sampler="nutpie")


def test_a_short_external_run_raises_keyboard_interrupt() -> None:
    """nutpie returns the draws made so far on Ctrl-C; pymc_sample refuses such a trace."""
    idata = from_groups({"posterior": {"x": np.zeros((2, 10))}, "sample_stats": {"diverging": np.zeros((2, 10), bool)}})
    _check_complete(idata, 2, 10)  # complete: no error
    with pytest.raises(KeyboardInterrupt, match="2 chains of 10 draws where 2 of 20"):
        _check_complete(idata, 2, 20)
    with pytest.raises(KeyboardInterrupt, match="where 3 of 10"):
        _check_complete(idata, 3, 10)
    padded = np.zeros((2, 10))
    padded[1, 6:] = np.nan  # the second chain stopped at 6 draws, padded to the common length
    with pytest.raises(KeyboardInterrupt, match="not finite"):
        _check_complete(from_groups({"posterior": {"x": padded}}), 2, 10)


@pytest.mark.slow  # compiles the model once per implementation
@pytest.mark.parametrize("sampler", INSTALLED)
def test_each_implementation_matches_the_exact_grid_posterior(sampler: str) -> None:
    from scipy import stats

    from noiseaware import results
    from noiseaware.copula import fit, pair_draws
    from noiseaware.datasets import simulate_gaussian_copula
    from tests.test_copula_fit import EPS, N_ROWS, _grid_posterior, _grid_summary

    rng = np.random.default_rng(7)  # the release of tests/test_copula_fit.py
    x = simulate_gaussian_copula(N_ROWS, np.array([[1.0, 0.45], [0.45, 1.0]]), (stats.norm(), stats.expon()), rng)
    rel = na.privatize(x, statistic="median_pairs", epsilon=EPS, rng=rng)
    res = fit(rel, backend="pymc", nuts_sampler=sampler, chains=2, draws=1000, warmup=500, seed=3,
              progressbar=False, cores=1)
    assert res.attrs["noiseaware_nuts_sampler"] == sampler
    exact_mean, exact_sd = _grid_summary(*_grid_posterior(float(rel.values[0]), N_ROWS, float(rel.mechanism.alpha)))
    pairs = pair_draws(res)  # R[0, 1] as the one pair, (chain, draw, pair)
    mcse_mean = float(az.mcse(pairs)["R"].values[0])
    mcse_sd = float(pairs["R"].std()) / math.sqrt(2 * float(az.ess(pairs, method="sd")["R"].values[0]))
    r12 = results.draws(res, "R")[:, 0]  # the fit stores R's pairs: R[0, 1] is the one pair
    # |z| > 5 has probability < 1e-6 under a correct sampler
    assert abs(float(r12.mean()) - exact_mean) < 5 * mcse_mean + 1e-3
    assert abs(float(r12.std(ddof=1)) - exact_sd) < 5 * mcse_sd + 1e-3
    # the same check rejects the naive posterior that ignores the noise
    _, naive_sd = _grid_summary(*_grid_posterior(round(float(rel.values[0])), N_ROWS, None))
    assert abs(float(r12.std(ddof=1)) - naive_sd) > 5 * mcse_sd + 1e-3


@pytest.mark.slow  # compiles the model once per implementation
@pytest.mark.parametrize("sampler", INSTALLED)
def test_covariance_implementations_agree_with_the_numpyro_backend(sampler: str) -> None:
    from noiseaware import covariance

    rng = np.random.default_rng(0)
    sigma = np.array([[0.04, 0.02], [0.02, 0.05]])
    x = np.clip(rng.multivariate_normal([0, 0], sigma, size=5000), -1, 1)
    rel = na.privatize(x, statistic="pace_ggm", rho=5.0, bound=1.0, rng=np.random.default_rng(1))
    kw = {"chains": 2, "draws": 1000, "warmup": 500, "seed": 2, "progressbar": False}
    base = covariance.fit(rel, backend="numpyro", **kw)
    res = covariance.fit(rel, backend="pymc", nuts_sampler=sampler, **kw)
    assert res.attrs["noiseaware_nuts_sampler"] == sampler
    for j, k in ((0, 0), (1, 0), (1, 1)):
        a, b = base.posterior["sigma"][..., j, k], res.posterior["sigma"][..., j, k]
        se = math.hypot(*(float(az.mcse(z.to_dataset(name="x"))["x"].values) for z in (a, b)))
        # |z| > 5 has probability < 1e-6 per entry when both sample the same posterior
        assert abs(float(a.mean()) - float(b.mean())) < 5 * se, (j, k, float(a.mean()), float(b.mean()), se)
