"""Regression releases of ranges ``(lower, upper)``: the sensitivity, brute-forced over neighbouring data sets.

A release of ranges shifts each column by its public mid-point ``m`` and scales it by the half-width ``h``
(``noiseaware._privatize._regression``), then releases the unique entries of ``W^T W``, ``W = [1, (z - m) / h]``,
with the sensitivity of the symmetric rule (``k`` in L2, ``k**2 - 1`` in L1 with an intercept). Here every
substitution of one record by another, each on a grid that spans the public ranges, is enumerated; the change of
the released entries is computed from the shift and half-widths *the release records* (an independent reference:
plain NumPy, not the package's design code), and must stay within the release's sensitivity. The same enumeration
without the shift (a curator that scaled by the half-width but forgot to centre) exceeds it, so the check would
catch that bug; and with negligible noise the released values equal the reference entries of the data, so the
check is about the transform the release really applies.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import noiseaware as na

RANGES = {
    2: [(18.0, 90.0), (-5.0, 20.0)],
    3: [(18.0, 90.0), (0.0, 10.0), (-5.0, 20.0)],
}


def _entries(w: np.ndarray) -> np.ndarray:
    """Unique entries ``j >= l`` of ``w w^T`` for one row ``w`` (intercept first), without the public ``(0, 0)``."""
    m = np.outer(w, w)
    k = len(w)
    return np.array([m[j, i] for j in range(k) for i in range(j + 1) if (j, i) != (0, 0)])


def _release(x: np.ndarray, ranges: list[tuple[float, float]], **kw) -> na.Release:
    cols = [f"z{j}" for j in range(x.shape[1])]
    return na.privatize(
        x, statistic="regression", response=cols[-1], columns=cols, bounds=ranges, rng=np.random.default_rng(0), **kw
    )


def _worst_changes(rows: np.ndarray, shift: np.ndarray, half: np.ndarray) -> tuple[float, float]:
    """Largest L2 and L1 change of the released entries over every substitution of one grid row by another."""
    w = np.hstack([np.ones((len(rows), 1)), (rows - shift) / half])
    ent = np.array([_entries(r) for r in w])
    diff = ent[:, None, :] - ent[None, :, :]
    return float(np.sqrt((diff**2).sum(-1)).max()), float(np.abs(diff).sum(-1).max())


@pytest.mark.parametrize("p", [2, 3])
def test_range_release_sensitivity_exhaustive_over_substitutions(p: int) -> None:
    ranges = RANGES[p]
    lo, hi = np.array(ranges).T
    x = np.random.default_rng(p).uniform(lo, hi, size=(40, p))
    gauss, lap = _release(x, ranges, rho=1.0), _release(x, ranges, epsilon=1.0)
    k = p + 1
    assert gauss.mechanism.sensitivity == k and lap.mechanism.sensitivity == k * k - 1
    # the public transform, as the release records it (intercept first: h = 1, m = 0)
    half = np.asarray(gauss.metadata["bounds"], dtype=float)[1:]
    shift = np.asarray(gauss.metadata["shift"], dtype=float)[1:]
    np.testing.assert_allclose(shift, (lo + hi) / 2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(half, (hi - lo) / 2, rtol=0, atol=1e-12)
    grid = np.array(list(itertools.product(*[np.linspace(a, b, 5) for a, b in ranges])))  # every record a neighbour
    l2, l1 = _worst_changes(grid, shift, half)
    assert l2 <= gauss.mechanism.sensitivity * (1 + 1e-12)
    if k % 2 == 0:
        assert l2 == pytest.approx(k, rel=1e-12)  # reached at the corners of the ranges: the bound is tight
    else:
        assert l2 == pytest.approx(np.sqrt(k * k - 1), rel=1e-12)
    assert l1 <= lap.mechanism.sensitivity * (1 + 1e-12)
    # the check catches a curator that forgets the shift: the entries of z / h then move by far more than k
    l2_unshifted, _ = _worst_changes(grid, np.zeros(p), half)
    assert l2_unshifted > 1.5 * gauss.mechanism.sensitivity
    # random interior substitutions stay within the L2 bound too
    g = np.random.default_rng(11 * p)
    u, v = g.uniform(lo, hi, size=(2, 3000, p))
    wu, wv = (np.hstack([np.ones((3000, 1)), (a - shift) / half]) for a in (u, v))
    du = np.array([_entries(a) for a in wu]) - np.array([_entries(b) for b in wv])
    assert float(np.sqrt((du**2).sum(-1)).max()) <= k


def test_the_released_values_are_the_entries_of_the_shifted_scaled_data() -> None:
    """With negligible noise the release equals the reference entries: the transform above is the one applied."""
    ranges = RANGES[3]
    lo, hi = np.array(ranges).T
    x = np.random.default_rng(5).uniform(lo, hi, size=(200, 3))
    with pytest.warns(na.exceptions.PrivacyWarning, match="little protection"):
        rel = _release(x, ranges, rho=1e16)
    half = np.asarray(rel.metadata["bounds"], dtype=float)[1:]
    shift = np.asarray(rel.metadata["shift"], dtype=float)[1:]
    w = np.hstack([np.ones((len(x), 1)), (x - shift) / half])
    ref = sum(_entries(r) for r in w)
    got = np.asarray(rel.values, dtype=float).ravel()
    assert got.shape == ref.shape, (got.shape, ref.shape, rel.metadata["entry_order"])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-5)
    unshifted = sum(_entries(r) for r in np.hstack([np.ones((len(x), 1)), x / half]))
    assert np.max(np.abs(got - unshifted)) > 1.0  # the reference tells a shifted release from an unshifted one
