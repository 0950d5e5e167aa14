r"""Process-wide settings for the JAX fits, applied only when you ask: :func:`configure`.

Importing noiseaware (or :mod:`noiseaware.numpyro`, :mod:`noiseaware.pymc`,
:mod:`noiseaware.augment`) changes nothing in your process: not ``os.environ``, not
``jax.config``, not JAX's compilation cache, not OpenDP's features. As NumPyro leaves float64
to ``numpyro.enable_x64()`` and host devices to ``numpyro.set_host_device_count(k)``, noiseaware
leaves them to one explicit call at the top of a script::

    import noiseaware as na
    na.config.configure()        # float64, one host device per core

========================================  =========================================================
setting (``configure`` keyword)           what and why
========================================  =========================================================
``x64=True``: JAX ``jax_enable_x64``      The noise laws are exact only in float64 (1e-9 on
                                          log-probabilities near ``n = 1e6``; float32 loses whole
                                          units at counts near 1e7). The package's own fits switch
                                          float64 on for their own duration (``jax.enable_x64``,
                                          a scoped setting) and leave it as it was; the NumPyro
                                          distributions in *your* models need it on, and say so
                                          (:class:`~noiseaware.exceptions.NoiseawareValueError`
                                          naming ``jax_enable_x64``) when it is off.
``host_devices="auto"``: XLA host         One CPU device per core (at most
device count (``XLA_FLAGS``)              :data:`MAX_HOST_DEVICES`), so that
                                          :func:`noiseaware.copula.fit` runs its chains on all cores
                                          (see "Host devices"). Takes effect only before JAX starts.
``cache=False``: JAX's persistent         Off unless you ask (``cache=True``, a directory, or
compilation cache                         ``NOISEAWARE_JAX_CACHE``): compiled programs stored in
                                          :func:`default_jax_cache_dir`, so that a second *process*
                                          fitting the same program loads it instead of compiling it
                                          again (see "The compilation cache" for why it is off).
========================================  =========================================================

OpenDP's ``contrib`` features (the exact samplers :func:`noiseaware.privatize` uses) are turned
on only while noiseaware builds its own OpenDP measurements, and restored afterwards.

**The compilation cache.** Off by default, as in JAX itself: loading a program from JAX's
persistent cache runs XLA:CPU's deserializer, and with JAX 0.12 that crashed a whole process
(segmentation fault in ``compilation_cache.get_executable_and_time``, reading an entry another
process of the same machine and JAX had written) in this project's own test runs; upstream
reports of the same kind are jax-ml/jax#28908. A crash loses the user's session, a compilation
only costs seconds, so the cache is yours to turn on. With ``cache=True`` (or
``NOISEAWARE_JAX_CACHE=1``, also ``true``, ``on``, ``yes``), the programs are stored in
``$XDG_CACHE_HOME/noiseaware/jax`` (or ``~/.cache/noiseaware/jax``), created with mode ``0o700``;
``NOISEAWARE_JAX_CACHE=/some/dir`` chooses another directory, ``NOISEAWARE_JAX_CACHE=0`` (also
``false``, ``off``, ``no``, or empty) keeps it off, and :func:`set_jax_cache` switches it at any
time. Your own JAX settings win: if
``jax_compilation_cache_dir`` is already set (``jax.config.update(...)`` or the
``JAX_COMPILATION_CACHE_DIR`` environment variable), noiseaware changes nothing about the cache.
When noiseaware owns the cache it also lowers ``jax_persistent_cache_min_compile_time_secs`` from
JAX's 1 s to :data:`MIN_COMPILE_TIME_SECS` (unless that was set through
``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS``), since a fit compiles several programs of well
under a second each. JAX's cache is trusted code: whoever can write to the directory can run code
in your process, so noiseaware refuses (with a :class:`CacheWarning`, running without the cache) a
directory, or a parent of it, that is not owned by you (or root) or that others can write to.

**Host devices.** XLA treats all CPU cores as one device and runs one program on it at a time, so
NUTS chains vectorized in one program use about one core. With ``k`` host devices,
:func:`noiseaware.copula.fit` gives each device a group of chains, which run at the same time
without waiting for each other (``jax.shard_map``), with the same draws as on one device
(docs/benchmarks.md has the measured gain). The count must be set before JAX starts its backends (the first array or
compiled function); :func:`configure` adds ``--xla_force_host_platform_device_count=k`` to
``XLA_FLAGS`` (what ``numpyro.set_host_device_count`` does) when that can still take effect.
``host_devices="auto"`` means the ``NOISEAWARE_HOST_DEVICES`` environment variable if set (an
integer; ``0``/``off``/``1`` leave XLA's single CPU device), else the number of cores this process
may run on, at most :data:`MAX_HOST_DEVICES`. A device count already in ``XLA_FLAGS`` is never
changed, and if JAX started first the fits simply use the devices JAX has (:func:`host_devices`
says what happened). Other JAX code is unaffected: arrays and programs still go to the first
device unless asked otherwise.

**Per-program XLA options (not process-wide).** :func:`noiseaware.dirichlet.dpmcmc` and the
package's own sampler in :func:`noiseaware.augment.sample` compile their programs with XLA:CPU's
YNNPACK fusions kept to dot products (``jax.jit(..., compiler_options=...)``): XLA's YNN fusions
of reductions over the records axis ran several times slower than its own loops there. Only the
package's own programs get the option, only on the CPU backend and only if this jaxlib accepts it;
``NOISEAWARE_XLA_DEFAULTS=1`` (:data:`XLA_DEFAULTS_ENV`) compiles them with XLA's defaults.

Examples
--------
>>> import noiseaware.config as nc
>>> nc.default_jax_cache_dir().parts[-2:]
('noiseaware', 'jax')
>>> nc.parse_cache_env("0"), nc.parse_cache_env("1"), nc.parse_cache_env(None)
(False, True, False)
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
    "HOST_DEVICES_LIMIT",
    "MAX_HOST_DEVICES",
    "MIN_COMPILE_TIME_SECS",
    "CacheWarning",
    "apply_host_devices",
    "configure",
    "default_jax_cache_dir",
    "host_devices",
    "jax_cache_dir",
    "parse_cache_env",
    "set_jax_cache",
]

#: Environment variable: ``1``/``true``/``on``/``yes`` use :func:`default_jax_cache_dir`, ``0``/``false``/``off``/``no``
#: (or empty, or unset) leave the cache off, anything else is taken as the cache directory.
JAX_CACHE_ENV = "NOISEAWARE_JAX_CACHE"

#: Programs that took at least this long to compile are stored (JAX's own default is 1 s). All of them: a fit
#: compiles many small programs whose compile times jitter around any threshold.
MIN_COMPILE_TIME_SECS = 0.0

#: Environment variable: the number of XLA host (CPU) devices noiseaware asks for (see "Host devices").
HOST_DEVICES_ENV = "NOISEAWARE_HOST_DEVICES"

#: Environment variable: ``1``/``true``/``on``/``yes`` compile the package's own programs with XLA's default
#: options (see "Per-program XLA options").
XLA_DEFAULTS_ENV = "NOISEAWARE_XLA_DEFAULTS"

#: Most host devices set automatically (one per core up to this).
MAX_HOST_DEVICES = 8

#: Most host devices ``NOISEAWARE_HOST_DEVICES`` may ask for; larger values are refused: XLA hangs or
#: crashes at very large counts, and a fit never has use for more devices than chains.
HOST_DEVICES_LIMIT = 256

_DEVICE_FLAG = "--xla_force_host_platform_device_count"

_OFF = {"", "0", "false", "off", "no"}
_ON = {"1", "true", "on", "yes"}

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
        return False
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
    """Create ``path`` (mode 0o700); a reason it must not be used as a trusted cache, or None.

    JAX loads and runs what the cache holds, so the directory must be one that nobody else can
    change: a directory owned by this user and writable by nobody else, and every directory above
    it -- up to the root, along the path as given and along the path with links resolved -- owned
    by this user or by root and writable by nobody else unless its sticky bit is set (``/tmp``:
    others may add entries but not rename or remove ours). Otherwise another account could swap
    the cache directory, or a link on the way to it, for one of its own after this check.
    ``configure`` checks again each time it applies the cache.
    """
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = path.stat()
    except OSError as exc:
        return f"cannot create it ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    uid = os.getuid() if hasattr(os, "getuid") else None
    if uid is not None and st.st_uid != uid:
        return "it is owned by another user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "others can write to it (JAX runs what the cache holds; chmod 700 it)"
    if uid is None:  # pragma: no cover - no POSIX ownership (Windows)
        return None
    absolute = path.absolute()
    parents = list(absolute.parents) + [p for p in absolute.resolve().parents if p not in absolute.parents]
    for parent in parents:
        try:
            pst = parent.stat()
        except OSError as exc:
            return f"its parent directory {str(parent)!r} cannot be checked ({exc.strerror or exc})"
        if pst.st_uid not in (0, uid):
            return (
                f"its parent directory {str(parent)!r} is owned by another user (uid {pst.st_uid}), who could "
                "swap the cache for one of their own"
            )
        if pst.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not pst.st_mode & stat.S_ISVTX:
            return (
                f"others can write to its parent directory {str(parent)!r} (mode {stat.S_IMODE(pst.st_mode):o}, "
                "no sticky bit), so they could swap the cache for one of their own"
            )
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
    """Host devices asked for by ``NOISEAWARE_HOST_DEVICES`` (1: leave XLA alone).

    An explicit count above :data:`HOST_DEVICES_LIMIT` raises
    :class:`~noiseaware.exceptions.NoiseawareValueError` naming the limit.
    """
    from .exceptions import NoiseawareValueError

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
    if k > HOST_DEVICES_LIMIT:
        raise NoiseawareValueError(
            f"{HOST_DEVICES_ENV} must be at most {HOST_DEVICES_LIMIT} (HOST_DEVICES_LIMIT; more XLA host devices "
            f"hang or crash JAX at start-up); got {value!r}."
        )
    return max(1, k)


def _set_host_devices(value: str | None = None) -> str:
    """Add the host device count to ``XLA_FLAGS`` when that can still take effect; what was done.

    ``value`` as ``NOISEAWARE_HOST_DEVICES`` reads (None or ``"auto"``: that variable, else the cores).
    """
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
    if value is None or str(value).strip().lower() == "auto":
        value = os.environ.get(HOST_DEVICES_ENV)
    k = _wanted_host_devices(value)
    if k <= 1:
        return "left alone (one device asked for)"
    os.environ["XLA_FLAGS"] = f"{flags} {_DEVICE_FLAG}={k}".strip()
    return f"set to {k}"


def apply_host_devices(value: int | str | None = None) -> str:
    """Ask XLA for host devices once per process (:func:`configure` calls this); what was done.

    Sets nothing but ``XLA_FLAGS`` (and imports nothing); see "Host devices" in the module
    docstring. Later calls return the first call's outcome.

    Parameters
    ----------
    value : int or str, optional
        The number of devices, or ``"auto"``/None (``NOISEAWARE_HOST_DEVICES``, else one per core).

    Returns
    -------
    str
        For example ``"set to 2"`` or ``"set in XLA_FLAGS by the user"``.
    """
    if _STATE["host_devices"] is None:
        _STATE["host_devices"] = _set_host_devices(None if value is None else str(value))
    return str(_STATE["host_devices"])


def host_devices() -> dict[str, Any]:
    """How many JAX devices the fits can spread chains over, and what noiseaware did to get them.

    Returns
    -------
    dict
        ``devices`` (``jax.local_device_count()``; this starts JAX's backends) and ``setting``
        (what :func:`configure` did with ``XLA_FLAGS``, or None before it ran).

    Examples
    --------
    >>> info = host_devices()
    >>> info["devices"] >= 1
    True
    """
    import jax

    return {"devices": jax.local_device_count(), "setting": _STATE["host_devices"]}


def configure(
    *, x64: bool = True, host_devices: int | str | None = "auto", cache: bool | str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """Apply the process-wide settings the JAX fits run best with; call it once, at the top of a script.

    What ``numpyro.enable_x64()`` and ``numpyro.set_host_device_count(k)`` do for NumPyro, in one
    call; nothing of it happens unless you call it (module docstring).

    Parameters
    ----------
    x64 : bool
        Turn on ``jax_enable_x64`` (needed by the NumPyro distributions in your own models; the
        package's fits switch it on for their own duration anyway). False leaves it as it is.
    host_devices : int, "auto" or None
        XLA host (CPU) devices for the chains of :func:`noiseaware.copula.fit`: a count,
        ``"auto"`` (``NOISEAWARE_HOST_DEVICES``, else one per core up to :data:`MAX_HOST_DEVICES`),
        or None to leave ``XLA_FLAGS`` alone. Takes effect only if JAX has not started yet.
    cache : bool, path or None
        The persistent compilation cache: True (the default directory), a directory, False (off),
        or None (``NOISEAWARE_JAX_CACHE``, else off; module docstring, "The compilation cache").

    Returns
    -------
    dict
        What was done: ``host_devices`` (e.g. ``"set to 2"``), ``x64`` and ``cache`` (the
        directory used, or None).

    Warns
    -----
    CacheWarning
        If the cache directory cannot be created or is not safe to trust; the cache stays off.

    Examples
    --------
    >>> import jax, noiseaware as na
    >>> done = na.config.configure(host_devices=None, cache=False)
    >>> jax.config.jax_enable_x64, done["cache"]
    (True, None)
    """
    out: dict[str, Any] = {}
    out["host_devices"] = None if host_devices is None else apply_host_devices(host_devices)
    if cache is not None:
        set_jax_cache(cache)
    import jax

    if x64:
        jax.config.update("jax_enable_x64", True)
    out["x64"] = bool(jax.config.read("jax_enable_x64"))
    _apply_cache()
    out["cache"] = _STATE["applied_dir"]
    return out


def _apply_cache() -> None:
    """Set JAX's persistent cache to noiseaware's choice, unless the user configured JAX's own."""
    import jax

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
        _apply_cache()
    return jax_cache_dir()
