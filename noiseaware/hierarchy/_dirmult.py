r"""The Dirichlet-multinomial hierarchy of the integer route: gamma tract rates integrated out exactly.

The prior ``prior="dirichlet_multinomial"`` of :func:`noiseaware.hierarchy.fit` (integer route). Within
root unit :math:`s` (exact total :math:`T_s`), tract :math:`t` (a leaf) of county :math:`k(t)`, cell
:math:`c`, the leaf cell counts are Poisson given rates :math:`\lambda_{tc} = \lambda_t \pi_{tc}`,
conditioned on their sum :math:`T_s`, with

.. math:: \lambda_t \sim \mathrm{Gamma}(a_t, \beta_s), \quad a_t = \nu\, e^{\eta_{k(t)}}, \qquad
          \pi_t \sim \mathrm{Dirichlet}(\kappa\, p_s),

a rate :math:`\beta_s` shared within the root unit (it cancels). Given :math:`T_s` the counts are
multinomial in :math:`\lambda / \sum \lambda`; the gamma and Dirichlet draws integrate out in closed
form (a gamma vector with a common rate, normalised, is Dirichlet; Mosimann (1962), *On the compound
multinomial distribution*), so the tract populations :math:`N_t = \sum_c n_{tc}` and the cells are
nested Dirichlet-multinomials:

.. math:: (N_t)_{t \in s} \mid T_s \sim \mathrm{DirMult}(T_s, (a_t)_{t \in s}), \qquad
          n_t \mid N_t \sim \mathrm{DirMult}(N_t, \kappa\, p_s),

.. math:: \log p(n_s \mid T_s, \theta) = \log\Gamma(A_s) - \log\Gamma(T_s + A_s) + \log T_s!
          + \sum_{t \in s} \big[\log\Gamma(N_t + a_t) - \log\Gamma(a_t) + \log\Gamma(\kappa)
          - \log\Gamma(N_t + \kappa)\big]
          + \sum_{t \in s, c} \big[\log\Gamma(n_{tc} + \kappa p_{sc}) - \log\Gamma(\kappa p_{sc})
          - \log n_{tc}!\big],

:math:`A_s = \sum_{t \in s} a_t`. :math:`\nu` sets how much tract populations vary within a county
(coefficient of variation about :math:`1/\sqrt{a_t}`), :math:`\eta_k` the county effects (centred within
the root unit: a common scale of the :math:`a_t` is :math:`\nu`'s), :math:`p_s` the cell profile of the
root unit and :math:`\kappa` how closely tracts follow it. Priors: :math:`\eta_k \sim N(0, \sigma_k^2)`,
:math:`\sigma_k \sim \mathrm{HalfNormal}(1)`, :math:`\nu, \kappa \sim \mathrm{LogNormal}(1, 1.5^2)`,
:math:`p_s \sim \mathrm{Dirichlet}(1)`.

The continuous parameters are counties + cells x root units + 3 (not one per leaf cell), and a count
move's prior ratio is a ratio of gamma functions of the (at most two) leaf cells and tract populations
that it changes, exact (:func:`~._integer.sample_integer`). ``"uniform"`` is the case
:math:`a_t = \kappa = C`, :math:`p_{sc} = 1/C` (Dirichlet-multinomial with every leaf cell's
:math:`\alpha = 1`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "CENTRED_FROM", "CONCENTRATION_PRIOR", "dirmult_line", "dirmult_model", "dirmult_terms", "lgamma_positive",
    "nested_dirmult_logpmf",
]

#: ``(loc, scale)`` of the log-normal priors of the concentrations :math:`\nu` and :math:`\kappa`.
CONCENTRATION_PRIOR = (1.0, 1.5)
#: Mean leaves per county from which the county effects are sampled centred (:func:`dirmult_model`).
CENTRED_FROM = 16
#: Where :func:`lgamma_positive` switches from the shifted argument to the Stirling series itself.
_STIRLING_FROM = 16
#: The Stirling series' coefficients :math:`B_{2j} / (2j (2j - 1))`, :math:`j = 1..5`.
_STIRLING = (1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0)


def _digamma_positive(x: Any) -> Any:
    r""":math:`\psi(x)` for :math:`x > 0` by the same shift and series as :func:`lgamma_positive` (its derivative)."""
    import jax.numpy as jnp

    small = x < _STIRLING_FROM
    y = jnp.where(small, x + _STIRLING_FROM, x)
    shift = jnp.zeros_like(x)
    for i in range(_STIRLING_FROM):
        shift = shift + 1.0 / (x + i)
    r2 = 1.0 / (y * y)
    series: Any = _STIRLING[-1] * (2 * len(_STIRLING) - 1)
    for j in range(len(_STIRLING) - 2, -1, -1):
        series = _STIRLING[j] * (2 * j + 1) + r2 * series
    out = jnp.log(y) - 0.5 / y - r2 * series
    return jnp.where(small, out - shift, out)


def lgamma_positive(x: Any) -> Any:
    r""":math:`\log\Gamma(x)` for :math:`x > 0`, float64, in JAX: the sweep's and the NUTS step's (faster than XLA's).

    The Stirling series :math:`(y - \tfrac12)\log y - y + \tfrac12\log 2\pi + \sum_{j=1}^{5}
    \frac{B_{2j}}{2j(2j-1) y^{2j-1}}` at :math:`y = x` for :math:`x \ge 16`, else at :math:`y = x + 16`
    less :math:`\log \prod_{i=0}^{15} (x + i)`. The series' error is below its first omitted term,
    :math:`691 / (360360\, y^{11}) < 10^{-16}` at :math:`y \ge 16` (Abramowitz & Stegun (1964), 6.1.41-42),
    so the result is within a few units of float64 rounding of :math:`\log\Gamma(x)` (tested against SciPy
    to :math:`10^{-13}` relative). Its derivative is the digamma function by the same shift and series
    (a custom JVP); 0 and negatives are outside its domain.
    """
    return _lgamma_jvp()(x)


def _lgamma_value(x: Any) -> Any:
    """:func:`lgamma_positive`'s value."""
    import jax.numpy as jnp

    small = x < _STIRLING_FROM
    y = jnp.where(small, x + _STIRLING_FROM, x)
    prod = jnp.ones_like(x)
    for i in range(_STIRLING_FROM):
        prod = prod * (x + i)
    r = 1.0 / y
    r2 = r * r
    series: Any = _STIRLING[-1]
    for c in reversed(_STIRLING[:-1]):
        series = c + r2 * series
    out = (y - 0.5) * jnp.log(y) - y + 0.5 * np.log(2.0 * np.pi) + r * series
    return jnp.where(small, out - jnp.log(jnp.where(small, prod, 1.0)), out)


def _lgamma_jvp() -> Any:
    """:func:`_lgamma_value` with the digamma series as its derivative (built once)."""
    global _LGAMMA
    if _LGAMMA is None:
        import jax

        f = jax.custom_jvp(_lgamma_value)
        f.defjvp(lambda primals, tangents: (_lgamma_value(primals[0]), _digamma_positive(primals[0]) * tangents[0]))
        _LGAMMA = f
    return _LGAMMA


_LGAMMA: Any = None


def dirmult_line(row: Any, d: Any, par: dict[str, Any], rows: Any, ca: Any, cb: Any, kk: Any) -> Any:
    r"""The log-prior of one leaf row of each line at the window's points, up to a constant along the line.

    ``row`` the tract's ``(N_t, n_{t1}, ..., n_{tC})`` now, ``d`` its change per step, ``kk`` the steps
    (lines, window); ``par`` from :func:`dirmult_terms`, ``rows`` the tracts. A move changes at most two of the
    row's terms: the cell that changes and the tract population (a transfer, or a root move between tracts),
    or two cells and not the population (a swap, or a root move within the tract). With
    :math:`g(x, p, q) = \log\Gamma(x + p) - \log\Gamma(x + q)`, the row's terms are
    :math:`\sum_c g(n_{tc}, \kappa p_{sc}, 1) + g(N_t, a_t, \kappa)` (:func:`nested_dirmult_logpmf` less
    what does not depend on the counts), evaluated where they change: 4 :func:`lgamma_positive` per point.
    Counts below 0 are clamped to 0 (those points are outside the support, refused by the caller).
    """
    import jax.numpy as jnp

    def take(x: Any, c: Any) -> Any:
        return jnp.take_along_axis(x, c[:, None], axis=1)

    cells, dcell = row[:, 1:], d[:, 1:]
    d_ca, d_cb, d_t = take(dcell, ca), take(dcell, cb), d[:, :1]
    c1 = jnp.where(d_ca[:, 0] != 0, ca, cb)  # a cell that changes (or cb, unchanged: a constant term)
    n1 = jnp.maximum(take(cells, c1) + kk * take(dcell, c1), 0.0)
    a1 = take(par["alpha"][rows], c1)
    tract = d_t != 0
    two = (d_ca != 0) & (d_cb != 0) & (ca != cb)[:, None]  # cb changes too (then the population does not)
    x2 = jnp.maximum(jnp.where(tract, row[:, :1] + kk * d_t, take(cells, cb) + kk * d_cb), 0.0)
    p2 = jnp.where(tract, par["a_tract"][rows][:, None], take(par["alpha"][rows], cb))
    q2 = jnp.where(tract, par["kappa"][rows][:, None], 1.0)
    second = lgamma_positive(x2 + p2) - lgamma_positive(x2 + q2)
    return lgamma_positive(n1 + a1) - lgamma_positive(n1 + 1.0) + jnp.where(tract | two, second, 0.0)


def dirmult_terms(params: dict[str, Any], county: Any, county_root: Any, leaf_root: Any, n_root: int) -> dict[str, Any]:
    r"""The count sweep's prior terms from the parameters: ``alpha`` (leaves, cells), ``a_tract``, ``kappa`` (leaves).

    :math:`\alpha_{tc} = \kappa p_{s(t)c}`, :math:`a_t = \nu e^{\eta_{k(t)} - \bar\eta_{s(t)}}` (the county
    effects centred within each root unit) and :math:`\kappa` per leaf; ``params`` holds ``eta_county``,
    ``nu``, ``kappa`` and ``profile`` (constrained values).
    """
    import jax
    import jax.numpy as jnp

    eta = params["eta_county"]
    k_per_root = jax.ops.segment_sum(jnp.ones_like(eta), county_root, num_segments=n_root)
    eta_c = eta - (jax.ops.segment_sum(eta, county_root, num_segments=n_root) / k_per_root)[county_root]
    kappa = params["kappa"]
    return {
        "alpha": kappa * params["profile"][leaf_root],
        "a_tract": params["nu"] * jnp.exp(eta_c[county]),
        "kappa": kappa * jnp.ones(leaf_root.shape, dtype=jnp.float64),
    }


def nested_dirmult_logpmf(counts: Any, terms: dict[str, Any], leaf_root: Any, n_root: int) -> Any:
    r"""The log-pmf of the leaf cell counts given their root totals, :math:`\sum_s \log p(n_s \mid T_s, \theta)`.

    ``counts`` (leaves, cells), real-valued integers; ``terms`` from :func:`dirmult_terms`. The totals
    :math:`T_s` are the counts' own sums (exact in every state of the sampler). JAX, float64.
    """
    import jax
    import jax.numpy as jnp

    gammaln = lgamma_positive
    tract = counts.sum(axis=1)
    total = jax.ops.segment_sum(tract, leaf_root, num_segments=n_root)
    a_sum = jax.ops.segment_sum(terms["a_tract"], leaf_root, num_segments=n_root)
    a, kappa, alpha = terms["a_tract"], terms["kappa"], terms["alpha"]
    safe = jnp.where(a_sum > 0, a_sum, 1.0)  # a root unit without leaves (as in a traced example) has no term
    root = jnp.where(a_sum > 0, gammaln(safe) - gammaln(total + safe) + gammaln(total + 1.0), 0.0)
    per_tract = gammaln(tract + a) - gammaln(a) + gammaln(kappa) - gammaln(tract + kappa)
    per_cell = gammaln(counts + alpha) - gammaln(alpha) - gammaln(counts + 1.0)
    return jnp.sum(root) + jnp.sum(per_tract) + jnp.sum(per_cell)


def dirmult_model(n_units: tuple[int, ...], county: np.ndarray, county_root: np.ndarray, leaf_root: np.ndarray,
                  n_cells: int) -> tuple[Callable[..., None], Callable[[dict[str, Any]], dict[str, Any]]]:
    """The NumPyro model of the parameters given the counts, and the map from its sites to the sweep's terms.

    The model takes ``(counts, leaf_root)`` (the Gibbs step's data) and adds
    :func:`nested_dirmult_logpmf` as a factor; ``county`` is each leaf's level-1 ancestor, ``county_root``
    each level-1 unit's root unit. The county effects are centred (``eta_county`` sampled) when the counties
    have :data:`CENTRED_FROM` leaves or more on average, which pin each effect far more closely than its scale
    ``sigma_county`` does, and non-centred (``z_county`` sampled, ``eta_county = sigma_county * z_county``)
    otherwise, where the centred form is a funnel (Papaspiliopoulos, Roberts & Skold (2007), *A general
    framework for the parametrization of hierarchical models*).
    """
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    n_root, n_county = n_units[0], n_units[1]
    centred = n_units[-1] >= CENTRED_FROM * n_county
    county_j, county_root_j, leaf_root_j = (jnp.asarray(x, dtype=jnp.int32) for x in (county, county_root, leaf_root))
    loc, scale = CONCENTRATION_PRIOR

    def terms(params: dict[str, Any]) -> dict[str, Any]:
        return dirmult_terms(params, county_j, county_root_j, leaf_root_j, n_root)

    def joint(counts: Any, leaf_root_arg: Any) -> None:
        s_county = numpyro.sample("sigma_county", dist.HalfNormal(1.0))
        if centred:
            eta = numpyro.sample("eta_county", dist.Normal(0.0, s_county * jnp.ones(n_county)).to_event(1))
        else:
            z = numpyro.sample("z_county", dist.Normal(jnp.zeros(n_county), 1.0).to_event(1))
            eta = numpyro.deterministic("eta_county", s_county * z)
        nu = numpyro.sample("nu", dist.LogNormal(loc, scale))
        kappa = numpyro.sample("kappa", dist.LogNormal(loc, scale))
        profile = numpyro.sample("profile", dist.Dirichlet(jnp.ones((n_root, n_cells))).to_event(1))
        par = terms({"eta_county": eta, "nu": nu, "kappa": kappa, "profile": profile})
        numpyro.factor("counts_given_parameters", nested_dirmult_logpmf(counts, par, leaf_root_arg, n_root))

    return joint, terms
