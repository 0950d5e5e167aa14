"""DPCopula hybrid (seed 003 Algorithm 6): release, budget, floored Kendall, loader, synthesis."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware import copula
from noiseaware._privatize._dpcopula_hybrid import hybrid_kendall, partition_index
from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import NoiseawareError, PrivacyBudgetError, ReleaseFormatError

DOMS = {"sex": ["f", "m"], "x": range(100), "y": {"lower": 0.0, "upper": 10.0, "bins": 50}}


def _data(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    """Two partitions with opposite dependence and shifted x margins."""
    rng = np.random.default_rng(seed)
    sex = rng.integers(0, 2, n)
    z = rng.multivariate_normal([0, 0], [[1, 0.8], [0.8, 1]], n)
    z[sex == 1, 1] *= -1
    z[sex == 1, 0] += 1
    return pd.DataFrame(
        {
            "sex": np.where(sex == 1, "m", "f"),
            "x": np.clip((z[:, 0] * 10 + 50).round(), 0, 99).astype(int),
            "y": np.clip(z[:, 1] * 2 + 5, 0, 10),
        }
    )


def _tau_brute(codes: np.ndarray, part: np.ndarray, parts: int, floor: int) -> np.ndarray:
    """O(n^2) reference: concordant minus discordant pairs over C(max(n_g, floor), 2)."""
    m2 = codes.shape[1]
    out = np.zeros((parts, m2 * (m2 - 1) // 2))
    for g in range(parts):
        x = codes[part == g]
        ng = x.shape[0]
        for t, (i, j) in enumerate(itertools.combinations(range(m2), 2)):
            s = sum(
                np.sign(x[a, i] - x[b, i]) * np.sign(x[a, j] - x[b, j]) for a in range(ng) for b in range(a + 1, ng)
            )
            out[g, t] = s / max(ng * (ng - 1) / 2, floor * (floor - 1) / 2) if ng >= 2 else 0.0
    return out


def test_floored_kendall_matches_brute_force() -> None:
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, (40, 3))
    part = rng.integers(0, 3, 40)
    part[part == 2] = rng.choice([0, 1, 2], size=int((part == 2).sum()), p=[0.0, 0.9, 0.1])  # one small part
    for floor in (2, 8, 30):
        got = hybrid_kendall(codes, part, 3, [4, 4, 4], floor)
        np.testing.assert_allclose(got, _tau_brute(codes, part, 3, floor), atol=1e-12)


def test_partition_index_is_c_order() -> None:
    codes = np.array(list(itertools.product(range(2), range(3))))
    assert partition_index(codes, [2, 3]).tolist() == list(range(6))


def test_release_budget_structure_and_roundtrip() -> None:
    df = _data(600)
    budget = PrivacyBudget(epsilon=2.0)
    rel = na.privatize(
        df, statistic="dpcopula", epsilon=1.5, domains=DOMS, hybrid="auto", budget=budget, rng=np.random.default_rng(1)
    )
    assert rel.statistic == "dpcopula_hybrid" and list(rel.metadata["hybrid"]) == ["sex"]
    assert rel.metadata["hybrid_threshold"] == 10
    assert budget.spent == pytest.approx(1.5) and budget.ledger[0][0] == "dpcopula_hybrid"
    m, c1, c2 = rel.metadata, rel.components[0], rel.components[1]
    assert m["epsilon_counts"] == pytest.approx(0.15)
    assert m["epsilon_1"] == pytest.approx(1.35 * 8 / 9) and m["epsilon_2"] == pytest.approx(1.35 / 9)
    assert rel.guarantee.epsilon == pytest.approx(1.5)
    assert rel.values.shape == (2,) and c1.values.shape == (2 * 150,) and c2.values.shape == (2,)
    assert rel.mechanism.sensitivity == 2 and c1.mechanism.sensitivity == 4
    assert m["floor"] == 600 // 4 and c2.mechanism.sensitivity == pytest.approx(8 / 150)
    assert rel.labels == (("f",), ("m",)) and c2.labels[1] == ("m", "x", "y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = na.Release.from_json(rel.to_json(allow_simulation=True))
    assert back.statistic == "dpcopula_hybrid" and back.guarantee.isclose(rel.guarantee)
    with pytest.raises(PrivacyBudgetError):
        na.privatize(df, statistic="dpcopula", epsilon=1.0, domains=DOMS, hybrid=["sex"], budget=budget)
    assert budget.spent == pytest.approx(1.5)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("metadata", "floor"), 7),
        (("components", 1, "metadata", "floor"), 7),
        (("components", 1, "mechanism", "sensitivity"), 0.001),
        (("metadata", "counts_share"), 0.5),
        (("metadata", "hybrid"), ["x"]),
        (("components", 0, "mechanism", "sensitivity"), 2),
    ],
)
def test_loader_refuses_tampered_fields(path: tuple, value: object) -> None:
    rel = na.privatize(
        _data(300),
        statistic="dpcopula",
        epsilon=1.0,
        domains=DOMS,
        hybrid=["sex"],
        floor=50,
        rng=np.random.default_rng(2),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = json.loads(rel.to_json(allow_simulation=True))
        node = d
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        with pytest.raises(ReleaseFormatError):
            na.Release.from_json(json.dumps(d))


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"hybrid": ["nope"]}, "distinct column names"),
        ({"hybrid": ["sex", "x"]}, "at least two large-domain"),
        ({"hybrid": "auto", "hybrid_threshold": 2}, "hybrid_threshold"),
        ({"hybrid": "sometimes"}, "'auto' or a list"),
        ({"hybrid": ["sex"], "correlation": "median"}, "correlation='kendall' only"),
        ({"floor": 10}, "apply to hybrid"),
        ({"hybrid": ["sex"], "floor": 1}, "floor"),
        ({"hybrid": ["sex"], "counts_share": 1.0}, "counts_share"),
        ({"hybrid": ["sex"], "hybrid_threshold": 5}, "hybrid='auto' only"),
    ],
)
def test_bad_input(kw: dict, match: str) -> None:
    with pytest.raises(NoiseawareError, match=match):
        na.privatize(_data(200), statistic="dpcopula", epsilon=1.0, domains=DOMS, rng=np.random.default_rng(0), **kw)


def test_auto_needs_a_small_column() -> None:
    df = _data(200).drop(columns="sex")
    with pytest.raises(NoiseawareError, match="found no column"):
        na.privatize(df, statistic="dpcopula", epsilon=1.0, domains={"x": DOMS["x"], "y": DOMS["y"]}, hybrid="auto")


def test_synthesis_recovers_the_partition_structure() -> None:
    """Per partition: share, x mean and the sign of the dependence; the plain DPCopula loses the signs."""
    df = _data(6000)
    rel = na.privatize(df, statistic="dpcopula", epsilon=2.0, domains=DOMS, hybrid="auto", rng=np.random.default_rng(1))
    syn = copula.synthesize(rel, 6000, seed=3)
    assert list(syn.columns) == ["sex", "x", "y"] and str(syn.dtypes["x"]) == "int64"
    plain = copula.synthesize(
        na.privatize(df, statistic="dpcopula", epsilon=2.0, domains=DOMS, rng=np.random.default_rng(1)), 6000, seed=3
    )
    for s, sign in (("f", 1), ("m", -1)):
        a, b, c = syn[syn.sex == s], df[df.sex == s], plain[plain.sex == s]
        assert abs(len(a) - len(b)) < 250  # multinomial sd ~39 plus the count noise
        assert abs(a.x.mean() - b.x.mean()) < 1.5  # the shift of 10 between partitions is kept
        tau_syn = a[["x", "y"]].corr(method="kendall").iloc[0, 1]
        tau_true = b[["x", "y"]].corr(method="kendall").iloc[0, 1]
        assert sign * tau_syn > 0.4 and abs(tau_syn - tau_true) < 0.15
        assert abs(c[["x", "y"]].corr(method="kendall").iloc[0, 1]) < 0.2  # the plain copula mixes them


def test_simulated_hybrid_components_carry_the_simulation_note() -> None:
    rel = na.privatize(_data(600), statistic="dpcopula", epsilon=1.5, domains=DOMS, hybrid="auto",
                       rng=np.random.default_rng(1))
    assert "simulation" in rel.metadata
    assert all("simulation" in comp.metadata for comp in rel.components)
