r"""PyMC shell of :class:`Noisy`, the noisy version of any discrete base (math in :mod:`noiseaware._core._noisy`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import PT, check_integer_observed, const_float, const_int, noise_family, observed_kwargs  # isort: split

import pytensor
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters
from pymc.distributions.distribution import Distribution, SymbolicRandomVariable, _support_point, support_point
from pymc.distributions.shape_utils import _change_dist_size, change_dist_size, rv_size_is_none
from pymc.logprob.abstract import _logcdf, _logprob
from pymc.logprob.basic import logcdf as _pm_logcdf
from pymc.logprob.basic import logp as _pm_logp
from pytensor.tensor.random.op import RandomVariable
from pytensor.tensor.random.utils import normalize_size_param

from .._core import _noisy, _specs
from .._core._pytensor_compat import rv_with_next_rng
from .._validation import current_owner, owned, owner_scope
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ._integer import discrete_gaussian, two_sided_geometric

__all__ = ["Noisy"]

_SPEC = _specs.SPECS["Noisy"]


@owned("Noisy")
def _noisy_spec(code: Any, par: Any, tol: Any) -> Any:
    fam = noise_family(code)
    noise = {"family": fam, _noisy.FAMILIES[fam]: const_float("par", par)}
    spec, _ = _noisy.noise_spec(noise, tol=const_float("tol", tol))
    return spec


def _support_bounds(base: Any) -> tuple[Any, Any]:
    """Known support ``[lower, upper]`` of a scalar discrete base (``-inf``/``inf`` when unknown)."""
    from pymc.distributions.discrete import DiscreteUniformRV
    from pymc.distributions.distribution import DiracDeltaRV
    from pymc.distributions.mixture import MixtureRV
    from pytensor.tensor.random import basic as rb

    node = base.owner
    op = node.op
    params = op.dist_params(node)
    inf = pt.constant(np.inf)
    if isinstance(op, rb.PoissonRV | rb.NegBinomialRV):
        return pt.constant(0.0), inf
    if isinstance(op, rb.GeometricRV):
        return pt.constant(1.0), inf
    if isinstance(op, rb.BinomialRV | rb.BetaBinomialRV):
        return pt.constant(0.0), params[0]
    if isinstance(op, rb.CategoricalRV):
        return pt.constant(0.0), params[0].shape[-1] - 1.0
    if isinstance(op, DiscreteUniformRV):
        return params[0], params[1]
    if isinstance(op, DiracDeltaRV):
        return params[0], params[0]
    if isinstance(op, MixtureRV):
        bounds = [_support_bounds(c) for c in params[1:]]
        lo = bounds[0][0]
        hi = bounds[0][1]
        for b_lo, b_hi in bounds[1:]:
            lo, hi = pt.minimum(lo, b_lo), pt.maximum(hi, b_hi)
        return lo, hi
    return -inf, inf


class NoisyRV(SymbolicRandomVariable):
    """SymbolicRandomVariable of :class:`Noisy`: inputs ``rng, base, noise code, par, tol``."""

    inline_logprob = False
    _print_name = ("Noisy", "\\operatorname{Noisy}")

    @classmethod
    @owned("Noisy")
    def rv_op(cls, dist: Any, code: Any, par: Any, tol: Any, *, size: Any = None) -> Any:
        """``dist + D`` with ``D`` drawn by the noise registry's random variable (its own rng)."""
        from pymc.distributions.shape_utils import implicit_size_from_params

        size = normalize_size_param(size)
        if rv_size_is_none(size):  # as pm.Censored: always a resized clone, independent of `dist`
            size = implicit_size_from_params(dist, ndims_params=[dist.owner.op.ndim_supp])
        dist = change_dist_size(dist, size)
        code, par, tol = (pt.as_tensor_variable(x) for x in (code, par, tol))
        fam = noise_family(code)
        noise_op = two_sided_geometric if fam == "geometric" else discrete_gaussian
        rng = pytensor.shared(np.random.default_rng())
        next_rng, noise = rv_with_next_rng(noise_op, 0, par, size=dist.shape, rng=rng)
        out = pt.cast(dist + noise, "int64")
        core = "(k)" if dist.owner.op.ndim_supp == 1 else "()"
        return cls(
            inputs=[rng, dist, code, par, tol],
            outputs=[next_rng, out],
            extended_signature=f"[rng],{core},(),(),()->[rng],{core}",
        )(rng, dist, code, par, tol)

    def update(self, node: Any) -> dict[Any, Any]:
        """The noise draw's rng update."""
        return {node.inputs[0]: node.outputs[0]}


@_change_dist_size.register(NoisyRV)
def _noisy_change_size(op: Any, dist: Any, new_size: Any, expand: bool = False) -> Any:
    _, base, code, par, tol = dist.owner.inputs
    if expand:
        batch = tuple(base.shape)[: base.ndim - base.owner.op.ndim_supp]
        new_size = tuple(new_size) + batch
    return NoisyRV.rv_op(base, code, par, tol, size=new_size)


@_support_point.register(NoisyRV)
def _noisy_support_point(op: Any, rv: Any, rng: Any, base: Any, code: Any, par: Any, tol: Any) -> Any:
    return pt.cast(support_point(base), "int64")


@_logprob.register(NoisyRV)
@owned("Noisy")
def _noisy_logprob(op: Any, values: Any, rng: Any, base: Any, code: Any, par: Any, tol: Any, **kwargs: Any) -> Any:
    (value,) = values
    spec = _noisy_spec(code, par, tol)
    if base.owner.op.ndim_supp == 1:
        n, p = base.owner.op.dist_params(base.owner)
        N = const_int("n", n)
        res = _noisy.noisy_multinomial_logpmf(PT, spec, value, pt.log(p), N)
        return check_parameters(
            res, pt.all(p >= 0, axis=-1), pt.isclose(pt.sum(p, axis=-1), 1), msg="p >= 0, sum(p) == 1"
        )
    lo, hi = _support_bounds(base)
    return _noisy.noisy_logpmf(PT, spec, value, lambda k: _pm_logp(base, k, warn_rvs=False), lo, hi)


@_logcdf.register(NoisyRV)
def _noisy_logcdf(op: Any, value: Any, rng: Any, base: Any, code: Any, par: Any, tol: Any, **kwargs: Any) -> Any:
    if base.owner.op.ndim_supp != 0:
        raise NotImplementedError("Noisy: logcdf is defined for scalar bases only (not Multinomial).")
    spec = _noisy_spec(code, par, tol)
    return _noisy.noisy_logcdf(PT, spec, value, lambda v_: _pm_logcdf(base, v_, warn_rvs=False))


class Noisy(Distribution):
    r"""The noisy version ``Y = X + D`` of a discrete PyMC distribution ``X`` (cf. ``pm.Censored``).

    ``D`` is independent two-sided geometric (``alpha``) or discrete Gaussian (``sigma``) noise,
    one draw per cell, as added by the geometric / discrete Gaussian mechanisms to released
    counts. The log-pmf is the exact convolution

    .. math:: \log P(Y = y) = \operatorname{logsumexp}_k\,[\log P(X = k) + \log g(y - k)]

    over a window of ``2w + 1`` latent counts around ``y`` (shifted into the base's support),
    ``w`` fixed by the concrete noise parameter and ``tol``: relative error at most ``tol`` for
    every observation with ``log p(y) >= -40`` and for any base law, with a proven bound
    (``docs/noisy.md``). A multinomial base (noise on each of its ``K`` cells) is summed exactly
    over the simplex by a dynamic programme, ``O(K (N+1)^2)`` per observation, refused for
    ``N > 999``.

    Draws are a base draw plus a noise draw, so prior and posterior predictive sampling work;
    ``logcdf`` is available for scalar bases that have one.

    Parameters
    ----------
    dist : unnamed distribution
        A discrete base created with ``.dist()`` (``pm.Poisson``, ``pm.Binomial``,
        ``pm.NegativeBinomial``, ``pm.ZeroInflatedPoisson``, ``pm.BetaBinomial``,
        ``pm.Categorical``, ``pm.Multinomial``, ...); its parameters get gradients. It is
        resized, like ``pm.Censored``'s, so it becomes independent of the variable passed.
    noise : mapping or Release, optional
        ``{"family": "geometric", "alpha": a}`` (or ``"epsilon"`` and ``"sensitivity"``),
        ``{"family": "discrete_gaussian", "sigma": s}``, or a ``"counts"``
        :class:`~noiseaware.Release` (its mechanism's ``alpha`` / ``sigma``).
    alpha, sigma, epsilon : float, optional
        Shortcuts for ``noise``; give exactly one of ``noise``, ``alpha``, ``sigma``, ``epsilon``
        (``alpha = exp(-epsilon / sensitivity)``). Concrete numbers (they fix the window).
    sensitivity : float, default 1
    tol : float, default 1e-12

    Raises
    ------
    TypeError
        If ``dist`` is not a distribution made with ``.dist()``, or ``noise`` has the wrong type.
    ValueError
        For a continuous or multivariate (non-multinomial) base, ``alpha`` outside (0, 1),
        ``sigma <= 0``, a release of another statistic or mechanism, or a multinomial whose
        ``n`` is symbolic or above 999; ``observed`` data that are not integer counts (PyMC
        would truncate ``3.5`` to ``3``; NaN marks a missing value); ``alpha`` below
        ``MIN_ALPHA`` (``epsilon / sensitivity`` above about 708.4) or ``sigma`` below
        ``MIN_SIGMA``, where the noise is negligible and the
        base distribution alone is the model.

    Examples
    --------
    >>> import pymc as pm, noiseaware.pymc as nap
    >>> y = nap.Noisy.dist(pm.Poisson.dist(2.0), alpha=0.5)
    >>> round(float(pm.logp(y, 3).eval()), 6)
    -1.883327
    """

    rv_type = NoisyRV
    rv_op = NoisyRV.rv_op

    def __new__(cls, name: str, *args: Any, observed: Any = None, **kwargs: Any) -> Any:
        """Register the variable; concrete ``observed`` counts must be integers (NaN: missing)."""
        with owner_scope(cls.__name__):
            check_integer_observed(observed)
            return super().__new__(cls, name, *args, observed=observed, **kwargs)

    @classmethod
    def dist(  # type: ignore[override]
        cls,
        dist: Any,
        noise: Any = None,
        *,
        alpha: Any = None,
        sigma: Any = None,
        epsilon: Any = None,
        sensitivity: Any = 1.0,
        tol: Any = _noisy.DEFAULT_TOL,
        **kwargs: Any,
    ) -> Any:
        """Build the random variable; the noise arguments are checked at once."""
        owner = cls.__name__
        with owner_scope(owner):
            spec, _ = _noisy.noise_spec(
                noise, alpha=alpha, sigma=sigma, epsilon=epsilon, sensitivity=sensitivity, tol=tol
            )
            _check_noisy_base(dist)
            consts = [
                pt.constant(_specs.NOISE_CODES[spec.family], dtype="int64"),
                pt.constant(spec.par, dtype="float64"),
                pt.constant(spec.tol, dtype="float64"),
            ]
            return super().dist([dist, *consts], **kwargs)

    @classmethod
    def from_release(cls, name: str, release: Any, dist: Any, **kwargs: Any) -> Any:
        """Observed ``Noisy(name, dist, noise=release)`` with ``observed = release.values``.

        The release must be a ``"counts"`` release with geometric or discrete Gaussian noise;
        each released cell is one observed noisy count (the shape comes from the release, or
        follows ``dist``'s shape when that depends on a ``pm.Data`` container and equals the
        release's: after ``pm.set_data``, predictions are drawn for the new units). The
        release comes second, as in every ``from_release``.
        """
        with owner_scope(cls.__name__):
            args, values = _SPEC.release_args(release)
        batch = dist.shape if isinstance(dist, pt.TensorVariable) else None
        return cls(name, dist, **args, **observed_kwargs(values, kwargs, batch))


def _check_noisy_base(dist: Any) -> None:
    from pymc.util import check_dist_not_registered

    owner = current_owner()
    if not isinstance(dist, pt.TensorVariable) or not isinstance(
        getattr(dist.owner, "op", None), RandomVariable | SymbolicRandomVariable
    ):
        raise NoiseawareTypeError(
            f"{owner}: dist must be a distribution created with the .dist() API, e.g. pm.Poisson.dist(mu); "
            f"got dist={dist!r}."
        )
    if not dist.dtype.startswith(("int", "uint")):
        raise NoiseawareValueError(
            f"{owner}: dist must be a discrete distribution (integer counts); got dist={dist.owner.op} "
            f"with dtype {dist.dtype}."
        )
    ndim_supp = dist.owner.op.ndim_supp
    if ndim_supp == 1:
        from pytensor.tensor.random.basic import MultinomialRV

        if not isinstance(dist.owner.op, MultinomialRV):
            raise NoiseawareValueError(
                f"{owner}: the only multivariate base is Multinomial; got dist={dist.owner.op}."
            )
        n, p = dist.owner.op.dist_params(dist.owner)
        N = const_int("n", n)
        _noisy.check_multinomial_size(N)
        if p.type.shape[-1] is None:
            raise NoiseawareValueError(
                f"{owner}: a Multinomial base needs a static number of cells; got p of type {p.type}."
            )
    elif ndim_supp != 0:
        raise NoiseawareValueError(f"{owner}: dist must be univariate or Multinomial; got dist={dist.owner.op}.")
    check_dist_not_registered(dist)
