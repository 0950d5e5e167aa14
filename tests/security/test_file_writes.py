"""File safety (issue 11): atomic writes that never clobber, bounded reads, hostile JSON, terminal escapes."""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import sys

import pytest

from noiseaware import _io
from noiseaware._io import atomic_write_text, loads_limited, printable, read_text_limited
from noiseaware.exceptions import (
    NoiseawareError,
    NoiseawareTypeError,
    NoiseawareValueError,
    OutputExistsError,
    ReleaseFormatError,
)

GOOD = '{"schema": "noiseaware.release", "values": [1, -2, 3]}\n'


def _listing(directory):
    return sorted(p.name for p in directory.iterdir())


# ----------------------------------------------------------------------------- atomic_write_text
def test_happy_path_writes_exactly_the_text(tmp_path) -> None:
    text = '{"labels": [["café", "Größe ε"]]}\n\n  trailing'
    out = atomic_write_text(tmp_path / "r.json", text)
    assert out == tmp_path / "r.json"
    assert out.read_bytes() == text.encode("utf-8")
    assert _listing(tmp_path) == ["r.json"]  # no temporary file left behind


def test_new_file_gets_the_mode_open_would_give(tmp_path) -> None:
    old = os.umask(0o027)
    try:
        out = atomic_write_text(tmp_path / "r.json", GOOD)
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o640


def test_relative_path_writes_in_the_working_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    atomic_write_text("r.json", GOOD)
    assert (tmp_path / "r.json").read_text() == GOOD


def test_existing_target_refused_by_default_and_replaced_with_overwrite(tmp_path) -> None:
    target = tmp_path / "r.json"
    target.write_bytes(b"old release")
    with pytest.raises(OutputExistsError, match=r"r\.json.*already exists.*overwrite=True \(CLI: --force\)") as exc:
        atomic_write_text(target, GOOD)
    assert isinstance(exc.value, FileExistsError) and isinstance(exc.value, NoiseawareError)
    assert target.read_bytes() == b"old release"
    assert _listing(tmp_path) == ["r.json"]
    atomic_write_text(target, GOOD, overwrite=True)
    assert target.read_text() == GOOD
    assert _listing(tmp_path) == ["r.json"]


@pytest.mark.parametrize("overwrite", [False, True])
def test_dangling_symlink_is_refused_and_not_written_through(tmp_path, overwrite) -> None:
    link = tmp_path / "r.json"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(NoiseawareValueError, match="is a symbolic link, not a regular file"):
        atomic_write_text(link, GOOD, overwrite=overwrite)
    assert not (tmp_path / "nowhere").exists()
    assert link.is_symlink()


def test_no_clobber_holds_even_if_the_file_appears_during_the_write(tmp_path, monkeypatch) -> None:
    """Between the check and the move another process creates the target: still refused, still intact."""
    target = tmp_path / "r.json"
    real_fsync = os.fsync

    def racing_fsync(fd):
        real_fsync(fd)
        if not target.exists():
            target.write_bytes(b"written meanwhile")

    monkeypatch.setattr(_io.os, "fsync", racing_fsync)
    with pytest.raises(OutputExistsError):
        atomic_write_text(target, GOOD)
    assert target.read_bytes() == b"written meanwhile"
    assert _listing(tmp_path) == ["r.json"]


def test_without_hard_links_it_falls_back_to_replace(tmp_path, monkeypatch) -> None:
    def no_links(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(_io.os, "link", no_links)
    atomic_write_text(tmp_path / "r.json", GOOD)
    assert (tmp_path / "r.json").read_text() == GOOD
    assert _listing(tmp_path) == ["r.json"]


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("how", ["same path", "symlink to it", "relative path", "hard link"])
def test_protected_input_is_refused_even_with_overwrite(tmp_path, monkeypatch, overwrite, how) -> None:
    data = tmp_path / "data.csv"
    secret = b"name,salary\nalice,123456\n"
    data.write_bytes(secret)
    if how == "same path":
        target = data
    elif how == "symlink to it":
        target = tmp_path / "out.json"
        target.symlink_to(data)
    elif how == "hard link":
        target = tmp_path / "out.json"
        os.link(data, target)
    else:
        (tmp_path / "sub").mkdir()
        monkeypatch.chdir(tmp_path / "sub")
        target = os.path.join("..", "data.csv")
    with pytest.raises(NoiseawareValueError, match=r"would destroy the input") as exc:
        atomic_write_text(target, GOOD, overwrite=overwrite, protect=[str(data)])
    assert not isinstance(exc.value, FileExistsError)  # --force is not the fix
    assert data.read_bytes() == secret


def test_protect_compares_resolved_paths_when_the_target_does_not_exist(tmp_path, monkeypatch) -> None:
    """A protected input that is not there yet (or was deleted) still matches by its resolved path."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NoiseawareValueError, match="would destroy the input"):
        atomic_write_text("./x/../r.json", GOOD, protect=[tmp_path / "r.json"])
    assert _listing(tmp_path) == []
    atomic_write_text("r.json", GOOD, protect=[tmp_path / "data.csv"])  # a different input: fine
    assert (tmp_path / "r.json").read_text() == GOOD


@pytest.mark.parametrize("overwrite", [False, True])
def test_directory_target_is_refused(tmp_path, overwrite) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(NoiseawareValueError, match="is a directory"):
        atomic_write_text(tmp_path / "d", GOOD, overwrite=overwrite)
    assert _listing(tmp_path / "d") == []


# ------------------------------------------------------------- never over anything but a regular file
def _special(tmp_path, kind):
    """A FIFO, a character device (``mknod``, root only) or a socket made in ``tmp_path``, never under /dev."""
    path = tmp_path / f"{kind}.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "char device":
        try:  # a node with /dev/null's numbers, made here: writing it is harmless, replacing it is the bug
            os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        except (PermissionError, AttributeError):
            pytest.skip("mknod needs root (CAP_MKNOD)")
    else:
        if len(str(path)) > 100:  # AF_UNIX paths are limited to about 107 bytes
            pytest.skip("tmp_path too long for a Unix socket")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        sock.close()
    return path


SPECIAL = {"fifo": stat.S_ISFIFO, "char device": stat.S_ISCHR, "socket": stat.S_ISSOCK}
WORDS = {"fifo": "a FIFO", "char device": "a character device", "socket": "a socket"}


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_special_files_are_never_replaced_even_with_overwrite(tmp_path, kind, overwrite) -> None:
    """The audit case ``-o /dev/null --force``, on nodes made in a temporary directory."""
    path = _special(tmp_path, kind)
    with pytest.raises(NoiseawareValueError, match=f"is {WORDS[kind]}.*not a regular file.*not even with") as exc:
        atomic_write_text(path, GOOD, overwrite=overwrite)
    assert not isinstance(exc.value, FileExistsError)  # --force is not the fix
    assert SPECIAL[kind](os.lstat(path).st_mode)  # still the node it was
    assert _listing(tmp_path) == [path.name]  # and no temporary file left


def test_release_to_json_never_replaces_a_fifo(tmp_path) -> None:
    import numpy as np

    import noiseaware as na

    rel = na.privatize(np.arange(5), "counts", epsilon=1.0, sensitivity=1)
    fifo = _special(tmp_path, "fifo")
    with pytest.raises(NoiseawareValueError, match=r"Release\.to_json: refusing to write .*FIFO"):
        rel.to_json(fifo, overwrite=True)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_symlink_to_a_regular_file_is_refused_even_with_overwrite(tmp_path) -> None:
    """Policy: a link is not written through (the rename would replace the link, not its file)."""
    real = tmp_path / "real.json"
    real.write_bytes(b"old release")
    link = tmp_path / "r.json"
    link.symlink_to(real)
    with pytest.raises(NoiseawareValueError, match=r"symbolic link.*real\.json\) or remove the link"):
        atomic_write_text(link, GOOD, overwrite=True)
    assert link.is_symlink() and real.read_bytes() == b"old release"
    atomic_write_text(real, GOOD, overwrite=True)  # the file itself, named directly: replaced
    assert real.read_text() == GOOD


def test_write_figure_refuses_a_fifo_and_writes_a_regular_file(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig = plt.figure()
    try:
        fifo = _special(tmp_path, "fifo")
        with pytest.raises(NoiseawareValueError, match="FIFO"):
            _io.write_figure(fig, fifo)
        out = _io.write_figure(fig, tmp_path / "f.png")
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        plt.close(fig)


def _fail_with_enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_full_disk_leaves_the_previous_file_byte_identical_and_no_temp_file(tmp_path, monkeypatch, where) -> None:
    """The audit case: a good release must never become a truncated, invalid file."""
    target = tmp_path / "r.json"
    previous = (json.dumps({"values": list(range(300))}, indent=2) + "\n").encode()
    target.write_bytes(previous)
    if where == "write":
        real_fdopen = os.fdopen

        class FullDisk:
            def __init__(self, fh):
                self._fh = fh

            def write(self, data):
                self._fh.write(data[:100])  # a partial write, then the disk is full
                _fail_with_enospc()

            def __getattr__(self, name):
                return getattr(self._fh, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self._fh.close()

        monkeypatch.setattr(_io.os, "fdopen", lambda fd, mode: FullDisk(real_fdopen(fd, mode)))
    else:
        monkeypatch.setattr(_io.os, where, _fail_with_enospc)
    with pytest.raises(OSError, match=r"could not write .*r\.json \(No space left on device\).*left unchanged") as exc:
        atomic_write_text(target, GOOD * 500, overwrite=True)
    assert exc.value.errno == errno.ENOSPC
    assert target.read_bytes() == previous
    assert _listing(tmp_path) == ["r.json"]


def test_failure_on_a_new_file_leaves_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(_io.os, "fsync", _fail_with_enospc)
    with pytest.raises(OSError, match="No space left on device") as exc:
        atomic_write_text(tmp_path / "r.json", GOOD)
    assert "left unchanged" not in str(exc.value)
    assert _listing(tmp_path) == []


def test_interrupt_during_write_removes_the_temp_file(tmp_path, monkeypatch) -> None:
    target = tmp_path / "r.json"
    target.write_bytes(b"old")

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(_io.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, GOOD, overwrite=True)
    assert target.read_bytes() == b"old"
    assert _listing(tmp_path) == ["r.json"]


def test_missing_directory_is_a_clean_oserror(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=r"could not write .*r\.json"):
        atomic_write_text(tmp_path / "no" / "r.json", GOOD)


@pytest.mark.parametrize(
    ("path", "text", "exc"),
    [(None, GOOD, NoiseawareTypeError), ("r.json", b"bytes", NoiseawareTypeError), ("", GOOD, NoiseawareValueError),
     ("r.json", "lone \ud800 surrogate", NoiseawareValueError)],
)
def test_bad_arguments(tmp_path, monkeypatch, path, text, exc) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(exc):
        atomic_write_text(path, text)
    assert _listing(tmp_path) == []


# ----------------------------------------------------------------------------- read_text_limited
def test_read_text_limited_reads_utf8(tmp_path) -> None:
    p = tmp_path / "r.json"
    p.write_bytes('{"label": "Größe ε"}'.encode())
    assert read_text_limited(p) == '{"label": "Größe ε"}'


def test_read_text_limited_names_the_byte_offset_of_bad_utf8(tmp_path) -> None:
    p = tmp_path / "r.json"
    p.write_bytes(b'{"label": "ok", "x": "\xff\xfe"}')
    with pytest.raises(ReleaseFormatError, match=r"not valid UTF-8 at byte 22 \(0xff"):
        read_text_limited(p)


def test_read_text_limited_refuses_large_files(tmp_path) -> None:
    p = tmp_path / "big.json"
    p.write_bytes(b" " * 1001)
    with pytest.raises(ReleaseFormatError, match=r"larger than the limit of 1000 bytes.*1001 bytes"):
        read_text_limited(p, max_bytes=1000)
    assert read_text_limited(p, max_bytes=1001) == " " * 1001


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_read_text_limited_never_reads_more_than_the_limit_from_a_device() -> None:
    with pytest.raises(ReleaseFormatError, match="larger than the limit of 4096 bytes"):
        read_text_limited("/dev/zero", max_bytes=4096)


def test_read_text_limited_missing_file_is_oserror(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        read_text_limited(tmp_path / "missing.json")


# --------------------------------------------------------------------------------- loads_limited
def test_loads_limited_parses_ordinary_json() -> None:
    text = '{"a": [1, -2, 3.5, 1e-300], "s": "[[[{{{\\"]]]", "t": true, "n": null, "big": 9223372036854775807}'
    assert loads_limited(text) == json.loads(text)


def test_loads_limited_refuses_deep_nesting_before_parsing() -> None:
    with pytest.raises(ReleaseFormatError, match="nested deeper than 64 levels"):
        loads_limited("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ReleaseFormatError, match="nested deeper than 64 levels"):
        loads_limited('{"a":' * 100_000 + "1" + "}" * 100_000)
    deep = "[" * 64 + "]" * 64
    assert loads_limited(deep) == json.loads(deep)
    with pytest.raises(ReleaseFormatError, match="nested deeper than 3 levels"):
        loads_limited("[[[[]]]]", max_depth=3)


def test_loads_limited_depth_scan_skips_strings_and_escapes() -> None:
    text = json.dumps({"label": "[" * 1000 + '\\"' + "{" * 1000, "other": '"]]]'})
    assert loads_limited(text) == json.loads(text)


@pytest.mark.parametrize("const", ["NaN", "Infinity", "-Infinity"])
def test_loads_limited_refuses_non_finite_constants(const) -> None:
    with pytest.raises(ReleaseFormatError, match=f"constant {const} is not allowed"):
        loads_limited(f'{{"values": [1, {const}]}}')


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1" * 400 + ".0"])
def test_loads_limited_refuses_floats_that_overflow(number) -> None:
    with pytest.raises(ReleaseFormatError, match="overflows a 64-bit float"):
        loads_limited(f"[{number}]")


@pytest.mark.parametrize("digits", [41, 400, 5000, 100_000])
def test_loads_limited_refuses_huge_integers(digits) -> None:
    with pytest.raises(ReleaseFormatError, match=f"integer with {digits} digits is too large"):
        loads_limited('{"n": -' + "9" * digits + "}")
    assert loads_limited("[" + "9" * 40 + "]") == [int("9" * 40)]


def test_loads_limited_refuses_duplicate_keys() -> None:
    with pytest.raises(ReleaseFormatError, match="key 'secure' appears twice"):
        loads_limited('{"secure": false, "values": [1], "secure": true}')


@pytest.mark.parametrize("text", ["{not json", "", '{"a": 1} trailing', "\ufeff{}", '["\x01"]'])
def test_loads_limited_reports_invalid_json_with_position(text) -> None:
    with pytest.raises(ReleaseFormatError, match=r"not valid JSON \(.* at line \d+, column \d+\)"):
        loads_limited(text)


def test_loads_limited_never_raises_anything_but_release_format_error() -> None:
    hostile = ["[" * 10**6, "]" * 10**6, '"' * 10**5, "[1e999999]", '{"a": 1' + "0" * 10**5 + "}"]
    for text in hostile:
        with pytest.raises(ReleaseFormatError):
            loads_limited(text)


def test_loads_limited_rejects_non_str() -> None:
    with pytest.raises(NoiseawareTypeError):
        loads_limited(b"{}")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------- printable
def test_printable_escapes_terminal_controls() -> None:
    assert printable("\x1b[31mred") == "\\x1b[31mred"
    assert printable("a\nb\tc\rd\x00e\x07f\x7fg\x9bh") == "a\\x0ab\\x09c\\x0dd\\x00e\\x07f\\x7fg\\x9bh"
    assert printable("\x1b]0;title\x07") == "\\x1b]0;title\\x07"  # OSC: set window title
    assert printable("abc\u202edcba") == "abc\\u202edcba"  # right-to-left override
    assert printable("lone \ud800") == "lone \\ud800"  # cannot even be encoded for the terminal


def test_printable_leaves_ordinary_text_alone() -> None:
    text = "x1 × y2, Größe, ε = 1, 東京, العربية, emoji 🎲, back\\slash, tab-less"
    assert printable(text) == text


def test_printable_is_idempotent_and_its_output_has_no_controls() -> None:
    text = "".join(chr(c) for c in range(0x00, 0x2100)) + "\ud800\U0001f3b2"
    once = printable(text)
    assert printable(once) == once
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in once)
    once.encode(sys.getdefaultencoding())  # no lone surrogates left
