"""The PyMC laws through PyTensor's C linker, which the rest of the suite leaves off (``conftest.py``).

The fast suite runs PyTensor's Python implementations of the operations (``cxx=``): on a fresh
machine compiling C code for every new graph was much of its time. Users run the C
implementations, so one law per registry family is evaluated here, in a subprocess with the C
compiler on, against the registry's independent reference (log-probabilities) and against the
Python linker's gradient in this process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.distributions import backends
from tests.distributions.cases import CASES
from tests.distributions.test_generic import values_for

ROOT = Path(__file__).resolve().parents[1]

#: the first case of each law in the registry
FIRST = list({c.name: c for c in reversed(CASES)}.values())

_CHILD = r"""
import json, sys
import noiseaware.config
noiseaware.config.configure()
import numpy as np
import pytensor
from tests.distributions import backends
from tests.distributions.cases import CASES

values = json.loads(sys.argv[1])
pymc = backends.get("pymc")
out = {"cxx": pytensor.config.cxx, "linker": pytensor.config.linker, "cases": {}}
for case in CASES:
    if case.id in values:
        x = np.asarray(values[case.id], dtype=np.float64)
        lp = pymc.logp(case, case.params, x)
        grads = pymc.grads(case, case.params, case.grad_params, x) if case.grad_params else {}
        out["cases"][case.id] = {"logp": [repr(float(v)) for v in np.ravel(lp)], "grads": grads}
print("RESULT " + json.dumps(out))
"""


def _c_flags() -> str:
    """This process's ``PYTENSOR_FLAGS`` without ``cxx=`` (the C compiler on, at ``-O0`` for speed)."""
    flags = [f for f in os.environ.get("PYTENSOR_FLAGS", "").split(",") if f and not re.match(r"\s*cxx\s*=", f)]
    if not any(f.strip().startswith("gcc__cxxflags") for f in flags):
        flags.append("gcc__cxxflags=-O0 -g0")
    return ",".join(flags)


@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler: PyTensor runs its Python implementations")
def test_pymc_laws_agree_through_the_c_linker() -> None:
    env = {**os.environ, "PYTENSOR_FLAGS": _c_flags(), "PYTHONPATH": str(ROOT)}
    pymc = backends.get("pymc")
    xs = {c.id: values_for(pymc, c) for c in FIRST}
    arg = json.dumps({k: x.tolist() for k, x in xs.items()})
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, arg], env=env, cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    got = json.loads(line[len("RESULT ") :])
    assert got["cxx"], "the child ran without a C compiler"
    assert got["linker"] != "py"
    assert {c.name for c in FIRST} == {c.name for c in CASES}
    for case in FIRST:
        res, x = got["cases"][case.id], xs[case.id]
        lp = np.array([float(v) for v in res["logp"]])
        want = np.ravel(case.reference(case.params, x))
        np.testing.assert_array_equal(np.isneginf(lp), np.isneginf(want))
        fin = np.isfinite(want)
        assert fin.sum() >= 3 and np.max(np.abs(lp[fin] - want[fin])) <= case.tol, case.id
        if case.grad_params:
            # the same gradient as the Python linker in this process (the registry checks it by finite differences)
            here = pymc.grads(case, case.params, case.grad_params, x)
            for p in case.grad_params:
                np.testing.assert_allclose(res["grads"][p], here[p], rtol=1e-9, atol=1e-12)
