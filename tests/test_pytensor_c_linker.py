"""Every PyMC law of the registry through PyTensor's compiled backends: C, and the default where it is another.

``tests/distributions`` evaluates the laws with PyTensor's Python linker (its ``conftest.py``):
their many small graphs would each compile C code. Users run compiled implementations: the C
linker (the default mode of PyTensor 2.x) and, from PyTensor 3, the Numba linker (its default
mode). So the first case of each law is evaluated here through the C linker, and through the
default backend where that is another one, against the registry's independent reference, and its
gradient against the Python linker's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import numpy as np
import pytensor
import pytest
from pytensor.compile.mode import get_default_mode

from tests.distributions import backends
from tests.distributions.cases import CASES
from tests.distributions.test_generic import values_for

#: make test-full: each PyMC law compiled by PyTensor's C linker and default backend (40 s);
#: tests/distributions checks every law's exactness in the fast tier
pytestmark = pytest.mark.slow

#: the first case of each law in the registry
FIRST = list({c.name: c for c in reversed(CASES)}.values())

# PyTensor finds no C++ compiler on such a machine and then has no C linker at all: every graph, the
# users' included, runs the Python implementations that the rest of the suite checks (or Numba's).
_NO_CXX = pytest.mark.skipif(
    not pytensor.config.cxx, reason="PyTensor found no C++ compiler (config.cxx is empty), so it has no C linker"
)
#: ``"c"``: the C linker (``linker="cvm"``); ``"default"``: the default mode, where its linker is not C
#: (PyTensor >= 3: Numba). Under PyTensor 2.x the default is the C linker, tested once.
BACKENDS = [pytest.param("c", marks=_NO_CXX)]
if not getattr(get_default_mode().linker, "c_thunks", False):
    BACKENDS.append(pytest.param("default"))


@contextmanager
def _compiled(backend: str) -> Iterator[None]:
    """Inside: the backend's configuration, checked to compile (C thunks, or Numba)."""
    with pytensor.config.change_flags(linker="cvm") if backend == "c" else nullcontext():
        linker = get_default_mode().linker
        if backend == "c":
            assert getattr(linker, "c_thunks", False), linker
        else:
            assert type(linker).__name__ == "NumbaLinker", linker
        yield


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", FIRST, ids=[c.name for c in FIRST])
def test_pymc_law_through_a_compiled_backend(case, backend: str) -> None:
    pymc = backends.get("pymc")
    x = values_for(pymc, case)
    with _compiled(backend):
        lp = np.ravel(pymc.logp(case, case.params, x))
        got = pymc.grads(case, case.params, case.grad_params, x) if case.grad_params else {}
    want = np.ravel(case.reference(case.params, x))
    np.testing.assert_array_equal(np.isneginf(lp), np.isneginf(want))
    fin = np.isfinite(want)
    assert fin.sum() >= 3 and np.max(np.abs(lp[fin] - want[fin])) <= case.tol
    if case.grad_params:
        # the same gradient as the Python linker (the registry checks that one by finite differences)
        with pytensor.config.change_flags(linker="py"):
            ref = pymc.grads(case, case.params, case.grad_params, x)
        for p in case.grad_params:
            np.testing.assert_allclose(got[p], ref[p], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("noise", [{"alpha": 0.6}, {"sigma": 1.5}], ids=["geometric", "discrete_gaussian"])
def test_noisy_through_a_compiled_backend(noise, backend: str) -> None:
    """``Noisy`` (scalar and multinomial bases, outside the registry's cases): a compiled backend agrees with
    the Python linker, which ``tests/distributions/test_noisy.py`` checks against brute-force sums."""
    import pymc as pm

    import noiseaware.pymc as nap

    y = np.array([-3, 0, 2, 5, 11])
    ym = np.array([[1, 2, 3], [-4, 9, 1], [12, -6, 2]])

    def both() -> list[np.ndarray]:
        scalar = pm.logp(nap.Noisy.dist(pm.Poisson.dist(np.float64(3.7)), **noise), y)
        multi = pm.logp(nap.Noisy.dist(pm.Multinomial.dist(6, np.array([0.2, 0.3, 0.5])), **noise), ym)
        return [np.asarray(v) for v in pytensor.function([], [scalar, multi])()]

    with _compiled(backend):
        got = both()
    with pytensor.config.change_flags(linker="py"):
        ref = both()
    for g, r in zip(got, ref, strict=True):
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
