r"""NumPyro shells of the Fisher-table likelihoods (specs in :mod:`noiseaware._core._specs`).

:class:`NoisyHypergeom`, :class:`NoisyTwoWayTable` and :class:`CompositeCopulaLikelihood`
(Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula Correlations*, eqs.
17-18).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ._common import (
    BK,
    INT,
    RELEASE_VALUES,
    f64,
    fisher_draw,
    integer,
    noise_from_key,
    observe,
    pair_alpha_arg,
    promote_batch_shape_optional,
    spec_logp,
    uniform,
)  # isort: split

import jax.numpy as jnp
import numpy as np
from jax import lax, random
from numpyro.distributions import constraints
from numpyro.distributions.batch_util import promote_batch_shape
from numpyro.distributions.distribution import Distribution
from numpyro.distributions.util import validate_sample

from .. import _core
from .._core import _specs
from .._validation import owner_scope
from ..exceptions import NoiseawareValueError

__all__ = ["CompositeCopulaLikelihood", "NoisyHypergeom", "NoisyTwoWayTable"]

_HYP = _specs.SPECS["NoisyHypergeom"]
_TWO = _specs.SPECS["NoisyTwoWayTable"]
_CMP = _specs.SPECS["CompositeCopulaLikelihood"]


class _FisherCount(Distribution):
    """Counts ``T + D``: ``T`` Fisher's noncentral hypergeometric on ``self.table``, ``D`` integer noise.

    The draws, mean and variance the Fisher-table laws share; a subclass gives
    :meth:`_count_law`, the log-odds, noise family and noise parameter of its counts.
    """

    table: Any

    def _count_law(self) -> tuple[Any, str, Any]:
        raise NotImplementedError

    def sample(self, key: Any, sample_shape: tuple[int, ...] = ()) -> Any:
        """``T`` by inversion on its mode window, plus an independent noise draw, per count."""
        log_odds, family, par = self._count_law()
        shape = sample_shape + self.batch_shape + self.event_shape
        k1, k2 = random.split(key)
        t = fisher_draw(self.table, jnp.broadcast_to(log_odds, shape), uniform(k1, shape))
        return (t + noise_from_key(k2, family, par, shape)).astype(INT)

    def _moments(self) -> tuple[Any, Any]:
        log_odds, family, par = self._count_law()
        mean, var = _specs.hypergeom_moments(BK, self.table, log_odds, family, par)
        shape = self.batch_shape + self.event_shape
        return jnp.broadcast_to(mean, shape), jnp.broadcast_to(var, shape)

    @property
    def mean(self) -> Any:
        """``E[T]`` per count (the noise has mean 0), from the exact mode window."""
        return self._moments()[0]

    @property
    def variance(self) -> Any:
        """``Var[T]`` plus the noise variance per count, from the exact mode window (the counts are independent)."""
        return self._moments()[1]


class NoisyHypergeom(_FisherCount):
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
    N, K, m : int or array_like of int
        Urn size, marked balls, balls drawn: concrete data (they fix a table computed once;
        traced sizes are refused). Arrays give a batch of urns of different sizes, broadcast
        with ``log_odds``; every window is padded to the largest urn's.
    log_odds : array_like of float
    alpha : array_like of float, optional
        Geometric noise parameter in (0, 1).
    sigma : array_like of float, optional
        Discrete Gaussian noise scale; give exactly one of ``alpha``, ``sigma``.
    validate_args : bool, optional

    Examples
    --------
    >>> import noiseaware.numpyro as nan
    >>> d = nan.NoisyHypergeom(10, 5, 5, 0.0, alpha=0.5)
    >>> round(float(d.log_prob(2)), 6)
    -1.497403
    """

    arg_constraints: ClassVar[dict[str, Any]] = {
        "log_odds": constraints.real,
        "alpha": constraints.open_interval(0.0, 1.0),
        "sigma": constraints.positive,
    }
    support = integer
    pytree_aux_fields: tuple[str, ...] = ("table", "noise")

    def __init__(
        self,
        N: Any,
        K: Any,
        m: Any,
        log_odds: Any,
        alpha: Any = None,
        *,
        sigma: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        owner = type(self).__name__
        with owner_scope(owner):
            self.noise, par = _specs.noise_choice(alpha, sigma)
            self.table = _specs.hypergeom_table(N, K, m)
            self.log_odds = f64(log_odds)
            par = f64(par)
            if self.noise == "geometric":
                self.alpha, self.sigma = par, None
            else:
                self.alpha, self.sigma = None, par
            batch_shape = lax.broadcast_shapes(jnp.shape(self.log_odds), jnp.shape(par), self.table.shape)
            super().__init__(batch_shape=batch_shape, validate_args=validate_args)

    @property
    def _par(self) -> Any:
        return self.alpha if self.noise == "geometric" else self.sigma

    def _count_law(self) -> tuple[Any, str, Any]:
        return self.log_odds, self.noise, self._par

    def get_args(self) -> dict[str, Any]:
        """Arguments that are set (``alpha`` or ``sigma``, not both)."""
        return {k: val for k, val in super().get_args().items() if val is not None}

    @validate_sample
    def log_prob(self, value: Any) -> Any:
        """Exact log-pmf (windowed sums); ``-inf`` for non-integers."""
        params = {"log_odds": self.log_odds, "par": self._par}
        return spec_logp("NoisyHypergeom", self.table, (("family", self.noise),), value, params)

    def log_cdf(self, value: Any) -> Any:
        """``log P(T + D <= value)``, exact windowed sum (geometric noise only).

        Raises ``NotImplementedError`` for discrete Gaussian noise, whose CDF has no closed form
        (a windowed sum would need ``O(sigma)`` terms).
        """
        return _HYP.part("logcdf")(
            BK, value, table=self.table, log_odds=self.log_odds, family=self.noise, par=self._par
        )

    def cdf(self, value: Any) -> Any:
        """``P(T + D <= value)`` (geometric noise only; see :meth:`log_cdf`)."""
        return jnp.exp(self.log_cdf(value))

    @classmethod
    def from_release(
        cls,
        name: str,
        release: Any,
        log_odds: Any,
        N: Any = None,
        K: Any = None,
        m: Any = None,
        *,
        obs: Any = RELEASE_VALUES,
        **kwargs: Any,
    ) -> Any:
        """Observe ``release.values`` with noise (alpha or sigma) read from the release.

        For a ``median_pairs`` release ``N = n`` and ``K = m = ceil(n/2)`` are read too.
        ``obs=None`` leaves the site unobserved, shaped like the release (for ``Predictive``).
        """
        with owner_scope(cls.__name__):
            args, values = _HYP.release_args(release, N, K, m)
        return observe(name, cls(log_odds=log_odds, **args, **kwargs), values, obs)


promote_batch_shape.register(NoisyHypergeom, promote_batch_shape_optional)


class NoisyTwoWayTable(NoisyHypergeom):
    r"""Noisy high-high count of the median-split 2x2 table of a Gaussian-copula pair.

    ``NoisyHypergeom(N=n, K=ceil(n/2), m=ceil(n/2), log_odds=psi(r), alpha)`` with

    .. math:: \psi(r) = 2\log\frac{\pi + 2\arcsin r}{\pi - 2\arcsin r},

    Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
    Correlations*, eqs. (7)-(10) and (17) (odd ``n``: ``(n+1)/2`` records above the median, §3.1).

    Parameters
    ----------
    r : array_like of float
        Copula correlation in (-1, 1).
    n : int or array_like of int
        Number of records; an array gives one ``n`` per table (e.g. counties of different
        sizes), broadcast with ``r``. Concrete (not traced under ``jit``).
    alpha : array_like of float
        Geometric noise parameter in (0, 1) (``release.mechanism.alpha``); or give
        ``epsilon_per_pair``.
    epsilon_per_pair : array_like of float, optional
        The budget of this pair's count: ``alpha = exp(-epsilon_per_pair)``. Not the total
        ``epsilon`` of ``privatize``, which is split over the ``p(p-1)/2`` pairs; ``epsilon=``
        is refused for that reason.
    validate_args : bool, optional

    Examples
    --------
    >>> import noiseaware.numpyro as nan
    >>> round(float(nan.NoisyTwoWayTable(0.5, 100, epsilon_per_pair=1.0).log_prob(33)), 4)
    -1.9208
    """

    arg_constraints: ClassVar[dict[str, Any]] = {
        "r": constraints.open_interval(-1.0, 1.0),
        "alpha": constraints.open_interval(0.0, 1.0),
    }
    pytree_data_fields = ("r", "alpha", "log_odds")
    pytree_aux_fields: tuple[str, ...] = ("table", "noise", "n")

    def __init__(
        self,
        r: Any,
        n: Any,
        alpha: Any = None,
        *,
        epsilon_per_pair: Any = None,
        epsilon: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        owner = type(self).__name__
        with owner_scope(owner):
            alpha = pair_alpha_arg(alpha, epsilon_per_pair, epsilon)
            self.n = _core.concrete_sizes("n", n, minimum=1)
            self.r = f64(r)
            N, K, m = _specs.median_split_sizes(self.n)
            super().__init__(N, K, m, _core.copula_log_odds(BK, self.r), alpha=alpha, validate_args=validate_args)

    @classmethod
    def from_release(  # type: ignore[override]
        cls, name: str, release: Any, r: Any, *, obs: Any = RELEASE_VALUES, **kwargs: Any
    ) -> Any:
        """Observe the counts of a geometric ``median_pairs`` release (``n``, ``alpha`` from it).

        ``r`` must broadcast to the release's ``p(p-1)/2`` pairs. ``obs=None`` leaves the site
        unobserved, shaped like the release (for ``Predictive``). Raises ``ValueError`` for
        other statistics or mechanisms (e.g. TGM).
        """
        with owner_scope(cls.__name__):
            args, values = _TWO.release_args(release)
        return observe(name, cls(r, **args, **kwargs), values, obs)


class CompositeCopulaLikelihood(_FisherCount):
    r"""Pairwise composite likelihood of a Gaussian-copula correlation matrix, Wang et al. (2026) eq. (18).

    .. math:: f_{CL}(\tilde{\mathcal T}\mid R) = \prod_{j<j'} P(\tilde T_{jj'} = \tilde t_{jj'}\mid R_{jj'}),

    each factor the :class:`NoisyTwoWayTable` law, all pairs in one batched call; draws are
    independent across pairs (the composite model). The value is the vector of the ``k`` noisy
    counts in the order of ``pairs`` (default: the row-major upper triangle,
    ``numpy.triu_indices(p, 1)``, the order of a ``"median_pairs"`` release).

    Use with ``LKJCholesky``: ``R = L @ L.T``.

    Parameters
    ----------
    R : array_like, shape (..., p, p)
        Correlation matrix.
    n : int or array_like of int
        Number of records; an array gives one ``n`` per correlation matrix of the batch.
    alpha : array_like of float
        Scalar or one per pair, shape ``(k,)`` (``release.mechanism.alpha``); or give
        ``epsilon_per_pair``.
    pairs : array_like of int, shape (k, 2), optional
    epsilon_per_pair : array_like of float, optional
        Each pair's budget, ``alpha = exp(-epsilon_per_pair)``; ``privatize``'s total
        ``epsilon`` is ``k`` times it (``epsilon=`` is refused so the two cannot be confused).
    validate_args : bool, optional

    Examples
    --------
    >>> import numpy as np, noiseaware.numpyro as nan
    >>> R = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.0]])
    >>> d = nan.CompositeCopulaLikelihood(R, 100, alpha=0.5)
    >>> d.event_shape
    (3,)
    """

    arg_constraints: ClassVar[dict[str, Any]] = {
        "R": constraints.corr_matrix,
        "alpha": constraints.open_interval(0.0, 1.0),
    }
    support = constraints.independent(integer, 1)
    pytree_aux_fields = ("table", "n", "p", "iu", "ju")

    def __init__(
        self,
        R: Any,
        n: Any,
        alpha: Any = None,
        *,
        pairs: Any = None,
        epsilon_per_pair: Any = None,
        epsilon: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        owner = type(self).__name__
        with owner_scope(owner):
            self.alpha = pair_alpha_arg(alpha, epsilon_per_pair, epsilon)
            self.R = f64(R)
            if self.R.ndim < 2 or self.R.shape[-1] != self.R.shape[-2] or self.R.shape[-1] < 2:
                raise NoiseawareValueError(
                    f"{owner}: R must have shape (..., p, p) with p >= 2; got shape {self.R.shape}."
                )
            self.p = int(self.R.shape[-1])
            self.n = _core.concrete_sizes("n", n, minimum=1)
            # one n per element of the batch: the table gets a trailing axis to broadcast over pairs
            self.table = _core.median_split_table(self.n, per_pair=True)
            self.iu, self.ju = _specs.composite_pairs(self.p, pairs)
            k = self.iu.size
            if jnp.ndim(self.alpha) > 0 and jnp.shape(self.alpha)[-1] not in (1, k):
                raise NoiseawareValueError(
                    f"{owner}: alpha must be a scalar or have last axis of length k = {k}; "
                    f"got shape {jnp.shape(self.alpha)}."
                )
            batch_shape = lax.broadcast_shapes(self.R.shape[:-2], jnp.shape(self.alpha)[:-1], np.shape(self.n))
            super().__init__(batch_shape=batch_shape, event_shape=(k,), validate_args=validate_args)

    @classmethod
    def infer_shapes(cls, R: tuple[int, ...] = (), alpha: tuple[int, ...] = (), **kwargs: Any) -> tuple[Any, Any]:
        """``(batch_shape, event_shape)`` from the shapes of ``R`` (..., p, p) and ``alpha``, default pairs."""
        p = R[-1]
        batch = lax.broadcast_shapes(tuple(R[:-2]), tuple(alpha[:-1]))
        return batch, (p * (p - 1) // 2,)

    def _pair_params(self) -> tuple[Any, Any]:
        r = self.R[..., self.iu, self.ju]
        return r, jnp.broadcast_to(self.alpha, self.batch_shape + self.event_shape)

    def _count_law(self) -> tuple[Any, str, Any]:
        r, alpha = self._pair_params()
        return _core.copula_log_odds(BK, r), "geometric", alpha

    @validate_sample
    def log_prob(self, value: Any) -> Any:
        """Sum over pairs of the exact pairwise log-pmfs."""
        r, alpha = self._pair_params()
        return spec_logp("CompositeCopulaLikelihood", self.table, (), value, {"r": r, "alpha": alpha})

    @classmethod
    def from_release(cls, name: str, release: Any, R: Any, *, obs: Any = RELEASE_VALUES, **kwargs: Any) -> Any:
        """Observe all pairs of a geometric ``median_pairs`` release (``n``, ``alpha``, ``pairs`` from it).

        ``obs=None`` leaves the site unobserved (for ``Predictive``).
        """
        with owner_scope(cls.__name__):
            args, values = _CMP.release_args(release)
        p = args.pop("p")
        with owner_scope(cls.__name__):
            _specs.check_release_p(p, jnp.shape(R)[-1])
            return observe(name, cls(R, **args, **kwargs), values, obs)
