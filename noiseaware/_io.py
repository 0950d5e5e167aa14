"""Safe file input and output for releases and the command line (private).

Four guards against careless users and attackers:

* :func:`atomic_write_text` -- write a file all at once or not at all, never over an existing
  file unless asked to, never over a protected input (the confidential CSV a release was made from),
  never over anything but a regular file (a device, a FIFO, a socket, a symbolic link), not even
  when asked to.
* :func:`read_text_limited` -- read a bounded amount of strict UTF-8.
* :func:`loads_limited` -- parse JSON with bounded nesting, no NaN/Infinity, bounded integers
  and no duplicate keys, every failure a :class:`~noiseaware.exceptions.ReleaseFormatError`.
* :func:`printable` -- neutralize terminal control characters in labels before printing them.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import pathlib
import re
import stat
import tempfile
from collections.abc import Callable, Sequence
from typing import IO, Any

from ._validation import current_owner
from .exceptions import NoiseawareTypeError, NoiseawareValueError, OutputExistsError, ReleaseFormatError

__all__ = [
    "MAX_RELEASE_BYTES",
    "JSONRecord",
    "atomic_write",
    "atomic_write_text",
    "check_output",
    "is_json_text",
    "load_json_source",
    "loads_limited",
    "printable",
    "read_text_limited",
    "write_figure",
]

#: Integers with more decimal digits than this are refused by :func:`loads_limited` (int64 has 19).
_MAX_INT_DIGITS = 40

#: The largest release file, in bytes, that ``Release.from_json`` reads -- and so the largest that
#: ``Release.to_json`` writes and ``privatize`` makes (it refuses, before charging any budget, a
#: release whose JSON could be larger). One limit for all three, read at call time.
MAX_RELEASE_BYTES = 256 * 2**20

PathLike = str | os.PathLike[str]


# ------------------------------------------------------------------------------------ writing
class JSONRecord:
    """A record that is a value: equal to another of its class, and hashed, by its :meth:`to_dict`.

    The base of the package's serialized records (:class:`~noiseaware.Release`,
    :class:`~noiseaware.hierarchy.NoisyHierarchy`): two records are equal when their JSON
    documents are, and the hash is that of the document with sorted keys.
    """

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON document (a dict of JSON values)."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True))


def _umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux ``/proc``)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: the classic read-and-restore
    os.umask(mask)
    return mask


def _same_file(a: PathLike, b: PathLike) -> bool:
    """True if ``a`` and ``b`` name the same file: ``os.path.samefile`` when both exist, else resolved paths."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one of them does not exist (or is not a valid path)
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _kind(mode: int) -> str | None:
    """What a file of ``st_mode`` ``mode`` is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    kinds = [
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ]
    return next((word for test, word in kinds if test(mode)), "not a regular file")


def _refuse_special(target: pathlib.Path) -> None:
    """Refuse an existing ``target`` that is anything but a regular file, whatever ``overwrite`` says.

    Replacing a device, a FIFO or a socket with a regular file breaks whatever used it (as root,
    ``-o /dev/null --force`` would break the machine), and writing into one instead is no better.
    A symbolic link is refused too, even one to a regular file: the atomic rename would replace the
    link itself, not the file it points to, and a link is how a path is pointed at a device.
    """
    try:
        mode = os.lstat(target).st_mode
    except (OSError, ValueError):  # missing (the ordinary case) or not a valid path: the write decides
        return
    kind = _kind(mode)
    if kind is None:
        return
    hint = (
        f"give the path of the file it points to ({os.path.realpath(target)}) or remove the link"
        if stat.S_ISLNK(mode)
        else "give the path of a regular file"
    )
    raise NoiseawareValueError(
        f"{current_owner()}: refusing to write {target}: it is {kind}, not a regular file, and it is never replaced, "
        f"not even with overwrite=True (CLI: --force); {hint}."
    )


def check_output(
    path: PathLike, *, overwrite: bool = False, protect: Sequence[PathLike] = ()
) -> pathlib.Path:
    """Refuse a protected input, anything but a regular file, or (unless ``overwrite``) an existing file.

    The checks of :func:`atomic_write_text`, also usable before long work so that it fails early.

    Raises
    ------
    NoiseawareTypeError
        If ``path`` is not a path.
    NoiseawareValueError
        If ``path`` is the same file as a path in ``protect``, or exists and is not a regular file
        (a directory, a device, a FIFO, a socket or a symbolic link), whatever ``overwrite`` says.
    OutputExistsError
        If ``path`` exists and ``overwrite`` is False.
    """
    owner = current_owner()
    if not isinstance(path, str | os.PathLike):
        raise NoiseawareTypeError(f"{owner}: the output path must be a str or os.PathLike; got {path!r}.")
    target = pathlib.Path(os.fspath(path))
    if not str(target).strip():
        raise NoiseawareValueError(f"{owner}: the output path must not be empty; got {os.fspath(path)!r}.")
    for inp in protect:
        if _same_file(target, inp):
            raise NoiseawareValueError(
                f"{owner}: refusing to write {target}: it is the input file {os.fspath(inp)}, and writing there "
                "would destroy the input. Choose another output path."
            )
    if target.is_dir():
        raise NoiseawareValueError(f"{owner}: refusing to write {target}: it is a directory. Give a file name.")
    _refuse_special(target)
    if not overwrite and os.path.lexists(target):
        raise OutputExistsError(
            f"{owner}: refusing to overwrite {target}: the file already exists; "
            "pass overwrite=True (CLI: --force) to replace it."
        )
    return target


def _fsync_dir(directory: pathlib.Path) -> None:
    """Flush a directory entry to disk where the OS allows it (POSIX); a no-op elsewhere."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(directory, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on directories
        pass
    finally:
        os.close(fd)


def atomic_write(
    path: PathLike,
    fill: Callable[[IO[bytes]], object],
    *,
    overwrite: bool = False,
    protect: Sequence[PathLike] = (),
    ) -> pathlib.Path:
    """Write a file atomically: ``fill`` writes into a temporary file that then replaces ``path``.

    The engine of :func:`atomic_write_text`, for writers that need a binary file object (e.g.
    ``Figure.savefig``). Same checks, same guarantees, same errors.
    """
    target = check_output(path, overwrite=overwrite, protect=protect)
    directory = target.parent
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # what open() would have created
        # the same checks again, just before the file appears, then the no-clobber move
        check_output(target, overwrite=overwrite, protect=protect)
        if overwrite:
            os.replace(tmp, target)
        else:
            try:
                os.link(tmp, target)  # atomic and refuses an existing target, even one created meanwhile
            except FileExistsError:
                raise OutputExistsError(
                    f"{current_owner()}: refusing to overwrite {target}: the file already exists; "
                    "pass overwrite=True (CLI: --force) to replace it."
                ) from None
            except OSError:  # no hard links here (FAT, some network file systems): checked above, replace
                os.replace(tmp, target)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        tmp = None
    except OSError as exc:
        if isinstance(exc, OutputExistsError):
            raise
        reason = exc.strerror or str(exc)
        kept = f"; the existing {target} was left unchanged" if os.path.lexists(target) else ""
        raise OSError(exc.errno, f"{current_owner()}: could not write {target} ({reason}){kept}.") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _fsync_dir(directory)
    return target


def atomic_write_text(
    path: str | os.PathLike[str],
    text: str,
    *,
    overwrite: bool = False,
    protect: Sequence[str | os.PathLike[str]] = (),
    ) -> pathlib.Path:
    r"""Write ``text`` as UTF-8 to ``path`` all at once or not at all.

    The text goes to a temporary file in the same directory (``tempfile.mkstemp``), is flushed and
    ``fsync``-ed, and only then moved onto ``path`` (``os.replace``; without ``overwrite`` a hard
    link, which cannot clobber a file created meanwhile); the directory is ``fsync``-ed where the
    OS allows. On any failure -- a full disk, a permission error, an interrupt -- the temporary
    file is removed and an existing ``path`` is left byte for byte as it was. The new file gets the
    mode ``open()`` would give it (``0o666`` minus the umask); nothing else is preserved.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write. Its directory must exist.
    text : str
        The content, written as UTF-8 exactly as given (no newline is added).
    overwrite : bool, default False
        Replace an existing regular file. Without it an existing file is refused. Anything else at
        ``path`` -- a directory, a character or block device (``/dev/null``), a FIFO, a socket, a
        symbolic link (even one to a regular file: the rename would replace the link, not the file
        it points to) -- is refused even with it.
    protect : sequence of str or os.PathLike
        Inputs that must never be written over, not even with ``overwrite`` (e.g. the data a
        release was computed from). Compared with ``os.path.samefile`` when both exist (so a
        symbolic link, hard link or relative path to an input is caught) and as resolved paths
        otherwise.

    Returns
    -------
    pathlib.Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    OutputExistsError
        If ``path`` exists and ``overwrite`` is False (also a ``FileExistsError``).
    NoiseawareValueError
        If ``path`` is a file in ``protect``, exists and is not a regular file (a directory, a
        device, a FIFO, a socket, a symbolic link), or ``text`` cannot be encoded.
    NoiseawareTypeError
        If ``text`` is not a ``str`` or ``path`` not a path.
    OSError
        If writing fails (e.g. ``ENOSPC``, no space left on device); the ``errno`` is kept and the
        message names the path and says an existing file was left unchanged.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = atomic_write_text(pathlib.Path(d) / "r.json", '{"a": 1}\n')
    ...     print(out.read_text(), end="")
    ...     try:
    ...         atomic_write_text(out, "{}")
    ...     except FileExistsError as exc:
    ...         print(type(exc).__name__)
    ...     _ = atomic_write_text(out, "{}", overwrite=True)
    ...     print(out.read_text())
    {"a": 1}
    OutputExistsError
    {}
    """
    if not isinstance(text, str):
        raise NoiseawareTypeError(f"{current_owner()}: the text to write must be a str; got a {type(text).__name__}.")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise NoiseawareValueError(
            f"{current_owner()}: the text cannot be written as UTF-8 (character {exc.start}: {exc.reason})."
        ) from None
    return atomic_write(path, lambda fh: fh.write(data), overwrite=overwrite, protect=protect)


def write_figure(
    fig: Any, path: PathLike, *, dpi: int = 100, close: bool = False
) -> pathlib.Path:
    """Save a matplotlib figure to ``path`` through :func:`atomic_write` (format from the suffix).

    An existing regular file is replaced, as ``Figure.savefig`` would; anything else at ``path`` (a
    device, a FIFO, a socket, a symbolic link, a directory) is refused.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    path : str or os.PathLike
        The file to write; its suffix picks the format (``.png``, ``.pdf``, ``.svg``; none: PNG).
    dpi : int, default 100
        Resolution of raster formats.
    close : bool, default False
        Close the figure afterwards (``matplotlib.pyplot.close``), also when writing fails.

    Returns
    -------
    pathlib.Path
        ``path`` as a :class:`~pathlib.Path`.
    """
    fmt = pathlib.Path(os.fspath(path)).suffix[1:].lower() or "png"
    try:
        return atomic_write(path, lambda fh: fig.savefig(fh, format=fmt, dpi=dpi), overwrite=True)
    finally:
        if close:
            import matplotlib.pyplot as plt

            plt.close(fig)


# ------------------------------------------------------------------------------------ reading
def read_text_limited(
    source: str | os.PathLike[str], *, max_bytes: int | None = None
) -> str:
    r"""Read a file of at most ``max_bytes`` bytes as strict UTF-8.

    The size is checked with ``stat`` before reading, and no more than ``max_bytes + 1`` bytes are
    ever read (so a device or a file that grows cannot exhaust memory).

    Parameters
    ----------
    source : str or os.PathLike
        The file to read.
    max_bytes : int, optional
        The largest file accepted; default :data:`MAX_RELEASE_BYTES` (256 MiB).

    Returns
    -------
    str
        The decoded text (a UTF-8 byte-order mark, if any, is kept).

    Raises
    ------
    ReleaseFormatError
        If the file is larger than ``max_bytes`` or is not valid UTF-8 (the message names the
        byte offset).
    NoiseawareTypeError
        If ``source`` is not a path.
    OSError
        If the file cannot be opened or read (missing, a directory, no permission).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d) / "r.json"
    ...     _ = p.write_bytes(b'{"label": "caf\xc3\xa9"}')
    ...     print(read_text_limited(p))
    ...     _ = p.write_bytes(b'{"label": "caf\xe9"}')
    ...     try:
    ...         read_text_limited(p)
    ...     except ReleaseFormatError as exc:
    ...         print(str(exc).split("r.json ", 1)[1])
    {"label": "café"}
    is not valid UTF-8 at byte 14 (0xe9: invalid continuation byte); save the file as UTF-8.
    """
    owner = current_owner()
    if not isinstance(source, str | os.PathLike):
        raise NoiseawareTypeError(f"{owner}: source must be a path; got {source!r}.")
    if max_bytes is None:
        max_bytes = MAX_RELEASE_BYTES
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise NoiseawareValueError(f"{owner}: max_bytes must be an integer >= 0; got max_bytes={max_bytes!r}.")
    name = os.fspath(source)
    too_big = f"{owner}: {name} is larger than the limit of {max_bytes} bytes; is it really a release?"
    with open(source, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise ReleaseFormatError(f"{too_big} (it has {size} bytes)")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ReleaseFormatError(too_big)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReleaseFormatError(
            f"{owner}: {name} is not valid UTF-8 at byte {exc.start} (0x{data[exc.start]:02x}: {exc.reason}); "
            "save the file as UTF-8."
        ) from None


# ------------------------------------------------------------------------------------ parsing
#: A JSON string (skipped whole, escapes included) or a bracket.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


def is_json_text(source: str) -> bool:
    """Whether ``source`` is JSON text, not a path: it starts with ``{``, unless a path by name or by existence.

    A ``str`` is a path when it ends with ``.json`` (any case, surrounding whitespace aside) or
    names an existing file; otherwise it is JSON text when it starts with ``{``.

    Examples
    --------
    >>> is_json_text('  {"statistic": "counts"}  '), is_json_text("{not json"), is_json_text("{run}.json")
    (True, True, False)
    """
    text = source.strip()
    if not text.startswith("{") or text.lower().endswith(".json"):
        return False
    return not os.path.isfile(source)


def load_json_source(source: str | os.PathLike[str]) -> Any:
    """Parse a record from a JSON file path or from JSON text (:func:`is_json_text`), with bounded resources.

    Text and files alike: at most :data:`MAX_RELEASE_BYTES`, strict UTF-8 for files, and
    :func:`loads_limited`'s bounds on the JSON.

    Raises
    ------
    ReleaseFormatError
        Text or a file over the limit, a file that is not UTF-8, or invalid JSON.
    NoiseawareTypeError
        If ``source`` is neither a path nor a string.
    """
    if isinstance(source, str) and is_json_text(source):
        limit = MAX_RELEASE_BYTES
        size = len(source) if len(source) > limit else len(source.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise ReleaseFormatError(
                f"{current_owner()}: the JSON text is larger than the limit of {limit} bytes "
                f"(it has at least {size}); is it really a release?"
            )
        text = source
    elif isinstance(source, str | os.PathLike):
        text = read_text_limited(source)
    else:
        raise NoiseawareTypeError(f"{current_owner()}: source must be a path or JSON text; got {source!r}.")
    return loads_limited(text)


def _check_depth(text: str, max_depth: int) -> None:
    """Refuse nesting deeper than ``max_depth``, by a linear scan that skips string contents."""
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > max_depth:
                raise ReleaseFormatError(
                    f"{current_owner()}: JSON nested deeper than {max_depth} levels (at character {m.start()}); "
                    "a release is never nested this deep."
                )
        elif c in "]}":
            depth -= 1


def loads_limited(text: str, *, max_depth: int = 64) -> Any:
    """Parse JSON text defensively.

    Like :func:`json.loads`, but every way the text can be hostile becomes a
    :class:`~noiseaware.exceptions.ReleaseFormatError` with a clear message instead of a
    ``RecursionError``, a ``ValueError`` or a silent NaN:

    * nesting deeper than ``max_depth`` is refused *before* parsing (a linear scan of the
      brackets outside strings), so the parser never recurses deeply;
    * the constants ``NaN``, ``Infinity`` and ``-Infinity`` are refused, and so are numbers that
      overflow to infinity (``1e400``);
    * integers with more than 40 digits are refused (int64 needs at most 19);
    * an object with a repeated key is refused (parsers differ on which value wins);
    * invalid JSON is reported with its line and column.

    Parameters
    ----------
    text : str
        The JSON text.
    max_depth : int, default 64
        The deepest nesting of arrays and objects accepted.

    Returns
    -------
    Any
        The parsed value (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool`` or ``None``).

    Raises
    ------
    ReleaseFormatError
        For any of the cases above.
    NoiseawareTypeError
        If ``text`` is not a ``str``.

    Examples
    --------
    >>> loads_limited('{"values": [1, 2.5], "secure": true}')
    {'values': [1, 2.5], 'secure': True}
    >>> from noiseaware._validation import owner_scope
    >>> for hostile in ["[" * 100_000 + "]" * 100_000, '{"scale": NaN}', '{"n": 1' + 400 * "0" + "}"]:
    ...     try:
    ...         with owner_scope("Release.from_json"):
    ...             loads_limited(hostile)
    ...     except ReleaseFormatError as exc:
    ...         print(exc)
    Release.from_json: JSON nested deeper than 64 levels (at character 64); a release is never
      nested this deep.
    Release.from_json: the JSON constant NaN is not allowed; a release holds finite numbers only.
    Release.from_json: an integer with 401 digits is too large (at most 40 digits; int64 holds 19).
    """
    owner = current_owner()
    if not isinstance(text, str):
        raise NoiseawareTypeError(f"{owner}: the JSON text must be a str; got a {type(text).__name__}.")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
        raise NoiseawareValueError(f"{owner}: max_depth must be an integer >= 1; got max_depth={max_depth!r}.")
    _check_depth(text, max_depth)

    def parse_constant(name: str) -> Any:
        raise ReleaseFormatError(
            f"{owner}: the JSON constant {name} is not allowed; a release holds finite numbers only."
        )

    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > _MAX_INT_DIGITS:
            raise ReleaseFormatError(
                f"{owner}: an integer with {len(digits.lstrip('-'))} digits is too large "
                f"(at most {_MAX_INT_DIGITS} digits; int64 holds 19)."
            )
        return int(digits)

    def parse_float(literal: str) -> float:
        val = float(literal)
        if not math.isfinite(val):
            shown = literal if len(literal) <= 30 else literal[:27] + "..."
            raise ReleaseFormatError(f"{owner}: the number {shown} overflows a 64-bit float.")
        return val

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, val in pairs:
            if key in out:
                raise ReleaseFormatError(f"{owner}: the key {key!r} appears twice in one JSON object.")
            out[key] = val
        return out

    try:
        return json.loads(
            text,
            parse_constant=parse_constant,
            parse_int=parse_int,
            parse_float=parse_float,
            object_pairs_hook=no_duplicates,
        )
    except json.JSONDecodeError as exc:
        raise ReleaseFormatError(
            f"{owner}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})."
        ) from None
    except RecursionError:  # cannot happen after the depth check; kept so that it never escapes
        raise ReleaseFormatError(f"{owner}: JSON nested too deeply to parse.") from None


# ----------------------------------------------------------------------------------- printing
#: C0 controls, DEL, C1 controls, lone surrogates, line/paragraph separators and the bidirectional
#: overrides and isolates ("Trojan Source", CVE-2021-42574) that can make a label print as another.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    r"""Make a label safe to print on a terminal.

    Control characters (C0 including newline and tab, DEL, C1), lone surrogates, the line and
    paragraph separators and the bidirectional-override characters are replaced by visible
    escapes (``\x1b``, ``\u202e``), so an escape sequence in a column name cannot recolour,
    move the cursor, clear the screen or forge extra lines. Letters of any script, digits,
    punctuation, symbols and spaces are left alone. The result has no characters that
    ``printable`` changes, so applying it twice is the same as once.

    Parameters
    ----------
    text : str
        The text to print (a label, a column name, a path).

    Returns
    -------
    str
        ``text`` with each unsafe character replaced by its escape.

    Examples
    --------
    >>> printable("\x1b[31mred")
    '\\x1b[31mred'
    >>> printable("x1 × Größe, ε")
    'x1 × Größe, ε'
    >>> print(printable("two\nlines\x07"))
    two\x0alines\x07
    """
    return _UNPRINTABLE.sub(_escape, str(text))
