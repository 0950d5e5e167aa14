"""``dirichlet.fit``'s ``log_likelihood`` group: only where the release has several independent parts.

A ``dirichlet_logmean`` release without a split is one noisy vector :math:`s_L` (Guo, Barrientos & Peña (2022),
*Differentially Private Inference for Compositional Data*, Algorithm 1): there are no per-record terms, and a
group holding its one joint term makes ``az.loo`` warn ("point-wise LOO is the same with the sum LOO") and
return an elpd of one "observation" that compares nothing. Such a fit stores no group and says why in
``attrs["noiseaware_log_likelihood"]``; ``az.loo`` refuses it. A split release observed whole (prior ``p1``)
has two independent parts, :math:`S_L(D_1, a)` and :math:`S_L(D_2, a)` of disjoint records with their own
noise: one term per part, in one variable, so that ``az.loo(fit)`` runs with nothing chosen for it.
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest

import noiseaware as na
from noiseaware import dirichlet
from noiseaware._engine import group, group_names

ARVIZ_1 = int(az.__version__.split(".")[0]) >= 1


def _release(**kw: object) -> na.Release:
    x = np.random.default_rng(0).dirichlet([2.2, 3.3, 4.4], size=500)
    return na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, rng=np.random.default_rng(1), **kw)


def test_one_part_stores_no_log_likelihood_and_says_why(shared_fit) -> None:
    fit = shared_fit("dirichlet.fit")  # tests/conftest.py's fit: one unsplit release, prior p1
    assert "log_likelihood" not in group_names(fit)
    assert fit.attrs["noiseaware_log_likelihood"] == dirichlet._fit.NO_POINTWISE
    with pytest.raises((TypeError, KeyError, ValueError), match=r"(?i)log.likelihood"):
        az.loo(fit)


def test_a_prior_from_d1_observes_one_part_and_stores_no_log_likelihood() -> None:
    # a user prior observes the release's last part only: one joint term again
    rel = _release(split=0.25)
    pr = dirichlet.p1_prior(3)
    fit = dirichlet.fit(rel, prior=pr, chains=2, draws=60, warmup=60, seed=0, moments="asymptotic",
                        check_mixing=False)
    assert "log_likelihood" not in group_names(fit)
    assert fit.attrs["noiseaware_log_likelihood"] == dirichlet._fit.NO_POINTWISE


@pytest.mark.slow  # make test-full: a fit with two observed parts compiles its own program (about 20 s on 2 busy cores)
def test_two_observed_parts_give_one_term_each_and_az_loo_runs() -> None:
    rel = _release(split=0.25)
    fit = dirichlet.fit(rel, chains=2, draws=60, warmup=60, seed=0, moments="asymptotic", check_mixing=False)
    ll = group(fit, "log_likelihood")
    assert list(ll.data_vars) == ["s_l"]
    assert ll["s_l"].dims == ("chain", "draw", "observed_part")
    assert list(ll["observed_part"].values) == [0, 1]
    assert fit.attrs["noiseaware_log_likelihood"] == dirichlet._fit.PER_PART
    # each term is the Laplace density of that part's s_L at the draw's S_0 (the reference written out here)
    post = group(fit, "posterior")
    for i, p in enumerate(dirichlet.parts(rel)):
        s0 = np.asarray(post[f"s{i}_s0"].values)
        ref = np.sum(-np.log(2 * p.scale) - np.abs(p.s_l - s0) / p.scale, axis=-1)
        np.testing.assert_allclose(np.asarray(ll["s_l"].values)[..., i], ref, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # ArviZ's Pareto-k advice is about the run's length (S = 120 draws, two held-out parts), not the result
        warnings.filterwarnings("ignore", ".*Pareto", UserWarning)
        loo = az.loo(fit)
    assert np.isfinite(loo.elpd if ARVIZ_1 else loo.elpd_loo)
