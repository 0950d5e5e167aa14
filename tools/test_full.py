"""``make test-full``: every test ``make test`` leaves out (the ``slow`` marker), one pytest process per test file.

Why one process per file: XLA:CPU (JAX 0.12) crashed the whole interpreter with a segmentation fault, inside its
compiler or its reader of cached programs, when one pytest process had run a few dozen of these tests' large
programs before (each file passes on its own, and the crash moved from test to test between runs). A fresh process
per file keeps each one's compiled state small, and a crash, should one still happen, fails that file only, named,
while every other file still runs and reports.

Usage::

    .venv/bin/python tools/test_full.py [PATH ...]     # default: noiseaware tests

Prints one line per file (result, seconds) and a summary; exits 1 if any file failed or crashed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

#: Longest a single file may run (its own pytest process) before it counts as failed.
FILE_TIMEOUT_S = 2400


def slow_files(paths: list[str]) -> list[str]:
    """The files (or doctest modules) holding tests marked slow, in collection order."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "slow", "-p", "no:cacheprovider", *paths],
        capture_output=True, text=True, check=False,
    )
    if out.returncode not in (0, 5):
        sys.stdout.write(out.stdout + out.stderr)
        raise SystemExit(f"test_full: collection failed (pytest exit {out.returncode})")
    files: list[str] = []
    for line in out.stdout.splitlines():
        if "::" in line:
            path = line.split("::", 1)[0]
            if path not in files:
                files.append(path)
    return files


def run_file(path: str) -> tuple[int, float, str]:
    """Run the slow tests of one file in a fresh interpreter: (exit code, seconds, the output's last lines)."""
    t0 = time.perf_counter()
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-m", "slow", "-q", "-p", "no:cacheprovider", "--durations=3", path],
            capture_output=True, text=True, timeout=FILE_TIMEOUT_S, check=False,
        )
        code, text = out.returncode, out.stdout + out.stderr
    except subprocess.TimeoutExpired as exc:
        code, text = 124, f"timed out after {FILE_TIMEOUT_S} s\n{exc.stdout or ''}"
    return code, time.perf_counter() - t0, text


def main(argv: list[str]) -> int:
    """Run every file's slow tests in its own process; 0 when all passed."""
    paths = argv or ["noiseaware", "tests"]
    files = slow_files(paths)
    print(f"test_full: {len(files)} files with slow tests, one process each (load {os.getloadavg()[0]:.2f})")
    failed: list[str] = []
    start = time.perf_counter()
    for i, path in enumerate(files, 1):
        code, seconds, text = run_file(path)
        summary = text.strip().splitlines()[-1] if text.strip() else ""
        ok = code in (0, 5)
        state = "ok" if ok else (f"CRASHED (signal {-code})" if code < 0 else f"FAILED (exit {code})")
        print(f"[{i:>2}/{len(files)}] {state:<20} {seconds:7.1f} s  {path}  {summary}", flush=True)
        if not ok:
            failed.append(path)
            sys.stdout.write(text[-20000:] + "\n")
    total = time.perf_counter() - start
    print(f"test_full: {len(files) - len(failed)} of {len(files)} files passed in {total / 60:.1f} min")
    if failed:
        print("test_full: failed: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
