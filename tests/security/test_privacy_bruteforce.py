"""Every statistic's recorded sensitivity against a brute force over neighbouring data sets.

Neighbours: substitution of one record, ``n`` public (docs/security.md). For each statistic the
test makes a release of small data with :func:`noiseaware.privatize`, then enumerates the data
sets that differ from it in one record (exhaustively over a small grid for the smallest ``n``,
by random search above) and checks that the largest change of the statistic never exceeds the
sensitivity the release records — and, where the bound is tight, that it is reached.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import noiseaware as na
from noiseaware._privatize import _dirichlet as pdir
from noiseaware._privatize import kendall_tau_a, median_split_indicators
from noiseaware._statistics import SCHEMAS

#: Statistics whose sensitivity the curator states (nothing to brute-force), with the reason.
STATED = {
    "counts": "the curator states the table's sensitivity (sensitivity=...)",
    "vector": "the curator states the vector's sensitivity (sensitivity=...)",
    "randomized_response": "record-level mechanism: each answer is randomized on its own, no aggregate",
    "pace_ggm_round": "a round of a pace_ggm release; its sensitivity is checked against pace_ggm's 2 B**2 / n",
}
#: Statistics checked here by brute force.
BRUTE = {
    "median_pairs",
    "kendall_pairs",
    "dirichlet_logmean",
    "dirichlet_censoring_counts",
    "dpcopula",
    "dpcopula_mle",
    "dpcopula_hybrid",
    "dpcopula_hybrid_margins",
    "dpcopula_hybrid_kendall",
    "pace_ggm",
    "pace_ggm_mean",
    "second_moment",
    "regression",
    "regression_eigen",
}


def test_every_statistic_has_a_brute_force_check_or_a_reason() -> None:
    assert set(SCHEMAS) == BRUTE | set(STATED)


def _kendall_all(x: np.ndarray) -> np.ndarray:
    p = x.shape[1]
    return np.array([kendall_tau_a(x[:, i], x[:, j]) for i, j in itertools.combinations(range(p), 2)])


def _substitutions(x: np.ndarray, grid: np.ndarray):
    """Every data set that differs from ``x`` in one row, the new row taken from ``grid``."""
    for i in range(x.shape[0]):
        for row in grid:
            z = x.copy()
            z[i] = row
            yield z


def _max_change(stat, x: np.ndarray, neighbours) -> float:
    s0 = stat(x)
    return max(float(np.max(np.abs(stat(z) - s0))) for z in neighbours)


@pytest.mark.parametrize("n", [2, 3])
def test_kendall_sensitivity_exhaustive_small_n(n: int) -> None:
    vals = np.array([0.0, 1.0, 2.0])
    rows = np.array(list(itertools.product(vals, repeat=2)))
    worst = 0.0
    for data in itertools.product(range(len(rows)), repeat=n):
        x = rows[list(data)]
        worst = max(worst, _max_change(_kendall_all, x, _substitutions(x, rows)))
    rel = na.privatize(rows[:n] + np.arange(n)[:, None], statistic="kendall_pairs", epsilon=1.0)
    assert worst <= rel.mechanism.sensitivity * (1 + 1e-12)
    assert worst == pytest.approx(4.0 / n)  # tight
    assert worst > 4.0 / (n + 1)  # the seed's 4/(n+1) is too small: epsilon would be (n+1)/n times the claim


@pytest.mark.parametrize("n", [4, 6, 10])
def test_kendall_sensitivity_random_search(n: int) -> None:
    rng = np.random.default_rng(n)
    worst = 0.0
    for _ in range(8):
        x = rng.normal(size=(n, 3))
        grid = np.vstack([rng.normal(size=(10, 3)), [[9, 9, 9], [-9, -9, -9], [9, -9, 9], [-9, 9, -9]]])
        worst = max(worst, _max_change(_kendall_all, x, _substitutions(x, grid)))
    # the tight case: a concordant sample whose largest record moves to the bottom in one column
    x = np.tile(np.arange(n, dtype=float)[:, None], (1, 3))
    z = x.copy()
    z[-1, 0] = -1.0
    tight = float(np.max(np.abs(_kendall_all(z) - _kendall_all(x))))
    rel = na.privatize(rng.normal(size=(n, 3)), statistic="kendall_pairs", epsilon=1.0)
    assert max(worst, tight) <= rel.mechanism.sensitivity * (1 + 1e-12)
    assert tight == pytest.approx(rel.mechanism.sensitivity)


def _median_counts():
    def stat(xk: np.ndarray) -> np.ndarray:
        p = xk.shape[1] // 2
        a = median_split_indicators(xk[:, :p], xk[:, p:])
        iu, ju = np.triu_indices(p, 1)
        return (a.T @ a)[iu, ju]

    return stat


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_median_pairs_sensitivity_by_search(n: int) -> None:
    # records (x1, x2, x3) on a grid with ties, each with its own tie-breaking keys (substituted with the record)
    rng = np.random.default_rng(n)
    vals = [0.0, 1.0]
    rows = np.array([[*r, *rng.normal(size=3)] for r in itertools.product(vals, repeat=3) for _ in range(2)])
    stat = _median_counts()
    worst = 0.0
    datasets = list(itertools.combinations(range(len(rows)), n))  # distinct records (keys differ)
    if len(datasets) > 150:  # exhaustive for n <= 2; a random subset of data sets above
        datasets = [datasets[i] for i in rng.choice(len(datasets), 150, replace=False)]
    for data in datasets:
        x = rows[list(data)]
        worst = max(worst, _max_change(stat, x, _substitutions(x, rows)))
    with pytest.warns(na.exceptions.UtilityWarning):  # tiny n: the noise swamps the counts, as it should
        rel = na.privatize(rng.normal(size=(n, 3)), statistic="median_pairs", epsilon=1.0)
    assert worst <= rel.mechanism.sensitivity
    assert worst == 1  # tight


def test_dirichlet_sensitivities_random_search() -> None:
    rng = np.random.default_rng(7)
    cand = np.asarray(pdir.DEFAULT_CANDIDATES)
    for d in (2, 3, 4):
        x = rng.dirichlet(np.full(d, 0.4), size=6)
        grid = [rng.dirichlet(np.full(d, 0.2)) for _ in range(40)]
        for lo in (0.0, 1e-7, 1e-3, 0.3):
            y = np.full(d, lo)
            y[0] = 1.0 - lo * (d - 1)
            grid.append(y)
        grid_arr = np.array(grid)
        rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, zeros="censor", candidates=cand)
        # the threshold-selection counts: L1 sensitivity 2
        c0 = pdir.censoring_counts(x, cand)
        l1 = max(int(np.abs(pdir.censoring_counts(z, cand) - c0).sum()) for z in _substitutions(x, grid_arr))
        assert l1 <= rel.components[0].mechanism.sensitivity and l1 == 2
        # the censored log-sums at the released a: L1 sensitivity -d log a
        a = rel.metadata["a"]

        def sums(z: np.ndarray, a: float = a) -> np.ndarray:
            return np.log(np.maximum(z, a)).sum(axis=0)

        s0 = sums(x)
        l1s = max(float(np.abs(sums(z) - s0).sum()) for z in _substitutions(x, grid_arr))
        assert l1s <= rel.mechanism.sensitivity * (1 + 1e-12)
        assert l1s >= -math.log(a)  # the right order: one coordinate alone moves by -log a


def test_dpcopula_sensitivities_by_search() -> None:
    """dpcopula: concatenated histograms 2m (exhaustive, tight); dpcopula_mle: 2/l (random search)."""
    from noiseaware._privatize import _dpcopula as dp

    x = np.array([[0, 1, 2], [1, 0, 0], [2, 1, 1], [0, 0, 2]])
    doms = [range(3), range(2), range(3)]

    def hist(d: np.ndarray) -> np.ndarray:
        return np.concatenate([np.bincount(d[:, j], minlength=len(r)) for j, r in enumerate(doms)])

    grid = np.array(list(itertools.product(range(3), range(2), range(3))))
    worst = max(int(np.abs(hist(z) - hist(x)).sum()) for z in _substitutions(x, grid))  # L1
    rel = na.privatize(x, statistic="dpcopula", epsilon=1.0, domains=doms, correlation="mle", blocks=1)
    assert worst == rel.mechanism.sensitivity == 6
    rng = np.random.default_rng(7)
    y = rng.integers(0, 4, (16, 3))
    perm = rng.permutation(16)
    stat = lambda d: dp.dpcopula_mle_blocks(d, 2, perm)[0]  # noqa: E731
    worst = _max_change(stat, y, _substitutions(y, rng.integers(0, 4, (40, 3))))
    rel = na.privatize(y, statistic="dpcopula", epsilon=1.0, domains=[range(4)] * 3, correlation="mle", blocks=2)
    assert 0.0 < worst <= rel.components[0].mechanism.sensitivity == 1.0


def _second_moment_entries(x: np.ndarray) -> np.ndarray:
    d = x.shape[1]
    s = x.T @ x / x.shape[0]
    return np.array([s[j, k] for j in range(d) for k in range(j + 1)])


@pytest.mark.parametrize("d", [2, 3, 4])
def test_second_moment_l2_sensitivity_exhaustive(d: int) -> None:
    # n = 2 records, rows over {-1, 0, 1}^d: every substitution of every record (the box's vertices
    # and midpoints hold the maximiser, see second_moment_sensitivity)
    grid = np.array(list(itertools.product([-1.0, 0.0, 1.0], repeat=d)))
    x = np.array([grid[0], grid[-1]])
    rel = na.privatize(x, statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(0))
    worst = 0.0
    for base in grid:
        for new in grid:
            a = np.array([base, x[1]])
            b = np.array([new, x[1]])
            worst = max(worst, float(np.linalg.norm(_second_moment_entries(a) - _second_moment_entries(b))))
    assert worst <= rel.mechanism.sensitivity * (1 + 1e-12)
    if d % 2 == 0:
        assert worst == pytest.approx(rel.mechanism.sensitivity, rel=1e-12)  # tight for even d
    # random interior points never exceed it either
    rng = np.random.default_rng(d)
    for _ in range(2000):
        u, w = rng.uniform(-1, 1, size=(2, d))
        a, b = np.array([u, x[1]]), np.array([w, x[1]])
        assert np.linalg.norm(_second_moment_entries(a) - _second_moment_entries(b)) <= rel.mechanism.sensitivity


def test_pace_ggm_entry_sensitivity_bruteforce() -> None:
    d, n = 3, 3
    grid = np.array(list(itertools.product([-1.0, -0.5, 0.0, 0.5, 1.0], repeat=d)))
    x = np.random.default_rng(2).uniform(-1, 1, size=(n, d))
    x[0] = [1.0, -1.0, 1.0]  # a record with u_j = -u_k = B, which a substitution can flip
    rel = na.privatize(x, statistic="pace_ggm", rho=1.0, bound=1.0, rng=np.random.default_rng(0))
    worst = _max_change(_second_moment_entries, x, _substitutions(x, grid))
    sens = rel.mechanism.sensitivity
    assert worst <= sens * (1 + 1e-12)
    assert worst == pytest.approx(sens, rel=1e-12)  # reached: v_j = v_k = u_j = -u_k = B
    for c in rel.components:
        assert c.mechanism.sensitivity == sens  # every selection score and measurement uses it


def test_pace_ggm_centred_mean_and_entry_sensitivity_bruteforce() -> None:
    """center=True: the mean vector (L2, 2 B sqrt(d) / n) and the entries about the released mean c."""
    d, n = 3, 3
    grid = np.array(list(itertools.product([-1.0, -0.5, 0.0, 0.5, 1.0], repeat=d)))
    x = np.random.default_rng(3).uniform(-1, 1, size=(n, d))
    x[0] = [1.0, 1.0, 1.0]
    rel = na.privatize(x, statistic="pace_ggm", rho=1.0, bound=1.0, center=True, rng=np.random.default_rng(0))
    mean_rel = rel.components[-1]
    worst = max(float(np.linalg.norm(z.mean(0) - x.mean(0))) for z in _substitutions(x, grid))
    assert worst == pytest.approx(mean_rel.mechanism.sensitivity, rel=1e-12)  # v = -u = B 1 is reached
    # given the released c (and the worst c allowed, |c_j| = B), entries of (x - c)^T (x - c) / n
    for c in (np.asarray(rel.metadata["mean"]), np.array([1.0, -1.0, 1.0])):
        sens = 2.0 * (1.0 + float(np.max(np.abs(c)))) ** 2 / n
        w = _max_change(lambda a, c=c: _second_moment_entries(a - c), x, _substitutions(x, grid))
        assert w <= sens * (1 + 1e-12)
    assert rel.mechanism.sensitivity == pytest.approx(2.0 * rel.metadata["bound"] ** 2 / n, rel=1e-12)
    for comp in rel.components[:-1]:
        assert comp.mechanism.sensitivity == rel.mechanism.sensitivity

def test_dpcopula_hybrid_sensitivities_exhaustive() -> None:
    """Algorithm 6 pieces, every substitution of a small table (and every addition / removal):

    partition counts 2, per-partition margins 2 m_2 (both tight); the floored Kendall vector moves
    in at most two partitions under substitution (one under addition or removal), by at most
    4/floor per pair in each, so its L1 sensitivity 8 C(m_2,2)/floor holds — while the unfloored
    tau-a of a small partition moves by more than the floor's 4/floor (the printed Algorithm 6
    scales noise by the private partition size).
    """
    from noiseaware._privatize._dpcopula_hybrid import hybrid_kendall, partition_index

    rng = np.random.default_rng(11)
    x = np.column_stack([rng.integers(0, 2, 9), rng.integers(0, 3, 9), rng.integers(0, 3, 9)])
    floor = 4

    def pieces(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        part = partition_index(d[:, :1], [2])
        counts = np.bincount(part, minlength=2)
        hist = np.concatenate([np.bincount(part * 3 + d[:, j], minlength=6) for j in (1, 2)])
        return counts, hist, hybrid_kendall(d[:, 1:], part, 2, [3, 3], floor)

    grid = np.array(list(itertools.product(range(2), range(3), range(3))))
    c0, h0, t0 = pieces(x)
    worst = np.zeros(3)
    touched = 0
    for z in _substitutions(x, grid):
        c, h, t = pieces(z)
        dt = np.abs(t - t0)
        worst = np.maximum(worst, [np.abs(c - c0).sum(), np.abs(h - h0).sum(), dt.sum()])
        touched = max(touched, int((dt.max(axis=1) > 1e-12).sum()))
        assert dt.max() <= 4.0 / floor + 1e-12
    doms = [range(2), range(3), range(3)]
    rel = na.privatize(x, statistic="dpcopula", epsilon=1.0, domains=doms, hybrid=["x0"], floor=floor)
    assert worst[0] == rel.mechanism.sensitivity == 2
    assert worst[1] == rel.components[0].mechanism.sensitivity == 4
    assert 0 < worst[2] <= rel.components[1].mechanism.sensitivity == pytest.approx(8.0 / floor)
    assert touched == 2  # a record that changes partition moves both: not "the guarantee of one"
    for i in range(x.shape[0]):  # removal (and, read backwards, addition) touches one partition
        _, _, t = pieces(np.delete(x, i, axis=0))
        dt = np.abs(t - t0)
        assert int((dt.max(axis=1) > 1e-12).sum()) <= 1 and dt.sum() <= 4.0 / floor + 1e-12
    small = np.array([[0, 0, 0], [0, 1, 1]])  # a partition of 2 < floor records: tau-a = 1
    flip = small.copy()
    flip[0] = [0, 0, 2]  # now discordant: tau-a = -1
    tau_a = lambda d: kendall_tau_a(d[:, 1], d[:, 2])  # noqa: E731
    assert abs(tau_a(flip) - tau_a(small)) > 4.0 / floor  # private-size scaling would under-noise it


def _regression_entries(w: np.ndarray, intercept: bool) -> np.ndarray:
    """The released unique entries of ``W^T W`` (sums), without the public ``(0, 0)`` with an intercept."""
    m = w.T @ w
    k = m.shape[0]
    return np.array([m[j, i] for j in range(k) for i in range(j + 1) if not (intercept and j == 0)])


def _regression_release(x: np.ndarray, intercept: bool, **kw) -> na.Release:
    cols = [f"z{j}" for j in range(x.shape[1])]
    return na.privatize(
        x, statistic="regression", response=cols[-1], columns=cols, bound=1.0, intercept=intercept,
        rng=np.random.default_rng(0), **kw,
    )


@pytest.mark.parametrize("p", [2, 3, 4])
@pytest.mark.parametrize("intercept", [True, False])
def test_regression_entries_sensitivity_exhaustive(p: int, intercept: bool) -> None:
    """L2 (Gaussian) and L1 (Laplace) sensitivities of the unique entries of W^T W, every substitution on a grid.

    The change under substitution of ``u`` by ``v`` is that of ``vv^T - uu^T`` alone (the other records
    cancel), so every pair of rows of the grid (the intercept's 1 in front) is every substitution.
    """
    grid = np.array(list(itertools.product([-1.0, -0.5, 0.0, 0.5, 1.0], repeat=p)))
    rows = np.hstack([np.ones((len(grid), 1)), grid]) if intercept else grid
    ent = np.array([_regression_entries(r[None, :], intercept) for r in rows])
    diff = ent[:, None, :] - ent[None, :, :]
    l2 = float(np.sqrt((diff**2).sum(-1)).max())
    l1 = float(np.abs(diff).sum(-1).max())
    x = np.random.default_rng(p).uniform(-1, 1, size=(6, p))
    gauss = _regression_release(x, intercept, rho=1.0)
    lap = _regression_release(x, intercept, epsilon=1.0)
    k = p + intercept
    assert gauss.mechanism.sensitivity == k and lap.mechanism.sensitivity == k * k - intercept
    assert l2 <= gauss.mechanism.sensitivity * (1 + 1e-12)
    if k % 2 == 0:
        assert l2 == pytest.approx(k, rel=1e-12)  # tight for even k
    else:
        assert l2 == pytest.approx(math.sqrt(k * k - 1), rel=1e-12)  # the corners' maximum for odd k
    assert l1 <= lap.mechanism.sensitivity  # valid; not tight (k(k+1)/2 or a little less on this grid)
    # a wrong rule is caught: the second_moment rule for k - 1 columns, or dropping the intercept's column
    assert l2 > k - 1
    # random interior substitutions never exceed the L2 bound either
    rng = np.random.default_rng(10 * p + intercept)
    u, v = rng.uniform(-1, 1, size=(2, 4000, p))
    if intercept:
        u, v = (np.concatenate([np.ones((4000, 1)), a], axis=1) for a in (u, v))
    ent_u = np.array([_regression_entries(a[None], intercept) for a in u])
    du = ent_u - np.array([_regression_entries(b[None], intercept) for b in v])
    assert float(np.sqrt((du**2).sum(-1)).max()) <= k


@pytest.mark.parametrize("intercept", [True, False])
def test_regression_eigen_sensitivity_search(intercept: bool) -> None:
    """lambda_min(W_x^T W_x) of the design moves by at most p = k - 1 under substitution; nearly reached."""
    p = 2
    rng = np.random.default_rng(7 + intercept)
    grid = np.array(list(itertools.product([-1.0, -0.5, 0.0, 0.5, 1.0], repeat=p + 1)))  # predictors + response
    x = rng.uniform(-1, 1, size=(4, p + 1))
    rel = _regression_release(x, intercept, rho=1.0, method="adassp")
    sens = rel.components[0].mechanism.sensitivity
    assert sens == p + intercept

    def lam(z: np.ndarray) -> np.ndarray:
        d = z[:, :-1]
        if intercept:
            d = np.hstack([np.ones((len(z), 1)), d])
        return np.array([np.linalg.eigvalsh(d.T @ d)[0]])

    worst = 0.0
    for _ in range(30):
        base = rng.uniform(-1, 1, size=(4, p + 1)) * rng.uniform(0, 1, size=(4, 1))
        worst = max(worst, _max_change(lam, base, _substitutions(base, grid)))
    assert worst <= sens * (1 + 1e-12)
    # reached: W_x^T W_x = 8 I (predictors at the corners of the square, twice each), the record
    # u = (1, 1[, 1]) replaced by a v orthogonal to it, so lambda_min drops by ||u||^2 = p
    corners = np.array(list(itertools.product([-1.0, 1.0], repeat=p)) * 2)
    base = np.hstack([corners, np.zeros((8, 1))])  # row 3 is u = (1, 1)
    new = base.copy()
    new[3, :p] = [-0.5, -0.5] if intercept else [1.0, -1.0]
    assert float(np.abs(lam(new) - lam(base))[0]) == pytest.approx(sens, rel=1e-12)
