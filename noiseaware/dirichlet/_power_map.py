r"""The exponent of the power map of :func:`noiseaware.dirichlet.dpmcmc`'s joint move, chosen by Fisher information.

The surrogate joint move of ``dpmcmc`` (:func:`noiseaware.dirichlet._dpmcmc._joint_move_surrogate`)
writes each Gamma variate :math:`g\sim\text{Gamma}(\alpha)` of a record by its standardized power

.. math:: z = \frac{g^{p}-m(\alpha)}{s(\alpha)},\qquad
          m=\frac{\Gamma(\alpha+p)}{\Gamma(\alpha)},\quad
          s^2=\frac{\Gamma(\alpha+2p)}{\Gamma(\alpha)}-m^2,

holds the centred :math:`z` fixed and moves :math:`\alpha`. Were :math:`g\mapsto z` an exact
push-forward of :math:`\text{Gamma}(\alpha)` to one fixed law for every :math:`\alpha` (a quantile
map), the records' density would not depend on :math:`\alpha` at fixed :math:`z` and the move
could carry :math:`\alpha` across its whole posterior in one step. The power map is not exact: the
law of :math:`z`,

.. math:: \log q_\alpha(z) = (\alpha-p)\,y - e^{y} - \log\Gamma(\alpha) + \log s - \log p,
          \qquad y=\log g=\tfrac1p\log\bigl(m+s z\bigr),

changes with :math:`\alpha`, and ``n`` records with fixed :math:`z` then pin :math:`\lambda=\log\alpha`
to within about :math:`\{n\,I_p(\alpha)\}^{-1/2}`, with :math:`I_p(\alpha)` the Fisher information
about :math:`\lambda` in :math:`q_\alpha` (:func:`map_information`). Where that is narrower than
the posterior (small shapes, large ``n``: about 0.075 against a posterior sd of 0.1 along the
scale of :math:`\alpha` at ``n = 5000``, ``d = 6``, epsilon 0.5 with the cube root), the move
barely moves. The exponent that minimizes :math:`I_p(\alpha)` (:func:`optimal_power`) is far from
Wilson-Hilferty's 1/3 at small and moderate shapes: 0.165 at :math:`\alpha\approx1` (information
14x smaller than the cube root's), 0.20 at 1.5 (7x), 0.23 at 2 (4.5x), and about
:math:`1/3-0.18/\alpha` for large shapes. ``dpmcmc`` takes :math:`p` from the table
:data:`POWER_TABLE` of :func:`optimal_power` on a grid of shapes (:func:`power`, log-log
interpolation); any :math:`p` that depends on the move's fixed reference shape only keeps the move
exact, so the table sets the speed, not the target.

Regenerate the table with ``python -m noiseaware.dirichlet._power_map`` (tests recompute knots).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special

from .._core._backend import Backend, get_backend

_NP = get_backend("numpy")

_TABLE_TEXT = """
0.02 0.00040632
0.0271871 0.000753276
0.036957 0.00139482
0.0502377 0.00257215
0.068291 0.00469277
0.0928318 0.00836172
0.126191 0.0142791
0.171539 0.0230422
0.233183 0.0351935
0.316979 0.0514185
0.430887 0.072467
0.585729 0.0988233
0.796214 0.13024
1.08234 0.165187
1.47128 0.20061
2 0.232821
2.71871 0.259301
3.6957 0.279552
5.02377 0.29443
6.8291 0.305177
9.28318 0.312907
12.6191 0.318474
17.1539 0.322497
23.3183 0.325415
31.6979 0.327537
43.0887 0.329086
"""

_NODES = 20_001


def power_moments(alpha: Any, p: Any, backend: Backend = _NP) -> tuple[Any, Any]:
    r"""Mean and sd of :math:`G^{p}`, :math:`G\sim\text{Gamma}(\alpha)`, on any backend.

    :math:`m=\Gamma(\alpha+p)/\Gamma(\alpha)`, :math:`s=\{\Gamma(\alpha+2p)/\Gamma(\alpha)-m^2\}^{1/2}`
    (``dpmcmc``'s joint move calls it with the JAX backend).
    """
    xp = backend.xp
    g0 = backend.gammaln(alpha)
    m = xp.exp(backend.gammaln(alpha + p) - g0)
    var = xp.exp(backend.gammaln(alpha + 2.0 * p) - g0) - m * m
    return m, xp.sqrt(xp.maximum(var, 1e-300))


def _moments(alpha: float, p: float) -> tuple[float, float, float, float]:
    """m, s of G^p (G ~ Gamma(alpha)) and their derivatives in alpha."""
    m, s = (float(x) for x in power_moments(alpha, p))
    e2 = s * s + m * m
    dm = m * (special.digamma(alpha + p) - special.digamma(alpha))
    de2 = e2 * (special.digamma(alpha + 2 * p) - special.digamma(alpha))
    return m, s, dm, (de2 - 2 * m * dm) / (2 * s)


def map_score(alpha: float, p: float, y: np.ndarray) -> np.ndarray:
    r"""Score :math:`\partial_\lambda\log q_\alpha(z)` at fixed :math:`z`, at the records :math:`y=\log g`.

    With :math:`u=e^{py}=m+sz` and :math:`\partial_\lambda u=\alpha(m'+s'z)`,
    :math:`\partial_\lambda y=\partial_\lambda u/(pu)` and

    .. math:: \partial_\lambda\log q = \alpha y + (\alpha-p-e^{y})\,\partial_\lambda y
              - \alpha\psi(\alpha) + \alpha s'/s.
    """
    m, s, dm, ds = _moments(alpha, p)
    u = np.exp(p * y)
    z = (u - m) / s
    y_l = alpha * (dm + ds * z) / (p * u)
    return alpha * y + (alpha - p - np.exp(y)) * y_l - alpha * special.digamma(alpha) + alpha * ds / s


def map_information(alpha: float, p: float, nodes: int = _NODES) -> float:
    r"""Fisher information :math:`I_p(\alpha)=E[(\partial_\lambda\log q_\alpha(z))^2]` of one element.

    The expectation over :math:`y=\log g`, :math:`g\sim\text{Gamma}(\alpha)` (density
    :math:`e^{\alpha y-e^y}/\Gamma(\alpha)`), by the trapezoid rule on ``nodes`` points from where
    that density falls below :math:`e^{-70}` on the left (the tail :math:`e^{\alpha y}`) to
    :math:`\log(\alpha+40\sqrt\alpha+50)` on the right.
    """
    lo = min(special.digamma(alpha) - 12.0 * math.sqrt(special.polygamma(1, alpha)),
             (-70.0 + special.gammaln(alpha + 1.0)) / alpha)
    y = np.linspace(lo, math.log(alpha + 40.0 * math.sqrt(alpha) + 50.0), nodes)
    dens = np.exp(alpha * y - np.exp(y) - special.gammaln(alpha))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # p far too small: inf, never the minimum
        return float(np.trapezoid(map_score(alpha, p, y) ** 2 * dens, y))


def optimal_power(alpha: float, nodes: int = _NODES) -> float:
    """The exponent ``p`` in [1e-5, 0.34] that minimizes :func:`map_information` at ``alpha``."""
    grid = np.geomspace(1e-5, 0.34, 60)
    info = np.array([map_information(alpha, p, nodes) for p in grid])
    k = int(np.nanargmin(info))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    res = optimize.minimize_scalar(
        lambda p: map_information(alpha, p, nodes), bounds=(lo, hi), method="bounded", options={"xatol": 1e-7}
    )
    return float(res.x)


def table_shapes() -> np.ndarray:
    """The shapes of :data:`POWER_TABLE`'s knots."""
    return np.exp(np.linspace(math.log(0.02), math.log(200.0), 31))[:26]


def power(alpha: Any, backend: Backend = _NP) -> Any:
    r"""The exponent :math:`p(\alpha)` of the power map: :data:`POWER_TABLE` interpolated in log-log.

    Above the last knot :math:`1/3-C/\alpha` (the asymptote of :func:`optimal_power`, with
    :math:`C` matching the last knot); below the first knot, the first knot's exponent. On any
    backend with ``interp`` (NumPy, JAX; ``dpmcmc`` calls it with JAX).
    """
    xp = backend.xp
    a = backend.asarray(alpha)
    inside = xp.exp(xp.interp(xp.log(a), _LOG_KNOTS[0], _LOG_KNOTS[1]))
    return backend.where(a > POWER_TABLE[-1][0], 1.0 / 3.0 - _TAIL_C / a, inside)


def _parse(text: str) -> tuple[tuple[float, float], ...]:
    rows = [line.split() for line in text.strip().splitlines() if line.strip()]
    return tuple((float(r[0]), float(r[1])) for r in rows)


def _tail_c(table: tuple[tuple[float, float], ...]) -> float:
    a, p = table[-1]
    return (1.0 / 3.0 - p) * a


#: ``(alpha, p)`` knots: :func:`optimal_power` at 26 shapes log-spaced over [0.02, 43.1]
#: (``python -m noiseaware.dirichlet._power_map``). Above the last knot :func:`power` uses
#: :math:`1/3-C/\alpha` with :math:`C` continuous there; below the first, the first knot's p.
POWER_TABLE: tuple[tuple[float, float], ...] = _parse(_TABLE_TEXT)
_TAIL_C = _tail_c(POWER_TABLE)
_LOG_KNOTS = np.log(np.asarray(POWER_TABLE)).T  # (log alpha, log p) of the knots


def _main() -> None:
    """Print the table (paste into ``_TABLE_TEXT``) with each knot's information against the cube root's."""
    for a in table_shapes():
        p = optimal_power(float(a))
        cube = min(max(float(a), 0.03), 1.0) / 3.0
        print(f"{a:.6g} {p:.6g}    # I = {map_information(a, p):.3g} (previous rule: {map_information(a, cube):.3g})")


if __name__ == "__main__":
    _main()
