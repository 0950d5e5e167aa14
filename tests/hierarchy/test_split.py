"""A hierarchy split by root unit, fitted on Dask and stitched (``NoisyHierarchy.split_by_root``, ``fit_hierarchy``).

The trees are tiny and the cluster is in-process (threads), so the tier's tests compile one small integer
program per shape. The release's units are shuffled within each level, so that the leaves and measurements of
the two states interleave and the stitching's reordering is exercised.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from noiseaware import hierarchy, results
from noiseaware._engine import group
from noiseaware.exceptions import NoiseawareError, NoiseawareTypeError, NoiseawareValueError
from noiseaware.hierarchy import NoisyHierarchy

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install '.[dask]')")

from noiseaware.distributed import fit_hierarchy, part_seed  # noqa: E402
from noiseaware.hierarchy import PART_DIM  # noqa: E402

SAMPLING = {"chains": 2, "draws": 600, "warmup": 200, "seed": 11, "check_mixing": False}


def _shuffled(rel: NoisyHierarchy, seed: int = 0) -> NoisyHierarchy:
    """The same file with the units of every level below the root in a random order (parents re-indexed)."""
    rng = np.random.default_rng(seed)
    perms = [np.arange(len(rel.units[0]))] + [rng.permutation(len(u)) for u in rel.units[1:]]
    inv = [np.argsort(p) for p in perms]
    return NoisyHierarchy(
        levels=rel.levels, units=[[u[i] for i in p] for u, p in zip(rel.units, perms, strict=True)],
        parents=[inv[lev - 1][rel.parents[lev - 1][perms[lev]]] for lev in range(1, len(rel.levels))],
        queries=rel.queries, values=[x[p] for x, p in zip(rel.values, perms, strict=True)], variance=rel.variance,
        secure=rel.secure, simulation=rel.simulation, provenance=rel.provenance,
    )


@pytest.fixture(scope="module")
def release() -> NoisyHierarchy:
    sim = hierarchy.synthetic_nmf(2, 2, 2, cells=("a", "b"), mean_population=6.0, rng=3)
    return _shuffled(sim.release)


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dask's own start-up notices (ports, event loop)
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
        c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def stitched(release, client):
    return fit_hierarchy(release, client=client, prior="uniform", **SAMPLING)


# ------------------------------------------------------------------------------------------------ the split
def test_split_round_trip(release):
    parts = release.split_by_root()
    subtrees = release.root_subtrees()
    assert [p.units[0] for p in parts] == [(u,) for u in release.units[0]]
    assert sum(p.n_measurements for p in parts) == release.n_measurements
    for lev in range(len(release.levels)):
        got = np.sort(np.concatenate([ix[lev] for ix in subtrees]))
        assert np.array_equal(got, np.arange(len(release.units[lev])))  # the parts partition every level
    for part, ix in zip(parts, subtrees, strict=True):
        assert part.levels == release.levels and part.queries == release.queries
        assert np.array_equal(part.variance, release.variance)
        assert (part.secure, part.simulation, part.provenance) == (release.secure, release.simulation,
                                                                  release.provenance)
        for lev in range(len(release.levels)):
            assert part.units[lev] == tuple(release.units[lev][i] for i in ix[lev])
            assert np.array_equal(part.values[lev], release.values[lev][ix[lev]])
        for lev in range(1, len(release.levels)):  # a part's parents point at the release's parents
            assert np.array_equal(ix[lev - 1][part.parents[lev - 1]], release.parents[lev - 1][ix[lev]])
        assert NoisyHierarchy.from_dict(part.to_dict()).to_dict() == part.to_dict()  # a valid record


def test_split_refuses_noisy_root_totals():
    sim = hierarchy.synthetic_nmf(2, 2, 2, rng=0, variance=np.full((3, 4), 4.0))
    assert sim.release.root_totals() is None
    with pytest.raises(NoiseawareValueError, match=r"split_by_root: variance\[0\]\[0\] must be 0"):
        sim.release.split_by_root()
    with pytest.raises(NoiseawareValueError, match="split_by_root"):
        fit_hierarchy(sim.release, processes=False, n_workers=1, prior="uniform")


def test_fit_hierarchy_refusals(release):
    with pytest.raises(NoiseawareTypeError, match=r"fit_hierarchy: release must be a hierarchy\.NoisyHierarchy"):
        fit_hierarchy({"not": "a release"})
    with pytest.raises(NoiseawareValueError, match="fit_hierarchy: model must be None"):
        fit_hierarchy(release, model=lambda: None)
    with pytest.raises(NoiseawareValueError, match="fit_hierarchy: chains must be an integer >= 1"):
        fit_hierarchy(release, chains=0)
    with pytest.raises(NoiseawareValueError, match="fit_hierarchy: prior must be one of"):
        fit_hierarchy(release, prior="flat")
    with pytest.raises(NoiseawareValueError, match="not both"):
        fit_hierarchy(release, client=object(), address="tcp://127.0.0.1:1")


def test_failed_part_is_raised_with_its_root_unit(client):
    two_levels = NoisyHierarchy(levels=("state", "tract"), units=(("s0", "s1"), ("t0", "t1", "t2")),
                                parents=([0, 1, 1],), queries=("total", "a"),
                                values=([[3, 3], [4, 4]], [[3, 3], [2, 2], [2, 2]]),
                                variance=[[0.0, 4.0], [4.0, 4.0]], secure=False, simulation=True, provenance="test")
    # the hierarchical prior needs three levels: every part fails on its worker
    with pytest.raises(NoiseawareError, match=r"fit_hierarchy: the fit of root unit 's[01]' \(part [01]\) failed"):
        fit_hierarchy(two_levels, client=client, chains=1, draws=5, warmup=5, seed=0)


# ---------------------------------------------------------------------------------------------- the stitch
def test_stitched_shape_coords_and_totals(release, stitched):
    post = group(stitched, "posterior")
    assert post["counts"].dims == ("chain", "draw", "leaf", "cell")
    assert list(post["leaf"].values) == list(release.units[-1])
    assert list(post["cell"].values) == list(release.queries[1:])
    counts = np.asarray(post["counts"])
    leaf_root = release.leaf_parents
    for s, total in enumerate(release.root_totals()):
        assert np.all(counts[:, :, leaf_root == s].sum(axis=(2, 3)) == total)
    data = hierarchy.model_data(release)
    ll = group(stitched, "log_likelihood")["measurements"]
    assert ll.dims == ("chain", "draw", "measurement") and ll.shape[2] == release.n_measurements
    # the pointwise log-likelihood of the stitched counts, in the whole file's measurement order
    flat = counts.reshape(-1, *counts.shape[2:])[:5]
    assert np.allclose(np.asarray(ll).reshape(-1, ll.shape[2])[:5], hierarchy.pointwise_log_likelihood(data, flat))
    assert np.array_equal(np.asarray(group(stitched, "observed_data")["measurements"]), data.y)
    stats = group(stitched, "sample_stats")["accept_rate"]
    assert stats.dims == ("chain", "draw", PART_DIM) and list(stats[PART_DIM].values) == list(release.units[0])
    attrs = stitched.attrs
    assert attrs["noiseaware_seed"] == SAMPLING["seed"] and attrs["noiseaware_split_exact"] == 1
    assert list(attrs["noiseaware_part_seeds"]) == [part_seed(SAMPLING["seed"], s) for s in range(2)]
    assert results.settings(stitched).draws == SAMPLING["draws"]
    assert results.draws(stitched).shape == (SAMPLING["chains"] * SAMPLING["draws"], len(release.units[-1]), 2)


def test_stitched_equals_the_parts_fitted_directly(release, stitched):
    """Draw for draw: part s is hierarchy.fit(split_by_root()[s], seed=part_seed(seed, s))."""
    post = group(stitched, "posterior")["counts"]
    ll = group(stitched, "log_likelihood")["measurements"]
    stats = group(stitched, "sample_stats")["accept_rate"]
    for s, part in enumerate(release.split_by_root()):
        direct = hierarchy.fit(part, prior="uniform", **{**SAMPLING, "seed": part_seed(SAMPLING["seed"], s)})
        d_counts = group(direct, "posterior")["counts"]
        assert np.array_equal(post.sel(leaf=list(d_counts["leaf"].values)).values, d_counts.values)
        d_ll = group(direct, "log_likelihood")["measurements"]
        assert np.array_equal(ll.sel(measurement=list(d_ll["measurement"].values)).values, d_ll.values)
        assert np.array_equal(stats.isel({PART_DIM: s}).values, group(direct, "sample_stats")["accept_rate"].values)


def _mean_gap(a: np.ndarray, b: np.ndarray) -> float:
    """Largest |mean_a - mean_b| / MCSE over the leaf cells (MCSE from ArviZ's bulk ESS of each run)."""
    import arviz as az

    from noiseaware.results import from_groups

    def mean_se(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = x.astype(np.float64)
        ess = np.asarray(az.ess(from_groups({"posterior": {"x": x}}), method="mean")["x"])
        return x.mean(axis=(0, 1)), x.std(axis=(0, 1)) / np.sqrt(ess)

    ma, sa = mean_se(a)
    mb, sb = mean_se(b)
    se = np.sqrt(sa**2 + sb**2)
    gap = np.abs(ma - mb)
    return float(np.max(np.where(se > 0, gap / np.where(se > 0, se, 1.0), np.where(gap > 0, np.inf, 0.0))))


def test_stitched_matches_the_whole_file_fit(release, stitched):
    """The split is exact under the uniform prior: the stitched means match a whole-file fit within MC error.

    Threshold: 4.5 Monte Carlo SE over 16 leaf cells (two-sided normal tail 6.8e-6 each, below 1.1e-4 in all);
    the test is shown to reject a stitch that puts the states' leaves in the wrong places.
    """
    whole = hierarchy.fit(release, prior="uniform", **SAMPLING)
    a = np.asarray(group(stitched, "posterior")["counts"])
    b = np.asarray(group(whole, "posterior")["counts"])
    assert list(group(whole, "posterior")["leaf"].values) == list(group(stitched, "posterior")["leaf"].values)
    assert _mean_gap(a, b) < 4.5
    wrong = a[:, :, ::-1]  # the leaves in reverse: each count attached to another tract
    assert _mean_gap(wrong, b) > 4.5


@pytest.mark.slow  # the hierarchical prior's NUTS step compiles for each shape (about 40 s on 2 cores)
def test_hierarchical_prior_is_stitched_per_part(release, client):
    res = fit_hierarchy(release, client=client, chains=1, draws=20, warmup=20, seed=2, check_mixing=False)
    post = group(res, "posterior")
    assert res.attrs["noiseaware_split_exact"] == 0
    assert post["sigma_county"].dims == ("chain", "draw", PART_DIM)
    assert post["log_rate"].dims == ("chain", "draw", "leaf", "cell")
    assert list(post["leaf"].values) == list(release.units[-1])


@pytest.mark.slow  # make test-full: another program shape compiled on the workers (5 s)
def test_mixing_is_checked_once_on_the_stitched_counts(release, client):
    from noiseaware.exceptions import MixingWarning

    with pytest.warns(MixingWarning, match="fit_hierarchy"):
        fit_hierarchy(release, client=client, prior="uniform", chains=1, draws=8, warmup=4, seed=0)
