r"""DPMCMC and DPreMCMC: the exact posterior of Guo et al. (2022) eq. (2) by record-level data augmentation.

Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional Data*, §4.2.2 samples

.. math::

    \pi(\alpha, D \mid S_L = s_L) \;\propto\; \prod_{j=1}^d
        p_{\text{Lap}}\Bigl(s_{L,j}\Bigm| s_{0,j}(D, a), \tfrac{-d\log a}{n\epsilon_1}\Bigr)
        \prod_{i=1}^n p_{\text{Dir}}(x_i\mid\alpha)\,\pi_0(\alpha), \qquad (2)

with :math:`s_0(D,a) = n^{-1}\sum_i \log\max(x_i, a)`, by the data-augmentation MCMC of Ju et al.
(2022) (Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data Augmentation for Private Posterior Estimation in R*, §3): the
confidential records are latent, each is updated
by Metropolis with a proposal from its prior :math:`\text{Dirichlet}(\alpha)` (so only the Laplace
ratio enters the acceptance) and an O(d) update of the censored log-sum (the record sweep of
:mod:`noiseaware.augment`, on a random window of the records per iteration);
:math:`\alpha\mid D` is drawn by random-walk Metropolis on the
complete-data posterior, and a joint move of :math:`\alpha` and all records keeps the chain from
sticking. Its stationary law is the exact posterior :math:`\pi(\alpha\mid s_L)`: no normal
approximation, censoring included. The whole sampler is one compiled JAX program with the
release's numbers as inputs (compiled once per shape), vectorized over chains and, in
:func:`dpmcmc_batch`, over releases.

DPreMCMC (eq. 5) replaces the ``n`` latent records by ``b < n`` records, each standing for
``w = n / b`` of them: likelihood :math:`\prod_{i=1}^b p_{\text{Dir}}(x_i\mid\alpha)^{w}`, and the
statistic :math:`s_0 = n^{-1}\,w\sum_{i=1}^b\log\max(x_i,a)` -- the mean of the replicated data
set -- with the *same* Laplace scale :math:`-d\log a/(n\epsilon_1)` (the release is unchanged;
only the model of the data behind it is coarsened). See :func:`dpmcmc` for what this changes.

Module private; the public name is exported by :mod:`noiseaware.dirichlet`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, random

from .. import _validation as v
from .._core._backend import get_backend
from .._core._dirichlet_release import LogMeanPart, logmean_parts, select_part
from .._core._gamma import log_dirichlet
from .._core._noise import NOISE_LAWS
from .._engine import (
    AUGMENTATION_ADVICE,
    RWM_TARGET_ACCEPT,
    MixingBlock,
    ProgramCache,
    SamplingSettings,
    chain_groups,
    check_settings,
    finish_fit,
    from_groups,
    release_attrs,
)
from .._engine._adapt import init_adaptation
from .._engine._compile import options_key
from .._engine._sweep import noise_log_density, record_sweep, statistic_total
from .._engine._x64 import float64
from .._validation import owned
from ..exceptions import NoiseawareTypeError
from ._boots import p1_prior
from ._dpmcmc_model import P1_RATE, P1_SHAPE, _initial_values, _prior_logdensity
from ._dpmcmc_moves import (
    _adapt_chain,
    _alpha_given_records,
    _Chain,
    _conditional_proposal_cholesky,
    _joint_move_cuberoot,
    _joint_move_surrogate,
    _log_fisher_cholesky,
    _SurrogateTarget,
    _vectorize,
    _WalkAdaptation,
    _window_sweep,
)
from ._result import NO_POINTWISE, prior_attrs

__all__ = ["P1_RATE", "P1_SHAPE", "dpmcmc", "dpmcmc_batch"]

_BLOCK = MixingBlock(
    "the data-augmentation sampler (record sweep, random-walk Metropolis on alpha, joint move)",
    AUGMENTATION_ADVICE,
    "alpha[j] is the concentration of part j.",
)

_JB = get_backend("jax")
_LAPLACE = NOISE_LAWS["laplace"].logpdf

_OWNER = "dpmcmc"
#: Metropolis-Hastings steps of the cube-root joint move per iteration (sharing one draw of the
#: auxiliary totals G_i); each costs O(nd) vectorized work. ``CUBEROOT_SAMPLER`` only.
JOINT_STEPS = 10
#: Corrected rounds of the surrogate joint move per iteration (the default) and random-walk steps
#: on the O(d) surrogate per round (:func:`_joint_move_surrogate`).
SURROGATE_ROUNDS = 1
SURROGATE_STEPS = 120
#: Below this mean acceptance of the surrogate move's exact correction over the second half of
#: warmup, ``dpmcmc`` starts again with the cube-root joint move (``_run``). Measured with the
#: fitted power map and the censoring-aware expansion of the log-sum: 0.82-0.97 on the simulated
#: grid of ``benchmarks/dpmcmc_speed.py``, 0.57-0.69 on BudgetUK (d = 6); before them 0.18-0.31 on
#: BudgetUK, where the fallback then ran.
SURROGATE_MIN_ACCEPT = 0.4
#: Random-walk Metropolis steps of log alpha given the records per iteration (O(d) each).
ALPHA_STEPS = 5
#: Fraction of the latent records updated by the record sweep of one iteration (a window at a
#: random offset; all records when there are at most ``SWEEP_MIN``).
SWEEP_FRACTION = 0.1
SWEEP_MIN = 300
#: Iterations per compiled block (the host loop between blocks drives the progress bar).
CHUNK = 100
_ALPHA = "alpha"


# ----------------------------------------------------------------------------- the compiled sampler
class _Sampler(NamedTuple):
    """The kernel mix of one iteration (part of the compiled program's cache key)."""

    joint_map: str  # "surrogate" (:func:`_joint_move_surrogate`) or "cuberoot" (:func:`_joint_move_cuberoot`)
    sweep_fraction: float
    sweep_min: int
    joint_steps: int  # Metropolis-Hastings steps of the joint move ("surrogate": corrected rounds)
    alpha_steps: int
    surrogate_steps: int = 0  # random-walk steps on the surrogate per round ("surrogate" only)

    def sweep_records(self, b: int) -> int:
        """Records updated by one iteration's sweep."""
        if self.sweep_fraction >= 1 or b <= self.sweep_min:
            return b
        return min(b, max(self.sweep_min, round(self.sweep_fraction * b)))


#: The default kernels: window sweep, surrogate-transition joint move.
DEFAULT_SAMPLER = _Sampler("surrogate", SWEEP_FRACTION, SWEEP_MIN, SURROGATE_ROUNDS, ALPHA_STEPS, SURROGATE_STEPS)
#: Window sweep and ten cube-root joint moves per iteration: the surrogate move's fallback (``_run``).
CUBEROOT_SAMPLER = _Sampler("cuberoot", SWEEP_FRACTION, SWEEP_MIN, JOINT_STEPS, ALPHA_STEPS)
#: The package's joint moves by ``_Sampler.joint_map`` (the tests pass other kernels as ``move_factory``).
_JOINT_MAPS: dict[str, Callable[..., Any]] = {"surrogate": _joint_move_surrogate, "cuberoot": _joint_move_cuberoot}


class _Data(NamedTuple):
    """One release's numbers, as arrays (arguments of the compiled program, not constants)."""

    s_dp: Any  # (d,) released log-sum n * s_L
    log_a: Any  # () log threshold
    scale_sum: Any  # () Laplace scale of the log-sum, -d log(a) / epsilon_1
    w: Any  # () weight of a latent record, n / b
    chol_alpha: Any  # (d, d) proposal of the draw of log alpha given the records
    chol_joint: Any  # (d, d) proposal of log alpha in the joint move (given the standardized records)


class _Static(NamedTuple):
    """What fixes the compiled program's shapes and code (the cache key, with the prior)."""

    b: int
    d: int
    chains: int
    releases: int
    joint: bool
    alpha_given_records: bool  # False only in tests of the joint move alone
    sampler: _Sampler
    exact: bool  # b == n (DPMCMC): the window sweep is used only then
    groups: int = 1  # chain groups, one per local device (:func:`~noiseaware._engine.chain_groups`)


#: Compiled (init, advance) programs keyed by (:class:`_Static`, prior, compiler options): the release's numbers are
#: arguments, so another release of the same shape reuses its program (the engine's cache).
_PROGRAMS = ProgramCache(maxsize=16)


def _program(static: _Static, prior: Any, move_factory: Callable[..., Any] | None = None) -> tuple[Any, Any]:
    """(init, advance): compiled, vectorized over releases and chains; cached unless given a factory."""
    if move_factory is None:
        factory = _JOINT_MAPS[static.sampler.joint_map]
        return _PROGRAMS.get((static, prior, options_key()), lambda: _make_program(static, prior, factory))
    return _make_program(static, prior, move_factory)


def _make_program(static: _Static, prior: Any, move_factory: Callable[..., Any]) -> tuple[Any, Any]:
    b, d = static.b, static.d
    # the window sweep only on the exact target (DPreMCMC's pseudo-Gibbs scheme keeps its full sweep)
    m_sweep = static.sampler.sweep_records(b) if static.exact else b
    log_prior, _ = _prior_logdensity(prior, d)
    alpha_move = _alpha_given_records(log_prior, b, static.sampler.alpha_steps)
    surrogate = static.sampler.joint_map == "surrogate"
    extra = {"surrogate_steps": static.sampler.surrogate_steps} if surrogate else {}
    joint = move_factory(log_prior, b, d, static.sampler.joint_steps, **extra)

    def pieces(data: _Data) -> tuple[Any, Any, Any]:
        def statistic(logx_i: Any, s: Any) -> Any:
            return data.w * jnp.maximum(logx_i, data.log_a)

        def laplace(s_obs: Any, s: Any) -> Any:  # the registry's Laplace law, summed over the d parts
            return jnp.sum(_LAPLACE(_JB, s_obs, s, data.scale_sum))

        def latent(key: Any, alpha: Any) -> Any:
            return log_dirichlet(key, alpha, (b,))

        return statistic, laplace, latent

    def init_chain(key: Any, alpha0: Any, data: _Data) -> _Chain:
        k_rec, k_run = random.split(key)
        logx = log_dirichlet(k_rec, alpha0, (b,))
        # the surrogate walk moves (log alpha, c) (2d coordinates); before its covariance is adapted, the
        # conditional proposal for log alpha and 1/sqrt(b) for the shift c of the standardized records
        kw = 2 * d if surrogate else d
        chol0 = jax.scipy.linalg.block_diag(data.chol_joint, jnp.eye(kw - d) / math.sqrt(b))
        walk = _WalkAdaptation(jnp.zeros((), jnp.float64), jnp.zeros((kw,)), jnp.zeros((kw, kw)), chol0)
        return _Chain(alpha0, logx, init_adaptation((2,)), jnp.zeros((), jnp.int32), k_run, alpha0, walk,
                      jnp.zeros((d,), jnp.float64))

    def iterate(state: _Chain, data: _Data, warmup: Any, target: Any) -> tuple[_Chain, Any]:
        statistic, laplace, latent = pieces(data)
        key, k_sweep, k_alpha, k_joint = random.split(state.key, 4)
        h = jnp.exp(state.adapt.log_step)
        if m_sweep >= b:
            logx, accept = record_sweep(
                k_sweep, state.logx, state.alpha, data.s_dp,
                latent=latent, statistic=statistic, log_density=laplace, per_record=False,
            )
        else:
            logx, accept = _window_sweep(k_sweep, state.logx, state.alpha, data.s_dp, m_sweep, statistic, laplace)
        alpha, p_alpha = state.alpha, jnp.ones((), jnp.float64)
        if static.alpha_given_records:
            alpha, p_alpha = alpha_move(k_alpha, alpha, jnp.sum(logx, axis=0), data.w, data.chol_alpha, h[0])
        p_joint = p_step = jnp.ones((), jnp.float64)
        theta = jnp.concatenate([jnp.log(alpha), jnp.zeros((d,), jnp.float64)])  # the surrogate walk's coordinates
        if static.joint and surrogate:
            def total(lx: Any) -> Any:
                return statistic_total(statistic, lx, data.s_dp)

            def log_eta(t: Any) -> Any:
                return laplace(data.s_dp, t)

            noisy_sum = _SurrogateTarget(total, log_eta, data.w, data.log_a)
            alpha, logx, p_joint, p_step, theta = joint(k_joint, alpha, logx, noisy_sum, h[1], state.walk.chol,
                                                        state.alpha_ref)
        elif static.joint:
            def log_noise(lx: Any) -> Any:
                return noise_log_density(lx, data.s_dp, statistic=statistic, log_density=laplace, per_record=False)

            alpha, logx, p_joint = joint(k_joint, alpha, logx, log_noise, h[1], data.chol_joint)
            p_step = p_joint
        adapt, walk, ref, log_sum = _adapt_chain(state, alpha, theta, p_alpha, p_step, warmup=warmup, target=target,
                                                 surrogate=surrogate)
        new = _Chain(alpha, logx, adapt, state.i + 1, key, ref, walk, log_sum)
        return new, (alpha, accept, p_alpha, p_joint, jnp.exp(adapt.log_step[1]))

    def advance_chain(state: _Chain, data: _Data, warmup: Any, target: Any) -> tuple[_Chain, Any]:
        return lax.scan(lambda s, _: iterate(s, data, warmup, target), state, None, length=CHUNK)

    return _vectorize(init_chain, advance_chain, static.groups)


# ----------------------------------------------------------------------------- inputs
class _Prepared(NamedTuple):
    data: _Data
    inits: np.ndarray  # (chains, d)
    part: LogMeanPart
    b: int
    w: float
    joint: bool
    part_index: int  # the part's index in the release (0 or 1 of a split release)


@owned(_OWNER)
def _prepare(
    release: Any,
    prior: Any,
    chains: int,
    seed: int,
    replicates: int,
    *,
    part: int | None,
    init: Any,
    joint_move: bool | None,
) -> _Prepared:
    """Check one release and the settings; the data of the compiled program for it."""
    p = select_part(release, part)
    count = len(logmean_parts(release))
    index = count - 1 if part is None else part % count
    d, n = p.d, p.n
    if d < 2:
        v.refuse("release", "must describe compositions of at least 2 parts", f"d={d}")
    r = v.integer("replicates", replicates, minimum=1)
    if r > n:
        v.refuse("replicates", f"must be at most the number of records n={n}", r)
    if joint_move is not None and not isinstance(joint_move, bool):
        raise NoiseawareTypeError(v.message("joint_move", "must be True, False or None", joint_move))
    log_prior, _ = _prior_logdensity(prior, d)
    b = max(1, round(n / r))
    w = n / b
    if joint_move and b != n:
        v.refuse(
            "joint_move", "needs the exact DPMCMC target (replicates=1); DPreMCMC has no joint density",
            joint_move, "Leave joint_move=None.",
        )
    use_joint = b == n if joint_move is None else joint_move
    scale_sum = p.scale * n  # Laplace scale of the released log-sum, -d log(a) / epsilon_1
    inits = np.stack([x[_ALPHA] for x in _initial_values(init, p, chains, seed)])
    bad = [i for i, a0 in enumerate(inits) if not np.isfinite(float(log_prior(jnp.asarray(a0))))]
    if bad:
        v.refuse("prior", "must have a finite log-density at the initial alpha", inits[bad[0]].tolist())
    ref = np.exp(np.mean(np.log(inits), axis=0))
    data = _Data(
        s_dp=np.asarray(p.s_l * n, dtype=np.float64),
        log_a=np.float64(math.log(p.a)),
        scale_sum=np.float64(scale_sum),
        w=np.float64(w),
        chol_alpha=_log_fisher_cholesky(ref, w * b),
        chol_joint=_conditional_proposal_cholesky(ref, n, scale_sum),
    )
    return _Prepared(data, inits, p, b, w, use_joint, index)


def _stage(
    preps: list[_Prepared], prior: Any, sampler: _Sampler, alpha_given_records: bool = True,
    devices: int | None = None, move_factory: Callable[..., Any] | None = None,
) -> tuple[Any, Any, _Data]:
    """The compiled ``(init, advance)`` for prepared releases of one shape, and their data stacked over releases.

    ``devices`` caps the chain groups (default: one per local device that divides the chains).
    """
    first = preps[0]
    chains, d = first.inits.shape
    exact = first.b == first.part.n
    groups = chain_groups(chains) if devices is None else math.gcd(chain_groups(chains), max(1, devices))
    static = _Static(first.b, d, chains, len(preps), first.joint, alpha_given_records, sampler, exact, groups)
    init, advance = _program(static, prior, move_factory)
    data = _Data(*(jnp.asarray(np.stack([np.asarray(getattr(p.data, f)) for p in preps]), dtype=jnp.float64)
                   for f in _Data._fields))
    return init, advance, data


def _run(
    preps: list[_Prepared],
    prior: Any,
    draws: int,
    warmup: int,
    seed: int,
    progressbar: bool,
    *,
    target_accept: float = RWM_TARGET_ACCEPT,
    alpha_given_records: bool = True,
    move_factory: Callable[..., Any] | None = None,
    sampler: _Sampler = DEFAULT_SAMPLER,
    devices: int | None = None,
    fallback: _Sampler | None = CUBEROOT_SAMPLER,
) -> dict[str, Any]:
    """Run the compiled sampler on prepared releases of one shape; arrays ``(release, chain, draw, ...)``.

    ``devices`` caps the chain groups (default: one per local device that divides ``chains``). With
    the surrogate joint move, the mean acceptance probability of its exact correction over the
    second half of warmup is checked once the warmup's whole chunks have run: where it is below
    ``SURROGATE_MIN_ACCEPT`` for any release (the O(d) surrogate is a poor guide there, e.g. a
    weakly identified scale of alpha), the run starts again with the ``fallback`` kernels (the
    cube-root joint move). The returned ``"sampler"`` is the kernel mix whose draws are returned.
    """

    def attempt(kernels: _Sampler, check: bool) -> dict[str, Any] | None:
        """One run with ``kernels``; ``None`` where ``check`` finds the surrogate's correction failing."""
        first = preps[0]
        chains = first.inits.shape[0]
        init, advance, data = _stage(preps, prior, kernels, alpha_given_records, devices, move_factory)
        keys = random.split(random.key(seed), len(preps) * chains).reshape(len(preps), chains)
        state = init(keys, jnp.asarray(np.stack([p.inits for p in preps]), dtype=jnp.float64), data)
        total = warmup + draws
        n_chunks = -(-total // CHUNK)
        out: list[tuple[np.ndarray, ...]] = []
        bar = None
        if progressbar:
            from tqdm.auto import tqdm

            bar = tqdm(total=n_chunks * CHUNK, desc=f"{_OWNER} ({len(preps)} x {chains} chains)")
        warm = jnp.asarray(warmup, dtype=jnp.int32)
        target = jnp.asarray(target_accept, dtype=jnp.float64)  # an argument: any target, one program
        surrogate = kernels.joint_map == "surrogate" and first.joint and move_factory is None
        check_at = warmup // CHUNK if surrogate and check else 0
        try:
            for i in range(n_chunks):
                state, res = advance(state, data, warm, target)
                out.append(tuple(np.asarray(x) for x in res))
                if bar is not None:
                    bar.update(CHUNK)
                if check_at and i + 1 == check_at and check_at * CHUNK >= warmup // 2 + CHUNK // 2:
                    p_corr = np.concatenate([o[3] for o in out], axis=2)[:, :, warmup // 2 :]
                    if float(np.min(p_corr.mean(axis=(1, 2)))) < SURROGATE_MIN_ACCEPT:
                        return None
        finally:
            if bar is not None:
                bar.close()
        names = ("alpha", "accept_rate", "alpha_accept_prob", "joint_accept_prob", "joint_step_size")
        raw: dict[str, Any] = {
            k: np.concatenate([o[j] for o in out], axis=2)[:, :, warmup:total] for j, k in enumerate(names)
        }
        return raw | {"sampler": kernels}

    raw = attempt(sampler, check=fallback is not None)
    if raw is None:  # the surrogate's correction accepted too little: the fallback's kernels, unchecked
        assert fallback is not None
        raw = attempt(fallback, check=False)
        assert raw is not None
        raw["fallback_from"] = sampler
    return raw

def _idata(
    raw: Mapping[str, Any], k: int, prep: _Prepared, release: Any, prior: Any, settings: SamplingSettings
) -> Any:
    """The result of release ``k`` of a run: the host's container (before :func:`finish_fit`)."""
    p, b, w = prep.part, prep.b, prep.w
    n, d = p.n, p.d
    alpha = raw["alpha"][k]
    columns = list(release.metadata.get("columns") or [f"x{j}" for j in range(d)])
    method = "DPMCMC" if b == n else "DPreMCMC"
    _, prior_text = _prior_logdensity(prior, d)
    smp = raw.get("sampler", DEFAULT_SAMPLER)
    swept = smp.sweep_records(b) if b == n else b
    if smp.joint_map == "surrogate":
        joint = (f"a joint move of alpha, the records' common shift and the records ({smp.surrogate_steps} "
                 "random-walk steps on an O(d) surrogate, one exact Metropolis-Hastings correction)")
    else:
        joint = f"{smp.joint_steps} joint moves of alpha and the records ({smp.joint_map} map)"
    if "fallback_from" in raw:
        joint += (f" -- the surrogate joint move's correction accepted less than {SURROGATE_MIN_ACCEPT:g} "
                  "on average in warmup, so the run was started again with these kernels")
    sampler = (
        f"data augmentation (Eng et al. 2024, §3; noiseaware.augment record sweep of {swept} of the {b} records "
        f"per iteration) with {smp.alpha_steps} random-walk Metropolis steps of log alpha given the records"
        + (f", then {joint}" if prep.joint else "")
    )
    attrs = {
        "method": method,
        "target": (
            "Guo et al. 2022, eq. (2), exact"
            if b == n
            else "Guo et al. 2022, eq. (5), pseudo-Gibbs on b replicated records"
        ),
        "sampler": sampler,
        "a": p.a,
        "n": n,
        "latent_records": b,
        "weight": w,
        "laplace_scale_logmean": p.scale,
        "epsilon_1": p.epsilon_1,
        "prior": prior_text,
        "warmup": settings.warmup,
        "noiseaware_observed_parts": [prep.part_index],
        "noiseaware_log_likelihood": NO_POINTWISE,  # one observed part: one joint term, no pointwise split
        **release_attrs(release),
    }
    if prior is None:  # p1, which dirichlet.prior(fit) reads back; a user's distribution or function is only described
        attrs |= prior_attrs(p1_prior(d), "p1")
    stats = {"accept_rate": raw["accept_rate"][k], "alpha_accept_prob": raw["alpha_accept_prob"][k]}
    if prep.joint:
        stats |= {"joint_accept_prob": raw["joint_accept_prob"][k], "joint_step_size": raw["joint_step_size"][k]}
    return from_groups(
        {
            "posterior": {_ALPHA: alpha, "composition": alpha / alpha.sum(axis=-1, keepdims=True)},
            "sample_stats": stats,
        },
        coords={"component": columns},
        dims={_ALPHA: ["component"], "composition": ["component"]},
        attrs=attrs,
    )


# ----------------------------------------------------------------------------- the sampler
@float64
@owned(_OWNER)
def dpmcmc(
    release: Any,
    prior: Any = None,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    replicates: int = 1,
    part: int | None = None,
    init: Mapping[str, Any] | list[Mapping[str, Any]] | None = None,
    joint_move: bool | None = None,
) -> Any:
    r"""DPMCMC (Guo et al. 2022, eq. 2) or DPreMCMC (eq. 5): Dirichlet posterior from a ``dirichlet_logmean`` release.

    The latent data are records :math:`x_i\sim\text{Dirichlet}(\alpha)` on the simplex, stored as
    :math:`\log x_i` (so that parts far below the threshold never underflow); each contributes the
    censored log-vector :math:`t_i=\log\max(x_i, a)` to the released log-sum
    :math:`\sum_i t_i`, observed through Laplace noise of the release's scale. One iteration is

    1. a sweep over the records, :math:`x_i^*\sim\text{Dirichlet}(\alpha)`, accepted with
       probability :math:`\min\{1, \prod_j p_{\text{Lap}}(s_{L,j}\mid s^*_{0,j}) /
       p_{\text{Lap}}(s_{L,j}\mid s_{0,j})\}` (Ju et al. 2022; Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data
       Augmentation for Private Posterior Estimation in R*, §3; the record sweep of
       :mod:`noiseaware.augment`); for DPMCMC, only a window of
       ``max(SWEEP_MIN, SWEEP_FRACTION * n)`` records (100 and 10%) at a random offset is swept
       per iteration (the others are fixed, their part of the log-sum a constant: each step still
       leaves eq. (2) invariant, and the joint moves, which cost O(nd) each, dominate the time),
    2. ``ALPHA_STEPS = 5`` random-walk Metropolis steps of :math:`\log\alpha` on the complete-data
       posterior :math:`\pi_0(\alpha)\prod_i p_{\text{Dir}}(x_i\mid\alpha)
       =\pi_0(\alpha)\exp\{(\alpha-1)^\top\sum_i\log x_i - n\log B(\alpha)\}` (eq. 1), which
       depends on the records through :math:`\sum_i\log x_i` only (O(d) a step; proposal
       covariance from the complete-data Fisher information), and
    3. for DPMCMC, a joint move of :math:`\alpha` and all records (Notes),

    whose stationary law is the exact posterior :math:`\pi(\alpha\mid s_L)` of eq. (2)
    (Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional Data*, §4.2.2:
    DPMCMC\ :sub:`p1` with the default prior). Both step sizes are adapted
    during warmup by dual averaging towards the acceptance probability ``target_accept``
    (default 0.3, the engine's target for random-walk moves) and then frozen; the joint move's
    random-walk covariance is also taken from warmup draws, then frozen.

    **DPreMCMC** (``replicates=r > 1``; Guo et al. 2022, eq. 5 and the sampler of §4.2.2). The ``n``
    records are replaced by :math:`b=\max(1,\operatorname{round}(n/r))` latent records, each
    replicated :math:`w=n/b` times (``w = r`` when ``r`` divides ``n``): each record contributes
    :math:`w\log\max(x_i,a)` to the log-sum, whose Laplace noise keeps the release's scale
    :math:`-d\log a/\epsilon_1` (eq. 5 keeps :math:`-d\log a/(n\epsilon_1)` on the mean: the
    release is unchanged, only the data behind it are coarsened), and :math:`\alpha` is drawn
    given the records from the replicated likelihood
    :math:`\pi_0(\alpha)\prod_{i=1}^b p_{\text{Dir}}(x_i\mid\alpha)^{w}`. The records are
    proposed from :math:`\text{Dirichlet}(\alpha)` and accepted by the Laplace ratio, as the paper
    describes ("proposal distribution ... Dirichlet(alpha^{t-1}) as in Ju et al."). Read
    literally, eq. (5) is *not* a proper joint density: the records' conditional
    :math:`p_{\text{Dir}}(x\mid\alpha)^{w}\propto\text{Dirichlet}(x\mid w(\alpha-1)+1)` has
    normalizer :math:`B(w(\alpha-1)+1)/B(\alpha)^w`, which diverges as any
    :math:`\alpha_j\downarrow 1-1/w` (a sampler of the literal joint runs to that boundary).
    So DPreMCMC here is the paper's pseudo-Gibbs scheme -- records as a representative sample of
    ``b`` draws, :math:`\alpha` as if each were seen ``w`` times -- an approximation to eq. (2)
    without a closed-form stationary law; the paper (§5.1) finds it less accurate for
    :math:`n=1000` or small :math:`\epsilon` and much faster for large :math:`n` (the sweep
    costs O(b)). ``replicates=1`` is the exact DPMCMC.

    Parameters
    ----------
    release : noiseaware.Release
        A ``privatize(..., statistic="dirichlet_logmean")`` release (Guo et al. 2022, Algorithm 1). The
        threshold ``a``, the part's ``n`` and the Laplace scale are read from it.
    prior : numpyro.distributions.Distribution or callable, optional
        :math:`\pi_0(\alpha)`: a NumPyro distribution whose ``log_prob`` broadcasts to ``(d,)``
        (summed), or a JAX function ``alpha -> log density``. Default: p1, independent
        :math:`\text{Gamma}(1, 0.1)` (shape, rate; Guo et al. 2022, §4.2.1). A data-split prior (p3 or p4
        fitted on :math:`S_L(D_1,a)`) goes here with ``part=1``.
    chains : int
        Number of chains (default 4). Run vectorized in one compiled program.
    draws : int
        Kept draws per chain (default 1000).
    warmup : int
        Warmup (tuning) iterations per chain, run before the kept draws (default 1000).
    seed : int, optional
        Random seed; drawn from the operating system when omitted. The seed used is recorded in
        ``noiseaware.results.settings(result).seed`` and ``result.attrs["noiseaware_seed"]``, so
        that any run can be repeated.
    progressbar : bool
        Show the sampler's progress bar (default False). The run advances in compiled blocks of
        ``CHUNK = 100`` iterations.
    target_accept : float, optional
        Target acceptance probability, in (0, 1), of the random-walk moves' step size adapted during
        warmup; default (None) 0.3 (``RWM_TARGET_ACCEPT``: a random walk in a few dimensions is most
        efficient near an acceptance rate of 0.234-0.44, Roberts, Gelman & Gilks 1997; NUTS's 0.8
        would make its steps small). It is the target of both adapted random-walk moves: the draw of
        :math:`\alpha` given the records and the joint move.
    check_mixing : bool
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when ``alpha`` has bulk ESS below 100
        per chain or R-hat above 1.01 (default True).
    replicates : int
        Copies per latent record (``n/b`` in Guo et al. 2022); 1 (default) is DPMCMC, more is DPreMCMC.
    part : int, optional
        Which part of a split release to analyse: 0 (:math:`D_1`) or 1 (:math:`D_2`). Default: the
        last part (:math:`D_2` of a split release, the whole data otherwise).
    init : dict or list of dict, optional
        ``{"alpha": array}`` for all chains or one per chain. Default: Minka's (2000) fixed point
        at the L1 projection of :math:`s_L` onto :math:`\mathrm{Range}(S_0)`, jittered per chain.
    joint_move : bool, optional
        Add the joint move of :math:`\alpha` and all records (Notes) to every iteration. Default
        (None): on for DPMCMC, off for DPreMCMC (whose eq. 5 has no joint density to keep
        invariant; True there raises).

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        Returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData under ArviZ 0.x), as
        ``pm.sample`` does. ``posterior``: ``alpha`` and
        ``composition`` :math:`=E[x\mid\alpha]=\alpha/\sum_j\alpha_j`,
        dims ``(chain, draw, component)`` with the release's column names (pooled draws:
        ``noiseaware.results.draws(res, "alpha")``; posterior mean: :func:`posterior_mean`).
        ``sample_stats``: ``accept_rate`` (fraction of record proposals accepted per sweep),
        ``alpha_accept_prob`` and, with the joint move, ``joint_accept_prob`` and
        ``joint_step_size``. Root ``attrs``: the sampler settings, ``method``, ``target``,
        ``sampler``, ``a``, ``n``, ``latent_records`` (``b``), ``weight`` (``w``), the Laplace
        scale of the mean, ``epsilon_1``, ``prior`` (a description), ``noiseaware_prior`` (the
        default prior p1 only: :func:`prior`), ``noiseaware_observed_parts`` (:func:`observed_parts`),
        ``noiseaware_log_likelihood`` (why there is no ``log_likelihood`` group: the one observed
        part is one noisy vector, with no per-record terms; ``docs/dirichlet.md``, "Model
        comparison") and the release (:func:`noiseaware.results.release`).

    Raises
    ------
    TypeError, ValueError
        If ``release`` is not a ``dirichlet_logmean`` release, or for a bad prior, ``replicates``,
        ``part``, ``init`` or sampler setting.

    Warns
    -----
    MixingWarning
        Poor mixing of ``alpha`` (data augmentation is slow when the noise is large compared with
        the sampling variability of :math:`S_0`, Eng et al. (2024) §6).

    See Also
    --------
    dpmcmc_batch : the same sampler on many releases of one shape in one compiled program.

    Notes
    -----
    Zeros in the confidential data (``zeros="censor"`` at release) are consistent with this
    model: a latent part below ``a`` contributes :math:`\log a`, exactly as a zero did.

    **Joint move** (``joint_move``, on by default for DPMCMC). Plain augmentation is sticky here:
    ``n`` records pin :math:`\alpha` while each record moves little per sweep (Eng et al. 2024, §6). So
    each iteration ends with a move of :math:`\alpha` and *all* records together: each record,
    written as :math:`x_{ij}=g_{ij}/\sum_k g_{ik}` with :math:`g_{ij}\sim\text{Gamma}(\alpha_j)`
    (the totals drawn afresh as auxiliary variables), is carried along by the affine map of a
    power :math:`g_{ij}^{p_j}` that matches its mean and sd (the exponent whose standardized law
    changes least with :math:`\alpha_j`, so that the map nearly pushes
    :math:`\text{Gamma}(\alpha_j)` forward to :math:`\text{Gamma}(\alpha'_j)`), and
    :math:`\log\alpha`, together with a common shift :math:`c` of all standardized records, moves
    by a *surrogate transition* (Liu 2001, §9.4.3):
    ``SURROGATE_STEPS = 120`` random-walk steps on an O(d) approximation of the target (the
    censored log-sum to first order in :math:`(\log\alpha, c)` plus the curvature of the expected
    log-sum :math:`n\{\psi(\alpha_j)-\psi(\sum_k\alpha_k)\}`, and a second-order expansion of
    the Gamma densities, at a reference point fixed after warmup at the geometric mean of
    :math:`\alpha` over warmup's second half), then one Metropolis-Hastings correction with the
    exact O(nd) density (prior, Gamma densities, Jacobian, Laplace density of the new censored
    log-sum), which keeps eq. (2) exact whatever the approximation's error. The shift lets the
    records' sampling noise in the log-sum change within one move. Where the approximation is
    poor (the correction accepts less than ``SURROGATE_MIN_ACCEPT = 0.4`` on average over the
    second half of warmup, for any release of a :func:`dpmcmc_batch` call) the run starts again
    with ten exact random-walk joint moves per iteration on the cube-root map; ``attrs["sampler"]``
    says which kernels made the draws. Measured: 0.82-0.97 on simulated releases with shapes of
    1.5-6, 0.57-0.69 on BudgetUK (``docs/dirichlet.md``). (With Wilson-Hilferty's cube root as the
    power, ``n`` fixed standardized records pinned :math:`\alpha` more tightly than its posterior at
    small shapes and large ``n``, and the move barely moved: :func:`_power`.)
    Against the kernels this sampler started from -- a map affine in :math:`\log g_{ij}`, ten
    exact random-walk steps at O(nd) each and a sweep of every record per iteration -- the
    measured gains are in ``docs/benchmarks.md``, "dpmcmc speed".

    **Compilation.** The sampler is one JAX program whose inputs are the release's numbers
    (:math:`s_L`, ``a``, the scale, the starting values), compiled once per shape
    (``n`` or ``b``, ``d``, chains, number of releases) and prior object and kept in a small
    cache: a second call with another release of the same shape starts sampling at once.
    Dirichlet proposals use an array-wide exact Marsaglia-Tsang log-Gamma sampler (about 4 times
    faster on a CPU than ``jax.random.loggamma``'s per-element loop). The chains run in one group
    per local JAX device (one XLA host device per core, :func:`noiseaware.config.host_devices`;
    ``NOISEAWARE_HOST_DEVICES=1`` keeps them on one), at the same time; each chain's random
    numbers come from its own key, so the device count does not change the law of the draws
    (rounding in differently compiled programs can still make long runs differ in their digits).

    References
    ----------
    Guo et al. (2022) §4.2, eqs. (1), (2), (5), Table 1; Eng et al. 2024, §3 (Ju, Awan, Gong & Rao 2022).

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> from noiseaware.dirichlet import dpmcmc
    >>> x = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=200)
    >>> rel = na.privatize(x, statistic="dirichlet_logmean", epsilon=1.0, threshold=1e-3,
    ...                    rng=np.random.default_rng(1))
    >>> res = dpmcmc(rel, draws=300, warmup=300, chains=2, seed=0, check_mixing=False)
    >>> res["posterior"]["composition"].shape, na.results.draws(res, "alpha").shape
    ((2, 300, 3), (600, 3))
    """
    st = check_settings(
        chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing, default_target=RWM_TARGET_ACCEPT,
    )
    prep = _prepare(release, prior, st.chains, st.seed, replicates, part=part, init=init, joint_move=joint_move)
    raw = _run([prep], prior, st.draws, st.warmup, st.seed, st.progressbar, target_accept=st.target_accept)
    return _finish(_idata(raw, 0, prep, release, prior, st), st)


@owned(_OWNER)
def _finish(idata: Any, st: SamplingSettings) -> Any:
    """:func:`finish_fit` of one release's result."""
    return finish_fit("dirichlet.dpmcmc", idata, st, check=[_ALPHA], block=_BLOCK, default_var=_ALPHA)


@float64
@owned(_OWNER)
def dpmcmc_batch(
    releases: Sequence[Any],
    prior: Any = None,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    replicates: int = 1,
    part: int | None = None,
    joint_move: bool | None = None,
) -> list[Any]:
    r""":func:`dpmcmc` on many releases of one shape at once (simulation studies).

    Runs the sampler of :func:`dpmcmc`, with the same settings, for every release in one compiled
    program vectorized over releases and chains. On a CPU this is much faster than a loop of
    :func:`dpmcmc` calls: the record sweep is sequential over records, and a vectorized step over
    many chains costs little more than one. Release ``k`` gets the seed stream of its own index
    (results differ from ``dpmcmc(releases[k], seed=seed)``, with the same law).

    Parameters
    ----------
    releases : sequence of noiseaware.Release
        ``dirichlet_logmean`` releases with the same number of parts ``d`` and the same number of
        latent records ``b`` (the same ``n`` for DPMCMC); their thresholds, scales and values may
        differ.
    prior, replicates, part, joint_move
        As in :func:`dpmcmc` (the default starting values of each release are its own).
    chains : int
        Number of chains (default 4).
    draws : int
        Kept draws per chain (default 1000).
    warmup : int
        Warmup (tuning) iterations per chain, run before the kept draws (default 1000).
    seed : int, optional
        Random seed; drawn from the operating system when omitted. The seed used is recorded in
        ``noiseaware.results.settings(result).seed`` and ``result.attrs["noiseaware_seed"]``, so
        that any run can be repeated. Every result records the same settings (release ``k`` ran with
        the seed stream of its index).
    progressbar : bool
        Show the sampler's progress bar (default False).
    target_accept : float, optional
        Target acceptance probability, in (0, 1), of the random-walk moves' step size adapted during
        warmup; default (None) 0.3 (``RWM_TARGET_ACCEPT``: a random walk in a few dimensions is most
        efficient near an acceptance rate of 0.234-0.44, Roberts, Gelman & Gilks 1997; NUTS's 0.8
        would make its steps small).
    check_mixing : bool
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when ``alpha`` has bulk ESS below 100
        per chain or R-hat above 1.01 (default True).

    Returns
    -------
    list
        One result per release, as :func:`dpmcmc` returns: a plain list of xarray.DataTree under
        ArviZ 1 (of arviz.InferenceData under ArviZ 0.x).

    Raises
    ------
    TypeError, ValueError
        As :func:`dpmcmc`; and when ``releases`` is empty or the releases differ in ``d`` or ``b``.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> from noiseaware.dirichlet import dpmcmc_batch
    >>> rels = [na.privatize(np.random.default_rng(k).dirichlet([2.0, 3.0, 4.0], size=200),
    ...                      statistic="dirichlet_logmean", epsilon=1.0, threshold=1e-3,
    ...                      rng=np.random.default_rng(10 + k)) for k in range(3)]
    >>> fits = dpmcmc_batch(rels, draws=200, warmup=200, chains=2, seed=0, check_mixing=False)
    >>> [f["posterior"]["alpha"].shape for f in fits]
    [(2, 200, 3), (2, 200, 3), (2, 200, 3)]
    """
    st = check_settings(
        chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing, default_target=RWM_TARGET_ACCEPT,
    )
    if isinstance(releases, (str, bytes)) or not isinstance(releases, Sequence):
        raise NoiseawareTypeError(v.message("releases", "must be a list of releases", type(releases).__name__))
    if len(releases) == 0:
        v.refuse("releases", "must hold at least one release", "[]")
    preps = [
        _prepare(rel, prior, st.chains, st.seed + k, replicates, part=part, init=None, joint_move=joint_move)
        for k, rel in enumerate(releases)
    ]
    shapes = {(p.part.d, p.b) for p in preps}
    if len(shapes) != 1:
        v.refuse(
            "releases", "must share d and the number of latent records b (n for DPMCMC)",
            sorted(f"d={d}, b={b}" for d, b in shapes), "Group the releases by n and d.",
        )
    raw = _run(preps, prior, st.draws, st.warmup, st.seed, st.progressbar, target_accept=st.target_accept)
    return [
        _finish(_idata(raw, k, prep, rel, prior, st), st)
        for k, (prep, rel) in enumerate(zip(preps, releases, strict=True))
    ]
