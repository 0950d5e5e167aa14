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
from typing import Any

import numpy as np

from .. import _validation as v
from .._core._maxent import SOLVER_SETTINGS, BlockSolver
from .._statistics import ENTRY_ORDER, mean_sensitivity, pace_ggm_sensitivity, second_moment_sensitivity
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


def bounded_data(owner: str, x: np.ndarray, bound: Any, clip: Any) -> tuple[np.ndarray, float, bool]:
    """Check ``|x| <= bound`` (or clip to it when ``clip=True``); return data, bound, clip flag.

    Raises
    ------
    NoiseawareValueError
        ``bound`` not a finite number > 0, or data outside ``[-bound, bound]`` without ``clip``.
    NoiseawareTypeError
        ``clip`` not a bool.
    """
    if bound is None:
        raise NoiseawareValueError(
            f"{owner}: bound must be given (the public coordinate-wise bound B with |x_j| <= B); got bound=None."
        )
    b = v.positive(owner, "bound", bound)
    if not isinstance(clip, bool):
        raise NoiseawareTypeError(v.message(owner, "clip", "must be True or False", clip))
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


def _check_entries(owner: str, d: int) -> None:
    """Refuse more than :data:`MAX_ENTRIES` unique entries, naming ``d`` and the limit."""
    m = d * (d + 1) // 2
    if m > MAX_ENTRIES:
        d_max = (math.isqrt(8 * MAX_ENTRIES + 1) - 1) // 2
        raise NoiseawareValueError(
            f"{owner}: data must have at most {d_max} columns (d(d+1)/2 <= MAX_ENTRIES = {MAX_ENTRIES} unique "
            f"entries of X^T X / n); got d={d} columns ({m} entries). Release fewer columns at a time."
        )


def _common_options(owner: str, data: Any, options: dict[str, Any]) -> tuple[np.ndarray, list[str], float, bool]:
    x, names = as_matrix(owner, data, options.get("columns"))
    _check_entries(owner, x.shape[1])
    x, b, clipped = bounded_data(owner, x, options.get("bound"), options.get("clip", False))
    return x, names, b, clipped


@statistic("second_moment")
def _second_moment(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """SSP: every unique entry of ``X^T X / n`` with Gaussian noise, L2 sensitivity ``d B^2 / n``."""
    owner = "privatize(statistic='second_moment')"
    no_extra(owner, options, {"bound", "clip", "columns"})
    v.choice(owner, "mechanism", mechanism or "gaussian", ("gaussian",))
    rho = ctx.require(owner, "rho")
    x, names, b, clipped = _common_options(owner, data, options)
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
    owner: str, rho: float, alpha: float, beta: float, T: int, d: int, share: float, delta: float
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


@statistic("pace_ggm")
def _pace_ggm(data: Any, ctx: Context, mechanism: str | None, options: dict[str, Any]) -> Release:
    """Ferrando et al. (2026) Algorithm 1 (with Algorithms 2-4); see the module docstring."""
    owner = "privatize(statistic='pace_ggm')"
    no_extra(owner, options, {"bound", "clip", "columns", "alpha", "beta", "T", "center", "mean_share"})
    v.choice(owner, "mechanism", mechanism or "gaussian", ("gaussian",))
    rho = ctx.require(owner, "rho")
    alpha = v.open_unit(owner, "alpha", options.get("alpha", 0.3))
    beta = v.open_unit(owner, "beta", options.get("beta", 0.5))
    center = options.get("center", False)
    if not isinstance(center, bool):
        raise NoiseawareTypeError(v.message(owner, "center", "must be True or False", center))
    if not center and "mean_share" in options:
        v.fail(owner, "mean_share", "is only used with center=True", options["mean_share"])
    share = v.open_unit(owner, "mean_share", options.get("mean_share", 0.1)) if center else 0.0
    x, names, b, clipped = _common_options(owner, data, options)
    n, d = x.shape
    t_opt = options.get("T")
    T = d * (d - 1) if t_opt is None else v.integer(owner, "T", t_opt, minimum=1)
    rho_mean = share * rho
    rho_p = rho - rho_mean  # what Algorithm 1 gets
    mean_mech = None
    data_bound = b
    _check_pace_budgets(owner, rho, alpha, beta, T, d, share, pace_ggm_sensitivity(n, 2.0 * b if center else b))
    if center:
        mean_mech = GaussianMechanism.from_rho(rho_mean, mean_sensitivity(n, d, b))
    delta = pace_ggm_sensitivity(n, b)  # replaced by the centred bound's after the mean release
    s = x.T @ x / n
    ent = lower_entries(d)
    rows = np.array([j for j, _ in ent])
    cols = np.array([k for _, k in ent])
    rho_diag = alpha * rho_p
    rho_entry = even_share(rho_diag, d)  # the d diagonal guarantees add up to at most rho_diag in float64
    try:
        diag_mech = GaussianMechanism.from_rho(rho_entry, delta)
    except NoiseawareValueError as exc:
        raise NoiseawareValueError(
            f"{owner}: rho={rho!r}, alpha={alpha!r} and d={d} give a diagonal noise the Gaussian mechanism cannot "
            f"use: {exc}"
        ) from exc
    # Fully adaptive composition: the total is fixed in advance and charged once, before any noise.
    ctx.charge(Guarantee(rho=rho), label="pace_ggm")
    centre_meta: dict[str, Any] = {}
    mean_comp: list[Release] = []
    if mean_mech is not None:
        # Budgeted centring: release the mean (rho_mean), centre with its clip to [-B, B]; the centred
        # records satisfy |x_j - c_j| <= B + max|c| <= 2B, the bound every later sensitivity uses.
        z_mean = mean_mech.release(x.mean(axis=0), rng=ctx.rng)
        c = np.clip(z_mean, -b, b)
        b = data_bound + float(np.max(np.abs(c)))
        x = x - c
        s = x.T @ x / n
        delta = pace_ggm_sensitivity(n, b)
        diag_mech = GaussianMechanism.from_rho(rho_entry, delta)
        mean_comp.append(
            ctx.release(
                "pace_ggm_mean",
                z_mean,
                [(nm,) for nm in names],
                mean_mech,
                "joint",
                mean_mech.guarantee(),
                n,
                {"step": "mean"},
            )
        )
        centre_meta = {
            "center": True,
            "mean_share": share,
            "rho_mean": rho_mean,
            "data_bound": data_bound,
            "mean": c.tolist(),
        }
    z0 = diag_mech.release(np.diag(s).copy(), rng=ctx.rng)
    lam_diag = 1.0 / diag_mech.sigma**2
    y: dict[tuple[int, int], float] = {}
    lam: dict[tuple[int, int], float] = {}
    solver = BlockSolver(d)
    for j in range(d):
        y[(j, j)], lam[(j, j)] = float(z0[j]), lam_diag
        solver.set_entry(j, j, y[(j, j)], lam_diag)
    est = solver.estimate()
    used = rho_diag
    # the guarantee composed so far, in the order of the release's guarantee (diagonal, rounds, mean)
    spent = diag_mech.rho * d
    g_mean = [] if mean_mech is None else [mean_mech.rho]
    per = (rho_p - used) / T
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
            rm = fit_sum(rho, [spent, sel_rho], rm, g_mean)
        r = int(sel.release(np.abs(s[rows, cols] - est[rows, cols]), rng=ctx.rng))
        j, k = ent[r]
        meas = GaussianMechanism.from_rho(rm, delta)
        spent = spent + sel_rho + meas.rho
        z = float(meas.release(np.array([s[j, k]]), rng=ctx.rng)[0])
        prec = 1.0 / meas.sigma**2
        old_lam = lam.get((j, k), 0.0)
        y[(j, k)] = (old_lam * y.get((j, k), 0.0) + prec * z) / (old_lam + prec)  # Prop. 4.2
        lam[(j, k)] = old_lam + prec
        solver.set_entry(j, k, y[(j, k)], lam[(j, k)])
        solver.solve_touching(j, k)
        new = solver.estimate()
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
        label = (names[j], names[k])
        comps.append(_round_release(ctx, t, "select", np.array([r], dtype=np.int64), sel, label, n))
        comps.append(_round_release(ctx, t, "measure", np.array([z]), meas, label, n))
        est = new
        if annealed and not final:  # Algorithm 3 lines 1-3
            rs, rm = 2.0 * rs, 4.0 * rm
    meta = {
        "columns": names,
        "d": d,
        "bound": b,
        "clip": clipped,
        "alpha": alpha,
        "beta": beta,
        "T": T,
        "rho": rho,
        "rho_diag": rho_diag,
        "entry_order": ENTRY_ORDER,
        "centering": _CENTERED if center else _CENTERING,
        "solver": "; ".join(f"{key}={val}" for key, val in SOLVER_SETTINGS.items()),
        "rounds": rounds,
        **centre_meta,
    }
    comps.extend(mean_comp)  # the mean release, if any, is the last component
    guarantee = Guarantee(rho=diag_mech.rho * d)
    for comp in comps:
        guarantee = guarantee.compose(comp.guarantee)
    labels = [(nm, nm) for nm in names]
    return ctx.release("pace_ggm", z0, labels, diag_mech, "sequential", guarantee, n, meta, comps)
