"""copula.synthesize (Algorithm 3 with Phi): margins and correlation recovered at large epsilon; dtypes; errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.special

import noiseaware as na
from noiseaware import copula
from noiseaware._engine import from_groups, group
from noiseaware._privatize._dpcopula import kendall_tau_a_fast
from noiseaware.copula._dpcopula_fit import _attach_margins
from noiseaware.exceptions import NoiseawareTypeError, NoiseawareValueError

R_TRUE = np.array([[1.0, 0.7, -0.4], [0.7, 1.0, -0.2], [-0.4, -0.2, 1.0]])


def data(n: int = 20_000, seed: int = 0) -> pd.DataFrame:
    from scipy import stats

    z = np.random.default_rng(seed).multivariate_normal(np.zeros(3), R_TRUE, size=n)
    u = stats.norm.cdf(z)
    return pd.DataFrame(
        {
            "a": np.floor(u[:, 0] ** 2 * 400).astype(np.int64),  # skewed integer margin 0..399
            "b": stats.expon.ppf(u[:, 1]).clip(0, 8),  # real margin on [0, 8]
            "c": pd.Categorical(
                np.array(["lo", "mid", "hi"])[np.digitize(u[:, 2], [0.3, 0.8])], categories=["lo", "mid", "hi"]
            ),
        }
    )


DOMAINS: dict[str, Any] = {"a": range(400), "b": {"lower": 0.0, "upper": 8.0, "bins": 200}, "c": ["lo", "mid", "hi"]}


def recovery(df: pd.DataFrame, syn: pd.DataFrame) -> tuple[float, float]:
    """Largest total-variation distance of the margins, and the Kendall tau-a gap of the two large-domain columns.

    (Pairs with the 3-valued column are attenuated twice, by the ties of tau-a in the release and again
    in the synthetic copy: DPCopula's known weakness on small domains, seed 003 §4.4.)
    """
    tv = 0.0
    for c, dom in DOMAINS.items():
        if isinstance(dom, dict):
            edges = np.linspace(dom["lower"], dom["upper"], dom["bins"] + 1)
            p = np.histogram(df[c], edges)[0] / len(df)
            q = np.histogram(syn[c], edges)[0] / len(syn)
        else:
            cats = list(dom)
            p = pd.Series(df[c]).astype(object).value_counts(normalize=True).reindex(cats, fill_value=0).to_numpy()
            q = pd.Series(syn[c]).astype(object).value_counts(normalize=True).reindex(cats, fill_value=0).to_numpy()
        tv = max(tv, 0.5 * float(np.abs(p - q).sum()))
    codes = lambda f: np.column_stack(  # noqa: E731
        [f["a"].to_numpy(), np.floor(f["b"].to_numpy() * 25), pd.Categorical(f["c"], categories=DOMAINS["c"]).codes]
    )
    x, y = codes(df), codes(syn)
    gap = abs(kendall_tau_a_fast(x[:, 0], x[:, 1]) - kendall_tau_a_fast(y[:, 0], y[:, 1]))
    return tv, gap


@pytest.fixture(scope="module")
def released() -> tuple[pd.DataFrame, na.Release]:
    df = data()
    rel = na.privatize(df, statistic="dpcopula", epsilon=4.0, domains=DOMAINS, rng=np.random.default_rng(1))
    return df, rel


def test_synthesize_recovers_margins_and_dependence(released: tuple[pd.DataFrame, na.Release]) -> None:
    df, rel = released
    syn = copula.synthesize(rel, 50_000, seed=2)
    tv, gap = recovery(df, syn)
    # sampling sd of a tau-a at 5e4 rows ~0.004 and noise on tau ~ 3 * 4/(2e4 * 0.44) = 0.0014; TV of 400 cells ~0.05
    assert tv < 0.1 and gap < 0.02, (tv, gap)


def test_a_density_instead_of_the_cdf_is_caught(
    released: tuple[pd.DataFrame, na.Release], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Algorithm 3 as printed (phi, the density) fails the same check."""
    df, rel = released
    monkeypatch.setattr(scipy.special, "ndtr", lambda z: np.exp(-z * z / 2) / np.sqrt(2 * np.pi))
    tv, gap = recovery(df, copula.synthesize(rel, 50_000, seed=2))
    assert tv > 0.1 or gap > 0.1


def test_names_and_dtypes_are_kept(released: tuple[pd.DataFrame, na.Release]) -> None:
    _, rel = released
    syn = copula.synthesize(rel, 1000, seed=0)
    assert list(syn.columns) == ["a", "b", "c"]
    assert str(syn["a"].dtype) == "int64" and str(syn["b"].dtype) == "float64"
    assert isinstance(syn["c"].dtype, pd.CategoricalDtype) and list(syn["c"].cat.categories) == ["lo", "mid", "hi"]
    assert syn["a"].between(0, 399).all() and syn["b"].between(0, 8).all()
    strings = pd.DataFrame({"s": np.where(np.arange(200) % 2, "x", "y"), "k": np.arange(200) % 7})
    rel2 = na.privatize(
        strings,
        statistic="dpcopula",
        epsilon=1.0,
        domains={"s": ["x", "y"], "k": range(7)},
        rng=np.random.default_rng(0),
    )
    syn2 = copula.synthesize(rel2, 50, seed=0)
    assert set(syn2["s"]) <= {"x", "y"} and syn2["k"].dtype == np.int64


def test_interval_values_are_spread_inside_their_cells(released: tuple[pd.DataFrame, na.Release]) -> None:
    _, rel = released
    b = copula.synthesize(rel, 20_000, seed=3)["b"].to_numpy()
    frac = (b * 25) % 1.0  # position inside the 0.04-wide cells: uniform
    assert abs(frac.mean() - 0.5) < 0.02 and np.unique(b).size > 10_000


def test_correlation_point_estimates_of_the_three_routes() -> None:
    df = data(60_000, seed=5)
    for corr, tol in (("kendall", 0.05), ("median", 0.1), ("mle", 0.15)):
        kw: dict[str, Any] = {"blocks": 600} if corr == "mle" else {}
        rel = na.privatize(
            df, statistic="dpcopula", epsilon=4.0, domains=DOMAINS, correlation=corr, rng=np.random.default_rng(2), **kw
        )
        P = copula.dpcopula_correlation(rel)
        assert np.allclose(P, P.T) and np.all(np.linalg.eigvalsh(P) > 0)
        assert abs(P[0, 1] - R_TRUE[0, 1]) < tol, (corr, P)
        assert np.all(np.sign(P[:, 2][:2]) == -1), (corr, P)  # 3-valued column: attenuated by ties, sign kept


def _stand_in_fit(rel: na.Release, margins: list[np.ndarray], chains: int, draws: int) -> Any:
    """A ``fit_dpcopula`` result without the NUTS run: identity ``R`` draws, the given margins' draws."""
    cols = ["a", "b", "c"]
    res = from_groups(
        {"posterior": {"R": np.broadcast_to(np.eye(3), (chains, draws, 3, 3)).copy()}},
        dims={"R": ["row", "col"]},
        coords={"row": cols, "col": cols},
        attrs={"noiseaware_result": "copula.fit_dpcopula", "noiseaware_default_var": "R"},
    )
    return _attach_margins(res, margins, rel)


def test_synthesize_from_a_fit_gives_one_frame_per_draw(
    released: tuple[pd.DataFrame, na.Release], tmp_path: Path
) -> None:
    import arviz as az

    _, rel = released
    margins = copula.dpcopula_margins(rel)
    S = 6
    # column a's margin at joint draw s is a point mass on cell s: each copy shows which draw it came from
    a = np.zeros((S, margins[0].size))
    a[np.arange(S), np.arange(S)] = 1.0
    fit = _stand_in_fit(rel, [a, *(np.stack([p] * S) for p in margins[1:])], chains=2, draws=S // 2)
    post = group(fit, "posterior")
    assert post["margin_0"].dims == ("chain", "draw", "cell_0") and post["margin_0"].attrs["column"] == "a"
    np.testing.assert_array_equal(copula.margin_draws(fit)[0], a)  # pooled over chains as results.draws pools R
    frames = copula.synthesize(fit, 200, draws=3, seed=0)
    assert len(frames) == 3 and all(list(f.columns) == ["a", "b", "c"] for f in frames)
    assert [sorted(set(f["a"])) for f in frames] == [[0], [2], [5]]  # draws 0, 2 and 5 of the six, evenly spaced
    assert str(frames[0]["a"].dtype) == "int64" and isinstance(frames[0]["c"].dtype, pd.CategoricalDtype)
    assert not frames[0]["b"].equals(frames[1]["b"])
    with pytest.raises(NoiseawareValueError, match="draws must be at most the fit's 6"):
        copula.synthesize(fit, 10, draws=7)
    # the file's copy synthesizes the same copies
    path = tmp_path / "fit.nc"
    fit.to_netcdf(str(path))
    back = az.from_netcdf(str(path))
    for f, g in zip(frames, copula.synthesize(back, 200, draws=3, seed=0), strict=True):
        pd.testing.assert_frame_equal(f, g)
    # a copula.fit result has no margins
    other = from_groups({"posterior": {"R": np.zeros((1, 2, 2, 2))}}, attrs={"noiseaware_result": "copula.fit"})
    refused = r"source must be the result of copula\.fit_dpcopula .*; got source='a copula\.fit result'"
    with pytest.raises(NoiseawareTypeError, match=refused):
        copula.synthesize(other, 10)


def test_bad_calls() -> None:
    rel = na.privatize(np.random.default_rng(0).normal(size=(50, 2)), statistic="kendall_pairs", epsilon=1.0)
    with pytest.raises(NoiseawareTypeError, match="needs a 'dpcopula' Release"):
        copula.synthesize(rel, 10)
    df = data(500)
    rel = na.privatize(df, statistic="dpcopula", epsilon=1.0, domains=DOMAINS)
    with pytest.raises(NoiseawareValueError, match="n must be"):
        copula.synthesize(rel, 0)
    with pytest.raises(NoiseawareValueError, match="draws must be 1"):
        copula.synthesize(rel, 10, draws=5)
    with pytest.raises(NoiseawareValueError, match="needs the correlations as a median_pairs component"):
        copula.fit_dpcopula(rel)


@pytest.mark.parametrize("K", [2, 3, 50, 1000])
def test_guide_table_equals_binary_search(K: int) -> None:
    from noiseaware.copula._synth import _cell_of

    rng = np.random.default_rng(K)
    for zeros in (False, True):
        p = rng.random(K)
        if zeros:  # runs of empty cells, as a clipped noisy histogram has
            p[rng.random(K) < 0.6] = 0
            p[: K // 3] = 0
            p[-(K // 4) or K :] = 0 if K > 3 else p[-(K // 4) or K :]
        p[K // 2] += 1.0
        cdf = np.cumsum(p) / p.sum()
        u = np.concatenate([rng.random(20_000), cdf[:-1], np.nextafter(cdf[:-1], 0), [0.0]])
        u = u[u < 1]
        assert np.array_equal(_cell_of(cdf, u), np.minimum(np.searchsorted(cdf, u, side="right"), K - 1))


def test_nullable_and_narrow_dtypes_round_trip_and_unknown_ones_fall_back() -> None:
    df = pd.DataFrame(
        {
            "a": pd.array(np.arange(300) % 10, dtype="Int64"),
            "b": (np.arange(300) % 7).astype(np.int32),
            "c": np.linspace(0, 1, 300).astype(np.float32),
        }
    )
    doms = {"a": range(10), "b": range(7), "c": {"lower": 0.0, "upper": 1.0, "bins": 10}}
    rel = na.privatize(df, statistic="dpcopula", epsilon=1.0, domains=doms, rng=np.random.default_rng(0))
    syn = copula.synthesize(rel, 20, seed=0)
    assert [str(t) for t in syn.dtypes] == ["Int64", "int32", "float32"]
    from noiseaware.copula._synth import _sample

    out = _sample(
        np.eye(2),
        [np.full(3, 1 / 3)] * 2,
        list(copula._dpcopula_release._domains(rel))[:2],
        ["nonsense", "x"],
        ["a", "b"],
        5,
        np.random.default_rng(0),
    )
    assert [str(t) for t in out.dtypes] == ["int64", "int64"]


def test_cell_codes_against_the_domain_formulas() -> None:
    """``cell_codes`` against the cells written out by hand for each kind of domain; bad tables refused."""
    df = data(n=2000, seed=3)
    rel = na.privatize(df, statistic="dpcopula", epsilon=2.0, domains=DOMAINS, rng=np.random.default_rng(4))
    codes = copula.cell_codes(df, rel)
    assert codes.shape == (2000, 3) and codes.dtype == np.int64
    np.testing.assert_array_equal(codes[:, 0], df["a"].to_numpy())  # integers 0..399: x - 0
    b = df["b"].to_numpy()
    np.testing.assert_array_equal(codes[:, 1], np.minimum(np.floor(b / 8.0 * 200), 199).astype(np.int64))
    np.testing.assert_array_equal(codes[:, 2], df["c"].cat.codes.to_numpy())  # lo, mid, hi in that order
    # columns by name (reordered frame), or an array in the release's order
    np.testing.assert_array_equal(copula.cell_codes(df[["c", "a", "b"]], rel), codes)
    # a synthetic copy has cells of the same domains
    syn = copula.cell_codes(copula.synthesize(rel, 500, seed=0), rel)
    assert syn.shape == (500, 3) and syn.min() >= 0 and (syn.max(axis=0) < [400, 200, 3]).all()
    with pytest.raises(NoiseawareValueError, match="missing"):
        copula.cell_codes(df[["a", "b"]], rel)
    with pytest.raises(NoiseawareValueError, match=r"\(n, 3\) table"):
        copula.cell_codes(np.zeros((5, 2)), rel)
    with pytest.raises(NoiseawareTypeError, match="dpcopula"):
        copula.cell_codes(df, na.privatize(np.ones(3), statistic="vector", epsilon=1.0, sensitivity=1.0,
                                           rng=np.random.default_rng(0)))
    bad = df.copy()
    bad.loc[0, "a"] = 400  # outside range(400)
    with pytest.raises(NoiseawareValueError):
        copula.cell_codes(bad, rel)
