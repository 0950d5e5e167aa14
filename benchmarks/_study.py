"""The set-up every benchmark script shares: its options, its run context, the configuration, its record.

A study is a short script::

    import _study

    def main() -> int:
        args = _study.parser(__doc__, reps=20, seed=7).parse_args()   # --write, --reps, --seed
        with _study.Run(args) as run:                                  # load before, wall and CPU time
            table = ...                                                # the study itself
        run.record("my_study", f"## My study\\n\\n{run.head()}\\n\\n{table}")  # only with --write
        return 0

    if __name__ == "__main__":
        _study.main(main)   # noiseaware.config.configure() once, then main(), its code the exit code

- :func:`parser` builds the command line with the shared options (``--write``, ``--quick``, ``--seed``,
  ``--reps``), each only when the script asks for it, with the script's own default; the script adds
  its own options to the parser it gets back.
- :class:`Run` reads the load (:class:`Load`) before and after the study and times its wall and CPU
  seconds; :meth:`Run.record` writes the record through :mod:`_report` when ``--write`` was given.
- :func:`main` configures noiseaware and JAX one way (:func:`noiseaware.config.configure`: float64,
  host devices, the compilation cache as ``NOISEAWARE_JAX_CACHE`` says) and runs the script.
- :func:`machine` (from :mod:`_report`) is the one description of the machine.

Scripts run as ``.venv/bin/python benchmarks/<script>.py``, so this directory is first on ``sys.path``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NoReturn

from _report import machine, raw_path, results_dir, write_run, write_section

__all__ = [
    "EXAMPLES",
    "HERE",
    "ROOT",
    "Load",
    "Run",
    "command",
    "configure",
    "machine",
    "main",
    "parser",
    "raw_path",
    "results_dir",
]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: ``examples/``: some studies run or import an example script.
EXAMPLES = ROOT / "examples"

#: How ``--write`` is read: ``"path"`` a directory for the record (a ``.md`` name means the results
#: directory, as in the commands recorded before the records were JSON); ``"str"`` the same as a plain
#: string; ``"flag"`` a switch that writes to the results directory.
WriteMode = Literal["path", "str", "flag"]

_WRITE_HELP = {
    "path": "record the results: a directory (a .md name, as in older commands, means benchmarks/results)",
    "str": "record the results: a directory (a .md name, as in older commands, means benchmarks/results)",
    "flag": "record the results in benchmarks/results (or $NOISEAWARE_BENCH_RESULTS)",
}


def parser(
    doc: str | None,
    *,
    write: WriteMode | None = "path",
    quick: str | None = None,
    seed: int | Literal["required"] | None = None,
    reps: int | None = None,
    reps_help: str | None = None,
) -> argparse.ArgumentParser:
    """The script's command line with the shared options it asks for; add its own options to it.

    Parameters
    ----------
    doc : str or None
        The script's docstring; its first line is the description.
    write : {"path", "str", "flag"} or None
        ``--write`` as a destination (``"path"``: a :class:`~pathlib.Path`; ``"str"``: a string) or as
        a switch (``"flag"``); None for no ``--write``.
    quick : str or None
        The help of a ``--quick`` switch (what the quick run does); None for no ``--quick``.
    seed : int, "required" or None
        The default of ``--seed``, ``"required"`` when it must be given, None for no ``--seed``.
    reps : int or None
        The default of ``--reps`` (replications), None for no ``--reps``.
    reps_help : str or None
        The help of ``--reps``.
    """
    description = doc.strip().splitlines()[0] if doc and doc.strip() else None
    ap = argparse.ArgumentParser(description=description)
    if write == "flag":
        ap.add_argument("--write", action="store_true", help=_WRITE_HELP[write])
    elif write in ("path", "str"):
        ap.add_argument("--write", type=Path if write == "path" else str, default=None, help=_WRITE_HELP[write])
    elif write is not None:
        raise ValueError(f"parser: write must be 'path', 'str', 'flag' or None; got write={write!r}.")
    if quick is not None:
        ap.add_argument("--quick", action="store_true", help=quick)
    if seed == "required":
        ap.add_argument("--seed", type=int, required=True, help="random seed")
    elif seed is not None:
        ap.add_argument("--seed", type=int, default=seed, help="random seed (default: %(default)s)")
    if reps is not None:
        ap.add_argument("--reps", type=int, default=reps, help=reps_help or "replications (default: %(default)s)")
    return ap


@dataclass(frozen=True)
class Load:
    """One reading of the machine's load: the 1, 5 and 15-minute averages and the ``uptime`` line.

    ``str(load)`` is the three averages as ``/proc/loadavg`` prints them (``"1.44 1.91 1.87"``).
    """

    avg: tuple[float, float, float]
    text: str
    uptime: str

    @classmethod
    def now(cls, *, uptime: bool = True) -> Load:
        """Read the load now (``uptime=False`` skips the ``uptime`` subprocess)."""
        try:
            fields = Path("/proc/loadavg").read_text().split()[:3]
            text = " ".join(fields)
        except OSError:
            text = "n/a"
        try:
            avg = os.getloadavg()
        except OSError:
            avg = (float("nan"),) * 3
        if text == "n/a" and avg[0] == avg[0]:
            text = " ".join(f"{x:.2f}" for x in avg)
        line = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip() if uptime else ""
        return cls((float(avg[0]), float(avg[1]), float(avg[2])), text, line)

    @property
    def one(self) -> float:
        """The 1-minute load average."""
        return self.avg[0]

    def __str__(self) -> str:
        return self.text


def command(argv: list[str] | None = None, script: str | None = None) -> str:
    """The command that ran this script: ``.venv/bin/python benchmarks/<script>.py ARGS``."""
    name = script or Path(sys.argv[0]).name
    return " ".join([f".venv/bin/python benchmarks/{name}", *(sys.argv[1:] if argv is None else argv)])


class Run:
    """The run of a study: the load before and after, its wall and CPU seconds, and its record.

    The clock starts and the load is read when the run is made; use it as a context manager
    (``with Run(args) as run:``) or call :meth:`stop` to end the timing and read the load after.
    ``args`` is the parsed command line; its ``write`` (if any) decides where :meth:`record` writes.
    """

    def __init__(self, args: argparse.Namespace | None = None, *, uptime: bool = True) -> None:
        self.args = args
        self._uptime = uptime
        self.before = Load.now(uptime=uptime)
        self.after: Load | None = None
        self._t0 = time.perf_counter()
        self._c0 = time.process_time()
        self.wall = 0.0
        self.cpu = 0.0

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.after is None:
            self.stop()

    def stop(self) -> Run:
        """Read the load after the study and its wall and CPU seconds (again if called again)."""
        self.wall = time.perf_counter() - self._t0
        self.cpu = time.process_time() - self._c0
        self.after = Load.now(uptime=self._uptime)
        return self

    def elapsed(self) -> float:
        """Wall seconds since the run started (while it runs)."""
        return time.perf_counter() - self._t0

    @property
    def loads(self) -> tuple[str, str]:
        """The ``uptime`` lines before and after (``write_run``'s ``loads``)."""
        after = self.after or self.stop().after
        assert after is not None
        return self.before.uptime, after.uptime

    @property
    def dest(self) -> Any:
        """Where the record goes: ``--write``'s directory (or file name), the results directory for the
        ``--write`` switch, None when the script was not asked to write."""
        write = getattr(self.args, "write", None)
        if write is True:
            return results_dir()
        return write or None

    def record(self, name: str, markdown: str, headline: list[str] | None = None) -> Path | None:
        """Write the report ``markdown`` as the record ``name`` when asked to (``_report.write_section``)."""
        if self.dest is None:
            return None
        return write_section(self.dest, name, markdown, headline)

    def record_run(self, name: str, title: str, table: str, about: str = "", argv: list[str] | None = None,
                   script: str | None = None) -> Path | None:
        """Write a run record (title, command, machine, load, table) when asked to (``_report.write_run``)."""
        if self.dest is None:
            return None
        return write_run(self.dest, name, title, script or Path(sys.argv[0]).name,
                         sys.argv[1:] if argv is None else argv, self.loads, table, about=about)


def configure(**settings: Any) -> dict[str, Any]:
    """Configure noiseaware and JAX the documented way (:func:`noiseaware.config.configure`)."""
    import noiseaware.config

    return noiseaware.config.configure(**settings)


def main(fn: Callable[[], Any], *, configure_jax: bool = True, **settings: Any) -> NoReturn:
    """Run a script's ``main``: configure noiseaware first (unless ``configure_jax=False``), exit with its code.

    ``settings`` go to :func:`configure`. The exit code is what ``fn`` returns when that is an int, else 0
    (a ``main`` may return its figures to a caller).
    """
    if configure_jax:
        configure(**settings)
    code = fn()
    raise SystemExit(code if isinstance(code, int) else 0)
