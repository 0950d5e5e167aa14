"""Coverage of the default hierarchy fit's intervals on sparse synthetic files, and that the check can fail.

A small version of ``benchmarks/hierarchy_calibration.py coverage``: files of one tiny sparse tree (1 state x 3
counties x 4 tracts, about 2 people a tract, ``synthetic_nmf``), each with a new truth and new noise, fitted by
``hierarchy.fit`` with its defaults (the integer posterior, hierarchical prior); one compiled program serves
every fit. The interval of a tract total is the central 90% interval of its integer draws, inclusive, so its own
posterior mass ``p*`` is 0.90 or more (more where a count takes few values). A calibrated posterior covers the
truth at about the intervals' mean mass: the check is that the pooled coverage lies within
``z * se`` of it, with ``z = 3.89`` (two-sided 1e-4) and ``se`` the larger of the binomial
``sqrt(p* (1 - p*) / n)`` and the standard error with the replications as clusters (a file's intervals are
correlated). The same check must reject the posterior of a likelihood whose noise variance is taken 4x too
small (the same sampler on the same measurements, told the noise is half as wide). GLS's normal intervals on
the same files must cover within the binomial band of 0.90: a check of the harness (truth, tracts and
intervals lined up), independent of the sampler.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from noiseaware import hierarchy, results

#: Files (replications) of the tiny sparse tree.
REPS = 20
SHAPE = (1, 3, 4)
MEAN_POPULATION = 2.0
#: The fit's settings (one compiled program: the same tree shape and settings in every fit).
RUN = {"chains": 2, "draws": 1000, "warmup": 500, "sweeps": 2, "check_mixing": False}
PROB = 0.9
#: The normal quantile of a two-sided 1e-4 test.
Z = 3.89


def _interval(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Central ``PROB`` interval of integer draws (draws first), inclusive, and its posterior mass."""
    lo = np.quantile(x, (1 - PROB) / 2, axis=0, method="lower")
    hi = np.quantile(x, (1 + PROB) / 2, axis=0, method="higher")
    return lo, hi, ((x >= lo) & (x <= hi)).mean(axis=0)


@pytest.fixture(scope="module")
def study() -> dict[str, Any]:
    """Per replication and method: the tract totals' coverage indicators, and our intervals' posterior mass."""
    out: dict[str, Any] = {"ours": [], "ours_mass": [], "wrong": [], "wrong_mass": [], "gls": [], "compiled": []}
    for rep in range(REPS):
        sim = hierarchy.synthetic_nmf(*SHAPE, mean_population=MEAN_POPULATION, rng=np.random.default_rng([8, rep]))
        truth = sim.truth.sum(axis=1)
        wrong = dataclasses.replace(sim.release, variance=sim.release.variance / 4.0)
        for name, rel in (("ours", sim.release), ("wrong", wrong)):
            res = hierarchy.fit(rel, seed=rep, **RUN)
            out["compiled"].append(int(res.attrs["noiseaware_programs_compiled"]))
            lo, hi, mass = _interval(results.draws(res, "counts").sum(axis=2))
            out[name].append((truth >= lo) & (truth <= hi))
            out[f"{name}_mass"].append(mass)
        glo, ghi = hierarchy.gls(sim.release).interval(PROB)
        out["gls"].append((truth >= glo[:, 0]) & (truth <= ghi[:, 0]))
    return out


def pooled(per_rep: list[np.ndarray]) -> tuple[float, float, int]:
    """Pooled mean over replications, its standard error with the replications as clusters, and the count."""
    n = np.array([x.size for x in per_rep], dtype=np.float64)
    s = np.array([np.sum(x) for x in per_rep], dtype=np.float64)
    total = n.sum()
    mean = s.sum() / total
    R = len(per_rep)
    se = np.sqrt(R / (R - 1) * np.sum((s - mean * n) ** 2)) / total
    return float(mean), float(se), int(total)


def calibration_gap(covered: list[np.ndarray], mass: list[np.ndarray]) -> tuple[float, float]:
    """``(coverage - target, allowed)``: the target is the intervals' mean posterior mass, allowed ``Z * se``."""
    cov, se_rep, n = pooled(covered)
    target = pooled(mass)[0]
    se = max(np.sqrt(target * (1 - target) / n), se_rep)
    return cov - target, Z * se


@pytest.mark.slow  # 40 fits of the integer posterior and one compilation: about 80 s at load 3 on 2 cores
def test_default_fit_covers_tract_totals_at_its_intervals_mass(study: dict[str, Any]) -> None:
    assert pooled(study["ours_mass"])[0] >= PROB  # inclusive intervals of the draws hold at least 90% of them
    gap, allowed = calibration_gap(study["ours"], study["ours_mass"])
    assert abs(gap) <= allowed, f"coverage off its intervals' mass by {gap:+.3f} (allowed {allowed:.3f})"


@pytest.mark.slow
def test_the_check_rejects_a_noise_variance_4x_too_small(study: dict[str, Any]) -> None:
    gap, allowed = calibration_gap(study["wrong"], study["wrong_mass"])
    assert gap < -allowed, f"a posterior with the noise variance 4x too small passed: gap {gap:+.3f}, {allowed:.3f}"


@pytest.mark.slow
def test_gls_covers_within_the_binomial_band(study: dict[str, Any]) -> None:
    cov, _, n = pooled(study["gls"])
    assert abs(cov - PROB) <= Z * np.sqrt(PROB * (1 - PROB) / n), f"GLS covered {cov:.3f} of {n} tract totals"


@pytest.mark.slow
def test_one_compiled_program_serves_every_file(study: dict[str, Any]) -> None:
    # the first fit compiles (unless an earlier test of this process fitted the same shape); none after it does
    assert sum(study["compiled"][1:]) == 0
