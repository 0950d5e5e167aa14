"""Every PyMC law of the registry through PyTensor's C linker.

``tests/distributions`` evaluates the laws with PyTensor's Python linker (its ``conftest.py``):
their many small graphs would each compile C code. Users run the C implementations, so the first
case of each law is evaluated here with the default (C) linker, against the registry's independent
reference, and its gradient against the Python linker's.
"""

from __future__ import annotations

import numpy as np
import pytensor
import pytest
from pytensor.compile.mode import get_default_mode

from tests.distributions import backends
from tests.distributions.cases import CASES
from tests.distributions.test_generic import values_for

#: the first case of each law in the registry
FIRST = list({c.name: c for c in reversed(CASES)}.values())

# PyTensor finds no C++ compiler on such a machine and then has no C linker at all: every graph, the
# users' included, runs the Python implementations that the rest of the suite checks.
pytestmark = pytest.mark.skipif(
    not pytensor.config.cxx, reason="PyTensor found no C++ compiler (config.cxx is empty), so it has no C linker"
)


def _assert_c_thunks() -> None:
    """The default mode compiles C thunks (not the Python linker of ``tests/distributions``)."""
    linker = get_default_mode().linker
    assert getattr(linker, "c_thunks", False), linker


@pytest.mark.parametrize("case", FIRST, ids=[c.name for c in FIRST])
def test_pymc_law_through_the_c_linker(case) -> None:
    _assert_c_thunks()
    pymc = backends.get("pymc")
    x = values_for(pymc, case)
    lp = np.ravel(pymc.logp(case, case.params, x))
    want = np.ravel(case.reference(case.params, x))
    np.testing.assert_array_equal(np.isneginf(lp), np.isneginf(want))
    fin = np.isfinite(want)
    assert fin.sum() >= 3 and np.max(np.abs(lp[fin] - want[fin])) <= case.tol
    if case.grad_params:
        got = pymc.grads(case, case.params, case.grad_params, x)
        # the same gradient as the Python linker (the registry checks that one by finite differences)
        with pytensor.config.change_flags(linker="py"):
            ref = pymc.grads(case, case.params, case.grad_params, x)
        for p in case.grad_params:
            np.testing.assert_allclose(got[p], ref[p], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("noise", [{"alpha": 0.6}, {"sigma": 1.5}], ids=["geometric", "discrete_gaussian"])
def test_noisy_through_the_c_linker(noise) -> None:
    """``Noisy`` (scalar and multinomial bases, outside the registry's cases): the C linker agrees with the
    Python linker, which ``tests/distributions/test_noisy.py`` checks against brute-force sums."""
    import pymc as pm

    import noiseaware.pymc as nap

    _assert_c_thunks()

    y = np.array([-3, 0, 2, 5, 11])
    ym = np.array([[1, 2, 3], [-4, 9, 1], [12, -6, 2]])

    def both() -> list[np.ndarray]:
        scalar = pm.logp(nap.Noisy.dist(pm.Poisson.dist(np.float64(3.7)), **noise), y)
        multi = pm.logp(nap.Noisy.dist(pm.Multinomial.dist(6, np.array([0.2, 0.3, 0.5])), **noise), ym)
        return [np.asarray(v) for v in pytensor.function([], [scalar, multi])()]

    got = both()
    with pytensor.config.change_flags(linker="py"):
        ref = both()
    for g, r in zip(got, ref, strict=True):
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
