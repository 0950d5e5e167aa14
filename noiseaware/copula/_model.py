r"""The Bayes-NA model of ``copula.fit``: its NumPyro programs per shape, start point, reordering, PyMC model.

:math:`L \sim \mathrm{LKJCholesky}(p, \eta)`, :math:`\tilde t \sim` the pairwise composite likelihood of
Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
Correlations*, eq. 18, at :math:`R = L L^\top`: as a potential on NumPyro's unconstrained
``CorrCholeskyTransform`` coordinates with the release's numbers as arguments (one set of compiled
programs per shape, :data:`_PROGRAMS`), and as a ``pm.Model`` for the PyMC route; the pairs'
pointwise log-likelihood for ``az.loo``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._engine import ProgramCache
from .._engine._precondition import lkj_pairwise_curvature
from .._engine._reorder import permute_pairs
from .._engine._x64 import float64
from .._validation import owned
from ..release import Release
from ._prior import LKJPrior

__all__ = ["pointwise_log_likelihood"]

_OWNER = "copula.fit"


@dataclass(frozen=True)
class _Static:
    """What shapes the compiled programs of a NumPyro fit: never the release's counts or noise scales.

    ``n`` stays: it fixes the Fisher table (its support and static window width, ``O(sqrt n)``),
    whose values the programs hold as constants. The noisy counts and the per-pair ``alpha`` are
    arguments (``data``), as are the preconditioner's ``z_hat`` and ``A``.
    """

    p: int
    n: int
    pairs: tuple[tuple[int, int], ...]
    eta: float


class _Programs:
    """The jitted functions of one :class:`_Static` shape, each taking the data as arguments.

    ``data = (obs, alpha)``, both float64 of shape ``(k,)`` (``alpha`` broadcast per pair).
    Built once per shape and kept in :data:`_PROGRAMS`; JAX then compiles each function once per
    argument shape, so a second release of the same shape reuses every compiled program.
    """

    def __init__(self, st: _Static) -> None:
        import jax
        import numpyro.distributions as dist
        from numpyro.distributions import constraints
        from numpyro.distributions.transforms import biject_to

        from .. import numpyro as nan

        self.static = st
        p = st.p
        to_chol = biject_to(constraints.corr_cholesky)
        pairs = np.asarray(st.pairs, dtype=np.int64).reshape(-1, 2)
        self.to_chol = to_chol

        # The model  L ~ LKJCholesky(p, eta),  t~ ~ CompositeCopulaLikelihood(L L^T)  as a potential on
        # the unconstrained space (what numpyro.infer.util.initialize_model would build from a model
        # function), written out so that no model is traced eagerly at initialization and no
        # deterministic site is re-run over the draws afterwards: those eager steps compile hundreds of
        # small XLA programs, which can take longer than sampling itself for moderate n.
        # The distributions are made inside the traced functions with validate_args=False: the release
        # and eta are checked before this point, and NumPyro's default checks (and the LKJ constructor's
        # arithmetic on constants), run eagerly, would compile dozens of small programs per fit.
        def log_prior(z: Any) -> Any:
            L = to_chol(z)
            lkj = dist.LKJCholesky(p, concentration=st.eta, validate_args=False)
            return lkj.log_prob(L) + to_chol.log_abs_det_jacobian(z, L), L

        def prior_potential(z: Any) -> Any:
            return -log_prior(z)[0]

        def loglik_pairs(R: Any, data: Any) -> Any:
            obs, alpha = data
            like = nan.CompositeCopulaLikelihood(R, n=st.n, alpha=alpha, pairs=pairs, validate_args=False)
            return like.log_prob(obs)

        def potential(z: Any, data: Any) -> Any:
            return _potential(log_prior, loglik_pairs, z, data)  # looked up when traced (tests count traces)

        def record(z: Any, data: Any) -> Any:
            return to_chol(z)  # what the NUTS run keeps of a draw: the Cholesky factor of R

        self.record = record
        self.prior_potential = prior_potential
        self.loglik_pairs = loglik_pairs
        self.potential = jax.jit(potential)
        self.value_grad = jax.jit(jax.value_and_grad(potential))
        self._curvature: Any = None

    @property
    def curvature(self) -> Any:
        """The jitted ``(z, data) -> h`` of the engine's ``lkj_pairwise_curvature``, built on first use."""
        if self._curvature is None:
            st = self.static
            self._curvature = lkj_pairwise_curvature(
                st.p, st.pairs, self.to_chol, self.prior_potential, self.loglik_pairs
            )
        return self._curvature


def _potential(log_prior: Callable[[Any], Any], loglik_pairs: Callable[[Any, Any], Any], z: Any, data: Any) -> Any:
    """``-(log prior + log-Jacobian + composite log-likelihood)`` at ``z`` (Python runs only while JAX traces)."""
    lp, L = log_prior(z)
    return -(lp + loglik_pairs(L @ L.T, data))


#: Compiled programs of the NumPyro route of ``copula.fit``, keyed by what shapes them only
#: (:class:`_Static`, and for the NUTS run its :class:`~noiseaware._engine.NutsProgramSpec`): the engine's cache.
_PROGRAMS = ProgramCache(maxsize=16)
#: Cache statistics, for tests: ``hits`` and ``misses``.
_CACHE_INFO = _PROGRAMS.info


@dataclass(frozen=True)
class _NumpyroModel:
    """The Bayes-NA model of one release: the shape's programs and this release's data."""

    p: int
    obs: Any
    args: dict[str, Any]  # n, alpha, pairs (CompositeCopulaLikelihood keywords)
    programs: _Programs
    data: tuple[Any, Any]  # (obs, alpha per pair): the arguments of the programs

    @property
    def to_chol(self) -> Any:
        """Unconstrained ``R^{p(p-1)/2}`` -> Cholesky factors of correlation matrices."""
        return self.programs.to_chol

    def potential(self, z: Any) -> Any:
        """``-(log prior + log-Jacobian + composite log-likelihood)`` at ``z`` (jitted, data as arguments)."""
        return self.programs.potential(z, self.data)

    def prior_potential(self, z: Any) -> Any:
        """``-(log prior + log-Jacobian)``."""
        return self.programs.prior_potential(z)

    def loglik_pairs(self, R: Any) -> Any:
        """``R`` -> composite log-likelihood of this release (a sum of one-pair terms)."""
        return self.programs.loglik_pairs(R, self.data)


@owned(_OWNER)
def _numpyro_model(release: Release, prior: LKJPrior) -> _NumpyroModel:
    import jax.numpy as jnp

    from .. import numpyro as _nan  # noqa: F401  (turns on float64 before any JAX array is made)
    from .._core import _release

    args = _release.composite_params(release)
    p = int(args.pop("p"))
    obs_np = np.asarray(args.pop("observed"), dtype=np.float64).reshape(-1)
    k = obs_np.size
    alpha_np = np.broadcast_to(np.asarray(args["alpha"], dtype=np.float64), (k,)).copy()
    st = _Static(p, int(args["n"]), tuple((int(a), int(b)) for a, b in args["pairs"].tolist()), float(prior.eta))
    programs = _PROGRAMS.get(("model", st), lambda: _Programs(st))
    obs = jnp.asarray(obs_np)
    return _NumpyroModel(p, obs, args, programs, (obs, jnp.asarray(alpha_np)))

def _start_matrix(model: _NumpyroModel, higham_iter: int = 10_000) -> np.ndarray:
    r"""Per-pair estimates of ``R``, projected onto the positive definite correlation matrices.

    Per pair, invert the large-``n`` expected count of the median-split table,
    :math:`E(T) \approx n\,(1/4 + \arcsin(r) / (2\pi))` (Wang, Feldman & Reiter (2026), *Differentially Private
    Bayesian Inference for Gaussian Copula Correlations*, eqs. 9-11), at the noisy count
    (a point, clipped inside the support), project onto the correlation matrices
    (:func:`nearest_correlation`) and shrink slightly towards the identity so that the Cholesky factor
    exists. ``higham_iter`` caps the projection's iterations. In the model's variable order.
    """
    from ._higham import nearest_correlation

    p, obs, args = model.p, model.obs, model.args
    n = float(args["n"])
    frac = np.clip(np.asarray(obs, dtype=np.float64).ravel() / n, 0.0, 0.5)
    r = np.clip(np.sin(2.0 * np.pi * (frac - 0.25)), -0.99, 0.99)
    R0 = np.eye(p)
    for (j, kk), rj in zip(np.asarray(args["pairs"]).tolist(), r.tolist(), strict=True):
        R0[j, kk] = R0[kk, j] = rj
    # (The diagonal route caps the iterations, each an eigendecomposition: a start point needs no
    # 1e-12 accuracy, and at p = 200 the default cap is slow.)
    R0 = nearest_correlation(R0, max_iter=higham_iter).matrix
    for shrink in (1e-4, 1e-3, 1e-2, 0.1, 0.5):
        S = (1.0 - shrink) * R0 + shrink * np.eye(p)
        try:
            np.linalg.cholesky(S)
            return S
        except np.linalg.LinAlgError:  # pragma: no cover - nearest_correlation is PSD up to rounding
            continue
    return np.eye(p)  # pragma: no cover


def _start_point(model: _NumpyroModel, higham_iter: int = 10_000) -> np.ndarray:
    """:func:`_start_matrix` mapped to the unconstrained LKJ-Cholesky coordinates."""
    # jitted: run eagerly, the inverse transform compiles one small program per operation
    return _chol_to_unconstrained(np.linalg.cholesky(_start_matrix(model, higham_iter)))

def _reorder(model: _NumpyroModel, order: np.ndarray) -> _NumpyroModel | None:
    r"""The model of the same release with its variables in ``order`` (``order[i]``: the variable at place ``i``).

    The posterior of ``R`` does not depend on the order of the variables (the LKJ density is a
    function of :math:`\det R`, the composite likelihood a sum over pairs), but NUTS's
    coordinates do: row ``i`` of the Cholesky factor holds the canonical partial correlations of
    variable ``i`` given the variables before it. The programs are those of the shape (the pairs
    are static); only the data are permuted: the pair ``(i, j)`` of the reordered model carries the
    count and ``alpha`` of the pair ``(order[i], order[j])`` of the release. ``None`` when the
    release's pairs are not closed under the permutation (a subset of the pairs), so that the
    reordered model would need other programs.
    """
    idx = permute_pairs(model.programs.static.pairs, order)  # the engine's generic part
    if idx is None:
        return None
    obs, alpha = (a[idx] for a in model.data)
    args = {**model.args, "alpha": np.asarray(alpha)}
    return _NumpyroModel(model.p, obs, args, model.programs, (obs, alpha))

def _chol_to_unconstrained(L: np.ndarray) -> np.ndarray:
    r"""The inverse of NumPyro's ``CorrCholeskyTransform`` in NumPy: a correlation Cholesky factor -> ``z``.

    Row ``i`` of ``L`` is a signed stick breaking of ``t_ij = tanh(z_ij)``:
    :math:`L_{ij} = t_{ij} \sqrt{1 - \sum_{k<j} L_{ik}^2}`, so
    :math:`z_{ij} = \operatorname{atanh}(L_{ij} / \sqrt{1 - \sum_{k<j} L_{ik}^2})`, laid out as
    ``np.tril_indices(p, -1)`` (row by row). Used for the start point only (no program to compile);
    ``tests/test_copula_fit_cache.py`` checks it against ``CorrCholeskyTransform.inv``.
    """
    L = np.asarray(L, dtype=np.float64)
    rest = 1.0 - np.concatenate([np.zeros((L.shape[0], 1)), np.cumsum(L * L, axis=1)[:, :-1]], axis=1)
    eps = np.finfo(np.float64).eps
    t = np.clip(L / np.sqrt(np.maximum(rest, eps)), -1.0 + eps, 1.0 - eps)
    return np.arctanh(t[np.tril_indices(L.shape[0], -1)])

def _dense_program(model: _NumpyroModel) -> Any:
    """The potential's value, gradient and dense Hessian as one compiled XLA program (not yet run).

    The program is ``(z, data) -> (U, grad U, hess U)``, the release's numbers an argument: compiled
    once per shape (:class:`_Static`) and kept in :data:`_PROGRAMS`.
    """

    def build() -> Any:
        import jax
        import jax.numpy as jnp

        potential = model.programs.potential
        k = model.p * (model.p - 1) // 2

        def value_grad_hess(x: Any, data: Any) -> Any:
            return potential(x, data), jax.grad(potential)(x, data), jax.hessian(potential)(x, data)

        program = jax.jit(value_grad_hess)
        data = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), model.data)
        return program.lower(jax.ShapeDtypeStruct((k,), jnp.float64), data).compile()

    return _PROGRAMS.get(("dense", model.programs.static), build)

def _diagonal_curvature(model: _NumpyroModel) -> Callable[[Any], Any]:
    """The curvature program of the model's shape, bound to its release: jitted ``z -> h``."""
    import jax

    curvature = model.programs.curvature
    return jax.jit(lambda z: curvature(z, model.data))


def _pymc_model(release: Release, prior: LKJPrior) -> Any:
    """The Bayes-NA model of a release as a ``pm.Model``: ``R ~ LKJ(eta)``, the composite likelihood observed.

    PyMC 6's ``LKJCorr`` is the Cholesky factor of ``R`` (kept as ``L_corr``, as the NumPyro route
    keeps it), positive definite by construction. PyMC 5's ``LKJCorr`` is not: it samples the
    packed upper triangle, each entry on its own interval (-1, 1), and leaves positive
    definiteness to a parameter check that the JAX samplers (``nuts_sampler="numpyro"``) drop, so
    that every draw could be an indefinite "correlation" matrix (all were, at ``p = 5``), and the
    composite likelihood, a product over pairs, does not object. Under PyMC 5 the model therefore
    samples ``LKJCholeskyCov`` (Lewandowski, Kurowicka & Joe 2009, as PyMC parameterizes it: a
    Cholesky factor of a covariance whose correlation matrix is ``LKJ(eta)``, its scales
    independent of it) with nuisance scales ``Exponential(1)``; ``R`` is its correlation matrix,
    with the same ``LKJ(eta)`` prior and the same posterior, since the likelihood reads ``R`` only.
    Either way the posterior holds ``R`` with dims ``(row, col)``.
    """
    import inspect

    import pymc as pm
    import pytensor.tensor as pt

    from .. import pymc as nap

    p = int(release.metadata["p"])
    cols = _cols(release)
    with pm.Model(coords={"row": cols, "col": cols}) as model:
        if "return_matrix" in inspect.signature(pm.LKJCorr.dist).parameters:  # PyMC 5
            packed = pm.LKJCholeskyCov(
                "L_cov_packed", n=p, eta=prior.eta, sd_dist=pm.Exponential.dist(1.0, size=p), compute_corr=False
            )
            L = pm.expand_packed_triangular(p, packed, lower=True)
            cov = L @ L.T
            sd = pt.sqrt(pt.diag(cov))
            corr = cov / pt.outer(sd, sd)
        else:  # PyMC 6: the Cholesky factor of R
            L = pm.LKJCorr("L_corr", n=p, eta=prior.eta, dims=("row", "col"))
            corr = L @ L.T
        R = pm.Deterministic("R", corr, dims=("row", "col"))
        nap.CompositeCopulaLikelihood.from_release("pairs", release, R)
    return model


#: Draws per call of the pointwise log-likelihood program (a fixed size: one compiled program per ``(n, k)``).
_LOGLIK_CHUNK = 256


def _pair_loglik_program(n: int) -> Any:
    """Jitted ``(r (S, k), obs (k,), alpha (k,)) -> (S, k)`` one-pair log-pmfs (eq. 18's factors), cached per ``n``."""

    def build() -> Any:
        import jax

        from .. import numpyro as nan

        def f(r: Any, obs: Any, alpha: Any) -> Any:
            return nan.NoisyTwoWayTable(r, n, alpha=alpha, validate_args=False).log_prob(obs)

        return jax.jit(f)

    return _PROGRAMS.get(("pair_loglik", n), build)


@float64
@owned(_OWNER)
def pointwise_log_likelihood(release: Release, R: np.ndarray) -> np.ndarray:
    r"""The composite likelihood's terms, one per pair: :math:`\log P(\tilde T_{jj'} = \tilde t_{jj'}\mid R_{jj'})`.

    Wang, Feldman & Reiter's composite likelihood (eq. 18) is the product of these terms, so they
    are the pointwise log-likelihood that ``az.loo`` / ``az.waic`` use (one "observation" per
    pair's released count).

    Parameters
    ----------
    release : Release
        A geometric ``median_pairs`` release.
    R : ndarray, shape (..., p, p)
        Correlation matrices (posterior draws).

    Returns
    -------
    ndarray, shape (..., k)
        One term per pair, in the release's order.
    """
    import jax.numpy as jnp

    from .._core import _release

    args = _release.composite_params(release)
    obs = np.asarray(args["observed"], dtype=np.float64).reshape(-1)
    k = obs.size
    alpha = np.broadcast_to(np.asarray(args["alpha"], dtype=np.float64), (k,)).copy()
    pairs = np.asarray(args["pairs"], dtype=np.int64).reshape(-1, 2)
    R = np.asarray(R, dtype=np.float64)
    lead = R.shape[:-2]
    r = R.reshape((-1, *R.shape[-2:]))[:, pairs[:, 0], pairs[:, 1]]
    # |r| = 1 only on the boundary of the LKJ support (never a posterior draw); keep the table finite there
    r = np.clip(r, -1.0 + 1e-15, 1.0 - 1e-15)
    prog = _pair_loglik_program(int(args["n"]))
    out = np.empty(r.shape, dtype=np.float64)
    for start in range(0, r.shape[0], _LOGLIK_CHUNK):
        block = r[start : start + _LOGLIK_CHUNK]
        m = block.shape[0]
        padded = np.zeros((_LOGLIK_CHUNK, k)) if m < _LOGLIK_CHUNK else block
        if m < _LOGLIK_CHUNK:
            padded[:m] = block
        out[start : start + m] = np.asarray(prog(jnp.asarray(padded), jnp.asarray(obs), jnp.asarray(alpha)))[:m]
    return out.reshape((*lead, k))


def _pairs_log_likelihood(fit: Any, release: Release) -> Any:
    """The ``log_likelihood`` group of a fit of ``release``: one term per released pair (variable ``pairs``).

    A :class:`xarray.Dataset` of dims ``(chain, draw, d)`` with ``d`` the dimension of the
    ``observed_data`` variable ``pairs`` (so that ArviZ pairs each term with its observation).
    """
    import xarray as xr

    from .._engine import group, has_group

    post = group(fit, "posterior")
    ll = pointwise_log_likelihood(release, np.asarray(post["R"].values, dtype=np.float64))
    obs = group(fit, "observed_data").get("pairs") if has_group(fit, "observed_data") else None
    dim = str(obs.dims[0]) if obs is not None else "pairs_dim_0"
    coords: dict[str, Any] = {"chain": post["chain"].values, "draw": post["draw"].values}
    if obs is not None and dim in obs.coords:
        coords[dim] = obs[dim].values
    return xr.Dataset({"pairs": xr.DataArray(ll, dims=("chain", "draw", dim), coords=coords)})


def _cols(release: Release) -> list[str]:
    return [str(c) for c in release.metadata["columns"]]
