"""``sample()``: data-augmentation MCMC for a privatized statistic (Eng et al. 2024, §3-§4)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax import random
from numpyro import handlers
from numpyro.distributions import constraints
from numpyro.distributions.transforms import biject_to
from numpyro.infer import HMC, MCMC, NUTS, HMCGibbs
from numpyro.infer.gibbs import with_conditioning
from numpyro.infer.initialization import init_to_sample
from numpyro.infer.mcmc import MCMCKernel

from .. import _validation as v
from .._engine import (
    AUGMENTATION_ADVICE,
    ESS_PER_CHAIN,
    RHAT_MAX,
    RWM_TARGET_ACCEPT,
    MixingBlock,
    SamplingSettings,
    check_mixing,
    check_settings,
    finish_fit,
    from_groups,
    jit,
    release_attrs,
)
from .._engine._adapt import StepAdaptation, adapt_step, dual_averaging, init_adaptation
from .._engine._nuts import nuts_kernel_options
from .._engine._sweep import noise_log_density, record_sweep
from .._engine._x64 import float64
from .._validation import owned
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..release import Release
from ._model import AugmentationModel, mechanism_log_density

__all__ = [
    "ACCEPT_SITE",
    "ESS_PER_CHAIN",
    "JOINT_TARGET_ACCEPT",
    "PER_UNIT_FAMILIES",
    "RHAT_MAX",
    "check_mixing",
    "dual_averaging",
    "sample",
]

_OWNER = "sample"
#: Name of the bookkeeping site that carries a sweep's acceptance rate through ``HMCGibbs``.
ACCEPT_SITE = "augment_accept_rate"
#: Mechanism families that add independent noise to every entry: a release of one value per unit
#: with one of these can be sampled with ``per_record=True`` (one record per unit), exactly.
PER_UNIT_FAMILIES = ("geometric", "discrete_gaussian", "laplace", "gaussian")
#: Default target acceptance probability of the joint move's step-size adaptation (a random-walk
#: Metropolis move in a few dimensions: Roberts, Gelman & Gilks 1997 give 0.234 as d grows, 0.44 at d = 1).
JOINT_TARGET_ACCEPT = RWM_TARGET_ACCEPT
class _State(NamedTuple):
    """State of the conjugate augmentation kernel: all values (``z``) and the key."""

    z: dict[str, Any]
    rng_key: Any


class _ConjugateAugmentation(MCMCKernel):
    """Records sweep, then ``theta ~ posterior(records)``: dapper's sampler as a NumPyro kernel."""

    sample_field = "z"

    def __init__(self, sweep: Callable[..., Any], posterior: Callable[..., Any], names: tuple[str, ...]) -> None:
        self._sweep = sweep
        self._posterior = posterior
        self._names = names

    def init(self, rng_key: Any, num_warmup: int, init_params: Any, model_args: Any, model_kwargs: Any) -> _State:
        return _State(dict(init_params), rng_key)

    def sample(self, state: _State, model_args: Any, model_kwargs: Any) -> _State:
        key, k_sweep, k_theta = random.split(state.rng_key, 3)
        recs = {k: state.z[k] for k in self._names}
        theta = {k: x for k, x in state.z.items() if k not in self._names and k != ACCEPT_SITE}
        recs, accept = self._sweep(k_sweep, recs, theta)
        new = self._posterior(k_theta, recs, theta)
        if set(new) != set(theta):
            raise NoiseawareValueError(
                f"{_OWNER}: posterior must return the parameters {sorted(theta)}; got {sorted(new)}."
            )
        for k, old in theta.items():
            if jnp.shape(new[k]) != jnp.shape(old):
                raise NoiseawareValueError(
                    f"{_OWNER}: posterior must keep the shape of {k!r}, {jnp.shape(old)}; got {jnp.shape(new[k])}."
                )
        theta = {k: jnp.asarray(new[k]).astype(jnp.result_type(theta[k])) for k in theta}
        return _State({**theta, **recs, ACCEPT_SITE: accept}, key)


class _JointState(NamedTuple):
    """State of :class:`_WithJointMove`: the inner kernel's state plus the joint move's adaptation."""

    z: dict[str, Any]
    inner: Any
    step_size: Any
    joint_accept_prob: Any
    adapt: StepAdaptation  # dual averaging of log(step_size) (noiseaware._engine._adapt)
    i: Any
    rng_key: Any


class _WithJointMove(MCMCKernel):
    """One iteration of ``inner`` (record sweep, theta step), then the model's joint move.

    The joint move updates theta and the records together by Metropolis-Hastings; its scalar
    ``step_size`` is adapted during warmup by dual averaging (Hoffman & Gelman 2014, §3.2) towards
    ``target_accept`` and frozen at the averaged iterate afterwards, so the kept draws come from a
    fixed, target-invariant transition. The new values are written back into the inner state: for
    NUTS in ``HMCGibbs`` the parameters in NUTS's unconstrained space, and NUTS's potential energy
    and gradient are recomputed with the new records.
    """

    sample_field = "z"

    def __init__(
        self,
        inner: MCMCKernel,
        move: Callable[..., Any],
        names: tuple[str, ...],
        params: tuple[str, ...],
        transforms: Mapping[str, Any] | None,
        target_accept: float,
        repeats: int = 1,
    ) -> None:
        self._inner = inner
        self._repeats = repeats
        self._move = move
        self._names = names
        self._params = params
        self._transforms = transforms
        self._target = target_accept
        self._num_warmup = 0
        self._hmc_block: int | None = None
        self._gibbs_block: int | None = None
        if transforms is not None:  # NUTS in (block) HMCGibbs: locate its two blocks
            blocks = getattr(inner, "blocks", None)
            if blocks is None:
                raise NoiseawareValueError(
                    f"{_OWNER}: joint_move with NUTS needs NumPyro's block Gibbs (HMCGibbs with block_states); "
                    f"this NumPyro ({numpyro.__version__}) has none. Give posterior= or leave out joint_move."
                )
            for i, (k, _) in enumerate(blocks):
                if isinstance(k, HMC):
                    self._hmc_block = i
                else:
                    self._gibbs_block = i

    @property
    def model(self) -> Any:
        return getattr(self._inner, "model", None)

    @property
    def default_fields(self) -> tuple[str, ...]:
        return ("z",)

    def get_diagnostics_str(self, state: _JointState) -> str:
        return f"{self._inner.get_diagnostics_str(state.inner)} | joint step {float(state.step_size):.3g}"

    def postprocess_fn(self, model_args: Any, model_kwargs: Any) -> Any:
        return self._inner.postprocess_fn(model_args, model_kwargs)

    def init(self, rng_key: Any, num_warmup: int, init_params: Any, model_args: Any, model_kwargs: Any) -> _JointState:
        k_inner, k_move = random.split(rng_key)
        inner = self._inner.init(k_inner, num_warmup, init_params, model_args, model_kwargs)
        self._num_warmup = num_warmup
        zero = jnp.zeros((), dtype=jnp.float64)
        return _JointState(inner.z, inner, zero + 1.0, zero, init_adaptation(), jnp.zeros((), jnp.int32), k_move)

    def _read(self, inner: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        z = inner.z
        if self._transforms is None:
            theta = {k: z[k] for k in self._params}
        else:
            theta = {k: self._transforms[k](z[k]) for k in self._params}
        return theta, {k: z[k] for k in self._names}

    def _write(self, inner: Any, theta: Mapping[str, Any], recs: Mapping[str, Any], model_args: Any,
               model_kwargs: Any) -> Any:
        if self._transforms is None:
            return inner._replace(z={**inner.z, **theta, **recs})
        assert self._hmc_block is not None and self._gibbs_block is not None  # set in __init__
        states = list(inner.block_states)
        gibbs = states[self._gibbs_block]
        gibbs = gibbs._replace(z={**gibbs.z, **recs})
        free = {k: self._transforms[k].inv(theta[k]).astype(jnp.result_type(inner.z[k])) for k in self._params}
        hmc_kernel = self._inner.blocks[self._hmc_block][0]  # type: ignore[attr-defined]
        kwargs = with_conditioning(model_kwargs, dict(gibbs.z))
        hmc = hmc_kernel.refresh(states[self._hmc_block]._replace(z=free), model_args, kwargs)
        states[self._gibbs_block], states[self._hmc_block] = gibbs, hmc
        return inner._replace(z={**inner.z, **recs, **free}, block_states=tuple(states))

    def _moves(self, key: Any, theta: Any, recs: Any, step: Any) -> Any:
        """``repeats`` joint moves in a row; the mean acceptance probability."""
        if self._repeats == 1:
            return self._move(key, theta, recs, step)

        def body(carry: Any, k: Any) -> Any:
            th, r = carry
            th, r, prob = self._move(k, th, r, step)
            th = {name: jnp.asarray(th[name]).astype(jnp.result_type(theta[name])) for name in theta}
            r = {name: jnp.asarray(r[name]).astype(jnp.result_type(recs[name])) for name in recs}
            return (th, r), jnp.asarray(prob, dtype=jnp.float64)

        (theta, recs), probs = jax.lax.scan(body, (dict(theta), dict(recs)), random.split(key, self._repeats))
        return theta, recs, jnp.mean(probs)

    def sample(self, state: _JointState, model_args: Any, model_kwargs: Any) -> _JointState:
        model_kwargs = {} if model_kwargs is None else model_kwargs
        inner = self._inner.sample(state.inner, model_args, model_kwargs)
        key, k_move = random.split(state.rng_key)
        theta, recs = self._read(inner)
        theta_new, recs_new, prob = self._moves(k_move, theta, recs, state.step_size)
        for k, old in theta.items():
            if jnp.shape(theta_new[k]) != jnp.shape(old):
                raise NoiseawareValueError(
                    f"{_OWNER}: joint_move must keep the shape of {k!r}, {jnp.shape(old)}; "
                    f"got {jnp.shape(theta_new[k])}."
                )
        theta_new = {k: jnp.asarray(theta_new[k]).astype(jnp.result_type(theta[k])) for k in theta}
        recs_new = {k: jnp.asarray(recs_new[k]).astype(jnp.result_type(recs[k])) for k in recs}
        inner = self._write(inner, theta_new, recs_new, model_args, model_kwargs)
        prob = jnp.asarray(prob, dtype=jnp.float64)
        prob = jnp.where(jnp.isnan(prob), 0.0, jnp.clip(prob, 0.0, 1.0))
        # adapt log(step_size) during warmup, then freeze it (the engine's dual averaging)
        adapt = adapt_step(state.adapt, state.i, prob, self._target, self._num_warmup)
        return _JointState(inner.z, inner, jnp.exp(adapt.log_step), prob, adapt, state.i + 1, key)


@owned(_OWNER)
def _resolve_sdp(aug: AugmentationModel, sdp: Any) -> tuple[Any, Callable[[Any, Any], Any], bool, dict[str, Any]]:
    """s_dp as float64, the mechanism log-density, per_record, and attrs describing the release."""
    attrs: dict[str, Any] = {}
    if isinstance(sdp, Release):
        if aug.log_density is not None:
            raise NoiseawareValueError(
                f"{_OWNER}: the release carries its mechanism; give an AugmentationModel without log_density, or "
                "pass the release's values as sdp. Got both."
            )
        log_density = mechanism_log_density(sdp.mechanism)
        per_record = sdp.composition == "per_record"
        per_unit = aug.per_record is True and not per_record and sdp.mechanism.family in PER_UNIT_FAMILIES
        if per_unit:
            per_record = True  # one record per entry: exact for entrywise additive noise (AugmentationModel Notes)
        if aug.per_record is not None and aug.per_record != per_record:
            raise NoiseawareValueError(
                f"{_OWNER}: per_record={aug.per_record!r} contradicts the release's composition "
                f"{sdp.composition!r} with mechanism {sdp.mechanism.family!r} (per_record=True needs a record-level "
                f"release, or entrywise additive noise: {list(PER_UNIT_FAMILIES)}); got per_record={aug.per_record!r}."
            )
        values = np.asarray(sdp.values, dtype=np.float64)
        attrs = {
            "release_statistic": sdp.statistic,
            "mechanism": sdp.mechanism.family,
            "guarantee": sdp.guarantee.describe(),
            "release_secure": int(sdp.secure),
            "per_unit": int(per_unit),
            **release_attrs(sdp),
        }
    else:
        values = v.finite_array(
            "sdp", sdp, remedy="Pass the released values as published (release.values), or the Release."
        )
        if aug.log_density is None:
            raise NoiseawareValueError(
                f"{_OWNER}: sdp is a plain array, so the model must give log_density=; got log_density=None. "
                "Pass a noiseaware Release to take the density from its mechanism."
            )
        log_density = aug.log_density
        per_record = bool(aug.per_record)
    if values.ndim == 0:
        values = values.reshape(1)
    if per_record and values.ndim < 1:
        raise NoiseawareValueError(
            f"{_OWNER}: a record-level sdp needs a leading record axis; got shape {values.shape}."
        )
    return jnp.asarray(values), log_density, per_record, attrs


def _chain_inits(init: Any, chains: int) -> list[dict[str, Any]] | None:
    if init is None:
        return None
    if isinstance(init, Mapping):
        return [dict(init)] * chains
    if isinstance(init, Sequence) and not isinstance(init, str) and all(isinstance(d, Mapping) for d in init):
        if len(init) != chains:
            raise NoiseawareValueError(
                f"{_OWNER}: init must be one dict or one dict per chain ({chains}); got {len(init)} dicts."
            )
        return [dict(d) for d in init]
    raise NoiseawareTypeError(
        f"{_OWNER}: init must be a dict of parameter values or a list of them; got init={init!r}."
    )


def _stack(dicts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {k: np.stack([np.asarray(d[k]) for d in dicts]) for k in dicts[0]}


@float64
@owned(_OWNER)
def sample(
    model: AugmentationModel,
    sdp: Any,
    init: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    *,
    chains: int = 4,
    draws: int = 1000,
    warmup: int = 1000,
    seed: int | None = None,
    progressbar: bool = False,
    target_accept: float | None = None,
    check_mixing: bool = True,
    keep_records: bool = False,
    nuts_kwargs: Mapping[str, Any] | None = None,
    joint_target_accept: float = JOINT_TARGET_ACCEPT,
    joint_repeats: int = 1,
) -> Any:
    r"""Draw from :math:`p(\theta\mid s_{dp})` by data augmentation (Eng et al. 2024, §3; Ju et al. 2022).

    Each iteration updates every record once by Metropolis-within-Gibbs (proposal
    :math:`x_i^*\sim f(\cdot\mid\theta)`, O(1) statistic update
    :math:`s^*=s-t_i(x_i)+t_i(x_i^*)`, acceptance
    :math:`\min\{1,\eta(s_{dp}\mid s^*)/\eta(s_{dp}\mid s)\}`), then draws
    :math:`\theta\mid x` -- with ``model.posterior`` when given, else by NUTS on ``model.model``
    inside NumPyro's :class:`~numpyro.infer.HMCGibbs` with the record sweep as the Gibbs step.
    The sweep is a compiled :func:`jax.lax.scan` (one vectorized pass for record-level
    mechanisms) and chains run vectorized with :func:`jax.vmap`, all in float64. When the model
    has a ``joint_move``, it runs last in each iteration, inside the same compiled loop, with its
    step size adapted during warmup (dual averaging to ``joint_target_accept``) and then fixed.

    Parameters
    ----------
    model : AugmentationModel
        The augmentation model.
    sdp : array_like or noiseaware.Release
        The privatized statistic :math:`s_{dp}`. A :class:`~noiseaware.Release` stands in for
        both ``s_dp`` and the mechanism: its values are ``s_dp`` and the log-density is built
        from its mechanism (:func:`~noiseaware.augment.mechanism_log_density`); record-level when
        its composition is ``"per_record"``, or per-unit (record ``i`` is entry ``i``) when the
        model says ``per_record=True`` and the mechanism adds independent noise to every entry
        (:data:`PER_UNIT_FAMILIES`; ``attrs["per_unit"]`` is then 1).
    init : dict or list of dict, optional
        Initial parameter values (constrained; dapper's ``init_par``), one dict for all chains or
        one per chain; record sites may be included too. Default: a prior draw per chain from
        ``model.model``. Records not given start as a draw from :math:`f(\cdot\mid\theta_0)`.
    chains : int
        Number of chains (default 4). Run vectorized.
    draws : int
        Kept draws per chain (default 1000).
    warmup : int
        Warmup (tuning) iterations per chain, run before the kept draws (default 1000).
    seed : int, optional
        Random seed; drawn from the operating system when omitted. The seed used is recorded in
        ``noiseaware.results.settings(result).seed`` and ``result.attrs["noiseaware_seed"]``, so
        that any run can be repeated.
    progressbar : bool
        Show the sampler's progress bar (default False). For watching long runs, and slower: the
        chains then run one after another with one host round trip per iteration, where without it
        all chains and iterations are a single compiled, vectorized program.
    target_accept : float, optional
        Target acceptance probability, in (0, 1), of NUTS's step size adapted during warmup; default
        (None) 0.8 (``NUTS_TARGET_ACCEPT``, the default of Stan, PyMC and NumPyro). Only with NUTS:
        with ``posterior=`` there is no NUTS step and a value raises. The joint move has its own
        target, ``joint_target_accept``.
    check_mixing : bool
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when a parameter has bulk ESS below 100
        per chain or R-hat above 1.01 (default True).
    keep_records : bool
        Also store the records of every draw (memory ``chains * draws * n``).
    nuts_kwargs : mapping, optional
        Passed to :class:`numpyro.infer.NUTS` (e.g. ``max_tree_depth``; the target is
        ``target_accept``).
    joint_target_accept : float
        Target acceptance probability in (0, 1) of the model's ``joint_move`` during warmup
        (default ``JOINT_TARGET_ACCEPT = 0.3``).
    joint_repeats : int
        Joint moves per iteration (default 1); worth raising when the move is cheap next to the
        record sweep. ``joint_accept_prob`` is then their mean acceptance probability.

    Returns
    -------
    xarray.DataTree or arviz.InferenceData
        Returns an xarray.DataTree under ArviZ 1 (an arviz.InferenceData under ArviZ 0.x), as
        ``pm.sample`` does. ``posterior``: the parameters (and records when ``keep_records``),
        dims ``(chain, draw, ...)``; their draws pooled over chains are
        ``noiseaware.results.draws(fit, name)``. ``sample_stats``: ``accept_rate``, the fraction
        of the ``n`` record proposals accepted in each iteration; with NUTS also ``diverging`` and
        ``n_steps``; with a ``joint_move`` also ``joint_accept_prob`` (its acceptance probability)
        and ``joint_step_size``. Root ``attrs``: the sampler settings, ``sampler``, ``n_records``,
        ``per_record``, ``warmup``; for a release also ``mechanism``, ``release_statistic``,
        ``guarantee``, ``release_secure``, ``per_unit`` and the release itself (read with
        :func:`noiseaware.results.release`).

    Raises
    ------
    TypeError, ValueError
        For bad arguments, mismatched shapes, or a release whose mechanism has no log-density here.

    Warns
    -----
    MixingWarning
        When a parameter's bulk ESS is below 100 per chain or its R-hat exceeds 1.01.

    Examples
    --------
    See :class:`AugmentationModel`, ``docs/augment.md`` and ``examples/dapper_*.py``.
    """
    if not isinstance(model, AugmentationModel):
        raise NoiseawareTypeError(v.message("model", "must be an AugmentationModel", type(model).__name__))
    settings = check_settings(
        chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing,
    )
    chains, draws, warmup, seed = settings.chains, settings.draws, settings.warmup, settings.seed
    if not isinstance(keep_records, bool):
        raise NoiseawareTypeError(v.message("keep_records", "must be True or False", keep_records))
    target = v.real("joint_target_accept", joint_target_accept)
    if not 0.0 < target < 1.0:
        v.refuse("joint_target_accept", "must be in (0, 1)", target)
    repeats = v.integer("joint_repeats", joint_repeats, minimum=1)
    s_dp, log_density, per_record, attrs = _resolve_sdp(model, sdp)
    names = model.record_names
    latent = model.latent_fn()
    statistic = model.statistic_fn()
    posterior = model.posterior_fn()
    if target_accept is not None and posterior is not None:  # checked before anything is traced
        raise NoiseawareValueError(
            f"{_OWNER}: target_accept is NUTS's target, and with posterior= there is no NUTS step; got "
            f"target_accept={target_accept!r}. The joint move's target is joint_target_accept."
        )
    if target_accept is not None and "target_accept_prob" in (nuts_kwargs or {}):
        raise NoiseawareValueError(
            f"{_OWNER}: give the NUTS target once, as target_accept; got target_accept={target_accept!r} "
            f"and nuts_kwargs['target_accept_prob']={dict(nuts_kwargs or {})['target_accept_prob']!r}."
        )
    indexed = model.indexed
    sweep = partial(
        _bound_sweep,
        s_dp=s_dp,
        latent=latent,
        statistic=statistic,
        log_density=log_density,
        per_record=per_record,
        indexed=indexed,
    )

    key = random.key(seed)
    k_init, k_run = random.split(key)
    inits = _chain_inits(init, chains)
    if model.model is None and inits is None:
        raise NoiseawareValueError(
            f"{_OWNER}: init is required when the model has no NumPyro model to draw it from; got init=None."
        )
    given = _stack(inits) if inits is not None else {}
    given_recs = [k for k in names if k in given]
    if given_recs and len(given_recs) != len(names):
        raise NoiseawareValueError(f"{_OWNER}: init must give all record sites {list(names)} or none.")
    theta0, free0, recs0 = initial_values(model, latent, random.split(k_init, chains), given, nuts=posterior is None)
    n = _check_shapes(
        model, {k: x[0] for k, x in recs0.items()}, s_dp, statistic, log_density, per_record, names, indexed
    )
    params = tuple(theta0)
    z0 = {**(free0 if posterior is None else theta0), **recs0, ACCEPT_SITE: np.zeros(chains)}
    exclude = () if keep_records else tuple(f"~z.{k}" for k in names)
    extra: tuple[str, ...] = ()
    if posterior is None:
        nuts_model = model.model
        if nuts_model is None:  # pragma: no cover - AugmentationModel requires model= or posterior=
            raise NoiseawareValueError(f"{_OWNER}: NUTS for theta needs model=; got model=None.")
        nuts_opts = dict(nuts_kwargs or {})
        if "target_accept_prob" in nuts_opts:
            settings = _with_target(settings, v.open_unit("nuts_kwargs['target_accept_prob']",
                                                          nuts_opts.pop("target_accept_prob")))
        # NUTS as the inner kernel of NumPyro's HMCGibbs, configured as the engine's driver runs NUTS
        # (docs/architecture.md, "Sampling convention": why HMCGibbs and not the driver here)
        kernel: MCMCKernel = HMCGibbs(
            NUTS(_with_accept_site(nuts_model), **nuts_kernel_options(settings, **nuts_opts)),
            gibbs_fn=_gibbs_fn(sweep, names, params),
            gibbs_sites=[*names, ACCEPT_SITE],
        )
        extra = ("hmc_state.diverging", "hmc_state.num_steps")
        sampler = (
            "data augmentation (Eng et al. 2024 §3): record sweep as the Gibbs step of NumPyro HMCGibbs, NUTS for theta"
        )
    else:
        if nuts_kwargs:
            raise NoiseawareValueError(
                f"{_OWNER}: nuts_kwargs applies only without posterior=; got nuts_kwargs={dict(nuts_kwargs)}."
            )
        kernel = _ConjugateAugmentation(sweep, posterior, names)
        sampler = "data augmentation (Eng et al. 2024, §3): record sweep, then theta ~ posterior(records)"
    if model.joint_move is not None:
        transforms = _param_transforms(model, params) if posterior is None else None
        move = _joint_move_fn(model, s_dp, statistic, log_density, per_record)
        kernel = _WithJointMove(kernel, move, names, params, transforms, target, repeats)
        extra = (*(f"inner.{f}" for f in extra), "joint_accept_prob", "step_size")
        sampler += "; then a joint move of theta and records (model.joint_move)"
    if chains == 1:
        z0 = {k: x[0] for k, x in z0.items()}
    # Without a progress bar all chains and iterations are one compiled program (no host round trip
    # per iteration). NumPyro draws its bar from Python, one dispatch per iteration, and not at all
    # for a vmapped chain method (nor does HMCGibbs allow its "vectorized" one), so a bar means
    # chains run one after another.
    mcmc = MCMC(
        kernel,
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        chain_method=_jit_vmap if chains > 1 and not settings.progressbar else "sequential",
        progress_bar=settings.progressbar,
    )
    with warnings.catch_warnings():
        # numpyro donates its collection buffers; JAX notes when it cannot reuse them (harmless)
        warnings.filterwarnings("ignore", message="Some donated buffers were not usable", category=UserWarning)
        mcmc.run(k_run, *model.model_args, init_params=z0, extra_fields=(*extra, *exclude), **model.model_kwargs)
    samples = {k: np.asarray(x) for k, x in mcmc.get_samples(group_by_chain=True).items()}
    stats = {"accept_rate": samples.pop(ACCEPT_SITE)}
    fields = mcmc.get_extra_fields(group_by_chain=True)
    pre = "inner." if model.joint_move is not None else ""
    if posterior is None:
        stats["diverging"] = np.asarray(fields[f"{pre}hmc_state.diverging"])
        stats["n_steps"] = np.asarray(fields[f"{pre}hmc_state.num_steps"])
    if model.joint_move is not None:
        stats["joint_accept_prob"] = np.asarray(fields["joint_accept_prob"])
        stats["joint_step_size"] = np.asarray(fields["step_size"])
    attrs |= {"sampler": sampler, "n_records": n, "per_record": int(per_record), "warmup": warmup}
    idata = from_groups({"posterior": samples, "sample_stats": stats}, attrs=attrs)
    return finish_fit(
        "augment.sample",
        idata,
        settings,
        check=[k for k in samples if k not in names],
        block=MixingBlock(
            "the data-augmentation Gibbs sampler (a sweep over the latent records, then NUTS on the "
            "parameters given them)",
            AUGMENTATION_ADVICE,
            "name[j] is entry j of a vector parameter, in row order.",
        ),
    )


def _with_target(settings: SamplingSettings, target: float) -> SamplingSettings:
    from dataclasses import replace

    return replace(settings, target_accept=float(target))


def _param_transforms(aug: AugmentationModel, params: tuple[str, ...]) -> dict[str, Any]:
    """Bijections from NUTS's unconstrained space to each parameter's support (as NUTS uses them)."""
    model = handlers.substitute(handlers.seed(aug.model, random.key(0)), substitute_fn=init_to_sample)
    tr = handlers.trace(model).get_trace(*aug.model_args, **aug.model_kwargs)
    return {k: biject_to(tr[k]["fn"].support) for k in params}


def _joint_move_fn(
    aug: AugmentationModel,
    s_dp: Any,
    statistic: Callable[..., Any],
    log_density: Callable[..., Any],
    per_record: bool,
) -> Callable[..., Any]:
    """The model's ``joint_move`` on internal record dicts, with ``log_noise`` bound to ``s_dp``."""
    user = aug.joint_move
    assert user is not None  # only called when the model has one

    def log_noise(recs: Any) -> Any:
        internal = aug.from_user_records(recs, "log_noise's argument")
        return noise_log_density(
            internal, s_dp, statistic=statistic, log_density=log_density, per_record=per_record, indexed=aug.indexed
        )

    def move(key: Any, theta: Mapping[str, Any], recs: Mapping[str, Any], step_size: Any) -> Any:
        out = user(key, dict(theta), aug.to_user_records(recs), log_noise, step_size)
        if not isinstance(out, tuple) or len(out) != 3:
            raise NoiseawareValueError(
                f"{_OWNER}: joint_move must return (theta, records, accept_prob); got {type(out).__name__}."
            )
        theta_new, recs_new, prob = out
        if not isinstance(theta_new, Mapping) or set(theta_new) != set(theta):
            got = sorted(theta_new) if isinstance(theta_new, Mapping) else type(theta_new).__name__
            raise NoiseawareValueError(
                f"{_OWNER}: joint_move must return theta as a dict with keys {sorted(theta)}; got {got}."
            )
        return dict(theta_new), aug.from_user_records(recs_new, "joint_move"), prob

    return move


def _bound_sweep(key: Any, recs: Any, theta: Any, **kw: Any) -> Any:
    return record_sweep(key, recs, theta, **kw)


def _with_accept_site(model: Callable[..., Any]) -> Callable[..., Any]:
    """The complete-data model plus a bookkeeping site (zero log-density) for the acceptance rate."""

    def augmented(*args: Any, **kwargs: Any) -> Any:
        out = model(*args, **kwargs)
        numpyro.sample(ACCEPT_SITE, dist.ImproperUniform(constraints.unit_interval, (), ()))
        return out

    return augmented


def _gibbs_fn(sweep: Callable[..., Any], names: tuple[str, ...], params: tuple[str, ...]) -> Callable[..., Any]:
    def gibbs_fn(rng_key: Any, gibbs_sites: Mapping[str, Any], hmc_sites: Mapping[str, Any]) -> dict[str, Any]:
        recs = {k: gibbs_sites[k] for k in names}
        theta = {k: hmc_sites[k] for k in params}
        recs, accept = sweep(rng_key, recs, theta)
        return {**recs, ACCEPT_SITE: jnp.asarray(accept, dtype=jnp.result_type(gibbs_sites[ACCEPT_SITE]))}

    return gibbs_fn


@float64
def initial_values(
    aug: AugmentationModel,
    latent: Callable[..., Any],
    keys: Any,
    given: Mapping[str, Any],
    *,
    nuts: bool,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per-chain initial values in one compiled call: (theta, unconstrained theta, records).

    Parameters not in ``given`` are drawn from the prior of ``aug.model`` (NumPyro's
    ``init_to_sample``); records not given are drawn from ``latent`` at the initial theta.
    """
    names = aug.record_names

    def one(key: Any, fixed: Mapping[str, Any]) -> Any:
        k_prior, k_recs = random.split(key)
        free = {}
        if aug.model is None:
            theta = {k: x for k, x in fixed.items() if k not in names}
        else:
            def pick(site: Mapping[str, Any]) -> Any:
                return fixed[site["name"]] if site["name"] in fixed else init_to_sample(site)

            tr = handlers.trace(handlers.substitute(handlers.seed(aug.model, k_prior), substitute_fn=pick)).get_trace(
                *aug.model_args, **aug.model_kwargs
            )
            sites = {k: st for k, st in tr.items() if st["type"] == "sample" and not st["is_observed"]}
            missing = [r for r in names if r not in sites]
            if missing:
                hint = " (observed; leave obs=None for the records)" if any(r in tr for r in missing) else ""
                raise NoiseawareValueError(
                    f"{_OWNER}: records must be unobserved sample sites of the model; missing {missing}{hint}. "
                    f"Latent sites: {sorted(sites)}."
                )
            unknown = sorted(set(fixed) - set(sites))
            if unknown:
                raise NoiseawareValueError(
                    f"{_OWNER}: init names sites the model does not sample: {unknown}; latent sites {sorted(sites)}."
                )
            theta = {k: st["value"] for k, st in sites.items() if k not in names}
            if nuts:
                free = {k: biject_to(sites[k]["fn"].support).inv(x) for k, x in theta.items()}
        if not theta:
            raise NoiseawareValueError(f"{_OWNER}: init must give at least one parameter; got {sorted(fixed)}.")
        recs = {k: fixed[k] for k in names} if names[0] in fixed else latent(k_recs, theta)
        return theta, free, recs

    fixed = {k: jnp.asarray(x) for k, x in given.items()}
    out = jit(jax.vmap(one))(keys, fixed)
    return tuple({k: np.asarray(x) for k, x in part.items()} for part in out)  # type: ignore[return-value]


def _check_shapes(
    aug: AugmentationModel,
    state: Mapping[str, Any],
    s_dp: Any,
    statistic: Callable[..., Any],
    log_density: Callable[..., Any],
    per_record: bool,
    names: tuple[str, ...],
    indexed: bool = False,
) -> int:
    """Number of records; raise when records, statistic, s_dp and log_density do not fit together."""
    recs = {k: state[k] for k in names}
    leading = {k: (jnp.shape(x)[0] if jnp.ndim(x) else None) for k, x in recs.items()}
    sizes = set(leading.values())
    if None in sizes or len(sizes) != 1:
        raise NoiseawareValueError(
            f"{_OWNER}: every record site needs the same leading (record) axis; got shapes "
            f"{ {k: jnp.shape(x) for k, x in recs.items()} }."
        )
    n = int(next(iter(sizes)))  # type: ignore[arg-type]
    row = {k: x[0] for k, x in recs.items()}
    if per_record:
        if s_dp.shape[0] != n:
            raise NoiseawareValueError(
                f"{_OWNER}: a record-level sdp needs one row per record ({n}); got shape {tuple(s_dp.shape)}."
            )
        target = s_dp[0]
    else:
        target = s_dp
    index = (jnp.zeros((), jnp.int32),) if indexed else ()
    t = jax.eval_shape(statistic, row, target, *index)
    if t.shape != target.shape:
        hint = ""
        if not per_record and s_dp.ndim >= 1 and s_dp.shape[0] == n and t.shape == s_dp.shape[1:]:
            hint = (
                " For one noisy value per unit (record i is unit i), pass per_record=True to AugmentationModel;"
                " or, for many records per unit, indexed=True and a statistic placing record i in its unit's entry."
            )
        raise NoiseawareValueError(
            f"{_OWNER}: statistic must return an array shaped like {'a row of ' if per_record else ''}sdp, "
            f"{tuple(target.shape)}; got shape {t.shape}.{hint}"
        )
    out = jax.eval_shape(log_density, target, jnp.zeros(t.shape, jnp.float64))
    if out.shape != ():
        raise NoiseawareValueError(f"{_OWNER}: log_density must return a scalar; got shape {out.shape}.")
    return n



def _jit_vmap(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Chains vectorized *and* compiled as one program (initialization included), with the engine's options."""
    return jit(jax.vmap(fn))
