"""Three backends with one interface: the NumPy core, NumPyro and PyMC.

Each adapter turns a case's keyword parameters into that backend's object and exposes
``logp``, ``cdf``, ``sample`` and ``grads`` (``None`` where a backend has no autodiff).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from noiseaware import _core
from noiseaware._core._specs import SPECS

NB = _core.get_backend("numpy")

#: For a test that draws a PyMC law of the package under PyTensor's default backend. PyTensor 3's default
#: (Numba) runs a ``RandomVariable`` whose ``rng_fn`` is Python -- the package's NumPy samplers, PyMC's own
#: ``pm.CustomDist(random=...)`` or ``pm.Rice`` -- in object mode, one call per node, and says so
#: (``UserWarning: Numba will use object mode to run <name>_rv{...}'s perform method``); PyTensor 2.x's C
#: backend runs the same ``rng_fn`` without a word. Only that notice, for random variables, is let through.
NUMBA_PYTHON_RV = pytest.mark.filterwarnings(r"ignore:Numba will use object mode to run \w+_rv\{:UserWarning")


class NumpyCore:
    """The specs of :mod:`noiseaware._core._specs` evaluated in NumPy: ``prepare`` then ``logp`` / ``draw``.

    The same log-prob assembly and uniform transforms as the front ends, without any PPL.
    """

    name = "numpy"
    #: whether non-integer values reach the log-pmf (PyMC casts values to the RV's int64 type)
    non_integer_values = True

    def logp(self, case, params, x):
        spec = SPECS[case.name]
        return np.asarray(spec.logp(NB, np.asarray(x, dtype=np.float64), **spec.prepare(**params)))

    def cdf(self, case, params, x):
        spec = SPECS[case.name]
        return np.exp(spec.logcdf(NB, np.asarray(x, dtype=np.float64), **spec.prepare(**params)))

    def sample(self, case, params, n, seed):
        """Draws through the spec's uniform transforms (the same code the front ends use)."""
        spec = SPECS[case.name]
        prepared = spec.prepare(**params)
        event = tuple(np.shape(prepared.get("r", ())))[-case.event_dim :] if case.event_dim else ()
        return spec.draw(NB, np.random.default_rng(seed).random, (n, *event), **prepared)

    grads = None


class NumPyro:
    name = "numpyro"
    non_integer_values = True

    def __init__(self):
        import jax

        import noiseaware.numpyro as nan

        self.jax, self.mod = jax, nan

    def dist(self, case, params, **kw):
        """Without ``validate_args`` unless asked (its out-of-support warning is tested separately)."""
        kw.setdefault("validate_args", False)
        return getattr(self.mod, case.name)(**params, **kw)

    def logp(self, case, params, x):
        return np.asarray(self.dist(case, params).log_prob(np.asarray(x, dtype=np.float64)))

    def jit_logp(self, case, params, x):
        return np.asarray(self.jax.jit(lambda v: self.dist(case, params).log_prob(v))(np.asarray(x, dtype=np.float64)))

    def cdf(self, case, params, x):
        return np.asarray(self.dist(case, params).cdf(np.asarray(x, dtype=np.float64)))

    def sample(self, case, params, n, seed):
        return np.asarray(self.dist(case, params).sample(self.jax.random.PRNGKey(seed), (n,)))

    def grads(self, case, params, pnames, x):
        """The gradient of the summed log-prob in each parameter of ``pnames`` (one traced function)."""
        xv = np.asarray(x, dtype=np.float64)

        def f(thetas):
            return self.dist(case, {**params, **dict(zip(pnames, thetas, strict=True))}).log_prob(xv).sum()

        got = self.jax.grad(f)(tuple(float(params[p]) for p in pnames))
        return {p: float(g) for p, g in zip(pnames, got, strict=True)}


class PyMC:
    name = "pymc"
    non_integer_values = False

    def __init__(self):
        import pymc as pm
        import pytensor
        import pytensor.tensor as pt

        import noiseaware.pymc as nap

        self.pm, self.pt, self.pytensor, self.mod = pm, pt, pytensor, nap

    def dist(self, case, params):
        return getattr(self.mod, case.name).dist(**params)

    def logp(self, case, params, x):
        x = np.asarray(x, dtype=np.float64)
        return np.asarray(self.pm.logp(self.dist(case, params), x).eval())

    def cdf(self, case, params, x):
        return np.exp(np.asarray(self.pm.logcdf(self.dist(case, params), np.asarray(x, dtype=np.float64)).eval()))

    def sample(self, case, params, n, seed):
        """One draw of size (n, *batch) (``pm.draw(draws=n)`` would call the function n times)."""
        d = self.dist(case, params)
        batch = tuple(int(s) for s in d.shape.eval())[: d.ndim - case.event_dim]
        sized = getattr(self.mod, case.name).dist(**params, size=(n, *batch))
        return np.asarray(self.pm.draw(sized, random_seed=seed))

    def grads(self, case, params, pnames, x):
        """The gradient in each parameter of ``pnames`` from one compiled function (default mode).

        One function for all the parameters, not one per parameter: its C code is compiled once.
        """
        thetas = [self.pt.dscalar(p) for p in pnames]
        rv = self.dist(case, {**params, **dict(zip(pnames, thetas, strict=True))})
        lp = self.pm.logp(rv, np.asarray(x, dtype=np.float64)).sum()
        f = self.pytensor.function(thetas, self.pt.grad(lp, thetas))
        got = f(*(float(params[p]) for p in pnames))
        return {p: float(g) for p, g in zip(pnames, got, strict=True)}


@cache
def get(name: str):
    return {"numpy": NumpyCore, "numpyro": NumPyro, "pymc": PyMC}[name]()


BACKENDS = ("numpy", "numpyro", "pymc")
