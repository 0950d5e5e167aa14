"""The hierarchy record (checks on load), the synthetic NMF generator's noise law, the tree GLS against references."""

from __future__ import annotations

import ast
import copy
import inspect
import re

import numpy as np
import pytest
from scipy import stats

import noiseaware as na
from noiseaware._io import MAX_RELEASE_BYTES
from noiseaware.exceptions import NoiseawareValueError, PrivacyWarning, ReleaseFormatError
from noiseaware.hierarchy import NoisyHierarchy, _record, aggregate, gls, gls_dense, round_to_totals, synthetic_nmf
from noiseaware.mechanisms import DiscreteGaussianMechanism


def _fields(rel: NoisyHierarchy) -> dict:
    return rel.to_dict()


def test_round_trip_and_views() -> None:
    sim = synthetic_nmf(2, 3, 4, rng=1)
    rel = sim.release
    with pytest.warns(PrivacyWarning, match="SIMULATION"):  # written and read back: a simulation warns both ways
        back = NoisyHierarchy.from_json(rel.to_json(allow_simulation=True))
    assert back == rel and back.provenance == rel.provenance and back.simulation and not back.secure
    assert rel.n_measurements == (2 + 6 + 24) * 4 - 2
    np.testing.assert_array_equal(rel.root_totals(), sim.truth.reshape(2, 12, 3).sum(axis=(1, 2)))
    agg = aggregate(rel, sim.truth)
    assert [a.shape for a in agg] == [(2, 4), (6, 4), (24, 4)]
    # one person added: one cell and the total at county and tract level, one cell at state level (state total exact);
    # substitution (the package's relation) moves a person between two such places: twice that
    assert rel.rho("add_remove") == pytest.approx(1 / 8 + 2 * (1 / 8) + 2 * (1 / 18))
    assert rel.rho() == pytest.approx(2 * (1 / 8 + 2 * (1 / 8) + 2 * (1 / 18)))
    nv = rel.noise_variance()
    assert nv[0, 0] == 0 and np.all(nv[rel.variance > 0] <= rel.variance[rel.variance > 0])
    assert np.all(nv[rel.variance > 0] > rel.variance[rel.variance > 0] * (1 - 1e-12))


def test_from_json_reads_a_path_or_text_like_release(tmp_path, monkeypatch) -> None:
    sim = synthetic_nmf(1, 2, 2, rng=3).release
    rel = NoisyHierarchy(**{**sim.__dict__, "simulation": False, "provenance": "a transcription"})  # warns neither way
    path = tmp_path / "nmf.json"
    rel.to_json(path)
    assert NoisyHierarchy.from_json(path) == rel  # a PathLike
    assert NoisyHierarchy.from_json(str(path)) == rel  # a str ending in .json is a path
    monkeypatch.chdir(tmp_path)
    (tmp_path / "{odd}").write_text(rel.to_json())
    assert NoisyHierarchy.from_json("{odd}") == rel  # an existing file wins over text that starts with "{"
    with pytest.raises(ReleaseFormatError, match=r"NoisyHierarchy\.from_json"):
        NoisyHierarchy.from_json("{not json")
    with pytest.raises(ReleaseFormatError, match="larger than the limit"):
        NoisyHierarchy.from_json("{" + " " * MAX_RELEASE_BYTES + "}")


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d["parents"][1].__setitem__(0, 99), "must hold indices of level 'county'"),
        (lambda d: d["parents"][1].__setitem__(slice(0, 4), [1, 1, 1, 1]), "must give every unit of level 'county'"),
        (lambda d: d["values"][0][0].__setitem__(0, -3), "must be >= 0 where published exactly"),
        (lambda d: d["variance"][2].__setitem__(1, 0.0), "may be 0 .* only at the root level's 'total'"),
        (lambda d: d["variance"][1].__setitem__(1, float("nan")), r"variance\[1\]\[1\] must be finite"),
        (lambda d: d.update(secure=True), "cannot be true for a seeded simulation"),
        (lambda d: d.update(family="laplace"), "must be 'discrete_gaussian'"),
        (lambda d: d.update(extra=1), r"record has unknown key\(s\) \['extra'\]"),
        (lambda d: d["values"][2].pop(), r"must have shape \(24, 4\)"),
        (lambda d: d["values"][1][0].__setitem__(2, 1.5), "must hold integers"),
        (lambda d: d.update(queries=["a", "total", "b", "c"]), "must be \\('total', cell, ...\\)"),
        (lambda d: d["units"][2].__setitem__(1, d["units"][2][0]), "unique"),
    ],
)
def test_tampered_records_are_refused(edit, match) -> None:
    d = _fields(synthetic_nmf(2, 3, 4, rng=1).release)
    edit(d)
    with pytest.raises(ReleaseFormatError, match=match):
        NoisyHierarchy.from_dict(d)


def _rule(message: str, field: str) -> str:
    """The rule text of a record's message: what follows the field's name, up to ``"; got"``."""
    found = re.search(rf"{re.escape(field)}'? (.*?); got", message)
    assert found is not None, message
    return found.group(1)


def _release_dict() -> dict:
    x = np.random.default_rng(0).normal(size=(50, 3))
    return na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(1)).to_dict()


def _set(d: dict, path: tuple, value: object) -> dict:
    d = copy.deepcopy(d)
    target = d
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return d


def _drop(d: dict, path: tuple) -> dict:
    d = copy.deepcopy(d)
    target = d
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return d


# the same bad value in the same kind of field: (release edit, its field), (hierarchy edit, its field), the rule
_SAME_RULE = [
    (lambda d: _set(d, ("secure",), 1), "secure", lambda d: _set(d, ("secure",), 1), "secure",
     "must be true or false"),
    (lambda d: _set(d, ("metadata", "extra"), 1), "metadata", lambda d: _set(d, ("extra",), 1), "record",
     "has unknown key(s) ['extra'] for"),
    (lambda d: _drop(d, ("metadata", "p")), "metadata.p", lambda d: _drop(d, ("variance",)), "variance",
     "is missing (required for"),
    (lambda d: _set(d, ("metadata", "epsilon_per_pair"), float("nan")), "metadata values",
     lambda d: _set(d, ("variance", 1, 1), float("nan")), "variance[1][1]", "must be finite"),
    (lambda d: _set(d, ("metadata", "p"), 2.5), "metadata.p", lambda d: _set(d, ("schema_version",), 2.5),
     "schema_version", "must be an integer"),
    (lambda d: _set(d, ("metadata", "columns", 0), 7), "metadata.columns[0]",
     lambda d: _set(d, ("provenance",), 7), "provenance", "must be a string"),
    (lambda d: _set(d, ("metadata", "columns"), ["x0", "x0", "x2"]), "metadata.columns",
     lambda d: _set(d, ("queries",), ["total", "a", "a", "b"]), "queries", "must hold unique entries"),
]


@pytest.mark.parametrize(("rel_edit", "rel_field", "h_edit", "h_field", "rule"), _SAME_RULE)
def test_hierarchy_fields_break_the_same_rules_as_a_release(rel_edit, rel_field, h_edit, h_field, rule) -> None:
    """A field of the hierarchy record and the same kind of field of a release refuse a bad value alike."""
    with pytest.raises(ReleaseFormatError) as rel_err:
        na.Release.from_dict(rel_edit(_release_dict()))
    with pytest.raises(ReleaseFormatError) as h_err:
        NoisyHierarchy.from_dict(h_edit(synthetic_nmf(2, 3, 4, rng=1).release.to_dict()))
    rel_rule, h_rule = _rule(str(rel_err.value), rel_field), _rule(str(h_err.value), h_field)
    assert rel_rule.startswith(rule) and h_rule.startswith(rule), (rel_rule, h_rule)
    assert str(h_err.value).startswith(f"NoisyHierarchy: {h_field} {rule}")  # the one message shape, its owner
    assert f"; got {h_field}=" in str(h_err.value)


def test_hierarchy_record_has_no_error_helper_of_its_own() -> None:
    """Every refusal of ``hierarchy/_record.py`` goes through ``_core._fields`` (its types and ``fail``)."""
    tree = ast.parse(inspect.getsource(_record))
    raises = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Raise)]
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    attrs = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert raises == [], f"raise statements at lines {raises}: refuse through _core._fields.fail"
    assert not names & {"ReleaseFormatError", "NoiseawareValueError", "NoiseawareTypeError"}
    assert "message" not in attrs  # no message built with _validation.message
    fields_imports = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                      and node.module == "_core._fields" for alias in node.names}
    assert {"fail", "read_record"} <= fields_imports
    assert _record.fail.__module__ == "noiseaware._core._fields"


def _dg_chi2(resid: np.ndarray, sigma: float) -> float:
    """Chi-square p-value of integer residuals against the discrete Gaussian with ``sigma`` (pooled tails)."""
    mech = DiscreteGaussianMechanism(sigma=sigma)
    edges = np.arange(-int(2.5 * sigma), int(2.5 * sigma) + 1)
    cdf = mech.noise_cdf(edges)
    probs = np.diff(np.concatenate([[0.0], cdf[:-1], [1.0]]))  # bins (-inf, e0], (e0, e1], ..., (e_{m-2}, inf)
    idx = np.searchsorted(edges[:-1], resid, side="left")
    counts = np.bincount(idx, minlength=probs.size)
    return float(stats.chisquare(counts, probs * resid.size).pvalue)


def test_generator_noise_is_the_published_discrete_gaussian() -> None:
    sim = synthetic_nmf(4, 10, 25, rng=7)  # 1,000 tracts
    rel = sim.release
    exact = aggregate(rel, sim.truth)
    resid = (rel.values[2] - exact[2]).ravel()  # sigma = 3 at tract level, 4,000 draws
    assert _dg_chi2(resid, 3.0) > 1e-4
    assert _dg_chi2(resid, 3.3) < 1e-4  # a 10% mis-scaled law is rejected
    np.testing.assert_array_equal(rel.values[0][:, 0], exact[0][:, 0])  # invariants exact


def _ragged(rng: np.random.Generator) -> tuple[NoisyHierarchy, np.ndarray]:
    """A hand-built ragged tree (states with 1-3 counties, counties with 1-4 tracts), unequal variances."""
    county_parent = np.array([0, 0, 0, 1, 2, 2])
    tract_parent = np.array([0, 0, 1, 2, 2, 2, 2, 3, 4, 4, 5, 5, 5])
    truth = rng.integers(0, 30, size=(13, 2))
    units = (("a", "b", "c"), tuple(f"k{i}" for i in range(6)), tuple(f"t{i}" for i in range(13)))
    var = np.array([[0.0, 2.0, 5.0], [3.0, 1.5, 7.0], [10.0, 4.0, 6.0]])
    skeleton = NoisyHierarchy(levels=("s", "k", "t"), units=units, parents=(county_parent, tract_parent),
                              queries=("total", "x", "y"), values=tuple(np.zeros((len(u), 3), int) for u in units),
                              variance=var, secure=False, simulation=True, provenance="test")
    noisy = []
    for lev, x in enumerate(aggregate(skeleton, truth)):
        y = x.copy()
        for q in range(3):
            if var[lev, q] > 0:
                y[:, q] = DiscreteGaussianMechanism(sigma=np.sqrt(var[lev, q])).release(x[:, q], rng=rng)
        noisy.append(y)
    rel = NoisyHierarchy(levels=skeleton.levels, units=units, parents=skeleton.parents, queries=skeleton.queries,
                         values=tuple(noisy), variance=var, secure=False, simulation=True, provenance="test")
    return rel, truth


def test_tree_gls_equals_the_normal_equations_on_a_ragged_tree() -> None:
    rel, _ = _ragged(np.random.default_rng(3))
    est = gls(rel)
    x, cov = gls_dense(rel)
    np.testing.assert_allclose(est.mean[-1], x, atol=1e-9)
    blocks = np.array([cov[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] for i in range(13)])
    np.testing.assert_allclose(est.cov[-1], blocks, atol=1e-9)
    np.testing.assert_allclose(est.mean[0].sum(axis=1), rel.values[0][:, 0], atol=1e-9)  # invariants
    # county estimates are the sums of their tracts' (the same estimator at every level)
    sums = np.zeros((6, 2))
    np.add.at(sums, rel.parents[1], est.mean[2])
    np.testing.assert_allclose(est.mean[1], sums, atol=1e-9)
    # a wrong estimator (the invariants dropped) is caught by the same comparison
    free = NoisyHierarchy(**{**rel.__dict__, "variance": np.where(rel.variance == 0, 1.0, rel.variance)})
    assert np.abs(gls(free).mean[-1] - x).max() > 1e-3


def test_gls_variance_is_the_sampling_variance() -> None:
    """Over noise replications, tract z-scores have variance 1 (and 1/2 had the variance been doubled)."""
    rng = np.random.default_rng(11)
    rel, truth = _ragged(rng)
    exact = aggregate(rel, truth)
    z_tot, z_cell = [], []
    for _ in range(400):
        vals = []
        for lev, x in enumerate(exact):
            y = x.copy()
            for q in range(3):
                if rel.variance[lev, q] > 0:
                    y[:, q] = DiscreteGaussianMechanism(sigma=np.sqrt(rel.variance[lev, q])).release(x[:, q], rng=rng)
            vals.append(y)
        est = gls(NoisyHierarchy(**{**rel.__dict__, "values": tuple(vals)}))
        tot, se = est.totals()
        z_tot.append((tot - truth.sum(axis=1)) / se)
        z_cell.append((est.mean[2] - truth) / np.sqrt(np.diagonal(est.cov[2], axis1=1, axis2=2)))
    zt, zc = np.concatenate(z_tot), np.concatenate(z_cell).ravel()
    # 5,200 and 10,400 z-scores (correlated within a replication): chi-square bounds at 1e-5 on 400 dof
    lo, hi = stats.chi2.ppf([1e-5, 1 - 1e-5], 400) / 400
    for z in (zt, zc):
        assert lo < np.mean(z**2) < hi, np.mean(z**2)
        assert not lo < np.mean(z**2) / 2 < hi  # a doubled variance would fail
        assert abs(np.mean(z)) < 0.1


def test_round_to_totals_is_exact_and_within_one() -> None:
    rng = np.random.default_rng(5)
    groups = np.array([0, 0, 1, 1, 1])
    totals = np.array([17, 40])
    g = rng.exponential(size=(200, 5, 3))
    sums = np.stack([g[:, groups == k].sum(axis=(1, 2)) for k in range(2)], axis=1)
    x = g * (totals / sums)[:, groups][:, :, None]
    out = round_to_totals(x, groups, totals)
    assert out.dtype == np.int64
    for k in range(2):
        assert np.all(out[:, groups == k].sum(axis=(1, 2)) == totals[k])
    assert np.all(np.abs(out - x) < 1)
    with pytest.raises(NoiseawareValueError, match="must sum to the group totals"):
        round_to_totals(x * 2, groups, totals)
