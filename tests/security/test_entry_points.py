"""Every entry point a user reaches, fed careless or hostile values: a clear error or a correct result.

The attacks are data (tables below); the tests only say what must happen to each:

* a ``NoiseawareError`` that is also a ``ValueError`` or ``TypeError`` (never a NumPy, SciPy, math or
  JAX exception, a ``MemoryError`` or a hang), or
* a result that is correct for the input: a :class:`~noiseaware.Release` that passes its own schema
  checks (extreme but legal budgets are released, with a ``PrivacyWarning``).

Covered: every ``privatize`` statistic (data and each option), every ``from_release`` of both front
ends (releases of every other statistic, and things that are not releases), every fit's sampler
arguments (values that fail validation before anything compiles), the command line's options
(``noiseaware.cli.main``: exit code 2 and one line on stderr, no traceback), and the resource limits
(second-moment entries, rows simulated, XLA host devices) checked before any budget is charged.
Nothing here samples; each case is bounded by a 60 s alarm.
"""

from __future__ import annotations

import math
import signal
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import noiseaware as na
from noiseaware import _validation as v
from noiseaware.accounting import PrivacyBudget
from noiseaware.exceptions import (
    NoiseawareError,
    NoiseawareTypeError,
    NoiseawareValueError,
    NoiseawareWarning,
    PrivacyWarning,
)

NAN, INF = float("nan"), float("inf")
HANG_SECONDS = 60

#: Values no option of any statistic should turn into a foreign exception.
BAD_VALUES: dict[str, Any] = {
    "nan": NAN,
    "inf": INF,
    "-inf": -INF,
    "negative": -1,
    "zero": 0,
    "tiny": 5e-324,
    "huge": 1e308,
    "huge-int": 10**30,
    "string": "abc",
    "bool": True,
    "empty": [],
    "matrix": [[1.0, 2.0]],
    "object": object(),
}


@pytest.fixture(autouse=True)
def _no_hang() -> Iterator[None]:
    """Fail a case that runs for more than :data:`HANG_SECONDS` instead of hanging the suite."""

    def _timeout(signum: int, frame: Any) -> None:
        raise TimeoutError(f"no answer within {HANG_SECONDS} s")

    old = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _clear_or_result(fn: Callable[[], Any]) -> Any:
    """Run ``fn``: return its result, or the clear error it raised; anything else propagates (fails)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseawareWarning)  # weak budgets and noisy releases warn: legal
        try:
            return fn()
        except NoiseawareError as exc:
            assert isinstance(exc, ValueError | TypeError), type(exc).__mro__
            assert str(exc) and "\n" not in str(exc).strip(), str(exc)
            return exc


# --------------------------------------------------------------------------------------- privatize
def _rng() -> np.random.Generator:
    return np.random.default_rng(1)


_X = np.random.default_rng(0).normal(size=(60, 3))
_U = np.random.default_rng(0).uniform(-1.0, 1.0, size=(60, 3))
_SIMPLEX = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=80)
_CATS = np.random.default_rng(0).integers(0, 3, size=(50, 2))
_DOMAINS = [{"lower": -4.0, "upper": 4.0, "bins": 8}] * 3

#: A valid call of every statistic (simulation mode: fast), and the options it accepts.
STATISTIC_CALLS: dict[str, tuple[Any, dict[str, Any], tuple[str, ...]]] = {
    "median_pairs": (_X, {"epsilon": 1.0}, ("columns", "tie_keys")),
    "kendall_pairs": (_X, {"epsilon": 1.0}, ("columns",)),
    "counts": (np.array([3, 5, 2]), {"epsilon": 1.0, "sensitivity": 1}, ("sensitivity", "labels", "n", "scale")),
    "vector": (np.array([0.5, 2.0]), {"rho": 1.0, "sensitivity": 1.0}, ("sensitivity", "labels", "n", "sigma")),
    "randomized_response": (_CATS, {"epsilon": 1.0, "categories": 3}, ("categories", "p", "columns")),
    "dirichlet_logmean": (
        _SIMPLEX,
        {"epsilon": 1.0},
        ("candidates", "target_rate", "threshold", "threshold_share", "split", "zeros", "simplex_tol", "columns"),
    ),
    "dpcopula": (
        _X,
        {"epsilon": 2.0, "domains": _DOMAINS},
        ("domains", "ratio", "correlation", "columns", "blocks", "hybrid", "hybrid_threshold", "floor"),
    ),
    "pace_ggm": (_U, {"rho": 1.0, "bound": 1.0}, ("bound", "clip", "columns", "alpha", "beta", "T", "center")),
    "second_moment": (_U, {"rho": 1.0, "bound": 1.0}, ("bound", "clip", "columns")),
    "regression": (
        _U,
        {"rho": 1.0, "bound": 1.0, "response": "x2", "method": "adassp"},
        ("response", "predictors", "intercept", "bound", "clip", "columns", "method", "delta"),
    ),
}


def _privatize(statistic: str, data: Any = None, **changes: Any) -> Any:
    base, kwargs, _ = STATISTIC_CALLS[statistic]
    kw = {**kwargs, **changes}
    if "scale" in kw or "sigma" in kw:  # a noise scale replaces the budget
        kw.pop("epsilon", None), kw.pop("rho", None)
    return na.privatize(base if data is None else data, statistic=statistic, rng=_rng(), **kw)


def _check_outcome(out: Any, statistic: str) -> None:
    """A result must be a release of the statistic asked for whose values survive a JSON round trip."""
    if isinstance(out, NoiseawareError):
        return
    assert isinstance(out, na.Release) and out.statistic == statistic
    assert na.Release.from_dict(out.to_dict()) == out


def test_every_statistic_is_attacked() -> None:
    from noiseaware._privatize import STATISTICS

    assert set(STATISTIC_CALLS) == set(STATISTICS)


OPTION_CASES = [
    (stat, opt, key) for stat, (_, _, opts) in STATISTIC_CALLS.items() for opt in opts for key in BAD_VALUES
]


@pytest.mark.parametrize(("statistic", "option", "key"), OPTION_CASES, ids=[f"{s}-{o}-{k}" for s, o, k in OPTION_CASES])
def test_privatize_option_attack(statistic: str, option: str, key: str) -> None:
    out = _clear_or_result(lambda: _privatize(statistic, **{option: BAD_VALUES[key]}))
    _check_outcome(out, statistic)


BAD_DATA: dict[str, Any] = {
    "nan": np.array([[1.0, NAN], [0.0, 1.0], [0.5, 0.5]]),
    "inf": np.array([[1.0, INF], [0.0, 1.0], [0.5, 0.5]]),
    "empty": np.empty((0, 3)),
    "scalar": 3.0,
    "3-d": np.zeros((4, 3, 2)),
    "strings": np.array([["a", "b"], ["c", "d"]]),
    "ragged": [[1.0, 2.0], [3.0]],
    "none": None,
    "complex": np.ones((5, 3), dtype=complex),
    "huge-ints": np.array([[2**70, 1], [1, 2]], dtype=object),
}


#: Inputs above that are legal for a statistic: a scalar or a 3-way table of counts is a table, and
#: 2**70 is an exact float64 whose rank is all the pair statistics use.
LEGAL_DATA = {("counts", "scalar"), ("counts", "3-d"), ("median_pairs", "huge-ints"), ("kendall_pairs", "huge-ints")}


@pytest.mark.parametrize("key", list(BAD_DATA))
@pytest.mark.parametrize("statistic", list(STATISTIC_CALLS))
def test_privatize_data_attack(statistic: str, key: str) -> None:
    data = BAD_DATA[key]
    out = _clear_or_result(lambda: na.privatize(data, statistic=statistic, rng=_rng(), **STATISTIC_CALLS[statistic][1]))
    if (statistic, key) in LEGAL_DATA:
        _check_outcome(out, statistic)
    else:
        assert isinstance(out, NoiseawareError), f"{statistic} released bad data {key!r}: {out!r}"


TOP_LEVEL: dict[str, Any] = {
    "epsilon": [NAN, INF, -1.0, 0.0, "1", True, 1e308, 5e-324],
    "rho": [NAN, INF, -1.0, 0.0, "1", True, 1e308, 5e-324],
    "mechanism": ["bogus", 3, ""],
    "rng": [3, "seed", np.random.RandomState(0)],
    "budget": [1.0, "all", {"epsilon": 1.0}],
}
TOP_CASES = [(stat, name, i) for stat in STATISTIC_CALLS for name, vals in TOP_LEVEL.items() for i in range(len(vals))]




@pytest.mark.parametrize(
    ("statistic", "name", "i"),
    [pytest.param(*c, id=f"{c[0]}-{c[1]}-{c[2]}") for c in TOP_CASES],
)
def test_privatize_argument_attack(statistic: str, name: str, i: int) -> None:
    base, kwargs, _ = STATISTIC_CALLS[statistic]
    kw = {**kwargs, "rng": _rng()}
    if name in ("epsilon", "rho"):
        kw.pop("epsilon", None), kw.pop("rho", None)
    kw[name] = TOP_LEVEL[name][i]
    out = _clear_or_result(lambda: na.privatize(base, statistic=statistic, **kw))
    _check_outcome(out, statistic)


def test_privatize_statistic_name_attack() -> None:
    for bad in ("Counts", "", None, 3, ["counts"]):
        assert isinstance(
            _clear_or_result(lambda bad=bad: na.privatize(_X, statistic=bad, epsilon=1.0)), NoiseawareError
        )


# ------------------------------------------------------------------------ resource limits, up front
@pytest.mark.parametrize("statistic", ["second_moment", "pace_ggm"])
def test_second_moment_entries_are_limited_before_any_budget(statistic: str) -> None:
    from noiseaware._privatize._covariance import MAX_ENTRIES

    d = 2000  # d(d+1)/2 = 2,001,000 > MAX_ENTRIES; 2 rows keep the data small (32 kB)
    assert d * (d + 1) // 2 > MAX_ENTRIES >= (d - 1) * d // 2
    x = np.random.default_rng(0).uniform(-1, 1, size=(2, d))
    budget = PrivacyBudget(rho=1.0)
    with pytest.raises(NoiseawareValueError, match=rf"at most 1999 columns .*MAX_ENTRIES = {MAX_ENTRIES}.*d={d}"):
        na.privatize(x, statistic=statistic, rho=1.0, bound=1.0, budget=budget)
    assert budget.spent == 0.0 and budget.ledger == ()


def test_second_moment_at_ten_thousand_columns_is_refused_at_once() -> None:
    """The reported case: 1.6 MB of data used to build 50 million label tuples and die of MemoryError."""
    x = np.random.default_rng(0).uniform(-1, 1, size=(20, 10_000))
    with pytest.raises(NoiseawareValueError, match=r"got d=10000 columns \(50005000 entries\)"):
        na.privatize(x, statistic="second_moment", rho=1.0, bound=1.0)


@pytest.mark.parametrize("statistic", list(STATISTIC_CALLS))
def test_a_subnormal_budget_is_refused_before_any_budget(statistic: str) -> None:
    """A share of 5e-324 rounds to 0 (``ZeroDivisionError`` in median_pairs, kendall_pairs, pace_ggm, ...)."""
    unit = "rho" if "rho" in STATISTIC_CALLS[statistic][1] else "epsilon"
    budget = PrivacyBudget(**{unit: 1.0})
    with pytest.raises(NoiseawareValueError, match=rf"{unit} must be >= 2.2250738585072014e-308 .*got {unit}=5e-324"):
        _privatize(statistic, **{unit: 5e-324, "budget": budget})
    assert budget.spent == 0.0 and budget.ledger == ()


@pytest.mark.parametrize("center", [False, True])
def test_pace_ggm_rho_too_small_for_its_pieces_is_refused_before_any_budget(center: bool) -> None:
    budget = PrivacyBudget(rho=1.0)
    # normal, but alpha * rho / d = 3e-309 is not
    with pytest.raises(NoiseawareValueError, match=r"rho must leave every round a usable budget; got rho=3e-308"):
        na.privatize(_U, statistic="pace_ggm", rho=3e-308, bound=1.0, center=center, budget=budget)
    assert budget.spent == 0.0 and budget.ledger == ()


@pytest.mark.parametrize("rho", [1e150, 1e308])
def test_pace_ggm_rho_with_negligible_noise_is_refused_before_any_budget(rho: float) -> None:
    # the reconstruction's precisions overflowed here (a RuntimeWarning and a non-finite estimate)
    budget = PrivacyBudget(rho=1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", na.exceptions.PrivacyWarning)
        with pytest.raises(NoiseawareValueError, match=r"precision 2 rho / sensitivity\*\*2 = .* is above 1e\+150"):
            na.privatize(_U, statistic="pace_ggm", rho=rho, bound=1.0, budget=budget)
    assert budget.spent == 0.0 and budget.ledger == ()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", na.exceptions.PrivacyWarning)
        assert na.privatize(_U, statistic="pace_ggm", rho=1e6, bound=1.0, rng=_rng()).statistic == "pace_ggm"


def test_pace_ggm_too_many_rounds_for_rho_is_refused_before_any_budget() -> None:
    budget = PrivacyBudget(rho=1.0)
    with pytest.raises(NoiseawareValueError, match=r"rho_sel = .* is not a normal float64"):
        na.privatize(_U, statistic="pace_ggm", rho=1e-300, T=10**12, bound=1.0, budget=budget)
    assert budget.spent == 0.0


def test_pace_ggm_small_legal_rho_still_releases() -> None:
    rel = na.privatize(_U, statistic="pace_ggm", rho=1e-300, bound=1.0, rng=_rng())
    assert rel.guarantee.rho == pytest.approx(1e-300, rel=1e-12)


@pytest.mark.parametrize("statistic", ["vector", "counts", "second_moment", "pace_ggm"])
def test_a_huge_rho_warns_as_a_huge_epsilon_does(statistic: str) -> None:
    with pytest.warns(PrivacyWarning, match=r"rho=1000000.0 is above 12.5"):
        _privatize(statistic, rho=1e6, epsilon=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        _privatize(statistic, rho=12.5, epsilon=None)


def test_rho_threshold_is_the_zcdp_of_the_epsilon_threshold() -> None:
    # an epsilon-DP mechanism is epsilon**2 / 2-zCDP (Bun & Steinke 2016, Proposition 1.4)
    assert v.RHO_WARN_THRESHOLD == v.EPSILON_WARN_THRESHOLD**2 / 2 == 12.5


def test_vector_epsilon_path_still_warns() -> None:
    with pytest.warns(PrivacyWarning, match="epsilon=10.0 is above 5"):
        na.privatize(np.array([0.5]), statistic="vector", epsilon=10.0, sensitivity=1.0, rng=_rng())


# ------------------------------------------------------------------------------- synthesis, data sets
@pytest.fixture(scope="module")
def dpcopula_release() -> na.Release:
    return na.privatize(_X, statistic="dpcopula", epsilon=2.0, domains=_DOMAINS, rng=_rng())


@pytest.mark.parametrize(
    ("seed", "error"),
    [("abc", NoiseawareTypeError), (1.5, NoiseawareTypeError), (True, NoiseawareTypeError), (-1, NoiseawareValueError)],
)
def test_synthesize_seed_is_checked(dpcopula_release: na.Release, seed: Any, error: type) -> None:
    from noiseaware.copula import synthesize

    with pytest.raises(error, match=rf"synthesize: seed must be an integer >= 0.*got seed={seed!r}"):
        synthesize(dpcopula_release, 5, seed=seed)


def test_synthesize_seed_kinds_that_work(dpcopula_release: na.Release) -> None:
    from noiseaware.copula import synthesize

    a = synthesize(dpcopula_release, 5, seed=np.int64(3))
    b = synthesize(dpcopula_release, 5, seed=np.random.default_rng(3))
    assert a.equals(b) and synthesize(dpcopula_release, 5, seed=None).shape == (5, 3)


@pytest.mark.parametrize("n", [10**12, 10_000_001])
def test_synthesize_rows_are_limited_up_front(dpcopula_release: na.Release, n: int) -> None:
    from noiseaware.copula import synthesize

    with pytest.raises(NoiseawareValueError, match=rf"n must be an integer <= 10000000; got n={n}"):
        synthesize(dpcopula_release, n, seed=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seed": -1}, "seed must be an integer >= 0; got seed=-1"),
        ({"seed": "abc"}, "seed must be an integer >= 0"),
        ({"n": 10**12}, "n must be an integer <= 10000000"),
        ({"n": 0}, "n must be an integer >= 1"),
    ],
)
def test_demo_data_arguments_are_checked(kwargs: dict[str, Any], match: str) -> None:
    from noiseaware.datasets import demo_copula_data

    with pytest.raises(NoiseawareError, match=match):
        demo_copula_data(**kwargs)


# ------------------------------------------------------------------------------------ from_release
@pytest.fixture(scope="module")
def releases() -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseawareWarning)
        out: dict[str, Any] = {
            "counts_geometric": _privatize("counts"),
            "counts_dgauss": _privatize("counts", rho=1.0, epsilon=None),
            "vector": _privatize("vector"),
            "median_pairs": _privatize("median_pairs"),
            "median_pairs_tgm": _privatize("median_pairs", mechanism="tgm"),
            "kendall_pairs": _privatize("kendall_pairs"),
            "randomized_response": _privatize("randomized_response"),
            "dirichlet_logmean": _privatize("dirichlet_logmean", threshold=1e-3),
            "second_moment": _privatize("second_moment"),
            "pace_ggm": _privatize("pace_ggm"),
            "regression": _privatize("regression"),
        }
    out.update({"a dict": {"statistic": "counts", "values": [1, 2]}, "None": None, "a string": "counts"})
    return out


#: Every front-end class with ``from_release``: how to call it, and the releases it accepts.
FROM_RELEASE: dict[str, tuple[Callable[[Any, Any, Any], Any], set[str]]] = {
    "TwoSidedGeometric": (
        lambda m, r, base: m.TwoSidedGeometric.from_release("y", r, loc=0.0),
        {"counts_geometric", "median_pairs"},
    ),
    "DiscreteGaussian": (lambda m, r, base: m.DiscreteGaussian.from_release("y", r, loc=0.0), {"counts_dgauss"}),
    "Noisy": (lambda m, r, base: m.Noisy.from_release("y", r, base), {"counts_geometric", "counts_dgauss"}),
    "NoisyHypergeom": (lambda m, r, base: m.NoisyHypergeom.from_release("y", r, log_odds=0.0), {"median_pairs"}),
    "NoisyTwoWayTable": (lambda m, r, base: m.NoisyTwoWayTable.from_release("y", r, r=0.0), {"median_pairs"}),
    "CompositeCopulaLikelihood": (
        lambda m, r, base: m.CompositeCopulaLikelihood.from_release("y", r, R=np.eye(3)),
        {"median_pairs"},
    ),
    "NoisyCovarianceEntries": (
        lambda m, r, base: m.NoisyCovarianceEntries.from_release("y", r, sigma=np.eye(3)),
        {"second_moment", "pace_ggm"},
    ),
    "LaplaceCensoredDirichletStat": (
        lambda m, r, base: m.LaplaceCensoredDirichletStat.from_release("y", r, alpha=np.ones(3)),
        {"dirichlet_logmean"},
    ),
    "NoisySufficientStatistics": (
        lambda m, r, base: m.NoisySufficientStatistics.from_release(
            "y", r, beta=np.zeros(3), sigma=1.0, mu_x=np.zeros(2), cov_x=np.eye(2)
        ),
        {"regression"},
    ),
    "RandomizedResponse": (
        lambda m, r, base: m.RandomizedResponse.from_release("y", r, probs=np.full(3, 1 / 3)),
        {"randomized_response"},
    ),
}


def _build(front: str, call: Callable[[Any, Any, Any], Any], release: Any) -> Any:
    if front == "pymc":
        import pymc as pm

        import noiseaware.pymc as nap

        with pm.Model():
            return call(nap, release, pm.Poisson.dist(2.0))
    import numpyro.distributions as dist
    from numpyro import handlers

    import noiseaware.numpyro as nan

    return handlers.trace(handlers.seed(lambda: call(nan, release, dist.Poisson(2.0)), rng_seed=0)).get_trace()


def test_every_front_end_class_with_from_release_is_attacked() -> None:
    import noiseaware.numpyro as nan
    import noiseaware.pymc as nap

    for mod in (nap, nan):
        with_it = {n for n in mod.__all__ if hasattr(getattr(mod, n), "from_release")}
        assert with_it == set(FROM_RELEASE), mod.__name__


@pytest.mark.parametrize("front", ["pymc", "numpyro"])
@pytest.mark.parametrize("cls", list(FROM_RELEASE))
def test_from_release_takes_only_its_own_statistic(releases: dict[str, Any], cls: str, front: str) -> None:
    call, accepted = FROM_RELEASE[cls]
    took = set()
    for key, rel in releases.items():
        out = _clear_or_result(lambda rel=rel: _build(front, call, rel))
        if not isinstance(out, NoiseawareError):
            took.add(key)
    assert took == accepted


# ------------------------------------------------------------------------------------------- fits
@pytest.fixture(scope="module")
def fit_args(releases: dict[str, Any]) -> dict[str, tuple[Callable[..., Any], Any]]:
    import jax.numpy as jnp

    from noiseaware import augment, copula, covariance, dirichlet, hierarchy, regression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoiseawareWarning)
        dpc = na.privatize(
            _X[:, :2], statistic="dpcopula", epsilon=2.0, correlation="median", domains=_DOMAINS[:2], rng=_rng()
        )
    aug = augment.AugmentationModel(
        statistic=lambda x, s: jnp.stack([x == 0, x == 1]).astype(jnp.float64),
        log_density=lambda s_dp, s: -jnp.sum(jnp.abs(s_dp - s)),
        model=lambda n: None,
        model_args=(10,),
    )
    return {
        "copula.fit": (copula.fit, releases["median_pairs"]),
        "copula.fit_dpcopula": (copula.fit_dpcopula, dpc),
        "dirichlet.fit": (dirichlet.fit, releases["dirichlet_logmean"]),
        "dirichlet.dpmcmc": (dirichlet.dpmcmc, releases["dirichlet_logmean"]),
        "dirichlet.dpmcmc_batch": (lambda r, **kw: dirichlet.dpmcmc_batch([r], **kw), releases["dirichlet_logmean"]),
        "augment.sample": (lambda a, **kw: augment.sample(a, np.array([6.0, 4.0]), **kw), aug),
        "covariance.fit": (covariance.fit, releases["second_moment"]),
        "hierarchy.fit": (
            lambda r, **kw: hierarchy.fit(r, prior="uniform", **kw), hierarchy.synthetic_nmf(1, 2, 2, rng=0).release
        ),
        "regression.fit": (regression.fit, releases["regression"]),
    }


FIT_NAMES = [
    "copula.fit",
    "copula.fit_dpcopula",
    "dirichlet.fit",
    "dirichlet.dpmcmc",
    "dirichlet.dpmcmc_batch",
    "augment.sample",
    "covariance.fit",
    "hierarchy.fit",
    "regression.fit",
]
#: Invalid settings: each fails validation before anything compiles.
BAD_SETTINGS: list[tuple[str, Any]] = [
    *[("chains", x) for x in (0, -1, 1.5, NAN, INF, "4", True, None, [2])],
    *[("draws", x) for x in (0, -10, 2.5, NAN, INF, "100", False, None)],
    *[("warmup", x) for x in (-1, 0.5, NAN, -INF, "10", True, None)],
    *[("seed", x) for x in (-1, 2**63, 1.5, NAN, "abc", True, [1], np.random.default_rng(0))],
    *[("target_accept", x) for x in (0.0, 1.0, -0.5, 1.5, NAN, INF, "0.9", True)],
    *[("progressbar", x) for x in (1, "yes", None)],
    *[("check_mixing", x) for x in (0, "no", None)],
]


@pytest.mark.parametrize(
    ("setting", "value"),
    BAD_SETTINGS,
    # a Generator's repr holds its address: ids must be the same in every xdist worker
    ids=[f"{s}={type(x).__name__ if isinstance(x, np.random.Generator) else repr(x)}" for s, x in BAD_SETTINGS],
)
@pytest.mark.parametrize("fit", FIT_NAMES)
def test_fit_setting_attack(fit_args: dict[str, Any], fit: str, setting: str, value: Any) -> None:
    fn, first = fit_args[fit]
    out = _clear_or_result(lambda: fn(first, **{setting: value}))
    assert isinstance(out, NoiseawareError), f"{fit} accepted {setting}={value!r}"
    assert setting in str(out)


@pytest.mark.parametrize("fit", [f for f in FIT_NAMES if f != "augment.sample"])
def test_fit_refuses_releases_of_other_statistics(releases: dict[str, Any], fit_args: dict[str, Any], fit: str) -> None:
    fn, own = fit_args[fit]
    for key, rel in releases.items():
        if rel is own or (fit == "copula.fit" and key == "median_pairs_tgm"):  # MLE-NN route, see copula.fit
            continue
        out = _clear_or_result(lambda rel=rel: fn(rel, chains=0))
        assert isinstance(out, NoiseawareError), (fit, key)


# -------------------------------------------------------------------------------------------- CLI
@pytest.fixture(scope="module")
def cli_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("cli")
    csv = d / "data.csv"
    csv.write_text("a,b,c\n" + "\n".join(",".join(f"{x:.6f}" for x in row) for row in _X) + "\n")
    rel = d / "release.json"
    rel.write_text(na.privatize(_X, statistic="median_pairs", epsilon=1.0).to_json())
    return {"csv": str(csv), "release": str(rel), "out": str(d / "out.json")}


#: (command line with {csv}/{release}/{out} placeholders, a word the error must contain)
CLI_CASES: list[tuple[list[str], str]] = [
    (["demo", "--n", "1000000000000"], "--n"),
    (["demo", "--n", "0"], "--n"),
    (["demo", "--n", "-5"], "--n"),
    (["demo", "--n", "1e3"], "--n"),
    (["demo", "--data-seed", "-1"], "--data-seed"),
    (["demo", "--data-seed", "abc"], "--data-seed"),
    (["demo", "--data-seed", "1.5"], "--data-seed"),
    (["demo", "--epsilon", "nan"], "epsilon"),
    (["demo", "--epsilon", "-1"], "epsilon"),
    (["demo", "--epsilon", "0"], "epsilon"),
    (["demo", "--epsilon", "inf"], "epsilon"),
    (["demo", "--epsilon", "abc"], "--epsilon"),
    (["demo", "--chains", "0"], "--chains"),
    (["demo", "--draws", "0"], "--draws"),
    (["demo", "--warmup", "-1"], "--warmup"),
    (["demo", "--seed", "-1"], "--seed"),
    (["demo", "--level", "1"], "--level"),
    (["demo", "--level", "nan"], "--level"),
    (["demo", "--backend", "stan"], "--backend"),
    (["release", "{csv}", "--epsilon", "nan", "-o", "{out}"], "epsilon"),
    (["release", "{csv}", "--epsilon", "-1", "-o", "{out}"], "epsilon"),
    (["release", "{csv}", "--epsilon", "1e-320", "-o", "{out}"], "epsilon"),
    (["release", "{csv}", "--epsilon", "1", "--statistic", "bogus", "-o", "{out}"], "statistic"),
    (["release", "{csv}", "--epsilon", "1", "--statistic", "second_moment", "-o", "{out}"], "rho"),
    (["release", "{csv}", "--epsilon", "1", "--mechanism", "laplace", "-o", "{out}"], "--mechanism"),
    (["show", "{release}", "--rows", "-1"], "--rows"),
    (["show", "{csv}"], "Release"),
    (["fit", "{release}", "--chains", "0"], "--chains"),
    (["fit", "{release}", "--seed", "abc"], "--seed"),
    (["fit", "{release}", "--level", "0"], "--level"),
    (["fit", "{csv}"], "Release"),
    (["frobnicate"], "invalid choice"),
]


@pytest.mark.parametrize(("argv", "word"), CLI_CASES, ids=[" ".join(a) for a, _ in CLI_CASES])
def test_cli_option_attack(
    capsys: pytest.CaptureFixture[str], cli_files: dict[str, str], argv: list[str], word: str
) -> None:
    from noiseaware.cli import main

    args = [a.format(**cli_files) for a in argv]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 2, (code, captured.err[-2000:])
    assert "Traceback" not in captured.err + captured.out
    assert err.startswith("noiseaware: error: ") and "\n" not in err, captured.err
    assert word in err, err


# ------------------------------------------------------------------------------------- environment
@pytest.mark.parametrize("value", ["100000", "257", str(10**30)])
def test_host_devices_above_the_limit_are_refused(value: str) -> None:
    from noiseaware import config

    with pytest.raises(NoiseawareValueError, match=rf"at most {config.HOST_DEVICES_LIMIT}.*got '{value}'"):
        config._wanted_host_devices(value)


def test_host_devices_at_the_limit_are_allowed() -> None:
    from noiseaware import config

    assert config._wanted_host_devices(str(config.HOST_DEVICES_LIMIT)) == config.HOST_DEVICES_LIMIT
    assert math.isfinite(config.HOST_DEVICES_LIMIT) and config.HOST_DEVICES_LIMIT >= config.MAX_HOST_DEVICES
