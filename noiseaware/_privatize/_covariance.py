r"""Private second-moment / covariance releases: PACE-GGM (Ferrando et al. 2026, Algorithms 1-4) and SSP.

Both statistics estimate :math:`\Sigma(X) = X^\top X / n` of data with a coordinate-wise bound
:math:`|x_j| \le B` (by default the mean is known and already removed, or zero: centring with the
data's own mean would change every record and break the bound). Neighbours are substitutions of
one record with ``n`` public.

**Budgeted centring** (``pace_ggm`` with ``center=True, mean_share=s``, default ``s = 0.1``): first
a Gaussian release of the mean vector with :math:`\rho_{mean} = s\rho` and L2 sensitivity
:math:`2B\sqrt d/n` (substituting ``u`` by ``v`` moves :math:`\bar x` by :math:`(v-u)/n`,
:math:`\|v-u\|_2 \le 2B\sqrt d`, reached at ``v = -u = B 1``); its clip ``c`` to :math:`[-B, B]`
(post-processing) is public and the records become :math:`x - c`, bounded by
:math:`B_c = B + \max_j|c_j| \le 2B`. Algorithm 1 then runs on the centred data with
:math:`(1-s)\rho` and :math:`\Delta = 2B_c^2/n` (never the raw ``B``, which would understate it
up to 4x). Sequential composition: :math:`s\rho + (1-s)\rho = \rho` exactly. The release records
the mean as its last component (``pace_ggm_mean``), ``metadata.mean = c``, ``data_bound = B``,
``bound = B_c``, ``rho_mean``, ``mean_share``.

* ``"pace_ggm"`` — Ferrando, Fuentes, Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via
  Gaussian Graphical Models*, Algorithm 1: the diagonal is measured with budget ``alpha rho``
  (Algorithm 2); then rounds of exponential-mechanism selection of one of the ``d(d+1)/2``
  entries (score :math:`|\Sigma_{jk}(X) - \hat\Sigma^{(t-1)}_{jk}|`, sensitivity
  :math:`\Delta = 2B^2/n`, :math:`\epsilon = \sqrt{8\rho_{sel}}`) and Gaussian measurement
  (:math:`\sigma_t^2 = \Delta^2/(2\rho_{meas})`), precision-weighted combination of repeats
  (Prop. 4.2), maximum-entropy reconstruction (Algorithm 4, :mod:`noiseaware._core._maxent`)
  and budget annealing (Algorithm 3). Fully adaptive zCDP composition (Whitehouse et al. 2023;
  Ferrando et al. (2026) Theorem 4.3): the rounds' budgets add up to exactly ``rho``.
* ``"second_moment"`` — SSP: all ``d(d+1)/2`` unique entries with one Gaussian draw each,
  L2 sensitivity :math:`d B^2 / n` of the vector of unique entries (:func:`second_moment_sensitivity`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._core._maxent import SOLVER_SETTINGS, BlockSolver
from .._statistics import ENTRY_ORDER, mean_sensitivity, pace_ggm_sensitivity, second_moment_sensitivity
from .._validation import current_owner, owned
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..mechanisms import ExponentialMechanism, GaussianMechanism, Guarantee
from ..release import Release
from ._common import Context, as_matrix, even_share, fit_sum, no_extra, statistic

__all__ = ["MAX_ENTRIES", "bounded_data", "lower_entries"]

#: Most unique entries ``d(d+1)/2`` of :math:`X^\top X/n` that ``second_moment`` and ``pace_ggm`` accept
#: (``d <= 1999`` columns), checked before any work or budget: each entry costs about 0.4 kB in memory
#: (values, labels, the d x d products) and 40 bytes or more of release JSON, so the limit keeps a
#: release near 1 GB of memory and well inside the 256 MiB that :meth:`~noiseaware.Release.from_json`
#: reads back. ``d = 10,000`` would be 50,005,000 entries.
MAX_ENTRIES = 2_000_000

_CENTERING = (
    "none: Sigma(X) = X^T X / n of the data as given (mean known and removed by the curator, or zero); "
    "centring with the data's own mean is not done because it would break the bound"
)


_CENTERED = (
    "released mean: a Gaussian release of the mean (mean_share * rho, L2 sensitivity 2 B sqrt(d) / n), clipped "
    "to [-B, B] (metadata.mean); Sigma(X) = (X - mean)^T (X - mean) / n with bound B + max|mean| <= 2B"
)


def lower_entries(d: int) -> list[tuple[int, int]]:
    """The ``d(d+1)/2`` entries ``(j, k)``, ``j >= k``, in row-major lower-triangle order.

    Examples
    --------
    >>> lower_entries(3)
    [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]
    """
    return [(j, k) for j in range(d) for k in range(j + 1)]


def bounded_data(x: np.ndarray, bound: Any, clip: Any) -> tuple[np.ndarray, float, bool]:
    """Check ``|x| <= bound`` (or clip to it when ``clip=True``); return data, bound, clip flag.

    Raises
    ------
    NoiseawareValueError
        ``bound`` not a finite number > 0, or data outside ``[-bound, bound]`` without ``clip``.
    NoiseawareTypeError
        ``clip`` not a bool.
    """
    owner = current_owner()
    if bound is None:
        raise NoiseawareValueError(
            f"{owner}: bound must be given (the public coordinate-wise bound B with |x_j| <= B); got bound=None."
        )
    b = v.positive("bound", bound)
    if not isinstance(clip, bool):
        raise NoiseawareTypeError(v.message("clip", "must be True or False", clip))
    if clip:
        return np.clip(x, -b, b), b, True
    worst = float(np.max(np.abs(x)))
    if worst > b:
        raise NoiseawareValueError(
            f"{owner}: data must lie in [-bound, bound] = [{-b!r}, {b!r}] (the sensitivity 2 B**2 / n assumes it); "
            f"got max |x| = {worst!r}. Pass clip=True to clip the data to the bound (recorded in the release), "
            "or give a larger bound."
        )
    return x, b, False


def _check_entries(d: int) -> None:
    """Refuse more than :data:`MAX_ENTRIES` unique entries, naming ``d`` and the limit."""
    owner = current_owner()
    m = d * (d + 1) // 2
    if m > MAX_ENTRIES:
        d_max = (math.isqrt(8 * MAX_ENTRIES + 1) - 1) // 2
        raise NoiseawareValueError(
            f"{owner}: data must have at most {d_max} columns (d(d+1)/2 <= MAX_ENTRIES = {MAX_ENTRIES} unique "
            f"entries of X^T X / n); got d={d} columns ({m} entries). Release fewer columns at a time."
        )


def _common_options(data: Any, options: dict[str, Any]) -> tuple[np.ndarray, list[str], float, bool]:
    x, names = as_matrix(data, options.get("columns"))
    _check_entries(x.shape[1])
    x, b, clipped = bounded_data(x, options.get("bound"), options.get("clip", False))
    return x, names, b, clipped


@statistic("second_moment")
@owned("privatize(statistic='second_moment')")
def _second_moment(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """SSP: every unique entry of ``X^T X / n`` with Gaussian noise, L2 sensitivity ``d B^2 / n``."""
    no_extra(options, {"bound", "clip", "columns"})
    v.choice("mechanism", mechanism or "gaussian", ("gaussian",))
    rho = ctx.require("rho")
    x, names, b, clipped = _common_options(data, options)
    n, d = x.shape
    s = x.T @ x / n
    ent = lower_entries(d)
    truth = np.array([s[j, k] for j, k in ent])
    sens = second_moment_sensitivity(n, d, b)
    mech = GaussianMechanism.from_rho(rho, sens)
    g = mech.guarantee()
    ctx.charge(g, label="second_moment")
    noisy = mech.release(truth, rng=ctx.rng)
    meta = {
        "columns": names,
        "d": d,
        "bound": b,
        "clip": clipped,
        "entry_order": ENTRY_ORDER,
        "centering": _CENTERING,
    }
    return ctx.release("second_moment", noisy, [(names[j], names[k]) for j, k in ent], mech, "joint", g, n, meta)


#: Largest precision ``2 rho / sensitivity**2`` a PACE-GGM release accepts: past it the noise is
#: negligible (sd below 1e-75 sensitivities) and the reconstruction's products of precisions and
#: squared entries overflow float64.
MAX_PRECISION = 1e150


def _check_pace_budgets(
    rho: float, alpha: float, beta: float, T: int, d: int, share: float, delta: float
) -> None:
    """Refuse, before any budget is charged, a rho whose smallest pieces no mechanism can use.

    The smallest pieces are the mean's ``share rho`` (with ``center=True``), the diagonal's per-entry
    ``alpha (1 - share) rho / d`` and the first
    round's ``beta`` and ``1 - beta`` shares of ``(1 - alpha)(1 - share) rho / T`` (annealing only
    raises later rounds' budgets); ``delta`` is the largest entry sensitivity the run can use
    (the centred bound's when ``center=True``). Each must give a finite, normal noise scale, and
    the precision of the whole budget, ``2 rho / delta**2``, at most :data:`MAX_PRECISION` (the
    max-entropy reconstruction multiplies precisions by squared entries, which overflows past it).
    """
    owner = current_owner()
    rho_p = rho - share * rho
    per = (rho_p - alpha * rho_p) / T
    pieces = {"alpha * rho / d": alpha * rho_p / d, "rho_sel": beta * per, "rho_meas": (1.0 - beta) * per}
    if share:
        pieces["mean_share * rho"] = share * rho
    try:
        for piece, value in pieces.items():
            if not (math.isfinite(value) and value >= v.TINY):
                raise NoiseawareValueError(f"{piece} = {value!r} is not a normal float64 > 0")
        precision = 2.0 * rho / delta**2
        if not precision <= MAX_PRECISION:
            raise NoiseawareValueError(
                f"the precision 2 rho / sensitivity**2 = {precision:.3g} is above {MAX_PRECISION:.0e} (noise "
                "negligible: the release would be the confidential statistic)"
            )
        GaussianMechanism(sigma=delta / math.sqrt(2.0 * pieces["alpha * rho / d"]), sensitivity=delta)
        GaussianMechanism(sigma=delta / math.sqrt(2.0 * pieces["rho_meas"]), sensitivity=delta)
        ExponentialMechanism(epsilon=math.sqrt(8.0 * pieces["rho_sel"]), sensitivity=delta)
    except (NoiseawareValueError, ZeroDivisionError, OverflowError) as exc:
        raise NoiseawareValueError(
            f"{owner}: rho must leave every round a usable budget; got rho={rho!r} (alpha={alpha!r}, beta={beta!r}, "
            f"T={T}, d={d}, entry sensitivity {delta!r}): {exc}. Give a larger rho or a smaller T."
        ) from None


def _round_release(ctx: Context, t: int, step: str, value: Any, mech: Any, label: tuple[str, str], n: int) -> Release:
    return ctx.release(
        "pace_ggm_round", np.atleast_1d(value), (label,), mech, "joint", mech.guarantee(), n, {"round": t, "step": step}
    )


_PACE_OWNER = "privatize(statistic='pace_ggm')"
_PACE_OPTIONS = {"bound", "clip", "columns", "alpha", "beta", "T", "center", "mean_share"}


@dataclass(frozen=True)
class _PacePlan:
    """The checked data and options of one ``pace_ggm`` run, and the budget split that follows from them.

    ``x`` is the data as checked (clipped when ``clip=True``), ``bound`` its public bound :math:`B`,
    ``share`` the mean's share of ``rho`` (0 without centring).
    """

    x: np.ndarray
    names: list[str]
    bound: float
    clipped: bool
    rho: float
    alpha: float
    beta: float
    T: int
    center: bool
    share: float

    @property
    def n(self) -> int:
        """Records."""
        return int(self.x.shape[0])

    @property
    def d(self) -> int:
        """Columns."""
        return int(self.x.shape[1])

    @property
    def rho_mean(self) -> float:
        """The mean's budget ``share rho``."""
        return self.share * self.rho

    @property
    def rho_p(self) -> float:
        """What Algorithm 1 gets: ``rho - rho_mean``."""
        return self.rho - self.rho_mean

    @property
    def rho_diag(self) -> float:
        """The diagonal's budget ``alpha rho_p`` (Algorithm 2)."""
        return self.alpha * self.rho_p

    @property
    def rho_entry(self) -> float:
        """Each diagonal entry's budget: the ``d`` guarantees add up to at most ``rho_diag`` in float64."""
        return even_share(self.rho_diag, self.d)


@owned(_PACE_OWNER)
def _pace_plan(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> _PacePlan:
    """The options and the data, checked in the order their errors are reported."""
    no_extra(options, _PACE_OPTIONS)
    v.choice("mechanism", mechanism or "gaussian", ("gaussian",))
    rho = ctx.require("rho")
    alpha = v.open_unit("alpha", options.get("alpha", 0.3))
    beta = v.open_unit("beta", options.get("beta", 0.5))
    center = options.get("center", False)
    if not isinstance(center, bool):
        raise NoiseawareTypeError(v.message("center", "must be True or False", center))
    if not center and "mean_share" in options:
        v.refuse("mean_share", "is only used with center=True", options["mean_share"])
    share = v.open_unit("mean_share", options.get("mean_share", 0.1)) if center else 0.0
    x, names, b, clipped = _common_options(data, options)
    d = x.shape[1]
    t_opt = options.get("T")
    T = d * (d - 1) if t_opt is None else v.integer("T", t_opt, minimum=1)
    return _PacePlan(x, names, b, clipped, rho, alpha, beta, T, center, share)


@owned(_PACE_OWNER)
def _pace_mechanisms(plan: _PacePlan) -> tuple[GaussianMechanism | None, GaussianMechanism, float]:
    """The mean's mechanism (None without centring), the diagonal's, the entry sensitivity; checked before any charge.

    The diagonal's mechanism and the sensitivity :math:`2B^2/n` are those of the raw bound; with
    centring, :func:`_pace_ggm` replaces them by the centred bound's once the mean is released.
    """
    owner = _PACE_OWNER
    n, d, b = plan.n, plan.d, plan.bound
    worst = pace_ggm_sensitivity(n, 2.0 * b if plan.center else b)
    _check_pace_budgets(plan.rho, plan.alpha, plan.beta, plan.T, d, plan.share, worst)
    mean_mech = GaussianMechanism.from_rho(plan.rho_mean, mean_sensitivity(n, d, b)) if plan.center else None
    delta = pace_ggm_sensitivity(n, b)
    try:
        diag_mech = GaussianMechanism.from_rho(plan.rho_entry, delta)
    except NoiseawareValueError as exc:
        raise NoiseawareValueError(
            f"{owner}: rho={plan.rho!r}, alpha={plan.alpha!r} and d={d} give a diagonal noise the Gaussian mechanism "
            f"cannot use: {exc}"
        ) from exc
    return mean_mech, diag_mech, delta


def _release_mean(
    ctx: Context, plan: _PacePlan, mean_mech: GaussianMechanism
) -> tuple[np.ndarray, float, Release, dict[str, Any]]:
    r"""Budgeted centring: the released mean ``z``, its clip ``c`` to ``[-B, B]``; the data ``x - c``.

    Returns the centred data, its bound :math:`B + \max|c| \le 2B` (the bound every later
    sensitivity uses), the mean's release (``rho_mean``) and the release's centring metadata.
    """
    z_mean = mean_mech.release(plan.x.mean(axis=0), rng=ctx.rng)
    c = np.clip(z_mean, -plan.bound, plan.bound)
    bound = plan.bound + float(np.max(np.abs(c)))
    labels = [(nm,) for nm in plan.names]
    g = mean_mech.guarantee()
    comp = ctx.release("pace_ggm_mean", z_mean, labels, mean_mech, "joint", g, plan.n, {"step": "mean"})
    meta = {
        "center": True,
        "mean_share": plan.share,
        "rho_mean": plan.rho_mean,
        "data_bound": plan.bound,
        "mean": c.tolist(),
    }
    return plan.x - c, bound, comp, meta


class _Combined:
    r"""The measured entries, combined by precision (Prop. 4.2), and their max-entropy reconstruction (Algorithm 4).

    Starts from the diagonal's measurements ``diagonal`` (each of precision ``precision``);
    ``est`` is the current reconstruction :math:`\hat\Sigma`.
    """

    def __init__(self, d: int, diagonal: np.ndarray, precision: float) -> None:
        self.solver = BlockSolver(d)
        self.y: dict[tuple[int, int], float] = {}
        self.lam: dict[tuple[int, int], float] = {}
        for j in range(d):
            self.y[(j, j)], self.lam[(j, j)] = float(diagonal[j]), precision
            self.solver.set_entry(j, j, self.y[(j, j)], precision)
        self.est = self.solver.estimate()

    def add(self, j: int, k: int, z: float, prec: float) -> np.ndarray:
        """Combine measurement ``z`` (precision ``prec``) of entry ``(j, k)`` with earlier ones; the new estimate."""
        old_lam = self.lam.get((j, k), 0.0)
        self.y[(j, k)] = (old_lam * self.y.get((j, k), 0.0) + prec * z) / (old_lam + prec)  # Prop. 4.2
        self.lam[(j, k)] = old_lam + prec
        self.solver.set_entry(j, k, self.y[(j, k)], self.lam[(j, k)])
        self.solver.solve_touching(j, k)
        self.est = self.solver.estimate()
        return self.est


def _adaptive_rounds(
    ctx: Context, plan: _PacePlan, s: np.ndarray, *, delta: float, spent: float, after: list[float], combined: _Combined
) -> tuple[list[dict[str, Any]], list[Release]]:
    r"""Algorithm 1's rounds with Algorithm 3's annealing, until ``rho_p`` is spent: select, measure, reconstruct.

    ``s`` is :math:`\Sigma(X)`, ``delta`` the entry sensitivity; ``spent`` is the guarantee composed
    before the rounds (the diagonal's) and ``after`` those composed after them (the mean's, if any), so
    that the last round's measurement keeps the composed total within ``rho`` in float64. Returns
    each round's record (``metadata.rounds``) and its two releases (selection, measurement).
    """
    ent = lower_entries(plan.d)
    rows = np.array([j for j, _ in ent])
    cols = np.array([k for _, k in ent])
    beta, rho_p = plan.beta, plan.rho_p
    used = plan.rho_diag
    per = (rho_p - used) / plan.T
    rs, rm = beta * per, (1.0 - beta) * per
    rounds: list[dict[str, Any]] = []
    comps: list[Release] = []
    final = False
    t = 0
    while not final:
        t += 1
        left = rho_p - used
        if left < 2.0 * (rs + rm):  # Algorithm 3 lines 4-6: spend what is left now
            rs, rm, final = beta * left, (1.0 - beta) * left, True
        sel = ExponentialMechanism.from_rho(rs, sensitivity=delta)
        sel_rho = float(sel.guarantee().rho)  # type: ignore[arg-type]
        if final:  # what is left, rounded so that the composed guarantee stays within rho in float64
            rm = fit_sum(plan.rho, [spent, sel_rho], rm, after)
        est = combined.est
        r = int(sel.release(np.abs(s[rows, cols] - est[rows, cols]), rng=ctx.rng))
        j, k = ent[r]
        meas = GaussianMechanism.from_rho(rm, delta)
        spent = spent + sel_rho + meas.rho
        z = float(meas.release(np.array([s[j, k]]), rng=ctx.rng)[0])
        new = combined.add(j, k, z, 1.0 / meas.sigma**2)
        used = rho_p if final else used + rs + rm
        annealed = bool(abs(new[j, k] - est[j, k]) <= math.sqrt(2.0 / math.pi) * meas.sigma)
        rounds.append(
            {
                "round": t,
                "entry": [j, k],
                "index": r,
                "measurement": z,
                "sigma": meas.sigma,
                "epsilon": sel.epsilon,
                "rho_sel": rs,
                "rho_meas": rm,
                "annealed": annealed,
                "final": final,
            }
        )
        label = (plan.names[j], plan.names[k])
        comps.append(_round_release(ctx, t, "select", np.array([r], dtype=np.int64), sel, label, plan.n))
        comps.append(_round_release(ctx, t, "measure", np.array([z]), meas, label, plan.n))
        if annealed and not final:  # Algorithm 3 lines 1-3
            rs, rm = 2.0 * rs, 4.0 * rm
    return rounds, comps


def _pace_release(
    ctx: Context,
    plan: _PacePlan,
    z0: np.ndarray,
    diag_mech: GaussianMechanism,
    *,
    bound: float,
    rounds: list[dict[str, Any]],
    components: list[Release],
    centre_meta: dict[str, Any],
) -> Release:
    """The ``pace_ggm`` release: the diagonal's measurements ``z0`` as values, the rounds (and mean) as components."""
    meta = {
        "columns": plan.names,
        "d": plan.d,
        "bound": bound,
        "clip": plan.clipped,
        "alpha": plan.alpha,
        "beta": plan.beta,
        "T": plan.T,
        "rho": plan.rho,
        "rho_diag": plan.rho_diag,
        "entry_order": ENTRY_ORDER,
        "centering": _CENTERED if plan.center else _CENTERING,
        "solver": "; ".join(f"{key}={val}" for key, val in SOLVER_SETTINGS.items()),
        "rounds": rounds,
        **centre_meta,
    }
    guarantee = Guarantee(rho=diag_mech.rho * plan.d)
    for comp in components:
        guarantee = guarantee.compose(comp.guarantee)
    labels = [(nm, nm) for nm in plan.names]
    return ctx.release("pace_ggm", z0, labels, diag_mech, "sequential", guarantee, plan.n, meta, components=components)


@statistic("pace_ggm")
def _pace_ggm(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """Ferrando et al. (2026) Algorithm 1 (with Algorithms 2-4); see the module docstring.

    The steps: the options and data (:func:`_pace_plan`); the mechanisms, refused before any charge
    (:func:`_pace_mechanisms`); one charge of the whole ``rho`` (fully adaptive composition: the total
    is fixed in advance); the mean, when centred (:func:`_release_mean`); the diagonal (Algorithm 2);
    the rounds (:func:`_adaptive_rounds`); the release (:func:`_pace_release`).
    """
    plan = _pace_plan(data, ctx, mechanism, options)
    mean_mech, diag_mech, delta = _pace_mechanisms(plan)
    ctx.charge(Guarantee(rho=plan.rho), label="pace_ggm")  # before any noise
    x, bound = plan.x, plan.bound
    mean_comp: list[Release] = []
    centre_meta: dict[str, Any] = {}
    if mean_mech is not None:
        x, bound, comp, centre_meta = _release_mean(ctx, plan, mean_mech)
        mean_comp = [comp]
        delta = pace_ggm_sensitivity(plan.n, bound)
        diag_mech = GaussianMechanism.from_rho(plan.rho_entry, delta)
    s = x.T @ x / plan.n
    z0 = diag_mech.release(np.diag(s).copy(), rng=ctx.rng)
    combined = _Combined(plan.d, z0, 1.0 / diag_mech.sigma**2)
    after = [] if mean_mech is None else [mean_mech.rho]
    spent = diag_mech.rho * plan.d  # the guarantee composed so far, in the release's order (diagonal, rounds, mean)
    rounds, comps = _adaptive_rounds(ctx, plan, s, delta=delta, spent=spent, after=after, combined=combined)
    comps.extend(mean_comp)  # the mean release, if any, is the last component
    return _pace_release(
        ctx, plan, z0, diag_mech, bound=bound, rounds=rounds, components=comps, centre_meta=centre_meta
    )
