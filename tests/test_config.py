"""noiseaware.config: the JAX persistent compilation cache across processes, its off switch, user settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from noiseaware import config
from noiseaware.exceptions import NoiseawareTypeError

CHILD = textwrap.dedent(
    """
    import json, logging, sys
    hits = []
    class H(logging.Handler):
        def emit(self, record):
            if "cache hit" in record.getMessage():
                hits.append(record.getMessage())
    log = logging.getLogger("jax._src.compiler")
    log.setLevel(logging.DEBUG)
    log.addHandler(H())
    import jax
    if len(sys.argv) > 1:
        jax.config.update("jax_compilation_cache_dir", sys.argv[1])  # the user's own choice, made first
    from noiseaware.config import configure
    configure(host_devices=None)
    import jax.numpy as jnp
    y = jax.jit(lambda x: jnp.sin(x).sum() * 2.0 + (x @ x.T).sum())(jnp.arange(12.0).reshape(3, 4))
    print(json.dumps({"dir": jax.config.jax_compilation_cache_dir, "x64": y.dtype == jnp.float64, "hits": len(hits)}))
    """
)


def _child(env_cache: str | None, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "NOISEAWARE_JAX"))}
    if env_cache is not None:
        env["NOISEAWARE_JAX_CACHE"] = env_cache
    out = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _files(d) -> set[str]:
    return {p.name for p in d.iterdir() if p.is_file()} if d.exists() else set()


def test_second_process_reuses_the_cache(tmp_path):
    cache = tmp_path / "jaxcache"
    first = _child(str(cache))
    assert first["dir"] == str(cache) and first["x64"] and first["hits"] == 0
    written = _files(cache)
    assert written, "the first process wrote no compiled program"
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    second = _child(str(cache))
    assert second["hits"] >= 1, "the second process compiled again instead of loading from the cache"
    assert _files(cache) == written  # nothing new to write


@pytest.mark.slow
def test_the_switch_turns_the_cache_off(tmp_path):
    cache = tmp_path / "jaxcache"
    _child(str(cache))
    written = _files(cache)
    off = _child("0")
    assert off["dir"] is None and off["hits"] == 0 and off["x64"]
    assert _files(cache) == written


def test_a_users_own_cache_dir_is_left_alone(tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    res = _child(str(ours), str(theirs))
    assert res["dir"] == str(theirs)
    assert not ours.exists()


def test_the_cache_is_off_unless_asked_for(monkeypatch):
    # JAX's own default: a crash in XLA's deserializer of cached programs loses the user's process (config docstring)
    monkeypatch.delenv(config.JAX_CACHE_ENV, raising=False)
    monkeypatch.setitem(config._STATE, "override", None)
    assert config.jax_cache_dir() is None
    monkeypatch.setenv(config.JAX_CACHE_ENV, "1")
    assert config.jax_cache_dir() == config.default_jax_cache_dir().absolute()


@pytest.mark.slow  # a fresh interpreter: configure() with nothing set leaves JAX's cache off
def test_a_fresh_process_runs_without_the_cache():
    default = _child(None)
    assert default["dir"] is None and default["hits"] == 0 and default["x64"]


def test_parse_env_and_default_dir(monkeypatch, tmp_path):
    assert config.parse_cache_env(None) is False
    for off in ("0", "false", "OFF", " no ", ""):
        assert config.parse_cache_env(off) is False
    for on in ("1", "true", " Yes ", "on"):
        assert config.parse_cache_env(on) is True
    assert config.parse_cache_env("~/x") == config.pathlib.Path("~/x").expanduser()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert config.default_jax_cache_dir() == tmp_path / "noiseaware" / "jax"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # not absolute: ignored, as the XDG spec says
    assert config.default_jax_cache_dir() == config.pathlib.Path.home() / ".cache" / "noiseaware" / "jax"


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_directory_others_can_write_is_refused(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)
    assert "others can write" in (config._safe_dir(d) or "")
    d.chmod(0o700)
    assert config._safe_dir(d) is None
    f = tmp_path / "file"
    f.write_text("x")
    assert config._safe_dir(f) is not None


def test_set_jax_cache_rejects_other_types():
    with pytest.raises(NoiseawareTypeError, match="enabled must be a bool or a directory path"):
        config.set_jax_cache(3)  # type: ignore[arg-type]


def test_float32_jax_is_refused_with_a_clear_error():
    """Turning JAX's float64 off after import is refused by the laws, not answered in float32."""
    import subprocess
    import sys

    code = (
        "import jax, numpy as np\n"
        "import noiseaware\n"
        "noiseaware.config.configure(host_devices=None, cache=False)\n"
        "import noiseaware.numpyro as nn\n"
        "from noiseaware.exceptions import NoiseawareValueError\n"
        "d = nn.TwoSidedGeometric(loc=3.0, alpha=0.5)\n"
        "ok = float(d.log_prob(4.0))\n"
        "jax.config.update('jax_enable_x64', False)\n"
        "try:\n"
        "    d.log_prob(4.0)\n"
        "except NoiseawareValueError as e:\n"
        "    assert 'jax_enable_x64' in str(e), e\n"
        "    print('refused', ok)\n"
    )
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("refused"), (out.stdout, out.stderr)


# --- host devices: the chains of copula.fit run on every core -------------------------------------------

DEVICES_CHILD = textwrap.dedent(
    """
    import json, sys
    if "start-jax-first" in sys.argv:
        import jax
        jax.numpy.ones(1)  # JAX's backends start before noiseaware is imported
    import numpy as np
    import noiseaware as na
    import jax
    from noiseaware import config
    config.configure(cache=False)  # the documented set-up: host devices before JAX starts
    out = config.host_devices()
    if "fit" in sys.argv:
        x = np.random.default_rng(0).standard_normal((400, 3))
        rel = na.privatize(x, statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(1))
        res = na.copula.fit(rel, chains=2, draws=60, warmup=60, seed=3, check_mixing=False)
        out["R"] = na.results.draws(res, "R").tolist()  # the pairs of R, pooled over chains
    print(json.dumps(out))
    """
)


def _devices_child(*args: str, **env_extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", config.HOST_DEVICES_ENV)}
    env.update(env_extra)
    out = subprocess.run(
        [sys.executable, "-c", DEVICES_CHILD, *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_host_devices_are_set_before_jax_starts_and_never_over_the_user():
    assert _devices_child(NOISEAWARE_HOST_DEVICES="3") == {"devices": 3, "setting": "set to 3"}
    assert _devices_child(NOISEAWARE_HOST_DEVICES="off")["devices"] == 1
    user = _devices_child(XLA_FLAGS="--xla_force_host_platform_device_count=5", NOISEAWARE_HOST_DEVICES="2")
    assert user == {"devices": 5, "setting": "set in XLA_FLAGS by the user"}
    late = _devices_child("start-jax-first", NOISEAWARE_HOST_DEVICES="2")
    assert late["devices"] == 1 and late["setting"].startswith("left alone (JAX had started")


def test_host_devices_env_parsing(monkeypatch):
    monkeypatch.setattr(config, "_cores", lambda: 64)
    assert config._wanted_host_devices(None) == config.MAX_HOST_DEVICES
    assert config._wanted_host_devices(" auto ") == config.MAX_HOST_DEVICES
    assert config._wanted_host_devices("no") == 1 and config._wanted_host_devices("12") == 12
    with pytest.raises(NoiseawareTypeError, match="NOISEAWARE_HOST_DEVICES"):
        config._wanted_host_devices("many")


@pytest.mark.slow  # two fits in fresh interpreters (make test-slow)
def test_copula_fit_draws_do_not_depend_on_the_device_count():
    # each chain's draws depend on its own key only: two devices (one chain each) give the one-device draws
    two = _devices_child("fit", NOISEAWARE_HOST_DEVICES="2")
    one = _devices_child("fit", NOISEAWARE_HOST_DEVICES="off")
    assert (two["devices"], one["devices"]) == (2, 1)
    import numpy as np

    np.testing.assert_allclose(np.asarray(two["R"]), np.asarray(one["R"]), rtol=0, atol=1e-9)
