"""Read a likelihood's noise parameters and observed values from a :class:`~noiseaware.Release`.

Shared by both front ends so that ``from_release`` behaves identically in PyMC and NumPyro and
refuses, with a clear message, a release whose statistic or mechanism it cannot model exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import current_owner, owner_scope
from ..exceptions import NoiseawareValueError
from ._record import ReleaseRecord, as_release

__all__ = [
    "composite_params",
    "hypergeom_params",
    "noise_params",
    "pairs_index",
    "randomized_response_params",
    "two_way_params",
]


def _check_release(release: Any) -> ReleaseRecord:
    with owner_scope(f"{current_owner()}.from_release"):
        return as_release(release)


def noise_params(release: Any, families: tuple[str, ...]) -> tuple[str, float, np.ndarray]:
    """``(family, alpha or sigma, observed values)`` of an additive integer-noise release.

    Raises
    ------
    ValueError
        If the release's mechanism family is not one of ``families`` (e.g. a TGM release,
        whose clamped output is not ``value + two-sided geometric noise``).
    """
    rel = _check_release(release)
    fam = rel.mechanism.family
    if fam not in families:
        raise NoiseawareValueError(
            f"{current_owner()}.from_release: the release's mechanism family must be one of {list(families)}; "
            f"got family={fam!r}. {current_owner()} models exactly value + noise of those families only; "
            "range-preserving mechanisms (tgm, btgm, rgm) need their own likelihood."
        )
    mech: Any = rel.mechanism
    # alpha = exp(-1/scale) is the noise law per unit of the integer output, whatever the sensitivity.
    par = float(mech.alpha) if fam == "geometric" else float(mech.sigma)
    return fam, par, np.asarray(rel.values)


def _median_pairs(release: ReleaseRecord) -> None:
    if release.statistic != "median_pairs":
        raise NoiseawareValueError(
            f"{current_owner()}.from_release: the release's statistic must be 'median_pairs'; got "
            f"statistic={release.statistic!r}."
        )
    if release.n is None:
        raise NoiseawareValueError(f"{current_owner()}.from_release: a median_pairs release must record n; got n=None.")


def hypergeom_params(release: Any, N: Any, K: Any, m: Any) -> dict[str, Any]:
    """Keyword arguments of ``NoisyHypergeom`` (except ``log_odds``) and the observed values.

    For a ``median_pairs`` release ``N = n`` and ``K = m = ceil(n/2)`` come from the release
    unless given; otherwise they must be given.
    """
    rel = _check_release(release)
    fam, par, values = noise_params(rel, ("geometric", "discrete_gaussian"))
    if rel.statistic == "median_pairs":
        _median_pairs(rel)
        h = int(rel.metadata["high_count"])
        N = rel.n if N is None else N
        K = h if K is None else K
        m = h if m is None else m
    if N is None or K is None or m is None:
        raise NoiseawareValueError(
            f"{current_owner()}.from_release: N, K and m must be given for a {rel.statistic!r} release; got "
            f"N={N!r}, K={K!r}, m={m!r}."
        )
    noise = {"alpha": par} if fam == "geometric" else {"sigma": par}
    return {"N": N, "K": K, "m": m, **noise, "observed": values}


def two_way_params(release: Any) -> dict[str, Any]:
    """``n``, ``alpha`` and the observed counts of a geometric ``median_pairs`` release."""
    rel = _check_release(release)
    _median_pairs(rel)
    _, alpha, values = noise_params(rel, ("geometric",))
    return {"n": rel.n, "alpha": alpha, "observed": values}


def composite_params(release: Any) -> dict[str, Any]:
    """``n``, ``alpha``, ``pairs`` and the observed counts of a geometric ``median_pairs`` release."""
    out = two_way_params(release)
    meta = release.metadata
    out["pairs"] = np.asarray([list(pq) for pq in meta["pairs"]], dtype=np.int64).reshape(-1, 2)
    out["p"] = int(meta["p"])
    return out


def randomized_response_params(release: Any, answer: Any = None) -> tuple[int, float, np.ndarray]:
    """``(k, p, observed answers)`` of a ``randomized_response`` release.

    The release's values are ``(n, q)``: ``q`` answers per record. With one answer (``q = 1``) the
    observed values are its ``n`` codes; with several, ``answer`` picks one (its column name in
    ``metadata["columns"]`` or its index), and ``answer=None`` observes all ``(n, q)`` codes.

    Raises
    ------
    ValueError
        If the release is of another statistic or mechanism, or ``answer`` names no answer.
    """
    owner = current_owner()
    rel = _check_release(release)
    if rel.statistic != "randomized_response" or rel.mechanism.family != "randomized_response":
        raise NoiseawareValueError(
            f"{owner}.from_release: the release must be a 'randomized_response' release; got "
            f"statistic={rel.statistic!r} with mechanism family={rel.mechanism.family!r}."
        )
    mech: Any = rel.mechanism
    values = np.asarray(rel.values)
    q = values.shape[1]
    if answer is None:
        return int(mech.k), float(mech.p), values[:, 0] if q == 1 else values
    names = [str(c) for c in rel.metadata.get("columns", [f"x{j}" for j in range(q)])]
    if isinstance(answer, str):
        if answer not in names:
            raise NoiseawareValueError(
                f"{owner}.from_release: answer must name one of the release's answers {names}; got answer={answer!r}."
            )
        j = names.index(answer)
    elif isinstance(answer, int | np.integer) and not isinstance(answer, bool) and -q <= int(answer) < q:
        j = int(answer)
    else:
        raise NoiseawareValueError(
            f"{owner}.from_release: answer must be a column name in {names} or an index in [0, {q}); "
            f"got answer={answer!r}."
        )
    return int(mech.k), float(mech.p), values[:, j]


def pairs_index(p: int, pairs: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(i, j)`` column indices of the pairs of a composite likelihood, checked the same way in both PPLs.

    ``None`` gives the row-major upper triangle (``numpy.triu_indices(p, 1)``, the order of a
    ``median_pairs`` release). Otherwise a ``(k, 2)`` integer array of *distinct* indices in
    ``[0, p)``; anything else raises ``ValueError`` naming the rule.
    """
    from .. import _validation as v

    if pairs is None:
        iu, ju = np.triu_indices(p, 1)
        return iu.astype(np.int64), ju.astype(np.int64)
    arr = v.integer_array("pairs", pairs)
    if arr.ndim != 2 or arr.shape[1] != 2 or np.any(arr < 0) or np.any(arr >= p) or np.any(arr[:, 0] == arr[:, 1]):
        raise NoiseawareValueError(
            f"{current_owner()}: pairs must be a (k, 2) array of distinct column indices in [0, {p}); got "
            f"pairs={arr.tolist() if arr.size <= 20 else f'an array of shape {arr.shape}'}."
        )
    return arr[:, 0].copy(), arr[:, 1].copy()
