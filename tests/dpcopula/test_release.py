"""privatize(statistic='dpcopula'): budget split, composition, sensitivities, JSON, tampering, bad input."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware._privatize import _dpcopula as dp
from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError, ReleaseFormatError

RNG = np.random.default_rng(3)


def frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    z = r.multivariate_normal([0, 0, 0], [[1, 0.6, 0.3], [0.6, 1, 0.2], [0.3, 0.2, 1]], size=n)
    return pd.DataFrame(
        {
            "age": np.clip(np.round(z[:, 0] * 15 + 45), 0, 99).astype(np.int64),
            "income": np.clip(z[:, 1] * 2 + 5, 0, 20),
            "sex": pd.Categorical(np.where(z[:, 2] > 0, "f", "m"), categories=["f", "m"]),
        }
    )


DOMAINS: dict[str, Any] = {
    "age": range(0, 100),
    "income": {"lower": 0.0, "upper": 20.0, "bins": 40},
    "sex": ["f", "m"],
}


def release(corr: str = "kendall", **kw: Any) -> na.Release:
    opts: dict[str, Any] = {"domains": DOMAINS, "correlation": corr, "rng": np.random.default_rng(1)}
    if corr == "mle":
        opts["blocks"] = 20
    opts.update(kw)
    return na.privatize(frame(), statistic="dpcopula", epsilon=kw.pop("epsilon", 0.9), **opts)


def dump(rel: na.Release) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a simulation release warns when serialized
        return rel.to_json(allow_simulation=True)


def load(text: str) -> na.Release:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return na.Release.from_json(text)


@pytest.mark.parametrize("corr", ["kendall", "mle", "median"])
@pytest.mark.parametrize("ratio", [8.0, 0.5])
def test_budget_split_and_composition(corr: str, ratio: float) -> None:
    eps = 0.9
    budget = PrivacyBudget(epsilon=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # median pairs may warn about utility at this n
        rel = na.privatize(
            frame(),
            statistic="dpcopula",
            epsilon=eps,
            ratio=ratio,
            correlation=corr,
            domains=DOMAINS,
            budget=budget,
            rng=np.random.default_rng(0),
            **({"blocks": 20} if corr == "mle" else {}),
        )
    m, n, k = 3, 300, 3
    eps1, eps2 = eps * ratio / (ratio + 1), eps / (ratio + 1)
    # Theorem 4.2 erratum: the total is eps1 + eps2, not m eps1 + C(m,2) eps2
    assert rel.guarantee.epsilon == pytest.approx(eps, rel=1e-12)
    assert budget.spent == pytest.approx(eps, rel=1e-12) and len(budget.ledger) == 1
    assert rel.metadata["epsilon_1"] == pytest.approx(eps1) and rel.metadata["epsilon_2"] == pytest.approx(eps2)
    # margins: alpha = exp(-eps1 / (2m)) on every cell, i.e. eps1/m per histogram of sensitivity 2
    assert rel.mechanism.sensitivity == 2 * m
    assert rel.mechanism.alpha == pytest.approx(math.exp(-eps1 / (2 * m)))
    comp = rel.components[0]
    assert comp.guarantee.epsilon == pytest.approx(eps2)
    if corr == "kendall":  # Algorithm 5 with Delta_tau = 4/n: scale C(m,2) * 4 / (n eps2)
        assert comp.statistic == "kendall_pairs"
        assert comp.mechanism.scale == pytest.approx(k * 4 / (n * eps2))
    elif corr == "mle":  # Algorithm 2: scale C(m,2) * 2 / (l eps2)
        assert comp.statistic == "dpcopula_mle"
        assert comp.mechanism.scale == pytest.approx(k * 2 / (20 * eps2))
        assert comp.metadata["block_size"] == 15
    else:
        assert comp.statistic == "median_pairs"
        assert comp.mechanism.alpha == pytest.approx(math.exp(-eps2 / k))


def test_histogram_sensitivity_is_2m_by_brute_force() -> None:
    """Every substitution of one record over a small grid moves the concatenated histograms by at most 2m."""
    doms = [range(0, 3), range(0, 2), range(0, 3)]
    x = np.array([[0, 1, 2], [1, 0, 0], [2, 1, 1], [0, 0, 2]])
    grid = np.array(list(itertools.product(range(3), range(2), range(3))))

    def hist(data: np.ndarray) -> np.ndarray:
        return np.concatenate([np.bincount(data[:, j], minlength=len(d)) for j, d in enumerate(doms)])

    h0 = hist(x)
    worst = 0
    for i in range(x.shape[0]):
        for row in grid:
            z = x.copy()
            z[i] = row
            worst = max(worst, int(np.abs(hist(z) - h0).sum()))
    rel = na.privatize(x, statistic="dpcopula", epsilon=1.0, domains=doms, rng=np.random.default_rng(0))
    assert worst == 2 * x.shape[1] == rel.mechanism.sensitivity


def test_mle_block_average_sensitivity_by_search() -> None:
    """Algorithm 2: replacing one record changes the block average by at most 2 / l (and does reach near it)."""
    r = np.random.default_rng(4)
    n, m, blocks = 24, 3, 4
    x = r.integers(0, 5, (n, m))
    perm = r.permutation(n)
    base, _ = dp.dpcopula_mle_blocks(x, blocks, perm)
    worst = 0.0
    for i in range(n):
        for _ in range(30):
            z = x.copy()
            z[i] = r.integers(0, 5, m)
            worst = max(worst, float(np.max(np.abs(dp.dpcopula_mle_blocks(z, blocks, perm)[0] - base))))
    assert 0.1 < worst <= 2.0 / blocks + 1e-12


@pytest.mark.parametrize("corr", ["kendall", "mle", "median"])
def test_json_round_trip_keeps_names_domains_and_dtypes(corr: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = release(corr)
    back = load(dump(rel))
    assert back == rel
    assert back.metadata["columns"] == ("age", "income", "sex")
    assert back.metadata["dtypes"] == ("int64", "float64", "category")
    assert back.metadata["bins"] == (100, 40, 2)
    assert back.labels[0] == ("age", "0") and back.labels[100] == ("income", "[0, 0.5)")
    assert back.labels[-1] == ("sex", "m")


def _tamper(rel: na.Release, edit: Any) -> str:
    d = json.loads(dump(rel))
    edit(d)
    return json.dumps(d)


TAMPER = [
    # the seed's per-margin view (sensitivity 2) with the same epsilon: refused, the joint sensitivity is 2m
    (
        "sensitivity",
        lambda d: d["mechanism"].update(sensitivity=2, scale=d["mechanism"]["scale"] / 3),
        "mechanism.sensitivity",
    ),
    ("epsilon_2", lambda d: d["metadata"].update(epsilon_2=0.5), "epsilon_2"),
    ("ratio", lambda d: d["metadata"].update(ratio=1.0), "metadata.ratio"),
    ("bins", lambda d: d["metadata"].update(bins=[99, 40, 2]), "metadata.bins"),
    ("domain", lambda d: d["metadata"]["domains"][0].update(kind="stars"), "metadata.domains[0]"),
    ("correlation", lambda d: d["metadata"].update(correlation="mle"), "components"),
    ("no component", lambda d: d.update(components=[]), "guarantee"),
    ("component n", lambda d: d["components"][0].update(n=301), "sensitivity"),
    ("value out of reach", lambda d: d["values"].__setitem__(0, 10**9), "values"),
]


@pytest.mark.parametrize(("case", "edit", "field"), TAMPER, ids=[t[0] for t in TAMPER])
def test_tampered_record_is_refused_naming_the_field(case: str, edit: Any, field: str) -> None:
    rel = release()
    with pytest.raises(ReleaseFormatError, match=field.replace("[", r"\[").replace("]", r"\]")):
        load(_tamper(rel, edit))


def test_numpy_array_input_and_list_of_domains() -> None:
    x = RNG.integers(0, 10, (200, 2))
    rel = na.privatize(
        x, statistic="dpcopula", epsilon=1.0, domains=[range(10), range(10)], rng=np.random.default_rng(0)
    )
    assert rel.metadata["columns"] == ("x0", "x1") and rel.values.shape == (20,)


BAD = [
    ({"domains": None}, NoiseawareValueError, "give domains"),
    ({"domains": {"age": range(100), "income": DOMAINS["income"]}}, NoiseawareValueError, r"missing \['sex'\]"),
    ({"domains": {**DOMAINS, "age": range(0, 50)}}, NoiseawareValueError, "'age' has .* outside its stated domain"),
    ({"domains": {**DOMAINS, "sex": ["f"]}}, NoiseawareValueError, "at least 2 cells"),
    ({"domains": {**DOMAINS, "sex": ["f", "x"]}}, NoiseawareValueError, "'sex' has .* outside its stated domain"),
    ({"domains": {**DOMAINS, "income": {"lower": 0.0, "upper": 20.0}}}, NoiseawareTypeError, "must be integers"),
    ({"domains": {**DOMAINS, "income": range(0, 21)}}, NoiseawareValueError, "non-integer"),
    ({"domains": {**DOMAINS, "age": {"lower": 5.0, "upper": 1.0, "bins": 3}}}, NoiseawareValueError, "lower < upper"),
    ({"correlation": "pearson"}, NoiseawareValueError, "correlation must be one of"),
    ({"ratio": 0}, NoiseawareValueError, "ratio"),
    ({"correlation": "mle", "blocks": 200}, NoiseawareValueError, "Algorithm 2 needs at least m \\+ 1 = 4"),
    ({"correlation": "mle"}, NoiseawareValueError, "Algorithm 2 needs"),  # default l = ceil(3 / (0.025 * 0.1))
    ({"blocks": 3}, NoiseawareValueError, "blocks applies to correlation='mle' only"),
    ({"bins": 3}, NoiseawareTypeError, "unexpected option"),
]


@pytest.mark.parametrize(("kw", "err", "match"), BAD)
def test_bad_input_is_named(kw: dict[str, Any], err: type, match: str) -> None:
    opts = {"domains": DOMAINS, **kw}
    with pytest.raises(err, match=match):
        na.privatize(frame(), statistic="dpcopula", epsilon=1.0, rng=np.random.default_rng(0), **opts)


def test_constant_column_single_column_and_missing_values() -> None:
    df = frame()
    df["sex"] = pd.Categorical(["f"] * len(df), categories=["f", "m"])
    with pytest.raises(NoiseawareValueError, match="'sex' takes one value only"):
        na.privatize(df, statistic="dpcopula", epsilon=1.0, domains=DOMAINS)
    with pytest.raises(NoiseawareValueError, match="at least two columns"):
        na.privatize(frame()[["age"]], statistic="dpcopula", epsilon=1.0, domains={"age": range(100)})
    df = frame()
    df.loc[3, "income"] = np.nan
    with pytest.raises(NoiseawareValueError, match="missing values"):
        na.privatize(df, statistic="dpcopula", epsilon=1.0, domains=DOMAINS)


def test_nothing_is_spent_on_bad_input() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(NoiseawareValueError):
        na.privatize(
            frame(), statistic="dpcopula", epsilon=1.0, domains={**DOMAINS, "age": range(0, 50)}, budget=budget
        )
    assert budget.spent == 0


def test_integer_domains_near_2_60_are_encoded_exactly() -> None:
    big = 2**60  # float64 cannot tell big, big + 1, ..., big + 127 apart
    ids = np.array([big, big + 1, big + 2, big + 4] * 25, dtype=np.int64)
    df = pd.DataFrame({"id": ids, "k": np.arange(100) % 3})
    doms = {"id": range(big, big + 5), "k": range(3)}
    codes, _, _, _ = dp.table_codes(df, doms)
    assert np.array_equal(codes[:, 0], ids - big)  # exact cell codes, not all 0
    assert np.array_equal(codes[:, 0], dp.table_codes(df.astype({"id": np.uint64}), doms)[0][:, 0])
    rel = na.privatize(df, statistic="dpcopula", epsilon=1.0, domains=doms, rng=np.random.default_rng(0))
    assert rel.labels[4] == ("id", str(big + 4))
    syn = load(dump(rel))
    from noiseaware import copula

    out = copula.synthesize(syn, 50, seed=0)["id"]
    assert str(out.dtype) == "int64" and set(out.tolist()) <= set(range(big, big + 5))
    # a value just outside the domain (big + 100 rounds to big in float64) is refused, exactly named
    outside = df.assign(id=np.where(np.arange(100) == 7, big + 100, ids))
    with pytest.raises(NoiseawareValueError, match=rf"'id' has 1 value\(s\) outside .* e\.g\. {big + 100}"):
        na.privatize(outside, statistic="dpcopula", epsilon=1.0, domains=doms)
    with pytest.raises(NoiseawareValueError, match=r"lower and upper must lie in \[-2\*\*63, 2\*\*63 - 1\]"):
        na.privatize(df, statistic="dpcopula", epsilon=1.0, domains={"id": range(2**70, 2**70 + 5), "k": range(3)})
