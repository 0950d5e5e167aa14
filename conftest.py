"""Test-session setup: the documented process-wide configuration, applied once, as a user's script does.

``import noiseaware`` changes nothing process-wide; the tests (and the doctests of the NumPyro
front end, whose distributions need float64) run as a script that called
``noiseaware.config.configure()`` first. ``tests/test_import_side_effects.py`` checks, in fresh
interpreters, that nothing is changed without it and that the fits scope float64 themselves.

PyTensor runs the tests' graphs with its Python implementations of the operations (``cxx=``, no C
compiler), unless the caller set ``cxx`` in ``PYTENSOR_FLAGS``. On a fresh machine (an empty PyTensor
compile cache) compiling C code for each new graph was much of the fast suite's time: 331 C modules
for one run of the suite, and ``tests/distributions`` took 2:05 with an empty cache against 1:05 with
a warm one and 1:05 with ``cxx=`` (2-core machine). The graphs, their rewrites (the
numerical-stability rewrites included) and the float64 arithmetic are the same; the C implementations
are PyTensor's own, checked against the Python ones by PyTensor's tests, and
``tests/test_pytensor_c_linker.py`` evaluates the PyMC laws once through the C linker. Set before
PyTensor is imported (it reads ``PYTENSOR_FLAGS`` once, on import), in the environment, so that the
tests' subprocesses (examples, ``noiseaware demo``) run the same way.
"""

import os
import re

_flags = os.environ.get("PYTENSOR_FLAGS", "")
if not re.search(r"(^|,)\s*cxx\s*=", _flags):
    os.environ["PYTENSOR_FLAGS"] = ",".join(f for f in (_flags, "cxx=") if f)

import noiseaware.config  # noqa: E402

noiseaware.config.configure()
