r"""Typed schemas of the released statistics: what a :class:`~noiseaware.Release` of each may hold.

A release file is the contract between curator and analyst, and every field the analyst side
reads is checked here, on construction *and* on load, against the other fields: the mechanism
family a statistic can have, its composition rule, its sensitivity (recomputed from ``n``, ``d``,
``a``, ...), its shape, its labels and every metadata key (type, range, and consistency — e.g. a
``median_pairs`` release must have ``high_count == ceil(n/2)`` and list all column pairs once, in
order). A release whose fields disagree raises :class:`~noiseaware.exceptions.ReleaseFormatError`
naming the field and the rule.

This module sits at the level of the release record (it imports only the mechanisms and the
validation helpers), so that :mod:`noiseaware.release` can use it and the curator side
(:mod:`noiseaware._privatize`) registers its implementations against the same names; a test
checks that the two registries hold the same statistics.

Neighbour relation (every statistic): *substitution* — two data sets are neighbours when they
have the same number of records ``n`` (public) and differ in one record. Each schema's
sensitivity rule is stated under that relation.

Adding a statistic: write a :class:`StatisticSchema` (families, compositions, metadata fields,
a ``check`` for the cross-field rules) and register it in :data:`SCHEMAS`; then register the
curator's implementation under the same name in :mod:`noiseaware._privatize`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .exceptions import ReleaseFormatError

__all__ = [
    "NEIGHBOURS",
    "SCHEMAS",
    "StatisticSchema",
    "kendall_sensitivity",
    "noise_reach",
    "select_threshold",
]

#: The neighbour relation of every statistic in this package.
NEIGHBOURS = "substitution (n public; neighbouring data sets differ in one record)"

#: Relative tolerance for floats that the loader recomputes from other fields.
_RTOL = 1e-9

#: Metadata keys any statistic may carry (free text): the simulation note, and provenance.
_COMMON_OPTIONAL = ("simulation", "source")

#: The text put in ``metadata["simulation"]`` of a release drawn with a seeded numpy Generator.
SIMULATION_NOTE = (
    "SIMULATION: noise drawn from a seeded numpy Generator; replaying the seed removes the noise exactly. "
    "Not a private release: never publish it."
)


def _fail(field_name: str, rule: str, value: Any) -> None:
    text = repr(value)
    if len(text) > 120:
        text = text[:117] + "..."
    raise ReleaseFormatError(f"Release: field '{field_name}' {rule}; got {text}.")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_RTOL, abs_tol=0.0)


# ----------------------------------------------------------------------------- field types
def _int(name: str, x: Any, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(x, bool) or not isinstance(x, int | np.integer):
        _fail(name, "must be an integer", x)
    out = int(x)
    if minimum is not None and out < minimum:
        _fail(name, f"must be >= {minimum}", x)
    if maximum is not None and out > maximum:
        _fail(name, f"must be <= {maximum}", x)
    return out


def _float(name: str, x: Any, *, lo: float | None = None, hi: float | None = None, open_lo: bool = False) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float | np.integer | np.floating):
        _fail(name, "must be a number", x)
    out = float(x)
    if not math.isfinite(out):
        _fail(name, "must be finite", x)
    if lo is not None and (out < lo or (open_lo and out == lo)):
        _fail(name, f"must be {'>' if open_lo else '>='} {lo:g}", x)
    if hi is not None and out > hi:
        _fail(name, f"must be <= {hi:g}", x)
    return out


def _str(name: str, x: Any) -> str:
    if not isinstance(x, str):
        _fail(name, "must be a string", x)
    return x


def _str_list(name: str, x: Any) -> list[str]:
    if not isinstance(x, Sequence) or isinstance(x, str) or not all(isinstance(s, str) for s in x):
        _fail(name, "must be a list of strings", x)
    return list(x)


def _float_list(name: str, x: Any) -> list[float]:
    if not isinstance(x, Sequence) or isinstance(x, str):
        _fail(name, "must be a list of numbers", x)
    return [_float(f"{name}[{i}]", e) for i, e in enumerate(x)]


def _int_list(name: str, x: Any, minimum: int | None = None) -> list[int]:
    if not isinstance(x, Sequence) or isinstance(x, str):
        _fail(name, "must be a list of integers", x)
    return [_int(f"{name}[{i}]", e, minimum) for i, e in enumerate(x)]


#: A field type: takes the JSON path and the value, returns the typed value or raises.
FieldType = Callable[[str, Any], Any]

INT: FieldType = _int
FLOAT: FieldType = _float
STR: FieldType = _str
STR_LIST: FieldType = _str_list
FLOAT_LIST: FieldType = _float_list
INT_LIST: FieldType = _int_list


def _bool(name: str, x: Any) -> bool:
    if not isinstance(x, bool):
        _fail(name, "must be true or false", x)
    return x


BOOL: FieldType = _bool


def _any_list(name: str, x: Any) -> list[Any]:
    if not isinstance(x, Sequence) or isinstance(x, str):
        _fail(name, "must be a list", x)
    return list(x)


@dataclass(frozen=True)
class StatisticSchema:
    """What a release of one statistic may hold.

    Parameters
    ----------
    name : str
        The statistic's name (``Release.statistic``).
    families : tuple of str
        Mechanism families the statistic can be released with.
    compositions : tuple of str
        Allowed ``Release.composition`` values.
    required : mapping of str to field type
        Metadata keys that must be present, with their types.
    optional : mapping of str to field type
        Metadata keys that may be present. Any other key is refused.
    needs_n : bool
        Whether ``Release.n`` must be given.
    check : callable, optional
        ``check(release)``: the cross-field rules (sensitivity, shapes, labels, ...); raises
        :class:`ReleaseFormatError`.
    components : tuple of str
        Statistics that may appear in ``Release.components``.
    sensitivity : str
        The sensitivity rule under :data:`NEIGHBOURS`, for the docs.
    """

    name: str
    families: tuple[str, ...]
    compositions: tuple[str, ...]
    required: Mapping[str, FieldType] = field(default_factory=dict)
    optional: Mapping[str, FieldType] = field(default_factory=dict)
    needs_n: bool = True
    check: Callable[[Any], None] | None = None
    components: tuple[str, ...] = ()
    sensitivity: str = ""

    def validate(self, release: Any) -> None:
        """Raise :class:`ReleaseFormatError` unless ``release`` satisfies this schema."""
        fam = release.mechanism.family
        if fam not in self.families:
            _fail("mechanism.family", f"must be one of {list(self.families)} for statistic {self.name!r}", fam)
        if release.composition not in self.compositions:
            _fail(
                "composition",
                f"must be one of {list(self.compositions)} for statistic {self.name!r} "
                "(the composition rule is fixed by the statistic, not chosen by the file)",
                release.composition,
            )
        if self.needs_n and release.n is None:
            _fail("n", f"must be given for statistic {self.name!r}", None)
        meta = release.metadata
        allowed = set(self.required) | set(self.optional) | set(_COMMON_OPTIONAL)
        unknown = sorted(set(meta) - allowed)
        if unknown:
            _fail("metadata", f"has unknown key(s) {unknown} for statistic {self.name!r}", dict(meta))
        for key, typ in self.required.items():
            if key not in meta:
                _fail(f"metadata.{key}", f"is missing (required for statistic {self.name!r})", None)
            typ(f"metadata.{key}", meta[key])
        for key, typ in self.optional.items():
            if key in meta:
                typ(f"metadata.{key}", meta[key])
        for key in _COMMON_OPTIONAL:
            if key in meta:
                _str(f"metadata.{key}", meta[key])
        for i, c in enumerate(release.components):
            if c.statistic not in self.components:
                _fail(
                    f"components[{i}].statistic",
                    f"must be one of {list(self.components) or 'none'} in a {self.name!r} release",
                    c.statistic,
                )
        if self.check is not None:
            self.check(release)


# ----------------------------------------------------------------------------- shared rules
def _meta(release: Any, key: str) -> Any:
    return release.metadata[key]


def _sensitivity(release: Any) -> float:
    return float(release.mechanism.sensitivity)


def _check_sensitivity(release: Any, expected: float, rule: str) -> None:
    got = _sensitivity(release)
    if not _close(got, expected):
        _fail("mechanism.sensitivity", f"must be {rule} = {expected!r} under substitution neighbours", got)


def _check_columns(release: Any, count: int, key: str = "columns") -> list[str]:
    cols = _str_list(f"metadata.{key}", _meta(release, key))
    if len(cols) != count:
        _fail(f"metadata.{key}", f"must name {count} column(s)", cols)
    if len(set(cols)) != len(cols):
        _fail(f"metadata.{key}", "must hold unique names", cols)
    return cols


def _check_pairs(release: Any) -> None:
    """``p``, ``columns``, ``pairs`` and the labels of a pairwise statistic agree."""
    p = _int("metadata.p", _meta(release, "p"), minimum=2)
    cols = _check_columns(release, p)
    k = p * (p - 1) // 2
    if release.values.shape != (k,):
        _fail("shape", f"must be [{k}] (one value per column pair, p = {p})", list(release.values.shape))
    pairs = _any_list("metadata.pairs", _meta(release, "pairs"))
    iu, ju = np.triu_indices(p, 1)
    want = [[int(i), int(j)] for i, j in zip(iu, ju, strict=True)]
    got = []
    for t, pq in enumerate(pairs):
        if not isinstance(pq, Sequence) or isinstance(pq, str) or len(pq) != 2:
            _fail(f"metadata.pairs[{t}]", "must be a pair [j, k]", pq)
        got.append([_int(f"metadata.pairs[{t}][0]", pq[0]), _int(f"metadata.pairs[{t}][1]", pq[1])])
    if got != want:
        _fail(
            "metadata.pairs",
            f"must list every column pair j < k of p = {p} columns once, in row-major order",
            got,
        )
    labels = [list(lab) for lab in release.labels]
    want_labels = [[cols[i], cols[j]] for i, j in want]
    if labels != want_labels:
        _fail("labels", "must be the column names of each pair, [columns[j], columns[k]]", labels)


def _check_epsilon_per_pair(release: Any) -> None:
    eps_pair = _float("metadata.epsilon_per_pair", _meta(release, "epsilon_per_pair"), lo=0.0, open_lo=True)
    g = release.mechanism.guarantee()
    if g.epsilon is None or not _close(g.epsilon, eps_pair):
        _fail("metadata.epsilon_per_pair", f"must equal the mechanism's epsilon ({g.epsilon!r})", eps_pair)


#: A released value is refused when the noise would reach it with probability below 2**-64.
_IMPLAUSIBLE_LOG2 = 64


def noise_reach(mechanism: Any) -> float | None:
    r"""``T`` with :math:`P(\text{noise} \ge T) < 2^{-64}` for additive integer noise (None for other families).

    Geometric (two-sided, :math:`P(\text{noise}\ge t)=\alpha^t/(1+\alpha)`):
    :math:`T=\lceil 64\log 2/(-\log\alpha)\rceil`. Discrete Gaussian (tail below the continuous
    Gaussian's, :math:`P(\text{noise}\ge t)\le e^{-(t-1)^2/(2\sigma^2)}`):
    :math:`T=\lceil\sigma\sqrt{2\cdot 64\log 2}\rceil+1`. A value further than ``T`` from every
    possible true value is a tampered (or corrupted) record, not noise.
    """
    fam = mechanism.family
    if fam == "geometric":
        return float(math.ceil(_IMPLAUSIBLE_LOG2 * math.log(2.0) / (-mechanism.log_alpha)))
    if fam == "discrete_gaussian":
        return float(math.ceil(mechanism.sigma * math.sqrt(2.0 * _IMPLAUSIBLE_LOG2 * math.log(2.0))) + 1)
    return None


def _check_reach(release: Any, lower: float, upper: float | None) -> None:
    """Values must lie within the noise's reach ``T`` of the true values' range ``[lower, upper]``."""
    t = noise_reach(release.mechanism)
    if t is None:
        return
    vals = release.values
    lo = lower - t
    hi = math.inf if upper is None else upper + t
    bad = (vals < lo) | (vals > hi)
    if np.any(bad):
        _fail(
            "values",
            f"must lie in [{lo:g}, {hi:g}]: the true values lie in [{lower:g}, {hi - t:g}] and the "
            f"{release.mechanism.family} noise exceeds {t:g} with probability below 2**-{_IMPLAUSIBLE_LOG2}",
            vals[bad].ravel()[:5].tolist(),
        )


# ----------------------------------------------------------------------------- statistics
def _check_median_pairs(release: Any) -> None:
    n = _int("n", release.n, minimum=2)
    _check_pairs(release)
    h = math.ceil(n / 2)
    if _int("metadata.high_count", _meta(release, "high_count")) != h:
        _fail("metadata.high_count", f"must be ceil(n/2) = {h} for n = {n}", _meta(release, "high_count"))
    bounds = _int_list("metadata.bounds", _meta(release, "bounds"))
    if bounds != [0, h]:
        _fail("metadata.bounds", f"must be [0, ceil(n/2)] = [0, {h}]", bounds)
    _check_sensitivity(release, 1.0, "1 (one record moves each high-high count by at most 1)")
    _check_epsilon_per_pair(release)
    mech = release.mechanism
    _check_reach(release, 0.0, float(h))
    if mech.family in ("tgm", "btgm", "rgm"):
        if (int(mech.lower), int(mech.upper)) != (0, h):
            _fail("mechanism.lower/upper", f"must be 0 and ceil(n/2) = {h}", [mech.lower, mech.upper])
        vals = release.values
        if np.any(vals < 0) or np.any(vals > h):
            _fail("values", f"must lie in [0, {h}] for the range-preserving {mech.family!r} mechanism", vals.tolist())


def kendall_sensitivity(n: int) -> float:
    r"""Sensitivity of Kendall's :math:`\tau_a` under substitution neighbours: :math:`4/n`.

    :math:`\tau_a = (n_c - n_d)/\binom n2`. Replacing one record changes the signs of the
    :math:`n-1` pairs that contain it, each term of :math:`n_c - n_d` by at most 2, so
    :math:`|\Delta\tau_a| \le 2(n-1)/\binom n2 = 4/n`, and the bound is reached (e.g. moving the
    largest record to the bottom of a perfectly concordant sample). Li, Xiong & Jiang (2014), *Differentially Private
    Synthesization of Multi-Dimensional Data using Copula Functions*, Lemma 4.1 prints
    :math:`4/(n+1)`, which holds only for add/remove neighbours with an unknown ``n``.

    Examples
    --------
    >>> kendall_sensitivity(10)
    0.4
    """
    return 4.0 / n


def _check_kendall_pairs(release: Any) -> None:
    n = _int("n", release.n, minimum=2)
    _check_pairs(release)
    _check_sensitivity(release, kendall_sensitivity(n), "4/n (Kendall's tau-a, one record changes n-1 pairs)")
    _check_epsilon_per_pair(release)


def _check_sensitivity_norm(release: Any) -> None:
    if "sensitivity_norm" not in release.metadata:  # derivable from the family; checked when stated
        return
    norm = _meta(release, "sensitivity_norm")
    want = "l1" if release.mechanism.family in ("geometric", "laplace") else "l2"
    if norm != want:
        _fail("metadata.sensitivity_norm", f"must be {want!r} for mechanism {release.mechanism.family!r}", norm)


def _check_counts(release: Any) -> None:
    _check_sensitivity_norm(release)
    if release.values.dtype.kind != "i":
        _fail("dtype", "must be int64 for counts", str(release.values.dtype))
    _check_reach(release, 0.0, None)  # counts are >= 0 (privatize refuses negative ones)


def _check_vector(release: Any) -> None:
    _check_sensitivity_norm(release)
    if release.values.ndim != 1:
        _fail("shape", "must be one-dimensional for a vector", list(release.values.shape))


def _check_randomized_response(release: Any) -> None:
    vals = release.values
    if vals.ndim != 2:
        _fail("shape", "must be [n, q] (q answers per record)", list(vals.shape))
    n, q = vals.shape
    if release.n != n:
        _fail("n", f"must equal the number of rows of values ({n})", release.n)
    meta = release.metadata
    if "answers_per_record" in meta and _int("metadata.answers_per_record", meta["answers_per_record"]) != q:
        _fail("metadata.answers_per_record", f"must equal the number of columns of values ({q})",
              meta["answers_per_record"])
    if "columns" in meta:
        _check_columns(release, q)
    k = int(release.mechanism.k)
    if "categories" in meta and _int("metadata.categories", meta["categories"], minimum=2) != k:
        _fail("metadata.categories", f"must equal the mechanism's k ({k})", meta["categories"])
    if np.any(vals < 0) or np.any(vals >= k):
        _fail("values", f"must be category codes in 0..{k - 1}", vals.ravel()[:10].tolist())


def select_threshold(noisy_counts: Any, candidates: Any, target_rate: float) -> tuple[int, np.ndarray]:
    r"""Choice of Guo et al. (2022) Algorithm 1: index ``l`` (0-based) of ``a``, noisy rates :math:`\hat p_{G,1..M}`.

    ``l`` is the largest index with :math:`\hat p_{G,l}\le t_c`, or 0 (``a_1``) if there is none
    or if all noisy counts are 0 (rates then reported as 1). Pure post-processing of the noisy
    counts, so the loader re-derives it to check a ``dirichlet_logmean`` record.

    Examples
    --------
    >>> select_threshold(np.array([1, 2, 17, 980]), np.array([1e-3, 1e-2, 0.1]), 0.01)
    (1, array([0.001, 0.003, 0.02 ]))
    """
    s = np.asarray(noisy_counts, dtype=np.float64)
    total = s.sum()
    m = len(candidates)
    if total <= 0:
        return 0, np.ones(m)
    rates = np.cumsum(s)[:m] / total
    ok = np.nonzero(rates <= target_rate)[0]
    return (int(ok[-1]) if ok.size else 0), rates


def _check_candidates(name: str, cand: list[float]) -> None:
    if not cand or any(not 0.0 < c < 1.0 for c in cand) or any(b <= a for a, b in itertools.pairwise(cand)):
        _fail(name, "must be a non-empty increasing list of thresholds in (0, 1)", cand)


def _check_censoring_counts(release: Any) -> None:
    cand = _float_list("metadata.candidates", _meta(release, "candidates"))
    _check_candidates("metadata.candidates", cand)
    if release.values.shape != (len(cand) + 1,):
        _fail("shape", f"must be [{len(cand) + 1}] (one count per interval between candidates)",
              list(release.values.shape))
    _check_sensitivity(release, 2.0, "2 (one record moves between two intervals)")
    _check_reach(release, 0.0, None if release.n is None else float(release.n))


def _check_dirichlet_logmean(release: Any) -> None:
    n = _int("n", release.n, minimum=2)
    d = _int("metadata.d", _meta(release, "d"), minimum=2)
    _check_columns(release, d)
    a = _float("metadata.a", _meta(release, "a"), lo=0.0, hi=1.0, open_lo=True)
    if a >= 1.0:
        _fail("metadata.a", "must be in (0, 1)", a)
    n_parts = _int_list("metadata.n_parts", _meta(release, "n_parts"), minimum=1)
    split = len(n_parts) == 2
    if len(n_parts) not in (1, 2) or sum(n_parts) != n:
        _fail("metadata.n_parts", f"must be [n] or [n1, n2] summing to n = {n}", n_parts)
    if split and min(n_parts) < 2:
        _fail("metadata.n_parts", "must leave at least 2 records in each part", n_parts)
    want_shape = (2, d) if split else (d,)
    if release.values.shape != want_shape:
        _fail("shape", f"must be {list(want_shape)} for d = {d} and {len(n_parts)} part(s)", list(release.values.shape))
    if release.composition != ("parallel" if split else "joint"):
        _fail("composition", f"must be {'parallel' if split else 'joint'} for {len(n_parts)} part(s)",
              release.composition)
    cols = [str(c) for c in _meta(release, "columns")]
    want_labels = [[part, c] for part in ("D1", "D2") for c in cols] if split else [[c] for c in cols]
    if [list(lab) for lab in release.labels] != want_labels:
        _fail("labels", "must be the column names (prefixed by D1/D2 for a split)", [list(x) for x in release.labels])
    _check_sensitivity(release, -d * math.log(a), "-d log(a) (censored log-sums, Guo et al. (2022) §3.1)")
    eps1 = _float("metadata.epsilon_1", _meta(release, "epsilon_1"), lo=0.0, open_lo=True)
    eps2 = _float("metadata.epsilon_2", _meta(release, "epsilon_2"), lo=0.0)
    g = release.mechanism.guarantee()
    if g.epsilon is None or not _close(g.epsilon, eps1):
        _fail("metadata.epsilon_1", f"must equal the Laplace mechanism's epsilon ({g.epsilon!r})", eps1)
    scales = _float_list("metadata.laplace_scale_logmean", _meta(release, "laplace_scale_logmean"))
    want = [float(release.mechanism.scale) / m for m in n_parts]
    if len(scales) != len(want) or not all(_close(s, w) for s, w in zip(scales, want, strict=False)):
        _fail("metadata.laplace_scale_logmean", f"must be mechanism.scale / n_parts = {want}", scales)
    if _meta(release, "zeros") not in ("error", "censor"):
        _fail("metadata.zeros", "must be 'error' or 'censor'", _meta(release, "zeros"))
    _float("metadata.simplex_tol", _meta(release, "simplex_tol"), lo=0.0)
    comps = release.components
    if not comps:
        if eps2 != 0.0:
            _fail("metadata.epsilon_2", "must be 0 when the threshold was fixed (no selection component)", eps2)
        for key in ("candidates", "noisy_counts", "noisy_rates", "threshold_index", "target_rate"):
            if key in release.metadata:
                _fail(f"metadata.{key}", "must be absent when the threshold was fixed", release.metadata[key])
        return
    if len(comps) != 1:
        _fail("components", "must hold exactly one threshold-selection release", len(comps))
    comp = comps[0]
    if comp.n != n:
        _fail("components[0].n", f"must equal n = {n}", comp.n)
    if comp.secure != release.secure:
        _fail("components[0].secure", f"must equal the release's secure flag ({release.secure})", comp.secure)
    ge = comp.mechanism.guarantee().epsilon
    if ge is None or not _close(ge, eps2):
        _fail("metadata.epsilon_2", f"must equal the selection component's epsilon ({ge!r})", eps2)
    cand = _float_list("metadata.candidates", _meta(release, "candidates"))
    _check_candidates("metadata.candidates", cand)
    if cand != [float(c) for c in comp.metadata["candidates"]]:
        _fail("metadata.candidates", "must equal the selection component's candidates", cand)
    noisy = _int_list("metadata.noisy_counts", _meta(release, "noisy_counts"), minimum=0)
    if noisy != np.maximum(comp.values, 0).tolist():
        _fail("metadata.noisy_counts", "must be max(0, the selection component's values) (Algorithm 1)", noisy)
    t_c = _float("metadata.target_rate", _meta(release, "target_rate"), lo=0.0, hi=1.0, open_lo=True)
    l_idx, rates = select_threshold(np.asarray(noisy), np.asarray(cand), t_c)
    if _int("metadata.threshold_index", _meta(release, "threshold_index")) != l_idx:
        _fail("metadata.threshold_index", f"must be the index Algorithm 1 selects from the noisy counts ({l_idx})",
              _meta(release, "threshold_index"))
    got_rates = _float_list("metadata.noisy_rates", _meta(release, "noisy_rates"))
    if len(got_rates) != rates.size or not np.allclose(got_rates, rates, rtol=_RTOL, atol=0.0):
        _fail("metadata.noisy_rates", "must be the cumulative shares of the noisy counts", got_rates)
    if not _close(a, cand[l_idx]):
        _fail("metadata.a", f"must be the selected candidate candidates[{l_idx}] = {cand[l_idx]!r}", a)


_PAIR_FIELDS: dict[str, FieldType] = {
    "columns": STR_LIST,
    "p": INT,
    "pairs": _any_list,
    "epsilon_per_pair": FLOAT,
}

#: Schemas of every statistic a release may hold, by name.
SCHEMAS: dict[str, StatisticSchema] = {
    s.name: s
    for s in (
        StatisticSchema(
            "median_pairs",
            families=("geometric", "tgm", "btgm", "rgm"),
            compositions=("sequential",),
            required={**_PAIR_FIELDS, "high_count": INT, "bounds": INT_LIST, "tie_breaking": STR},
            check=_check_median_pairs,
            sensitivity="1 per high-high count (Wang et al. 2026, Theorem 3.1)",
        ),
        StatisticSchema(
            "kendall_pairs",
            families=("laplace",),
            compositions=("sequential",),
            required={**_PAIR_FIELDS, "estimand": STR},
            check=_check_kendall_pairs,
            sensitivity="4/n per Kendall's tau-a (one record changes n-1 of the C(n,2) pairs by 2)",
        ),
        StatisticSchema(
            "counts",
            families=("geometric", "discrete_gaussian"),
            compositions=("joint",),
            optional={"sensitivity_norm": STR},
            needs_n=False,
            check=_check_counts,
            sensitivity="stated by the curator (L1 for geometric, L2 for discrete Gaussian)",
        ),
        StatisticSchema(
            "vector",
            families=("laplace", "gaussian"),
            compositions=("joint",),
            optional={"sensitivity_norm": STR},
            needs_n=False,
            check=_check_vector,
            sensitivity="stated by the curator (L1 for Laplace, L2 for Gaussian)",
        ),
        StatisticSchema(
            "randomized_response",
            families=("randomized_response",),
            compositions=("per_record",),
            optional={"columns": STR_LIST, "answers_per_record": INT, "categories": INT},
            check=_check_randomized_response,
            sensitivity="record level: each answer is randomized on its own (local DP)",
        ),
        StatisticSchema(
            "dirichlet_censoring_counts",
            families=("geometric",),
            compositions=("joint",),
            required={"candidates": FLOAT_LIST, "clipped_at_zero": BOOL, "note": STR},
            check=_check_censoring_counts,
            sensitivity="2 in L1 (one record moves between two intervals; Guo et al. 2022, Algorithm 1)",
        ),
        StatisticSchema(
            "dirichlet_logmean",
            families=("laplace",),
            compositions=("joint", "parallel"),
            required={
                "columns": STR_LIST,
                "d": INT,
                "units": STR,
                "threshold_selection": STR,
                "a": FLOAT,
                "n_parts": INT_LIST,
                "epsilon_1": FLOAT,
                "epsilon_2": FLOAT,
                "laplace_scale_logmean": FLOAT_LIST,
                "zeros": STR,
                "simplex_tol": FLOAT,
            },
            optional={
                "candidates": FLOAT_LIST,
                "target_rate": FLOAT,
                "noisy_counts": INT_LIST,
                "noisy_rates": FLOAT_LIST,
                "threshold_index": INT,
            },
            check=_check_dirichlet_logmean,
            components=("dirichlet_censoring_counts",),
            sensitivity="-d log(a) in L1 on the censored log-sums (Guo et al. 2022, §3.1)",
        ),
    )
}


# ----------------------------------------------------------------------------- Li et al. (2014): DPCopula
def _check_dtypes(raw: Any, doms: list[Any]) -> None:
    """``metadata.dtypes``: one allowed dtype name per column, able to hold its domain (``Domain.dtype_rule``)."""
    dtypes = _str_list("metadata.dtypes", raw)
    if len(dtypes) != len(doms):
        _fail("metadata.dtypes", f"must give {len(doms)} dtype names", dtypes)
    for j, (dt, d) in enumerate(zip(dtypes, doms, strict=True)):
        rule = d.dtype_rule(dt)
        if rule is not None:
            _fail(f"metadata.dtypes[{j}]", f"{rule} (metadata.domains[{j}] is of kind {d.kind!r})", dt)


def _check_dpcopula_mle(release: Any) -> None:
    n = _int("n", release.n, minimum=2)
    _check_pairs(release)
    blocks = _int("metadata.blocks", _meta(release, "blocks"), minimum=1)
    b = _int("metadata.block_size", _meta(release, "block_size"), minimum=2)
    if b != n // blocks:
        _fail("metadata.block_size", f"must be floor(n / blocks) = {n // blocks}", b)
    _check_sensitivity(release, 2.0 / blocks, "2/blocks (Algorithm 2: diameter 2 of a coefficient over l blocks)")
    _check_epsilon_per_pair(release)


def _check_dpcopula(release: Any) -> None:
    from ._domains import Domain

    n = _int("n", release.n, minimum=2)
    m = _int("metadata.m", _meta(release, "m"), minimum=2)
    cols = _check_columns(release, m)
    raw = _any_list("metadata.domains", _meta(release, "domains"))
    if len(raw) != m:
        _fail("metadata.domains", f"must give {m} domains (one per column)", raw)
    doms = [Domain.from_dict(d, f"metadata.domains[{j}]") for j, d in enumerate(raw)]
    _check_dtypes(_meta(release, "dtypes"), doms)
    bins = _int_list("metadata.bins", _meta(release, "bins"), minimum=2)
    if bins != [d.size for d in doms]:
        _fail("metadata.bins", "must be the number of cells of each domain", bins)
    if release.values.shape != (sum(bins),):
        _fail("shape", f"must be [{sum(bins)}] (the concatenated histograms)", list(release.values.shape))
    if release.values.dtype.kind != "i":
        _fail("dtype", "must be int64 for noisy histogram counts", str(release.values.dtype))
    want = [[c, lab] for c, d in zip(cols, doms, strict=True) for lab in d.labels()]
    if [list(lab) for lab in release.labels] != want:
        _fail("labels", "must be [column, cell label] for every cell of every domain, in order", "...")
    _check_sensitivity(release, 2.0 * m, "2m (m histograms, one record moves one count in each)")
    eps1 = _float("metadata.epsilon_1", _meta(release, "epsilon_1"), lo=0.0, open_lo=True)
    eps2 = _float("metadata.epsilon_2", _meta(release, "epsilon_2"), lo=0.0, open_lo=True)
    ratio = _float("metadata.ratio", _meta(release, "ratio"), lo=0.0, open_lo=True)
    g = release.mechanism.guarantee()
    if g.epsilon is None or not _close(g.epsilon, eps1):
        _fail("metadata.epsilon_1", f"must equal the margins' geometric epsilon ({g.epsilon!r})", eps1)
    if not math.isclose(eps1 / eps2, ratio, rel_tol=1e-6):
        _fail("metadata.ratio", f"must be epsilon_1 / epsilon_2 = {eps1 / eps2!r}", ratio)
    _check_reach(release, 0.0, float(n))
    want_comp = {"kendall": "kendall_pairs", "mle": "dpcopula_mle", "median": "median_pairs"}
    corr = _str("metadata.correlation", _meta(release, "correlation"))
    if corr not in want_comp:
        _fail("metadata.correlation", f"must be one of {sorted(want_comp)}", corr)
    comps = release.components
    if len(comps) != 1 or comps[0].statistic != want_comp[corr]:
        _fail("components", f"must hold exactly one {want_comp[corr]!r} release for correlation={corr!r}",
              [c.statistic for c in comps])
    comp = comps[0]
    if comp.n != n:
        _fail("components[0].n", f"must equal n = {n}", comp.n)
    if [str(c) for c in comp.metadata["columns"]] != cols:
        _fail("components[0].metadata.columns", "must equal the release's columns", comp.metadata["columns"])
    ge = comp.guarantee.epsilon
    if ge is None or not _close(ge, eps2):
        _fail("metadata.epsilon_2", f"must equal the correlation component's epsilon ({ge!r})", eps2)


# ----------------------------------------------------------------------------- covariance (Ferrando et al. 2026)
#: Order of the ``d(d+1)/2`` unique entries of a second-moment matrix in a release.
ENTRY_ORDER = "lower triangle j >= k, row-major: (0,0), (1,0), (1,1), (2,0), ...; index = j(j+1)/2 + k"


def entry_index(j: int, k: int) -> int:
    """Position of entry ``(j, k)``, ``j >= k``, in :data:`ENTRY_ORDER`.

    Examples
    --------
    >>> entry_index(2, 1)
    4
    """
    return j * (j + 1) // 2 + k


def pace_ggm_sensitivity(n: int, bound: float) -> float:
    r"""Sensitivity of one entry of :math:`X^\top X/n` with :math:`|x_j| \le B`: :math:`2B^2/n`.

    Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via Gaussian Graphical
    Models*, App. A.2 (:math:`|v_j v_k - u_j u_k| \le 2B^2`, reached at ``v_j = v_k = u_j = -u_k = B``).
    A diagonal entry moves by at most :math:`B^2/n`; PACE-GGM uses :math:`2B^2/n` for every entry as
    the paper does (the score of the exponential mechanism needs the maximum over entries).

    Examples
    --------
    >>> pace_ggm_sensitivity(100, 1.0)
    0.02
    """
    return 2.0 * bound * bound / n


def second_moment_sensitivity(n: int, d: int, bound: float) -> float:
    r"""L2 sensitivity of the vector of the ``d(d+1)/2`` unique entries of :math:`X^\top X/n`: :math:`dB^2/n`.

    With ``a_j = v_j^2``, ``b_j = u_j^2`` in :math:`[0, B^2]`,
    :math:`\sum_{j\ge k}(v_jv_k-u_ju_k)^2 = \tfrac12[\|vv^\top-uu^\top\|_F^2 + \sum_j(a_j-b_j)^2]
    \le \tfrac12[(\sum a)^2 + (\sum b)^2 + \sum (a_j-b_j)^2]`, a convex function maximised at
    ``a, b`` in :math:`\{0, B^2\}^d`, where it is at most :math:`d^2 B^4` (``p^2+q^2+m <= 2d^2``
    with ``p, q`` the counts of :math:`B^2` and ``m <= 2d-p-q`` the disagreements). Reached for
    even ``d`` (``v = B 1``, ``u`` half ``B`` half ``-B``). Ferrando, Fuentes, Mullins, Musco & Sheldon (2026),
    *Private Adaptive Covariance Estimation via Gaussian Graphical Models*, App. A gives :math:`\sqrt2 dB^2/n`
    for the full symmetric matrix in Frobenius norm, which counts each off-diagonal entry twice.

    Examples
    --------
    >>> second_moment_sensitivity(100, 4, 1.0)
    0.04
    """
    return d * bound * bound / n


def _check_second_moment_common(release: Any) -> tuple[int, int, float, list[str]]:
    n = _int("n", release.n, minimum=2)
    d = _int("metadata.d", _meta(release, "d"), minimum=2)
    cols = _check_columns(release, d)
    b = _float("metadata.bound", _meta(release, "bound"), lo=0.0, open_lo=True)
    _bool("metadata.clip", _meta(release, "clip"))
    if _meta(release, "entry_order") != ENTRY_ORDER:
        _fail("metadata.entry_order", f"must be {ENTRY_ORDER!r}", _meta(release, "entry_order"))
    return n, d, b, cols


def _check_second_moment(release: Any) -> None:
    n, d, b, cols = _check_second_moment_common(release)
    m = d * (d + 1) // 2
    if release.values.shape != (m,):
        _fail("shape", f"must be [{m}] (the d(d+1)/2 unique entries, d = {d})", list(release.values.shape))
    want = [[cols[j], cols[k]] for j in range(d) for k in range(j + 1)]
    if [list(lab) for lab in release.labels] != want:
        got = [list(x) for x in release.labels]
        _fail("labels", "must be [columns[j], columns[k]] for each entry in entry_order", got)
    _check_sensitivity(release, second_moment_sensitivity(n, d, b), "d B**2 / n (L2, unique entries)")


def _check_pace_ggm_round(release: Any) -> None:
    step = _str("metadata.step", _meta(release, "step"))
    _int("metadata.round", _meta(release, "round"), minimum=1)
    want = {"select": "exponential", "measure": "gaussian"}
    if step not in want:
        _fail("metadata.step", "must be 'select' or 'measure'", step)
    if release.mechanism.family != want[step]:
        _fail("mechanism.family", f"must be {want[step]!r} for step {step!r}", release.mechanism.family)
    if release.values.shape != (1,):
        _fail("shape", "must be [1] (one selection or one measurement per round)", list(release.values.shape))
    if step == "select" and (release.values.dtype.kind != "i" or release.values[0] < 0):
        _fail("values", "must be one non-negative entry index for a selection", release.values.tolist())


def _round_dicts(release: Any) -> list[Mapping[str, Any]]:
    rounds = _any_list("metadata.rounds", _meta(release, "rounds"))
    if not rounds:
        _fail("metadata.rounds", "must list at least one round", rounds)
    keys = {"round", "entry", "index", "measurement", "sigma", "epsilon", "rho_sel", "rho_meas", "annealed", "final"}
    for t, r in enumerate(rounds):
        if not isinstance(r, Mapping) or set(r) != keys:
            _fail(f"metadata.rounds[{t}]", f"must be an object with keys {sorted(keys)}", r)
    return rounds


def _check_pace_ggm(release: Any) -> None:
    n, d, b, cols = _check_second_moment_common(release)
    if release.values.shape != (d,):
        _fail("shape", f"must be [{d}] (the diagonal measurements of Algorithm 2)", list(release.values.shape))
    if [list(lab) for lab in release.labels] != [[c, c] for c in cols]:
        _fail("labels", "must be [columns[j], columns[j]] for the diagonal", [list(x) for x in release.labels])
    delta = pace_ggm_sensitivity(n, b)
    _check_sensitivity(release, delta, "2 B**2 / n (one entry of X^T X / n, Ferrando et al. (2026) App. A)")
    alpha = _float("metadata.alpha", _meta(release, "alpha"), lo=0.0, hi=1.0, open_lo=True)
    beta = _float("metadata.beta", _meta(release, "beta"), lo=0.0, hi=1.0, open_lo=True)
    if alpha >= 1.0 or beta >= 1.0:
        _fail("metadata.alpha/beta", "must be in (0, 1)", [alpha, beta])
    T = _int("metadata.T", _meta(release, "T"), minimum=1)
    rho = _float("metadata.rho", _meta(release, "rho"), lo=0.0, open_lo=True)
    rho_mean = _check_pace_ggm_centre(release, n, d, b, rho)  # 0 without centring
    rho_full, rho = rho, rho - rho_mean  # below, rho is what Algorithm 1 gets
    rho_diag = _float("metadata.rho_diag", _meta(release, "rho_diag"), lo=0.0, open_lo=True)
    if not _close(rho_diag, alpha * rho):
        _fail("metadata.rho_diag", f"must be alpha * (rho - rho_mean) = {alpha * rho!r}", rho_diag)
    if not _close(release.mechanism.rho * d, rho_diag):
        rule = f"must give d * Delta**2 / (2 sigma**2) = rho_diag = {rho_diag!r}"
        _fail("mechanism.sigma", rule, release.mechanism.sigma)
    g = release.guarantee
    if g.rho is None or not _close(g.rho, rho_full) or g.epsilon is not None:
        _fail("guarantee", f"must be rho-zCDP with rho = metadata.rho = {rho_full!r}", g.to_dict())
    rounds = _round_dicts(release)
    comps = release.components[: len(release.components) - (rho_mean > 0)]
    if len(comps) != 2 * len(rounds):
        _fail("components", f"must hold a selection and a measurement per round ({2 * len(rounds)})", len(comps))
    m = d * (d + 1) // 2
    per = (rho - rho_diag) / T
    rs, rm = beta * per, (1.0 - beta) * per
    used = rho_diag
    total = rho_diag
    for t, r in enumerate(rounds):
        where = f"metadata.rounds[{t}]"
        if _int(f"{where}.round", r["round"]) != t + 1:
            _fail(f"{where}.round", f"must be {t + 1}", r["round"])
        ent = _int_list(f"{where}.entry", r["entry"], minimum=0)
        if len(ent) != 2 or not ent[1] <= ent[0] < d:
            _fail(f"{where}.entry", f"must be [j, k] with 0 <= k <= j < d = {d}", ent)
        idx = _int(f"{where}.index", r["index"], minimum=0, maximum=m - 1)
        if idx != entry_index(ent[0], ent[1]):
            _fail(f"{where}.index", f"must be j(j+1)/2 + k = {entry_index(ent[0], ent[1])}", idx)
        z = _float(f"{where}.measurement", r["measurement"])
        sigma = _float(f"{where}.sigma", r["sigma"], lo=0.0, open_lo=True)
        eps = _float(f"{where}.epsilon", r["epsilon"], lo=0.0, open_lo=True)
        got_rs = _float(f"{where}.rho_sel", r["rho_sel"], lo=0.0, open_lo=True)
        got_rm = _float(f"{where}.rho_meas", r["rho_meas"], lo=0.0, open_lo=True)
        annealed = _bool(f"{where}.annealed", r["annealed"])
        final = _bool(f"{where}.final", r["final"])
        left = rho - used
        want_final = left < 2.0 * (rs + rm)
        if want_final or final:
            rs, rm = beta * left, (1.0 - beta) * left
        if final != (t == len(rounds) - 1):
            _fail(f"{where}.final", "must be true for the last round only (Algorithm 3 lines 4-6)", final)
        if not (_close(got_rs, rs) and _close(got_rm, rm)):
            _fail(
                f"{where}.rho_sel/rho_meas",
                f"must follow Algorithm 3 from the start (beta (1-alpha) rho / T, ...) and the annealed flags: "
                f"[{rs!r}, {rm!r}]",
                [got_rs, got_rm],
            )
        if not _close(eps * eps / 8.0, got_rs):
            _fail(f"{where}.epsilon", "must be sqrt(8 rho_sel)", eps)
        if not _close(delta * delta / (2.0 * sigma * sigma), got_rm):
            _fail(f"{where}.sigma", "must be Delta / sqrt(2 rho_meas)", sigma)
        sel, meas = comps[2 * t], comps[2 * t + 1]
        label = [cols[ent[0]], cols[ent[1]]]
        for c, step, name in ((sel, "select", "exponential"), (meas, "measure", "gaussian")):
            cw = f"components[{2 * t + (step == 'measure')}]"
            if c.statistic != "pace_ggm_round" or c.metadata.get("step") != step or c.metadata.get("round") != t + 1:
                _fail(cw, f"must be the {step} step of round {t + 1}", c.statistic)
            if c.n != n or [list(x) for x in c.labels] != [label]:
                _fail(f"{cw}.n/labels", f"must be n = {n} and the selected entry {label}", [c.n, c.labels])
            if c.mechanism.family != name or not _close(float(c.mechanism.sensitivity), delta):
                _fail(f"{cw}.mechanism", f"must be {name} with sensitivity Delta = {delta!r}", c.mechanism.to_dict())
        if int(sel.values[0]) != idx or not _close(sel.mechanism.epsilon, eps):
            rule = f"round {t + 1} must select index {idx} with epsilon {eps!r}"
            _fail("components.select", rule, sel.values.tolist())
        if float(meas.values[0]) != z or not _close(meas.mechanism.sigma, sigma):
            rule = f"round {t + 1} must measure {z!r} with sigma {sigma!r}"
            _fail("components.measure", rule, meas.values.tolist())
        total += got_rs + got_rm
        used = rho if final else used + rs + rm
        if annealed and not final:
            rs, rm = 2.0 * rs, 4.0 * rm
    if not math.isclose(total + rho_mean, rho_full, rel_tol=1e-9):
        rule = f"budgets must add up to rho = {rho_full!r} with rho_diag and rho_mean (fully adaptive composition)"
        _fail("metadata.rounds", rule, total + rho_mean)


SCHEMAS.update(
    {
        s.name: s
        for s in (
            StatisticSchema(
                "dpcopula_mle",
                families=("laplace",),
                compositions=("sequential",),
                required={**_PAIR_FIELDS, "blocks": INT, "block_size": INT, "estimator": STR},
                check=_check_dpcopula_mle,
                sensitivity="2/l per averaged coefficient (Li et al. 2014, Algorithm 2, l disjoint blocks)",
            ),
            StatisticSchema(
                "dpcopula",
                families=("geometric",),
                compositions=("joint",),
                required={
                    "columns": STR_LIST,
                    "m": INT,
                    "domains": _any_list,
                    "dtypes": STR_LIST,
                    "bins": INT_LIST,
                    "ratio": FLOAT,
                    "epsilon_1": FLOAT,
                    "epsilon_2": FLOAT,
                    "correlation": STR,
                },
                check=_check_dpcopula,
                components=("kendall_pairs", "dpcopula_mle", "median_pairs"),
                sensitivity="2m in L1 on the m concatenated histograms (Li et al. 2014, Algorithms 1/4 step 1)",
            ),
            StatisticSchema(
                "second_moment",
                families=("gaussian",),
                compositions=("joint",),
                required={
                    "columns": STR_LIST,
                    "d": INT,
                    "bound": FLOAT,
                    "clip": BOOL,
                    "entry_order": STR,
                    "centering": STR,
                },
                check=_check_second_moment,
                sensitivity="d B**2 / n in L2 on the d(d+1)/2 unique entries of X^T X / n, |x_j| <= B",
            ),
            StatisticSchema(
                "pace_ggm_round",
                families=("exponential", "gaussian"),
                compositions=("joint",),
                required={"round": INT, "step": STR},
                check=_check_pace_ggm_round,
                sensitivity=(
                    "2 B**2 / n per entry and per selection score (Ferrando et al. 2026, App. A); checked by pace_ggm"
                ),
            ),
            StatisticSchema(
                "pace_ggm",
                families=("gaussian",),
                compositions=("sequential",),
                required={
                    "columns": STR_LIST,
                    "d": INT,
                    "bound": FLOAT,
                    "clip": BOOL,
                    "alpha": FLOAT,
                    "beta": FLOAT,
                    "T": INT,
                    "rho": FLOAT,
                    "rho_diag": FLOAT,
                    "entry_order": STR,
                    "centering": STR,
                    "solver": STR,
                    "rounds": _any_list,
                },
                optional={
                    "center": BOOL,
                    "mean_share": FLOAT,
                    "rho_mean": FLOAT,
                    "data_bound": FLOAT,
                    "mean": FLOAT_LIST,
                },
                check=_check_pace_ggm,
                components=("pace_ggm_round", "pace_ggm_mean"),
                sensitivity="2 B**2 / n per entry of X^T X / n with |x_j| <= B (Ferrando et al. 2026, App. A.2)",
            ),
        )
    }
)


# ----------------------------------------------------------------------------- covariance: budgeted centring
def mean_sensitivity(n: int, d: int, bound: float) -> float:
    r"""L2 sensitivity of the mean vector :math:`\bar x` of ``n`` records with :math:`|x_j| \le B`: :math:`2B\sqrt d/n`.

    Substituting ``u`` by ``v`` moves :math:`\bar x` by :math:`(v - u)/n`, and :math:`\|v - u\|_2 \le
    \sqrt{d}\, 2B`, reached at ``v = B 1``, ``u = -B 1`` (brute-forced over the corners of the cube in
    ``tests/covariance/test_centring.py``). Used by ``pace_ggm`` with ``center=True``.

    Examples
    --------
    >>> mean_sensitivity(100, 4, 1.0)
    0.04
    """
    return 2.0 * bound * math.sqrt(d) / n


def _check_pace_ggm_centre(release: Any, n: int, d: int, b: float, rho: float) -> float:
    """Centred ``pace_ggm`` releases: the mean component, its budget, and the centred bound; returns ``rho_mean``."""
    keys = ("center", "mean_share", "rho_mean", "data_bound", "mean")
    present = [k for k in keys if k in release.metadata]
    comps = release.components
    has_mean = bool(comps) and comps[-1].statistic == "pace_ggm_mean"
    if not present:
        if has_mean or any(c.statistic == "pace_ggm_mean" for c in comps):
            _fail("components", "must not hold a pace_ggm_mean release without metadata.center", len(comps))
        return 0.0
    if present != list(keys) or release.metadata["center"] is not True:
        _fail("metadata.center", f"must come with all of {list(keys)} and be true", present)
    if not has_mean or sum(c.statistic == "pace_ggm_mean" for c in comps) != 1:
        _fail("components", "must end with the one pace_ggm_mean release of a centred release", len(comps))
    share = _float("metadata.mean_share", _meta(release, "mean_share"), lo=0.0, hi=1.0, open_lo=True)
    rho_mean = _float("metadata.rho_mean", _meta(release, "rho_mean"), lo=0.0, open_lo=True)
    if share >= 1.0 or not _close(rho_mean, share * rho):
        _fail("metadata.rho_mean", f"must be mean_share * rho = {share * rho!r} with mean_share < 1", rho_mean)
    b0 = _float("metadata.data_bound", _meta(release, "data_bound"), lo=0.0, open_lo=True)
    c = np.asarray(_float_list("metadata.mean", _meta(release, "mean")), dtype=np.float64)
    comp = comps[-1]
    if c.shape != (d,) or comp.values.shape != (d,):
        _fail("metadata.mean", f"must hold d = {d} values, as the mean component", [c.shape, comp.values.shape])
    if not np.array_equal(c, np.clip(comp.values.astype(np.float64), -b0, b0)):
        _fail("metadata.mean", "must be the released mean clipped to [-data_bound, data_bound]", c.tolist())
    want_b = b0 + float(np.max(np.abs(c)))
    if not _close(b, want_b):
        _fail("metadata.bound", f"must be the centred bound data_bound + max|mean| = {want_b!r}", b)
    if comp.mechanism.family != "gaussian" or comp.n != n or comp.metadata.get("step") != "mean":
        _fail("components[-1]", f"must be the Gaussian mean release of n = {n} records", comp.mechanism.to_dict())
    _check_sensitivity(comp, mean_sensitivity(n, d, b0), "2 B sqrt(d) / n (L2, the mean vector)")
    g = comp.guarantee
    if g.rho is None or not _close(g.rho, rho_mean) or not _close(comp.mechanism.rho, rho_mean):
        _fail("components[-1].guarantee", f"must be rho_mean = {rho_mean!r}-zCDP", g.to_dict())
    return rho_mean


SCHEMAS["pace_ggm_mean"] = StatisticSchema(
    "pace_ggm_mean",
    families=("gaussian",),
    compositions=("joint",),
    required={"step": STR},
    sensitivity="2 B sqrt(d) / n in L2 on the mean vector, |x_j| <= B; checked by pace_ggm",
)


# ----------------------------------------------------------------------------- Li et al. (2014): DPCopula hybrid
def _check_hybrid_part(release: Any) -> tuple[int, list[str], int]:
    _int("n", release.n, minimum=2)
    cols = _str_list("metadata.columns", _meta(release, "columns"))
    if len(cols) < 2 or len(set(cols)) != len(cols):
        _fail("metadata.columns", "must name at least two distinct large-domain columns", cols)
    parts = _int("metadata.partitions", _meta(release, "partitions"), minimum=1)
    return len(cols), cols, parts


def _check_dpcopula_hybrid_margins(release: Any) -> None:
    m2, _, parts = _check_hybrid_part(release)
    bins = _int_list("metadata.bins", _meta(release, "bins"), minimum=2)
    if len(bins) != m2:
        _fail("metadata.bins", f"must give {m2} domain sizes", bins)
    if release.values.shape != (parts * sum(bins),):
        _fail("shape", f"must be [{parts * sum(bins)}] (partitions x concatenated histograms)",
              list(release.values.shape))
    if release.values.dtype.kind != "i":
        _fail("dtype", "must be int64 for noisy histogram counts", str(release.values.dtype))
    _check_sensitivity(release, 2.0 * m2, "2 m_2 (one record moves one (partition, cell) count per attribute)")
    _check_reach(release, 0.0, float(release.n))


def _check_dpcopula_hybrid_kendall(release: Any) -> None:
    m2, _, parts = _check_hybrid_part(release)
    k = m2 * (m2 - 1) // 2
    iu, ju = np.triu_indices(m2, 1)
    pairs = _any_list("metadata.pairs", _meta(release, "pairs"))
    if [list(map(int, q)) for q in pairs] != [[int(i), int(j)] for i, j in zip(iu, ju, strict=True)]:
        _fail("metadata.pairs", "must list the upper-triangle pairs in row-major order", pairs)
    floor = _int("metadata.floor", _meta(release, "floor"), minimum=2)
    if release.values.shape != (parts * k,):
        _fail("shape", f"must be [{parts * k}] (partitions x column pairs)", list(release.values.shape))
    _check_sensitivity(release, 8.0 * k / floor,
                       "2 C(m_2,2) 4/floor (a substitution moves at most two partitions, each by 4/floor per pair)")
    _check_reach(release, -1.0, 1.0)


def _check_dpcopula_hybrid(release: Any) -> None:
    from ._domains import Domain

    n = _int("n", release.n, minimum=2)
    m = _int("metadata.m", _meta(release, "m"), minimum=3)
    cols = _check_columns(release, m)
    raw = _any_list("metadata.domains", _meta(release, "domains"))
    if len(raw) != m:
        _fail("metadata.domains", f"must give {m} domains (one per column)", raw)
    doms = [Domain.from_dict(d, f"metadata.domains[{j}]") for j, d in enumerate(raw)]
    _check_dtypes(_meta(release, "dtypes"), doms)
    bins = _int_list("metadata.bins", _meta(release, "bins"), minimum=2)
    if bins != [d.size for d in doms]:
        _fail("metadata.bins", "must be the number of cells of each domain", bins)
    hyb = _str_list("metadata.hybrid", _meta(release, "hybrid"))
    small = [cols.index(c) for c in hyb if c in cols]
    if not hyb or len(small) != len(hyb) or small != sorted(set(small)) or m - len(small) < 2:
        _fail("metadata.hybrid", "must list, in column order, distinct columns leaving at least two others", hyb)
    if "hybrid_threshold" in release.metadata:
        t = _int("metadata.hybrid_threshold", _meta(release, "hybrid_threshold"), minimum=3)
        if small != [j for j, b in enumerate(bins) if b < t]:
            _fail("metadata.hybrid", f"must be the columns with fewer than hybrid_threshold = {t} cells", hyb)
    large = [j for j in range(m) if j not in small]
    parts = math.prod(bins[j] for j in small)
    if release.values.shape != (parts,) or release.values.dtype.kind != "i":
        _fail("shape", f"must be [{parts}] integer partition counts", list(release.values.shape))
    plabels = [list(t) for t in itertools.product(*[doms[j].labels() for j in small])]
    if [list(lab) for lab in release.labels] != plabels:
        _fail("labels", "must be the small-domain cell labels of every partition, in C order", "...")
    _check_sensitivity(release, 2.0, "2 (one record moves between two partitions)")
    _check_reach(release, 0.0, float(n))
    if _str("metadata.correlation", _meta(release, "correlation")) != "kendall":
        _fail("metadata.correlation", "must be 'kendall' for a hybrid release", _meta(release, "correlation"))
    comps = release.components
    if [c.statistic for c in comps] != ["dpcopula_hybrid_margins", "dpcopula_hybrid_kendall"]:
        _fail("components", "must be [dpcopula_hybrid_margins, dpcopula_hybrid_kendall]",
              [c.statistic for c in comps])
    lnames = [cols[j] for j in large]
    floor = _int("metadata.floor", _meta(release, "floor"), minimum=2)
    for i, c in enumerate(comps):
        if c.n != n or [str(x) for x in c.metadata["columns"]] != lnames or c.metadata["partitions"] != parts:
            _fail(f"components[{i}]", f"must have n = {n}, columns {lnames} and {parts} partitions", c.statistic)
    if [int(b) for b in comps[0].metadata["bins"]] != [bins[j] for j in large]:
        _fail("components[0].metadata.bins", "must be the large columns' domain sizes", comps[0].metadata["bins"])
    want = [[*pl, cols[j], lab] for pl in plabels for j in large for lab in doms[j].labels()]
    if [list(lab) for lab in comps[0].labels] != want:
        _fail("components[0].labels", "must be [partition..., column, cell] in order", "...")
    if int(comps[1].metadata["floor"]) != floor:
        _fail("components[1].metadata.floor", f"must equal the release's floor = {floor}", comps[1].metadata["floor"])
    pairs = [(lnames[i], lnames[j]) for i, j in itertools.combinations(range(len(lnames)), 2)]
    if [list(lab) for lab in comps[1].labels] != [[*pl, a, b] for pl in plabels for a, b in pairs]:
        _fail("components[1].labels", "must be [partition..., column, column] in order", "...")
    eps = {
        "epsilon_counts": release.mechanism.guarantee().epsilon,
        "epsilon_1": comps[0].guarantee.epsilon,
        "epsilon_2": comps[1].guarantee.epsilon,
    }
    got = {key: _float(f"metadata.{key}", _meta(release, key), lo=0.0, open_lo=True) for key in eps}
    for key, e in eps.items():
        if e is None or not _close(e, got[key]):
            _fail(f"metadata.{key}", f"must equal its mechanism's epsilon ({e!r})", got[key])
    ratio = _float("metadata.ratio", _meta(release, "ratio"), lo=0.0, open_lo=True)
    if not math.isclose(got["epsilon_1"] / got["epsilon_2"], ratio, rel_tol=1e-6):
        _fail("metadata.ratio", "must be epsilon_1 / epsilon_2", ratio)
    share = _float("metadata.counts_share", _meta(release, "counts_share"), lo=0.0, open_lo=True)
    if not math.isclose(got["epsilon_counts"] / sum(got.values()), share, rel_tol=1e-6):
        _fail("metadata.counts_share", "must be epsilon_counts / epsilon", share)


SCHEMAS.update(
    {
        s.name: s
        for s in (
            StatisticSchema(
                "dpcopula_hybrid",
                families=("geometric",),
                compositions=("joint",),
                required={
                    "columns": STR_LIST,
                    "m": INT,
                    "hybrid": STR_LIST,
                    "domains": _any_list,
                    "dtypes": STR_LIST,
                    "bins": INT_LIST,
                    "ratio": FLOAT,
                    "counts_share": FLOAT,
                    "epsilon_counts": FLOAT,
                    "epsilon_1": FLOAT,
                    "epsilon_2": FLOAT,
                    "floor": INT,
                    "correlation": STR,
                },
                optional={"hybrid_threshold": INT},
                check=_check_dpcopula_hybrid,
                components=("dpcopula_hybrid_margins", "dpcopula_hybrid_kendall"),
                sensitivity="2 in L1 on the partition counts (Li et al. 2014, Algorithm 6 step 2, substitution)",
            ),
            StatisticSchema(
                "dpcopula_hybrid_margins",
                families=("geometric",),
                compositions=("joint",),
                required={"columns": STR_LIST, "partitions": INT, "bins": INT_LIST},
                check=_check_dpcopula_hybrid_margins,
                sensitivity="2 m_2 in L1 on the per-partition histograms of the m_2 large columns",
            ),
            StatisticSchema(
                "dpcopula_hybrid_kendall",
                families=("laplace",),
                compositions=("joint",),
                required={"columns": STR_LIST, "partitions": INT, "pairs": _any_list, "floor": INT, "estimand": STR},
                check=_check_dpcopula_hybrid_kendall,
                sensitivity="8 C(m_2,2)/floor in L1 (S_g/max(C(n_g,2), C(floor,2)) moves <= 4/floor in <= 2 parts)",
            ),
        )
    }
)
