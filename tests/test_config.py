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
    from noiseaware.config import configure_jax
    configure_jax()
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


def test_parse_env_and_default_dir(monkeypatch, tmp_path):
    assert config.parse_cache_env(None) is True
    for off in ("0", "false", "OFF", " no "):
        assert config.parse_cache_env(off) is False
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
