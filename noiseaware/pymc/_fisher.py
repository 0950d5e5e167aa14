r"""PyMC shells of the Fisher-table likelihoods (specs in :mod:`noiseaware._core._specs`).

:class:`NoisyHypergeom`, :class:`NoisyTwoWayTable` and :class:`CompositeCopulaLikelihood`
(Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula Correlations*, eqs.
17-18).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ._common import (  # isort: split
    NOISE_FAMILY_BY_CODE,
    PT,
    CountRV,
    as_float,
    checked,
    noise_family,
    observed_kwargs,
    pair_alpha_arg,
    param_batch,
    rv_sizes,
    scalar_int,
    shape_of,
    size_input,
    size_value,
    sized,
    sizes_guard,
    spec_draw,
)

import pymc as pm
import pytensor.tensor as pt

from .. import _core
from .._core import _specs
from .._validation import owned, owner_scope
from ..exceptions import NoiseawareValueError

__all__ = ["CompositeCopulaLikelihood", "NoisyHypergeom", "NoisyTwoWayTable"]

_HYP = _specs.SPECS["NoisyHypergeom"]
_TWO = _specs.SPECS["NoisyTwoWayTable"]
_CMP = _specs.SPECS["CompositeCopulaLikelihood"]


def _pair_r(R: Any, pairs: Any) -> Any:
    """The correlations ``R[..., j, k]`` of the constant ``pairs`` input, one per pair on the last axis.

    Tensors in ``logp`` and ``support_point``, arrays in ``rng_fn``.
    """
    while pairs.ndim > 2:  # a constant that PyTensor may have given batch dims
        pairs = pairs[0]
    return R[..., pairs[:, 0], pairs[:, 1]]


# --------------------------------------------------------------------------- NoisyHypergeom
class NoisyHypergeomRV(CountRV):
    """RandomVariable of :class:`NoisyHypergeom` (inputs ``N, K, m, log_odds, par, noise``)."""

    name = "noisy_hypergeom"
    signature = "(),(),(),(),(),()->()"

    @classmethod
    @owned("NoisyHypergeom")
    def rng_fn(
        cls, rng: np.random.Generator, N: Any, K: Any, m: Any, log_odds: Any, par: Any, noise: Any, size: Any
    ) -> np.ndarray:
        """``T`` by inversion on its mode window, plus a noise draw."""
        table = _core.fisher_table(*(rv_sizes(x) for x in (N, K, m)))
        shape = shape_of(size, log_odds, par, table.N)
        family = NOISE_FAMILY_BY_CODE[scalar_int(noise)]
        return spec_draw(_HYP, rng, shape, table=table, log_odds=log_odds, family=family, par=par)


noisy_hypergeom = NoisyHypergeomRV()


def _hyper_parts(N: Any, K: Any, m: Any, noise: Any) -> tuple[Any, str, dict[str, Any], dict[str, Any]]:
    sizes = {"N": N, "K": K, "m": m}
    vals = {k: size_value(k, x, 0)[0] for k, x in sizes.items()}
    table = _core.fisher_table(vals["N"], vals["K"], vals["m"])
    return table, noise_family(noise), sizes, vals


def _par_rule(family: str, par: Any) -> dict[str, Any]:
    if family == "geometric":
        return {"alpha": (par > 0, par < 1)}
    return {"sigma": par > 0}


@owned("NoisyHypergeom")
def _hyper_checked(
    what: Literal["logp", "logcdf"], value: Any, N: Any, K: Any, m: Any, log_odds: Any, par: Any, noise: Any
) -> Any:
    """The spec's ``logp`` or ``logcdf`` of :class:`NoisyHypergeom`, sizes guarded and parameter rules checked."""
    table, family, sizes, vals = _hyper_parts(N, K, m, noise)
    res = _HYP.part(what)(PT, value, table=table, log_odds=log_odds, family=family, par=par)
    return checked(sizes_guard(res, sizes, vals), _HYP.rules, _par_rule(family, par))


class NoisyHypergeom(pm.Discrete):
    r"""Noisy Fisher noncentral hypergeometric count ``T + D``.

    ``T`` is the number of marked balls among ``m`` drawn from an urn of ``N`` with ``K`` marked,
    with odds ratio ``exp(log_odds)`` (Fisher's noncentral hypergeometric law), and ``D`` is
    two-sided geometric noise (``alpha``) or discrete Gaussian noise (``sigma``):

    .. math:: P(\tilde T = y) = \sum_t \frac{\binom{K}{t}\binom{N-K}{m-t} e^{t\psi}}{\sum_s
              \binom{K}{s}\binom{N-K}{m-s} e^{s\psi}}\; g(y - t),

    the exact marginal of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference
    for Gaussian Copula Correlations*, eq. (17) with exact margins (so odd ``N`` is exact). Both sums
    run over static windows of ``O(sqrt N)`` terms at their modes, with a proven bound below 1e-13 on
    the relative dropped mass.

    Parameters
    ----------
    N, K, m : int
        Concrete integers (data).
    log_odds : tensor_like of float
    alpha : tensor_like of float, optional
        Geometric noise in (0, 1).
    sigma : tensor_like of float, optional
        Discrete Gaussian noise scale; give exactly one of ``alpha``, ``sigma``.

    Raises
    ------
    NoiseawareValueError
        Unless exactly one of ``alpha``, ``sigma`` is given, or for invalid sizes.

    Examples
    --------
    >>> import pymc as pm, noiseaware.pymc as nap
    >>> x = nap.NoisyHypergeom.dist(10, 5, 5, 0.0, alpha=0.5)
    >>> round(float(pm.logp(x, 2).eval()), 6)
    -1.497403
    """

    rv_op = noisy_hypergeom

    @classmethod
    def dist(  # type: ignore[override]
        cls, N: Any, K: Any, m: Any, log_odds: Any, alpha: Any = None, *, sigma: Any = None, **kwargs: Any
    ) -> Any:
        """Build the random variable; ``N``, ``K``, ``m`` are checked at once."""
        owner = cls.__name__
        with owner_scope(owner):
            family, par = _specs.noise_choice(alpha, sigma)
            inputs = [size_input(k, x, 0) for k, x in (("N", N), ("K", K), ("m", m))]
            _core.fisher_table(*(val for _, val in inputs))  # validates N, K, m together
            code = pt.constant(_specs.NOISE_CODES[family], dtype="int64")
            return super().dist([*(t for t, _ in inputs), as_float(log_odds), as_float(par), code], **kwargs)

    def support_point(rv: Any, size: Any, N: Any, K: Any, m: Any, log_odds: Any, par: Any, noise: Any) -> Any:
        """``round(m K / N)`` (the central mean), broadcast."""
        return sized(size, _specs.hypergeom_support_point(PT, N, K, m, log_odds, par), dtype="int64")

    def logp(value: Any, N: Any, K: Any, m: Any, log_odds: Any, par: Any, noise: Any) -> Any:
        """Exact log-pmf (windowed sums); ``-inf`` off the integers."""
        return _hyper_checked("logp", value, N, K, m, log_odds, par, noise)

    def logcdf(value: Any, N: Any, K: Any, m: Any, log_odds: Any, par: Any, noise: Any) -> Any:
        """Exact log-CDF (windowed sum; geometric noise only, so ``pm.Censored`` works)."""
        return _hyper_checked("logcdf", value, N, K, m, log_odds, par, noise)

    @classmethod
    def from_release(
        cls, name: str, release: Any, log_odds: Any, N: Any = None, K: Any = None, m: Any = None, **kwargs: Any
    ) -> Any:
        """Observed ``NoisyHypergeom`` with noise and values from the release (``N, K, m`` too for median_pairs)."""
        with owner_scope(cls.__name__):
            args, values = _HYP.release_args(release, N, K, m)
        batch = param_batch(log_odds, *args.values())
        return cls(name, log_odds=log_odds, **args, **observed_kwargs(values, kwargs, batch))


# --------------------------------------------------------------------------- NoisyTwoWayTable
class NoisyTwoWayTableRV(CountRV):
    """RandomVariable of :class:`NoisyTwoWayTable` (inputs ``r, n, alpha``)."""

    name = "noisy_two_way_table"
    signature = "(),(),()->()"

    @classmethod
    @owned("NoisyTwoWayTable")
    def rng_fn(cls, rng: np.random.Generator, r: Any, n: Any, alpha: Any, size: Any) -> np.ndarray:
        """Median-split count by inversion plus geometric noise."""
        nn = rv_sizes(n)
        shape = shape_of(size, r, alpha, nn)
        return spec_draw(_TWO, rng, shape, table=_core.median_split_table(nn), r=r, alpha=alpha)


noisy_two_way_table = NoisyTwoWayTableRV()


def _median_split(spec: Any, what: Literal["logp", "logcdf"], value: Any, r: Any, n: Any, alpha: Any) -> Any:
    """``spec``'s ``what`` for the median-split counts of correlations ``r`` (one table per pair for an event).

    ``n`` is guarded: a ``pm.Data`` size that changes after the graph is built raises.
    """
    with owner_scope(spec.name):
        nn = size_value("n", n, 1)[0]
        table = _core.median_split_table(nn, per_pair=spec.event_dim > 0)
        return sizes_guard(spec.part(what)(PT, value, table=table, r=r, alpha=alpha), {"n": n}, {"n": nn})


def _two_way_checked(what: Literal["logp", "logcdf"], value: Any, r: Any, n: Any, alpha: Any) -> Any:
    """The spec's ``logp`` or ``logcdf`` of :class:`NoisyTwoWayTable`, ``n`` guarded and parameter rules checked."""
    res = _median_split(_TWO, what, value, r, n, alpha)
    return checked(res, _TWO.rules, {"r": (r > -1, r < 1), "alpha": (alpha > 0, alpha < 1)})


class NoisyTwoWayTable(pm.Discrete):
    r"""Noisy high-high count of the median-split 2x2 table of a Gaussian-copula pair.

    ``NoisyHypergeom(N=n, K=ceil(n/2), m=ceil(n/2), log_odds=psi(r), alpha)`` with

    .. math:: \psi(r) = 2\log\frac{\pi + 2\arcsin r}{\pi - 2\arcsin r},

    Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
    Correlations*, eqs. (7)-(10) and (17) (odd ``n``: ``(n+1)/2`` records above the median, §3.1).

    Parameters
    ----------
    r : tensor_like of float
        Copula correlation in (-1, 1).
    n : int
        Number of records (concrete).
    alpha : tensor_like of float, optional
        Geometric noise in (0, 1) (``release.mechanism.alpha``); or give ``epsilon_per_pair``.
    epsilon_per_pair : tensor_like of float, optional
        The budget of this pair's count: ``alpha = exp(-epsilon_per_pair)``. Not the total
        ``epsilon`` of ``privatize``, which is split over the ``p(p-1)/2`` pairs; ``epsilon=``
        is refused for that reason.

    Raises
    ------
    NoiseawareTypeError
        For ``epsilon=`` (the total budget).

    Examples
    --------
    >>> import pymc as pm, noiseaware.pymc as nap
    >>> round(float(pm.logp(nap.NoisyTwoWayTable.dist(0.5, 100, epsilon_per_pair=1.0), 33).eval()), 4)
    -1.9208
    """

    rv_op = noisy_two_way_table

    @classmethod
    def dist(  # type: ignore[override]
        cls, r: Any, n: Any, alpha: Any = None, *, epsilon_per_pair: Any = None, epsilon: Any = None, **kwargs: Any
    ) -> Any:
        """Build the random variable; ``n`` is checked at once."""
        with owner_scope(cls.__name__):
            alpha = pair_alpha_arg(alpha, epsilon_per_pair, epsilon)
            n_in, _ = size_input("n", n, 1)
            return super().dist([as_float(r), n_in, alpha], **kwargs)

    def support_point(rv: Any, size: Any, r: Any, n: Any, alpha: Any) -> Any:
        """``round(n (1/4 + arcsin(r) / (2 pi)))`` clipped to ``[0, ceil(n/2)]``, the approximate mean count."""
        return sized(size, _specs.two_way_support_point(PT, r, n, alpha), dtype="int64")

    def logp(value: Any, r: Any, n: Any, alpha: Any) -> Any:
        """Exact log-pmf; ``-inf`` off the integers."""
        return _two_way_checked("logp", value, r, n, alpha)

    def logcdf(value: Any, r: Any, n: Any, alpha: Any) -> Any:
        """Exact log-CDF (windowed sum), so ``pm.Censored`` works."""
        return _two_way_checked("logcdf", value, r, n, alpha)

    @classmethod
    def from_release(cls, name: str, release: Any, r: Any, **kwargs: Any) -> Any:
        """Observed counts of a geometric ``median_pairs`` release (``n``, ``alpha`` from it).

        ``r`` must broadcast to the release's ``p(p-1)/2`` pairs. Raises ``ValueError`` for other
        statistics or mechanisms (e.g. TGM).
        """
        with owner_scope(cls.__name__):
            args, values = _TWO.release_args(release)
        return cls(name, r=r, **args, **observed_kwargs(values, kwargs, param_batch(r, *args.values())))


# --------------------------------------------------------------------------- Composite
class CompositeCopulaLikelihoodRV(CountRV):
    """RandomVariable of :class:`CompositeCopulaLikelihood` (inputs ``R, n, alpha[k], pairs[k, 2]``)."""

    name = "composite_copula_likelihood"
    signature = "(p,p),(),(k),(k,two)->(k)"

    @classmethod
    @owned("NoisyTwoWayTable")
    def rng_fn(cls, rng: np.random.Generator, R: Any, n: Any, alpha: Any, pairs: Any, size: Any) -> np.ndarray:
        """Independent draws per pair from the :class:`NoisyTwoWayTable` laws."""
        nn = rv_sizes(n)
        table = _core.median_split_table(nn, per_pair=True)
        r = _pair_r(np.asarray(R), np.asarray(pairs))
        shape = shape_of(size, r, alpha, table.N) if size is None else (*tuple(size), r.shape[-1])
        return spec_draw(_CMP, rng, shape, table=table, r=r, alpha=alpha)


composite_copula_likelihood = CompositeCopulaLikelihoodRV()


class CompositeCopulaLikelihood(pm.Discrete):
    r"""Pairwise composite likelihood of a Gaussian-copula correlation matrix, Wang et al. (2026) eq. (18).

    .. math:: f_{CL}(\tilde{\mathcal T}\mid R) = \prod_{j<j'} P(\tilde T_{jj'} = \tilde t_{jj'}\mid R_{jj'}),

    each factor the :class:`NoisyTwoWayTable` law, all pairs in one batched call; draws are
    independent across pairs (the composite model). The value is the vector of the ``k`` noisy
    counts in the order of ``pairs`` (default: the row-major upper triangle,
    ``numpy.triu_indices(p, 1)``, the order of a ``"median_pairs"`` release).

    The default order is also that of the packed upper triangle PyMC 5's ``pm.LKJCorr`` returned. For
    ``R``, use ``L @ L.T`` of PyMC 6's ``pm.LKJCorr`` (a Cholesky factor) or the correlation matrix of
    ``pm.LKJCholeskyCov``.

    Parameters
    ----------
    R : tensor_like, shape (..., p, p)
        Correlation matrix (``p`` must be static).
    n : int
    alpha : tensor_like of float, optional
        Scalar or shape ``(k,)`` (``release.mechanism.alpha``); or give ``epsilon_per_pair``.
    pairs : array_like of int, shape (k, 2), optional
    epsilon_per_pair : tensor_like of float, optional
        Each pair's budget, ``alpha = exp(-epsilon_per_pair)``; ``privatize``'s total
        ``epsilon`` is ``k`` times it (``epsilon=`` is refused so the two cannot be confused).

    Raises
    ------
    NoiseawareValueError
        For ``R`` without a static ``(p, p)`` shape, or bad ``pairs`` (a ``(k, 2)`` array of
        distinct column indices in ``[0, p)``).

    Examples
    --------
    >>> import numpy as np, pymc as pm, noiseaware.pymc as nap
    >>> R = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.0]])
    >>> x = nap.CompositeCopulaLikelihood.dist(R, 100, alpha=0.5)  # one noisy count per pair
    >>> x.type.shape, round(float(pm.logp(x, np.array([33, 25, 28])).eval()), 6)
    ((3,), -6.094574)
    """

    rv_op = composite_copula_likelihood

    @classmethod
    def dist(  # type: ignore[override]
        cls,
        R: Any,
        n: Any,
        alpha: Any = None,
        *,
        pairs: Any = None,
        epsilon_per_pair: Any = None,
        epsilon: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Build the random variable; ``n`` and ``pairs`` are checked at once."""
        owner = cls.__name__
        with owner_scope(owner):
            alpha = pair_alpha_arg(alpha, epsilon_per_pair, epsilon)
            R = as_float(R)
            p = R.type.shape[-1] if R.ndim >= 2 else None
            if p is None or R.type.shape[-2] != p or p < 2:
                raise NoiseawareValueError(
                    f"{owner}: R must have a static shape (..., p, p) with p >= 2; got type {R.type}."
                )
            n_in, _ = size_input("n", n, 1)
            pairs_arr = np.stack(_specs.composite_pairs(p, pairs), axis=1)
            k = pairs_arr.shape[0]
            shape = (*tuple(alpha.shape)[:-1], k) if alpha.ndim else (k,)
            alpha = pt.broadcast_to(alpha, shape)
            return super().dist([R, n_in, alpha, pt.constant(pairs_arr)], **kwargs)

    def support_point(rv: Any, size: Any, R: Any, n: Any, alpha: Any, pairs: Any) -> Any:
        """Approximate mean counts per pair."""
        mean = _specs.two_way_support_point(PT, _pair_r(R, pairs), n, alpha)
        return sized(size, mean, (mean.shape[-1],), dtype="int64")

    def logp(value: Any, R: Any, n: Any, alpha: Any, pairs: Any) -> Any:
        """Sum over pairs of the exact pairwise log-pmfs."""
        r = _pair_r(R, pairs)
        lp = _median_split(_CMP, "logp", value, r, n, alpha)
        return checked(
            lp,
            _CMP.rules,
            {"R": pt.all(pt.abs(r) < 1, axis=-1), "alpha": (pt.all(alpha > 0, axis=-1), pt.all(alpha < 1, axis=-1))},
        )

    @classmethod
    def from_release(cls, name: str, release: Any, R: Any, **kwargs: Any) -> Any:
        """Observed counts of a geometric ``median_pairs`` release (``n``, ``alpha``, ``pairs`` from it)."""
        with owner_scope(cls.__name__):
            args, values = _CMP.release_args(release)
        p = args.pop("p")
        R = pt.as_tensor_variable(R)
        with owner_scope(cls.__name__):
            _specs.check_release_p(p, R.type.shape[-1])
            return cls(name, R=R, **args, **observed_kwargs(values, kwargs))
