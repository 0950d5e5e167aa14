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
XLA host device count (``XLA_FLAGS``)     on ``import noiseaware``, if JAX has not started its
                                          backends yet and you set no device count yourself: one CPU
                                          device per core (at most :data:`MAX_HOST_DEVICES`), so
                                          that :func:`noiseaware.copula.fit` runs its chains on all
                                          cores (see "Host devices" below).
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

**Host devices.** XLA treats all CPU cores as one device and runs one program on it at a time, so
NUTS chains vectorized in one program use about one core. With ``k`` host devices,
:func:`noiseaware.copula.fit` gives each device a group of chains, which run at the same time
without waiting for each other (``jax.shard_map``; measured on a 2-core machine: the sampling of
4 x 2000 NUTS iterations at n = 5,820, p = 7 took 3.2 s on two devices against 8.9 s on one,
with the same draws). The count must be set before JAX starts its backends (the first array or
compiled function), so noiseaware sets it when the JAX front end is imported and JAX has not
started yet (at ``import noiseaware``, which imports nothing of JAX, and again when the JAX front
end is imported), by adding ``--xla_force_host_platform_device_count=k`` to ``XLA_FLAGS`` (what
``numpyro.set_host_device_count`` does). Choose ``k`` with the environment variable
``NOISEAWARE_HOST_DEVICES`` (an integer; ``0``/``off``/``1`` leave XLA's single CPU device);
unset or ``auto`` means the number of cores this process may run on, at most
:data:`MAX_HOST_DEVICES`. A device count already in ``XLA_FLAGS`` is never changed, and if JAX
started before noiseaware was imported the fits simply use the devices JAX has
(:func:`host_devices` says what happened). Other JAX code is unaffected: arrays and programs
still go to the first device unless asked otherwise.

**Per-program XLA options (not process-wide).** :func:`noiseaware.dirichlet.dpmcmc` and the
package's own sampler in :func:`noiseaware.augment.sample` compile their programs with XLA:CPU's
YNNPACK fusions kept to dot products (``jax.jit(..., compiler_options=...)``;
``noiseaware._engine._compile``): XLA's YNN fusions of reductions over the records axis ran several
times slower than its own loops there. Only the package's own programs get the option, only on the
CPU backend and only if this jaxlib accepts it; ``NOISEAWARE_XLA_DEFAULTS=1`` (:data:`XLA_DEFAULTS_ENV`)
compiles them with XLA's defaults.

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
import sys
import warnings
from typing import Any

from .exceptions import NoiseawareTypeError

__all__ = [
    "JAX_CACHE_ENV",
    "XLA_DEFAULTS_ENV",
    "HOST_DEVICES_ENV",
    "MAX_HOST_DEVICES",
    "MIN_COMPILE_TIME_SECS",
    "CacheWarning",
    "apply_host_devices",
    "configure_jax",
    "default_jax_cache_dir",
    "host_devices",
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

#: Environment variable: the number of XLA host (CPU) devices noiseaware asks for (see "Host devices").
HOST_DEVICES_ENV = "NOISEAWARE_HOST_DEVICES"

#: Environment variable: ``1``/``true``/``on``/``yes`` compile the package's own programs with XLA's default
#: options (see "Per-program XLA options").
XLA_DEFAULTS_ENV = "NOISEAWARE_XLA_DEFAULTS"

#: Most host devices set automatically (one per core up to this).
MAX_HOST_DEVICES = 8

_DEVICE_FLAG = "--xla_force_host_platform_device_count"

_OFF = {"0", "false", "off", "no"}
_ON = {"", "1", "true", "on", "yes"}

#: What this module has done to JAX: the cache directory it set (None: it set none).
_STATE: dict[str, Any] = {"override": None, "applied_dir": None, "configured": False, "host_devices": None}


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


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _wanted_host_devices(value: str | None) -> int:
    """Host devices asked for by ``NOISEAWARE_HOST_DEVICES`` (1: leave XLA alone)."""
    text = (value or "").strip().lower()
    if text in ("", "auto"):
        return max(1, min(_cores(), MAX_HOST_DEVICES))
    if text in _OFF:
        return 1
    try:
        k = int(text)
    except ValueError:
        raise NoiseawareTypeError(
            f"{HOST_DEVICES_ENV} must be an integer, 'auto' or 'off'; got {value!r}."
        ) from None
    return max(1, k)


def _set_host_devices() -> str:
    """Add the host device count to ``XLA_FLAGS`` when that can still take effect; what was done."""
    flags = os.environ.get("XLA_FLAGS", "")
    if _DEVICE_FLAG in flags:
        return "set in XLA_FLAGS by the user"
    started = False
    if "jax" in sys.modules:  # not imported yet: certainly not started (and not imported here)
        try:
            from jax._src import xla_bridge

            started = bool(xla_bridge.backends_are_initialized())
        except (ImportError, AttributeError):  # pragma: no cover - a JAX without the private function
            return "left alone (cannot tell whether JAX has started)"
    if started:
        return "left alone (JAX had started before noiseaware configured it)"
    k = _wanted_host_devices(os.environ.get(HOST_DEVICES_ENV))
    if k <= 1:
        return "left alone (one device asked for)"
    os.environ["XLA_FLAGS"] = f"{flags} {_DEVICE_FLAG}={k}".strip()
    return f"set to {k}"


def apply_host_devices() -> str:
    """Ask XLA for the host devices once per process (``import noiseaware`` calls this); what was done.

    Sets nothing but ``XLA_FLAGS`` (and imports nothing); see "Host devices" in the module
    docstring. Later calls return the first call's outcome.

    Returns
    -------
    str
        For example ``"set to 2"`` or ``"set in XLA_FLAGS by the user"``.
    """
    if _STATE["host_devices"] is None:
        _STATE["host_devices"] = _set_host_devices()
    return str(_STATE["host_devices"])


def host_devices() -> dict[str, Any]:
    """How many JAX devices the fits can spread chains over, and what noiseaware did to get them.

    Returns
    -------
    dict
        ``devices`` (``jax.local_device_count()``; this starts JAX's backends) and ``setting``
        (what :func:`configure_jax` did with ``XLA_FLAGS``, or None before it ran).

    Examples
    --------
    >>> info = host_devices()
    >>> info["devices"] >= 1
    True
    """
    import jax

    return {"devices": jax.local_device_count(), "setting": _STATE["host_devices"]}


def configure_jax() -> None:
    """Apply noiseaware's JAX settings: float64, and the persistent compilation cache.

    Also asks XLA for one host device per core the first time, when that can still take effect
    (module docstring, "Host devices").

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
    apply_host_devices()
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
