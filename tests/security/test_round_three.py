"""Reliability, round three: releases read from OpenDP and agencies, regression bounds, hierarchy files, provenance.

Each test is one kind of bad case of the round-three attack set: a measurement whose noise law the
reader cannot name, a foreign exception, a regression release whose numbers leave float64 or
cannot be true, a hierarchy record checked less than a release, a provenance that lies. Each case
must give a correct result or the package's own clear error naming what is wrong.
"""

from __future__ import annotations

import copy
import itertools
import re
import warnings
from typing import Any

import numpy as np
import opendp.prelude as dp  # a dependency of the package: no skip
import pytest

import noiseaware as na
from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError, PrivacyWarning, ReleaseFormatError
from noiseaware.hierarchy import NoisyHierarchy, synthetic_nmf
from noiseaware.mechanisms import DiscreteGaussianMechanism


@pytest.fixture
def opendp_features():
    """OpenDP's contrib (and honest-but-curious, for a post-processing function) features, restored afterwards."""
    from opendp.mod import GLOBAL_FEATURES

    added = [f for f in ("contrib", "honest-but-curious") if f not in GLOBAL_FEATURES]
    if added:
        dp.enable_features(*added)
    yield dp
    if added:
        dp.disable_features(*added)


def _space(carrier: str, *, size: int | None = None) -> tuple[Any, Any]:
    atom = dp.atom_domain(T=carrier) if carrier != "f64" else dp.atom_domain(T=float, nan=False)
    return dp.vector_domain(atom, size=size), dp.l1_distance(T=carrier if carrier != "f64" else float)


# ------------------------------------------------------------------------------ OpenDP: the law read
def test_from_opendp_refuses_adapted_post_processed_and_composed_measurements(opendp_features) -> None:
    f64 = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    laplace = dp.m.make_laplace(*f64, scale=2.0)
    geometric = dp.m.make_geometric(*_space("i64"), scale=2.0)
    shift = dp.new_function(lambda x: [v + 5 for v in x], TO="Vec<i64>")
    cases = {
        # the adapter changes the accounting to zCDP; the noise stays Laplace (it was read as Gaussian)
        "adapter": (dp.c.make_pureDP_to_zCDP(laplace), 1.0, 1.0, "measure adapter"),
        # +5 after the noise: the output is not input + noise (it was read as a plain geometric)
        "post-processing": (dp.c.make_chain_pm(shift, geometric), [3], 1, "post-processing"),
        "post-processing by >>": (geometric >> (lambda x: x), [3], 1, "post-processing"),
        # several outputs, several laws (it raised a TypeError about a list)
        "composition": (dp.c.make_composition([laplace, laplace]), [1.0, 2.0], 1.0, "composition"),
    }
    for name, (meas, value, d_in, what) in cases.items():
        with pytest.raises(NoiseawareValueError, match=what) as err:
            na.Release.from_opendp(meas, value, d_in=d_in)
        assert "measurement itself" in str(err.value) or "once per noise measurement" in str(err.value), name
    # the measurements themselves are read, with the law they were built with
    assert na.Release.from_opendp(laplace, laplace(1.0), d_in=1.0).mechanism.family == "laplace"
    rel = na.Release.from_opendp(geometric, geometric([3]), d_in=1)
    assert (rel.mechanism.family, rel.mechanism.scale) == ("geometric", 2.0)


@pytest.mark.parametrize(
    ("carrier", "make", "d_in"),
    [
        ("i64", "laplace", 2**62),
        ("i64", "geometric", 2**62),
        ("i32", "laplace", 2**30),
        ("i32", "geometric", 2**30),
        ("f64", "laplace", 1e308),
    ],
)
def test_from_opendp_huge_d_in_is_the_packages_error_not_opendps(opendp_features, carrier, make, d_in) -> None:
    meas = getattr(dp.m, f"make_{make}")(*_space(carrier), scale=2.0)
    value = [3.0] if carrier == "f64" else [3]
    with pytest.raises(NoiseawareValueError, match=r"d_in must be .*at most") as err:
        na.Release.from_opendp(meas, value, d_in=d_in)
    assert type(err.value).__module__ == "noiseaware.exceptions"


def test_from_opendp_reads_gaussian_measurements_on_integer_domains(opendp_features) -> None:
    scalar = dp.m.make_gaussian(dp.atom_domain(T="i64"), dp.absolute_distance(T="i64"), scale=2.0)
    vector = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T="i32")), dp.l2_distance(T="i32"), scale=1.5)
    for meas, value, d_in, sigma in ((scalar, scalar(7), 1, 2.0), (vector, vector([4, 9]), 2, 1.5),
                                     (scalar, scalar(7), 1.0, 2.0)):
        rel = na.Release.from_opendp(meas, value, d_in=d_in)  # d_in of the metric's type (i64, i32); 1.0 is 1
        assert rel.mechanism.family == "discrete_gaussian" and rel.mechanism.sigma == sigma
        assert rel.guarantee.rho == float(meas.map(int(d_in)))  # OpenDP's own map
        assert rel.mechanism.sensitivity == d_in
    with pytest.raises(NoiseawareTypeError, match="d_in must be an integer"):
        na.Release.from_opendp(scalar, 7, d_in=1.5)


def test_from_opendp_value_must_be_one_output_of_the_measurement(opendp_features) -> None:
    sized = dp.m.make_laplace(*_space("i64", size=3), scale=2.0)
    with pytest.raises(NoiseawareValueError, match=r"3 number\(s\).*got 5"):
        na.Release.from_opendp(sized, [1, 2, 3, 4, 5], d_in=1)
    assert na.Release.from_opendp(sized, [1, 2, 3], d_in=1).values.tolist() == [1, 2, 3]
    atom = dp.m.make_laplace(dp.atom_domain(T="i64"), dp.absolute_distance(T="i64"), scale=2.0)
    with pytest.raises(NoiseawareValueError, match=r"1 number\(s\).*got 3"):  # 3 invocations would be 3 releases
        na.Release.from_opendp(atom, [1, 2, 3], d_in=1)


# --------------------------------------------------------------------------------------- regression
def _regression_data(n: int = 200) -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(n, 2))
    return np.column_stack([x, np.clip(x @ [0.5, -0.3] + 0.1 * rng.normal(size=n), -1, 1)])


@pytest.mark.parametrize("bound", [1e308, 1e200])
@pytest.mark.parametrize("method", ["ssp", "adassp", "pace_ggm"])
def test_regression_bounds_whose_moments_overflow_are_refused_before_any_budget(bound, method) -> None:
    budget = PrivacyBudget(rho=1.0)
    with pytest.raises(NoiseawareValueError, match=r"moments .* finite in float64") as err:
        na.privatize(_regression_data(), statistic="regression", response="x2", bound=bound, rho=1.0,
                     method=method, budget=budget)
    assert "Nothing was charged" in str(err.value)
    assert budget.spent == 0.0 and budget.ledger == ()


def test_regression_bounds_as_an_array_are_read_like_a_list() -> None:
    data = _regression_data()
    kw: dict[str, Any] = {"statistic": "regression", "response": "x2", "rho": 1.0}
    as_list = na.privatize(data, bounds=[1.0, 2.0, 1.5], rng=np.random.default_rng(3), **kw)
    as_array = na.privatize(data, bounds=np.array([1.0, 2.0, 1.5]), rng=np.random.default_rng(3), **kw)
    assert as_array == as_list and list(as_array.metadata["bounds"]) == [1.0, 1.0, 2.0, 1.5]
    with pytest.raises(NoiseawareValueError, match="bounds"):
        na.privatize(data, bounds=np.array([[1.0, 2.0, 1.5]]), **kw)


@pytest.mark.parametrize(
    ("method", "edit", "field"),
    [
        ("ssp", lambda d: d["values"].__setitem__(1, -500.0), "values[1]"),  # a diagonal 175 noise sd below 0
        ("ssp", lambda d: d["values"].__setitem__(-1, 1e300), "values[8]"),  # y'y beyond n with these bounds
        ("adassp", lambda d: d["values"].__setitem__(4, -500.0), "values[4]"),
        ("pace_ggm", lambda d: d["values"].__setitem__(0, -500.0), "values[0]"),  # the minimum eigenvalue
        ("ssp", lambda d: d.update(n=2**63), "'n'"),
        ("ssp", lambda d: d["metadata"].update(bounds=[1.0, 1e200, 1.0, 1.0]), "metadata.bounds"),
    ],
)
def test_loaded_regression_release_with_impossible_entries_is_refused(method, edit, field) -> None:
    rel = na.privatize(_regression_data(), statistic="regression", response="x2", bound=1.0, rho=1.0, method=method)
    d = rel.to_dict()
    assert na.Release.from_dict(copy.deepcopy(d)) == rel
    edit(d)
    with pytest.raises(ReleaseFormatError, match=re.escape(field)):
        na.Release.from_dict(d)


# -------------------------------------------------------------------------------------- hierarchy
def _hierarchy_dict() -> dict[str, Any]:
    return synthetic_nmf(2, 3, 4, rng=1).release.to_dict()


def _transcribed() -> dict[str, Any]:
    """The same file as an agency would publish it: not a simulation, made elsewhere."""
    return {**_hierarchy_dict(), "simulation": False, "provenance": "US Census Bureau 2020 NMF"}


def _set(path: tuple[Any, ...], value: Any):
    def edit(d: dict[str, Any]) -> None:
        target = d
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (_set(("parents", 0, 0), True), "parents[0]"),  # loaded as 1 before
        (_set(("values", 2, 0, 1), 2**62 + 1), "values[2]"),  # passed: checked after float64 rounding
        (_set(("variance", 1, 1), 4 + 1j), "variance"),  # lost its imaginary part
        (_set(("variance",), "abc"), "variance"),
        (_set(("variance",), {"state": 1}), "variance"),
        (_set(("values", 1), "abc"), "values[1]"),
        (_set(("values", 1), {"a": 1}), "values[1]"),
        (_set(("values", 1, 0), [1, 2]), "values[1]"),  # a ragged row
        (_set(("values", 1, 0), [object()] * 4), "values[1]"),
        (_set(("parents", 1), [[0, 1]] * 24), "parents[1]"),
    ],
)
def test_hierarchy_fields_are_typed_like_a_release(edit, field) -> None:
    d = _transcribed()
    NoisyHierarchy.from_dict(copy.deepcopy(d))
    edit(d)
    with pytest.raises(ReleaseFormatError, match=re.escape(f"NoisyHierarchy: {field}")):
        NoisyHierarchy.from_dict(d)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (_set(("provenance",), ""), "provenance"),
        (_set(("provenance",), "x" * 10_000), "provenance"),
        (_set(("provenance",), "US Census\x00Bureau"), "provenance"),
        (_set(("provenance",), "a\x1b[2Jb"), "provenance"),
        (_set(("provenance",), 3), "provenance"),
        (_set(("secure",), True), "only a record noiseaware drew itself"),  # a file noiseaware did not make
    ],
)
def test_hierarchy_provenance_and_secure_follow_the_release_rules(edit, match) -> None:
    d = _transcribed()
    edit(d)
    with pytest.raises(ReleaseFormatError, match=match):
        NoisyHierarchy.from_dict(d)


def test_hierarchy_simulation_needs_allow_simulation_and_warns_when_read(tmp_path) -> None:
    sim = synthetic_nmf(1, 2, 2, rng=3).release
    path = tmp_path / "nmf.json"
    with pytest.raises(NoiseawareValueError, match="allow_simulation"):
        sim.to_json(path)
    assert not path.exists()
    with pytest.warns(PrivacyWarning, match="SIMULATION"):
        sim.to_json(path, allow_simulation=True)
    with pytest.warns(PrivacyWarning, match="SIMULATION"):
        assert NoisyHierarchy.from_json(path) == sim
    published = NoisyHierarchy.from_dict({**sim.to_dict(), "simulation": False, "provenance": "an agency"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert NoisyHierarchy.from_json(published.to_json()) == published  # no warning for a published file


def test_hierarchy_state_totals_must_agree_with_their_counties() -> None:
    d = _transcribed()
    # the state total and its cells raised together by 400 (the cells still sum to the total), its counties not
    d["values"][0][0] = [d["values"][0][0][0] + 400, d["values"][0][0][1] + 400, *d["values"][0][0][2:]]
    with pytest.raises(ReleaseFormatError, match=r"NoisyHierarchy: values\[0\]\[0\] must be consistent: its children"):
        NoisyHierarchy.from_dict(d)
    d = _transcribed()
    d["values"][2][0][0] += 500  # one tract's total, beyond its cells
    with pytest.raises(ReleaseFormatError, match=r"values\[2\]\[0\]"):
        NoisyHierarchy.from_dict(d)


def test_genuine_hierarchy_files_pass_the_consistency_checks() -> None:
    # the checks refuse a genuine file with probability below 2**-63 each: none of these may fail
    for seed in range(40):
        synthetic_nmf(3, 3, 4, rng=seed, variance={"state": (0.0, 900.0), "county": (1.0, 25.0), "tract": (4.0, 1e4)})


def _brute_force_rho(rel: NoisyHierarchy, neighbours: str) -> float:
    """Max over neighbouring data sets of sum over noisy measurements of (change)^2 / (2 sigma^2)."""
    leaves, cells = len(rel.units[-1]), rel.n_cells
    anc = [np.arange(leaves)]
    for p in reversed(rel.parents):
        anc.insert(0, p[anc[0]])

    def effect(t: int, c: int) -> list[np.ndarray]:
        out = []
        for lev in range(len(rel.levels)):
            e = np.zeros((len(rel.units[lev]), 1 + cells))
            e[anc[lev][t], 0] = 1.0
            e[anc[lev][t], 1 + c] = 1.0
            out.append(e)
        return out

    def loss(delta: list[np.ndarray]) -> float:
        w = np.where(rel.variance > 0, 1.0 / (2.0 * np.where(rel.variance > 0, rel.variance, 1.0)), 0.0)
        return float(sum((dl**2 * w[lev]).sum() for lev, dl in enumerate(delta)))

    people = list(itertools.product(range(leaves), range(cells)))
    if neighbours == "add_remove":
        return max(loss(effect(t, c)) for t, c in people)
    return max(loss([b - a for a, b in zip(effect(*p), effect(*q), strict=True)]) for p in people for q in people)


def _tree(roots: int, rng: np.random.Generator) -> NoisyHierarchy:
    units = (tuple(f"s{i}" for i in range(roots)), tuple(f"k{i}" for i in range(2 * roots)),
             tuple(f"t{i}" for i in range(5 * roots)))
    parents = (np.repeat(np.arange(roots), 2), np.array([0, 0, 1, 1, 1] * roots) + np.repeat(2 * np.arange(roots), 5))
    variance = rng.uniform(1.0, 9.0, size=(3, 4))
    variance[0, 0] = 0.0
    values = tuple(np.zeros((len(u), 4), dtype=np.int64) for u in units)
    return NoisyHierarchy(levels=("s", "k", "t"), units=units, parents=parents, queries=("total", "a", "b", "c"),
                          values=values, variance=variance, secure=False, simulation=False, provenance="test")


def test_hierarchy_rho_is_stated_under_substitution_neighbours() -> None:
    rel = synthetic_nmf(2, 3, 4, rng=0).release
    assert rel.rho() == pytest.approx(0.9722222222222, rel=1e-12)  # it said 0.486, the add/remove figure
    assert rel.rho("add_remove") == pytest.approx(0.4861111111111, rel=1e-12)
    rng = np.random.default_rng(8)
    for roots in (1, 2):  # one root: the person cannot change root units; unequal variances per cell
        for _ in range(3):
            tree = _tree(roots, rng)
            for nb in ("substitution", "add_remove"):
                assert tree.rho(nb) == pytest.approx(_brute_force_rho(tree, nb), rel=1e-12), (roots, nb)
    with pytest.raises(NoiseawareValueError, match="neighbours"):
        rel.rho("add/remove")


# --------------------------------------------------------------------------------------- provenance
def test_external_readers_refuse_the_provenance_noiseaware(opendp_features) -> None:
    meas = dp.m.make_laplace(*_space("i64"), scale=2.0)
    for name in ("noiseaware", " NoiseAware "):
        with pytest.raises(NoiseawareValueError, match="reserved"):
            na.Release.from_published([1, 2], family="geometric", scale=1.0, provenance=name)
        with pytest.raises(NoiseawareValueError, match="reserved"):
            na.Release.from_opendp(meas, [1], d_in=1, provenance=name)


def test_published_file_edited_to_secure_noiseaware_is_refused() -> None:
    rel = na.Release.from_published([1021, 17, 0], family="discrete_gaussian", variance=4.0,
                                    provenance="US Census Bureau 2020 NMF", source="table P1")
    d = rel.to_dict()
    d.update(provenance="noiseaware", secure=True)
    with pytest.raises(ReleaseFormatError, match=r"metadata\.source"):
        na.Release.from_dict(d)


@pytest.mark.parametrize("maker", ["published", "noiseaware"])
def test_schema_downgrade_inconsistent_with_the_writer_is_refused(maker) -> None:
    if maker == "published":
        rel = na.Release.from_published([1021, 17, 0], family="discrete_gaussian", variance=4.0, provenance="agency")
    else:
        rel = na.privatize(np.array([3, 1, 4]), statistic="counts", epsilon=1.0, sensitivity=1)
    d = rel.to_dict()
    d["schema_version"] = 1
    del d["provenance"]
    d["secure"] = True
    with pytest.raises(ReleaseFormatError, match="noiseaware_version"):  # this version writes version 2
        na.Release.from_dict(d)
    del d["noiseaware_version"]
    with pytest.raises(ReleaseFormatError, match="noiseaware_version"):  # every version-1 writer wrote it
        na.Release.from_dict(d)


@pytest.mark.parametrize(
    ("stated", "groups"),
    [
        ({1: 0.5, "1": 0.25}, [1, 1, 1]),  # one of the two alphas was dropped
        ({"1": 0.5}, [1, 1, "1"]),  # two groups became one
    ],
)
def test_group_keys_that_are_the_same_text_are_refused(stated, groups) -> None:
    with pytest.raises(NoiseawareValueError, match="same as text"):
        na.Release.from_published([5, 9, 13], family="geometric", alpha=stated, groups=groups, provenance="agency")


def test_group_keys_of_one_spelling_still_work() -> None:
    rels = na.Release.from_published([5, 9, 13], family="geometric", alpha={1: 0.5, 2: 0.25},
                                     groups=np.array([1, 1, 2]), provenance="agency")
    assert {k: r.values.tolist() for k, r in rels.items()} == {"1": [5, 9], "2": [13]}


def test_discrete_gaussian_helper_is_the_registry_law() -> None:
    # the reach used by the hierarchy checks is the discrete Gaussian's: its tail beyond R(sigma^2) is below 2**-64
    from noiseaware.hierarchy._record import _reach

    for var in (1.0, 4.0, 9.0, 100.0):
        mech = DiscreteGaussianMechanism(sigma=float(np.sqrt(var)))
        r = int(_reach(var))
        assert float(mech.noise_cdf(np.array([-r]))[0]) < 2.0**-64


def test_hierarchy_sums_are_exact_near_the_int64_limit() -> None:
    # counts near 2**62 sum beyond int64: the checks add them as exact integers, so a 1,000 gap is still seen
    big = 2**60
    values = [[[4 * big, 2 * big, 2 * big]], [[2 * big, big, big], [2 * big, big, big]],
              [[big, big // 2, big // 2]] * 4]
    rec = {"schema": "noiseaware.hierarchy", "schema_version": 1, "family": "discrete_gaussian",
           "levels": ["s", "k", "t"], "units": [["s0"], ["k0", "k1"], ["t0", "t1", "t2", "t3"]],
           "parents": [[0, 0], [0, 0, 1, 1]], "queries": ["total", "a", "b"], "values": values,
           "variance": [[0.0, 4.0, 4.0], [4.0, 4.0, 4.0], [4.0, 4.0, 4.0]], "secure": False, "simulation": False,
           "provenance": "test"}
    NoisyHierarchy.from_dict(rec)
    rec["values"][1][1][0] += 1000
    rec["values"][1][1][1] += 1000  # the county's cells still sum to its total; the state's children do not
    with pytest.raises(ReleaseFormatError, match=r"values\[0\]\[0\] must be consistent"):
        NoisyHierarchy.from_dict(rec)
