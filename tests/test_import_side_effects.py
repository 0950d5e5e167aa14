"""Importing noiseaware changes nothing process-wide; fits scope float64 to themselves.

Each check runs in a fresh interpreter (this session itself ran ``configure()`` in conftest.py).
The dependencies are imported first, so that what JAX, PyMC or OpenDP set on their own import is
not counted against noiseaware.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import pytest

_SNAPSHOT = textwrap.dedent(
    """
    import json, os, sys
    import jax, numpyro, arviz, opendp.prelude
    from opendp.mod import GLOBAL_FEATURES

    def state():
        return {
            "environ": dict(os.environ),
            "x64": bool(jax.config.jax_enable_x64),
            "cache": jax.config.jax_compilation_cache_dir,
            "min_compile": jax.config.jax_persistent_cache_min_compile_time_secs,
            "features": sorted(GLOBAL_FEATURES),
        }
    """
)


def _run(body: str) -> dict:
    unset = ("XLA_FLAGS", "JAX_ENABLE_X64", "NOISEAWARE_JAX_CACHE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    cmd = [sys.executable, "-c", _SNAPSHOT + textwrap.dedent(body)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def unconfigured() -> dict:
    """One fresh interpreter: import everything, release, use a distribution, fit, then configure."""
    return _run(
        """
        import pymc, pytensor
        pytensor.config.blas__ldflags  # PyTensor's own lazy set-up (it adds its library path to PATH)
        before = state()
        import noiseaware, noiseaware.numpyro, noiseaware.pymc, noiseaware.augment
        import noiseaware.copula, noiseaware.dirichlet, noiseaware.covariance, noiseaware.distributed
        import noiseaware.mechanisms, noiseaware.config
        noiseaware.TwoSidedGeometric  # the lazy PyMC names
        after_import = state()

        import numpy as np
        rel = noiseaware.privatize(np.random.default_rng(0).normal(size=(200, 3)), statistic="median_pairs",
                                   epsilon=1.0)
        after_release = state()

        import noiseaware.numpyro as nan
        try:
            nan.TwoSidedGeometric(0.0, 0.5).log_prob(1)
            msg = ""
        except Exception as exc:
            msg = f"{type(exc).__name__}: {exc}"

        # a fit, still unconfigured: it scopes float64 to itself, whatever the user's setting
        from noiseaware import copula
        data = noiseaware.privatize(np.random.default_rng(0).normal(size=(300, 3)), statistic="median_pairs",
                                    epsilon=1.0, rng=np.random.default_rng(1))
        fits = {}
        for user_x64 in (False, True):
            jax.config.update("jax_enable_x64", user_x64)
            fit = copula.fit(data, chains=1, draws=30, warmup=30, seed=0, check_mixing=False)
            fits[str(user_x64)] = {"x64": state()["x64"], "dtype": str(fit.posterior["R"].dtype),
                                   "ll": str(fit.log_likelihood["pairs"].dtype)}
        jax.config.update("jax_enable_x64", False)

        done = noiseaware.config.configure(host_devices=None, cache=False)
        value = float(nan.TwoSidedGeometric(0.0, 0.5).log_prob(1))
        print(json.dumps({"before": before, "after_import": after_import, "after_release": after_release,
                          "secure": rel.secure, "msg": msg, "fits": fits, "done": done, "value": value}))
        """
    )


def test_importing_the_package_and_its_front_ends_changes_nothing(unconfigured: dict) -> None:
    assert unconfigured["after_import"] == unconfigured["before"]
    assert unconfigured["before"]["x64"] is False and "XLA_FLAGS" not in unconfigured["before"]["environ"]


def test_a_secure_release_leaves_opendp_features_as_they_were(unconfigured: dict) -> None:
    assert unconfigured["secure"] is True
    assert unconfigured["after_release"] == unconfigured["before"]
    assert unconfigured["after_release"]["features"] == []


def test_distributions_in_a_users_model_refuse_float32_naming_the_setting(unconfigured: dict) -> None:
    msg = unconfigured["msg"]
    assert msg.startswith("NoiseawareValueError") and "jax_enable_x64" in msg and msg.count("configure()") == 1
    assert unconfigured["done"] == {"host_devices": None, "x64": True, "cache": None}
    assert unconfigured["value"] == pytest.approx(math.log((1 - 0.5) / (1 + 0.5) * 0.5), rel=1e-12)


def test_a_fit_runs_in_float64_and_leaves_the_setting_as_it_was(unconfigured: dict) -> None:
    for user_x64 in (False, True):
        got = unconfigured["fits"][str(user_x64)]
        assert got["x64"] is user_x64
        assert got["dtype"] == got["ll"] == "float64"


def test_configure_sets_what_it_says() -> None:
    res = _run(
        """
        import noiseaware
        done = noiseaware.config.configure(host_devices=2, cache=False)
        after = state()
        print(json.dumps({"done": done, "flags": after["environ"].get("XLA_FLAGS", ""), "x64": after["x64"],
                          "devices": jax.local_device_count()}))
        """
    )
    assert res["done"] == {"host_devices": "set to 2", "x64": True, "cache": None}
    assert "--xla_force_host_platform_device_count=2" in res["flags"]
    assert res["x64"] is True and res["devices"] == 2
