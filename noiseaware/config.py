"""The process-wide settings noiseaware applies, in one place.

Three global switches of other libraries are set by this package; this module is where they are
applied and documented.

========================================  =========================================================
setting                                   when and why
========================================  =========================================================
JAX ``jax_enable_x64 = True``             on importing :mod:`noiseaware.numpyro` or
                                          :mod:`noiseaware.augment` (every JAX fit imports one of
                                          them): the likelihoods need float64 for exactness
                                          (1e-9 on log-probabilities near ``n = 1e6``).
JAX persistent compilation cache          at the same moment, unless switched off or unless you
(``jax_compilation_cache_dir``)           configured JAX's cache yourself (see below): compiled
                                          programs are stored in :func:`default_jax_cache_dir`, so
                                          a second *process* that fits the same program loads it
                                          instead of compiling it again.
OpenDP ``enable_features("contrib")``     on the first secure release (``noiseaware.mechanisms``,
                                          lazily): the exact samplers used by :func:`privatize`
                                          are in OpenDP's ``contrib`` set.
========================================  =========================================================

**Float64 is required.** If something turns ``jax_enable_x64`` off after noiseaware turned it on,
the JAX laws refuse to run (:class:`~noiseaware.exceptions.NoiseawareValueError` naming the
setting) instead of answering in float32, where whole units are lost at counts near ``1e7``.
PyTensor's ``floatX`` is not changed: the PyMC front end casts its own values to float64.

**The compilation cache.** On by default, in ``$XDG_CACHE_HOME/noiseaware/jax`` (or
``~/.cache/noiseaware/jax``), created with mode ``0o700``. Switch it off with the environment
variable ``NOISEAWARE_JAX_CACHE=0`` (also ``false``, ``off``, ``no``) before the JAX front end is
imported, or with :func:`set_jax_cache` at any time; ``NOISEAWARE_JAX_CACHE=/some/dir`` chooses
another directory. Your own JAX settings win: if ``jax_compilation_cache_dir`` is already set
(``jax.config.update(...)`` or the ``JAX_COMPILATION_CACHE_DIR`` environment variable), noiseaware
changes nothing about the cache. When noiseaware owns the cache it also lowers
``jax_persistent_cache_min_compile_time_secs`` from JAX's 1 s to :data:`MIN_COMPILE_TIME_SECS`
(unless that was set through ``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS``), since a fit compiles
several programs of well under a second each.

JAX's cache is trusted code: whoever can write to the directory can run code in your process.
noiseaware therefore refuses (with a :class:`CacheWarning`, running without the cache) a directory
that is not owned by you or that others can write to.

Examples
--------
>>> import noiseaware.config as nc
>>> nc.default_jax_cache_dir().parts[-2:]
('noiseaware', 'jax')
>>> nc.parse_cache_env("0"), nc.parse_cache_env("1"), nc.parse_cache_env(None)
(False, True, True)
"""

from __future__ import annotations

import os
import pathlib
import stat
import warnings
from typing import Any

from .exceptions import NoiseawareTypeError

__all__ = [
    "JAX_CACHE_ENV",
    "MIN_COMPILE_TIME_SECS",
    "CacheWarning",
    "configure_jax",
    "default_jax_cache_dir",
    "jax_cache_dir",
    "parse_cache_env",
    "set_jax_cache",
]

#: Environment variable: ``0``/``false``/``off``/``no`` switch the cache off, ``1``/``true``/``on``/``yes``
#: (or unset) use :func:`default_jax_cache_dir`, anything else is taken as the cache directory.
JAX_CACHE_ENV = "NOISEAWARE_JAX_CACHE"

#: Programs that took at least this long to compile are stored (JAX's own default is 1 s). All of them: a fit
#: compiles many small programs whose compile times jitter around any threshold (measured: 0.02-0.1 s).
MIN_COMPILE_TIME_SECS = 0.0

_OFF = {"0", "false", "off", "no"}
_ON = {"", "1", "true", "on", "yes"}

#: What this module has done to JAX: the cache directory it set (None: it set none).
_STATE: dict[str, Any] = {"override": None, "applied_dir": None, "configured": False}


class CacheWarning(UserWarning):
    """The compilation cache could not be used (the fit runs, compiling as usual)."""


def default_jax_cache_dir() -> pathlib.Path:
    """``$XDG_CACHE_HOME/noiseaware/jax``, or ``~/.cache/noiseaware/jax`` when that variable is unset.

    Returns
    -------
    pathlib.Path
        The directory (not created by this function).

    Examples
    --------
    >>> default_jax_cache_dir().name
    'jax'
    """
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = pathlib.Path(base) if base and os.path.isabs(base) else pathlib.Path.home() / ".cache"
    return root / "noiseaware" / "jax"


def parse_cache_env(value: str | None) -> bool | pathlib.Path:
    """Read a value of ``NOISEAWARE_JAX_CACHE``: False (off), True (default directory) or a directory.

    Parameters
    ----------
    value : str or None
        The variable's value (None: unset).

    Returns
    -------
    bool or pathlib.Path

    Examples
    --------
    >>> parse_cache_env("off"), parse_cache_env("/tmp/jaxcache")
    (False, PosixPath('/tmp/jaxcache'))
    """
    if value is None:
        return True
    text = value.strip()
    if text.lower() in _OFF:
        return False
    if text.lower() in _ON:
        return True
    return pathlib.Path(text).expanduser()


def jax_cache_dir() -> pathlib.Path | None:
    """The directory noiseaware would use now (None when switched off).

    :func:`set_jax_cache` wins over ``NOISEAWARE_JAX_CACHE``, which wins over the default. This
    says nothing about a cache directory you configured in JAX yourself (then noiseaware leaves
    JAX's cache alone).

    Returns
    -------
    pathlib.Path or None

    Examples
    --------
    >>> import os
    >>> jax_cache_dir() is None or jax_cache_dir().is_absolute()
    True
    """
    override = _STATE["override"]
    choice = parse_cache_env(os.environ.get(JAX_CACHE_ENV)) if override is None else override
    if choice is False:
        return None
    path = default_jax_cache_dir() if choice is True else pathlib.Path(choice)
    return path.absolute()


def _safe_dir(path: pathlib.Path) -> str | None:
    """Create ``path`` (mode 0o700); a reason it must not be used as a trusted cache, or None."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.stat()
    except OSError as exc:
        return f"cannot create it ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return "it is owned by another user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "others can write to it (JAX runs what the cache holds; chmod 700 it)"
    return None


def _jax_cache_module() -> Any:
    try:
        from jax._src import compilation_cache
    except ImportError:  # pragma: no cover - a JAX without the private module
        return None
    return compilation_cache


def configure_jax() -> None:
    """Apply noiseaware's JAX settings: float64, and the persistent compilation cache.

    Called when :mod:`noiseaware.numpyro` or :mod:`noiseaware.augment` is imported; calling it
    again re-applies the cache choice (after :func:`set_jax_cache` or a change of
    ``NOISEAWARE_JAX_CACHE``). A cache directory you set in JAX yourself is left alone.

    Warns
    -----
    CacheWarning
        If the directory cannot be created or is not safe to trust (owned by someone else,
        writable by others); the cache then stays off.

    Examples
    --------
    >>> import jax
    >>> configure_jax()
    >>> jax.config.jax_enable_x64
    True
    """
    import jax

    jax.config.update("jax_enable_x64", True)
    _STATE["configured"] = True
    current = getattr(jax.config, "jax_compilation_cache_dir", None)
    ours = _STATE["applied_dir"]
    if current is not None and current != ours:
        return  # the user's own cache: never clobbered
    if current is None and os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return  # pragma: no cover - JAX reads that variable into the config itself
    want = jax_cache_dir()
    if want is not None:
        reason = _safe_dir(want)
        if reason is not None:
            warnings.warn(
                f"noiseaware: JAX compilation cache off; the directory {str(want)!r} cannot be used: {reason}. "
                f"Set {JAX_CACHE_ENV}=0 to silence this, or {JAX_CACHE_ENV}=/another/dir.",
                CacheWarning,
                stacklevel=2,
            )
            want = None
    target = None if want is None else str(want)
    if target == current:
        return
    cc = _jax_cache_module()
    jax.config.update("jax_compilation_cache_dir", target)
    if target is not None and "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in os.environ:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_TIME_SECS)
    _STATE["applied_dir"] = target
    if cc is not None:  # JAX decides once per process whether to use the cache; make it look again
        cc.reset_cache()


def set_jax_cache(enabled: bool | str | os.PathLike[str] = True) -> pathlib.Path | None:
    """Switch noiseaware's JAX compilation cache on (default directory or a given one) or off.

    Overrides ``NOISEAWARE_JAX_CACHE`` for this process. Takes effect at once when the JAX front
    end is already loaded, else when it is imported.

    Parameters
    ----------
    enabled : bool or path
        False: off. True: :func:`default_jax_cache_dir`. A path: that directory.

    Returns
    -------
    pathlib.Path or None
        The directory now chosen (None when off).

    Raises
    ------
    TypeError
        If ``enabled`` is neither a bool nor a path.

    Examples
    --------
    >>> previous = jax_cache_dir()
    >>> set_jax_cache(False) is None
    True
    >>> set_jax_cache(previous if previous is not None else False) == previous
    True
    """
    if isinstance(enabled, bool):
        choice: bool | pathlib.Path = enabled
    elif isinstance(enabled, str | os.PathLike):
        choice = pathlib.Path(enabled).expanduser()
    else:
        raise NoiseawareTypeError(
            f"set_jax_cache: enabled must be a bool or a directory path; got enabled={enabled!r}."
        )
    _STATE["override"] = choice
    if _STATE["configured"]:
        configure_jax()
    return jax_cache_dir()
