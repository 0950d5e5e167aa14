"""Attacker and careless-user inputs at the mechanism and validation layer (issue 11).

Every attack is data in a table below; the tests only say what must happen to it:

* a parameter whose noise cannot be represented (int64 saturation, float64 overflow, a guarantee
  that overflows or underflows) is refused at construction with a message naming the parameter,
  its value and the rule;
* every other extreme value is accepted and then *works*: finite guarantee, JSON round trip,
  secure and simulated release, finite log-probability of what was released;
* true values that cannot be represented with their noise are refused at ``release()``;
* ragged, string, uint64 and oversized inputs give named errors, never NumPy tracebacks or
  wrapped-around numbers;
* the range mechanisms' log-probabilities are exact (mpmath brute force) deep in both tails.

The rules (see ``noiseaware/_validation.py``): integer mechanisms keep ``|value| <= 2**62`` and
``P(|noise| >= 2**62) < 2**-64``; real ones ``|value| <= 2**1000`` and
``P(|noise| >= 2**1000) < 2**-64``; scales are normal float64; implied epsilon / rho are finite
and > 0.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import mpmath as mp
import numpy as np
import pytest

from noiseaware import _validation as v
from noiseaware import mechanisms as M
from noiseaware.exceptions import NoiseawareError, NoiseawareTypeError, NoiseawareValueError
from noiseaware.mechanisms import _opendp

pytestmark = pytest.mark.filterwarnings("ignore::noiseaware.exceptions.PrivacyWarning")

INF, NAN = float("inf"), float("nan")
I64_MAX = 2**63 - 1

# ---------------------------------------------------------------------------------------------
# 1. The rules' constants meet their stated tail bounds (independent mpmath computations)
# ---------------------------------------------------------------------------------------------


def _log2_geometric_tail(scale: float, t: int) -> mp.mpf:
    """log2 P(|K| >= t) = log2(2 a^t / (1 + a)), K two-sided geometric, a = exp(-1/scale)."""
    a = mp.e ** (-1 / mp.mpf(scale))
    return mp.log(2 * a**t / (1 + a), 2)


def test_geometric_scale_bound_meets_the_tail_rule_and_is_tight() -> None:
    mp.mp.dps = 50
    assert _log2_geometric_tail(v.MAX_GEOMETRIC_SCALE, 2**62) < -64
    # sufficient bound (65 ln 2 instead of the exact threshold) costs less than 2%
    assert _log2_geometric_tail(v.MAX_GEOMETRIC_SCALE * 1.02, 2**62) > -64


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5, 10.0])
def test_discrete_gaussian_tail_bound_used_for_its_rule_holds(sigma: float) -> None:
    """P(|K| >= t) <= 2 exp(-t^2 / (2 sigma^2)) (sigma-subgaussian, CKS20), by brute-force sums."""
    mp.mp.dps = 40
    s2 = 2 * mp.mpf(sigma) ** 2
    K = int(60 * sigma) + 60
    w = {k: mp.exp(-(mp.mpf(k) ** 2) / s2) for k in range(-K, K + 1)}
    z = mp.fsum(w.values())
    for t in range(1, int(12 * sigma) + 3):
        tail = mp.fsum(w[k] for k in w if abs(k) >= t) / z
        assert tail <= 2 * mp.exp(-(mp.mpf(t) ** 2) / s2)


def test_real_and_discrete_gaussian_bounds_meet_the_tail_rule() -> None:
    mp.mp.dps = 50
    # discrete Gaussian and Gaussian: 2 exp(-t^2 / (2 sigma^2)) <= 2**-64 at the bound
    for bound, t in ((v.MAX_DISCRETE_GAUSSIAN_SIGMA, mp.mpf(2) ** 62), (v.MAX_GAUSSIAN_SIGMA, mp.mpf(2) ** 1000)):
        assert mp.log(2 * mp.exp(-(t**2) / (2 * mp.mpf(bound) ** 2)), 2) <= -64 + 1e-12
    # Gaussian exact tail erfc(t / (sigma sqrt 2)) is below the subgaussian bound
    t = mp.mpf(2) ** 1000
    assert mp.log(mp.erfc(t / (mp.mpf(v.MAX_GAUSSIAN_SIGMA) * mp.sqrt(2))), 2) < -64
    # Laplace exact tail exp(-t / b)
    assert mp.log(mp.exp(-t / mp.mpf(v.MAX_LAPLACE_SCALE)), 2) <= -64 + 1e-12
    # value bound plus noise bound is representable
    assert 2 * v.INT_BOUND == 2**63
    assert 2 * v.REAL_BOUND < np.finfo(np.float64).max


# ---------------------------------------------------------------------------------------------
# 2. Every constructor and factory at extreme values: refused with a named rule, or working
# ---------------------------------------------------------------------------------------------

EXTREMES: list[Any] = [
    5e-324,
    1e-300,
    1e-30,
    1e30,
    1e300,
    1e308,
    INF,
    NAN,
    -1.0,
    True,
    "1",
    np.float32(1e-30),
    np.float64(1e300),
    np.int64(7),
    10**400,
]

# (id, factory of x, name of x in messages, true value for release / log_prob)
FACTORIES: list[tuple[str, Callable[[Any], M.Mechanism], str, Any]] = [
    ("geometric(scale)", lambda x: M.GeometricMechanism(scale=x), "scale", 3),
    ("geometric.from_epsilon", lambda x: M.GeometricMechanism.from_epsilon(x), "epsilon", 3),
    ("geometric.from_alpha", lambda x: M.GeometricMechanism.from_alpha(x), "alpha", 3),
    ("geometric(sensitivity)", lambda x: M.GeometricMechanism(scale=1.0, sensitivity=x), "sensitivity", 3),
    ("laplace(scale)", lambda x: M.LaplaceMechanism(scale=x), "scale", 1.5),
    ("laplace.from_epsilon", lambda x: M.LaplaceMechanism.from_epsilon(x), "epsilon", 1.5),
    ("laplace(sensitivity)", lambda x: M.LaplaceMechanism(scale=1.0, sensitivity=x), "sensitivity", 1.5),
    ("gaussian(sigma)", lambda x: M.GaussianMechanism(sigma=x), "sigma", -2.0),
    ("gaussian.from_rho", lambda x: M.GaussianMechanism.from_rho(x), "rho", -2.0),
    ("gaussian(sensitivity)", lambda x: M.GaussianMechanism(sigma=1.0, sensitivity=x), "sensitivity", -2.0),
    ("discrete_gaussian(sigma)", lambda x: M.DiscreteGaussianMechanism(sigma=x), "sigma", -4),
    ("discrete_gaussian.from_rho", lambda x: M.DiscreteGaussianMechanism.from_rho(x), "rho", -4),
    (
        "discrete_gaussian(sensitivity)",
        lambda x: M.DiscreteGaussianMechanism(sigma=1.0, sensitivity=x),
        "sensitivity",
        -4,
    ),
    ("tgm(scale)", lambda x: M.TGM(scale=x, lower=0, upper=10), "scale", 4),
    ("tgm.from_epsilon", lambda x: M.TGM.from_epsilon(x, 0, 10), "epsilon", 4),
    ("tgm(sensitivity)", lambda x: M.TGM(scale=1.0, lower=0, upper=10, sensitivity=x), "sensitivity", 4),
    ("tgm(upper)", lambda x: M.TGM(scale=1.0, lower=0, upper=x), "upper", 0),
    ("btgm(scale)", lambda x: M.BTGM(scale=x, lower=0, upper=10), "scale", 4),
    ("btgm.from_epsilon", lambda x: M.BTGM.from_epsilon(x, 0, 10), "epsilon", 4),
    ("rgm(epsilon)", lambda x: M.RGM(epsilon=x, lower=0, upper=10), "epsilon", 4),
    ("rgm.from_epsilon", lambda x: M.RGM.from_epsilon(x, 0, 10), "epsilon", 4),
    ("rgm(sensitivity)", lambda x: M.RGM(epsilon=1.0, lower=0, upper=10, sensitivity=x), "sensitivity", 4),
    ("randomized_response.from_epsilon", lambda x: M.RandomizedResponse.from_epsilon(x, 3), "epsilon", 1),
    ("randomized_response(k)", lambda x: M.RandomizedResponse(k=x, p=0.999), "k", 1),
    ("randomized_response(p)", lambda x: M.RandomizedResponse(k=3, p=x), "p", 1),
    ("exponential(epsilon)", lambda x: M.ExponentialMechanism(epsilon=x), "epsilon", np.array([0.0, 1.0, 2.5])),
    (
        "exponential(sensitivity)",
        lambda x: M.ExponentialMechanism(epsilon=1.0, sensitivity=x),
        "sensitivity",
        np.array([0.0, 1.0, 2.5]),
    ),
]


_OWNERS = {cls.__name__ for cls in M.MECHANISMS.values()}


def _guarantee_values(mech: M.Mechanism) -> list[float]:
    g = mech.guarantee()
    return [x for x in (g.epsilon, g.rho) if x is not None]


@pytest.mark.parametrize("x", EXTREMES, ids=lambda x: f"{type(x).__name__}:{str(x)[:12]}")
@pytest.mark.parametrize("fid,factory,name,value", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_extreme_parameters_are_refused_by_name_or_work(fid, factory, name, value, x) -> None:
    try:
        mech = factory(x)
    except (ValueError, TypeError, ArithmeticError) as exc:
        # never a raw ZeroDivisionError / OverflowError / "math domain error" / NumPy message
        assert isinstance(exc, NoiseawareError), f"{fid}({x!r}) raised raw {type(exc).__name__}: {exc}"
        msg = str(exc)
        # the message names the parameter, shows the value given, and states the rule
        assert f"{name}=" in msg and "got " in msg and "must" in msg, msg
        assert msg.split(":")[0] in _OWNERS, msg
        return
    # accepted: the mechanism must be fully usable and its claim representable
    for g in _guarantee_values(mech):
        assert math.isfinite(g) and g > 0, (fid, x, mech.guarantee())
    rebuilt = M.mechanism_from_dict(json.loads(json.dumps(mech.to_dict(), allow_nan=False)))
    assert rebuilt == mech
    if isinstance(mech, M.ExponentialMechanism):
        scores = np.broadcast_to(value, (4, value.size))
        for out in (mech.release(scores), mech.release(scores, rng=np.random.default_rng(0))):
            assert np.all(np.isfinite(mech.log_prob(out, scores)))
        return
    true = np.full(4, value)
    for out in (mech.release(true), mech.release(true, rng=np.random.default_rng(0))):
        assert out.shape == true.shape
        assert np.all(np.isfinite(np.asarray(out, dtype=float)))
        assert np.all(np.isfinite(mech.log_prob(out, true))), (fid, x, out)


# The audit's cases and the rule each must cite (exact message fragments).
REFUSED: list[tuple[str, Callable[[], Any], type, str]] = [
    (
        "geometric scale 1e300 (int64 saturation)",
        lambda: M.GeometricMechanism(scale=1e300),
        NoiseawareValueError,
        r"GeometricMechanism: scale must be <= 1\.02358e\+17 so that value \+ noise fits in int64 "
        r"\(P\(\|noise\| >= 2\*\*62\) < 2\*\*-64\); got scale=1e\+300\.",
    ),
    (
        "geometric epsilon 1e-300",
        lambda: M.GeometricMechanism.from_epsilon(1e-300),
        NoiseawareValueError,
        r"epsilon must be large enough that scale = sensitivity / epsilon <= 1\.02358e\+17 so that value \+ noise "
        r"fits in int64 .*; got epsilon=1e-300\. It gives scale=9\.999999999999999e\+299\.",
    ),
    (
        "geometric scale subnormal",
        lambda: M.GeometricMechanism(scale=5e-324),
        NoiseawareValueError,
        r"scale must be >= 2\.2250738585072014e-308 \(the smallest normal float64.*got scale=5e-324",
    ),
    (
        "geometric sensitivity beyond the integer range",
        lambda: M.GeometricMechanism(scale=1.0, sensitivity=10**30),
        NoiseawareValueError,
        r"sensitivity must be an integer <= 2\*\*62; got sensitivity=10{30}",
    ),
    (
        "discrete gaussian rho 5e-324",
        lambda: M.DiscreteGaussianMechanism.from_rho(5e-324),
        NoiseawareValueError,
        r"rho must be large enough that sigma = sensitivity / sqrt\(2 rho\) <= 4\.8582e\+17 so that value \+ "
        r"noise fits in int64.*got rho=5e-324",
    ),
    (
        "discrete gaussian sigma 1e30",
        lambda: M.DiscreteGaussianMechanism(sigma=1e30),
        NoiseawareValueError,
        r"sigma must be <= 4\.8582e\+17 so that value \+ noise fits in int64",
    ),
    (
        "gaussian sigma 1e300: rho underflows to 0",
        lambda: M.GaussianMechanism(sigma=1e300),
        NoiseawareValueError,
        r"sensitivity and sigma must give a finite rho = sensitivity\*\*2 / \(2 sigma\*\*2\) > 0 in float64; "
        r"got sensitivity=1\.0, sigma=1e\+300 \(rho=0\.0\)\.",
    ),
    (
        "gaussian sigma 1e308: overflow",
        lambda: M.GaussianMechanism(sigma=1e308),
        NoiseawareValueError,
        r"sigma must be <= 1\.12879e\+300 so that value \+ noise stays finite in float64",
    ),
    (
        "laplace scale 1e300",
        lambda: M.LaplaceMechanism(scale=1e300),
        NoiseawareValueError,
        r"scale must be <= 2\.41541e\+299 so that value \+ noise stays finite in float64 "
        r"\(P\(\|noise\| >= 2\*\*1000\) < 2\*\*-64\)",
    ),
    (
        "btgm epsilon 1e308 (was ZeroDivisionError / math domain error)",
        lambda: M.BTGM.from_epsilon(1e308, 0, 10),
        NoiseawareValueError,
        r"epsilon must be small enough that scale = sensitivity / epsilon >= 2\.2250738585072014e-308",
    ),
    (
        "btgm epsilon 1e-300 (was ZeroDivisionError)",
        lambda: M.BTGM.from_epsilon(1e-300, 0, 10),
        NoiseawareValueError,
        r"epsilon must be large enough that scale = sensitivity / epsilon <= 1\.02358e\+17",
    ),
    (
        "btgm outputs not distinguishable",
        lambda: M.BTGM(scale=1e13, lower=0, upper=10),
        NoiseawareValueError,
        r"scale must be small enough .* the W \+ 1 posterior means, the outputs, are finite and increase by more "
        r"than 1e-12 \(relative\).*got scale=10000000000000\.0\. It gives epsilon=1e-13\.",
    ),
    (
        "btgm too wide to tabulate",
        lambda: M.BTGM(scale=1.0, lower=0, upper=2**24 + 1),
        NoiseawareValueError,
        r"upper - lower must be <= 16777216",
    ),
    (
        "rgm epsilon 1e-300 (was math domain error)",
        lambda: M.RGM(epsilon=1e-300, lower=0, upper=10),
        NoiseawareValueError,
        r"RenormalizedGeometricMechanism: epsilon must be >= sensitivity / 1\.02358e\+17 = 9\.76965e-18.*"
        r"got epsilon=1e-300",
    ),
    (
        "rgm rejection sampler would (nearly) never accept",
        lambda: M.RGM(epsilon=1e-8, lower=0, upper=10),
        NoiseawareValueError,
        r"epsilon must be large enough that the exact rejection sampler accepts a proposal with probability "
        r">= 0\.0001 .*got epsilon=1e-08\. It gives 3\.02e-08 \(W=10",
    ),
    (
        "tgm bound beyond the integer range",
        lambda: M.TGM(scale=1.0, lower=-(2**63), upper=0),
        NoiseawareValueError,
        r"lower must lie in \[-2\*\*62, 2\*\*62\]",
    ),
    (
        "exponential epsilon 1e-300: rho underflows",
        lambda: M.ExponentialMechanism(epsilon=1e-300),
        NoiseawareValueError,
        r"epsilon must give a finite rho = epsilon\*\*2 / 8 > 0 in float64; got epsilon=1e-300 \(rho=0\.0\)",
    ),
    (
        "exponential epsilon 1e300: rho overflows",
        lambda: M.ExponentialMechanism(epsilon=1e300),
        NoiseawareValueError,
        r"got epsilon=1e\+300 \(rho=inf\)",
    ),
    (
        "randomized response p rounds to 1",
        lambda: M.RandomizedResponse.from_epsilon(1e30, 3),
        NoiseawareValueError,
        r"epsilon must be small enough that p = e\*\*epsilon / \(e\*\*epsilon \+ k - 1\) < 1 in float64",
    ),
    (
        "randomized response with too many categories",
        lambda: M.RandomizedResponse(k=10**30, p=0.5),
        NoiseawareValueError,
        r"k must be an integer <= 1048576",
    ),
    (
        "python int beyond float64 as a real parameter",
        lambda: M.LaplaceMechanism(scale=10**400),
        NoiseawareValueError,
        r"scale must be a real number within the float64 range",
    ),
]


@pytest.mark.parametrize("cid,factory,exc,pattern", REFUSED, ids=[c[0] for c in REFUSED])
def test_audit_parameters_are_refused_with_the_rule(cid, factory, exc, pattern) -> None:
    with pytest.raises(exc, match=pattern):
        factory()


# (id, factory of the bound, the bound) -- at the bound accepted and releasing, just above refused
BOUNDARIES: list[tuple[str, Callable[[float], M.Mechanism], float]] = [
    ("geometric", lambda s: M.GeometricMechanism(scale=s), v.MAX_GEOMETRIC_SCALE),
    ("tgm", lambda s: M.TGM(scale=s, lower=-(2**62), upper=2**62), v.MAX_GEOMETRIC_SCALE),
    ("discrete_gaussian", lambda s: M.DiscreteGaussianMechanism(sigma=s), v.MAX_DISCRETE_GAUSSIAN_SIGMA),
    ("laplace", lambda s: M.LaplaceMechanism(scale=s), v.MAX_LAPLACE_SCALE),
    # with sensitivity 1 the rho rule binds first (rho = 1/(2 sigma^2) underflows near sigma = 3e161)
    ("gaussian", lambda s: M.GaussianMechanism(sigma=s, sensitivity=1e200), v.MAX_GAUSSIAN_SIGMA),
]


@pytest.mark.parametrize("bid,factory,bound", BOUNDARIES, ids=[b[0] for b in BOUNDARIES])
def test_noise_bound_is_the_boundary_and_the_secure_path_does_not_saturate(bid, factory, bound) -> None:
    with pytest.raises(NoiseawareValueError, match=re.escape(f"must be <= {bound:.6g} so that value + noise")):
        factory(math.nextafter(bound, math.inf))
    mech = factory(bound)
    integer = mech.output_kind == "integer"
    edge = v.INT_BOUND if integer else v.REAL_BOUND
    true = np.array([edge, -edge, 0] * 8, dtype=np.int64 if integer else np.float64)
    out = mech.release(true)
    if integer:
        assert out.dtype == np.int64
        assert np.all(np.abs(out.astype(object)) < I64_MAX)
    assert np.all(np.isfinite(mech.log_prob(out, true)))


# ---------------------------------------------------------------------------------------------
# 3. True values at release(): refused beyond the representable range, by name
# ---------------------------------------------------------------------------------------------

_GEO = M.GeometricMechanism.from_epsilon(1.0)
_LAP = M.LaplaceMechanism.from_epsilon(1.0)
VALUE_ATTACKS: list[tuple[str, M.Mechanism, Any, type, str]] = [
    # int64 maximum plus noise sat at the maximum most of the time
    ("int64 max", _GEO, [I64_MAX] * 3, NoiseawareValueError, r"value must hold integers in \[-2\*\*62, 2\*\*62\]"),
    ("just above 2**62", _GEO, [2**62 + 1], NoiseawareValueError, r"got 4611686018427387905\."),
    ("just below -2**62", _GEO, [-(2**62) - 1], NoiseawareValueError, r"got -4611686018427387905\."),
    (
        "uint64 max is not -1",
        _GEO,
        np.array([2**64 - 1], dtype=np.uint64),
        NoiseawareValueError,
        r"got 18446744073709551615 \(beyond int64\)",
    ),
    ("python int beyond int64", _GEO, [1, 2**70], NoiseawareValueError, r"got 1180591620717411303424 \(beyond int64\)"),
    ("float beyond int64", _GEO, [1e20], NoiseawareValueError, r"must hold integers in \[-2\*\*62, 2\*\*62\]"),
    ("discrete gaussian", M.DiscreteGaussianMechanism(sigma=2.0), [2**63 - 1], NoiseawareValueError, r"2\*\*62"),
    ("tgm", M.TGM.from_epsilon(1.0, 0, 5), [2**63 - 1], NoiseawareValueError, r"2\*\*62"),
    ("ragged", _GEO, [[1, 2], [3]], NoiseawareValueError, r"value must be a rectangular array of numbers"),
    ("strings", _GEO, ["a"], NoiseawareTypeError, r"value must be numeric; got dtype <U1"),
    ("object strings", _GEO, np.array(["a"], dtype=object), NoiseawareTypeError, r"got str values such as 'a'"),
    ("None", _GEO, [None], NoiseawareTypeError, r"got NoneType values"),
    ("non-integral", _GEO, [1.5], NoiseawareValueError, r"must hold integers; got non-integral"),
    ("nan", _GEO, [NAN], NoiseawareValueError, r"must not contain NaN or inf"),
    (
        "real beyond 2**1000",
        _LAP,
        [1e308],
        NoiseawareValueError,
        r"value must lie in \[-1\.07151e\+301, 1\.07151e\+301\]",
    ),
    ("real python int beyond float64", _LAP, [10**400], NoiseawareValueError, r"too large for float64"),
    ("real complex", _LAP, [1 + 2j], NoiseawareTypeError, r"must hold real numbers"),
    ("real ragged", _LAP, [[1.0], [2.0, 3.0]], NoiseawareValueError, r"ragged"),
    ("real inf", _LAP, [INF], NoiseawareValueError, r"must not contain NaN or inf"),
]


@pytest.mark.parametrize("aid,mech,value,exc,pattern", VALUE_ATTACKS, ids=[a[0] for a in VALUE_ATTACKS])
def test_release_refuses_unrepresentable_true_values(aid, mech, value, exc, pattern) -> None:
    for rng in (None, np.random.default_rng(1)):
        with pytest.raises(exc, match=pattern):
            mech.release(value, rng=rng)


def test_opendp_saturates_silently_and_the_guard_refuses_it() -> None:
    """OpenDP itself clamps integer outputs to the int64 limits; our wrapper refuses them."""
    raw = np.asarray(_opendp._int_laplace(1e30)([0] * 64), dtype=object)
    assert np.any((raw == I64_MAX) | (raw == -(2**63)))  # P(no saturation) < (1e-11)**64
    with pytest.raises(NoiseawareValueError, match="saturated at the int64 limit"):
        _opendp.discrete_laplace(np.zeros(64, dtype=np.int64), 1e30)
    with pytest.raises(NoiseawareValueError, match="saturated at the int64 limit"):
        _opendp.discrete_gaussian(np.zeros(64, dtype=np.int64), 1e30)
    # float overflow: each draw overflows with probability 1/2
    with pytest.raises(NoiseawareValueError, match="overflowed float64"):
        _opendp.laplace(np.full(96, 1.7e308), 1e308)


PRIVATIZE_ATTACKS: list[tuple[str, dict[str, Any], Any, str]] = [
    ("counts epsilon 1e-300", {"statistic": "counts", "epsilon": 1e-300, "sensitivity": 1}, [3, 4], r"fits in int64"),
    (
        "counts rho 5e-324",
        {"statistic": "counts", "rho": 5e-324, "sensitivity": 1},
        [3, 4],
        r"rho must be >= 2\.2250738585072014e-308 \(the smallest normal float64\)",
    ),
    ("median_pairs epsilon 1e-300", {"statistic": "median_pairs", "epsilon": 1e-300}, "matrix", r"fits in int64"),
    (
        "median_pairs btgm 1e-300",
        {"statistic": "median_pairs", "epsilon": 1e-300, "mechanism": "btgm"},
        "matrix",
        r"fits in int64",
    ),
    (
        "median_pairs rgm 1e-300",
        {"statistic": "median_pairs", "epsilon": 1e-300, "mechanism": "rgm"},
        "matrix",
        r"epsilon must be >=",
    ),
    (
        "counts uint64 max",
        {"statistic": "counts", "epsilon": 1.0, "sensitivity": 1},
        [2**64 - 1],
        r"18446744073709551615",
    ),
    (
        "counts ragged",
        {"statistic": "counts", "epsilon": 1.0, "sensitivity": 1},
        [[1, 2], [3]],
        r"data must be a rectangular array",
    ),
]


@pytest.mark.parametrize("pid,kwargs,data,pattern", PRIVATIZE_ATTACKS, ids=[p[0] for p in PRIVATIZE_ATTACKS])
def test_privatize_refuses_unrepresentable_releases(pid, kwargs, data, pattern) -> None:
    from noiseaware import privatize

    if isinstance(data, str):
        data = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(NoiseawareValueError, match=pattern):
        privatize(data, **kwargs)


# ---------------------------------------------------------------------------------------------
# 4. _validation arrays
# ---------------------------------------------------------------------------------------------

ARRAY_BAD: list[tuple[str, str, Any, type, str]] = [
    ("integer", "ragged", [[1, 2], [3]], NoiseawareValueError, r"data must be a rectangular array"),
    ("finite", "ragged", [[1.0, 2.0], [3.0]], NoiseawareValueError, r"data must be a rectangular array"),
    ("integer", "deep ragged", [[1], [2, [3]]], NoiseawareValueError, r"ragged"),
    ("integer", "uint64 max", np.array([2**64 - 1], dtype=np.uint64), NoiseawareValueError, r"18446744073709551615"),
    ("integer", "uint64 2**63", [2**63], NoiseawareValueError, r"got 9223372036854775808 \(beyond int64\)"),
    ("integer", "int64 min", np.array([-(2**63)], dtype=np.int64), NoiseawareValueError, r"got -9223372036854775808\."),
    ("integer", "python int 2**70", 2**70, NoiseawareValueError, r"1180591620717411303424 \(beyond int64\)"),
    ("integer", "python int -2**64", [-(2**64)], NoiseawareValueError, r"-18446744073709551616"),
    ("integer", "float 1e300", [1e300], NoiseawareValueError, r"\[-2\*\*62, 2\*\*62\]"),
    ("integer", "strings", ["a"], NoiseawareTypeError, r"data must be numeric"),
    ("finite", "strings", ["a", "b"], NoiseawareTypeError, r"data must be numeric"),
    ("integer", "object strings", np.array(["a"], dtype=object), NoiseawareTypeError, r"got str values such as 'a'"),
    ("finite", "object strings", np.array(["a"], dtype=object), NoiseawareTypeError, r"got str values such as 'a'"),
    ("finite", "mixed", [1.5, "a"], NoiseawareTypeError, r"data must be numeric"),
    ("finite", "None", [1.0, None], NoiseawareTypeError, r"got NoneType values"),
    ("finite", "dict", {"a": 1}, NoiseawareTypeError, r"data must be an array of numbers; got dict"),
    ("finite", "complex", [1j], NoiseawareTypeError, r"must hold real numbers"),
    ("finite", "python int beyond float64", [1, 10**400], NoiseawareValueError, r"too large for float64"),
    ("finite", "longdouble overflow", np.array([1e4000], dtype=np.longdouble), NoiseawareValueError, r"NaN or inf"),
    ("integer", "object nan", np.array([1, NAN], dtype=object), NoiseawareValueError, r"NaN or inf"),
    ("integer", "object non-integral", np.array([1, 2.5], dtype=object), NoiseawareValueError, r"non-integral"),
]


@pytest.mark.parametrize("kind,aid,value,exc,pattern", ARRAY_BAD, ids=[f"{a[0]}-{a[1]}" for a in ARRAY_BAD])
def test_arrays_refuse_bad_input_by_name(kind, aid, value, exc, pattern) -> None:
    fn = v.integer_array if kind == "integer" else v.finite_array
    with pytest.raises(exc, match=pattern) as info, v.owner_scope("owner"):
        fn("data", value)
    assert str(info.value).startswith("owner: data ")


ARRAY_GOOD: list[tuple[str, Any, list[Any]]] = [
    ("integer", [True, 2], [1, 2]),
    ("integer", [2**62, -(2**62)], [2**62, -(2**62)]),
    ("integer", np.array([2**62], dtype=np.uint64), [2**62]),
    ("integer", np.array([1, 2**62], dtype=object), [1, 2**62]),
    ("integer", [1.0, -3.0], [1, -3]),
    ("finite", np.array([2**64 - 1], dtype=np.uint64), [float(2**64 - 1)]),
    ("finite", [1, 2**70], [1.0, float(2**70)]),
    ("finite", np.float32(0.5), 0.5),
]


@pytest.mark.parametrize("kind,value,expected", ARRAY_GOOD)
def test_arrays_convert_representable_input_exactly(kind, value, expected) -> None:
    fn = v.integer_array if kind == "integer" else v.finite_array
    out = fn("data", value)
    assert out.dtype == (np.int64 if kind == "integer" else np.float64)
    assert out.tolist() == expected


# ---------------------------------------------------------------------------------------------
# 5. TGM / BTGM log-probabilities: exact deep in both tails (mpmath brute force)
# ---------------------------------------------------------------------------------------------


def _tgm_reference(scale: float, lo: int, hi: int, m: int, s: int) -> mp.mpf:
    """log P(s | m) by summing the two-sided geometric pmf through the clamp (50 digits)."""
    mp.mp.dps = 50
    a = mp.e ** (-1 / mp.mpf(scale))
    c = (1 - a) / (1 + a)
    n_terms = int(120 * scale) + 50  # a**n_terms < e**-120

    def pmf(k: int) -> mp.mpf:
        return c * a ** abs(k)

    if lo == hi:
        return mp.mpf(0)
    if s == lo:
        return mp.log(mp.fsum(pmf(k) for k in range(lo - m - n_terms, lo - m + 1)))
    if s == hi:
        return mp.log(mp.fsum(pmf(k) for k in range(hi - m, hi - m + n_terms + 1)))
    return mp.log(pmf(s - m))


# (epsilon, lower, upper, true value); deep upper tail: U - M >= 37 at epsilon 1 (old: -inf);
# deep lower tail: M - L >= 745 / epsilon (old: log(0) = -inf)
TAIL_CASES: list[tuple[float, int, int, int]] = [
    (1.0, 0, 100, 40),
    (1.0, 0, 100, 63),
    (1.0, 0, 1000, 900),
    (1.0, -500, 500, 499),
    (1.0, -500, 500, -499),
    (0.3, 0, 400, 10),
    (3.0, 0, 60, 30),
    (20.0, 0, 40, 20),
    (1.0, 5, 45, 5),
    (0.05, 0, 3000, 1500),
    (2.0, 7, 7, 7),
]


def _tail_outputs(lo: int, hi: int, m: int) -> list[int]:
    return sorted({s for s in (lo, lo + 1, m - 1, m, m + 1, hi - 1, hi) if lo <= s <= hi})


@pytest.mark.parametrize("eps,lo,hi,m", TAIL_CASES)
def test_tgm_log_prob_is_exact_in_deep_tails(eps, lo, hi, m) -> None:
    tgm = M.TGM.from_epsilon(eps, lo, hi)
    ss = _tail_outputs(lo, hi, m)
    got = tgm.log_prob(ss, m)
    ref = np.array([float(_tgm_reference(tgm.scale, lo, hi, m, s)) for s in ss])
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13)
    # the whole law still sums to one
    total = float(np.logaddexp.reduce(tgm.log_prob(np.arange(lo, hi + 1), m)))
    assert abs(total) < 1e-12
    # BTGM carries the same law over its table
    if hi - lo <= 3000:
        btgm = M.BTGM.from_epsilon(eps, lo, hi)
        np.testing.assert_allclose(btgm.log_prob(btgm.table[np.array(ss) - lo], m), ref, rtol=1e-13, atol=1e-13)


DEEP_CASES = [c for c in TAIL_CASES if c[0] * (c[2] - c[3]) >= 37 or c[0] * (c[3] - c[1]) >= 745]


@pytest.mark.parametrize("eps,lo,hi,m", DEEP_CASES)
def test_deep_tail_cases_defeat_the_old_one_minus_cdf_formula(eps, lo, hi, m) -> None:
    """Before issue 11 the end points were log(cdf) and log1p(-cdf): -inf or wrong for these cases."""
    tgm = M.TGM.from_epsilon(eps, lo, hi)
    geo = M.GeometricMechanism(scale=tgm.scale)
    with np.errstate(divide="ignore"):
        old = np.array([np.log(geo.noise_cdf(lo - m)), np.log1p(-geo.noise_cdf(hi - 1 - m))])
    new = tgm.log_prob([lo, hi], m)
    ref = np.array([float(_tgm_reference(tgm.scale, lo, hi, m, s)) for s in (lo, hi)])
    assert np.all(np.isfinite(new))
    np.testing.assert_allclose(new, ref, rtol=1e-13)
    assert np.any(np.isneginf(old) | (np.abs(old - ref) > 1e-6 * np.abs(ref)))


def test_noise_logcdf_matches_mpmath() -> None:
    mp.mp.dps = 50
    for scale in (0.05, 1.0, 7.5, 1e6):
        geo = M.GeometricMechanism(scale=scale)
        a = mp.e ** (-1 / mp.mpf(scale))
        for k in (-5000, -800, -37, -1, 0, 1, 36, 800, 10**6):
            # P(K <= k) = a^{-k} / (1 + a) for k <= 0, 1 - a^{k+1} / (1 + a) for k >= 0 (closed forms summed)
            ref = mp.log(a ** (-k) / (1 + a)) if k <= 0 else mp.log1p(-(a ** (k + 1)) / (1 + a))
            got = float(geo.noise_logcdf(k))
            assert got == pytest.approx(float(ref), rel=1e-13, abs=1e-300), (scale, k)


# ---------------------------------------------------------------------------------------------
# 6. BTGM posterior means and RGM epsilon' at small epsilon (mpmath)
# ---------------------------------------------------------------------------------------------


def _posterior_mean_mp(j: int, d: float, width: int) -> mp.mpf:
    a = mp.e ** (-mp.mpf(d))
    w = [a ** abs(i - j) for i in range(width + 1)]
    return mp.fsum(i * wi for i, wi in enumerate(w)) / mp.fsum(w)


def _old_eq22(j: np.ndarray, alpha: float, width: int) -> np.ndarray:
    """The former evaluation of seed 000 eq. (22), kept here to show what it lost."""
    a, la = alpha, math.log(alpha)
    pw = lambda k: np.exp(np.asarray(k, dtype=float) * la)  # noqa: E731
    num = j * (1 - a * a) + pw(j + 1) - (width + 1) * pw(width + 1 - j) + width * pw(width + 2 - j)
    return num / ((1 - a) * (1 + a - pw(j + 1) - pw(width + 1 - j)))


@pytest.mark.parametrize("d", [1e-9, 1e-6, 1e-3, 0.5, 1.0, 1.5, 10.0, 700.0])
@pytest.mark.parametrize("width", [1, 2, 10, 101])
def test_btgm_posterior_mean_matches_mpmath_at_any_epsilon(d: float, width: int) -> None:
    mp.mp.dps = 60
    j = np.array(sorted({0, 1, width // 2, width - 1, width}), dtype=float)
    ref = np.array([float(_posterior_mean_mp(int(x), d, width)) for x in j])
    got = M.btgm_posterior_mean(j + 3, math.exp(-d), 3, 3 + width) - 3
    np.testing.assert_allclose(got, ref, rtol=0, atol=4e-15 * width)
    if d == 1e-6 and width >= 2:
        assert np.max(np.abs(_old_eq22(j, math.exp(-d), width) - ref)) > 1e-7  # the old form lost ~8 digits


@pytest.mark.parametrize("eps", [1e-17, 1e-12, 1e-6, 0.01, 1.0, 30.0])
@pytest.mark.parametrize("lo,hi,sens", [(0, 10, 1), (0, 2**40, 1), (0, 30, 3), (-5, 5, 2)])
def test_rgm_epsilon_prime_matches_mpmath(eps: float, lo: int, hi: int, sens: int) -> None:
    mp.mp.dps = 60
    width = hi - lo
    d = min(sens, math.ceil(width / 2))

    def log_g(e: mp.mpf) -> mp.mpf:
        a = mp.e ** (-e / sens)
        return mp.log((1 + a - a ** (d + 1) - a ** (width + 1 - d)) / (1 - a ** (width + 1)))

    ref = mp.findroot(lambda e: e + log_g(e) - mp.mpf(eps), mp.mpf(eps) * 0.75, tol=mp.mpf(10) ** -50)
    got = M.rgm_epsilon_prime(eps, sens, lo, hi)
    assert got == pytest.approx(float(ref), rel=1e-13)
    acceptance = -math.expm1(-(width + 1) * got / sens) / (1 + math.exp(-got / sens))
    try:
        rgm = M.RGM(epsilon=eps, lower=lo, upper=hi, sensitivity=sens)
    except NoiseawareValueError as exc:
        assert acceptance < 1e-4 or sens / eps > v.MAX_GEOMETRIC_SCALE, str(exc)
        return
    assert acceptance >= 1e-4
    # the renormalized law sums to one at the ends and the middle of the range (small ranges)
    if width <= 30:
        for m in (lo, (lo + hi) // 2, hi):
            assert abs(float(np.logaddexp.reduce(rgm.log_prob(np.arange(lo, hi + 1), m)))) < 1e-12


def test_rgm_with_a_single_output_needs_no_draws() -> None:
    rgm = M.RGM(epsilon=1e-9, lower=3, upper=3)
    assert rgm.release([3, 3]).tolist() == [3, 3]
    assert rgm.release([3], rng=np.random.default_rng(0)).tolist() == [3]
    assert rgm.log_prob(3, 3) == 0.0


# ---------------------------------------------------------------------------------------------
# 7. Selection mechanisms at the edges
# ---------------------------------------------------------------------------------------------


def test_exponential_mechanism_log_prob_at_huge_epsilon_is_exact_not_nan() -> None:
    """log P(r) = eps (s_r - max s) / (2 sensitivity) - log(1 + tiny): exactly -1e30, -5e29, 0."""
    em = M.ExponentialMechanism(epsilon=1e30)
    lp = em.log_prob([0, 1, 2], np.array([0.0, 1.0, 2.0]))
    np.testing.assert_allclose(lp, [-1e30, -5e29, 0.0], rtol=1e-15, atol=0)
    assert em.log_prob(0, np.array([1e308, -1e308])) == 0.0  # score differences overflow: no nan
    assert em.release(np.array([0.0, 1.0, 2.0])) == 2


def test_randomized_response_guarantee_covers_p_just_below_one_over_k() -> None:
    """float(1/3) < 1/3: the largest likelihood ratio is the inverse one; the claim is |log ratio| > 0."""
    rr = M.RandomizedResponse(k=3, p=1 / 3)
    mp.mp.dps = 50
    p = mp.mpf(rr.p)  # the float actually used, exactly
    exact = abs(mp.log(p * 2 / (1 - p)))
    assert exact > 0
    assert rr.guarantee().epsilon == pytest.approx(float(exact), rel=1e-12)
