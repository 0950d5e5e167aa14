"""The ``noiseaware`` command line.

* ``noiseaware release DATA.csv --epsilon E [--mechanism M] -o release.json`` -- curator: privatize
  a CSV file (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
  Correlations*, Algorithm S.1 by default).
* ``noiseaware show release.json`` -- print a release and its guarantee.
* ``noiseaware fit release.json [--backend numpyro|pymc] [--chains --draws --warmup --seed --level]
  [--plot fig.png]`` -- analyst: Bayes-NA (Wang et al. 2026, §3) on a geometric ``median_pairs`` release,
  printing the posterior mean and interval per pair and, with ``--plot``, a Figure-3-style PNG.
  On a range-preserving TGM / BTGM / RGM release it runs MLE-NN (§4) instead and says so: Bayes-NA
  models the plain geometric mechanism, and those releases are what MLE-NN is for.
* ``noiseaware demo`` -- both sides on the built-in data set (Gaussian copula, Wang et al. (2026) §5.2 mixed
  marginals, p = 5, n = 1000, epsilon = 1): truth beside the Bayes-NA estimate with intervals and
  the MLE-NN estimate, each method on its own release with budget epsilon.

Errors (bad files, bad arguments) print one line, ``noiseaware: error: ...``, and exit with code 2.

Files are handled defensively: every file the command writes appears all at
once or not at all (a temporary file in the same directory, ``fsync``, then a rename), an existing
file is replaced only with ``--force``, and an input (the CSV, the release being read) is never
written over, not even with ``--force``. Release files are read with bounded size, nesting and
numbers, as strict UTF-8; labels and column names are printed with terminal control characters
escaped.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _validation as v
from ._io import atomic_write, atomic_write_text, check_output, printable
from ._validation import owned, owner_scope
from .exceptions import NoiseawareError, NoiseawareValueError, NoiseawareWarning

if TYPE_CHECKING:
    import pandas

    from .release import Release

__all__ = ["main"]

_RANGE_PRESERVING = ("tgm", "btgm", "rgm")


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Plain-text table: first column left-aligned, the others right-aligned."""
    cols = list(zip(headers, *rows, strict=True))
    widths = [max(len(str(c)) for c in col) for col in cols]
    fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    out = [fmt.format(*headers), "  ".join("-" * w for w in widths)]
    out += [fmt.format(*r) for r in rows]
    return "\n".join("  " + line for line in out)


def _sampler_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "backend": args.backend,
        "chains": args.chains,
        "draws": args.draws,
        "warmup": args.warmup,
        "seed": args.seed,
        "progressbar": not args.no_progress,
    }


def _fit_noting_mixing(fit: Callable[..., Any], release: Any, args: argparse.Namespace) -> Any:
    """Run a fit; print its MixingWarning (the fit's one mixing check) as a note on stderr, not a traceback."""
    from .exceptions import MixingWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MixingWarning)
        res = fit(release, **_sampler_kwargs(args))
    for w in caught:
        if issubclass(w.category, MixingWarning):
            print(f"note: {printable(str(w.message))}", file=sys.stderr)
        else:  # not ours to swallow: pass it on
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return res


def _import_arviz_quietly() -> None:
    """Import ArviZ (every fit's result is its container) without the banner ArviZ 0.23 prints on import.

    ArviZ 0.23 issues, once a day, a FutureWarning announcing its own coming refactor ("ArviZ is
    undergoing a major refactor ..."): news about the next ArviZ, not about this command's result,
    and nothing its user can act on. Imported here first, inside this filter, it stays quiet; every
    other warning (and ArviZ's own warnings once imported) is shown as usual.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing a major refactor", category=FutureWarning)
        import arviz  # noqa: F401


def _pct(level: float) -> str:
    return f"{100 * level:g}%"


# ---------------------------------------------------------------------------------- files
def _safe(text: str) -> str:
    """``text`` with terminal control characters escaped, line by line (labels may hold any string)."""
    return "\n".join(printable(line) for line in text.split("\n"))


def _read_release(path: str) -> Release:
    """Read a release file: bounded size, nesting and numbers, strict UTF-8, every field checked.

    ``Release.from_json`` does the reading (``noiseaware._io``); the path goes in as a ``Path`` so
    that a file name starting with ``{`` is never taken for JSON text.
    """
    from .release import Release

    return Release.from_json(Path(path))


def _read_csv(path: str, command: str) -> pandas.DataFrame:
    """A CSV file as a DataFrame; unreadable, empty or non-UTF-8 files raise one-line errors."""
    import pandas as pd

    try:
        df = pd.read_csv(path)
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.start + 1].hex() if isinstance(exc.object, bytes) else "?"
        raise NoiseawareValueError(
            f"{command}: {path} is not UTF-8 text (byte 0x{bad}: {exc.reason}); save it as UTF-8 CSV."
        ) from None
    except pd.errors.EmptyDataError:
        raise NoiseawareValueError(
            f"{command}: {path} is empty; expected a CSV file with a header row of column names and one row per record."
        ) from None
    except pd.errors.ParserError as exc:
        raise NoiseawareValueError(f"{command}: {path} is not a well-formed CSV file ({exc}).") from None
    if df.shape[0] == 0:
        raise NoiseawareValueError(f"{command}: {path} has a header row but no records.")
    return df


def _plot_format(path: str | None, command: str, *, force: bool, protect: Sequence[str]) -> str:
    """Check a ``--plot`` path before any long work; returns the matplotlib format (from the suffix)."""
    if path is None:
        return ""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise NoiseawareValueError(f"{command}: --plot needs matplotlib; pip install matplotlib.") from None
    with owner_scope(command):
        check_output(path, overwrite=force, protect=protect)
        fmt = Path(path).suffix[1:].lower() or "png"
        known = FigureCanvasBase.get_supported_filetypes()
        if fmt not in known:
            raise NoiseawareValueError(
                f"{command}: --plot {path}: unknown figure format {fmt!r}; use one of {sorted(known)} (e.g. fig.png)."
            )
        return fmt


def _save_figure(fig: Any, path: str, fmt: str, command: str, *, force: bool, protect: Sequence[str]) -> None:
    """Write a matplotlib figure atomically (temporary file, then rename), and close it."""
    import matplotlib.pyplot as plt

    with owner_scope(command):
        try:
            atomic_write(
                path, lambda fh: fig.savefig(fh, format=fmt, dpi=120), overwrite=force, protect=protect
            )
        finally:
            plt.close(fig)


# ------------------------------------------------------------------------------------------ fit
def _cmd_fit(args: argparse.Namespace) -> int:
    from .copula import fit, mle_nn, pair_summary, plot_pairs

    release = _read_release(args.release)
    name = printable(args.release)
    if release.statistic != "median_pairs":
        raise NoiseawareValueError(
            f"fit: needs a 'median_pairs' release (Wang et al. 2026, Algorithm S.1); {name} holds "
            f"statistic={release.statistic!r}. Make one with: noiseaware release DATA.csv --epsilon E -o release.json"
        )
    family = release.mechanism.family
    pairs = [printable(" x ".join(lab)) for lab in release.labels]
    eps = release.guarantee.epsilon
    if family in _RANGE_PRESERVING:
        print(
            f"noiseaware fit: {name} uses the range-preserving {family.upper()} mechanism; Bayes-NA\n"
            "models the plain geometric mechanism, so this runs MLE-NN (Wang et al. 2026, Algorithm S.3) instead:\n"
            "a point estimate, no intervals. For Bayes-NA intervals, release with --mechanism geometric (the default)."
        )
        res = mle_nn(release)
        iu = np.triu_indices(len(res.columns), 1)
        rows = [[p, f"{a:+.3f}", f"{b:+.3f}"] for p, a, b in zip(pairs, res.R_pairwise[iu], res.R[iu], strict=True)]
        print(f"\nMLE-NN, n = {release.n}, epsilon = {eps:g} ({family})")
        print(_table(["pair", "root of eq. 19", "MLE-NN (nearest corr.)"], rows))
        if args.plot:
            print(f"note: --plot draws a Bayes-NA posterior; not written for a {family} release.", file=sys.stderr)
        return 0
    if family != "geometric":
        raise NoiseawareValueError(f"fit: unsupported mechanism {family!r} for a 'median_pairs' release.")
    plot_fmt = _plot_format(args.plot, "fit", force=args.force, protect=[args.release])  # before sampling
    _import_arviz_quietly()
    t0 = time.perf_counter()
    res_b = _fit_noting_mixing(fit, release, args)
    secs = time.perf_counter() - t0
    summ = pair_summary(res_b, args.level)
    pct = _pct(args.level)
    rows = [
        [
            printable(str(idx)),
            f"{r['mean']:+.3f}",
            f"{r['sd']:.3f}",
            f"[{r[f'lower {pct}']:+.3f}, {r[f'upper {pct}']:+.3f}]",
            f"{r['r_hat']:.3f}",
            f"{r['ess_bulk']:.0f}",
        ]
        for idx, r in summ.iterrows()
    ]
    print(
        f"Bayes-NA posterior (Wang et al. 2026, §3), n = {release.n}, epsilon = {eps:g}, LKJ(1) prior, {args.backend}, "
        f"{args.chains} chains x {args.draws} draws ({args.warmup} warmup), {secs:.1f} s"
    )
    print(_table(["pair", "mean", "sd", f"{pct} interval", "r_hat", "ess_bulk"], rows))
    if args.plot:
        fig = plot_pairs(res_b, None, level=args.level)
        _save_figure(fig, args.plot, plot_fmt, "fit", force=args.force, protect=[args.release])
        print(f"wrote {printable(args.plot)}")
    return 0


# ----------------------------------------------------------------------------------------- demo
@owned("demo")
def _cmd_demo(args: argparse.Namespace) -> int:
    from . import privatize
    from .copula import fit, functional, mle_nn, plot_pairs
    from .datasets import demo_copula_data

    if args.output:
        check_output(args.output, overwrite=args.force)
    plot_protect = [args.output] if args.output else []
    plot_fmt = _plot_format(args.plot, "demo", force=args.force, protect=plot_protect)
    t0 = time.perf_counter()
    x, R, cols = demo_copula_data(seed=args.data_seed, n=args.n)
    p = x.shape[1]
    print(
        f"noiseaware demo: Gaussian copula data, n = {x.shape[0]}, p = {p}, marginals N(0,1), Exp(1), "
        "Gamma(2,1), Beta(2,5), t_5 (Wang et al. 2026, §5.2)\n"
    )
    print(f"1. curator: median two-way tables (Algorithm S.1), two separate releases, each epsilon = {args.epsilon:g}")
    rel_geo = privatize(x, statistic="median_pairs", epsilon=args.epsilon, columns=cols)
    rel_btgm = privatize(x, statistic="median_pairs", epsilon=args.epsilon, mechanism="btgm", columns=cols)
    print(_safe(rel_geo.summary(max_rows=10)))
    print(f"   and a BTGM release (range-preserving, §4.2) for MLE-NN, also {args.epsilon:g}-DP.")
    print(
        "   The two methods are compared on separate releases, each with budget epsilon, as in the paper's\n"
        f"   comparisons (§5); publishing both would spend {2 * args.epsilon:g} in total on the same data.\n"
    )
    if args.output:
        atomic_write_text(args.output, rel_geo.to_json() + "\n", overwrite=args.force)
        print(f"   wrote the geometric release to {printable(args.output)}\n")
    print(f"2. analyst: Bayes-NA (NUTS, {args.backend}) on the geometric release; MLE-NN on the BTGM release")
    _import_arviz_quietly()
    res_b = _fit_noting_mixing(fit, rel_geo, args)
    res_m = mle_nn(rel_btgm)
    R_draws = functional(res_b, lambda r: r)  # the correlation matrices, rebuilt from the pairs the fit stores
    lo, hi = np.quantile(R_draws, [(1 - args.level) / 2, (1 + args.level) / 2], axis=0)
    mean = R_draws.mean(axis=0)
    pct = _pct(args.level)
    iu, ju = np.triu_indices(p, 1)
    rows = []
    covered = 0
    for i, j in zip(iu, ju, strict=True):
        inside = bool(lo[i, j] <= R[i, j] <= hi[i, j])
        covered += inside
        rows.append(
            [
                f"{cols[i]} x {cols[j]}",
                f"{R[i, j]:+.3f}",
                f"{mean[i, j]:+.3f}",
                f"[{lo[i, j]:+.3f}, {hi[i, j]:+.3f}]",
                "yes" if inside else "no",
                f"{res_m.R[i, j]:+.3f}",
            ]
        )
    print("\n   true copula correlations beside the estimates:")
    print(_table(["pair", "truth", "Bayes-NA", f"{pct} interval", "covers", "MLE-NN"], rows))
    mae_b = float(np.mean(np.abs(mean[iu, ju] - R[iu, ju])))
    mae_m = float(np.mean(np.abs(res_m.R[iu, ju] - R[iu, ju])))
    print(
        f"\n   mean absolute error: Bayes-NA {mae_b:.3f}, MLE-NN {mae_m:.3f}; "
        f"Bayes-NA intervals cover {covered} of {len(rows)} pairs"
    )
    if args.plot:
        fig = plot_pairs(res_b, None, level=args.level, truth=R, others={"MLE-NN (BTGM release)": res_m.R})
        _save_figure(fig, args.plot, plot_fmt, "demo", force=args.force, protect=plot_protect)
        print(f"   wrote {printable(args.plot)}")
    print(f"\ndone in {time.perf_counter() - t0:.1f} s")
    return 0


# --------------------------------------------------------------------------- release and show
@owned("release")
def _cmd_release(args: argparse.Namespace) -> int:
    from . import privatize

    protect = [args.data]  # the confidential data: never written over, not even with --force
    check_output(args.output, overwrite=args.force, protect=protect)  # fail before any work
    df = _read_csv(args.data, "release")
    release = privatize(df, statistic=args.statistic, epsilon=args.epsilon, mechanism=args.mechanism)
    atomic_write_text(args.output, release.to_json() + "\n", overwrite=args.force, protect=protect)
    print(_safe(release.summary()))
    print(f"wrote {printable(args.output)}")
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    print(_safe(_read_release(args.release).summary(max_rows=args.rows)))
    return 0


# ------------------------------------------------------------------------------------- parsing
class _Parser(argparse.ArgumentParser):
    """argparse with the package's one-line error and exit code 2."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        self.exit(2, f"noiseaware: error: {message} (see '{self.prog} --help')\n")


def _int_at_least(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for integers ``>= minimum`` (and ``<= maximum``) with a one-line message."""

    def parse(text: str) -> int:
        try:
            val = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}") from None
        if val < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}; got {val}")
        if maximum is not None and val > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum}; got {val}")
        return val

    return parse


_positive_int = _int_at_least(1)
_nonnegative_int = _int_at_least(0)


def _level(text: str) -> float:
    try:
        val = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}") from None
    if not 0.0 < val < 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1); got {val}")
    return val


def _add_sampler_options(p: argparse.ArgumentParser, *, draws: int, warmup: int, chains: int) -> None:
    p.add_argument("--backend", choices=["numpyro", "pymc"], default="numpyro", help="NUTS backend")
    p.add_argument("--chains", type=_positive_int, default=chains)
    p.add_argument("--draws", type=_positive_int, default=draws, help="kept draws per chain")
    p.add_argument("--warmup", type=_nonnegative_int, default=warmup, help="warmup (tuning) iterations per chain")
    p.add_argument("--seed", type=_nonnegative_int, default=None, help="sampler seed (default: random)")
    p.add_argument("--level", type=_level, default=0.95, help="credible level of the intervals")
    p.add_argument("--plot", default=None, metavar="PNG", help="write a Figure-3-style plot here")
    p.add_argument("--no-progress", action="store_true", help="hide the sampler's progress bar")


def _add_force(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--force", action="store_true", help="replace output files that already exist (never an input file)"
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="noiseaware", description="Noise-aware analysis of DP releases.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser(
        "demo", help="curator and analyst on a built-in Gaussian copula data set (Wang et al. 2026, §5.2)",
    )
    p.add_argument("--epsilon", type=float, default=1.0, help="budget of each of the two releases")
    p.add_argument(
        "--n", type=_int_at_least(1, v.MAX_SIMULATED_ROWS), default=1000, help="rows of the simulated data set"
    )
    p.add_argument("--data-seed", type=_nonnegative_int, default=2026, help="seed of the simulated data set")
    p.add_argument("-o", "--output", default=None, help="also write the geometric release JSON here")
    _add_sampler_options(p, draws=1000, warmup=1000, chains=4)
    _add_force(p)
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("release", help="curator: privatize a CSV file")
    p.add_argument("data")
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--statistic", default="median_pairs")
    p.add_argument("--mechanism", default=None, choices=["geometric", "tgm", "btgm", "rgm"])
    p.add_argument("-o", "--output", required=True, help="the release JSON to write (never the input CSV)")
    _add_force(p)
    p.set_defaults(func=_cmd_release)

    p = sub.add_parser("show", help="print a release JSON file")
    p.add_argument("release")
    p.add_argument("--rows", type=_nonnegative_int, default=50, help="print at most this many values")
    p.set_defaults(func=_cmd_show)

    p = sub.add_parser(
        "fit", help="analyst: Bayes-NA on a geometric median_pairs release (MLE-NN on TGM/BTGM/RGM releases)"
    )
    p.add_argument("release", help="release JSON (from 'noiseaware release' or Release.to_json)")
    _add_sampler_options(p, draws=1000, warmup=1000, chains=4)
    _add_force(p)
    p.set_defaults(func=_cmd_fit)
    return parser


#: What a command may raise on bad input: the package's own errors, the operating system's, and the
#: built-in errors hostile files used to provoke (kept so the command stays safe whatever reads them).
#: Anything else is a bug and keeps its traceback.
_USER_ERRORS = (NoiseawareError, OSError, UnicodeError, RecursionError, OverflowError)


def _error_message(exc: BaseException) -> str:
    """One printable line for an error (an ``OSError`` without its ``[Errno N]`` prefix)."""
    if isinstance(exc, OSError) and not isinstance(exc, NoiseawareError) and exc.strerror:
        msg = exc.strerror
        if exc.filename is not None:
            msg += f": {os.fsdecode(exc.filename) if isinstance(exc.filename, str | bytes) else exc.filename}"
        if exc.filename2 is not None:
            msg += f" -> {exc.filename2}"
    elif isinstance(exc, RecursionError):
        msg = "the input is nested too deeply to process"
    elif isinstance(exc, UnicodeDecodeError):
        msg = f"the input is not valid {exc.encoding} text ({exc.reason} at byte {exc.start})"
    elif isinstance(exc, OverflowError):
        msg = f"a number in the input is too large ({exc})"
    else:
        msg = str(exc) or type(exc).__name__
    return printable(" ".join(msg.split()))  # one line, no terminal control characters


def _one_line_warnings(show: Callable[..., None]) -> Callable[..., None]:
    """A ``warnings.showwarning``: the package's own warnings as ``noiseaware: warning: ...``, others via ``show``."""

    def showwarning(
        message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
    ) -> None:
        if not issubclass(category, NoiseawareWarning):
            show(message, category, filename, lineno, file, line)
            return
        text = printable(" ".join(str(message).split()))
        print(f"noiseaware: warning: {text} ({category.__name__})", file=sys.stderr if file is None else file)

    return showwarning


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``noiseaware`` command; returns the exit code (0, 2 on bad input, 130 on Ctrl-C)."""
    args = _parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("default", NoiseawareWarning)  # shown (once per place), never raised
        warnings.showwarning = _one_line_warnings(warnings.showwarning)
        try:
            return int(args.func(args))
        except _USER_ERRORS as exc:
            print(f"noiseaware: error: {_error_message(exc)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt as exc:
            detail = printable(" ".join(str(exc).split()))
            print(f"noiseaware: interrupted{': ' + detail if detail else ''}; no result was written.", file=sys.stderr)
            return 130


def run() -> None:
    """The ``noiseaware`` console command: the documented process set-up, then :func:`main`.

    A program owns its process, so the command applies :func:`noiseaware.config.configure`
    (float64, one host device per core; the compilation cache only if ``NOISEAWARE_JAX_CACHE`` asks)
    before anything else, as a user's script does; :func:`main` itself changes no process-wide setting.
    """
    from .config import configure

    configure()
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    run()
