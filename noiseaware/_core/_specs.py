r"""One spec per public distribution: parameters and rules, log-prob assembly, draws, support point, release.

Both front ends (:mod:`noiseaware.pymc`, :mod:`noiseaware.numpyro`) are shells over this module:
they convert parameters to their backend's tensors, attach their validation idiom (PyMC's
``check_parameters`` with the rule text of :attr:`DistSpec.rules`; NumPyro's ``arg_constraints``)
and plumb random variables. Everything they would otherwise compute twice lives here once:

- parameter resolution (``alpha`` or ``epsilon``: :func:`resolve_alpha`; ``alpha`` or ``sigma``:
  :func:`noise_choice`), the median-split sizes ``N = n, K = m = ceil(n / 2)``
  (:func:`median_split_sizes`), pair validation (:func:`~noiseaware._core._release.pairs_index`);
- log-prob assembly (:func:`noisy_hypergeom_logp`, :func:`two_way_logp`, :func:`composite_logp`);
- draws as transforms of uniforms (:func:`noise_uniform_shape`, :func:`noise_from_uniforms`,
  :func:`hypergeom_draw`), so one implementation serves NumPy, JAX and PyMC's ``rng_fn``;
- support points and moments;
- how each class reads a :class:`~noiseaware.Release` (:attr:`DistSpec.release`).

:data:`SPECS` registers one :class:`DistSpec` per public distribution. Its ``prepare``/``logp``/
``draw`` triple evaluates the law in any backend from concrete parameters (the NumPy backend of
``tests/distributions`` uses it). All functions take a
:class:`~noiseaware._core._backend.Backend` ``bk`` where they compute, in the ``xp`` style.

Examples
--------
>>> import numpy as np
>>> from noiseaware._core import get_backend
>>> from noiseaware._core._specs import SPECS
>>> spec = SPECS["NoisyTwoWayTable"]
>>> prepared = spec.prepare(r=0.5, n=100, epsilon_per_pair=1.0)
>>> round(float(spec.logp(get_backend("numpy"), np.array(33.0), **prepared)), 4)
-1.9208
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .._validation import current_owner, owned, owner_scope
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from . import _release
from ._backend import Backend
from ._covariance_release import entry_params, measurements
from ._fisher import (
    FisherTable,
    concrete_sizes,
    copula_log_odds,
    fisher_mean_var,
    fisher_sample_from_uniform,
    fisher_table,
    median_split_table,
    noisy_fisher_logcdf,
    noisy_fisher_logpmf,
)
from ._noise import (
    NOISE_LAWS,
    discrete_gaussian_logpmf,
    discrete_gaussian_variance,
    two_sided_geometric_logcdf,
    two_sided_geometric_logpmf,
)
from ._randomized import randomized_response_answer_draw, randomized_response_answer_logp

__all__ = [
    "NOISE_CODES",
    "NOISE_FAMILIES",
    "SPECS",
    "DistSpec",
    "composite_logp",
    "composite_pairs",
    "check_release_p",
    "hypergeom_draw",
    "hypergeom_moments",
    "hypergeom_table",
    "hypergeom_support_point",
    "median_split_sizes",
    "mode_support_point",
    "noise_choice",
    "noise_from_uniforms",
    "noise_uniform_shape",
    "noise_variance",
    "noisy_hypergeom_logcdf",
    "noisy_hypergeom_logp",
    "resolve_alpha",
    "two_way_logcdf",
    "two_way_logp",
    "two_way_support_point",
]

#: The integer noise families of the discrete likelihoods, each with its parameter name.
NOISE_FAMILIES: dict[str, str] = {"geometric": "alpha", "discrete_gaussian": "sigma"}
#: Integer codes of the noise families where a backend needs a constant input (PyMC random variables).
NOISE_CODES: dict[str, int] = {"geometric": 0, "discrete_gaussian": 1}


# --------------------------------------------------------------------------- parameter rules
def resolve_alpha(
    alpha: Any,
    epsilon: Any,
    sensitivity: Any = 1.0,
    *,
    name: str = "epsilon",
    to_float: Callable[[Any], Any] = np.asarray,
    exp: Callable[[Any], Any] = np.exp,
) -> Any:
    r"""The geometric noise parameter from exactly one of ``alpha`` or ``epsilon``.

    .. math:: \alpha = e^{-\varepsilon/\Delta}

    (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula Correlations*, eq.
    3). ``to_float`` converts to the front end's float64
    type and ``exp`` is its exponential (so symbolic and traced inputs stay symbolic).

    Raises
    ------
    NoiseawareValueError
        Unless exactly one of ``alpha`` and ``epsilon`` (called ``name``) is given.

    Examples
    --------
    >>> round(float(resolve_alpha(None, 1.0, 2.0)), 6)
    0.606531
    """
    if (alpha is None) == (epsilon is None):
        raise NoiseawareValueError(
            f"{current_owner()}: give exactly one of alpha or {name}; got alpha={alpha!r}, {name}={epsilon!r}."
        )
    if alpha is not None:
        return to_float(alpha)
    return exp(-to_float(epsilon) / to_float(sensitivity))


def noise_choice(alpha: Any, sigma: Any) -> tuple[str, Any]:
    """``(family, parameter)`` from exactly one of ``alpha`` (geometric) or ``sigma`` (discrete Gaussian).

    Raises
    ------
    NoiseawareValueError
        Unless exactly one is given.

    Examples
    --------
    >>> noise_choice(None, 2.0)
    ('discrete_gaussian', 2.0)
    """
    if (alpha is None) == (sigma is None):
        raise NoiseawareValueError(
            f"{current_owner()}: give exactly one of alpha (geometric noise) or sigma (discrete Gaussian noise); "
            f"got alpha={alpha!r}, sigma={sigma!r}."
        )
    return ("geometric", alpha) if alpha is not None else ("discrete_gaussian", sigma)


def median_split_sizes(n: Any) -> tuple[Any, Any, Any]:
    r"""``(N, K, m) = (n, h, h)`` with ``h = ceil(n / 2)`` records above the median (Wang et al. 2026, §3.1).

    Works for integers, integer arrays and integer tensors (``(n + 1) // 2``).

    Examples
    --------
    >>> median_split_sizes(51)
    (51, 26, 26)
    """
    h = (n + 1) // 2
    return n, h, h


def composite_pairs(p: int, pairs: Any) -> tuple[np.ndarray, np.ndarray]:
    """Checked ``(i, j)`` indices of a composite likelihood's pairs (default ``triu_indices(p, 1)``).

    The one pair rule of both front ends (:func:`~noiseaware._core._release.pairs_index`).

    Examples
    --------
    >>> [a.tolist() for a in composite_pairs(3, None)]
    [[0, 0, 1], [1, 2, 2]]
    """
    return _release.pairs_index(p, pairs)


def check_release_p(p: int, last_dim: Any) -> None:
    """Refuse a correlation matrix whose static size is not the release's ``p``.

    Raises
    ------
    NoiseawareValueError
        If ``last_dim`` is known and differs from ``p``.
    """
    owner = current_owner()
    if last_dim is not None and int(last_dim) != p:
        raise NoiseawareValueError(
            f"{owner}.from_release: R must be {p} x {p} for this release; got R with last dimension {last_dim}."
        )


# --------------------------------------------------------------------------- noise draws and moments
def noise_uniform_shape(family: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Shape of the uniforms that :func:`noise_from_uniforms` consumes for noise of ``shape``.

    Examples
    --------
    >>> noise_uniform_shape("geometric", (4,)), noise_uniform_shape("discrete_gaussian", (4,))
    ((2, 4), (4, 96, 3))
    """
    return NOISE_LAWS[family].uniform_shape(shape)


def noise_from_uniforms(bk: Backend, family: str, par: Any, u: Any) -> Any:
    """Integer noise from uniforms of shape :func:`noise_uniform_shape` (the registry's exact transforms).

    Two-sided geometric: ``G1 - G2`` by inversion (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian
    Inference for Gaussian Copula Correlations*, Def. 2.3); discrete Gaussian: CKS20
    Algorithm 3 with a fixed number of proposals (:data:`~noiseaware._core._noise.DG_REJECTION_TRIES`).
    ``par`` is ``alpha`` or ``sigma`` (:data:`NOISE_FAMILIES`); the draw is the noise-law registry's.
    """
    law = NOISE_LAWS[family]
    assert law.draw is not None  # both integer families have a fixed-shape draw (not user input)
    law_par = bk.xp.log(par) if family == "geometric" else par
    return law.draw(bk, u, 0.0, law_par)


def noise_variance(bk: Backend, family: str, par: Any) -> Any:
    r"""``Var D``: ``2 alpha / (1 - alpha)^2`` (geometric) or the discrete Gaussian's exact ``E[D^2]``."""
    if family == "geometric":
        return 2.0 * par / (1.0 - par) ** 2
    return discrete_gaussian_variance(bk, par)


# --------------------------------------------------------------------------- support points
def mode_support_point(bk: Backend, loc: Any, par: Any) -> Any:
    """``floor(loc)`` broadcast with the noise parameter: the mode of ``loc + D``."""
    return bk.xp.floor(loc) + 0.0 * par


def hypergeom_support_point(bk: Backend, N: Any, K: Any, m: Any, *params: Any) -> Any:
    """``round(m K / N)``, the central (``log_odds = 0``) mean, broadcast with ``params``."""
    out = bk.xp.round(m * K / N)
    for p in params:
        out = out + 0.0 * p
    return out


def two_way_support_point(bk: Backend, r: Any, n: Any, *params: Any) -> Any:
    r"""``clip(round(n (1/4 + arcsin(r) / (2 pi))), 0, ceil(n/2))``: the approximate mean high-high count.

    ``P(both above the median) = 1/4 + arcsin(r) / (2 pi)`` for a Gaussian copula (Wang, Feldman & Reiter (2026),
    *Differentially Private Bayesian Inference for Gaussian Copula Correlations*, eq. 7).
    """
    xp = bk.xp
    _, h, _ = median_split_sizes(n)
    out = xp.clip(xp.round(n * (0.25 + xp.arcsin(r) / (2 * math.pi))), 0, h)
    for p in params:
        out = out + 0.0 * p
    return out


# --------------------------------------------------------------------------- log-prob assembly
def two_sided_geometric_logp(bk: Backend, value: Any, *, loc: Any, alpha: Any) -> Any:
    """``log P(loc + D = value)``, ``D`` two-sided geometric (Wang et al. 2026, eq. 3)."""
    return two_sided_geometric_logpmf(bk, value, loc, alpha)


def discrete_gaussian_logp(bk: Backend, value: Any, *, loc: Any, sigma: Any) -> Any:
    """``log P(loc + D = value)``, ``D`` discrete Gaussian (CKS20)."""
    return discrete_gaussian_logpmf(bk, value, loc, sigma)


def noisy_hypergeom_logp(bk: Backend, value: Any, *, table: FisherTable, log_odds: Any, family: str, par: Any) -> Any:
    """Exact log-pmf of ``T + D`` (Wang et al. 2026, eq. 17), windowed sums of :mod:`noiseaware._core._fisher`."""
    return noisy_fisher_logpmf(bk, table, value, log_odds, family, par)


def noisy_hypergeom_logcdf(bk: Backend, value: Any, *, table: FisherTable, log_odds: Any, family: str, par: Any) -> Any:
    """Exact log-CDF of ``T + D``; geometric noise only.

    Raises
    ------
    NotImplementedError
        For discrete Gaussian noise, whose CDF has no closed form.
    """
    if family != "geometric":
        raise NotImplementedError(
            "NoisyHypergeom: the CDF is available for two-sided geometric noise only; the discrete Gaussian CDF "
            "has no closed form."
        )
    return noisy_fisher_logcdf(bk, table, value, log_odds, par)


def two_way_logp(bk: Backend, value: Any, *, table: FisherTable, r: Any, alpha: Any) -> Any:
    r"""Median-split table log-pmf: :func:`noisy_hypergeom_logp` at ``log_odds = psi(r)`` (Wang et al. 2026)."""
    return noisy_fisher_logpmf(bk, table, value, copula_log_odds(bk, r), "geometric", alpha)


def two_way_logcdf(bk: Backend, value: Any, *, table: FisherTable, r: Any, alpha: Any) -> Any:
    """Median-split table log-CDF (geometric noise)."""
    return noisy_fisher_logcdf(bk, table, value, copula_log_odds(bk, r), alpha)


def composite_logp(bk: Backend, value: Any, *, table: FisherTable, r: Any, alpha: Any) -> Any:
    r"""Sum over pairs of :func:`two_way_logp` (Wang et al. 2026, eq. 18); ``r`` holds the pairs on the last axis."""
    return bk.xp.sum(two_way_logp(bk, value, table=table, r=r, alpha=alpha), axis=-1)


# --------------------------------------------------------------------------- draws
def hypergeom_draw(
    bk: Backend, table: FisherTable, log_odds: Any, family: str, par: Any, u_t: Any, u_noise: Any
) -> Any:
    """``T + D``: ``T`` by inversion on its mode window from ``u_t``, ``D`` from ``u_noise``.

    ``log_odds`` and ``par`` must already have the shape of ``u_t`` (the draw's shape).
    """
    t = fisher_sample_from_uniform(bk, table, log_odds, u_t)
    return t + noise_from_uniforms(bk, family, par, u_noise)


# RandomizedResponse ----------------------------------------------------------------
def rr_categories(probs_shape: tuple[int, ...], k: Any = None) -> int:
    """``k``: the last axis of ``probs`` (at least 2), equal to ``k`` when given (a release's categories)."""
    owner = current_owner()
    if len(probs_shape) < 1 or probs_shape[-1] < 2:
        raise NoiseawareValueError(
            f"{owner}: probs must have the k >= 2 category probabilities on its last axis; got shape {probs_shape}."
        )
    if k is not None and (
        isinstance(k, bool) or not isinstance(k, int | np.integer) or int(k) < 2
    ):
        raise NoiseawareTypeError(f"{owner}: k (the number of categories) must be an integer >= 2; got k={k!r}.")
    if k is not None and int(k) != int(probs_shape[-1]):
        raise NoiseawareValueError(
            f"{owner}: probs must have k={int(k)} categories on its last axis (the release's); got "
            f"{probs_shape[-1]} (shape {probs_shape})."
        )
    return int(probs_shape[-1])


def rr_check_p(p: Any, k: int) -> None:
    """A concrete ``p`` must lie in ``[1/k, 1)``; symbolic or traced values are left to the front end's idiom."""
    owner = current_owner()
    numeric_parameter("p", p)
    if isinstance(p, np.ndarray | np.generic | float | int) and not isinstance(p, bool):
        arr = np.asarray(p, dtype=np.float64)
        if not np.all((arr >= 1.0 / k) & (arr < 1.0)):
            raise NoiseawareValueError(
                f"{owner}: p (the probability of a truthful answer) must be in [1/k, 1) = [{1.0 / k:.6g}, 1); "
                f"got p={p!r}."
            )


@owned("RandomizedResponse")
def _rr_prepare(probs: Any, p: Any, k: Any = None) -> dict[str, Any]:
    numeric_parameter("probs", probs)
    numeric_parameter("p", p)
    probs = _f(probs)
    kk = rr_categories(np.shape(probs), k)
    rr_check_p(_f(p), kk)
    return {"probs": probs, "p": _f(p)}


def _rr_release(release: Any, answer: Any = None) -> tuple[dict[str, Any], Any]:
    k, p, values = _release.randomized_response_params(release, answer)
    return {"p": p, "k": k}, values


# --------------------------------------------------------------------------- the registry
#: ``(release, **given) -> (constructor kwargs, observed values)``: how ``from_release`` reads a release
#: (its messages name the current owner, the class whose ``from_release`` is served).
ReleaseArgs = Callable[..., tuple[dict[str, Any], Any]]
#: ``(**params) -> dict``: concrete parameters resolved to the keyword arguments of the law's functions.
Prepare = Callable[..., dict[str, Any]]
#: ``(bk, value, **prepared) -> log density`` (or log-CDF), in the ``xp`` style of backend ``bk``.
LogDensity = Callable[..., Any]
#: ``(bk, uniform, shape, **prepared) -> draws``, ``uniform(shape)`` giving U(0, 1) arrays.
Draw = Callable[..., Any]


@dataclass(frozen=True, kw_only=True)
class DistSpec:
    """What one public distribution is, independent of the PPL.

    Attributes
    ----------
    name : str
        The class name in both front ends.
    params : tuple of str
        Constructor parameters, the same names in both front ends.
    rules : dict
        Parameter -> rule text (PyMC's ``check_parameters`` message; NumPyro's constraint).
    data : tuple of str
        Parameters that are concrete data (they fix tables or windows; not traced).
    event_dim : int
        Number of event dimensions (0 for a scalar law).
    discrete : bool
        Whether the law is over integers.
    release_args : ReleaseArgs
        The constructor arguments that ``from_release`` reads from a release, and the values it observes.
    prepare : Prepare or None
        Concrete parameters resolved to the keyword arguments of ``logp``, ``logcdf`` and ``draw``.
    logp : LogDensity or None
        The log density (``None``: no closed form).
    logcdf : LogDensity or None
        The log-CDF, where the law has one in closed form.
    draw : Draw or None
        Draws as a transform of uniforms.
    seed : str
        Where the law comes from.
    """

    name: str
    params: tuple[str, ...]
    rules: dict[str, str]
    data: tuple[str, ...] = ()
    event_dim: int = 0
    discrete: bool = True
    release_args: ReleaseArgs
    prepare: Prepare | None = None
    logp: LogDensity | None = None
    logcdf: LogDensity | None = None
    draw: Draw | None = None
    seed: str = ""

    def part(self, what: Literal["prepare", "logp", "logcdf", "draw"]) -> Callable[..., Any]:
        """The law's ``what`` function; ``NotImplementedError`` where the law has none in closed form.

        Examples
        --------
        >>> SPECS["DiscreteGaussian"].part("logcdf")
        Traceback (most recent call last):
        ...
        NotImplementedError: DiscreteGaussian has no closed-form logcdf.
        """
        fn: Callable[..., Any] | None = getattr(self, what)
        if fn is None:
            raise NotImplementedError(f"{self.name} has no closed-form {what}.")
        return fn


def numeric_parameter(name: str, x: Any) -> None:
    """Refuse text given for a number (``p="0.6"``: NumPy would read it as 0.6), and booleans, before any conversion."""
    owner = current_owner()
    if isinstance(x, str | bytes | bool | np.bool_) or (
        isinstance(x, np.ndarray | list | tuple) and np.asarray(x).dtype.kind in "USb"
    ):
        raise NoiseawareTypeError(f"{owner}: {name} must be a number or an array of numbers; got {name}={x!r}.")


def _f(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _observed(kwargs: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """``(constructor kwargs, observed values)`` from a reader of :mod:`._release` that returns both in one dict."""
    return kwargs, kwargs.pop("observed")


def _integer_noise(family: str) -> tuple[Callable[..., Any], ReleaseArgs]:
    """``(draw, release_args)`` of the distribution of ``loc`` plus the integer noise of ``family`` alone.

    Its parameter is the family's (:data:`NOISE_FAMILIES`: ``alpha`` or ``sigma``), read from a
    release of that family by :func:`~noiseaware._core._release.noise_params`.
    """
    name = NOISE_FAMILIES[family]

    def draw(bk: Backend, uniform: Callable[..., Any], shape: tuple[int, ...], *, loc: Any, **par: Any) -> Any:
        u = uniform(noise_uniform_shape(family, shape))
        return loc + noise_from_uniforms(bk, family, bk.xp.broadcast_to(par[name], shape), u)

    def release_args(release: Any) -> tuple[dict[str, Any], Any]:
        _, value, values = _release.noise_params(release, (family,))
        return {name: value}, values

    return draw, release_args


# TwoSidedGeometric ---------------------------------------------------------------
@owned("TwoSidedGeometric")
def _tsg_prepare(loc: Any = 0, alpha: Any = None, *, epsilon: Any = None, sensitivity: Any = 1.0) -> dict[str, Any]:
    return {"loc": _f(loc), "alpha": resolve_alpha(alpha, epsilon, sensitivity, to_float=_f)}


def _tsg_logcdf(bk: Backend, value: Any, *, loc: Any, alpha: Any) -> Any:
    return two_sided_geometric_logcdf(bk, value, loc, alpha)


_tsg_draw, _tsg_release = _integer_noise("geometric")


# DiscreteGaussian ----------------------------------------------------------------
def _dg_prepare(loc: Any = 0, sigma: Any = 1.0) -> dict[str, Any]:
    return {"loc": _f(loc), "sigma": _f(sigma)}


_dg_draw, _dg_release = _integer_noise("discrete_gaussian")


# NoisyHypergeom ------------------------------------------------------------------
def hypergeom_table(N: Any, K: Any, m: Any) -> FisherTable:
    """The Fisher table of concrete sizes ``N, K, m`` (validated together)."""
    sizes = [concrete_sizes(k, x) for k, x in (("N", N), ("K", K), ("m", m))]
    return fisher_table(*sizes)


@owned("NoisyHypergeom")
def _hyper_prepare(N: Any, K: Any, m: Any, log_odds: Any, alpha: Any = None, *, sigma: Any = None) -> dict[str, Any]:
    family, par = noise_choice(alpha, sigma)
    table = hypergeom_table(N, K, m)
    return {"table": table, "log_odds": _f(log_odds), "family": family, "par": _f(par)}


def _hyper_draw(
    bk: Backend,
    uniform: Callable[..., Any],
    shape: tuple[int, ...],
    *,
    table: FisherTable,
    log_odds: Any,
    family: str,
    par: Any,
) -> Any:
    xp = bk.xp
    u_t = uniform(shape)
    u_n = uniform(noise_uniform_shape(family, shape))
    return hypergeom_draw(bk, table, xp.broadcast_to(log_odds, shape), family, xp.broadcast_to(par, shape), u_t, u_n)


def _hyper_release(release: Any, N: Any = None, K: Any = None, m: Any = None) -> tuple[dict[str, Any], Any]:
    return _observed(_release.hypergeom_params(release, N, K, m))


# NoisyTwoWayTable ----------------------------------------------------------------
@owned("NoisyTwoWayTable")
def _twoway_prepare(r: Any, n: Any, alpha: Any = None, *, epsilon_per_pair: Any = None) -> dict[str, Any]:
    nn = concrete_sizes("n", n, minimum=1)
    a = resolve_alpha(alpha, epsilon_per_pair, 1.0, name="epsilon_per_pair", to_float=_f)
    return {"table": median_split_table(nn), "r": _f(r), "alpha": a}


def _twoway_draw(
    bk: Backend, uniform: Callable[..., Any], shape: tuple[int, ...], *, table: FisherTable, r: Any, alpha: Any
) -> Any:
    xp = bk.xp
    u_t = uniform(shape)
    u_n = uniform(noise_uniform_shape("geometric", shape))
    psi = xp.broadcast_to(copula_log_odds(bk, r), shape)
    return hypergeom_draw(bk, table, psi, "geometric", xp.broadcast_to(alpha, shape), u_t, u_n)


def _twoway_release(release: Any) -> tuple[dict[str, Any], Any]:
    return _observed(_release.two_way_params(release))


# CompositeCopulaLikelihood -------------------------------------------------------
@owned("CompositeCopulaLikelihood")
def _composite_prepare(
    R: Any, n: Any, alpha: Any = None, *, pairs: Any = None, epsilon_per_pair: Any = None
) -> dict[str, Any]:
    R = _f(R)
    nn = concrete_sizes("n", n, minimum=1)
    iu, ju = composite_pairs(R.shape[-1], pairs)
    a = resolve_alpha(alpha, epsilon_per_pair, 1.0, name="epsilon_per_pair", to_float=_f)
    return {"table": median_split_table(nn, per_pair=True), "r": R[..., iu, ju], "alpha": a}


def _composite_release(release: Any) -> tuple[dict[str, Any], Any]:
    return _observed(_release.composite_params(release))


# Noisy ---------------------------------------------------------------------------
def _noisy_release(release: Any) -> tuple[dict[str, Any], Any]:
    from ._noisy import release_noise

    with owner_scope(f"{current_owner()}.from_release"):
        _, _, values = release_noise(release)
    return {"noise": release}, values


# LaplaceCensoredDirichletStat ----------------------------------------------------
def _lcds_release(release: Any, part: int | None = None) -> tuple[dict[str, Any], Any]:
    from ._dirichlet_release import select_part

    with owner_scope(f"{current_owner()}.from_release"):
        p = select_part(release, part)
    return {"n": p.n, "a": p.a, "scale": p.scale}, p.s_l


# NoisyCovarianceEntries ----------------------------------------------------------
def _cov_release(release: Any) -> tuple[dict[str, Any], Any]:
    # the release's combined measurements (Ferrando et al. 2026)
    m = measurements(release)
    return {"n": m.n, "pairs": m.pairs, "precision": m.precision}, m.y


@owned("NoisyCovarianceEntries")
def _cov_prepare(sigma: Any, n: Any, pairs: Any, precision: Any) -> dict[str, Any]:
    sig = _f(sigma)
    nn, rows, cols, lam = entry_params(n, pairs, precision, int(sig.shape[-1]))
    return {"sigma": sig, "n": nn, "rows": rows, "cols": cols, "precision": lam}


def _cov_logp(bk: Backend, value: Any, *, sigma: Any, n: Any, rows: Any, cols: Any, precision: Any) -> Any:
    from ._covariance import noisy_covariance_entries_logp

    return noisy_covariance_entries_logp(bk, value, sigma, rows, cols, precision, float(n))


# NoisySufficientStatistics -------------------------------------------------------
def _reg_release(release: Any) -> tuple[dict[str, Any], Any]:
    # the noisy Z^T Z, its per-entry noise and the ranges' shift (a regression release of method ssp / adassp)
    from ._regression import released_entries
    from ._regression_release import read_regression

    st = read_regression(release)
    rows, cols = released_entries(len(st.columns), st.intercept)
    args = {"n": st.n, "scale": np.asarray(st.scale), "intercept": st.intercept, "family": st.family,
            "shift": st.shift}
    return args, np.asarray(st.moments)[rows, cols]


@owned("NoisySufficientStatistics")
def _reg_prepare(
    beta: Any, sigma: Any, mu_x: Any, cov_x: Any, n: Any, scale: Any, intercept: Any = True, family: Any = "gaussian",
    *, shift: Any = None,
) -> dict[str, Any]:
    from ._regression import shift_param, statistics_params

    nn, rows, cols, noise, icpt, fam = statistics_params(n, scale, intercept, family)
    sh = shift_param(shift, int(np.max(rows)) + 1, icpt)
    if fam != "gaussian":
        raise NoiseawareValueError(
            "NoisySufficientStatistics: the law of Laplace-noised statistics has no closed form; its log-density "
            "needs the latent statistics (the front ends' from_release adds them)."
        )
    return {"beta": _f(beta), "sigma": _f(sigma), "mu_x": _f(mu_x), "cov_x": _f(cov_x), "n": float(nn), "rows": rows,
            "cols": cols, "noise": noise, "intercept": icpt, "shift": sh}


def _reg_logp(bk: Backend, value: Any, *, beta: Any, sigma: Any, mu_x: Any, cov_x: Any, n: float, rows: Any,
              cols: Any, noise: Any, intercept: bool, shift: np.ndarray | None = None) -> Any:
    from ._regression import RegressionParameters, StatisticsLayout, centred_parameters, gaussian_statistics_logp

    beta, mu_x = centred_parameters(bk, beta, mu_x, shift)  # the shifted rows' parameters
    params, layout = RegressionParameters(beta, sigma, mu_x, cov_x), StatisticsLayout(n, rows, cols, intercept)
    return gaussian_statistics_logp(bk, value, params, layout, bk.asarray(noise))


_GEOM = "alpha must be in (0, 1)"

#: One spec per public distribution, keyed by class name (both front ends export exactly these).
SPECS: dict[str, DistSpec] = {
    spec.name: spec
    for spec in (
        DistSpec(
            name="TwoSidedGeometric",
            params=("loc", "alpha", "epsilon", "sensitivity"),
            rules={"alpha": _GEOM},
            release_args=_tsg_release,
            prepare=_tsg_prepare,
            logp=two_sided_geometric_logp,
            logcdf=_tsg_logcdf,
            draw=_tsg_draw,
            seed="Wang et al. (2026) Definition 2.3, eq. 3",
        ),
        DistSpec(
            name="DiscreteGaussian",
            params=("loc", "sigma"),
            rules={"sigma": "sigma must be > 0"},
            release_args=_dg_release,
            prepare=_dg_prepare,
            logp=discrete_gaussian_logp,
            draw=_dg_draw,
            seed="CKS20; Eng et al. (2024)",
        ),
        DistSpec(
            name="NoisyHypergeom",
            params=("N", "K", "m", "log_odds", "alpha", "sigma"),
            rules={"alpha": _GEOM, "sigma": "sigma must be > 0"},
            data=("N", "K", "m"),
            release_args=_hyper_release,
            prepare=_hyper_prepare,
            logp=noisy_hypergeom_logp,
            logcdf=noisy_hypergeom_logcdf,
            draw=_hyper_draw,
            seed="Wang et al. (2026) eq. 17",
        ),
        DistSpec(
            name="NoisyTwoWayTable",
            params=("r", "n", "alpha", "epsilon_per_pair"),
            rules={"r": "r must be in (-1, 1)", "alpha": _GEOM},
            data=("n",),
            release_args=_twoway_release,
            prepare=_twoway_prepare,
            logp=two_way_logp,
            logcdf=two_way_logcdf,
            draw=_twoway_draw,
            seed="Wang et al. (2026) eqs. 7-10, 17",
        ),
        DistSpec(
            name="CompositeCopulaLikelihood",
            params=("R", "n", "alpha", "pairs", "epsilon_per_pair"),
            rules={"R": "R must have off-diagonal entries in (-1, 1)", "alpha": _GEOM},
            data=("n", "pairs"),
            event_dim=1,
            release_args=_composite_release,
            prepare=_composite_prepare,
            logp=composite_logp,
            # pairs are independent: the same transform as NoisyTwoWayTable, the pairs on the last axis
            draw=_twoway_draw,
            seed="Wang et al. (2026) eq. 18",
        ),
        DistSpec(
            name="RandomizedResponse",
            params=("probs", "p", "k"),
            rules={"probs": "probs must be a probability vector", "p": "p must be in [1/k, 1)"},
            data=("k",),
            release_args=_rr_release,
            prepare=_rr_prepare,
            logp=randomized_response_answer_logp,
            draw=randomized_response_answer_draw,
            seed="Warner (1965); Eng et al. (2024) Example 1 (the answer's marginal law)",
        ),
        DistSpec(
            name="Noisy",
            params=("dist", "noise", "alpha", "sigma", "epsilon", "sensitivity", "tol"),
            rules={"alpha": _GEOM, "sigma": "sigma must be > 0"},
            data=("noise", "alpha", "sigma", "epsilon", "sensitivity", "tol"),
            release_args=_noisy_release,
            seed="noiseaware._core._noisy (exact windowed convolution)",
        ),
        DistSpec(
            name="LaplaceCensoredDirichletStat",
            params=("alpha", "n", "a", "scale", "s0", "moments"),
            rules={"alpha": "alpha must be > 0", "scale": "scale must be > 0"},
            data=("n", "a", "moments"),
            event_dim=1,
            discrete=False,
            release_args=_lcds_release,
            seed="Guo et al. (2022) eq. 6",
        ),
        DistSpec(
            name="NoisyCovarianceEntries",
            params=("sigma", "n", "pairs", "precision"),
            rules={"sigma": "sigma must be symmetric"},
            data=("n", "pairs"),
            event_dim=1,
            discrete=False,
            release_args=_cov_release,
            prepare=_cov_prepare,
            logp=_cov_logp,
            seed="Ferrando et al. (2026) (Isserlis moments of the measured entries)",
        ),
        DistSpec(
            name="NoisySufficientStatistics",
            params=("beta", "sigma", "mu_x", "cov_x", "n", "scale", "intercept", "family", "shift"),
            rules={"sigma": "sigma must be > 0", "cov_x": "cov_x must be symmetric"},
            data=("n", "scale", "intercept", "family", "shift"),
            event_dim=1,
            discrete=False,
            release_args=_reg_release,
            prepare=_reg_prepare,
            logp=_reg_logp,
            seed="Bernstein & Sheldon (2019) (normal approximation of the sufficient statistics, exact moments)",
        ),
    )
}


def hypergeom_moments(bk: Backend, table: FisherTable, log_odds: Any, family: str, par: Any) -> tuple[Any, Any]:
    """``(E[T + D], Var[T + D])``: the exact window's mean and variance of ``T`` plus the noise variance."""
    mean, var = fisher_mean_var(bk, table, log_odds)
    return mean, var + noise_variance(bk, family, par)
