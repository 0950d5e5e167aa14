r"""The posterior over integer cell counts of a hierarchy release: Metropolis moves that keep every exact total.

The target is the integer model itself, with no relaxation: the leaf cell counts
:math:`n_{tc} \in \{0, 1, 2, \dots\}`, each root unit's cells summing to its exact total :math:`T_s`,
a prior :math:`p(n)` and the discrete Gaussian likelihood of every noisy measurement,

.. math:: p(n \mid y) \propto p(n) \prod_{l, u, q}
          \mathcal N_{\mathbb Z}\big(y_{luq} \mid (A_l n)_{uq},\ \sigma_{lq}^2\big),

with :math:`(A_l n)_{uq}` the true count of query ``q`` (total or cell) of unit ``u`` of level ``l``
(Canonne, Kamath & Steinke (2020), *The discrete Gaussian for differential privacy*, for the law; its
log-pmf is the noise-law registry's ``NOISE_LAWS["discrete_gaussian"]``, exact at integers).

**Moves.** Every move transfers :math:`k` people from one leaf cell to another leaf cell of the same
root unit, so every root total holds in every draw by construction. A *sweep* is a fixed sequence of
phases; each phase picks many *lines* at once on disjoint parts of the tree and moves each along its line
by a heat-bath draw:

* *sibling transfer* at level :math:`l \ge 1`: the units of level :math:`l` are paired at random
  within their parent (a random permutation of each parent's children cut into consecutive pairs, so every
  unit is in a line each phase); for each pair :math:`(u, u')` a random leaf :math:`t` below :math:`u` and
  :math:`t'` below :math:`u'` and a random cell :math:`c`: people go from :math:`(t, c)` to
  :math:`(t', c)`. The totals and cell ``c`` change on the two paths from :math:`t` and :math:`t'` up
  to :math:`u` and :math:`u'`; above them the changes cancel;
* *sibling swap* at level :math:`l \ge 1`: the same pairs, two cells :math:`c \ne c'`;
  :math:`(t, c) \to (t, c')` and :math:`(t', c') \to (t', c)`: every total is unchanged;
* *root move*: in each root unit, two random leaves and two random cells, :math:`(t, c) \to (t', c')`
  (the move that changes a root unit's cell composition, and on its own already connects all
  allocations of :math:`T_s`).

**Heat bath on a random window.** A line is the counts :math:`n + j s\, d` (:math:`d` the move's unit
direction, :math:`s` its stride, :math:`j` an integer). The move draws an offset :math:`o` uniformly in
:math:`\{0, \dots, W-1\}` (:data:`WINDOW` :math:`= W`) and then the new point among the :math:`W`
points :math:`j = -o, \dots, W - 1 - o` with probability proportional to the target :math:`p(n) L(n)`
(0 where a count would go below 0). The window contains the current point and is chosen with the same
probability :math:`1/W` from each of its points, so the move is a Gibbs step on the pair (counts,
window) and leaves the posterior invariant (reversible); the lines, strides and offsets are drawn
independently of the counts. Along a line the discrete Gaussian log-pmf is a quadratic in the
(integer) true count, its normalizer depending on :math:`\sigma` only, so the log-likelihood is
evaluated at :math:`j = -1, 0, 1` with the registry's log-pmf and is exact at every :math:`j` from
those three values; the prior's terms are evaluated at each :math:`j` on the (at most two) leaf
cells of each row that change. Within a phase the lines touch disjoint leaf cells and disjoint
measurements (the pairs' subtrees are disjoint, and the shared ancestors see a change of 0), so the
target factorizes over the lines and the phase is a product of such kernels. The log-target of a line
touches only the rows (a unit's total and cells) on its two leaf-to-root paths:
:math:`O(\text{depth} \times \text{cells} + W)` work per line, with the table of true counts of
every level kept in the state and updated by the moves.

**Why it mixes.** The parameterisation is the integer counts themselves, moved along lines that keep
every exact total; the tract totals are each a line's coordinate in the sibling transfers. A Metropolis
move proposes one :math:`k` and is refused most of the time at its best scale; the heat bath draws from
the line's conditional over :math:`W` points instead, which for a window spanning a few conditional
standard deviations is close to an exact draw along the line, and every tract is on a line in each
leaf phase. What is left is the coupling with the prior's parameters (one NUTS step per iteration given
the counts) and the correlation between a tract's total and its cells; the measured figures are in
``docs/published-hierarchy.md`` and ``docs/benchmarks.md``.

**Which prior mixes.** The Gibbs step between the counts and the prior's parameters is data augmentation,
and it is slow where the prior of a count given the parameters is as tight as its likelihood (Liu, Wong &
Kong (1994), *Covariance structure of the Gibbs sampler*: the rate is the fraction of missing information).
With one log-rate per leaf cell (``"hierarchical"``, or a user's ``log_rate``) each count's conditional
prior is a Poisson-like law of its own rate, of standard deviation :math:`\sqrt{n}`, while the noise's is
:math:`\sigma`: for the small cells of a tract the rate pins the count and the count the rate, and the NUTS
step updates every leaf's rate (as many parameters as leaf cells, with the funnel of their scale) once per
iteration. ``"dirichlet_multinomial"`` (:mod:`._dirmult`) integrates the tract rates out exactly: the
counts of a root unit are nested Dirichlet-multinomials given counties x cells + 3 parameters, each
informed by the counts of many tracts, so the fraction of missing information is small and the count sweep
moves each tract under a prior as wide as the tracts' spread, not its own rate's.

**Step sizes.** The stride is :math:`s = 1 + \lfloor E\, h \rfloor` with :math:`E \sim \mathrm{Exp}(1)`
(random, so that every integer point of a line is reachable). Each phase's :math:`h` starts at the
smallest noise :math:`\sigma` of the measurements it touches and is adapted in warmup by dual averaging
(Hoffman & Gelman 2014, §3.2; the engine's :func:`~noiseaware._engine._adapt.adapt_step`) towards a
probability :data:`MOVE_TARGET` of leaving the current point: a small stride leaves it often but moves
little, a large one rarely; then frozen.

**Priors.** ``"uniform"``: uniform over the compositions of each :math:`T_s` into its :math:`K_s`
leaf cells (Dirichlet-multinomial with :math:`\alpha = 1`); the prior ratio is 1 on the support.
With rates: :math:`n_s \mid \lambda \sim \mathrm{Multinomial}(T_s, \lambda_s / \sum \lambda_s)` per root
unit, :math:`\log\lambda` the site ``log_rate`` of a NumPyro model (the package's hierarchical prior,
or the user's). The prior ratio of a move from cell :math:`a` to :math:`b` is
:math:`\frac{n_a!\, n_b!}{(n_a - k)!\, (n_b + k)!} (\lambda_b / \lambda_a)^k`. The model's continuous
parameters are then updated given the counts by one NUTS iteration on
:math:`p(\theta) \prod_s \mathrm{Multinomial}(n_s \mid T_s, \mathrm{softmax}(\log\lambda_s))`
(NumPyro's NUTS kernel and warmup adaptation, the dapper scheme of Eng, Awan, Gong, Ju & Rao (2024),
*dapper: Data Augmentation for Private Posterior Estimation in R*, §3, with these moves in place of the
record sweep): a Gibbs sampler that alternates the count sweep and the NUTS step.
``"dirichlet_multinomial"``: the nested Dirichlet-multinomial of :mod:`._dirmult`; a move's prior ratio is
a ratio of gamma functions of the (at most two) leaf cells and tract populations of each leaf row that it
changes (:func:`~._dirmult.dirmult_line`, exact), and the NUTS step is on
:math:`p(\theta) \prod_s p(n_s \mid T_s, \theta)` with :math:`\theta` the county effects, the two
concentrations and the cell profiles.

Everything runs in JAX, float64, with static shapes; the chains are vectorized and one compiled
program serves every release of the same tree shape (the release's numbers and the tree's index arrays
are its arguments; :data:`PROGRAMS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._engine import ProgramCache, SamplingSettings, jit
from ._record import NoisyHierarchy

__all__ = [
    "INTEGER_PRIORS", "PROGRAMS", "ROOT_MOVES", "IntegerTree", "PriorBlock", "hierarchical_log_rate", "integer_tree",
    "rates_block", "sample_integer",
]

#: Priors of the integer route beyond :data:`~noiseaware.hierarchy.PRIORS` (the relaxed route has no form of
#: them): the nested Dirichlet-multinomial of :mod:`._dirmult`.
INTEGER_PRIORS = ("dirichlet_multinomial",)
#: Compiled integer-count samplers, keyed by the tree's shape, the prior and the settings.
PROGRAMS = ProgramCache(maxsize=8)
#: Root-move phases per sweep (each proposes one move per root unit).
ROOT_MOVES = 8
#: Sibling-move phases per sweep at the leaf level (the moves that mix the leaf totals).
LEAF_TRANSFERS = 4
#: Sibling-move phases per sweep at each level between the root and the leaves (cheap: few units; they
#: are the moves that mix the cell composition of those units).
INNER_TRANSFERS = 8
#: Points of a line that one heat-bath move weighs (the current point among them).
WINDOW = 9
#: Target probability that a heat-bath move leaves its current point (the stride's adaptation).
MOVE_TARGET = 0.6
#: Largest step scale (people per move) the adaptation may reach.
_MAX_SCALE = 1e6


@dataclass(frozen=True, eq=False)
class IntegerTree:
    r"""A release as the integer sampler reads it: the tree as index arrays, the measurements as tables.

    Attributes
    ----------
    n_units : tuple of int
        Units per level, root first.
    n_cells : int
        Cells per unit (:math:`C`).
    arrays : dict of str to numpy.ndarray
        The tree: ``anc`` (levels, leaves), each leaf's ancestor per level; per level ``l``,
        ``leaves_{l}`` (the leaves sorted by their ancestor at ``l``), ``leaf_start_{l}`` and
        ``leaf_count_{l}`` (where each unit's leaves sit in it, and how many); per level ``l >= 1``,
        ``parent_{l}`` and ``sibling_start_{l}`` (where each parent's children start in the order of
        their parents).
    y, sigma, measured : tuple of numpy.ndarray
        Per level: the published ``(units, 1 + cells)`` table (float64), the discrete Gaussian
        :math:`\sigma` per query (1.0 where the value is exact) and 1.0 / 0.0 for measured / exact.
    totals : numpy.ndarray
        The root units' exact totals (int64).
    """

    n_units: tuple[int, ...]
    n_cells: int
    arrays: dict[str, np.ndarray]
    y: tuple[np.ndarray, ...]
    sigma: tuple[np.ndarray, ...]
    measured: tuple[np.ndarray, ...]
    totals: np.ndarray

    @property
    def leaf_root(self) -> np.ndarray:
        """Each leaf's root unit."""
        return self.arrays["anc"][0]

    def step_reference(self, level: int) -> float:
        """The smallest noise sigma of the measurements at ``level`` and below (a move's scale)."""
        sig = [s[m > 0] for s, m in zip(self.sigma[level:], self.measured[level:], strict=True)]
        vals = np.concatenate(sig) if sig else np.array([1.0])
        return float(np.min(vals)) if vals.size else 1.0


def integer_tree(release: NoisyHierarchy) -> IntegerTree:
    """Index arrays and tables of ``release`` for :func:`sample_integer` (root totals must be exact)."""
    n_units = tuple(len(u) for u in release.units)
    L, n_leaf = len(n_units), n_units[-1]
    anc = np.empty((L, n_leaf), dtype=np.int32)
    anc[-1] = np.arange(n_leaf)
    for lev in range(L - 2, -1, -1):
        anc[lev] = np.asarray(release.parents[lev])[anc[lev + 1]]
    arrays: dict[str, np.ndarray] = {"anc": anc}
    for lev in range(L):
        order = np.argsort(anc[lev], kind="stable").astype(np.int32)
        count = np.bincount(anc[lev], minlength=n_units[lev]).astype(np.int32)
        arrays[f"leaves_{lev}"] = order
        arrays[f"leaf_start_{lev}"] = (np.cumsum(count) - count).astype(np.int32)
        arrays[f"leaf_count_{lev}"] = count
    for lev in range(1, L):
        par = np.asarray(release.parents[lev - 1], dtype=np.int32)
        n_child = np.bincount(par, minlength=n_units[lev - 1])
        arrays[f"parent_{lev}"] = par
        arrays[f"sibling_start_{lev}"] = (np.cumsum(n_child) - n_child).astype(np.int32)
    var = np.asarray(release.variance, dtype=np.float64)
    measured = tuple((var[lev] > 0).astype(np.float64) for lev in range(L))
    sigma = tuple(np.where(var[lev] > 0, np.sqrt(np.where(var[lev] > 0, var[lev], 1.0)), 1.0) for lev in range(L))
    y = tuple(np.asarray(x, dtype=np.float64) for x in release.values)
    totals = np.asarray(release.values[0][:, 0], dtype=np.int64)
    return IntegerTree(n_units, release.n_cells, arrays, y, sigma, measured, totals)


def hierarchical_log_rate(n_units: tuple[int, ...], county: Any, county_root: Any, leaf_root: Any, n_cells: int) -> Any:
    r"""The package's hierarchical prior on the log-rates, as a NumPyro model; samples ``log_rate``.

    :math:`\log \lambda_{tc} \sim N(\eta_{k(t)} + \log p_{s(t)c}, \sigma_t^2)`, :math:`\eta_k \sim
    N(0, \sigma_k^2)` centred within each root unit, :math:`p_s \sim \mathrm{Dirichlet}(1)`,
    :math:`\sigma_k, \sigma_t \sim \mathrm{HalfNormal}(1)` (see :func:`noiseaware.hierarchy.model`).
    ``county`` is each leaf's level-1 ancestor, ``county_root`` each level-1 unit's root unit.
    """
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    n_root, n_county, n_leaf = n_units[0], n_units[1], n_units[-1]
    s_county = numpyro.sample("sigma_county", dist.HalfNormal(1.0))
    s_tract = numpyro.sample("sigma_tract", dist.HalfNormal(1.0))
    eta = numpyro.sample("eta_county", dist.Normal(0.0, s_county * jnp.ones(n_county)).to_event(1))
    profile = numpyro.sample("profile", dist.Dirichlet(jnp.ones((n_root, n_cells))).to_event(1))
    k_per_root = jax.ops.segment_sum(jnp.ones_like(eta), county_root, num_segments=n_root)
    eta_c = eta - (jax.ops.segment_sum(eta, county_root, num_segments=n_root) / k_per_root)[county_root]
    mean = eta_c[county][:, None] + jnp.log(profile)[leaf_root]
    return numpyro.sample("log_rate", dist.Normal(mean, s_tract * jnp.ones((n_leaf, n_cells))).to_event(2))


def _phases(L: int, C: int) -> tuple[tuple[str, int, int], ...]:
    """The phases of one sweep, ``(kind, level, repeats)``, each with one step size.

    Sibling moves per level from the leaves up, then root moves.
    """
    out = [("pair", lev, LEAF_TRANSFERS if lev == L - 1 else INNER_TRANSFERS) for lev in range(L - 1, 0, -1)]
    out.append(("root", 0, ROOT_MOVES))
    return tuple(out)


def _loglik(m: int, rows: Any, tab: Any, data: Any) -> Any:
    """The discrete Gaussian log-pmf (the noise-law registry's) of level ``m``'s measurements at rows ``rows``."""
    from .._core._backend import get_backend
    from .._core._noise import NOISE_LAWS

    y = data["y"][m][rows]
    return NOISE_LAWS["discrete_gaussian"].logpdf(get_backend("jax"), y, tab, data["sigma"][m]) * data["measured"][m]


def _row_delta(d: Any) -> Any:
    """A change of cell counts as a change of a table row (total first)."""
    import jax.numpy as jnp

    return jnp.concatenate([d.sum(axis=1, keepdims=True), d], axis=1)


def _leaf_under(key: Any, units: Any, lev: int, tree: Any) -> Any:
    """A leaf drawn uniformly below each of ``units`` (of level ``lev``)."""
    import jax.numpy as jnp
    from jax import random

    u = random.uniform(key, units.shape, dtype=jnp.float64)
    cnt = tree[f"leaf_count_{lev}"][units]
    off = jnp.minimum(jnp.floor(u * cnt).astype(jnp.int32), cnt - 1)
    return tree[f"leaves_{lev}"][tree[f"leaf_start_{lev}"][units] + off]


def _propose(kind: str, lev: int, ks: Any, n_units: tuple[int, ...], C: int, scale: Any, tree: Any) -> tuple[Any, ...]:
    """The lines of one phase: ``(ta, tb, ca, cb, valid, lo, da, db)``.

    The leaves, the cells that change, which lines are real, the first level they touch, and the changes of the
    leaf cells of ``ta`` and ``tb`` for one step along the line (the stride times a unit direction).
    A root line moves people from leaf cell ``(ta, ca)`` to ``(tb, cb)`` of the same root unit; a pair line
    pairs the units of level ``lev`` at random within their parent and transfers one cell (``-e_c`` at ``ta``,
    ``+e_c`` at ``tb``) or swaps two (``e_c' - e_c`` at ``ta``, the opposite at ``tb``), keeping the parent's row.
    The stride is ``1 + floor(Exponential * scale)``: drawn independently of the counts.
    """
    import jax.numpy as jnp
    from jax import random

    eye = jnp.eye(C, dtype=jnp.float64)
    if kind == "root":
        units = jnp.arange(n_units[0], dtype=jnp.int32)
        ta, tb = _leaf_under(ks[0], units, 0, tree), _leaf_under(ks[1], units, 0, tree)
        ca = random.randint(ks[2], units.shape, 0, C)
        cb = random.randint(ks[3], units.shape, 0, C)
        valid = jnp.ones(units.shape, dtype=bool)
        lo = 0
    else:
        n_l = n_units[lev]
        par = tree[f"parent_{lev}"]
        order = jnp.lexsort((random.uniform(ks[0], (n_l,), dtype=jnp.float64), par))
        spar = par[order]
        pos = jnp.arange(n_l, dtype=jnp.int32)
        nxt = jnp.minimum(pos + 1, n_l - 1)
        rank = pos - tree[f"sibling_start_{lev}"][spar]
        first = (rank % 2 == 0) & (pos + 1 < n_l) & (spar[nxt] == spar)
        # the pairs' first members, compacted (at most n_l // 2 of them): no work on the second members
        n_p = max(n_l // 2, 1)
        at = jnp.nonzero(first, size=n_p, fill_value=0)[0].astype(jnp.int32)
        valid = jnp.arange(n_p) < jnp.sum(first)
        order, nxt = order[at], order[jnp.minimum(at + 1, n_l - 1)]
        ta = _leaf_under(ks[1], order, lev, tree)
        tb = _leaf_under(ks[2], nxt, lev, tree)
        ca = random.randint(ks[3], (n_p,), 0, C)
        # half the pairs swap two cells (c != c'), the others transfer one cell: both keep the parent's row
        swap = random.bernoulli(ks[4], 0.5 if C > 1 else 0.0, (n_p,))
        cb = jnp.where(swap, (ca + 1 + random.randint(random.fold_in(ks[4], 1), (n_p,), 0, max(C - 1, 1))) % C, ca)
        lo = lev
    stride = 1.0 + jnp.floor(random.exponential(ks[6], ca.shape, dtype=jnp.float64) * scale)
    ea, eb = eye[ca], eye[cb]
    if kind == "pair":
        da = stride[:, None] * (jnp.where(swap[:, None], eb, 0.0) - ea)
        db = -da
    else:
        da, db = -stride[:, None] * ea, stride[:, None] * eb
    return ta, tb, ca, cb, valid, lo, da, db


def _phase(kind: str, lev: int, key: Any, tables: list[Any], par: Any, scale: Any, tree: Any, data: Any, *,
           n_units: tuple[int, ...], C: int, prior: str) -> tuple[list[Any], Any]:
    """One phase's lines (:func:`_propose`), each moved by a heat-bath draw over a random window of its points.

    The window is the :data:`WINDOW` points ``x + (j - o) * step``, ``j = 0..WINDOW-1``, with the offset ``o``
    uniform and independent of the counts, so the current point ``j = o`` is in it and the window is chosen with
    the same probability from each of its points; the new point is drawn with probability proportional to the
    target over the window (Gumbel-max). The log-target reads only the table rows on each line's two
    leaf-to-root paths (at a shared ancestor the two changes add up), the leaf rows' support (counts >= 0) and,
    and the prior's terms of the leaf cells and tract populations that change (``prior``: ``"uniform"``, none;
    ``"rates"``, the multinomial given ``par["log_rate"]``; ``"dirmult"``, the nested Dirichlet-multinomial of
    :mod:`._dirmult` given ``par``). Returns the tables and the mean probability of leaving the current point.
    """
    import jax
    import jax.numpy as jnp
    from jax import random

    ks = random.split(key, 9)
    ta, tb, ca, cb, valid, lo, da, db = _propose(kind, lev, ks, n_units, C, scale, tree)
    ra, rb = _row_delta(da), _row_delta(db)
    off = random.randint(ks[7], valid.shape, 0, WINDOW)
    kk = (jnp.arange(WINDOW)[None, :] - off[:, None]).astype(jnp.float64)  # (moves, window): steps from here
    unit = jnp.array([-1.0, 0.0, 1.0])[None, :, None]
    f = jnp.zeros((valid.shape[0], 3), dtype=jnp.float64)  # the log-likelihood one step back, here, one on
    leaf = len(n_units) - 1
    logp = jnp.zeros(kk.shape, dtype=jnp.float64)
    ok = jnp.ones(kk.shape, dtype=bool)
    updates = []
    for m in range(lo, len(n_units)):
        a, b = tree["anc"][m][ta], tree["anc"][m][tb]
        same = (a == b)[:, None]
        dam = ra + jnp.where(same, rb, 0.0)
        dbm = jnp.where(same, 0.0, rb)
        for rows, d in ((a, dam), (b, dbm)):
            row = tables[m][rows]
            f += jnp.sum(_loglik(m, rows[:, None], row[:, None, :] + unit * d[:, None, :], data), axis=2)
            if m == leaf:  # the cells that change: the support (counts >= 0) and the prior
                lp, fine = _leaf_terms(row, d, par, rows, ca, cb, kk, prior)
                logp, ok = logp + lp, ok & fine
        updates.append((m, a, b, dam, dbm))
    # the discrete Gaussian log-pmf is quadratic in its (integer) location: exact from three points
    slope, curve = (f[:, 2:] - f[:, :1]) / 2.0, f[:, 2:] + f[:, :1] - 2.0 * f[:, 1:2]
    logp = jnp.where(ok, logp + kk * slope + 0.5 * kk * kk * curve, -jnp.inf)
    pick = jnp.argmax(logp + random.gumbel(ks[8], logp.shape, dtype=jnp.float64), axis=1)
    k = jnp.where(valid, jnp.take_along_axis(kk, pick[:, None], axis=1)[:, 0], 0.0)[:, None]
    stay = jnp.exp(jnp.take_along_axis(logp, off[:, None], axis=1)[:, 0] - jax.nn.logsumexp(logp, axis=1))
    prob = jnp.sum(jnp.where(valid, 1.0 - stay, 0.0)) / jnp.maximum(jnp.sum(valid), 1)
    tables = list(tables)
    for m, a, b, dam, dbm in updates:
        tables[m] = tables[m].at[a].add(k * dam).at[b].add(k * dbm)
    return tables, prob


def _leaf_terms(row: Any, d: Any, par: Any, rows: Any, ca: Any, cb: Any, kk: Any, prior: str) -> tuple[Any, Any]:
    """The prior's log-terms of one leaf row along each line's window, and where its cells stay >= 0.

    ``row`` the leaf's ``(total, cells)``, ``d`` its change per step, ``kk`` the window's steps. Only the cells
    ``ca`` and ``cb`` (and the tract's total) can change; the terms of those that do not are constant along the
    line and left out.
    """
    import jax.numpy as jnp
    from jax.scipy.special import gammaln

    logp, ok = jnp.zeros(kk.shape, dtype=jnp.float64), jnp.ones(kk.shape, dtype=bool)
    for c, w in ((ca, jnp.ones(ca.shape)), (cb, (ca != cb).astype(jnp.float64))):
        n_c = jnp.take_along_axis(row[:, 1:], c[:, None], axis=1)
        new = n_c + kk * jnp.take_along_axis(d[:, 1:], c[:, None], axis=1) * w[..., None]
        ok = ok & (new >= 0)
        if prior == "rates":
            lam = jnp.take_along_axis(par["log_rate"][rows], c[:, None], axis=1)
            nw = jnp.maximum(new, 0.0)
            logp += w[..., None] * (nw * lam - gammaln(nw + 1.0))
    if prior == "dirmult":
        from ._dirmult import dirmult_line

        logp += dirmult_line(row, d, par, rows, ca, cb, kk)
    return logp, ok


def _build_sweep(n_units: tuple[int, ...], C: int, prior: str) -> Callable[..., Any]:
    """``sweep(key, tables, par, log_step, tree, data) -> (tables, probs)``: one sweep of every phase."""
    import jax.numpy as jnp
    from jax import lax, random

    phases = _phases(len(n_units), C)

    def sweep(key: Any, tables: list[Any], par: Any, log_step: Any, tree: Any, data: Any) -> Any:
        keys = random.split(key, len(phases))
        probs = []
        for i, (kind, lev, reps) in enumerate(phases):
            scale = jnp.minimum(jnp.exp(log_step[i]) * data["step_ref"][i], _MAX_SCALE)
            if reps == 1:
                tables, p = _phase(kind, lev, keys[i], tables, par, scale, tree, data, n_units=n_units, C=C,
                                  prior=prior)
            else:  # one compiled body, repeated

                def body(j: Any, carry: Any, kind: str = kind, lev: int = lev, k: Any = keys[i],
                         scale: Any = scale) -> Any:
                    tabs, acc = carry
                    tabs, p = _phase(kind, lev, random.fold_in(k, j), tabs, par, scale, tree, data,
                                     n_units=n_units, C=C, prior=prior)
                    return tabs, acc + p / reps

                tables, p = lax.fori_loop(0, reps, body, (list(tables), jnp.zeros((), jnp.float64)))
            probs.append(p)
        return tables, jnp.stack(probs)

    return sweep


def _multinomial_factor(counts: Any, log_rate: Any, leaf_root: Any, n_root: int) -> Any:
    r"""The multinomial's log-pmf in the rates, :math:`\sum_{t, c} n_{tc} \log(\lambda_{tc} / \sum_{s(t)} \lambda)`.

    Its coefficient does not depend on the rates.
    """
    import jax
    import jax.numpy as jnp

    top = jax.ops.segment_max(jnp.max(log_rate, axis=1), leaf_root, num_segments=n_root)
    mass = jax.ops.segment_sum(jnp.sum(jnp.exp(log_rate - top[leaf_root][:, None]), axis=1), leaf_root,
                               num_segments=n_root)
    lse = top + jnp.log(mass)
    return jnp.sum(counts * (log_rate - lse[leaf_root][:, None]))


def _rates_model(user: Callable[[], Any], n_root: int) -> Callable[..., None]:
    """The continuous block's NumPyro model: the user's model (site ``log_rate``) times the counts' multinomial."""
    import numpyro
    from numpyro import handlers

    def joint(counts: Any, leaf_root: Any) -> None:
        with handlers.trace() as tr:
            user()
        if "log_rate" not in tr:
            raise ValueError("log_rate")  # turned into the package's message by sample_integer
        numpyro.factor("counts_given_rate", _multinomial_factor(counts, tr["log_rate"]["value"], leaf_root, n_root))

    return joint


@dataclass(frozen=True, eq=False)
class PriorBlock:
    """A prior of the counts as the sampler runs it: the sweep's terms, and the model of their parameters.

    Attributes
    ----------
    kind : {"rates", "dirmult"}
        The count sweep's prior terms (:func:`_phase`).
    joint : callable or None
        The NumPyro model of the parameters given ``(counts, leaf_root)``, updated by one NUTS iteration per
        iteration; None: the terms are fixed, given to :func:`sample_integer` (the counts' conditional alone).
    terms : callable or None
        The parameters' constrained values (the model's sites) to the sweep's terms (a dict of arrays).
    """

    kind: str
    joint: Callable[..., None] | None
    terms: Callable[[dict[str, Any]], dict[str, Any]] | None


def rates_block(user: Callable[[], Any], n_root: int) -> PriorBlock:
    """The multinomial given the rates of ``user`` (a NumPyro model, no arguments, with a site ``log_rate``)."""
    return PriorBlock("rates", _rates_model(user, n_root), lambda p: {"log_rate": p["log_rate"]})


def _build_program(n_units: tuple[int, ...], C: int, settings: SamplingSettings,
                   block: PriorBlock | None, sweeps: int = 1) -> Callable[..., Any]:
    """The compiled run: warmup and draws of every chain (vectorized), for one tree shape and prior."""
    import jax
    import jax.numpy as jnp
    from jax import lax, random

    from .._engine._adapt import adapt_step, init_adaptation

    rates = block is not None and block.joint is not None  # a NUTS step on the prior's parameters
    L = len(n_units)
    n_root, n_leaf = n_units[0], n_units[-1]
    n_phase = len(_phases(L, C))
    sweep = _build_sweep(n_units, C, "uniform" if block is None else block.kind)
    warmup, total = settings.warmup, settings.warmup + settings.draws
    if rates:
        from .._engine._nuts import nuts_step

        assert block is not None and block.joint is not None and block.terms is not None
        terms = block.terms
        step = nuts_step(block.joint, (jnp.zeros((n_leaf, C)), jnp.zeros(n_leaf, dtype=jnp.int32)))
        init_kernel, sample_kernel = step.init_kernel, step.sample_kernel
        potential_gen, post_gen, z_shape = step.potential_gen, step.postprocess_gen, step.z_shapes

    def chain(key: Any, tables0: list[Any], tree: Any, data: Any) -> Any:
        k_init, k_run = random.split(key)
        leaf_root = tree["anc"][0]
        counts0 = tables0[-1][:, 1:]
        if rates:
            keys = random.split(k_init, len(z_shape) + 1)
            z0 = {name: random.uniform(kk, jnp.shape(x), minval=-2.0, maxval=2.0)
                  for kk, (name, x) in zip(keys[1:], sorted(z_shape.items()), strict=True)}
            if "log_rate" in z0:
                lr = jnp.log(counts0 + 0.5)
                mean = jax.ops.segment_sum(lr.sum(axis=1), leaf_root, num_segments=n_root) / (
                    jax.ops.segment_sum(jnp.ones(n_leaf), leaf_root, num_segments=n_root) * C)
                z0["log_rate"] = lr - mean[leaf_root][:, None] - jnp.log(C)
            hmc0 = init_kernel(z0, warmup, step_size=1.0, inverse_mass_matrix=None, adapt_step_size=True,
                               adapt_mass_matrix=True, dense_mass=False,
                               target_accept_prob=settings.target_accept, max_tree_depth=10,
                               find_heuristic_step_size=False, regularize_mass_matrix=True,
                               model_args=(counts0, leaf_root), rng_key=keys[0])
        else:
            hmc0 = ()

        def step(carry: Any, i: Any) -> Any:
            tables, hmc_state, adapt, key = carry
            key, k_sweep = random.split(key)
            par = terms(post_gen(tables[-1][:, 1:], leaf_root)(hmc_state.z)) if rates else data.get("fixed", {})
            if sweeps == 1:
                tables, probs = sweep(k_sweep, tables, par, adapt.log_step, tree, data)
            else:

                def more(j: Any, c: Any) -> Any:
                    tabs, mean = c
                    tabs, p = sweep(random.fold_in(k_sweep, j), tabs, par, adapt.log_step, tree, data)
                    return tabs, mean + p / sweeps

                tables, probs = lax.fori_loop(0, sweeps, more, (list(tables), jnp.zeros(n_phase)))
            adapt = adapt_step(adapt, i, probs, MOVE_TARGET, warmup)
            out: dict[str, Any] = {"counts": tables[-1][:, 1:].astype(jnp.int32), "accept_rate": jnp.mean(probs)}
            if rates:
                args = (tables[-1][:, 1:], leaf_root)
                pe, grad = jax.value_and_grad(potential_gen(*args))(hmc_state.z)
                hmc_state = sample_kernel(hmc_state._replace(potential_energy=pe, z_grad=grad), model_args=args)
                out["params"] = post_gen(*args)(hmc_state.z)
                out["diverging"] = hmc_state.diverging
                out["n_steps"] = hmc_state.num_steps
            return (tables, hmc_state, adapt, key), out

        def body(i: Any, carry: Any) -> Any:
            state, buf = carry
            state, out = step(state, i)
            at = jnp.maximum(i - warmup, 0)  # warmup iterations write slot 0, overwritten by the first draw
            buf = jax.tree.map(lambda b, x: lax.dynamic_update_index_in_dim(b, x, at, 0), buf, out)
            return state, buf

        state = (tables0, hmc0, init_adaptation((n_phase,)), k_run)
        shapes = jax.eval_shape(lambda s: step(s, jnp.zeros((), jnp.int32))[1], state)
        buf = jax.tree.map(lambda x: jnp.zeros((settings.draws, *x.shape), x.dtype), shapes)
        _, kept = lax.fori_loop(0, total, body, (state, buf))
        return kept

    return jit(jax.vmap(chain, in_axes=(0, 0, None, None)))


def start_counts(tree: IntegerTree, release: NoisyHierarchy, chains: int, seed: int) -> np.ndarray:
    """Starting counts per chain: the GLS estimate of the leaf cells, jittered, apportioned to the totals.

    The GLS estimate (:func:`~noiseaware.hierarchy.gls`) plus a normal draw of its standard errors,
    projected onto each root's simplex and apportioned to its total. Near the posterior, so that warmup
    is spent adapting rather than travelling; dispersed over chains, so that R-hat can see a chain
    stuck where it started.
    """
    from ._gls import gls
    from ._rounding import apportion, project_to_simplex

    rng = np.random.default_rng([seed, 7])
    n_leaf, C = tree.n_units[-1], tree.n_cells
    root = tree.leaf_root
    out = np.zeros((chains, n_leaf, C), dtype=np.int64)
    est = gls(release)
    base = est.mean[-1]
    sd = np.sqrt(np.maximum(np.diagonal(est.cov[-1], axis1=1, axis2=2), 0.0))
    for ch in range(chains):
        x = base + rng.normal(size=base.shape) * sd
        for s in range(tree.n_units[0]):
            rows = np.flatnonzero(root == s)
            total = int(tree.totals[s])
            if total and rows.size:
                flat = x[rows].reshape(1, -1)
                q = project_to_simplex(flat, total)
                out[ch, rows] = apportion(q, np.array([total], dtype=np.int64)).reshape(rows.size, C)
    return out


def _tables(tree: IntegerTree, counts: np.ndarray) -> list[np.ndarray]:
    """Every level's ``(chains, units, 1 + cells)`` table of true counts from the chains' leaf counts."""
    tabs = []
    for lev in range(len(tree.n_units)):
        up = np.zeros((counts.shape[0], tree.n_units[lev], tree.n_cells), dtype=np.float64)
        np.add.at(up, (slice(None), tree.arrays["anc"][lev]), counts)
        tabs.append(np.concatenate([up.sum(axis=2, keepdims=True), up], axis=2))
    return tabs


def sample_integer(tree: IntegerTree, release: NoisyHierarchy, settings: SamplingSettings, *,
                   block: PriorBlock | None, cache_key: Any, sweeps: int = 1,
                   fixed: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """Run the integer-count sampler: ``{"counts": (chains, draws, leaves, cells) int64, ...}``.

    ``block`` is None for the uniform prior, else the prior (:class:`PriorBlock`); ``fixed`` its sweep's terms
    when its ``joint`` is None (the counts' conditional given them); ``cache_key`` is what shapes the program
    besides the tree's sizes (None: compile for this call only); ``sweeps`` count sweeps run per iteration (and
    per kept draw).
    """
    import jax
    import jax.numpy as jnp

    L, C = len(tree.n_units), tree.n_cells
    phases = _phases(L, C)
    step_ref = np.array([tree.step_reference(lev) for _, lev, _ in phases])
    key = (tree.n_units, C, settings.chains, settings.draws, settings.warmup, settings.target_accept, sweeps,
           cache_key)

    def build() -> Any:
        return _build_program(tree.n_units, C, settings, block, sweeps)

    program = PROGRAMS.get(key, build) if cache_key is not None else build()
    counts0 = start_counts(tree, release, settings.chains, settings.seed)
    tables0 = [jnp.asarray(t) for t in _tables(tree, counts0)]
    data = {"y": [jnp.asarray(x) for x in tree.y], "sigma": [jnp.asarray(x) for x in tree.sigma],
            "measured": [jnp.asarray(x) for x in tree.measured], "step_ref": jnp.asarray(step_ref)}
    if fixed is not None:
        data["fixed"] = {k: jnp.asarray(x, dtype=jnp.float64) for k, x in fixed.items()}
    arrays = {k: jnp.asarray(x) for k, x in tree.arrays.items()}
    keys = jax.random.split(jax.random.PRNGKey(settings.seed), settings.chains)
    out = program(keys, tables0, arrays, data)
    res: dict[str, Any] = {k: np.asarray(x) for k, x in out.items() if k != "params"}
    res["counts"] = res["counts"].astype(np.int64)
    res["params"] = {k: np.asarray(x) for k, x in out.get("params", {}).items()}
    return res


def integer_fit(release: NoisyHierarchy, data: Any, settings: SamplingSettings, prior: str,
                model: Callable[[], Any] | None, sweeps: int = 1) -> Any:
    """The integer route of :func:`noiseaware.hierarchy.fit`: the host's result with its posterior and stats.

    ``data`` is the release's :class:`~noiseaware.hierarchy.ModelData`; ``model`` a user's NumPyro model
    (no arguments) sampling ``log_rate``, or None for ``prior``.
    """
    import numpyro

    from .._engine import from_groups

    tree = integer_tree(release)
    block, key = _prior_block(tree, data, prior, model)
    misses = PROGRAMS.info["misses"]
    out = sample_integer(tree, release, settings, block=block, cache_key=key, sweeps=sweeps)
    posterior: dict[str, Any] = {"counts": out["counts"], **out["params"]}
    stats = {k: out[k] for k in ("accept_rate", "diverging", "n_steps") if k in out}
    leaf_cell = {k: ["leaf", "cell"] for k, x in posterior.items()
                 if np.shape(x)[2:] == (tree.n_units[-1], tree.n_cells)}
    return from_groups(
        {"posterior": posterior, "sample_stats": stats}, dims=leaf_cell,
        coords={"leaf": list(release.units[-1]), "cell": list(release.queries[1:])},
        attrs={"inference_library": "numpyro", "inference_library_version": numpyro.__version__,
               # 0 when a file of the same shape (and prior) was fitted before in this process: nothing compiled
               "noiseaware_programs_compiled": int(PROGRAMS.info["misses"] - misses)},
    )


def _prior_block(tree: IntegerTree, data: Any, prior: str,
                 model: Callable[[], Any] | None) -> tuple[PriorBlock | None, tuple[Any, ...]]:
    """The sampler's prior for ``prior`` (or the user's ``model``), and what keys its compiled program."""
    if model is not None:
        _check_user_model(model, tree)
        return rates_block(model, tree.n_units[0]), ("model", model)
    if prior == "uniform":
        return None, ("uniform",)
    county, county_root = np.asarray(data.ancestor(1)), np.asarray(data.county_root())
    leaf_root = np.asarray(data.leaf_root)
    n_units, C = tree.n_units, tree.n_cells
    key = (prior, county.tobytes(), county_root.tobytes(), leaf_root.tobytes())
    if prior == "dirichlet_multinomial":
        from ._dirmult import dirmult_model

        joint, terms = dirmult_model(n_units, county, county_root, leaf_root, C)
        return PriorBlock("dirmult", joint, terms), key

    def user() -> Any:
        return hierarchical_log_rate(n_units, county, county_root, leaf_root, C)

    _check_user_model(user, tree)
    return rates_block(user, n_units[0]), key


def _check_user_model(user: Callable[[], Any], tree: IntegerTree) -> None:
    """The model must sample (or compute) a finite ``log_rate`` of shape (leaves, cells)."""
    import jax
    from numpyro import handlers

    from .. import _validation as v

    try:
        tr = handlers.trace(handlers.seed(user, jax.random.PRNGKey(0))).get_trace()
    except TypeError as err:
        v.refuse("model", "must be a NumPyro model that takes no arguments", repr(err),
               "Close over your covariates (functools.partial or a closure).")
    shape = (tree.n_units[-1], tree.n_cells)
    if "log_rate" not in tr:
        v.refuse("model", f"must have a site 'log_rate' of shape {shape} (leaves, cells)",
               sorted(tr), "Sample (or numpyro.deterministic) the leaf cells' log-rates as 'log_rate'.")
    got = tuple(np.shape(tr["log_rate"]["value"]))
    if got != shape:
        v.refuse("model", f"must give 'log_rate' the shape {shape} (leaves, cells)", got,
               "One log-rate per leaf cell, the leaves in the release's order.")
