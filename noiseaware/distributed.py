"""Many releases on Dask: run any of the package's fits over a collection of releases.

:func:`fit_many` sends one task per release to a Dask cluster (a ``LocalCluster`` by default, or
any scheduler by address or :class:`distributed.Client`), and yields a :class:`FitManyResult` per
release *as each finishes*. A release whose fit raises gives an outcome with the error and its
traceback; the others go on. With ``results_dir=`` every finished outcome (its ``summarize``-d
result, JSON) is written atomically to ``<results_dir>/<key>.json`` from the client, and a later
call with the same directory skips the releases already there and yields their stored outcomes:
an interrupted study resumes where it stopped. Each stored outcome carries a fingerprint of what
made it -- the fit function, ``summarize``, the fit keywords and the release itself -- and is
reused only by a call whose fingerprint is the same; any other stored outcome (another fit, other
keywords, another release under the same key, a malformed or edited file) is computed again.

A posterior fit's result comes back as the fit returns it: the host stack's own container (an
xarray.DataTree under ArviZ 1, an arviz.InferenceData under ArviZ 0.x), pickled by Dask from the
worker with its groups and root ``attrs`` (the settings, the fit's records, the release), so
:mod:`noiseaware.results`, the subpackages' functions and ArviZ read it as on the worker. A
``summarize`` function reduces it on the worker instead, so that only numbers travel and can be
stored.

Workers are long-lived processes: each imports JAX once, and its programs are compiled once per shape --
within the worker by the fits' own in-process caches (``dirichlet.fit``), and across workers and runs by JAX's
persistent compilation cache if ``NOISEAWARE_JAX_CACHE=1`` (off by default, :mod:`noiseaware.config`). The
worker processes of the ``LocalCluster`` that :func:`fit_many` starts itself are the package's own: it applies
:func:`noiseaware.config.configure` (float64, the cache if asked for; one XLA device each) in each.
Workers of a cluster you pass in are yours: ``client.run(noiseaware.config.configure)`` does the
same there (the fits switch float64 on for themselves either way).

:func:`fit_hierarchy` fits one Census-style hierarchy file as one task per state and stitches the parts.

Needs the ``dask`` extra (``pip install 'noiseaware[dask]'``). Guide: ``docs/distributed.md``.

Examples
--------
>>> import numpy as np, noiseaware as na
>>> from noiseaware.distributed import fit_many
>>> rels = {f"t{i}": na.privatize(np.arange(4) * 10, "counts", epsilon=1.0, sensitivity=1,
...                                 rng=np.random.default_rng(i)) for i in range(3)}
>>> def total(rel):  # any callable of a release (here a cheap one)
...     return float(rel.values.sum())
>>> out = sorted((o.key, o.ok) for o in fit_many(rels, total, processes=False, n_workers=2))  # doctest: +SKIP
>>> out  # doctest: +SKIP
[('t0', True), ('t1', True), ('t2', True)]
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import json
import math
import os
import pathlib
import re
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from . import _validation as v
from ._io import atomic_write_text
from .exceptions import NoiseawareTypeError, NoiseawareValueError, NoiseawareWarning
from .release import Release

__all__ = ["FitManyResult", "fit_hierarchy", "fit_many", "part_seed", "resolve_fit"]

_OWNER = "fit_many"
#: The characters a key may hold (:func:`_check_key` states the other rules).
_KEY_CHARS = re.compile(r"[A-Za-z0-9._-]+")

#: Names accepted for ``fit=`` besides a callable.
FITS = {
    "copula": "noiseaware.copula:fit",
    "copula.fit": "noiseaware.copula:fit",
    "copula.mle_nn": "noiseaware.copula:mle_nn",
    "dirichlet": "noiseaware.dirichlet:fit",
    "dirichlet.fit": "noiseaware.dirichlet:fit",
    "dirichlet.dpmcmc": "noiseaware.dirichlet:dpmcmc",
    "covariance": "noiseaware.covariance:fit",
    "covariance.fit": "noiseaware.covariance:fit",
    "regression": "noiseaware.regression:fit",
    "regression.fit": "noiseaware.regression:fit",
}


@dataclass(frozen=True)
class FitManyResult:
    """The outcome of one release's fit.

    Attributes
    ----------
    key : str
        The release's key (its mapping key, or its position as a string).
    ok : bool
        True when the fit (and ``summarize``) returned.
    result : object
        ``summarize(fit(release, **fit_kwargs))``; None on error. Without ``summarize``, the fit's own
        result: for a posterior fit an xarray.DataTree under ArviZ 1 (an arviz.InferenceData under
        ArviZ 0.x), as the fit returned it on the worker. From a stored file (``cached``) it is the
        JSON-decoded value.
    error : str or None
        ``"ExceptionType: message"`` when the fit failed.
    traceback : str or None
        The worker's traceback of the failure.
    seconds : float
        Wall time of the task on its worker.
    worker : str or None
        The worker that ran it.
    cached : bool
        True when read back from ``results_dir`` instead of being computed.
    fingerprint : dict or None
        What the outcome was computed from, as stored in ``results_dir``: ``"fit"`` and
        ``"summarize"`` (qualified names), ``"kwargs"`` and ``"release"`` (SHA-256 digests of the
        fit keywords and of the release; ``"release"`` is None for a release path this process
        cannot read). None when no ``results_dir`` was given.
    """

    key: str
    ok: bool
    result: Any = None
    error: str | None = None
    traceback: str | None = None
    seconds: float = math.nan
    worker: str | None = None
    cached: bool = False
    fingerprint: dict[str, str | None] | None = None

    def to_json(self) -> str:
        """The outcome as JSON (``result`` must be JSON-serializable; use ``summarize=``)."""
        data = {
            "key": self.key,
            "ok": self.ok,
            "result": self.result,
            "error": self.error,
            "traceback": self.traceback,
            "seconds": self.seconds,
            "worker": self.worker,
            "fingerprint": self.fingerprint,
        }
        return json.dumps(data, allow_nan=True, default=_json_default) + "\n"


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON-serializable")


@v.owned(_OWNER)
def resolve_fit(fit: Callable[..., Any] | str) -> Callable[..., Any]:
    """The fit function from a callable or a name (``"copula"``, ``"dirichlet"``, ``"module:function"``).

    Parameters
    ----------
    fit : callable or str
        A callable taking a release first, one of the names in :data:`FITS`, or ``"module:function"``.

    Returns
    -------
    callable

    Raises
    ------
    TypeError
        If ``fit`` is neither.
    ValueError
        If the name cannot be resolved.

    Examples
    --------
    >>> resolve_fit("dirichlet").__name__
    'fit'
    """
    if callable(fit):
        return fit
    if not isinstance(fit, str):
        raise NoiseawareTypeError(v.message("fit", "must be a callable or a name such as 'copula'", fit))
    target = FITS.get(fit, fit)
    if ":" not in target:
        raise NoiseawareValueError(v.message("fit", f"must be one of {sorted(FITS)} or 'module:function'", fit))
    mod, _, name = target.partition(":")
    try:
        fn = getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError) as exc:
        raise NoiseawareValueError(v.message("fit", f"cannot be resolved ({exc})", fit)) from None
    if not callable(fn):
        raise NoiseawareTypeError(v.message("fit", "must name a callable", fit))
    return fn


def _run_one(
    fit: Callable[..., Any] | str,
    key: str,
    release: Any,
    fit_kwargs: dict[str, Any],
    summarize: Callable[[Any], Any] | None,
) -> FitManyResult:
    """The task run on a worker: never raises, a failure becomes an outcome."""
    t0 = time.perf_counter()
    worker = None
    try:
        from distributed import get_worker

        worker = get_worker().address
    except (ImportError, ValueError):  # pragma: no cover - not on a worker
        worker = None
    try:
        fn = resolve_fit(fit)
        if isinstance(release, str | os.PathLike):
            release = Release.from_json(release)
        res = fn(release, **fit_kwargs)
        if summarize is not None:
            res = summarize(res)
        return FitManyResult(key, True, res, seconds=time.perf_counter() - t0, worker=worker)
    except Exception as exc:  # a per-release failure is reported, never lost
        return FitManyResult(key, False, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(),
                             seconds=time.perf_counter() - t0, worker=worker)


def _check_key(key: str) -> None:
    """Refuse a key that cannot name its outcome's file ``<key>.json``, stating the rule it breaks.

    A key is 1-128 ASCII letters, digits, ``.``, ``_`` or ``-``, not starting with ``.`` (a
    hidden file; ``.`` and ``..`` name directories) or ``-`` (read as an option by command-line
    tools), and not ending in ``.error`` (``<key>.error.json`` is the failure file of another key).
    """
    rule = detail = ""
    if not 1 <= len(key) <= 128:
        rule, detail = "must be 1 to 128 characters long (it names a file)", f" ({len(key)} characters)"
    elif not _KEY_CHARS.fullmatch(key):
        bad = next(c for c in key if not _KEY_CHARS.fullmatch(c))
        rule, detail = "must hold only ASCII letters, digits, '.', '_' or '-' (it names a file)", f" (holds {bad!r})"
    elif key[0] == ".":
        rule = "must not start with '.' (a leading '.' makes a hidden file, and '.' or '..' names a directory)"
    elif key[0] == "-":
        rule = "must not start with '-' (a leading '-' reads as an option to command-line tools)"
    elif key.endswith(".error"):
        rule = f"must not end in '.error' ('{key}.json' is the failure file of the key {key[:-6]!r})"
    if rule:
        raise NoiseawareValueError(
            f"{_OWNER}: key {rule}; got key={key!r}{detail}. Rename it (keys name the files <key>.json of "
            "results_dir)."
        )


@v.owned(_OWNER)
def _items(releases: Any) -> list[tuple[str, Any]]:
    if isinstance(releases, Release | str | os.PathLike):
        raise NoiseawareTypeError(
            f"{_OWNER}: releases must be a collection of releases (a list or a mapping key -> release); "
            f"got a single {type(releases).__name__}. Wrap it in a list."
        )
    if isinstance(releases, Mapping):
        items = [(k if isinstance(k, str) else str(k), r) for k, r in releases.items()]
    elif isinstance(releases, Iterable):
        items = [(str(i), r) for i, r in enumerate(releases)]
    else:
        raise NoiseawareTypeError(v.message("releases", "must be a list or a mapping of releases", releases))
    seen: set[str] = set()
    for k, r in items:
        _check_key(k)
        if k in seen:
            raise NoiseawareValueError(v.message("key", "must be unique", k))
        seen.add(k)
        if not isinstance(r, Release | str | os.PathLike):
            raise NoiseawareTypeError(
                f"{_OWNER}: release {k!r} must be a Release or the path of a release JSON file; got {type(r).__name__}."
            )
    return items


# ------------------------------------------------------------------------------ fingerprints
def _callable_name(fn: Any) -> str:
    """``module:qualname`` of a function (of its class for another callable; a partial's parts too)."""
    if isinstance(fn, functools.partial):
        return f"partial({_callable_name(fn.func)}, {_canonical(fn.args)}, {_canonical(fn.keywords)})"
    mod, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if isinstance(mod, str) and isinstance(name, str):
        return f"{mod}:{name}"
    # a callable object: its class and its repr (a default repr holds the address: never the same twice)
    return f"{type(fn).__module__}:{type(fn).__qualname__}:{fn!r}"


def _canonical(obj: Any) -> str:
    """A deterministic text for a fit keyword's value: the same text for equal values, run after run.

    Numbers, strings, containers and arrays are written out exactly (a mapping in sorted order,
    an array by dtype, shape and a digest of its bytes); a function by its qualified name; any
    other object by its type and ``repr`` (a default ``repr`` holds the object's address, so such
    a keyword never matches a stored outcome: it is computed again rather than reused wrongly).
    """
    import numpy as np

    if obj is None or isinstance(obj, bool | int | str | bytes):
        return repr(obj)
    if isinstance(obj, float):
        return f"float({obj!r})"
    if isinstance(obj, np.ndarray):
        arr = np.ascontiguousarray(obj)
        if arr.dtype.hasobject:
            return f"ndarray({arr.dtype},{arr.shape},{_canonical(arr.tolist())})"
        return f"ndarray({arr.dtype},{arr.shape},{hashlib.sha256(arr.tobytes()).hexdigest()})"
    if isinstance(obj, np.generic):
        return f"{obj.dtype}({obj.item()!r})"
    if isinstance(obj, Mapping):
        return "{" + ",".join(sorted(f"{_canonical(k)}:{_canonical(v)}" for k, v in obj.items())) + "}"
    if isinstance(obj, set | frozenset):
        return f"{type(obj).__name__}{{" + ",".join(sorted(_canonical(x) for x in obj)) + "}"
    if isinstance(obj, list | tuple):
        return f"{type(obj).__name__}[" + ",".join(_canonical(x) for x in obj) + "]"
    if (callable(obj) and hasattr(obj, "__qualname__")) or isinstance(obj, functools.partial):
        return _callable_name(obj)
    return f"{type(obj).__module__}.{type(obj).__qualname__}:{obj!r}"


def _release_digest(release: Release | str | os.PathLike[str]) -> str | None:
    """SHA-256 of a release: of its canonical JSON, or of a file's bytes (None if this process cannot read it)."""
    h = hashlib.sha256()
    if isinstance(release, Release):
        h.update(json.dumps(release.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False).encode())
        return "json:" + h.hexdigest()
    try:
        with open(release, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return "file:" + h.hexdigest()


def _fingerprint(
    fit: Callable[..., Any] | str, summarize: Callable[[Any], Any] | None, fit_kwargs: Mapping[str, Any], release: Any
) -> dict[str, str | None]:
    fn = resolve_fit(fit)
    return {
        "fit": _callable_name(fn),
        "summarize": None if summarize is None else _callable_name(summarize),
        "kwargs": hashlib.sha256(_canonical(dict(fit_kwargs)).encode()).hexdigest(),
        "release": _release_digest(release),
    }


def _stored(results_dir: pathlib.Path, key: str, fingerprint: Mapping[str, str | None]) -> FitManyResult | str | None:
    """The stored outcome of ``key`` if it was made from exactly ``fingerprint``; else why not (None: no file)."""
    path = results_dir / f"{key}.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"unreadable ({type(exc).__name__})"
    if not isinstance(data, dict) or data.get("key") != key or data.get("ok") is not True:
        return "malformed (not the successful outcome of this key)"
    seconds, worker = data.get("seconds"), data.get("worker")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not (seconds >= 0 or math.isnan(seconds)):
        return f"malformed (seconds={seconds!r})"
    if worker is not None and not isinstance(worker, str):
        return f"malformed (worker={worker!r})"
    stored_fp = data.get("fingerprint")
    if not isinstance(stored_fp, dict) or fingerprint.get("release") is None or stored_fp != dict(fingerprint):
        if not isinstance(stored_fp, dict):
            return "made without a fingerprint"
        if fingerprint.get("release") is None:
            return "its release is a path this process cannot read, so it cannot be compared"
        diff = [part for part in ("fit", "summarize", "kwargs", "release") if stored_fp.get(part) != fingerprint[part]]
        return "made with another " + ", another ".join(diff or ["fingerprint"])
    return FitManyResult(
        key,
        True,
        data.get("result"),
        seconds=float(seconds),
        worker=worker,
        cached=True,
        fingerprint=dict(fingerprint),
    )


def _writable_dir(results_dir: str | os.PathLike[str]) -> pathlib.Path:
    """Create ``results_dir`` if missing and prove that a file can be written there, before any fit runs."""
    out_dir = pathlib.Path(results_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".fit_many.", suffix=".probe", dir=out_dir)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise NoiseawareValueError(
            f"{_OWNER}: results_dir must be a directory that this process can write to; got "
            f"results_dir={os.fspath(results_dir)!r} ({exc.strerror or exc}). Nothing was run."
        ) from None
    return out_dir


def _client(client: Any, address: str | None, n_workers: int | None, processes: bool) -> tuple[Any, Any]:
    """(client, what to close afterwards) -- a LocalCluster when neither client nor address is given."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - the dask extra is missing
        raise ImportError(
            f"{_OWNER}: needs Dask's distributed scheduler; install it with pip install 'noiseaware[dask]'."
        ) from exc
    if client is not None and address is not None:
        raise NoiseawareValueError(f"{_OWNER}: give client=... or address=..., not both.")
    if client is not None:
        return client, None
    if address is not None:
        c = Client(address)
        return c, c
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes, dashboard_address=None)
    c = Client(cluster)
    if processes:  # worker processes the package started: set up as a script of the package's would be
        from .config import configure

        c.run(configure, host_devices=None)
    return c, (c, cluster)


@v.owned(_OWNER)
def fit_many(
    releases: Mapping[Any, Release | str | os.PathLike[str]] | Iterable[Release | str | os.PathLike[str]],
    fit: Callable[..., Any] | str,
    *,
    client: Any = None,
    address: str | None = None,
    n_workers: int | None = None,
    processes: bool = True,
    summarize: Callable[[Any], Any] | None = None,
    results_dir: str | os.PathLike[str] | None = None,
    **fit_kwargs: Any,
) -> Iterator[FitManyResult]:
    """Fit every release on a Dask cluster; yield one :class:`FitManyResult` per release as it finishes.

    Each task runs ``summarize(fit(release, **fit_kwargs))`` on a worker (the module docstring
    says how compilation is shared). Outcomes arrive in completion order, not input order.

    Parameters
    ----------
    releases : mapping key -> release, or iterable of releases
        :class:`~noiseaware.Release` objects or paths of release JSON files (read on the worker,
        which must then see the same file system). Keys (mapping keys, or positions ``"0"``,
        ``"1"``, ...) name the outcomes and the files of ``results_dir``: 1-128 characters of
        ASCII letters, digits, ``.``, ``_``, ``-``, not starting with ``.`` or ``-`` and not ending
        in ``.error``.
    fit : callable or str
        The fit: any callable taking a release first (``noiseaware.copula.fit``,
        ``noiseaware.dirichlet.fit``, ``noiseaware.copula.mle_nn``, ``noiseaware.dirichlet.dpmcmc``,
        ``noiseaware.covariance.fit``, ``noiseaware.regression.fit``, or a function of yours that
        builds an ``augment`` model and samples it), or a name (:func:`resolve_fit`). Names are
        resolved on the worker. A callable must be picklable (a module-level function, not a
        lambda, when the workers are processes).
    client : distributed.Client, optional
        Use this client (and its cluster); it is left open.
    address : str, optional
        Connect to this scheduler (``"tcp://host:8786"``); the client is closed at the end.
    n_workers : int, optional
        Workers of the ``LocalCluster`` started when neither ``client`` nor ``address`` is given
        (default: Dask's choice, one per core); one thread each. It is closed at the end.
    processes : bool, default True
        ``LocalCluster`` workers as processes (each its own JAX) or as threads of this process.
    summarize : callable, optional
        Applied to each fit's result on the worker, e.g.
        ``lambda f: noiseaware.results.draws(f).mean(axis=0).tolist()``: what comes back (and what
        ``results_dir`` stores) instead of the whole fit.
    results_dir : path, optional
        Resume directory (created if missing): each successful outcome is written atomically to
        ``<key>.json`` as it arrives (the result must then be JSON-serializable, so use
        ``summarize``); failures go to ``<key>.error.json`` and are retried next time. A key whose
        file holds an outcome of the same fit, ``summarize``, keywords and release (its
        ``fingerprint``) is not run again: its stored outcome is yielded first (``cached=True``).
        Any other stored outcome -- another fit or keywords, another release under the key, a
        malformed or edited file, a release path this process cannot read -- is computed again
        (and its file replaced), with a ``NoiseawareWarning`` naming the keys. The directory must
        be writable: that is checked before anything runs.
    **fit_kwargs
        Passed to every fit (``chains=``, ``draws=``, ``seed=``, ``progressbar=False``, ...).

    Yields
    ------
    FitManyResult
        Its ``result`` is what the fit returns -- for a posterior fit, an xarray.DataTree under
        ArviZ 1 (an arviz.InferenceData under ArviZ 0.x) -- or what ``summarize`` makes of it.

    Raises
    ------
    TypeError, ValueError
        For a bad collection, key, fit name, ``client`` together with ``address``, or a
        ``results_dir`` that cannot be created or written, before any task is sent.

    Warns
    -----
    NoiseawareWarning
        When stored outcomes in ``results_dir`` are not reused (why, per key).
    ImportError
        Without the ``dask`` extra.

    Notes
    -----
    Leaving the loop early (``break``) cancels the tasks not yet finished and closes a cluster that
    this call started. A worker that dies (e.g. out of memory) gives a failed outcome for its
    task after Dask's own retries on other workers (``distributed.scheduler.allowed-failures``).

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> rels = [na.privatize(np.arange(3), "counts", epsilon=1.0, sensitivity=1,
    ...                      rng=np.random.default_rng(i)) for i in range(2)]
    >>> outs = fit_many(rels, "copula", processes=False, n_workers=1)  # doctest: +SKIP
    >>> [o.ok for o in outs]  # counts releases are not median_pairs: reported, not raised  # doctest: +SKIP
    [False, False]
    """
    items = _items(releases)
    fn: Callable[..., Any] | str = fit if isinstance(fit, str) else resolve_fit(fit)
    if isinstance(fit, str):
        resolve_fit(fit)  # a bad name fails here, before any task is sent
    if summarize is not None and not callable(summarize):
        raise NoiseawareTypeError(v.message("summarize", "must be callable or None", summarize))
    if n_workers is not None:
        n_workers = v.integer("n_workers", n_workers, minimum=1)
    out_dir = None
    fingerprints: dict[str, dict[str, str | None]] = {}
    if results_dir is not None:
        out_dir = _writable_dir(results_dir)
        fingerprints = {key: _fingerprint(fit, summarize, fit_kwargs, rel) for key, rel in items}
    job = _Job(fn, summarize, fit_kwargs, out_dir, fingerprints)
    return _stream(items, job, _Cluster(client, address, n_workers, bool(processes)))


@dataclass(frozen=True)
class _Job:
    """What every task of a :func:`fit_many` run does, and where its outcomes are stored.

    ``fn`` is the fit (or its name, resolved on the worker), ``summarize`` what is kept of each
    result, ``fit_kwargs`` the fit's keywords; ``out_dir`` the resume directory (None: none) and
    ``fingerprints`` each key's fingerprint there.
    """

    fn: Callable[..., Any] | str
    summarize: Callable[[Any], Any] | None
    fit_kwargs: dict[str, Any]
    out_dir: pathlib.Path | None
    fingerprints: dict[str, dict[str, str | None]]


@dataclass(frozen=True)
class _Cluster:
    """Where the tasks run: ``client``, a scheduler ``address``, or a LocalCluster of ``n_workers`` (``_client``)."""

    client: Any
    address: str | None
    n_workers: int | None
    processes: bool


def _stream(items: list[tuple[str, Any]], job: _Job, cluster: _Cluster) -> Iterator[FitManyResult]:
    """Yield the stored outcomes that can be reused, then run the other items on the cluster as they finish."""
    out_dir, fingerprints = job.out_dir, job.fingerprints
    todo = []
    stale: list[str] = []
    for key, rel in items:
        stored = _stored(out_dir, key, fingerprints[key]) if out_dir is not None else None
        if isinstance(stored, FitManyResult):
            yield stored
            continue
        if stored is not None:
            stale.append(f"{key!r}: {stored}")
        todo.append((key, rel))
    if stale:
        shown = "; ".join(stale[:10]) + (f"; and {len(stale) - 10} more" if len(stale) > 10 else "")
        warnings.warn(
            f"{_OWNER}: {len(stale)} stored outcome(s) in {str(out_dir)!r} are not reused and are computed again: "
            f"{shown}.",
            NoiseawareWarning,
            stacklevel=2,
        )
    if not todo:
        return
    from distributed import as_completed

    c, owned = _client(cluster.client, cluster.address, cluster.n_workers, cluster.processes)
    futures = []
    try:
        for key, rel in todo:
            futures.append(
                c.submit(
                    _run_one,
                    job.fn,
                    key,
                    rel,
                    job.fit_kwargs,
                    job.summarize,
                    key=f"fit-{key}-{os.urandom(6).hex()}",
                    pure=False,
                )
            )
        index = {f.key: k for f, (k, _) in zip(futures, todo, strict=True)}
        for fut in as_completed(futures):
            try:
                outcome = fut.result()
            except Exception as exc:  # the task itself died (worker lost, cancelled)
                outcome = FitManyResult(
                    index[fut.key], False, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()
                )
            fut.release()
            if out_dir is not None:
                outcome = dataclasses.replace(outcome, fingerprint=fingerprints[outcome.key])
                _store(out_dir, outcome)
            yield outcome
    finally:
        for f in futures:
            if not f.done():
                f.cancel()
        if owned is not None:
            for thing in owned if isinstance(owned, tuple) else (owned,):
                thing.close()


@v.owned(_OWNER)
def _store(out_dir: pathlib.Path, outcome: FitManyResult) -> None:
    name = f"{outcome.key}.json" if outcome.ok else f"{outcome.key}.error.json"
    try:
        text = outcome.to_json()
    except (TypeError, ValueError) as exc:
        raise NoiseawareTypeError(
            f"{_OWNER}: the result of {outcome.key!r} cannot be stored as JSON ({exc}); pass summarize=... "
            "returning numbers, lists or dicts (e.g. lambda f: noiseaware.results.draws(f).mean(axis=0).tolist())."
        ) from None
    atomic_write_text(out_dir / name, text, overwrite=True)


# ------------------------------------------------------------------------------ a hierarchy, split by root unit
_H_OWNER = "fit_hierarchy"


def part_seed(seed: int, part: int) -> int:
    r"""The seed of part ``part`` of a :func:`fit_hierarchy` run with ``seed``: independent streams per part.

    .. math:: \mathrm{seed}_s = \mathrm{SeedSequence}([\mathrm{seed}, s]).\mathrm{generate\_state}(1)[0] \gg 1,

    a 31-bit integer from NumPy's :class:`numpy.random.SeedSequence` (hashed, so that parts ``s`` and
    ``s + 1`` of one run, or one part of runs ``seed`` and ``seed + 1``, get unrelated seeds). Pass it as
    ``seed=`` to :func:`noiseaware.hierarchy.fit` of ``release.split_by_root()[part]`` to repeat
    that part alone.

    Examples
    --------
    >>> part_seed(0, 0) == part_seed(0, 0) != part_seed(0, 1)
    True
    """
    import numpy as np

    return int(np.random.SeedSequence([int(seed), int(part)]).generate_state(1, np.uint32)[0]) >> 1


def _fit_part(part: tuple[Any, int], **fit_kwargs: Any) -> Any:
    """The task of one part: ``hierarchy.fit(part_release, seed=part_seed, **fit_kwargs)`` on a worker."""
    from .hierarchy import fit

    release, seed = part
    return fit(release, seed=seed, **fit_kwargs)


@v.owned(_H_OWNER)
def fit_hierarchy(
    release: Any,
    *,
    client: Any = None,
    address: str | None = None,
    n_workers: int | None = None,
    processes: bool = True,
    **fit_kwargs: Any,
) -> Any:
    r"""Fit a hierarchy release on Dask, one task per root unit (state), and stitch the parts into one result.

    The release is split by :meth:`~noiseaware.hierarchy.NoisyHierarchy.split_by_root` (one part per
    root unit, its subtree and measurements), each part is fitted by
    :func:`noiseaware.hierarchy.fit` as a task of :func:`fit_many`'s machinery, and the parts'
    results are stitched into one result of the host's container, shaped as
    ``hierarchy.fit(release, ...)``'s.

    **Exact or not.** The root totals are exact and every measurement's noise is independent, so
    the likelihood factorizes over root units (:meth:`~noiseaware.hierarchy.NoisyHierarchy.split_by_root`).
    With ``prior="uniform"`` the prior factorizes too and the stitched draws are draws of the whole
    file's posterior, the product of the parts' posteriors: exact. With ``prior="hierarchical"``
    (``hierarchy.fit``'s default) the scales :math:`\sigma_{\text{county}}`,
    :math:`\sigma_{\text{tract}}` are shared by all root units in the whole-file model, and each part
    here learns its own: an approximation, close when every root unit has many counties and tracts
    (``attrs["noiseaware_split_exact"]`` records which). A user's ``model=`` (one rate model over
    every leaf) cannot be split and is refused.

    **Seeds.** Part ``s`` runs with ``seed=part_seed(seed, s)`` (:func:`part_seed`), so the parts'
    chains are independent, and ``hierarchy.fit(release.split_by_root()[s], seed=part_seed(seed, s),
    ...)`` repeats part ``s`` draw for draw. ``seed=None`` draws one seed on the client, recorded.

    **Stitching** by :func:`noiseaware.hierarchy.stitch`: ``counts`` along ``leaf`` in the release's
    order, the log-likelihood along ``measurement`` in the whole file's, what each part has one of
    stacked along a new dimension ``part``. ``attrs``: ``hierarchy.fit``'s, with the run's ``seed``,
    ``noiseaware_part_seeds``, ``noiseaware_parts``, ``noiseaware_part_seconds`` (each part's time on
    its worker, compilation included), ``noiseaware_part_workers`` and ``noiseaware_split_exact``.
    The mixing check (``check_mixing=True``) runs once, on the client, on the stitched counts.

    Parameters
    ----------
    release : NoisyHierarchy
        With the root level's totals published exactly.
    client, address, n_workers, processes
        Where the tasks run, as in :func:`fit_many` (default: a ``LocalCluster`` started and closed here).
    **fit_kwargs
        :func:`noiseaware.hierarchy.fit`'s keywords (``method``, ``prior``, ``sweeps``, ``chains``,
        ``draws``, ``warmup``, ``seed``, ``target_accept``, ``check_mixing``, ...), the same for
        every part.

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        The stitched result: an xarray.DataTree under ArviZ 1 (an arviz.InferenceData under ArviZ
        0.x), read by :mod:`noiseaware.results` as ``hierarchy.fit``'s.

    Raises
    ------
    NoiseawareTypeError
        ``release`` is not a :class:`~noiseaware.hierarchy.NoisyHierarchy`.
    NoiseawareValueError
        Root totals not exact, ``model=`` given, bad sampler settings (checked on the client,
        before any task is sent), ``client`` with ``address``.
    NoiseawareError
        A part's fit failed on its worker (the message names the root unit and the worker's error;
        the worker's traceback is attached as a note).

    Examples
    --------
    >>> from noiseaware import hierarchy, results
    >>> from noiseaware.distributed import fit_hierarchy
    >>> rel = hierarchy.synthetic_nmf(2, 2, 2, rng=0).release
    >>> res = fit_hierarchy(rel, prior="uniform", chains=1, draws=50, warmup=50, seed=1,
    ...                     check_mixing=False, processes=False, n_workers=1)  # doctest: +SKIP
    >>> results.draws(res).shape  # doctest: +SKIP
    (50, 8, 3)
    """
    from ._engine import SamplingSettings, check_settings
    from .exceptions import NoiseawareError
    from .hierarchy import NoisyHierarchy, check_stitched_mixing, stitch

    if not isinstance(release, NoisyHierarchy):
        raise NoiseawareTypeError(v.message("release", "must be a hierarchy.NoisyHierarchy", type(release).__name__))
    if fit_kwargs.get("model") is not None:
        v.refuse("model", "must be None: a user's rate model spans every leaf and cannot be split by root unit",
                 fit_kwargs["model"], "Call hierarchy.fit on the whole file.")
    for name in ("method", "prior"):
        if name in fit_kwargs:
            from .hierarchy import METHODS, PRIORS

            v.choice(name, fit_kwargs[name], METHODS if name == "method" else PRIORS)
    sampling = {k: fit_kwargs.pop(k) for k in list(fit_kwargs) if k in SamplingSettings.names()}
    st = check_settings(**sampling)
    if n_workers is not None:
        n_workers = v.integer("n_workers", n_workers, minimum=1)
    if client is not None and address is not None:
        raise NoiseawareValueError(f"{_H_OWNER}: give client=... or address=..., not both.")
    parts = release.split_by_root()
    seeds = [part_seed(st.seed, s) for s in range(len(parts))]
    kwargs = {**fit_kwargs, **{k: x for k, x in sampling.items() if k != "seed"}, "check_mixing": False}
    kwargs.update(chains=st.chains, draws=st.draws, warmup=st.warmup, target_accept=st.target_accept)
    items = [(f"part{s}", (part, seeds[s])) for s, part in enumerate(parts)]
    job = _Job(_fit_part, None, kwargs, None, {})
    outcomes: dict[str, FitManyResult] = {}
    for outcome in _stream(items, job, _Cluster(client, address, n_workers, bool(processes))):
        if not outcome.ok:
            s = int(outcome.key[4:])
            err = NoiseawareError(f"{_H_OWNER}: the fit of root unit {release.units[0][s]!r} (part {s}) failed on its "
                                  f"worker: {outcome.error}. Fit that part alone to see it: hierarchy.fit("
                                  f"release.split_by_root()[{s}], seed={seeds[s]}, ...).")
            if outcome.traceback:
                err.add_note(outcome.traceback)
            raise err
        outcomes[outcome.key] = outcome
    ordered = [outcomes[f"part{s}"] for s in range(len(parts))]
    result = stitch(release, [o.result for o in ordered])
    prior = fit_kwargs.get("prior", "hierarchical")
    result.attrs.update({
        "noiseaware_seed": int(st.seed), "noiseaware_seed_given": int(st.seed_given),
        "noiseaware_check_mixing": int(st.check_mixing), "noiseaware_part_seeds": seeds,
        "noiseaware_parts": list(release.units[0]),
        "noiseaware_part_seconds": [float(o.seconds) for o in ordered],
        "noiseaware_part_workers": [str(o.worker) for o in ordered],
        "noiseaware_split_exact": int(prior == "uniform"),
    })
    if st.check_mixing:
        check_stitched_mixing(result, owner=_H_OWNER)
    return result
