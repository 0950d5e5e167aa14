"""Releases made elsewhere: ``Release.from_opendp`` (against OpenDP's maps and samplers) and ``Release.from_published``.

References are independent of the package: OpenDP's own privacy maps and samplers, SciPy's
``dlaplace``, ``laplace`` and ``norm``, and a brute-force discrete Gaussian sum. Goodness of fit is
a seeded-free chi-square on OpenDP's exact samplers (they take no seed), thresholded at p = 1e-5 for
the true law, so a spurious failure has probability 1e-5 per test, and each also rejects the same
law with a 10% wrong scale at that threshold.
"""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import opendp.prelude as dp  # a dependency of the package: no skip
import pytest
from scipy import stats

import noiseaware as na
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError


@pytest.fixture
def contrib():
    """OpenDP's contrib features on for building the test's measurements, off again afterwards."""
    from opendp.mod import GLOBAL_FEATURES

    added = "contrib" not in GLOBAL_FEATURES
    if added:
        dp.enable_features("contrib")
    yield dp
    if added:
        dp.disable_features("contrib")


def _measurement(kind: str, scale: float, *, vector: bool = True):
    integer = kind in ("geometric", "discrete_gaussian")
    atom = dp.atom_domain(T="i64") if integer else dp.atom_domain(T=float, nan=False)
    pure = kind in ("geometric", "laplace")
    if vector:
        metric = dp.l1_distance(T="i64" if integer else float) if pure else dp.l2_distance(T=float)
        domain = dp.vector_domain(atom)
    else:
        metric = dp.absolute_distance(T="i64" if integer and pure else float)
        domain = atom
    make = dp.m.make_laplace if pure else dp.m.make_gaussian
    return make(domain, metric, scale=scale)


KINDS = ("geometric", "discrete_gaussian", "laplace", "gaussian")


def _d_in(kind: str, k: int = 1):
    return k if kind == "geometric" else float(k)


# ------------------------------------------------------------------------------------ from_opendp
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("scale", [0.3, 2.5, 7.77, 1 / 3, 123.456])
@pytest.mark.parametrize("vector", [True, False])
def test_from_opendp_reads_the_family_the_scale_and_the_guarantee_of_opendps_map(contrib, kind, scale, vector):
    m = _measurement(kind, scale, vector=vector)
    for k in (1, 3):
        d = _d_in(kind, k)
        value = m([0, 5, 9]) if vector and kind in ("geometric", "discrete_gaussian") else (
            m([0.0, 5.0, 9.0]) if vector else m(4 if kind in ("geometric", "discrete_gaussian") else 4.0)
        )
        rel = na.Release.from_opendp(m, value, d_in=d)
        mech = rel.mechanism
        assert mech.family == kind
        assert (mech.scale if kind in ("geometric", "laplace") else mech.sigma) == scale  # exactly the built scale
        assert mech.sensitivity == d
        loss = rel.guarantee.epsilon if kind in ("geometric", "laplace") else rel.guarantee.rho
        assert loss == float(m.map(d))  # OpenDP's own map, rounded up as OpenDP rounds it
        assert rel.statistic == ("counts" if kind in ("geometric", "discrete_gaussian") else "vector")
        assert rel.composition == "joint" and not rel.secure
        assert rel.provenance.startswith("OpenDP ")
        assert na.Release.from_json(rel.to_json()) == rel
        np.testing.assert_array_equal(rel.values.ravel(), np.atleast_1d(value))


def _chi2_pvalue(observed: np.ndarray, probs: np.ndarray) -> float:
    expected = probs * observed.sum()
    return float(stats.chi2.sf(((observed - expected) ** 2 / expected).sum(), len(probs) - 1))


def _integer_cells(samples: np.ndarray, logpmf, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts and probabilities of the cells (-inf, lo], lo+1, ..., hi-1, [hi, inf) under ``logpmf`` (lo = -hi)."""
    ks = np.arange(lo + 1, hi)
    p_mid = np.exp(logpmf(ks))
    far = np.arange(hi, hi + 4000)
    p_hi = np.exp(logpmf(far)).sum()
    p_lo = np.exp(logpmf(-far)).sum()  # the cells are symmetric: lo == -hi
    probs = np.concatenate([[p_lo], p_mid, [p_hi]])
    obs = np.concatenate([[np.sum(samples <= lo)], [np.sum(samples == k) for k in ks], [np.sum(samples >= hi)]])
    return obs.astype(float), probs / probs.sum()


@pytest.mark.parametrize("kind", KINDS)
def test_opendps_samples_fit_the_law_read_from_the_measurement_and_reject_a_10pct_wrong_scale(contrib, kind):
    scale = 3.0
    m = _measurement(kind, scale)
    n = 40_000 if kind in ("geometric", "discrete_gaussian") else 15_000  # OpenDP's float samplers are slower
    integer = kind in ("geometric", "discrete_gaussian")
    samples = np.asarray(m([0] * n) if integer else m([0.0] * n), dtype=float)
    rel = na.Release.from_opendp(m, samples[:5], d_in=_d_in(kind))
    read = rel.mechanism.scale if kind in ("geometric", "laplace") else rel.mechanism.sigma

    def law(s: float):
        """The read family at scale ``s``, as an independent SciPy / brute-force reference."""
        if kind == "geometric":
            return lambda k: stats.dlaplace.logpmf(k, 1.0 / s)
        if kind == "discrete_gaussian":
            js = np.arange(-4000, 4001)
            log_z = float(np.log(np.exp(-(js**2) / (2 * s * s)).sum()))
            return lambda k: -(np.asarray(k, dtype=float) ** 2) / (2 * s * s) - log_z
        return stats.laplace(scale=s).cdf if kind == "laplace" else stats.norm(scale=s).cdf

    def pvalue(s: float) -> float:
        if integer:
            obs, probs = _integer_cells(samples, law(s), -9, 9)
            return _chi2_pvalue(obs, probs)
        edges = stats.laplace(scale=read).ppf(np.linspace(0, 1, 31)) if kind == "laplace" else (
            stats.norm(scale=read).ppf(np.linspace(0, 1, 31))
        )
        cdf = law(s)(edges)
        obs = np.histogram(samples, bins=edges)[0].astype(float)
        return _chi2_pvalue(obs, np.diff(cdf))

    assert pvalue(read) > 1e-5
    assert pvalue(1.1 * read) < 1e-5
    assert pvalue(read / 1.1) < 1e-5
    # the release's own law (the registry's density) agrees with the references it was tested against
    ks = np.arange(-6, 7)
    if integer:
        np.testing.assert_allclose(rel.mechanism.noise_logpmf(ks), law(read)(ks), rtol=1e-12)
    else:
        ref = stats.laplace(scale=read) if kind == "laplace" else stats.norm(scale=read)
        np.testing.assert_allclose(rel.mechanism.noise_logpmf(ks / 2.0), ref.logpdf(ks / 2.0), rtol=1e-12)


def test_from_opendp_refuses_a_censored_geometric_a_chain_and_non_measurements(contrib):
    bounded = dp.m.make_geometric(dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale=5.0,
                                  bounds=(0, 10))
    with pytest.raises(NoiseawareValueError, match="bounds clamps"):
        na.Release.from_opendp(bounded, [3], d_in=1)
    plain = dp.m.make_geometric(dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale=5.0)
    assert na.Release.from_opendp(plain, [3], d_in=1).mechanism.scale == 5.0
    chain = dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(0, 10))), dp.symmetric_distance()) >> (
        dp.m.then_laplace(2.0)
    )
    with pytest.raises(NoiseawareValueError, match="chained measurement"):
        na.Release.from_opendp(chain, 4, d_in=1)
    noisy_max = dp.m.make_noisy_max(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float),
                                    dp.max_divergence(), scale=1.0)
    with pytest.raises(NoiseawareValueError, match="must add noise to numbers"):
        na.Release.from_opendp(noisy_max, 0, d_in=1.0)
    with pytest.raises(NoiseawareTypeError, match="OpenDP Measurement"):
        na.Release.from_opendp(lambda x: x, [1], d_in=1)
    m = _measurement("geometric", 2.0)
    with pytest.raises(NoiseawareValueError, match="d_in"):
        na.Release.from_opendp(m, [1], d_in=0)
    with pytest.raises(NoiseawareValueError, match="integers"):
        na.Release.from_opendp(m, [1.5], d_in=1)


# --------------------------------------------------------------------------------- from_published
@pytest.mark.parametrize(
    ("family", "param", "stated", "field", "want", "loss"),
    [
        ("geometric", "scale", 2.0, "scale", 2.0, ("epsilon", 0.5)),
        ("geometric", "alpha", math.exp(-0.5), "scale", 2.0, ("epsilon", 0.5)),
        ("discrete_gaussian", "variance", 16.0, "sigma", 4.0, ("rho", 1 / 32)),
        ("discrete_gaussian", "sigma", 4.0, "sigma", 4.0, ("rho", 1 / 32)),
        ("laplace", "scale", 0.5, "scale", 0.5, ("epsilon", 2.0)),
        ("gaussian", "variance", 0.25, "sigma", 0.5, ("rho", 2.0)),
    ],
)
def test_from_published_turns_each_stated_parameter_into_the_mechanism(family, param, stated, field, want, loss):
    rel = na.Release.from_published([3, 0, 12], family=family, provenance="US Census Bureau 2020 NMF",
                                    **{param: stated})
    assert getattr(rel.mechanism, field) == pytest.approx(want, rel=1e-15)
    assert getattr(rel.guarantee, loss[0]) == pytest.approx(loss[1], rel=1e-12)
    assert rel.provenance == "US Census Bureau 2020 NMF" and not rel.secure and not rel.simulation
    assert na.Release.from_json(rel.to_json()) == rel
    assert "made by   : US Census Bureau 2020 NMF" in rel.summary()


def test_from_published_per_group_and_per_value():
    vals = [5, 9, 130, 41]
    groups = ["tract", "tract", "county", "state"]
    var = {"tract": 4.0, "county": 9.0, "state": 25.0}
    rels = na.Release.from_published(vals, family="discrete_gaussian", variance=var, groups=groups,
                                     labels=["t1", "t2", "c1", "s1"], provenance="agency", sensitivity=1)
    assert list(rels) == ["tract", "county", "state"]
    assert rels["tract"].values.tolist() == [5, 9] and rels["tract"].labels == (("t1",), ("t2",))
    assert {k: r.mechanism.sigma for k, r in rels.items()} == {"tract": 2.0, "county": 3.0, "state": 5.0}
    per_value = na.Release.from_published([1.5, -2.0], family="laplace", scale={"a": 1.0, "b": 2.0},
                                          groups=["a", "b"], provenance="a SmartNoise report")
    assert [r.mechanism.scale for r in per_value.values()] == [1.0, 2.0]


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"family": "poisson", "scale": 1.0}, NoiseawareValueError, "family"),
        ({"family": "geometric"}, NoiseawareValueError, "exactly one"),
        ({"family": "geometric", "scale": 1.0, "alpha": 0.5}, NoiseawareValueError, "exactly one"),
        ({"family": "laplace", "alpha": 0.5}, NoiseawareValueError, "exactly one"),
        ({"family": "geometric", "alpha": 1.5}, NoiseawareValueError, "alpha"),
        ({"family": "gaussian", "variance": -1.0}, NoiseawareValueError, "variance"),
        ({"family": "geometric", "scale": [1.0, 2.0, 3.0]}, NoiseawareValueError, "groups="),
        ({"family": "geometric", "scale": {"a": 1.0}, "groups": ["a", "b", "a"]}, NoiseawareValueError, "'b'"),
        ({"family": "geometric", "scale": {"a": 1.0, "z": 2.0}, "groups": ["a"] * 3}, NoiseawareValueError, "'z'"),
        ({"family": "geometric", "scale": 1.0, "groups": ["a"]}, NoiseawareValueError, "one group key per value"),
        ({"family": "geometric", "scale": 1.0, "groups": ["a"] * 3}, NoiseawareTypeError, "mapping"),
        ({"family": "geometric", "scale": 1.0, "sensitivity": 1.5}, NoiseawareTypeError, "sensitivity"),
        ({"family": "geometric", "scale": 1.0, "provenance": ""}, NoiseawareValueError, "provenance"),
        ({"family": "geometric", "scale": 1.0, "provenance": "x" * 161}, NoiseawareValueError, "provenance"),
        ({"family": "geometric", "scale": 1.0, "provenance": "a\nb"}, NoiseawareValueError, "provenance"),
        ({"family": "geometric", "scale": 1.0, "provenance": 3}, NoiseawareTypeError, "provenance"),
    ],
)
def test_from_published_refuses_bad_input_naming_it(kwargs, exc, match):
    kwargs = {"provenance": "agency", **kwargs}
    with pytest.raises(exc, match=match):
        na.Release.from_published([1, 2, 3], **kwargs)


def test_from_published_refuses_non_integer_counts_and_nan():
    with pytest.raises(NoiseawareValueError, match="integers"):
        na.Release.from_published([1.5], family="geometric", scale=1.0, provenance="x")
    with pytest.raises(NoiseawareValueError, match="finite"):
        na.Release.from_published([np.nan], family="laplace", scale=1.0, provenance="x")
    for big in ([1e20], np.array([2**64 - 1], dtype=np.uint64)):
        with pytest.raises(NoiseawareValueError, match="int64"):
            na.Release.from_published(big, family="geometric", scale=1.0, provenance="x")
    with pytest.raises(NoiseawareTypeError, match="numbers"):
        na.Release.from_published([2**70], family="geometric", scale=1.0, provenance="x")


# ---------------------------------------------------------------------------------- provenance
def test_privatize_releases_say_noiseaware_and_version_1_records_load_as_noiseaware():
    rel = na.privatize(np.array([3, 1, 4]), statistic="counts", epsilon=1.0, sensitivity=1)
    assert rel.provenance == "noiseaware" and rel.secure
    d = rel.to_dict()
    assert d["schema_version"] == 2 and d["provenance"] == "noiseaware"
    old = copy.deepcopy(d)
    old["schema_version"] = 1
    del old["provenance"]
    # a version-1 record of a development build before 0.1.0 loads as made by noiseaware
    for writer in ("0.1.0.dev3", "0.0.9", "0.1.0rc1"):
        assert na.Release.from_json(json.dumps({**old, "noiseaware_version": writer})) == rel
    # this version writes version 2: a version-1 record that names it is a downgrade
    with pytest.raises(ReleaseFormatError, match="noiseaware_version"):
        na.Release.from_json(json.dumps(old))
    for writer in (None, 3, "new", "1.0.0"):
        with pytest.raises(ReleaseFormatError, match="noiseaware_version"):
            na.Release.from_json(json.dumps({**old, "noiseaware_version": writer}))
    old["provenance"] = "noiseaware"
    with pytest.raises(ReleaseFormatError, match="provenance"):
        na.Release.from_json(json.dumps(old))


# ------------------------------------------------------------------- likelihoods read such releases
def _dg_logpmf(k: np.ndarray, sigma: float) -> np.ndarray:
    js = np.arange(-4000, 4001)
    return -(np.asarray(k, dtype=float) ** 2) / (2 * sigma**2) - np.log(np.exp(-(js**2) / (2 * sigma**2)).sum())


def _noisy_poisson_ref(values: np.ndarray, mu: float, noise_logpmf) -> float:
    """log P(Y = y) for Y = X + D, X ~ Poisson(mu), by a brute-force sum over x in [0, 400)."""
    xs = np.arange(400)
    lp = stats.poisson.logpmf(xs, mu)
    return float(sum(np.logaddexp.reduce(lp + noise_logpmf(y - xs)) for y in np.ravel(values)))


@pytest.mark.parametrize(("family", "maker"), [("geometric", "publisher"), ("discrete_gaussian", "publisher"),
                                              ("discrete_gaussian", "opendp")])
def test_noisy_and_the_counts_distributions_read_a_published_release_in_both_ppls(family, maker, contrib):
    import numpyro.distributions as dist
    import pymc as pm
    from numpyro import handlers

    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    param = {"alpha": 0.6} if family == "geometric" else {"variance": 6.25}
    if maker == "publisher":
        rel = na.Release.from_published([12, 7, 0, 15], family=family, provenance="US Census Bureau 2020 NMF",
                                        **param)
    else:  # the discrete Gaussian of OpenDP's make_gaussian on integers, rho-zCDP
        meas = _measurement("discrete_gaussian", 2.5)
        rel = na.Release.from_opendp(meas, meas([12, 7, 0, 15]), d_in=1.0)
        assert rel.mechanism.sigma == 2.5
    if family == "geometric":
        noise = lambda k: stats.dlaplace.logpmf(k, -math.log(0.6))  # noqa: E731
        counts_np, counts_pm = nan.TwoSidedGeometric, nap.TwoSidedGeometric
    else:
        noise = lambda k: _dg_logpmf(k, 2.5)  # noqa: E731
        counts_np, counts_pm = nan.DiscreteGaussian, nap.DiscreteGaussian
    mu = np.full(4, 9.0)  # float64: PyTensor stores a bare Python 9.0 as a float32 constant
    want = _noisy_poisson_ref(rel.values, 9.0, noise)
    loc = np.array([10, 8, 1, 14])
    want_counts = float(noise(rel.values - loc).sum())

    with pm.Model() as model:
        nap.Noisy.from_release("y", rel, pm.Poisson.dist(mu))
        counts_pm.from_release("z", rel, loc)
    logps = model.compile_fn(model.logp(sum=False), inputs=[], on_unused_input="ignore")({})
    assert abs(float(np.sum(logps[0])) - want) < 1e-9
    assert abs(float(np.sum(logps[1])) - want_counts) < 1e-9

    tr = handlers.trace(lambda: (nan.Noisy.from_release("y", rel, dist.Poisson(mu)),
                                 counts_np.from_release("z", rel, loc))).get_trace()
    assert abs(float(tr["y"]["fn"].log_prob(tr["y"]["value"]).sum()) - want) < 1e-9
    assert abs(float(tr["z"]["fn"].log_prob(tr["z"]["value"]).sum()) - want_counts) < 1e-9
