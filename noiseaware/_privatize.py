"""``privatize()``: the curator's entry point, and the statistics it knows."""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _validation as v
from .exceptions import NoiseawareTypeError, NoiseawareValueError
from .mechanisms import (
    BTGM,
    RGM,
    TGM,
    DiscreteGaussianMechanism,
    GaussianMechanism,
    GeometricMechanism,
    LaplaceMechanism,
    Mechanism,
    RandomizedResponse,
)
from .release import Release, expected_guarantee

__all__ = ["STATISTICS", "kendall_tau_a", "median_split_indicators", "privatize"]


@dataclass(frozen=True)
class _Budget:
    epsilon: float | None
    rho: float | None


StatisticFn = Callable[[Any, _Budget, "str | None", "np.random.Generator | None", dict[str, Any]], Release]

#: Registry: statistic name -> implementation. Later statistics register here.
STATISTICS: dict[str, StatisticFn] = {}


def statistic(name: str) -> Callable[[StatisticFn], StatisticFn]:
    """Decorator registering a statistic for :func:`privatize`."""

    def deco(fn: StatisticFn) -> StatisticFn:
        STATISTICS[name] = fn
        return fn

    return deco


def privatize(
    data: Any,
    statistic: str,
    *,
    epsilon: float | None = None,
    rho: float | None = None,
    mechanism: str | None = None,
    rng: np.random.Generator | None = None,
    **options: Any,
) -> Release:
    """Compute a statistic of confidential data and release it with DP noise.

    Parameters
    ----------
    data : numpy.ndarray or pandas.DataFrame
        The confidential data (rows are records unless the statistic says otherwise).
    statistic : str
        ``"median_pairs"`` (seed 000 §3.1-3.2, Algorithm S.1), ``"kendall_pairs"`` (seed 003
        Algorithm 5, noisy Kendall's tau), ``"counts"`` (an integer vector or
        contingency table), ``"vector"`` (a real vector), ``"randomized_response"``
        (categorical answers, record level, seed 001 Example 1), ``"dirichlet_logmean"``
        (compositions, seed 004 Algorithm 1: options ``candidates``, ``target_rate``,
        ``threshold``, ``threshold_share``, ``split``, ``zeros``, ``simplex_tol``; see
        :mod:`noiseaware._privatize_dirichlet`).
    epsilon, rho : float
        The total budget: ``epsilon`` for pure DP, ``rho`` for zCDP. Give one (``counts`` and
        ``vector`` also accept a noise scale through ``scale=`` / ``sigma=`` instead).
    mechanism : str, optional
        Per statistic: ``median_pairs``: ``"geometric"`` (default), ``"tgm"``, ``"btgm"``,
        ``"rgm"``; ``counts``: ``"geometric"`` (default with epsilon), ``"discrete_gaussian"``
        (default with rho); ``vector``: ``"laplace"`` (default with epsilon), ``"gaussian"``
        (default with rho).
    rng : numpy.random.Generator, optional
        Simulation mode: draw the noise from this generator. The release is then marked
        ``secure=False``. By default noise comes from OpenDP's exact samplers.
    **options
        Statistic-specific options: ``columns``, ``tie_keys`` (median_pairs); ``sensitivity``,
        ``labels``, ``n``, ``scale``, ``sigma`` (counts, vector); ``categories``, ``p``
        (randomized_response).

    Returns
    -------
    Release

    Raises
    ------
    ValueError, TypeError
        For bad budgets, data (NaN, inf, too few rows or columns, non-numeric columns), bounds or
        options; each message names the argument, its value and the rule.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).normal(size=(100, 3))
    >>> rel = na.privatize(x, statistic="median_pairs", epsilon=1.0)
    >>> rel.mechanism.family, rel.composition, len(rel.values)
    ('geometric', 'sequential', 3)
    """
    owner = "privatize"
    if not isinstance(statistic, str):
        raise NoiseawareTypeError(v.message(owner, "statistic", f"must be one of {sorted(STATISTICS)}", statistic))
    v.choice(owner, "statistic", statistic, sorted(STATISTICS))
    if epsilon is not None and rho is not None:
        raise NoiseawareValueError(
            f"privatize: give one of epsilon or rho, not both; got epsilon={epsilon!r}, rho={rho!r}."
        )
    eps = v.epsilon(owner, epsilon) if epsilon is not None else None
    r = v.positive(owner, "rho", rho) if rho is not None else None
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise NoiseawareTypeError(
            v.message(
                owner, "rng", "must be a numpy.random.Generator or None", rng, "Use numpy.random.default_rng(seed)."
            )
        )
    if mechanism is not None and not isinstance(mechanism, str):
        raise NoiseawareTypeError(v.message(owner, "mechanism", "must be a string", mechanism))
    return STATISTICS[statistic](data, _Budget(eps, r), mechanism, rng, dict(options))


# --------------------------------------------------------------------------- helpers
def _no_extra(owner: str, options: Mapping[str, Any], allowed: set[str]) -> None:
    extra = set(options) - allowed
    if extra:
        raise NoiseawareTypeError(
            f"{owner}: unexpected option(s) {sorted(extra)}; this statistic accepts {sorted(allowed) or 'none'}."
        )


def _as_matrix(owner: str, data: Any, columns: Any) -> tuple[np.ndarray, list[str]]:
    """A finite float64 (n, p) matrix and its column names, from an array or DataFrame."""
    names: list[str]
    if hasattr(data, "columns") and hasattr(data, "dtypes"):  # pandas DataFrame
        bad = [
            str(c) for c, dt in zip(data.columns, data.dtypes, strict=True) if getattr(dt, "kind", "O") not in "biuf"
        ]
        if bad:
            raise NoiseawareTypeError(
                f"{owner}: data has non-numeric column(s) {bad}; encode them as numbers or drop them."
            )
        names = [str(c) for c in data.columns]
        arr = data.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        arr = np.asarray(data)
        if arr.dtype.kind not in "biuf":
            raise NoiseawareTypeError(f"{owner}: data must be numeric; got dtype {arr.dtype}.")
        names = []
    arr = v.finite_array(owner, "data", arr)
    if arr.ndim != 2:
        raise NoiseawareValueError(f"{owner}: data must be 2-D (rows are records); got shape {arr.shape}.")
    n, p = arr.shape
    if n < 2:
        raise NoiseawareValueError(f"{owner}: data must have at least two rows; got {n}.")
    if p < 2:
        raise NoiseawareValueError(f"{owner}: data must have at least two columns; got {p}.")
    if columns is not None:
        names = [str(c) for c in columns]
        if len(names) != p:
            raise NoiseawareValueError(f"{owner}: columns must name all {p} columns; got {len(names)} names.")
    if not names:
        names = [f"x{j}" for j in range(p)]
    if len(set(names)) != len(names):
        raise NoiseawareValueError(f"{owner}: column names must be unique; got {names}.")
    return arr, names


def _key_rng(rng: np.random.Generator | None) -> np.random.Generator:
    # Tie-breaking keys are not privacy noise: any data-independent keys keep Theorem 3.1.
    return rng if rng is not None else np.random.default_rng(secrets.randbits(128))


def median_split_indicators(x: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """High/low indicators of seed 000 §3.1-3.2 with lexicographic tie-breaking.

    For each column ``j`` the rows are ordered by the pairs ``(x_ij, k_ij)`` and exactly
    ``ceil(n/2)`` rows with the largest pairs are marked 1 ("at or above the median"); for odd
    ``n`` the extra row goes to the high side, as in the seed.

    Parameters
    ----------
    x : ndarray, shape (n, p)
        The data.
    keys : ndarray, shape (n, p)
        Data-independent random keys (seed 000 §3.2).

    Returns
    -------
    ndarray of int64, shape (n, p)
    """
    n, p = x.shape
    h = math.ceil(n / 2)
    a = np.zeros((n, p), dtype=np.int64)
    for j in range(p):
        order = np.lexsort((keys[:, j], x[:, j]))  # ascending by x, then key
        a[order[n - h :], j] = 1
    return a


def _pair_labels_and_meta(names: list[str]) -> tuple[list[tuple[str, ...]], dict[str, Any]]:
    """Labels and metadata of the p(p-1)/2 column pairs in row-major upper-triangle order."""
    iu, ju = np.triu_indices(len(names), 1)
    pairs = [(int(i), int(j)) for i, j in zip(iu, ju, strict=True)]
    labels: list[tuple[str, ...]] = [(names[i], names[j]) for i, j in pairs]
    return labels, {"columns": names, "p": len(names), "pairs": [list(q) for q in pairs]}


def _budget_required(owner: str, budget: _Budget, kind: str) -> float:
    if kind == "epsilon":
        if budget.epsilon is None:
            raise NoiseawareValueError(f"{owner}: this mechanism needs a pure-DP budget; pass epsilon=...")
        return budget.epsilon
    if budget.rho is None:
        raise NoiseawareValueError(f"{owner}: this mechanism needs a zCDP budget; pass rho=...")
    return budget.rho


def _finish(
    statistic: str,
    truth: np.ndarray,
    mech: Mechanism,
    composition: str,
    labels: Sequence[tuple[str, ...]],
    rng: np.random.Generator | None,
    n: int | None,
    metadata: dict[str, Any],
) -> Release:
    noisy = mech.release(truth, rng=rng)
    guarantee = expected_guarantee(mech, composition, tuple(np.shape(truth)))
    if rng is not None:
        metadata = {**metadata, "simulation": "noise drawn from a seeded numpy Generator; not a secure release"}
    return Release(
        statistic=statistic,
        values=noisy,
        labels=tuple(labels),
        mechanism=mech,
        composition=composition,
        guarantee=guarantee,
        secure=rng is None,
        n=n,
        metadata=metadata,
    )


# ------------------------------------------------------------------------ statistics
@statistic("median_pairs")
def _median_pairs(
    data: Any, budget: _Budget, mechanism: str | None, rng: np.random.Generator | None, options: dict[str, Any]
) -> Release:
    """Seed 000 Algorithm S.1: all p(p-1)/2 high-high counts, each with sensitivity 1."""
    owner = "privatize(statistic='median_pairs')"
    _no_extra(owner, options, {"columns", "tie_keys"})
    mech_name = v.choice(owner, "mechanism", mechanism or "geometric", ("geometric", "tgm", "btgm", "rgm"))
    eps = _budget_required(owner, budget, "epsilon")
    x, names = _as_matrix(owner, data, options.get("columns"))
    n, p = x.shape
    keys = options.get("tie_keys")
    if keys is None:
        keys = _key_rng(rng).standard_normal((n, p))
    else:
        keys = v.finite_array(owner, "tie_keys", keys)
        if keys.shape != (n, p):
            raise NoiseawareValueError(f"{owner}: tie_keys must have the data's shape {(n, p)}; got {keys.shape}.")
    a = median_split_indicators(x, keys)
    iu, ju = np.triu_indices(p, 1)
    counts = (a.T @ a)[iu, ju].astype(np.int64)
    k = counts.size
    eps_pair = eps / k
    h = math.ceil(n / 2)
    mech: Mechanism
    if mech_name == "geometric":
        mech = GeometricMechanism(scale=1.0 / eps_pair, sensitivity=1)
    elif mech_name == "tgm":
        mech = TGM(scale=1.0 / eps_pair, lower=0, upper=h, sensitivity=1)
    elif mech_name == "btgm":
        mech = BTGM(scale=1.0 / eps_pair, lower=0, upper=h, sensitivity=1)
    else:
        mech = RGM(epsilon=eps_pair, lower=0, upper=h, sensitivity=1)
    labels, meta = _pair_labels_and_meta(names)
    meta |= {
        "high_count": h,
        "epsilon_per_pair": eps_pair,
        "bounds": [0, h],
        "tie_breaking": "lexicographic (value, data-independent N(0,1) key); seed 000 §3.2",
    }
    return _finish("median_pairs", counts, mech, "sequential", labels, rng, n, meta)


def kendall_tau_a(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-a, ``(n_c - n_d) / C(n, 2)``, exact with ties (seed 003 §4, Lemma 4.1).

    Computed from SciPy's tau-b and the tie counts, ``n_c - n_d = tau_b sqrt((n0-n1)(n0-n2))``.
    """
    from scipy import stats

    n = x.size
    n0 = n * (n - 1) / 2.0

    def ties(a: np.ndarray) -> float:
        _, c = np.unique(a, return_counts=True)
        return float((c * (c - 1) / 2.0).sum())

    n1, n2 = ties(x), ties(y)
    if n1 == n0 or n2 == n0:
        return 0.0
    tau_b = float(stats.kendalltau(x, y, variant="b").statistic)
    return tau_b * math.sqrt((n0 - n1) * (n0 - n2)) / n0


@statistic("kendall_pairs")
def _kendall_pairs(
    data: Any, budget: _Budget, mechanism: str | None, rng: np.random.Generator | None, options: dict[str, Any]
) -> Release:
    """Seed 003 Algorithm 5: noisy pairwise Kendall's tau-a, Laplace noise of sensitivity 4/(n+1).

    The budget is split evenly over the p(p-1)/2 pairs (sequential composition).
    """
    owner = "privatize(statistic='kendall_pairs')"
    _no_extra(owner, options, {"columns"})
    v.choice(owner, "mechanism", mechanism or "laplace", ("laplace",))
    eps = _budget_required(owner, budget, "epsilon")
    x, names = _as_matrix(owner, data, options.get("columns"))
    n, p = x.shape
    iu, ju = np.triu_indices(p, 1)
    taus = np.array([kendall_tau_a(x[:, i], x[:, j]) for i, j in zip(iu, ju, strict=True)])
    sens = 4.0 / (n + 1)
    eps_pair = eps / taus.size
    mech = LaplaceMechanism(scale=sens / eps_pair, sensitivity=sens)
    labels, meta = _pair_labels_and_meta(names)
    meta |= {
        "epsilon_per_pair": eps_pair,
        "estimand": "Kendall's tau-a",
    }
    return _finish("kendall_pairs", taus, mech, "sequential", labels, rng, n, meta)


def _cell_labels(data: Any, arr: np.ndarray, labels: Any) -> list[tuple[str, ...]]:
    if labels is not None:
        labs = [tuple(str(s) for s in (lab if isinstance(lab, list | tuple) else (lab,))) for lab in labels]
        if len(labs) != arr.size:
            raise NoiseawareValueError(f"privatize: labels must give one label per cell ({arr.size}); got {len(labs)}.")
        return labs
    pandas_like = hasattr(data, "index") and not callable(data.index)
    if pandas_like and hasattr(data, "columns") and arr.ndim == 2:
        return [(str(r), str(c)) for r in data.index for c in data.columns]
    if pandas_like and arr.ndim == 1:
        return [(str(r),) for r in data.index]
    return [tuple(str(i) for i in idx) for idx in np.ndindex(*arr.shape)]


def _additive_budget(owner: str, budget: _Budget, options: dict[str, Any], mech_name: str, sens: float) -> Mechanism:
    scale, sigma = options.get("scale"), options.get("sigma")
    if mech_name in ("geometric", "laplace"):
        cls: Any = GeometricMechanism if mech_name == "geometric" else LaplaceMechanism
        if sigma is not None or budget.rho is not None:
            raise NoiseawareValueError(
                f"{owner}: mechanism {mech_name!r} takes epsilon=... or scale=..., not rho/sigma."
            )
        if (budget.epsilon is None) == (scale is None):
            raise NoiseawareValueError(f"{owner}: give exactly one of epsilon=... or scale=... for {mech_name!r}.")
        if scale is not None:
            return cls(scale=v.positive(owner, "scale", scale), sensitivity=sens)
        return cls(scale=sens / float(budget.epsilon), sensitivity=sens)  # type: ignore[arg-type]
    cls = DiscreteGaussianMechanism if mech_name == "discrete_gaussian" else GaussianMechanism
    if scale is not None or budget.epsilon is not None:
        raise NoiseawareValueError(
            f"{owner}: mechanism {mech_name!r} is zCDP; give rho=... or sigma=..., not epsilon/scale."
        )
    if (budget.rho is None) == (sigma is None):
        raise NoiseawareValueError(f"{owner}: give exactly one of rho=... or sigma=... for {mech_name!r}.")
    if sigma is not None:
        return cls(sigma=v.positive(owner, "sigma", sigma), sensitivity=sens)
    return cls.from_rho(float(budget.rho), sensitivity=sens)  # type: ignore[arg-type]


@statistic("counts")
def _counts(
    data: Any, budget: _Budget, mechanism: str | None, rng: np.random.Generator | None, options: dict[str, Any]
) -> Release:
    """Integer counts (vector or table) with a stated sensitivity, noise on every cell."""
    owner = "privatize(statistic='counts')"
    _no_extra(owner, options, {"sensitivity", "labels", "n", "scale", "sigma"})
    default = "discrete_gaussian" if (budget.rho is not None or options.get("sigma") is not None) else "geometric"
    mech_name = v.choice(owner, "mechanism", mechanism or default, ("geometric", "discrete_gaussian"))
    if "sensitivity" not in options:
        raise NoiseawareValueError(
            f"{owner}: state the sensitivity of the table (L1 for geometric, L2 for discrete_gaussian), "
            "e.g. sensitivity=2 when one record may move between two cells."
        )
    raw = data.to_numpy() if hasattr(data, "to_numpy") else data
    arr = v.integer_array(owner, "data", raw)
    if arr.size == 0:
        raise NoiseawareValueError(f"{owner}: data must hold at least one count.")
    if arr.min() < 0:
        raise NoiseawareValueError(f"{owner}: counts must be >= 0; got a minimum of {arr.min()}.")
    if mech_name == "geometric":
        sens: float = v.integer(owner, "sensitivity", options["sensitivity"], minimum=1)
    else:
        sens = v.positive(owner, "sensitivity", options["sensitivity"])
    mech = _additive_budget(owner, budget, options, mech_name, sens)
    labels = _cell_labels(data, arr, options.get("labels"))
    n = options.get("n")
    n = None if n is None else v.integer(owner, "n", n, minimum=1)
    meta = {"sensitivity_norm": "l1" if mech_name == "geometric" else "l2"}
    return _finish("counts", arr, mech, "joint", labels, rng, n, meta)


@statistic("vector")
def _vector(
    data: Any, budget: _Budget, mechanism: str | None, rng: np.random.Generator | None, options: dict[str, Any]
) -> Release:
    """A real vector with a stated L1 (Laplace) or L2 (Gaussian) sensitivity."""
    owner = "privatize(statistic='vector')"
    _no_extra(owner, options, {"sensitivity", "labels", "n", "scale", "sigma"})
    default = "gaussian" if (budget.rho is not None or options.get("sigma") is not None) else "laplace"
    mech_name = v.choice(owner, "mechanism", mechanism or default, ("laplace", "gaussian"))
    if "sensitivity" not in options:
        raise NoiseawareValueError(f"{owner}: state the vector's sensitivity (L1 for laplace, L2 for gaussian).")
    sens = v.positive(owner, "sensitivity", options["sensitivity"])
    raw = data.to_numpy() if hasattr(data, "to_numpy") else data
    arr = v.finite_array(owner, "data", raw)
    if arr.ndim != 1 or arr.size == 0:
        raise NoiseawareValueError(f"{owner}: data must be a non-empty 1-D vector; got shape {arr.shape}.")
    mech = _additive_budget(owner, budget, options, mech_name, sens)
    labels = _cell_labels(data, arr, options.get("labels"))
    n = options.get("n")
    n = None if n is None else v.integer(owner, "n", n, minimum=1)
    meta = {"sensitivity_norm": "l1" if mech_name == "laplace" else "l2"}
    return _finish("vector", arr, mech, "joint", labels, rng, n, meta)


@statistic("randomized_response")
def _randomized_response(
    data: Any, budget: _Budget, mechanism: str | None, rng: np.random.Generator | None, options: dict[str, Any]
) -> Release:
    """Record-level k-ary randomized response on each categorical answer (seed 001 Example 1).

    ``data`` holds category codes ``0..k-1``, shape (n, q): q answers per record. The budget is
    split evenly over the q answers of a record (sequential within a record, parallel across
    records); alternatively give ``p=`` (probability of a truthful answer) directly.
    """
    owner = "privatize(statistic='randomized_response')"
    _no_extra(owner, options, {"categories", "p", "columns"})
    if mechanism not in (None, "randomized_response"):
        v.fail(owner, "mechanism", "must be 'randomized_response'", mechanism)
    raw = data.to_numpy() if hasattr(data, "to_numpy") else data
    arr = v.integer_array(owner, "data", raw)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise NoiseawareValueError(f"{owner}: data must be (n, q) category codes; got shape {arr.shape}.")
    if "categories" not in options:
        raise NoiseawareValueError(f"{owner}: give categories=k, the (public) number of categories per answer.")
    k = v.integer(owner, "categories", options["categories"], minimum=2)
    q = arr.shape[1]
    if "p" in options:
        if budget.epsilon is not None or budget.rho is not None:
            raise NoiseawareValueError(f"{owner}: give either epsilon=... or p=..., not both.")
        mech = RandomizedResponse(k=k, p=options["p"])
    else:
        eps = _budget_required(owner, budget, "epsilon")
        mech = RandomizedResponse.from_epsilon(eps / q, k)
    if hasattr(data, "columns"):
        names = [str(c) for c in data.columns]
    else:
        names = [str(c) for c in options.get("columns") or [f"x{j}" for j in range(q)]]
    if len(names) != q:
        raise NoiseawareValueError(f"{owner}: columns must name all {q} answers; got {len(names)}.")
    labels = [(str(i), names[j]) for i in range(arr.shape[0]) for j in range(q)]
    meta: dict[str, Any] = {"columns": names, "answers_per_record": q, "categories": k}
    return _finish("randomized_response", arr, mech, "per_record", labels, rng, int(arr.shape[0]), meta)


# Statistics defined in their own modules register themselves on import.
from . import _privatize_dirichlet as _privatize_dirichlet  # noqa: E402
