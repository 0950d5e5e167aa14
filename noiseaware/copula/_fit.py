r"""Bayes-NA: the noise-aware posterior of a Gaussian-copula correlation matrix (Wang et al. 2026, §3).

The posterior of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
Correlations*, §3.2,

.. math:: p(R \mid \tilde{\mathcal T}) \propto \pi(R)\, f_{CL}(\tilde{\mathcal T} \mid R),

with :math:`f_{CL}` the pairwise composite likelihood of eq. (18) (:class:`CompositeCopulaLikelihood`)
and :math:`\pi(R) = \mathrm{LKJ}(R \mid \eta)` (``eta = 1`` as in the paper), sampled by NUTS in
NumPyro or PyMC.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validation as v
from .._engine import (
    FitResult,
    ProgramCache,
    SamplingSettings,
    chain_groups,
    check_settings,
    pymc_sample,
    standard_stats,
)
from .._engine import check_mixing as _mixing  # fit has a parameter of that name
from .._engine._x64 import float64, same_float64
from ..exceptions import NoiseawareValueError, ReleaseFormatError
from ..release import Release

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = ["CopulaFit", "LKJPrior", "fit", "partial_slope", "pointwise_log_likelihood"]

_OWNER = "copula.fit"


@dataclass(frozen=True)
class LKJPrior:
    r"""LKJ prior on the correlation matrix, :math:`\pi(R) \propto \det(R)^{\eta - 1}`.

    ``eta = 1`` (the default, Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian
    Copula Correlations*, §3.2) is uniform over correlation matrices; larger ``eta``
    shrinks towards the identity, ``eta < 1`` favours strong correlations. For ``p = 2`` and
    ``eta = 1`` it is the uniform prior on ``R_12`` in (-1, 1) (Wang et al. 2026, §3.1).

    Parameters
    ----------
    eta : float
        Concentration, > 0.
    """

    eta: float = 1.0

    def __post_init__(self) -> None:
        v.positive("LKJPrior", "eta", self.eta)


def _as_prior(prior: Any) -> LKJPrior:
    if prior is None or (isinstance(prior, str) and prior.lower() == "lkj"):
        return LKJPrior()
    if isinstance(prior, LKJPrior):
        return prior
    if isinstance(prior, int | float) and not isinstance(prior, bool):
        return LKJPrior(float(prior))
    raise NoiseawareValueError(
        f"{_OWNER}: prior must be 'lkj', an LKJPrior(eta) or a positive float eta; got prior={prior!r}. "
        "For other priors, write the model yourself with CompositeCopulaLikelihood.from_release."
    )


def partial_slope(R: Any, outcome: int, predictor: int, controls: Sequence[int] = ()) -> np.ndarray:
    r"""Standardized partial regression slope of ``outcome`` on ``predictor`` given ``controls``.

    For a correlation matrix ``R`` (or a stack of them, shape ``(..., p, p)``) the slope of
    the latent Gaussian ``Z_outcome`` on ``Z_predictor`` in the regression that also includes
    ``Z_controls`` is

    .. math:: \beta = \frac{R_{yx} - R_{yC} R_{CC}^{-1} R_{Cx}}{1 - R_{xC} R_{CC}^{-1} R_{Cx}},

    which for one control ``c`` is Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for
    Gaussian Copula Correlations*, Supplement S.4's
    :math:`(R_{y,x} - R_{y,c} R_{x,c}) / (1 - R_{x,c}^2)`.

    Parameters
    ----------
    R : array_like, shape (..., p, p)
        Correlation matrix or a stack of them.
    outcome, predictor : int
        Column indices.
    controls : sequence of int
        Column indices conditioned on (may be empty: then ``beta = R_yx``).

    Returns
    -------
    ndarray, shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> R = np.array([[1.0, 0.3, 0.5], [0.3, 1.0, 0.2], [0.5, 0.2, 1.0]])
    >>> round(float(partial_slope(R, outcome=1, predictor=0, controls=[2])), 6)
    0.266667
    """
    R = np.asarray(R, dtype=np.float64)
    if R.ndim < 2 or R.shape[-1] != R.shape[-2]:
        raise NoiseawareValueError(f"partial_slope: R must have shape (..., p, p); got shape {R.shape}.")
    p = R.shape[-1]
    idx = [outcome, predictor, *controls]
    if any(not (0 <= int(i) < p) for i in idx) or len(set(idx)) != len(idx):
        raise NoiseawareValueError(
            f"partial_slope: outcome, predictor and controls must be distinct indices in [0, {p}); "
            f"got outcome={outcome}, predictor={predictor}, controls={list(controls)}."
        )
    c = list(controls)
    ryx = R[..., outcome, predictor]
    if not c:
        return np.asarray(ryx)
    Rcc = R[..., c, :][..., :, c]
    rcx = R[..., c, predictor]
    rcy = R[..., c, outcome]
    sol = np.linalg.solve(Rcc, np.stack([rcx, rcy], axis=-1))  # (..., |C|, 2)
    num = ryx - np.sum(rcy * sol[..., 0], axis=-1)
    den = 1.0 - np.sum(rcx * sol[..., 0], axis=-1)
    return np.asarray(num / den)


class CopulaFit(FitResult):
    """Posterior of a Bayes-NA fit (returned by :func:`fit`): an ArviZ ``InferenceData``.

    Every ArviZ function takes it as it takes ``pm.sample``'s result (``az.summary(fit)``,
    ``az.plot_trace(fit)``, ``az.loo(fit)`` over the pairs' composite log-likelihood terms).
    :meth:`summary`, :meth:`interval` and :meth:`plot` are specialised to the correlation matrix
    (one row per pair, element-wise intervals, a Figure-3-style plot); ``diagnostics`` and
    ``settings`` are those of every :class:`noiseaware.FitResult`.

    Attributes
    ----------
    idata : arviz.InferenceData
        Posterior draws (variable ``"R"``, dims ``chain, draw, row, col``), sample stats, and the
        observed noisy counts.
    columns : tuple of str
        Variable names, in the order of the release.
    backend : str
        ``"numpyro"`` or ``"pymc"``.
    release : Release
        The release that was fitted.
    settings : SamplingSettings
        The resolved sampler settings (the seed used, ...).
    """

    default_var = "R"

    def __init__(
        self,
        idata: Any = None,
        /,
        *,
        columns: tuple[str, ...],
        backend: str,
        release: Release,
        settings: SamplingSettings | None = None,
        **groups: Any,
    ) -> None:
        super().__init__(idata, settings=settings, **groups)
        self.columns = tuple(columns)
        self.backend = backend
        self.release = release

    @property
    def _draws(self) -> np.ndarray:
        # computed from the posterior each time: ArviZ's sel/isel copy the object and change the posterior
        R = np.asarray(self["posterior"]["R"].values, dtype=np.float64)
        return R.reshape((-1, *R.shape[-2:]))

    @property
    def p(self) -> int:
        """Number of variables."""
        return len(self.columns)

    @property
    def draws(self) -> np.ndarray:
        """All posterior draws of ``R`` pooled over chains, shape ``(chains * draws, p, p)``."""
        return self._draws

    @property
    def posterior_mean(self) -> np.ndarray:
        """Posterior mean of ``R`` (the Bayes-NA point estimate), shape ``(p, p)``."""
        return np.asarray(self._draws.mean(axis=0))

    def interval(self, level: float = 0.95, var: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Element-wise equal-tailed credible interval at ``level``: ``(lower, upper)``, each ``(p, p)`` for ``R``."""
        if var is None or var == "R":
            level = v.open_unit("CopulaFit.interval", "level", level)
            q = np.quantile(self._draws, [(1 - level) / 2, (1 + level) / 2], axis=0)
            return q[0], q[1]
        return super().interval(level, var)

    def functional(self, fn: Callable[[np.ndarray], Any]) -> np.ndarray:
        """Posterior draws of ``fn(R)`` for any user function of one ``(p, p)`` matrix."""
        return np.asarray([fn(R) for R in self._draws])

    def partial_slope(self, outcome: int | str, predictor: int | str, controls: Sequence[int | str] = ()) -> np.ndarray:
        """Posterior draws of :func:`partial_slope` (Wang et al. 2026, Supplement S.4); names or indices."""
        ctrl = [self._index(c) for c in controls]
        return partial_slope(self._draws, self._index(outcome), self._index(predictor), ctrl)

    def _index(self, col: int | str) -> int:
        if isinstance(col, str):
            if col not in self.columns:
                raise NoiseawareValueError(f"CopulaFit: unknown column {col!r}; columns are {list(self.columns)}.")
            return self.columns.index(col)
        return int(col)

    def pair_draws(self) -> Any:
        """The posterior of the ``p(p-1)/2`` free entries as an xarray Dataset (dims ``chain, draw, pair``)."""
        import xarray as xr

        iu, ju = np.triu_indices(self.p, 1)
        post = self["posterior"]["R"]
        da = post.isel({post.dims[2]: xr.DataArray(iu, dims="pair"), post.dims[3]: xr.DataArray(ju, dims="pair")})
        labels = [f"{self.columns[j]} x {self.columns[k]}" for j, k in zip(iu, ju, strict=True)]
        return xr.Dataset({"R": da.drop_vars(list(post.dims[2:]), errors="ignore").assign_coords(pair=labels)})

    def summary(self, level: float = 0.95, var_names: Any = None) -> pandas.DataFrame:
        """One row per pair: posterior mean, sd, interval, R-hat and bulk ESS (ArviZ).

        With ``var_names``, ArviZ's own summary of those variables (the engine's
        :meth:`noiseaware.FitResult.summary`).
        """
        import arviz as az
        import pandas as pd

        if var_names is not None:
            return super().summary(level, var_names)

        lo, hi = self.interval(level)
        mean, sd = self.posterior_mean, self._draws.std(axis=0, ddof=1)
        pairs = self.pair_draws()  # diagnostics on the free entries only (the diagonal is constant)
        rhat = np.asarray(az.rhat(pairs)["R"].values)
        ess = np.asarray(az.ess(pairs, method="bulk")["R"].values)
        rows = []
        pct = f"{100 * level:g}%"
        for i, (j, k) in enumerate(zip(*np.triu_indices(self.p, 1), strict=True)):
            rows.append(
                {
                    "pair": f"{self.columns[j]} x {self.columns[k]}",
                    "mean": mean[j, k],
                    "sd": sd[j, k],
                    f"lower {pct}": lo[j, k],
                    f"upper {pct}": hi[j, k],
                    "r_hat": rhat[i],
                    "ess_bulk": ess[i],
                }
            )
        return pd.DataFrame(rows).set_index("pair")

    def plot(
        self,
        path: str | None = None,
        *,
        level: float = 0.95,
        truth: np.ndarray | None = None,
        others: dict[str, np.ndarray] | None = None,
        title: str | None = None,
        var_names: Any = None,
    ) -> Any:
        """Figure-3-style plot: per pair, posterior mean (dot) and ``level`` interval (bar).

        ``truth`` (a ``(p, p)`` matrix) and ``others`` (name -> ``(p, p)`` point estimates, e.g.
        MLE-NN) are drawn beside. Saves a PNG when ``path`` is given; returns the figure.
        With ``var_names``, the engine's ArviZ trace plot of those variables instead.
        Needs matplotlib.
        """
        if var_names is not None:
            return super().plot(path, var_names=var_names)
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        iu = np.triu_indices(self.p, 1)
        lo, hi = self.interval(level)
        mean = self.posterior_mean
        labels = [f"{self.columns[j]} × {self.columns[k]}" for j, k in zip(*iu, strict=True)]
        y = np.arange(len(labels))[::-1].astype(float)
        fig, ax = plt.subplots(figsize=(6.5, 0.38 * len(labels) + 1.4))
        ax.hlines(y, lo[iu], hi[iu], color="tab:orange", lw=2.5, label=f"Bayes-NA {100 * level:g}% interval")
        ax.plot(mean[iu], y, "o", color="tab:orange", label="Bayes-NA posterior mean")
        markers = iter(["s", "D", "^", "v", "P"])
        for name, M in (others or {}).items():
            ax.plot(np.asarray(M)[iu], y, next(markers), mfc="none", color="tab:blue", label=name)
        if truth is not None:
            ax.plot(np.asarray(truth)[iu], y, "x", color="black", ms=8, label="truth")
        ax.axvline(0.0, color="grey", lw=0.8, ls=":")
        ax.set_yticks(y, labels)
        ax.set_xlim(-1.05, 1.05)
        ax.set_xlabel("copula correlation")
        eps = self.release.guarantee.epsilon
        ax.set_title(title or f"Bayes-NA posterior, n = {self.release.n}, ε = {eps:g} ({self.backend})")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8, frameon=False)
        fig.tight_layout()
        if path is not None:
            from .._io import write_figure

            try:
                write_figure(fig, path, dpi=120, owner="CopulaFit.plot")
            finally:
                plt.close(fig)
        return fig


def _check_release(release: Any) -> Release:
    """Fail before any compilation: the release must be a geometric ``median_pairs`` release."""
    from .._core import _release

    _release.composite_params(_OWNER, release)  # raises with the field at fault
    return release


#: ``preconditioner="auto"`` takes the dense Laplace scale while its value/gradient/Hessian program
#: needs at most this, by XLA's own figure for the compiled program (temporaries, arguments and
#: outputs), e.g. 0.27 GB at p = 10, n = 10^6 and 0.7 GB at p = 60, n = 300.
_AUTO_DENSE_MAX_BYTES = 2**30
#: Lower bound of the dense program's workspace in float64 numbers per ``d**2``, ``d = p(p-1)/2``:
#: XLA's temporaries measured 28.2-29.0 ``d**2`` at p = 20-80, n = 300 (81 ``d**2`` at p = 20,
#: n = 10^5 and 16,600 ``d**2`` at p = 10, n = 10^6: the likelihood's window adds to it; jax 0.10,
#: CPU). Used to decide without compiling when the dense route is out of reach; otherwise the
#: compiled program's own figure decides.
_DENSE_DOUBLES_PER_D2 = 28
#: Workspace of one gradient of the potential in float64 numbers per pair and window term
#: (``k * width``, ``width`` the likelihood's static window): measured 4.0-4.5, and 4.0-4.9 for the
#: diagonal-curvature program, at p = 10-200, n = 300 to 10^6 (jax 0.10, CPU).
_GRAD_DOUBLES_PER_TERM = 5


def _memory_limit() -> int | None:
    """Bytes of memory this process may use: physical memory, or a lower cgroup limit (None: unknown)."""
    limit: int | None = None
    try:
        limit = int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - no sysconf (Windows)
        limit = None
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit() and (limit is None or int(text) < limit):
            limit = int(text)
    return limit


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.3g} GiB" if nbytes >= 2**30 else f"{nbytes / 2**20:.3g} MiB"


@dataclass(frozen=True)
class _MemoryPlan:
    """What a fit will hold in memory, estimated before anything is allocated."""

    p: int
    preconditioner: str  # "dense" or "diagonal" ("none" for PyMC)
    preconditioner_bytes: int  # the Laplace preconditioner's program (freed before sampling)
    sampler_bytes: int  # NUTS's gradient workspace, all chains
    draws_bytes: int  # the stored draws and their copies
    limit_bytes: int | None

    @property
    def total_bytes(self) -> int:
        return max(self.preconditioner_bytes, self.sampler_bytes) + self.draws_bytes


def _plan_memory(
    backend: str,
    p: int,
    n: int,
    chains: int,
    draws: int,
    warmup: int,
    preconditioner: str = "auto",
    dense_bytes: int | None = None,
) -> _MemoryPlan:
    """Choose the preconditioner and estimate the fit's memory; refuse up front if it cannot fit.

    NumPyro, with ``d = k = p(p-1)/2`` and ``W`` the width of the likelihood's window (``n``
    sets it): the dense Laplace preconditioner's program needs ``dense_bytes`` (XLA's figure for
    the compiled program) or, before compiling, at least ``28 d**2`` doubles (88 GB at p = 200;
    the fit died asking for 90 GB); the diagonal one about ``5 k W + 64 p**2``; NUTS ``5 k W`` per
    chain. ``"auto"`` takes the dense one while it needs at most :data:`_AUTO_DENSE_MAX_BYTES`.
    Stored draws: per draw the unconstrained vector twice (sampler and transformed) and three
    ``p x p`` arrays (``L``, ``R`` and a copy). PyMC: per draw and warmup iteration the packed
    vector and ``R`` in the trace, and one copy of the kept draws in the ``InferenceData``. Raises
    :class:`NoiseawareValueError` naming ``p``, the estimate and the limit when it cannot fit.
    """
    d = p * (p - 1) // 2
    limit = _memory_limit()
    diagonal = sampler = 0
    if backend == "numpyro":
        from .._core import fisher_table

        h = math.ceil(n / 2)
        terms = d * fisher_table(n, h, h, owner=_OWNER).width
        dense = dense_bytes if dense_bytes is not None else _DENSE_DOUBLES_PER_D2 * 8 * d * d
        diagonal = 8 * (_GRAD_DOUBLES_PER_TERM * terms + 64 * p * p)
        sampler = 8 * _GRAD_DOUBLES_PER_TERM * terms * chains
        stored = 8 * chains * draws * (2 * d + 3 * p * p)
        kind = preconditioner
        if kind == "auto":
            fits = limit is None or max(dense, sampler) + stored <= limit
            kind = "dense" if dense <= _AUTO_DENSE_MAX_BYTES and fits else "diagonal"
        pre = dense if kind == "dense" else diagonal
    else:
        kind, pre = "none", 0
        stored = 8 * chains * ((draws + warmup) * (d + p * p) + draws * (d + p * p))
    plan = _MemoryPlan(p, kind, pre, sampler, stored, limit)
    if limit is not None and plan.total_bytes > limit:
        fix = "use fewer chains or draws, or fit fewer columns at a time"
        if kind == "dense" and max(diagonal, sampler) + stored <= limit:
            fix = "use preconditioner='diagonal' (or 'auto')"
        parts = (
            f"({kind} preconditioner {_gib(pre)}, sampler {_gib(sampler)}, stored draws {_gib(stored)}) "
            if backend == "numpyro"
            else f"(stored draws {_gib(stored)}) "
        )
        raise NoiseawareValueError(
            f"{_OWNER}: a fit at p = {p} ({d} free correlations, n = {n}, {chains} chains x {draws} draws, "
            f"backend={backend!r}) needs about {_gib(plan.total_bytes)} {parts}"
            f"but the memory limit is {_gib(limit)}; {fix}."
        )
    return plan


def _compiled_bytes(compiled: Any) -> int | None:
    """XLA's memory figure for a compiled program (temporaries, arguments, outputs); None if unknown."""
    try:
        mem = compiled.memory_analysis()
    except Exception:  # pragma: no cover - backends without memory analysis
        return None
    if mem is None:  # pragma: no cover
        return None
    return int(mem.temp_size_in_bytes + mem.argument_size_in_bytes + mem.output_size_in_bytes)


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
        # deterministic site is re-run over the draws afterwards: on this 2-core CPU those eager steps
        # compiled some 300 small XLA programs and took longer than sampling itself for moderate n.
        # The distributions are made inside the traced functions with validate_args=False: the release
        # and eta are checked before this point, and NumPyro's default checks (and the LKJ constructor's
        # arithmetic on constants), run eagerly, compiled ~40 small programs (~1.5 s) per fit.
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
            _CACHE_INFO["traces"] += 1  # Python runs only while JAX traces
            lp, L = log_prior(z)
            return -(lp + loglik_pairs(L @ L.T, data))

        self.prior_potential = prior_potential
        self.loglik_pairs = loglik_pairs
        self.potential = jax.jit(potential)
        self.value_grad = jax.jit(jax.value_and_grad(potential))
        self._curvature: Any = None

    @property
    def curvature(self) -> Any:
        """The jitted ``(z, data) -> h`` of :func:`_diagonal_curvature`, built on first use."""
        if self._curvature is None:
            self._curvature = _diagonal_curvature_program(self)
        return self._curvature


#: Compiled programs of the NumPyro route of :func:`fit`, keyed by what shapes them only
#: (:class:`_Static`, and for the sampler the run's settings): the engine's cache.
_PROGRAMS = ProgramCache(maxsize=16)
#: Cache statistics, for tests: ``hits``, ``misses`` (the cache's) and ``traces`` (Python traces of the potential).
_CACHE_INFO = _PROGRAMS.info
_CACHE_INFO["traces"] = 0


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


def _numpyro_model(release: Release, prior: LKJPrior) -> _NumpyroModel:
    import jax.numpy as jnp

    from .. import numpyro as _nan  # noqa: F401  (turns on float64 before any JAX array is made)
    from .._core import _release

    args = _release.composite_params(_OWNER, release)
    p = int(args.pop("p"))
    obs_np = np.asarray(args.pop("observed"), dtype=np.float64).reshape(-1)
    k = obs_np.size
    alpha_np = np.broadcast_to(np.asarray(args["alpha"], dtype=np.float64), (k,)).copy()
    st = _Static(p, int(args["n"]), tuple((int(a), int(b)) for a, b in args["pairs"].tolist()), float(prior.eta))
    programs = _PROGRAMS.get(("model", st), lambda: _Programs(st))
    obs = jnp.asarray(obs_np)
    return _NumpyroModel(p, obs, args, programs, (obs, jnp.asarray(alpha_np)))


#: Iterations per chunk of the NumPyro run at most (the run returns to Python after each chunk).
_CHUNKS = 20


def _after_chunk(bar: Any, done: int) -> None:
    """Between two chunks of the NUTS run: Python runs here, so Ctrl-C lands; the progress bar moves."""
    if bar is not None:
        bar.update(done - bar.n)


def _build_nuts(
    programs: _Programs, dense: bool, chains: int, draws: int, warmup: int, target_accept: float, groups: int = 1,
    dense_mass: bool = False,
) -> _NutsRun:
    """The NUTS run ``(key, u0, pe0, grad0, z_hat, A, data[, bar]) -> (L, stats)``, data as arguments.

    NumPyro's ``hmc`` kernels (the algorithm of ``MCMC(NUTS(potential_fn=...))``): a start program
    and one program for a chunk of iterations, run in at most
    :data:`_CHUNKS` chunks from Python (:class:`_NutsRun`). The start is given each chain's
    potential ``pe0`` and gradient ``grad0`` at its initial point (``ParamInfo``), computed by a
    program the fit has compiled already, so that the start program holds no gradient and compiles
    in a fraction of a second. With ``groups > 1`` the chains are split into ``groups`` equal
    groups, one per local device, by ``jax.shard_map``: each device runs its group's chains one after
    the other with no communication, so no chain waits for another's longest tree. Every chain's
    draws depend only on its own key (the same on any device count).
    The chunk program records each draw's Cholesky factor ``L`` (from ``u`` by ``z = z_hat + A u``
    and NumPyro's ``CorrCholeskyTransform``), so no other program maps the draws.
    """
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P
    from numpyro.infer.hmc import hmc
    from numpyro.infer.util import ParamInfo

    potential = programs.potential

    def potential_gen(z_hat: Any, A: Any, data: Any) -> Callable[[Any], Any]:
        return lambda u: potential(z_hat + (A @ u if dense else A * u), data)

    init_kernel, sample_kernel = hmc(potential_fn_gen=potential_gen, algo="NUTS")
    total = warmup + draws
    size = -(-total // min(_CHUNKS, total))  # iterations per chunk; the last one is masked past `total`

    def start_group(keys: Any, u0: Any, pe0: Any, grad0: Any, z_hat: Any, A: Any, data: Any) -> Any:
        """Initial states of the chains of ``keys``/``u0`` (leading axis: chains)."""
        _CACHE_INFO["traces"] += 1  # Python runs only while JAX traces
        margs = (z_hat, A, data)

        def init_one(u: Any, pe: Any, g: Any, k: Any) -> Any:
            return init_kernel(
                ParamInfo(u, pe, g),
                warmup,
                step_size=1.0,
                inverse_mass_matrix=None,
                adapt_step_size=True,
                adapt_mass_matrix=True,
                dense_mass=dense_mass,
                target_accept_prob=target_accept,
                num_steps=None,
                trajectory_length=None,
                max_tree_depth=10,
                find_heuristic_step_size=False,
                forward_mode_differentiation=False,
                regularize_mass_matrix=True,
                model_args=margs,
                rng_key=k,
            )

        return jax.vmap(init_one)(u0, pe0, grad0, keys)

    def advance(state: Any, first: Any, z_hat: Any, A: Any, data: Any) -> Any:
        """``size`` iterations from iteration ``first`` (those at or past ``total`` leave the state alone)."""
        _CACHE_INFO["traces"] += 1
        margs = (z_hat, A, data)

        def step(s: Any) -> Any:
            return sample_kernel(s, model_args=margs)

        def chol(u: Any) -> Any:
            return programs.to_chol(z_hat + (A @ u if dense else A * u))

        def collect(s: Any, i: Any) -> Any:
            s = lax.cond(i < total, step, lambda t: t, s)
            return s, (chol(s.z), s.num_steps, s.accept_prob, s.potential_energy, s.diverging)

        # the group's chains one after the other (lax.map), not vectorized (vmap): a vectorized NUTS step
        # runs every chain's tree to the deepest one's and batches NumPyro's while loops, which doubled
        # the compile time (3.9 s against 1.8 s for the kernel alone) and cost 25-40% more sampling time
        # here (n = 5,820, p = 7: 9.0 s against 6.5 s on one device)
        states, hist = lax.map(lambda s: lax.scan(collect, s, first + jnp.arange(size)), state)
        return states, jax.tree.map(lambda a: jnp.swapaxes(a, 0, 1), hist)

    if groups > 1:
        mesh = Mesh(np.asarray(jax.local_devices()[:groups]), ("chains",))
        c, r = P("chains"), P()
        start_group = jax.shard_map(
            start_group, mesh=mesh, in_specs=(c, c, c, c, r, r, r), out_specs=c, check_vma=False
        )
        advance = jax.shard_map(
            advance, mesh=mesh, in_specs=(c, r, r, r, r), out_specs=(c, P(None, "chains")), check_vma=False
        )

    def start(key: Any, u0: Any, pe0: Any, grad0: Any, z_hat: Any, A: Any, data: Any) -> Any:
        # one key per chain, as numpyro's MCMC: split per chain, then HMC.init's split
        keys = jax.vmap(jax.random.split)(jax.random.split(key, chains))[:, 0]
        return start_group(keys, u0, pe0, grad0, z_hat, A, data)

    return _NutsRun(jax.jit(start), jax.jit(advance), size, total, warmup, chains)


class _NutsRun:
    """The NUTS run of :func:`_build_nuts`: a start program and a chunk program, run from Python.

    The chunks make the run interruptible (Ctrl-C lands between two chunks) and move the progress
    bar; the sequence of kernel steps, hence the draws, is that of one scan over all iterations.
    :meth:`compile_async` compiles both programs ahead of time in a background thread (XLA
    compiles outside Python's lock), so that the chunk program, the longest compile of a fit,
    compiles while the fit computes its preconditioner on the other core.
    """

    def __init__(self, start: Any, advance: Any, size: int, total: int, warmup: int, chains: int) -> None:
        self.start, self.advance = start, advance
        self.size, self.total, self.warmup, self.chains = size, total, warmup, chains
        self._compiled: tuple[Any, Any] | None = None
        self._thread: Any = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()

    def _compile(self, args: tuple[Any, ...]) -> None:
        import jax
        import jax.numpy as jnp

        try:
            spec = jax.tree.map(lambda a: jax.ShapeDtypeStruct(jnp.shape(a), jnp.result_type(a)), args)
            lowered = self.start.trace(*spec).lower()
            # the start's compilation (small) runs beside the tracing of the chunk program (large)
            done: list[Any] = []
            def compile_start() -> None:
                done.append(lowered.compile())

            side = threading.Thread(target=same_float64(compile_start), daemon=True)
            side.start()
            z_hat, A, data = spec[4:]
            first = jax.ShapeDtypeStruct((), jnp.result_type(int))
            advance = self.advance.trace(lowered.out_info, first, z_hat, A, data).lower().compile()
            side.join()
            if not done:
                done.append(lowered.compile())  # the side thread failed: raise its error here
            self._compiled = (done[0], advance)
        except BaseException as exc:  # re-raised in the caller's thread
            self._error = exc

    def compile_async(self, *args: Any) -> None:
        """Compile both programs for arguments like ``args`` in a background thread (once)."""
        with self._lock:
            if self._compiled is not None or self._thread is not None:
                return
            self._thread = threading.Thread(
                target=same_float64(self._compile), args=(args,), daemon=True, name="noiseaware-compile"
            )
            self._thread.start()

    def _programs(self, args: tuple[Any, ...]) -> tuple[Any, Any]:
        self.compile_async(*args)
        thread = self._thread
        while thread.is_alive():
            thread.join(0.1)  # in short waits, so that Ctrl-C lands
        if self._error is not None:
            error, self._error, self._thread = self._error, None, None  # a later call tries again
            raise error
        assert self._compiled is not None
        return self._compiled

    def __call__(self, key: Any, u0: Any, pe0: Any, grad0: Any, z_hat: Any, A: Any, data: Any, bar: Any = None) -> Any:
        import jax
        import jax.numpy as jnp

        start, advance = self._programs((key, u0, pe0, grad0, z_hat, A, data))
        state = start(key, u0, pe0, grad0, z_hat, A, data)
        parts = []
        for first in range(0, self.total, self.size):
            state, hist = advance(state, jnp.asarray(first, dtype=jnp.result_type(int)), z_hat, A, data)
            parts.append(jax.device_get(hist))
            _after_chunk(bar, min(first + self.size, self.total))
        hist = tuple(np.concatenate([part[j] for part in parts])[self.warmup : self.total] for j in range(5))
        return tuple(np.swapaxes(x, 0, 1) for x in hist)  # (chains, draws, ...)


def _numpyro_fit(
    release: Release,
    prior: LKJPrior,
    chains: int,
    draws: int,
    warmup: int,
    seed: int,
    progressbar: bool,
    target_accept: float,
    preconditioner: str = "auto",
    mass_matrix: str = "diagonal",
    variable_order: str = "pivoted",
) -> Any:
    import arviz as az
    import jax
    import jax.numpy as jnp

    model = _numpyro_model(release, prior)
    p, obs, programs = model.p, model.obs, model.programs
    n = int(model.args["n"])
    k = p * (p - 1) // 2
    plan = _plan_memory("numpyro", p, n, chains, draws, warmup, preconditioner)  # refuses before compiling
    groups = chain_groups(chains)

    def nuts_run(dense: bool) -> _NutsRun:
        # Compiled once per shape and settings (the key), z_hat, A and the counts are its arguments: a
        # second release of the same shape reuses it.
        dense_mass = mass_matrix == "dense"
        key = ("nuts", programs.static, dense, chains, draws, warmup, float(target_accept), groups, dense_mass)
        run = _PROGRAMS.get(
            key, lambda: _build_nuts(programs, dense, chains, draws, warmup, float(target_accept), groups, dense_mass)
        )
        # the chunk program is a fit's longest compile: start it now, on the other core, while the
        # preconditioner is computed (a no-op once compiled)
        f64 = jnp.float64
        run.compile_async(
            jax.ShapeDtypeStruct((2,), jnp.uint32),
            jax.ShapeDtypeStruct((chains, k), f64),
            jax.ShapeDtypeStruct((chains,), f64),
            jax.ShapeDtypeStruct((chains, k), f64),
            jax.ShapeDtypeStruct((k,), f64),
            jax.ShapeDtypeStruct((k, k) if dense else (k,), f64),
            jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), model.data),
        )
        return run

    compiled: Any = None
    if plan.preconditioner == "dense":
        run = nuts_run(dense=True)
        if k > _FD_MAX_D:
            # XLA knows the compiled program's memory before running it: decide (or refuse) on that figure
            compiled = _dense_program(model)
            measured = _compiled_bytes(compiled)
            plan = _plan_memory("numpyro", p, n, chains, draws, warmup, preconditioner, dense_bytes=measured)
    dense_route = plan.preconditioner == "dense"

    # With the dense preconditioner, NUTS runs in the variables' pivoted order (_pivot_order of the start
    # point, _reorder): nearly dependent variables last, so that the long tail a near-singular R puts on
    # the canonical partial correlations stays in the last rows instead of reaching every row after it.
    # The posterior of R is the same in any order; at n = 5,820, p = 7 (benchmarks/copula_mass.py) it took
    # fewer leapfrog steps for more effective draws. The diagonal route (large p: unmeasured there, and
    # mapping the draws back costs O(p^3) per draw) keeps the release's order.
    start = _start_matrix(model, 10_000 if dense_route else 50)
    order = _pivot_order(start) if variable_order == "pivoted" and dense_route else np.arange(p)
    reordered = _reorder(model, order)
    if reordered is None:  # a subset of the pairs: the pivoted order would need other programs
        order = np.arange(p)
    else:
        model = reordered
    z_start = _chol_to_unconstrained(np.linalg.cholesky(start[np.ix_(order, order)]))
    data = model.data
    if compiled is None:
        value_grad: Any = lambda x: programs.value_grad(x, data)  # noqa: E731
        hessian: Any = lambda x: _fd_hessian(value_grad, x)  # noqa: E731
    else:
        value_grad = lambda x: compiled(x, data)[:2]  # noqa: E731
        hessian = lambda x: np.asarray(compiled(jnp.asarray(x), data)[2], dtype=np.float64)  # noqa: E731

    # Preconditioning (efficiency only, the posterior is unchanged). At large n the posterior is very
    # concentrated (sd ~ 1e-3 at n = 10^6) and has strongly unequal scales in the unconstrained
    # coordinates; started from NumPyro's default init (uniform on (-2, 2)) with a unit metric, NUTS
    # spent the warmup at its maximum tree depth (1023 leapfrog steps per iteration; a fit at
    # n = 10^6, p = 10 did not finish in 25 minutes), and NumPyro's regularization of the adapted
    # mass matrix (+1e-3 * 5 / (m + 5) on the diagonal) is far larger than such posterior variances.
    # So NUTS samples u in  z = z_hat + A u,  an affine, constant-Jacobian change of variables, with
    # z_hat near the mode (per-pair estimates, then Newton steps) and A A^T the inverse Hessian of
    # the potential there (a Laplace approximation): u is close to standard normal at every n.
    # Large p: the dense Hessian has d^2 entries and its program ~30 d^2 doubles (90 GB at p = 200),
    # so above a size (see _plan_memory) A is diagonal, from the Hessian's diagonal computed without
    # forming the matrix (_diagonal_curvature).
    if dense_route:
        z_hat, A = _laplace_precondition(value_grad, hessian, z_start)
    else:
        run = nuts_run(dense=False)
        z_hat, A = _diagonal_precondition(model, z_start)
    dense = A.ndim == 2  # the run chosen above has this preconditioner's shape

    # Chains start at independent draws from the Laplace approximation (dispersed at the posterior's
    # own scale, so that R-hat can still flag a chain that does not reach the bulk); their potential
    # and gradient (in u) come from the program just used, so the run's start holds no gradient.
    u0 = np.random.default_rng([seed, 1]).standard_normal((chains, k))
    pe0, grad0 = np.empty(chains), np.empty((chains, k))
    for c in range(chains):
        f, g = (
            np.asarray(a, dtype=np.float64)
            for a in value_grad(jnp.asarray(z_hat + (A @ u0[c] if dense else A * u0[c])))
        )
        pe0[c], grad0[c] = f, (A.T @ g if dense else A * g)
    # Chains: in groups, one per local device (_engine.chain_groups, noiseaware.config "Host devices"), the
    # chains of a group one after the other. A diagonal mass matrix adapted in warmup on top of the
    # (dense) preconditioning A:
    # NumPyro's dense adaptation estimates a full p(p-1)/2-dimensional covariance from its first
    # 25-draw window, which for p = 10 (45 dimensions) is rank-deficient and sent the next window's
    # trajectories to the maximum tree depth.
    bar = None
    if progressbar:
        from tqdm.auto import tqdm

        bar = tqdm(total=warmup + draws, desc=f"NUTS, {chains} chain(s)")
    try:
        u0j, pe0j, grad0j, z_hatj, Aj = (jnp.asarray(x) for x in (u0, pe0, grad0, z_hat, A))
        hist = run(jax.random.PRNGKey(seed), u0j, pe0j, grad0j, z_hatj, Aj, data, bar)
    finally:
        if bar is not None:
            bar.close()
    L, num_steps, accept_prob, potential_energy, diverging = (np.asarray(x) for x in hist)
    if not np.array_equal(order, np.arange(p)):  # chain by chain: one chain's temporaries at a time
        L = np.stack([_unpermute_cholesky(chain, order) for chain in L])
    R = L @ np.swapaxes(L, -1, -2)
    cols = _cols(release)
    idata = az.from_dict(
        posterior={"R": R, "L_corr": L},
        sample_stats={
            "lp": -potential_energy,
            "n_steps": num_steps,
            "tree_depth": np.log2(np.maximum(num_steps, 1)).astype(int) + 1,
            "accept_rate": accept_prob,
            "diverging": diverging,
        },
        observed_data={"pairs": np.asarray(obs)},
        dims={"R": ["row", "col"], "L_corr": ["row", "col"]},
        coords={"row": cols, "col": cols},
    )
    idata.attrs["noiseaware_preconditioner"] = "dense" if dense else "diagonal"
    idata.attrs["noiseaware_mass_matrix"] = mass_matrix
    idata.attrs["noiseaware_variable_order"] = [int(i) for i in order]
    return idata


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
    # 1e-12 accuracy, and at p = 200 the default cap took 10-40 s on this 2-core machine.)
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
    # jitted: run eagerly, the inverse transform compiles one small program per operation (~1 s)
    return _chol_to_unconstrained(np.linalg.cholesky(_start_matrix(model, higham_iter)))


def _unpermute_cholesky(L: np.ndarray, order: np.ndarray) -> np.ndarray:
    r"""Cholesky factors of ``R`` in the release's order from factors ``L`` (``..., p, p``) of the reordered variables.

    With ``pos`` the inverse of ``order``, :math:`R_{ab} = (L L^\top)_{pos_a, pos_b}`, so
    :math:`F = L_{pos, :}` has :math:`F F^\top = R`; the lower triangular factor is the transposed
    ``r`` of the QR factorization of :math:`F^\top` with its diagonal made positive -- no Cholesky
    factorization of ``R`` itself, which fails on draws numerically at the singular boundary.
    """
    pos = np.argsort(np.asarray(order, dtype=np.int64))
    r = np.linalg.qr(np.swapaxes(L[..., pos, :], -1, -2), mode="r")
    sign = np.where(np.diagonal(r, axis1=-2, axis2=-1) < 0.0, -1.0, 1.0)
    return np.swapaxes(r * sign[..., :, None], -1, -2)


def _pivot_order(R: np.ndarray) -> np.ndarray:
    r"""Variable order of a diagonally pivoted Cholesky factorization of ``R``: largest conditional variance first.

    Step ``i`` places the variable whose variance given the ``i`` variables already placed (the
    diagonal of the Schur complement) is largest; ties go to the lower index, so the identity
    matrix keeps its order. Variables that are nearly linear combinations of others come last.
    """
    S = np.array(R, dtype=np.float64)
    p = S.shape[0]
    free = np.ones(p, dtype=bool)
    order = np.empty(p, dtype=np.int64)
    for i in range(p):
        j = int(np.argmax(np.where(free, np.diag(S), -np.inf)))
        order[i], free[j] = j, False
        if S[j, j] > 0.0:
            v = S[:, j] / np.sqrt(S[j, j])
            S -= np.outer(v, v)
    return order


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
    pairs = np.asarray(model.programs.static.pairs, dtype=np.int64).reshape(-1, 2)
    where = {(min(a, b), max(a, b)): t for t, (a, b) in enumerate(pairs.tolist())}  # a pair either way round
    o = np.asarray(order, dtype=np.int64)
    perm = []
    for a, b in pairs.tolist():
        u, w = int(o[a]), int(o[b])
        t = where.get((min(u, w), max(u, w)))
        if t is None:
            return None
        perm.append(t)
    idx = np.asarray(perm, dtype=np.int64)
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
            _CACHE_INFO["traces"] += 1  # Python runs only while JAX traces
            return potential(x, data), jax.grad(potential)(x, data), jax.hessian(potential)(x, data)

        program = jax.jit(value_grad_hess)
        data = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), model.data)
        return program.lower(jax.ShapeDtypeStruct((k,), jnp.float64), data).compile()

    return _PROGRAMS.get(("dense", model.programs.static), build)


#: Up to this many free correlations (p <= 15) the dense preconditioner's Hessian is taken by central
#: differences of the compiled gradient (:func:`_fd_hessian`, 2 d gradients, milliseconds at p = 7)
#: instead of a compiled Hessian program (:func:`_dense_program`), whose compilation took 2-4 s of
#: a 10 s fit at n = 5,820, p = 7; above it the compiled program (one call instead of 2 d).
_FD_MAX_D = 105


def _fd_hessian(value_grad: Callable[[Any], Any], x: np.ndarray, rel_step: float = 1e-5) -> np.ndarray:
    r"""The Hessian of the potential at ``x`` by central differences of its exact gradient.

    Column ``i`` is :math:`(\nabla U(x + h_i e_i) - \nabla U(x - h_i e_i)) / (2 h_i)`,
    :math:`h_i = 10^{-5} \max(1, |x_i|)`, then symmetrised: error :math:`O(h^2 U^{(3)})` plus the
    gradient's rounding over ``h`` (relative ~1e-9 here). Used only to precondition the sampler
    (its efficiency), never in the target.
    """
    import jax.numpy as jnp

    x = np.asarray(x, dtype=np.float64)
    d = x.size
    H = np.empty((d, d))
    for i in range(d):
        h = rel_step * max(1.0, abs(float(x[i])))
        e = np.zeros(d)
        e[i] = h
        gp = np.asarray(value_grad(jnp.asarray(x + e))[1], dtype=np.float64)
        gm = np.asarray(value_grad(jnp.asarray(x - e))[1], dtype=np.float64)
        H[:, i] = (gp - gm) / (2.0 * h)
    return 0.5 * (H + H.T)


def _laplace_precondition(
    value_grad: Callable[[Any], Any], hessian: Callable[[np.ndarray], np.ndarray], z: np.ndarray, newton_steps: int = 8
) -> tuple[np.ndarray, np.ndarray]:
    r"""A point near the posterior mode and a dense Laplace scale, in the unconstrained space.

    From the start point ``z`` (:func:`_start_point`), damped Newton steps on the potential, whose
    value and gradient ``value_grad`` and Hessian ``hessian`` compute (:func:`_fd_hessian`, or
    :func:`_dense_program` for large ``d``), the Hessian's eigenvalues floored at 1 (i.e. at most a
    unit scale, roughly the prior's); the Hessian is taken at accepted points only. Returns
    ``(z_hat, A)`` with ``A A^T`` the inverse of the floored Hessian at ``z_hat``. Only the
    sampler's efficiency depends on these; never its target.
    """
    import jax.numpy as jnp

    def vg(x: np.ndarray) -> tuple[float, np.ndarray]:
        f, g = value_grad(jnp.asarray(x))
        return float(f), np.asarray(g, dtype=np.float64)

    f, g = vg(z)
    H = hessian(z) if np.isfinite(f) and np.all(np.isfinite(g)) else np.full((z.size, z.size), np.nan)
    for _ in range(newton_steps):
        if not (np.isfinite(f) and np.all(np.isfinite(g)) and np.all(np.isfinite(H))):
            break
        lam, V = np.linalg.eigh(0.5 * (H + H.T))
        step = -(V @ ((V.T @ g) / np.maximum(lam, 1.0)))
        decrement = float(-(g @ step))
        if decrement < 1e-8:
            break
        t = 1.0
        while t > 1e-4:
            zn = z + t * step
            fn, gn = vg(zn)
            if np.isfinite(fn) and fn <= f - 1e-4 * t * decrement and np.all(np.isfinite(gn)):
                z, f, g = zn, fn, gn
                H = hessian(z)
                break
            t *= 0.5
        else:
            break
    if not np.all(np.isfinite(H)):
        return z, np.eye(z.size)
    lam, V = np.linalg.eigh(0.5 * (H + H.T))
    return z, V * (1.0 / np.sqrt(np.maximum(lam, 1.0)))


def _diagonal_curvature_program(model: _Programs) -> Callable[[Any, Any], Any]:
    r"""A jitted ``(z, data) -> h``: the diagonal of a Gauss-Newton Hessian of the potential, no ``d x d`` matrix.

    The potential is ``U(z) = U_prior(z) - sum_pairs l_jk(R_jk(z))`` in NumPyro's
    ``CorrCholeskyTransform`` coordinates, where ``z`` fills the strict lower triangle row by row
    and row ``i`` of ``L`` depends on row ``i``'s entries only. Hence

    * ``U_prior`` (LKJ log-density plus log-Jacobian) is a sum over rows, its Hessian is block
      diagonal by row, and one Hessian-vector product along the indicator of column ``m`` returns
      the exact diagonal entries of every coordinate in column ``m`` (``p - 1`` products in all);
    * the composite likelihood is a sum of one-pair terms, so its curvature in ``R`` is a vector
      ``w`` (one Hessian-vector product with a vector of ones), and the Gauss-Newton diagonal is
      :math:`\sum_{b \ne i} w_{ib} (\partial R_{ib} / \partial z_{im})^2` with
      :math:`\partial R_{ib} / \partial z_{im} = (\partial L_i / \partial z_{im}) \cdot L_b`, the
      derivative of row ``i`` taken by one forward product along the same column indicator.

    ``w`` is clipped at 0 (Gauss-Newton keeps only the positive curvature). The full ``d x d``
    matrix is never formed: the loop over the ``p - 1`` columns holds ``p x p`` temporaries, and
    the program needs about the memory of one gradient (measured 4.0-4.9 doubles per pair and
    window term, 55 MB at p = 200, n = 300). Cost: ``p - 1`` forward products and ``p x p``
    matrix products, about 1 s at p = 200 on 2 cores once compiled.
    """
    import jax
    import jax.numpy as jnp
    from jax import lax

    p, to_chol = model.static.p, model.to_chol
    rows, cols = (jnp.asarray(a) for a in np.tril_indices(p, -1))  # NumPyro's layout of z
    pi, pj = (jnp.asarray(a) for a in np.asarray(model.static.pairs, dtype=np.int64).reshape(-1, 2).T)

    def loglik_r(r: Any, data: Any) -> Any:
        return model.loglik_pairs(jnp.eye(p, dtype=r.dtype).at[pi, pj].set(r).at[pj, pi].set(r), data)

    grad_prior = jax.grad(model.prior_potential)

    @jax.jit
    def curvature(z: Any, data: Any) -> Any:
        L = to_chol(z)
        r = (L @ L.T)[pi, pj]
        w = -jax.jvp(lambda q: jax.grad(loglik_r)(q, data), (r,), (jnp.ones_like(r),))[1]
        w = jnp.maximum(w, 0.0)
        W = jnp.zeros((p, p), dtype=z.dtype).at[pi, pj].set(w).at[pj, pi].set(w)

        def column(m: Any, acc: Any) -> Any:
            onm = cols == m
            v = onm.astype(z.dtype)
            dL = jax.jvp(to_chol, (z,), (v,))[1]  # row i: dL_i / dz_(i, m)
            G = dL @ L.T  # G[i, b] = dR_ib / dz_(i, m)
            gn = jnp.sum(W * G * G, axis=1)  # Gauss-Newton term of coordinate (i, m), indexed by i
            hp = jax.jvp(grad_prior, (z,), (v,))[1]  # exact prior diagonal at coordinates (., m)
            return acc + jnp.where(onm, gn[rows] + hp, 0.0)

        return lax.fori_loop(0, p - 1, column, jnp.zeros_like(z))

    return curvature


def _diagonal_curvature(model: _NumpyroModel) -> Callable[[Any], Any]:
    """:func:`_diagonal_curvature_program` of the model's shape, bound to its release: jitted ``z -> h``."""
    import jax

    curvature = model.programs.curvature
    return jax.jit(lambda z: curvature(z, model.data))


def _diagonal_precondition(model: _NumpyroModel, z: np.ndarray, steps: int = 30) -> tuple[np.ndarray, np.ndarray]:
    r"""A point near the mode and a diagonal Laplace scale, without forming a ``d x d`` matrix.

    Like :func:`_laplace_precondition` with the Hessian replaced by its diagonal
    (:func:`_diagonal_curvature`, floored at 1): from ``z``, up to ``steps`` damped
    diagonally-scaled Newton steps (the diagonal refreshed every 5 steps), then
    ``a = 1 / sqrt(h)`` at the last point. Returns ``(z_hat, a)``; the sampler's coordinates are
    ``z = z_hat + a * u``.
    """
    import jax.numpy as jnp

    programs, data = model.programs, model.data  # compiled once per shape, the data as arguments

    def value_grad(x: Any) -> Any:
        return programs.value_grad(x, data)

    def diag_at(x: np.ndarray) -> np.ndarray:
        return np.maximum(np.asarray(programs.curvature(jnp.asarray(x), data), dtype=np.float64), 1.0)

    f, g = (np.asarray(a, dtype=np.float64) for a in value_grad(jnp.asarray(z)))
    h = diag_at(z)
    for i in range(steps):
        if not (np.isfinite(f) and np.all(np.isfinite(g)) and np.all(np.isfinite(h))):
            break
        step = -g / h
        decrement = float(-(g @ step))
        if decrement < 1e-8:
            break
        t = 1.0
        while t > 1e-4:
            zn = z + t * step
            fn, gn = (np.asarray(a, dtype=np.float64) for a in value_grad(jnp.asarray(zn)))
            if np.isfinite(fn) and fn <= f - 1e-4 * t * decrement:
                z, f, g = zn, fn, gn
                break
            t *= 0.5
        else:
            break
        if i % 5 == 4:
            h = diag_at(z)
    h = diag_at(z)
    if not np.all(np.isfinite(h)):
        return z, np.ones(z.size)
    return z, 1.0 / np.sqrt(h)


def _pymc_model(release: Release, prior: LKJPrior) -> Any:
    """The Bayes-NA model of a release as a ``pm.Model``: ``R ~ LKJCorr``, the composite likelihood observed."""
    import pymc as pm

    from .. import pymc as nap

    p = int(release.metadata["p"])
    cols = _cols(release)
    with pm.Model(coords={"row": cols, "col": cols}) as model:
        corr = pm.LKJCorr("R_packed", n=p, eta=prior.eta, return_matrix=True)
        R = pm.Deterministic("R", corr, dims=("row", "col"))
        nap.CompositeCopulaLikelihood.from_release("pairs", release, R)
    return model


def _pymc_fit(
    release: Release,
    prior: LKJPrior,
    chains: int,
    draws: int,
    warmup: int,
    seed: int,
    progressbar: bool,
    target_accept: float,
    cores: int | None = None,
) -> Any:
    if cores is None:
        # Forking a process in which JAX has started its threads can deadlock, and "spawn" re-runs an
        # unguarded __main__ script: run the chains one after another in-process in that case.
        cores = 1 if "jax" in sys.modules else min(chains, os.cpu_count() or 1)
    with _pymc_model(release, prior):
        return pymc_sample(
            _OWNER,
            draws=draws,
            tune=warmup,
            chains=chains,
            cores=cores,
            random_seed=seed,
            progressbar=progressbar,
            target_accept=target_accept,
            compute_convergence_checks=False,
        )


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

    args = _release.composite_params(_OWNER, release)
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
    """The ``log_likelihood`` group of a fit of ``release``: one term per released pair (variable ``pairs``)."""
    import xarray as xr

    post = fit["posterior"]
    ll = pointwise_log_likelihood(release, np.asarray(post["R"].values, dtype=np.float64))
    obs = fit["observed_data"].get("pairs") if "observed_data" in fit.groups() else None
    dim = str(obs.dims[0]) if obs is not None else "pairs_dim_0"
    coords = {"chain": post["chain"].values, "draw": post["draw"].values}
    return xr.Dataset({"pairs": xr.DataArray(ll, dims=("chain", "draw", dim), coords=coords)})


def _cols(release: Release) -> list[str]:
    return [str(c) for c in release.metadata["columns"]]


@float64
def fit(
    release: Release,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    backend: str = "numpyro",
    prior: Any = None,
    cores: int | None = None,
    preconditioner: str = "auto",
    mass_matrix: str = "diagonal",
    variable_order: str = "pivoted",
) -> CopulaFit:
    r"""Bayes-NA fit of the copula correlation matrix from a ``"median_pairs"`` release.

    Samples :math:`p(R \mid \tilde{\mathcal T}) \propto \mathrm{LKJ}(R \mid \eta)\, f_{CL}(\tilde{\mathcal T}
    \mid R)` (Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference for Gaussian Copula
    Correlations*, §3.2, eq. 18, Algorithm S.2) with NUTS. The noise
    parameters (``n``, per-pair ``alpha``) and the observed noisy counts come from the release.

    Parameters
    ----------
    release : Release
        A ``"median_pairs"`` release made with the geometric mechanism (the Bayes-NA input; use
        :func:`mle_nn` for TGM / BTGM / RGM releases).
    chains, draws, warmup : int
        Number of chains, kept draws per chain, and warmup (tuning) iterations per chain.
    seed : int, optional
        Random seed; drawn from the OS when omitted (recorded in ``result.settings.seed`` and
        ``idata.attrs["noiseaware_seed"]``).
    progressbar : bool
        Show the sampler's progress bar (default False, the package's one convention; the CLI
        shows it).
    target_accept : float, optional
        NUTS target acceptance probability; default (None) 0.8.
    check_mixing : bool
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when a free entry of ``R`` has bulk
        ESS below 100 per chain or R-hat above 1.01.
    backend : {"numpyro", "pymc"}
        NumPyro NUTS or PyMC NUTS. NumPyro runs the chains in groups, one per JAX device, at the same
        time (by default noiseaware gives XLA one CPU device per core; see :mod:`noiseaware.config`,
        "Host devices"), each compiled program cached per shape and, across processes, in JAX's
        compilation cache.
    prior : "lkj", float or LKJPrior, optional
        LKJ concentration; default ``LKJ(1)`` as in the paper. For other priors write the model
        with ``CompositeCopulaLikelihood.from_release`` directly.
    cores : int, optional
        PyMC only: worker processes for the chains. Default: one per chain up to the CPU count,
        or 1 (chains in sequence, in-process) when JAX is already loaded, since forking a process
        with JAX's threads running can deadlock.
    preconditioner : {"auto", "dense", "diagonal"}
        NumPyro only; the target is the same, only the sampler's efficiency differs. NUTS runs
        in coordinates ``u`` with ``z = z_hat + A u``, ``z`` the unconstrained LKJ-Cholesky
        vector of ``d = p(p-1)/2`` entries and ``z_hat`` near the posterior mode.

        * ``"dense"``: ``A A^T`` is the inverse Hessian at ``z_hat`` (a Laplace approximation).
          Its program needs at least ``28 d**2`` float64 numbers (88 GB at ``p = 200``), more at
          large ``n``; the compiled program's own memory figure is checked before it runs.
        * ``"diagonal"``: ``A`` is diagonal, from the diagonal of a Gauss-Newton Hessian computed
          without forming the matrix (memory of a few gradients, e.g. 60 MB at ``p = 200``,
          ``n = 300``). Less efficient on concentrated posteriors with correlated coordinates:
          at ``p = 10``, ``n = 10^6`` it gave about a fifth of the dense route's effective
          draws per second; at ``p = 10`` and ``30``, ``n = 5000``, as many or more.
        * ``"auto"`` (default): dense while its program needs at most 1 GiB (about ``p <= 65``
          at ``n = 300``), else diagonal.

        The choice is recorded in ``idata.attrs["noiseaware_preconditioner"]``.
    mass_matrix : {"diagonal", "dense"}
        NumPyro only: the mass matrix NUTS adapts during warmup in the preconditioned coordinates
        ``u`` (NumPyro's ``dense_mass``). ``"dense"`` corrects what the preconditioner left of the
        posterior's correlations and gives more effective draws per draw, at a higher cost per
        draw: at ``n = 5820``, ``p = 7`` (10 seeds, 4 x (1000 + 1000), pivoted order) 0.85
        effective draws per draw against 0.81 on average, but 12.0 leapfrog steps per draw against
        10.6, so fewer effective draws per gradient (``docs/benchmarks.md``, "copula_mass"). With
        ``target_accept=0.9`` it gave 1.02 effective draws per draw there (20 seeds; Stan 0.92 over
        4 seeds) at 14.4 steps: the setting for the most effective draws per draw, not per second.
        Recorded in ``idata.attrs["noiseaware_mass_matrix"]``.
    variable_order : {"pivoted", "given"}
        NumPyro only: the order of the variables in the sampler's LKJ-Cholesky coordinates (the
        posterior of ``R`` is the same in any order; the draws are always in the release's order).
        ``"pivoted"`` (default): with the dense preconditioner, the order of a diagonally pivoted
        Cholesky factorization of the start point, largest conditional variance first, so that
        variables nearly determined by the others come last: a near-singular ``R`` then puts its
        long-tailed canonical partial correlations in the last rows only. ``"given"`` keeps the
        release's order, as do the diagonal preconditioner and releases with a subset of the
        pairs. At ``n = 5820``, ``p = 7`` (smallest eigenvalue of ``R`` 0.003) the pivoted order
        gave 1.45x the effective draws per leapfrog step with the diagonal mass matrix
        (``docs/benchmarks.md``, "copula_mass"). Recorded (``order[i]``: the release's variable
        at place ``i``) in
        ``idata.attrs["noiseaware_variable_order"]``.

    Returns
    -------
    CopulaFit
        With ``idata`` (ArviZ), ``posterior_mean``, ``interval(level)``, ``summary()``,
        ``functional(fn)``, ``partial_slope(...)`` and ``plot(...)``.

    Raises
    ------
    ReleaseFormatError
        If the release is not a geometric ``"median_pairs"`` release.
    ValueError
        For bad sampler settings, or, before anything is compiled or allocated, when the fit's
        estimated memory (preconditioner plus stored draws) exceeds the machine's physical memory
        (or its cgroup limit); the message names ``p``, the estimate and the limit.
    KeyboardInterrupt
        When interrupted (Ctrl-C). PyMC catches the interrupt inside ``pm.sample`` and returns the
        draws made so far; this function detects that (a chain with fewer than ``warmup + draws``
        iterations) and re-raises, so an interrupted fit never passes for a finished one.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> from noiseaware.datasets import demo_copula_data
    >>> x, R, cols = demo_copula_data(seed=1, n=500)
    >>> rel = na.privatize(x[:, :2], statistic="median_pairs", epsilon=1.0, rng=np.random.default_rng(0))
    >>> res = fit(rel, chains=1, draws=200, warmup=200, seed=0, check_mixing=False)
    >>> res.posterior_mean.shape
    (2, 2)
    """
    release = _check_release(release)
    backend = v.choice(_OWNER, "backend", backend, ("numpyro", "pymc"))
    pr = _as_prior(prior)
    st = check_settings(
        _OWNER,
        chains=chains,
        draws=draws,
        warmup=warmup,
        seed=seed,
        progressbar=progressbar,
        target_accept=target_accept,
        check_mixing=check_mixing,
    )
    chains, draws, warmup, seed, target_accept = st.chains, st.draws, st.warmup, st.seed, st.target_accept
    preconditioner = v.choice(_OWNER, "preconditioner", preconditioner, ("auto", "dense", "diagonal"))
    mass_matrix = v.choice(_OWNER, "mass_matrix", mass_matrix, ("diagonal", "dense"))
    variable_order = v.choice(_OWNER, "variable_order", variable_order, ("pivoted", "given"))
    p = int(release.metadata["p"])
    if backend == "numpyro":
        if cores is not None:
            raise NoiseawareValueError(f"{_OWNER}: cores applies to backend='pymc' only; got cores={cores!r}.")
        idata = _numpyro_fit(
            release, pr, chains, draws, warmup, seed, progressbar, target_accept, preconditioner, mass_matrix,
            variable_order,
        )
    else:
        if mass_matrix != "diagonal":
            raise NoiseawareValueError(
                f"{_OWNER}: mass_matrix applies to backend='numpyro' only (PyMC adapts its own); "
                f"got mass_matrix={mass_matrix!r}."
            )
        if preconditioner != "auto":
            raise NoiseawareValueError(
                f"{_OWNER}: preconditioner applies to backend='numpyro' only; got preconditioner={preconditioner!r}."
            )
        if variable_order != "pivoted":
            raise NoiseawareValueError(
                f"{_OWNER}: variable_order applies to backend='numpyro' only; got variable_order={variable_order!r}."
            )
        if cores is not None:
            cores = v.integer(_OWNER, "cores", cores, minimum=1)
        _plan_memory(backend, p, int(release.n or 0), chains, draws, warmup)  # n: a checked release has it
        idata = _pymc_fit(release, pr, chains, draws, warmup, seed, progressbar, target_accept, cores)
    standard_stats(idata)
    idata.attrs.update({**st.as_attrs(), "noiseaware_prior": f"LKJ(eta={pr.eta:g})"})
    cols = tuple(_cols(release))
    if math.comb(len(cols), 2) != release.values.size:
        raise ReleaseFormatError(f"{_OWNER}: release has {release.values.size} values for {len(cols)} columns.")
    res = CopulaFit(idata, columns=cols, backend=backend, release=release, settings=st)
    if "log_likelihood" not in res.groups():  # built when ArviZ first reads it (az.loo, az.waic)
        res.add_lazy_group("log_likelihood", functools.partial(_pairs_log_likelihood, release=release))
    if st.check_mixing:
        import arviz as az

        # the free entries only (the diagonal is constant, the upper triangle repeats the lower)
        _mixing(az.InferenceData(posterior=res.pair_draws(), sample_stats=idata["sample_stats"]), ["R"], owner=_OWNER)
    return res
