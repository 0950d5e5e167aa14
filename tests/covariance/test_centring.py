"""Budgeted centring of pace_ggm releases (center=True): sensitivity, budget, loader checks, analyst side."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest

import noiseaware as na
from noiseaware import covariance, results
from noiseaware._statistics import mean_sensitivity
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError
from noiseaware.mechanisms import GaussianMechanism


def _data(n: int = 400, d: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(0.4 + 0.2 * rng.normal(size=(n, d)), -1.0, 1.0)


def _rel(rho: float = 1.0, seed: int = 1, **kw: object) -> na.Release:
    return na.privatize(
        _data(), statistic="pace_ggm", rho=rho, bound=1.0, center=True, rng=np.random.default_rng(seed), **kw
    )


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_mean_sensitivity_is_the_max_over_the_cube(d: int) -> None:
    # ||v - u||_2 is convex in (v, u): its maximum over the cube [-B, B]^d x [-B, B]^d is at vertices
    b, n = 1.5, 7
    corners = np.array(list(itertools.product([-b, b], repeat=d)))
    worst = max(float(np.linalg.norm(v - u)) / n for v in corners for u in corners)
    assert worst == pytest.approx(mean_sensitivity(n, d, b), rel=1e-12)
    rng = np.random.default_rng(d)
    v, u = rng.uniform(-b, b, size=(2, 5000, d))
    assert np.max(np.linalg.norm(v - u, axis=1)) / n <= mean_sensitivity(n, d, b)


@pytest.mark.parametrize(("rho", "share"), [(1e-3, 0.1), (1.0, 0.05), (10.0, 0.5)])
def test_budget_composes_to_exactly_rho(rho: float, share: float) -> None:
    rel = _rel(rho, mean_share=share)
    meta = rel.metadata
    assert rel.guarantee.rho == pytest.approx(rho, rel=1e-12)
    mean_rel = rel.components[-1]
    assert mean_rel.statistic == "pace_ggm_mean"
    assert mean_rel.guarantee.rho == pytest.approx(share * rho, rel=1e-12) == meta["rho_mean"]
    total = meta["rho_diag"] + sum(r["rho_sel"] + r["rho_meas"] for r in meta["rounds"]) + meta["rho_mean"]
    assert total == pytest.approx(rho, rel=1e-12)
    assert meta["rho_diag"] == pytest.approx(0.3 * (1 - share) * rho, rel=1e-12)
    want = GaussianMechanism.from_rho(share * rho, 2.0 * np.sqrt(3) / 400)
    assert mean_rel.mechanism.sigma == pytest.approx(want.sigma, rel=1e-12)
    # the centred bound: B + max|c| <= 2B, used by every later sensitivity
    c = np.asarray(meta["mean"])
    assert np.all(np.abs(c) <= 1.0)
    assert meta["bound"] == pytest.approx(1.0 + np.max(np.abs(c)), rel=1e-15)
    assert meta["bound"] <= 2.0
    assert rel.mechanism.sensitivity == pytest.approx(2.0 * meta["bound"] ** 2 / 400, rel=1e-12)


def test_centred_data_lie_within_the_centred_bound_and_the_entries_are_about_c() -> None:
    with pytest.warns(na.exceptions.PrivacyWarning, match="rho=50.0 is above"):  # a large rho, for small noise
        rel = _rel(50.0, mean_share=0.5)
    x = _data()
    c = np.asarray(rel.metadata["mean"])
    assert np.max(np.abs(x - c)) <= rel.metadata["bound"]
    m = covariance.measurements(rel)
    s_c = (x - c).T @ (x - c) / x.shape[0]
    diag = np.diag(s_c)
    # the diagonal measurements are of the centred second moment (noise sd m.sigma)
    assert np.all(np.abs(m.y[:3] - diag) < 6 * m.sigma[:3])
    assert np.allclose(m.center, c) and np.allclose(m.mean_values, rel.components[-1].values)
    assert m.data_bound == 1.0 and m.mean_sigma == rel.components[-1].mechanism.sigma
    est = covariance.reconstruct(rel)
    assert np.max(np.abs(est - np.cov(x.T, bias=True))) < 0.01


def test_secure_centred_release_round_trips() -> None:
    rel = na.privatize(_data(), statistic="pace_ggm", rho=1.0, bound=1.0, center=True)
    assert rel.secure and rel.components[-1].secure
    assert na.Release.from_json(rel.to_json()) == rel


def _tamper(rel: na.Release, edit) -> None:  # type: ignore[no-untyped-def]
    d = json.loads(json.dumps(rel.to_dict()))
    edit(d)
    with pytest.raises(ReleaseFormatError):
        na.Release.from_dict(d)


def test_tampered_centring_is_refused() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = _rel(2.0)
    assert na.Release.from_dict(rel.to_dict()) == rel

    def share(d):  # type: ignore[no-untyped-def]
        d["metadata"]["mean_share"] = 0.01

    def rho_mean(d):  # type: ignore[no-untyped-def]
        d["metadata"]["rho_mean"] *= 0.5

    def bound(d):  # type: ignore[no-untyped-def]
        d["metadata"]["bound"] = 1.0  # the data bound: understates Delta of the centred data

    def mean(d):  # type: ignore[no-untyped-def]
        d["metadata"]["mean"][0] += 0.1

    def mean_sigma(d):  # type: ignore[no-untyped-def]
        d["components"][-1]["mechanism"]["sigma"] *= 0.5

    def drop_mean(d):  # type: ignore[no-untyped-def]
        d["components"] = d["components"][:-1]

    def drop_flag(d):  # type: ignore[no-untyped-def]
        del d["metadata"]["center"]

    for edit in (share, rho_mean, bound, mean, mean_sigma, drop_mean, drop_flag):
        _tamper(rel, edit)


def test_bad_centring_options() -> None:
    x = _data()
    with pytest.raises(NoiseawareTypeError, match="center"):
        na.privatize(x, statistic="pace_ggm", rho=1.0, bound=1.0, center="yes")
    with pytest.raises(NoiseawareValueError, match="mean_share"):
        na.privatize(x, statistic="pace_ggm", rho=1.0, bound=1.0, center=True, mean_share=1.0)
    with pytest.raises(NoiseawareValueError, match="mean_share"):
        na.privatize(x, statistic="pace_ggm", rho=1.0, bound=1.0, mean_share=0.1)


@pytest.mark.slow
@pytest.mark.parametrize("route", ["moments", "wishart"])
def test_fit_of_a_centred_release_recovers_sigma_with_a_nonzero_mean(route: str) -> None:
    rng = np.random.default_rng(4)
    sigma = np.array([[0.04, 0.02], [0.02, 0.05]])
    x = np.clip(rng.multivariate_normal([0.5, -0.3], sigma, size=3000), -1, 1)
    rel = na.privatize(
        x, statistic="pace_ggm", rho=5.0, bound=1.0, center=True, mean_share=0.1, rng=np.random.default_rng(1)
    )
    fit = covariance.fit(
        rel, route=route, chains=2, draws=400, warmup=400, seed=3, check_mixing=False
    )  # 2 x 400 draws: recovery is checked below; R-hat can sit at 1.011 in so short a run
    post = results.draws(fit, "sigma")
    assert np.all(np.abs(post.mean(0) - sigma) < 4 * post.std(0) + 1e-3)
    mu = results.draws(fit, "mu")
    assert np.all(np.abs(mu.mean(0) - np.array([0.5, -0.3])) < 4 * mu.std(0) + 1e-3)
    # uncentred, the same data's second moment is Sigma + m m^T: the fit would be far off
    assert np.abs(post.mean(0)[0, 0] - (sigma[0, 0] + 0.25)) > 0.1
