"""The command line against hostile or careless input (issue 11): one-line errors, no clobbering, no escapes.

Every case runs ``noiseaware.cli.main`` in-process. A bad *argument* exits through argparse
(``SystemExit(2)``); a bad *file* makes ``main`` return 2. Either way stderr holds exactly one line,
``noiseaware: error: ...``, and no traceback.
"""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pandas as pd
import pytest

import noiseaware as na
from noiseaware.cli import main

ESC = "\x1b"


def _run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse
        return int(exc.code or 0)


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("noiseaware: error: ") and "\n" not in err, captured.err
    assert "Traceback" not in captured.err + captured.out
    assert ESC not in captured.err + captured.out
    return err, captured.out


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "data.csv"
    df = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 3)).round(6), columns=["a", "b", "c"])
    df.to_csv(path, index=False)
    return path


@pytest.fixture
def release_text() -> str:
    """A genuine secure release (noise from OpenDP; no rng) to mutate into hostile files."""
    rel = na.privatize(np.random.default_rng(0).normal(size=(50, 3)), statistic="median_pairs", epsilon=1.0)
    return rel.to_json()


# ---------------------------------------------------------------------------------- writing
@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.parametrize("how", ["same path", "relative path", "symlink"])
def test_release_never_writes_over_its_input_csv(capsys, tmp_path, monkeypatch, csv, force, how) -> None:
    before = csv.read_bytes()
    if how == "same path":
        out = str(csv)
    elif how == "relative path":
        (tmp_path / "sub").mkdir()
        monkeypatch.chdir(tmp_path / "sub")
        out = os.path.join("..", "sub", "..", "data.csv")
    else:
        link = tmp_path / "out.json"
        link.symlink_to(csv)
        out = str(link)
    assert _run(["release", str(csv), "--epsilon", "1", "-o", out, *force]) == 2
    err, stdout = _one_line_error(capsys)
    assert "would destroy the input" in err
    assert stdout == ""  # refused before any work
    assert csv.read_bytes() == before


def test_release_refuses_an_existing_output_without_force_and_replaces_it_with_force(capsys, tmp_path, csv) -> None:
    out = tmp_path / "r.json"
    out.write_bytes(b"an earlier release")
    assert _run(["release", str(csv), "--epsilon", "1", "-o", str(out)]) == 2
    err, _ = _one_line_error(capsys)
    assert "already exists" in err and "--force" in err
    assert out.read_bytes() == b"an earlier release"
    assert _run(["release", str(csv), "--epsilon", "1", "-o", str(out), "--force"]) == 0
    assert json.loads(out.read_text())["statistic"] == "median_pairs"
    assert "wrote" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "r.json"]  # no temporary file left


def test_release_output_in_a_missing_directory_is_one_line(capsys, tmp_path, csv) -> None:
    assert _run(["release", str(csv), "--epsilon", "1", "-o", str(tmp_path / "no" / "r.json")]) == 2
    err, _ = _one_line_error(capsys)
    assert "r.json" in err and "Errno" not in err


def test_release_output_that_is_a_directory_is_one_line(capsys, tmp_path, csv) -> None:
    assert _run(["release", str(csv), "--epsilon", "1", "-o", str(tmp_path), "--force"]) == 2
    assert "is a directory" in _one_line_error(capsys)[0]


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_release_output_that_is_a_fifo_is_never_replaced(capsys, tmp_path, csv, force) -> None:
    """``-o /dev/null --force`` on a node made here (a FIFO; never a path under /dev): refused before any work."""
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    assert _run(["release", str(csv), "--epsilon", "1", "-o", str(fifo), *force]) == 2
    err, stdout = _one_line_error(capsys)
    assert "is a FIFO (named pipe), not a regular file" in err and stdout == ""
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_fit_plot_never_writes_over_the_release(capsys, tmp_path, release_text) -> None:
    path = tmp_path / "r.json"
    path.write_text(release_text)
    assert _run(["fit", str(path), "--plot", str(path), "--force", "--no-progress"]) == 2
    assert "would destroy the input" in _one_line_error(capsys)[0]
    assert path.read_text() == release_text


def test_fit_plot_with_an_unknown_format_fails_before_sampling(capsys, tmp_path, release_text) -> None:
    path = tmp_path / "r.json"
    path.write_text(release_text)
    assert _run(["fit", str(path), "--plot", str(tmp_path / "fig.notaformat"), "--no-progress"]) == 2
    err, stdout = _one_line_error(capsys)
    assert "unknown figure format 'notaformat'" in err and stdout == ""


def test_demo_refuses_an_existing_output_before_any_work(capsys, tmp_path) -> None:
    out = tmp_path / "demo.json"
    out.write_bytes(b"keep me")
    assert _run(["demo", "-o", str(out), "--no-progress"]) == 2
    err, stdout = _one_line_error(capsys)
    assert "already exists" in err and stdout == ""
    assert out.read_bytes() == b"keep me"
    assert _run(["demo", "-o", str(tmp_path / "same.json"), "--plot", str(tmp_path / "same.json")]) == 2
    assert "would destroy the input" in _one_line_error(capsys)[0]


# ------------------------------------------------------------------------------ hostile CSV
@pytest.mark.parametrize(
    ("content", "expect"),
    [
        (b"", "is empty"),
        (b"a,b,c\n", "no records"),
        ("a,b\n1.5,2\ncaf\xe9,3\n".encode("latin-1"), "not UTF-8"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not UTF-8"),
        (b"a,b\n1,2\n3,4,5,6\n", "not a well-formed CSV"),
        (b"a,b\n1,x\n2,y\n", "non-numeric column(s) ['b']"),
        (b"a,b\n1,2\n3,nan\n", "finite"),
        (b"a,b\n1,99999999999999999999999999999999999999999\n2,3\n", "non-numeric"),
    ],
    ids=["empty", "header-only", "latin-1", "binary", "ragged", "text-column", "nan", "beyond-int64"],
)
def test_hostile_csv_is_one_line(capsys, tmp_path, content, expect) -> None:
    data = tmp_path / "data.csv"
    data.write_bytes(content)
    assert _run(["release", str(data), "--epsilon", "1", "-o", str(tmp_path / "r.json")]) == 2
    assert expect in _one_line_error(capsys)[0]
    assert not (tmp_path / "r.json").exists()
    assert data.read_bytes() == content


def test_missing_csv_is_one_line_without_errno(capsys, tmp_path) -> None:
    assert _run(["release", str(tmp_path / "nope.csv"), "--epsilon", "1", "-o", str(tmp_path / "r.json")]) == 2
    err, _ = _one_line_error(capsys)
    assert err == f"noiseaware: error: No such file or directory: {tmp_path / 'nope.csv'}"


def test_csv_column_names_with_escapes_are_printed_escaped(capsys, tmp_path) -> None:
    data = tmp_path / "data.csv"
    df = pd.DataFrame(np.random.default_rng(0).normal(size=(40, 3)), columns=[f"{ESC}[2Ja", f"b{ESC}]0;x\a", "c"])
    df.to_csv(data, index=False)
    out = tmp_path / "r.json"
    assert _run(["release", str(data), "--epsilon", "1", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert ESC not in captured.out + captured.err and "\a" not in captured.out
    assert "\\x1b[2Ja x b\\x1b]0;x\\x07" in captured.out
    assert json.loads(out.read_text())["labels"][0] == [f"{ESC}[2Ja", f"b{ESC}]0;x\a"]  # the data itself is kept


# --------------------------------------------------------------------------- hostile releases
def _hostile(tmp_path, release_text, kind: str):
    path = tmp_path / f"{kind}.json"
    if kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "deep-object":
        path.write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    elif kind == "deep-in-metadata":
        deep = "[" * 100_000 + "]" * 100_000
        path.write_text(release_text.replace('"metadata": {', '"metadata": {"x": ' + deep + ",", 1))
        assert path.read_text() != release_text
    elif kind == "non-utf8":
        path.write_bytes(release_text.replace('"x0"', '"x\udcff0"').encode("utf-8", "surrogateescape"))
    elif kind == "utf16":
        path.write_bytes(release_text.encode("utf-16"))
    elif kind == "nan":
        d = json.loads(release_text)
        path.write_text(release_text.replace(json.dumps(d["mechanism"]["scale"]), "NaN", 1))
    elif kind == "infinity":
        path.write_text(release_text.replace('"n": 50', '"n": Infinity', 1))
    elif kind == "huge-int":
        d = json.loads(release_text)
        first = d["values"][0]
        path.write_text(release_text.replace(f"\n    {first},", "\n    1" + "0" * 400 + ",", 1))
        assert path.read_text() != release_text
    elif kind == "huge-int-5000":
        path.write_text(release_text.replace('"n": 50', '"n": 1' + "0" * 5000, 1))
    elif kind == "int64-overflow":
        d = json.loads(release_text)
        first = d["values"][0]
        path.write_text(release_text.replace(f"\n    {first},", "\n    99999999999999999999,", 1))
        assert path.read_text() != release_text
    elif kind == "float-overflow":
        path.write_text(release_text.replace('"n": 50', '"n": 1e400', 1))
    elif kind == "not-json":
        path.write_text("{not json")
    elif kind == "array":
        path.write_text("[1, 2, 3]")
    elif kind == "empty":
        path.write_text("")
    elif kind == "directory":
        path.mkdir()
    elif kind == "missing":
        pass
    else:  # pragma: no cover
        raise AssertionError(kind)
    return path


HOSTILE = [
    "deep", "deep-object", "deep-in-metadata", "non-utf8", "utf16", "nan", "infinity", "huge-int", "huge-int-5000",
    "int64-overflow", "float-overflow", "not-json", "array", "empty", "directory", "missing",
]


@pytest.mark.parametrize("command", ["show", "fit"])
@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_release_file_is_one_line(capsys, tmp_path, release_text, command, kind) -> None:
    path = _hostile(tmp_path, release_text, kind)
    argv = [command, str(path)] + (["--no-progress"] if command == "fit" else [])
    assert _run(argv) == 2
    err, stdout = _one_line_error(capsys)
    assert stdout == ""
    assert len(err) < 1000  # the message quotes no megabytes of input


def test_the_untouched_release_is_fine(capsys, tmp_path, release_text) -> None:
    """The hostile files above are small edits of this one, which reads and prints."""
    path = tmp_path / "r.json"
    path.write_text(release_text)
    assert _run(["show", str(path)]) == 0
    assert "Release of 'median_pairs' (n=50)" in capsys.readouterr().out


def test_show_escapes_ansi_labels(capsys, tmp_path) -> None:
    rel = na.privatize(
        np.random.default_rng(0).normal(size=(50, 3)), statistic="median_pairs", epsilon=1.0,
        columns=[f"{ESC}[31ma", "b", "c"],
    )
    path = tmp_path / "r.json"
    rel.to_json(path)
    assert _run(["show", str(path)]) == 0
    captured = capsys.readouterr()
    assert ESC not in captured.out + captured.err
    assert "\\x1b[31ma x b" in captured.out


def test_show_escapes_labels_written_by_hand(capsys, tmp_path, release_text) -> None:
    """Labels edited in the JSON file (newline, bell, OSC title, bidi override) cannot forge or hide output."""
    d = json.loads(release_text)
    d["labels"][0] = ["a\n  guarantee : 0.0001-DP", "b\a\x1b]0;pwned\x07\u202e"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(d))
    rc = _run(["show", str(path)])
    captured = capsys.readouterr()
    assert ESC not in captured.out + captured.err and "\a" not in captured.out and "\u202e" not in captured.out
    assert "0.0001-DP" not in captured.out.replace("\\x0a  guarantee : 0.0001-DP", "")  # not on a line of its own
    if rc == 2:  # the loader may refuse labels that do not match the columns: then one line
        assert captured.err.startswith("noiseaware: error: ")
    else:
        assert rc == 0


def test_error_messages_escape_the_file_name(capsys, tmp_path) -> None:
    name = tmp_path / f"{ESC}[31mmissing.json"
    assert _run(["show", str(name)]) == 2
    err, _ = _one_line_error(capsys)
    assert "\\x1b[31mmissing.json" in err


# ------------------------------------------------------------------------------- arguments
@pytest.mark.parametrize("rows", ["-5", "-1", "1e3", "9" * 5000])
def test_show_rows_must_be_a_nonnegative_integer(capsys, tmp_path, release_text, rows) -> None:
    path = tmp_path / "r.json"
    path.write_text(release_text)  # a good file: only --rows can be at fault
    assert _run(["show", str(path), "--rows", rows]) == 2
    err, stdout = _one_line_error(capsys)
    assert "--rows" in err and stdout == ""


def test_release_without_output_is_one_line(capsys, csv) -> None:
    assert _run(["release", str(csv), "--epsilon", "1"]) == 2
    assert "-o/--output" in _one_line_error(capsys)[0]


def test_show_rows_zero_prints_no_values(capsys, tmp_path, release_text) -> None:
    path = tmp_path / "r.json"
    path.write_text(release_text)
    assert _run(["show", str(path), "--rows", "0"]) == 0
    out = capsys.readouterr().out
    assert "values    : 3" in out and "(3 more)" in out and " x " not in out


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys, tmp_path) -> None:
    import noiseaware.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt("chains ran 47 of 200 iterations")

    rel = tmp_path / "r.json"
    na.privatize(np.random.default_rng(0).normal(size=(50, 3)), statistic="median_pairs", epsilon=1.0).to_json(rel)
    parser = cli._parser()  # the `show` command raises KeyboardInterrupt as an interrupted fit would
    monkeypatch.setattr(cli, "_parser", lambda: parser)
    for action in parser._subparsers._group_actions[0].choices.values():
        if action.get_default("func") is not None and action.prog.endswith("show"):
            action.set_defaults(func=interrupted)
    assert cli.main(["show", str(rel)]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("noiseaware: interrupted: chains ran 47")
