"""Test-session setup: the documented process-wide configuration, applied once, as a user's script does.

``import noiseaware`` changes nothing process-wide; the tests (and the doctests of the NumPyro
front end, whose distributions need float64) run as a script that called
``noiseaware.config.configure()`` first. ``tests/test_import_side_effects.py`` checks, in fresh
interpreters, that nothing is changed without it and that the fits scope float64 themselves.

PyTensor compiles the C code of the tests' graphs with ``-O0 -g0`` (``gcc__cxxflags``), unless the caller
set ``gcc__cxxflags`` in ``PYTENSOR_FLAGS``: on a fresh machine (empty compile cache) compiling that
C code is much of the fast suite's time, and ``g++ -O0 -g0`` compiles it about twice as fast as
PyTensor's default ``-O3``. The graphs, their rewrites (the numerical-stability rewrites included) and
the IEEE arithmetic are the same; only the compiler's optimization of the loops differs. Set before
PyTensor is imported (it reads ``PYTENSOR_FLAGS`` once, on import).
"""

import os

_flags = os.environ.get("PYTENSOR_FLAGS", "")
if "gcc__cxxflags" not in _flags:
    os.environ["PYTENSOR_FLAGS"] = ",".join(f for f in (_flags, "gcc__cxxflags=-O0 -g0") if f)

import noiseaware.config  # noqa: E402

noiseaware.config.configure()


#: The contributor tier's time guard (tests/tier_guard.py): a `make test` test over its time budget fails the run.
pytest_plugins = ["tests.tier_guard"]
