"""Importing noiseaware changes nothing process-wide; fits scope float64 to themselves.

Each check runs in a fresh interpreter (this session itself ran ``configure()`` in conftest.py).
The dependencies are imported first, so that what JAX, PyMC or OpenDP set on their own import is
not counted against noiseaware.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

_SNAPSHOT = textwrap.dedent(
    """
    import json, os, sys
    import jax, numpyro, pymc, pytensor, arviz, opendp.prelude
    pytensor.config.blas__ldflags  # PyTensor's own lazy set-up (it adds its library path to PATH)
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
    code = _SNAPSHOT + textwrap.dedent(body)
    cmd = [sys.executable, "-c", code]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_the_package_and_its_front_ends_changes_nothing() -> None:
    res = _run(
        """
        before = state()
        import noiseaware, noiseaware.numpyro, noiseaware.pymc, noiseaware.augment
        import noiseaware.copula, noiseaware.dirichlet, noiseaware.covariance, noiseaware.distributed
        import noiseaware.mechanisms, noiseaware.config
        noiseaware.TwoSidedGeometric  # the lazy PyMC names
        after = state()
        print(json.dumps({"before": before, "after": after}))
        """
    )
    assert res["after"] == res["before"]
    assert res["after"]["x64"] is False and "XLA_FLAGS" not in res["after"]["environ"]


def test_a_secure_release_leaves_opendp_features_as_they_were() -> None:
    res = _run(
        """
        import numpy as np, noiseaware as na
        before = state()
        rel = na.privatize(np.random.default_rng(0).normal(size=(200, 3)), statistic="median_pairs", epsilon=1.0)
        print(json.dumps({"before": before["features"], "after": state()["features"], "secure": rel.secure}))
        """
    )
    assert res["secure"] is True
    assert res["after"] == res["before"] == []


@pytest.mark.parametrize("user_x64", [False, True])
def test_a_fit_runs_in_float64_and_leaves_the_setting_as_it_was(user_x64: bool) -> None:
    res = _run(
        f"""
        import numpy as np, noiseaware as na
        from noiseaware import copula
        jax.config.update("jax_enable_x64", {user_x64})
        rel = na.privatize(np.random.default_rng(0).normal(size=(300, 3)), statistic="median_pairs", epsilon=1.0,
                           rng=np.random.default_rng(1))
        fit = copula.fit(rel, chains=1, draws=30, warmup=30, seed=0, check_mixing=False)
        print(json.dumps({{"x64": state()["x64"], "dtype": str(fit.posterior["R"].dtype),
                          "ll": str(fit.log_likelihood["pairs"].dtype)}}))
        """
    )
    assert res["x64"] is user_x64
    assert res["dtype"] == res["ll"] == "float64"


def test_distributions_in_a_users_model_refuse_float32_naming_the_setting() -> None:
    res = _run(
        """
        import noiseaware.numpyro as nan
        try:
            nan.TwoSidedGeometric(0.0, 0.5).log_prob(1)
            msg = ""
        except Exception as exc:
            msg = f"{type(exc).__name__}: {exc}"
        import noiseaware
        noiseaware.config.configure(host_devices=None, cache=False)
        value = float(nan.TwoSidedGeometric(0.0, 0.5).log_prob(1))
        print(json.dumps({"msg": msg, "value": value}))
        """
    )
    assert res["msg"].startswith("NoiseawareValueError") and "jax_enable_x64" in res["msg"]
    assert res["msg"].count("configure()") == 1
    import math

    assert res["value"] == pytest.approx(math.log((1 - 0.5) / (1 + 0.5) * 0.5), rel=1e-12)


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
