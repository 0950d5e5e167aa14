"""Registry of mechanism test cases, as data.

Each case: a mechanism, a true input, an *independent* reference for the law of the output
(SciPy where it exists, brute-force enumeration otherwise), the finite set of outputs used for
exact checks (with a proven bound on the mass outside it), and a deliberately wrong variant
(noise scale 10% too small) that statistical tests must reject.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath as mp
import numpy as np
from scipy import stats

from noiseaware import mechanisms as M


@dataclass
class Case:
    id: str
    mech: M.Mechanism
    value: Any
    # reference pmf over `support` (discrete) or reference cdf (continuous)
    support: np.ndarray | None = None
    ref_pmf: Callable[[np.ndarray], np.ndarray] | None = None
    ref_cdf: Callable[[np.ndarray], np.ndarray] | None = None
    wrong: M.Mechanism | None = None
    secure_draws: int = 20_000
    sim_draws: int = 200_000
    neighbours: list[tuple[Any, Any]] = field(default_factory=list)
    claimed: float | None = None  # claimed epsilon for exact privacy checks


def _dlaplace_ref(scale: float, loc: int) -> Callable[[np.ndarray], np.ndarray]:
    return lambda k: stats.dlaplace.pmf(k, 1.0 / scale, loc=loc)


def _dgauss_ref(sigma: float, loc: int) -> Callable[[np.ndarray], np.ndarray]:
    # brute force in mpmath: normalizer summed over |k| <= 60 sigma + 50
    mp.mp.dps = 40
    K = int(60 * sigma) + 50
    z = mp.fsum(mp.exp(-(mp.mpf(k) ** 2) / (2 * mp.mpf(sigma) ** 2)) for k in range(-K, K + 1))

    def pmf(k: np.ndarray) -> np.ndarray:
        return np.array(
            [float(mp.exp(-(mp.mpf(int(x) - loc) ** 2) / (2 * mp.mpf(sigma) ** 2)) / z) for x in np.ravel(k)]
        ).reshape(np.shape(k))

    return pmf


def _tgm_ref(scale: float, lo: int, hi: int, m: int) -> Callable[[np.ndarray], np.ndarray]:
    # brute force: push the geometric mass on a wide window through the clamp
    a = math.exp(-1.0 / scale)
    W = int(60 * scale) + hi - lo + 50
    ks = np.arange(m - W, m + W + 1)
    p = (1 - a) / (1 + a) * a ** np.abs(ks - m)
    out = np.clip(ks, lo, hi)
    tab = {s: p[out == s].sum() for s in range(lo, hi + 1)}
    return lambda s: np.array([tab.get(int(x), 0.0) for x in np.ravel(s)]).reshape(np.shape(s))


def _rgm_ref(eps_p: float, sens: int, lo: int, hi: int, m: int) -> Callable[[np.ndarray], np.ndarray]:
    w = np.array([math.exp(-abs(s - m) * eps_p / sens) for s in range(lo, hi + 1)])
    w /= w.sum()
    return lambda s: np.array([w[int(x) - lo] if lo <= x <= hi else 0.0 for x in np.ravel(s)]).reshape(np.shape(s))


def _btgm_ref(mech: M.BTGM, m: int) -> Callable[[np.ndarray], np.ndarray]:
    base = _tgm_ref(mech.scale, mech.lower, mech.upper, m)
    tab = mech.table

    def pmf(y: np.ndarray) -> np.ndarray:
        out = []
        for x in np.ravel(y):
            j = np.flatnonzero(np.isclose(tab, x, rtol=1e-12, atol=0))
            out.append(float(base(np.array([mech.lower + j[0]]))[0]) if j.size else 0.0)
        return np.array(out).reshape(np.shape(y))

    return pmf


def _rr_ref(k: int, p: float, x: int) -> Callable[[np.ndarray], np.ndarray]:
    return lambda y: np.where(np.asarray(y) == x, p, (1 - p) / (k - 1))


def _exp_ref(eps: float, sens: float, scores: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    w = np.exp(eps * scores / (2 * sens))
    w = w / w.sum()
    return lambda r: w[np.asarray(r, dtype=int)]


def cases() -> list[Case]:
    out: list[Case] = []
    g = M.GeometricMechanism.from_epsilon(1.0)
    out.append(
        Case(
            "geometric-eps1",
            g,
            3,
            support=np.arange(3 - 40, 3 + 41),
            ref_pmf=_dlaplace_ref(g.scale, 3),
            wrong=M.GeometricMechanism(scale=0.9 * g.scale),
            neighbours=[(3, 4), (3, 2)],
            claimed=1.0,
        )
    )
    g3 = M.GeometricMechanism.from_epsilon(0.5, sensitivity=3)
    out.append(
        Case(
            "geometric-eps0.5-sens3",
            g3,
            10,
            support=np.arange(10 - 200, 10 + 201),
            ref_pmf=_dlaplace_ref(g3.scale, 10),
            wrong=M.GeometricMechanism(scale=0.9 * g3.scale, sensitivity=3),
            neighbours=[(10, 13), (10, 7), (10, 12)],
            claimed=0.5,
        )
    )
    dg = M.DiscreteGaussianMechanism(sigma=2.5)
    out.append(
        Case(
            "discrete-gaussian-2.5",
            dg,
            -4,
            support=np.arange(-4 - 40, -4 + 41),
            ref_pmf=_dgauss_ref(2.5, -4),
            wrong=M.DiscreteGaussianMechanism(sigma=0.9 * 2.5),
        )
    )
    dg_small = M.DiscreteGaussianMechanism(sigma=0.4)
    out.append(
        Case(
            "discrete-gaussian-0.4",
            dg_small,
            0,
            support=np.arange(-12, 13),
            ref_pmf=_dgauss_ref(0.4, 0),
            wrong=M.DiscreteGaussianMechanism(sigma=0.9 * 0.4),
            sim_draws=400_000,
            secure_draws=60_000,
        )
    )
    lap = M.LaplaceMechanism.from_epsilon(0.7, sensitivity=2.0)
    out.append(
        Case(
            "laplace",
            lap,
            1.5,
            ref_cdf=lambda x: stats.laplace.cdf(x, loc=1.5, scale=lap.scale),
            wrong=M.LaplaceMechanism(scale=0.9 * lap.scale, sensitivity=2.0),
            neighbours=[(1.5, 3.5)],
            claimed=0.7,
        )
    )
    gau = M.GaussianMechanism.from_rho(0.5, sensitivity=1.0)
    out.append(
        Case(
            "gaussian",
            gau,
            -2.0,
            ref_cdf=lambda x: stats.norm.cdf(x, loc=-2.0, scale=gau.sigma),
            wrong=M.GaussianMechanism(sigma=0.9 * gau.sigma),
        )
    )
    rr = M.RandomizedResponse(k=4, p=0.55)
    out.append(
        Case(
            "randomized-response-k4",
            rr,
            2,
            support=np.arange(4),
            ref_pmf=_rr_ref(4, 0.55, 2),
            # "10% too small scale" for RR: epsilon 10% larger than claimed
            wrong=M.RandomizedResponse.from_epsilon(rr.epsilon / 0.9, 4),
            secure_draws=8_000,
            neighbours=[(2, 0), (0, 2), (1, 3)],
            claimed=rr.epsilon,
        )
    )
    for lo, hi, m, eps in [(0, 25, 12, 0.25), (0, 8, 0, 1.0), (5, 60, 59, 0.1)]:
        tgm = M.TGM.from_epsilon(eps, lo, hi)
        out.append(
            Case(
                f"tgm-{lo}-{hi}-{m}-eps{eps}",
                tgm,
                m,
                support=np.arange(lo, hi + 1),
                ref_pmf=_tgm_ref(tgm.scale, lo, hi, m),
                wrong=M.TGM(scale=0.9 * tgm.scale, lower=lo, upper=hi),
                neighbours=[(s, s + 1) for s in range(lo, hi)] + [(s + 1, s) for s in range(lo, hi)],
                claimed=eps,
            )
        )
        btgm = M.BTGM.from_epsilon(eps, lo, hi)
        out.append(
            Case(
                f"btgm-{lo}-{hi}-{m}-eps{eps}",
                btgm,
                m,
                support=btgm.table,
                ref_pmf=_btgm_ref(btgm, m),
                wrong=M.BTGM(scale=0.9 * btgm.scale, lower=lo, upper=hi),
                neighbours=[(s, s + 1) for s in range(lo, hi)] + [(s + 1, s) for s in range(lo, hi)],
                claimed=eps,
            )
        )
    for lo, hi, m, eps, sens in [(0, 25, 12, 0.25, 1), (0, 8, 0, 1.0, 1), (0, 30, 3, 0.8, 2), (2, 3, 2, 1.0, 1)]:
        rgm = M.RGM(epsilon=eps, lower=lo, upper=hi, sensitivity=sens)
        pairs = [(s, s + d) for s in range(lo, hi + 1) for d in range(-sens, sens + 1) if lo <= s + d <= hi and d]
        out.append(
            Case(
                f"rgm-{lo}-{hi}-{m}-eps{eps}-sens{sens}",
                rgm,
                m,
                support=np.arange(lo, hi + 1),
                ref_pmf=_rgm_ref(rgm.epsilon_prime, sens, lo, hi, m),
                wrong=M.RGM(epsilon=eps / 0.9, lower=lo, upper=hi, sensitivity=sens),
                neighbours=pairs,
                claimed=eps,
                secure_draws=60_000,
            )
        )
    scores = np.array([0.0, 1.0, 2.5, -1.0])
    em = M.ExponentialMechanism(epsilon=1.2, sensitivity=1.0)
    out.append(
        Case(
            "exponential",
            em,
            scores,
            support=np.arange(4),
            ref_pmf=_exp_ref(1.2, 1.0, scores),
            wrong=M.ExponentialMechanism(epsilon=1.2 / 0.9, sensitivity=1.0),
            secure_draws=20_000,
            claimed=1.2,
        )
    )
    return out


CASES = cases()
CASE_IDS = [c.id for c in CASES]
