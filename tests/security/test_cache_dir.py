"""The JAX compilation cache directory: JAX runs what it holds, so nobody else may be able to swap it.

Not only the directory itself: every directory above it, up to the root, must be owned by this user
or by root and writable by nobody else unless its sticky bit is set; and the check runs again each
time the cache is applied.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from noiseaware import config

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership and permissions")


@pytest.fixture
def parent(tmp_path):
    p = tmp_path / "parent"
    p.mkdir(mode=0o755)
    p.chmod(0o755)
    yield p
    p.chmod(0o755)  # so that pytest can clean up


def test_a_safe_directory_under_safe_parents_is_accepted(parent) -> None:
    assert config._safe_dir(parent / "cache") is None
    assert oct((parent / "cache").stat().st_mode & 0o777) == "0o700"


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757], ids=oct)
def test_a_parent_others_can_write_is_refused(parent, mode) -> None:
    parent.chmod(mode)
    reason = config._safe_dir(parent / "cache") or ""
    assert f"others can write to its parent directory {str(parent)!r}" in reason
    assert f"mode {mode:o}, no sticky bit" in reason


def test_a_sticky_parent_like_tmp_is_accepted(parent) -> None:
    parent.chmod(0o1777)  # others may add entries but not rename or remove ours
    assert config._safe_dir(parent / "cache") is None


def test_an_unsafe_grandparent_is_refused_too(parent) -> None:
    """Not only the immediate parent: every directory up to the root."""
    (parent / "mid").mkdir(mode=0o700)
    parent.chmod(0o777)
    assert "parent directory" in (config._safe_dir(parent / "mid" / "cache") or "")


def test_a_parent_owned_by_another_user_is_refused(parent) -> None:
    if os.getuid() != 0:
        pytest.skip("chown to another user needs root")
    os.chown(parent, 54321, -1)
    try:
        reason = config._safe_dir(parent / "cache") or ""
    finally:
        os.chown(parent, 0, -1)
    assert "is owned by another user (uid 54321)" in reason


def test_a_link_whose_target_has_an_unsafe_parent_is_refused(tmp_path, parent) -> None:
    """The path with links resolved is checked as well as the path as given."""
    (parent / "real").mkdir(mode=0o700)
    parent.chmod(0o777)
    (tmp_path / "safe").mkdir(mode=0o700)
    link = tmp_path / "safe" / "cache"
    link.symlink_to(parent / "real")
    assert f"parent directory {str(parent)!r}" in (config._safe_dir(link) or "")


REAPPLY = textwrap.dedent(
    """
    import json, os, sys, warnings
    from noiseaware.config import CacheWarning, configure
    import jax
    configure(host_devices=None)
    first = jax.config.jax_compilation_cache_dir
    os.chmod(sys.argv[1], 0o777)  # the parent becomes writable by others after the first check
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        configure(host_devices=None)  # applied again: checked again
    os.chmod(sys.argv[1], 0o755)
    msgs = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    print(json.dumps({"first": first, "second": jax.config.jax_compilation_cache_dir, "warnings": msgs}))
    """
)


def test_the_check_runs_again_each_time_the_cache_is_applied(parent) -> None:
    cache = parent / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "NOISEAWARE_JAX"))}
    env["NOISEAWARE_JAX_CACHE"] = str(cache)
    out = subprocess.run(
        [sys.executable, "-c", REAPPLY, str(parent)], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["first"] == str(cache)
    assert res["second"] is None  # switched off, not kept
    assert len(res["warnings"]) == 1 and "others can write to its parent directory" in res["warnings"][0]
