"""What another package or a forked process does to ours: ArviZ 1's lazy NumPyro stub, JAX after a fork.

Each check runs in a fresh interpreter (the state it tests is process-wide).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _run(code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.mark.parametrize("entry", ["import noiseaware.numpyro", "from noiseaware import dirichlet, augment, copula"])
def test_numpyro_is_whole_after_arviz_registered_it_lazily(entry: str) -> None:
    """ArviZ 1 registers ``numpyro`` as a lazy module; our first import loads it before any submodule.

    Without that, ``numpyro.distributions`` loses its ``distribution`` attribute and every NumPyro model
    that calls ``numpyro.factor`` (``dirichlet.fit``) fails with an AttributeError.
    """
    out = _run(
        f"""
        import arviz
        {entry}
        import numpyro.distributions as d
        from numpyro import primitives
        print(hasattr(d, "distribution"))
        """
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "True"


#: A fresh interpreter builds a JAX-evaluated PyTensor node, evaluates it in the parent when ``{warm}`` (JAX starts
#: its backends), forks, and evaluates it in the child: exit 0 when it ran, 7 when it raised the fork message.
_FORK_PROBE = """
import os, sys, types
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
mod = types.ModuleType("fork_probe")
exec("def mean_cov(bk, x, c):\\n    return x * c, x[:, None] * x[None, :]", mod.__dict__)
sys.modules["fork_probe"] = mod
import pytensor, pytensor.tensor as pt
from noiseaware._core._pytensor_ops import jax_mean_cov
x = pt.dvector("x")
mean, cov = jax_mean_cov(mod.mean_cov, x, 2.0, ())
f = pytensor.function([x], mean.sum() + cov.sum(), mode="FAST_COMPILE")
if {warm}:
    assert f(np.ones(3)) == 15.0
pid = os.fork()
if pid == 0:
    try:
        os._exit(0 if f(np.ones(3)) == 15.0 else 4)
    except Exception as exc:
        os._exit(7 if "cannot run in a process forked after JAX started" in str(exc) else 5)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
"""


@pytest.mark.parametrize(("warm", "child"), [(True, "child 7"), (False, "child 0")])
def test_a_jax_node_in_a_forked_process(warm: bool, child: str) -> None:
    """Forked after JAX started (PyMC's multiprocess sampling evaluates the model first): the node raises, with the
    remedy, instead of hanging. Forked before: JAX starts in the child and the node runs."""
    out = _run(_FORK_PROBE.format(warm=warm), timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == child, out.stdout
