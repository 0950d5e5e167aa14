"""The registry's PyMC evaluations run through PyTensor's Python linker (``linker="py"``).

These modules compile a new small graph for almost every case (about 180 C modules on an empty
PyTensor cache, most of the suite's C compilation outside ``pm.sample``); the Python implementations
of the same graphs need no compiler. Measured alternately in one run on an empty PyTensor cache
(2-core machine): ``tests/distributions`` took 1:29 and 1:32 with the C linker, 0:47 and 0:49 with
this one. It also runs the laws under PyTensor's other linker (it found
:class:`~noiseaware._core._pytensor_ops.JaxMeanCov` handing PyTensor a read-only array).
``tests/test_pytensor_c_linker.py`` runs each PyMC law of the registry's cases, and ``Noisy``,
through the C linker and through the default backend where that is another one (Numba, from PyTensor 3),
which the rest of the suite uses. The slow tests here (PyMC's own NUTS) keep the default backend.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _python_linker(request: pytest.FixtureRequest) -> Iterator[None]:
    """The Python linker for each fast test; the slow ones keep the default backend (C under PyTensor 2.x,
    Numba from PyTensor 3): they run PyMC's own NUTS, whose thousands of log-density calls are far slower
    through Python thunks."""
    if request.node.get_closest_marker("slow") is not None:
        yield
        return
    import pytensor

    with pytensor.config.change_flags(linker="py"):
        yield
