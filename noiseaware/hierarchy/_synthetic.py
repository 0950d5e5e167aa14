r"""Synthetic noisy measurement files (NMF-shaped) for tests, examples and calibration studies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import owned
from ..mechanisms import DiscreteGaussianMechanism
from ._record import NoisyHierarchy

__all__ = ["DEFAULT_VARIANCE", "SyntheticNMF", "aggregate", "synthetic_nmf"]

#: Default published :math:`\sigma^2` per level (state, county, tract) and query (total, cells...):
#: state totals exact (invariants), every other query noisy, tracts the noisiest.
DEFAULT_VARIANCE = {"state": (0.0, 4.0), "county": (4.0, 4.0), "tract": (9.0, 9.0)}
_OWNER = "synthetic_nmf"
_PROVENANCE = "noiseaware.hierarchy.synthetic_nmf (seeded simulation)"


@dataclass(frozen=True)
class SyntheticNMF:
    """A simulated release and the truth it was drawn from.

    Attributes
    ----------
    release : NoisyHierarchy
        The noisy measurement file (``simulation=True``, ``secure=False``).
    truth : numpy.ndarray
        True leaf (tract) cell counts, shape ``(tracts, cells)``, int64.
    """

    release: NoisyHierarchy
    truth: np.ndarray


def aggregate(release: NoisyHierarchy, leaf_cells: Any) -> list[np.ndarray]:
    """True counts of every level from leaf cell counts: ``[(units_l, 1 + cells)]`` with the total first.

    ``leaf_cells`` has shape ``(leaves, cells)``, or ``(leaves, cells, ...)`` for many allocations at once.

    Examples
    --------
    >>> from noiseaware.hierarchy import synthetic_nmf
    >>> sim = synthetic_nmf(1, 2, 2, rng=0)
    >>> agg = aggregate(sim.release, sim.truth)
    >>> int(agg[0][0, 0]) == int(sim.truth.sum()) == int(sim.release.values[0][0, 0])
    True
    """
    x = np.asarray(leaf_cells)
    out = [np.concatenate([x.sum(axis=1, keepdims=True), x], axis=1)]
    for p, n_up in zip(reversed(release.parents), [len(u) for u in reversed(release.units[:-1])]):
        up = np.zeros((n_up, *out[0].shape[1:]), dtype=out[0].dtype)
        np.add.at(up, p, out[0])
        out.insert(0, up)
    return out


@owned(_OWNER)
def synthetic_nmf(
    n_states: int = 2,
    counties_per_state: int = 3,
    tracts_per_county: int = 4,
    *,
    cells: tuple[str, ...] = ("a", "b", "c"),
    variance: Any = None,
    mean_population: float = 60.0,
    rng: Any,
) -> SyntheticNMF:
    r"""Draw a synthetic states > counties > tracts noisy measurement file and its truth.

    True counts from a hierarchical model: county log-means
    :math:`\eta_k \sim N(\log m, 0.5^2)` (``m = mean_population``), tract populations
    :math:`N_t \sim \mathrm{Poisson}(e^{\eta_k + 0.7 z_t})`, :math:`z_t \sim N(0, 1)`; a cell profile
    per state :math:`p_s \sim \mathrm{Dirichlet}(20\, b)` with :math:`b \propto 2^{-c}` (so the last
    cells are small and tract counts near zero are common), tract cells
    :math:`\mathrm{Multinomial}(N_t, \pi_t)`, :math:`\pi_t \sim \mathrm{Dirichlet}(20\, p_s)`.
    Every unit's total and cells are then measured with discrete Gaussian noise of the published
    ``variance`` (:math:`\sigma^2`), drawn with the package's exact discrete Gaussian sampler in
    simulation mode (Canonne, Kamath & Steinke (2020), Algorithm 3, on ``rng``); state totals are
    published exactly by default.

    Parameters
    ----------
    n_states, counties_per_state, tracts_per_county : int
        The tree's branching (each at least 1).
    cells : tuple of str
        Names of the cells (at least one) that sum to the total.
    variance : array_like or mapping, optional
        :math:`\sigma^2` per level and query, shape ``(3, 1 + len(cells))``, 0 marking an
        invariant; or a mapping ``{level: (total, cells)}``; default :data:`DEFAULT_VARIANCE`.
    mean_population : float
        Typical tract population ``m`` (> 0).
    rng : numpy.random.Generator or int
        Seeded generator (required: a synthetic file is a simulation, never a secure release).

    Returns
    -------
    SyntheticNMF
        ``release`` (a :class:`NoisyHierarchy`) and ``truth`` (tract cell counts).

    Examples
    --------
    >>> from noiseaware.hierarchy import synthetic_nmf
    >>> sim = synthetic_nmf(2, 3, 4, rng=1)
    >>> sim.release.levels, sim.truth.shape, sim.release.n_measurements
    (('state', 'county', 'tract'), (24, 3), 126)
    """
    n_s = v.integer("n_states", n_states, minimum=1)
    n_c = v.integer("counties_per_state", counties_per_state, minimum=1)
    n_t = v.integer("tracts_per_county", tracts_per_county, minimum=1)
    if isinstance(cells, str) or len(tuple(cells)) < 1:
        v.refuse("cells", "must be a sequence of at least one cell name", cells)
    cells = tuple(cells)
    C = len(cells)
    m = v.positive("mean_population", mean_population)
    if rng is None:
        v.refuse("rng", "must be a seeded Generator or an integer (a synthetic file is a simulation)", rng)
    gen = v.generator("rng", rng)
    var = _variance(variance, C)
    county_parent = np.repeat(np.arange(n_s), n_c)
    tract_parent = np.repeat(np.arange(n_s * n_c), n_t)
    n_tracts = tract_parent.size
    eta = np.log(m) + 0.5 * gen.standard_normal(n_s * n_c)
    pop = gen.poisson(np.exp(eta[tract_parent] + 0.7 * gen.standard_normal(n_tracts)))
    base = 2.0 ** -np.arange(C, dtype=np.float64)
    profile = gen.dirichlet(20.0 * base / base.sum(), size=n_s)
    state_of_tract = county_parent[tract_parent]
    shares = np.stack([gen.dirichlet(20.0 * profile[s]) for s in state_of_tract]) if C > 1 else np.ones((n_tracts, 1))
    truth = np.stack([gen.multinomial(n, p) for n, p in zip(pop, shares)]).astype(np.int64)
    names = [
        tuple(f"s{s}" for s in range(n_s)),
        tuple(f"s{k // n_c}-c{k % n_c}" for k in range(n_s * n_c)),
        tuple(f"s{k // (n_c * n_t)}-c{(k // n_t) % n_c}-t{k % n_t}" for k in range(n_tracts)),
    ]
    skeleton = NoisyHierarchy(
        levels=("state", "county", "tract"), units=tuple(names), parents=(county_parent, tract_parent),
        queries=("total", *cells), values=tuple(np.zeros((len(u), C + 1), dtype=np.int64) for u in names),
        variance=var, secure=False, simulation=True, provenance=_PROVENANCE,
    )
    exact = aggregate(skeleton, truth)
    noisy = []
    for lev, x in enumerate(exact):
        y = x.copy()
        for q in range(C + 1):
            if var[lev, q] > 0:
                y[:, q] = DiscreteGaussianMechanism(sigma=float(np.sqrt(var[lev, q]))).release(x[:, q], rng=gen)
        noisy.append(y)
    release = NoisyHierarchy(
        levels=skeleton.levels, units=skeleton.units, parents=skeleton.parents, queries=skeleton.queries,
        values=tuple(noisy), variance=var, secure=False, simulation=True, provenance=skeleton.provenance,
    )
    return SyntheticNMF(release=release, truth=truth)


@owned(_OWNER)
def _variance(variance: Any, C: int) -> np.ndarray:
    if variance is None:
        variance = DEFAULT_VARIANCE
    if isinstance(variance, dict):
        rows = []
        for lev in ("state", "county", "tract"):
            if lev not in variance:
                v.refuse("variance", "must give (total, cells) for 'state', 'county' and 'tract'", variance)
            total, cell = variance[lev]
            rows.append([float(total), *([float(cell)] * C)])
        return np.asarray(rows)
    arr = np.asarray(variance, dtype=np.float64)
    if arr.shape != (3, C + 1):
        v.refuse("variance", f"must have shape (3, {C + 1}) (levels x queries)", arr.shape)
    return arr
