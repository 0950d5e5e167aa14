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

import arviz as az
import jax
import jax.numpy as jnp
import numpy as np
import numpyro.distributions as dist
from jax import lax, random
from jax.scipy.special import digamma, gammaln, polygamma
from scipy import special

from .. import _validation as v
from .._core._backend import get_backend
from .._core._dirichlet_release import LogMeanPart, select_part
from .._core._gamma import log_dirichlet, loggamma
from .._core._noise import NOISE_LAWS
from .._engine import (
    RWM_TARGET_ACCEPT,
    FitResult,
    ProgramCache,
    SamplingSettings,
    chain_groups,
    check_settings,
    jit,
)
from .._engine import check_mixing as _mixing  # dpmcmc has a parameter of that name
from .._engine._adapt import StepAdaptation, adapt_step, init_adaptation
from .._engine._compile import options_key
from .._engine._x64 import float64
from ..augment._sweep import noise_log_density, record_sweep, statistic_total
from ..exceptions import NoiseawareTypeError
from ._boots import start_alpha
from ._power_map import power, power_moments

__all__ = ["P1_RATE", "P1_SHAPE", "DPMCMCFit", "dpmcmc", "dpmcmc_batch"]

_JB = get_backend("jax")
_LAPLACE = NOISE_LAWS["laplace"].logpdf

_OWNER = "dpmcmc"
#: Prior p1 of Guo et al. (2022) §4.2.1: independent Gamma(shape 1, rate 0.1).
P1_SHAPE = 1.0
P1_RATE = 0.1
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



# ----------------------------------------------------------------------------- prior
def _prior_logdensity(prior: Any, d: int) -> tuple[Callable[[Any], Any], str]:
    """``alpha -> log pi_0(alpha)`` (a JAX scalar) and a description of the prior."""
    if prior is None:
        p1 = dist.Gamma(P1_SHAPE, P1_RATE)
        return (lambda alpha: jnp.sum(p1.log_prob(alpha))), f"p1: independent Gamma({P1_SHAPE:g}, {P1_RATE:g})"
    if isinstance(prior, dist.Distribution):
        shape = tuple(prior.batch_shape) + tuple(prior.event_shape)
        try:
            ok = jnp.broadcast_shapes(shape, (d,)) == (d,)
        except ValueError:
            ok = False
        if not ok:
            v.fail(
                _OWNER,
                "prior",
                f"must be a NumPyro distribution over alpha of shape ({d},) (batch or event shape broadcastable "
                f"to ({d},))",
                f"{type(prior).__name__} with batch_shape={prior.batch_shape}, event_shape={prior.event_shape}",
            )
        return (lambda alpha: jnp.sum(prior.log_prob(alpha))), f"user: {type(prior).__name__}"
    if callable(prior):
        return (lambda alpha: jnp.sum(jnp.asarray(prior(alpha), dtype=jnp.float64))), "user: log-density function"
    raise NoiseawareTypeError(
        v.message(
            _OWNER,
            "prior",
            "must be None (p1), a NumPyro distribution over alpha, or a function alpha -> log density",
            prior,
        )
    )


# ----------------------------------------------------------------------------- initial values
def _initial_values(init: Any, part: LogMeanPart, chains: int, seed: int) -> list[dict[str, Any]]:
    d = part.d
    if init is None:
        base = start_alpha(part.s_l, upper=1e4)
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(chains):
            a0 = base * np.exp(rng.normal(0.0, 0.2, d))
            out.append({_ALPHA: a0})
        return out
    dicts = [init] * chains if isinstance(init, Mapping) else init
    if not isinstance(dicts, list | tuple) or not all(isinstance(x, Mapping) for x in dicts):
        raise NoiseawareTypeError(v.message(_OWNER, "init", "must be a dict {'alpha': ...} or a list of them", init))
    if len(dicts) != chains:
        v.fail(_OWNER, "init", f"must give one dict or one per chain ({chains})", f"{len(dicts)} dicts")
    out = []
    for x in dicts:
        if set(x) != {_ALPHA}:
            v.fail(_OWNER, "init", "must name exactly the parameter 'alpha'", sorted(x))
        a0 = v.finite_array(_OWNER, "init['alpha']", x[_ALPHA])
        if a0.shape != (d,) or np.any(a0 <= 0):
            v.fail(_OWNER, "init['alpha']", f"must have shape ({d},) with positive entries", a0.tolist())
        out.append({_ALPHA: a0})
    return out


# ----------------------------------------------------------------------------- proposals
def _log_fisher_cholesky(alpha: np.ndarray, info: float) -> np.ndarray:
    r"""Cholesky factor of :math:`(2.38^2/d)\,I^{-1}` for the draw of :math:`\log\alpha` given the records.

    The complete-data log-likelihood :math:`w\{(\alpha-1)^\top T-b\log B(\alpha)\}` has Fisher
    information :math:`wb\,C` in :math:`\alpha`, :math:`C=\mathrm{diag}\,\psi_1(\alpha)-\psi_1(\sum_j\alpha_j)`,
    i.e. :math:`\mathrm{diag}(\alpha)\,wbC\,\mathrm{diag}(\alpha)` in :math:`\log\alpha`; ``info = w b``.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    fisher = info * (np.diag(special.polygamma(1, alpha)) - special.polygamma(1, alpha.sum()))
    return _random_walk_cholesky(alpha[:, None] * fisher * alpha[None, :])


def _random_walk_cholesky(prec: np.ndarray) -> np.ndarray:
    r"""Cholesky factor of :math:`(2.38^2/d)\,P^{-1}` (Roberts, Gelman & Gilks 1997), regularized."""
    d = prec.shape[0]
    cov = np.linalg.inv(prec + 1e-8 * np.eye(d))
    cov = 0.5 * (cov + cov.T) * (2.38**2 / d)
    return np.linalg.cholesky(cov + 1e-12 * np.trace(cov) / d * np.eye(d))


def _proposal_cholesky(alpha: np.ndarray, n: int, scale_sum: float) -> np.ndarray:
    r"""Cholesky factor of the joint move's proposal covariance for :math:`\log\alpha`.

    The large-``n`` posterior covariance of :math:`\log\alpha` given the released log-sum
    (censoring ignored): :math:`S_0` has mean :math:`n\,E[\log x\mid\alpha]`, with Jacobian
    :math:`J = nC\,\mathrm{diag}(\alpha)` in :math:`\log\alpha`, where
    :math:`C=\mathrm{Cov}(\log x)=\mathrm{diag}\,\psi_1(\alpha)-\psi_1(\sum_j\alpha_j)\mathbf 1\mathbf 1^\top`,
    and variance :math:`nC + 2b^2 I` (records plus Laplace noise of scale ``b`` on the sum), so
    the precision is :math:`J^\top(nC+2b^2I)^{-1}J`. Scaled by :math:`2.38^2/d` (Roberts, Gelman &
    Gilks 1997); the adapted step size multiplies it. A fixed matrix, so the random walk
    stays symmetric.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    d = alpha.size
    cov_log = np.diag(special.polygamma(1, alpha)) - special.polygamma(1, alpha.sum())
    jac = n * cov_log * alpha[None, :]
    var_s = n * cov_log + 2.0 * scale_sum**2 * np.eye(d)
    return _random_walk_cholesky(jac.T @ np.linalg.solve(var_s, jac))


def _conditional_proposal_cholesky(alpha: np.ndarray, n: int, scale_sum: float) -> np.ndarray:
    r"""Cholesky factor of the proposal of :func:`_joint_move_cuberoot` for :math:`\log\alpha`.

    The joint move keeps the standardized records fixed, so it explores :math:`\alpha` given them:
    :math:`S_0` is then a deterministic function of :math:`\alpha` with Jacobian
    :math:`J = nC\,\mathrm{diag}(\alpha)` (as in :func:`_proposal_cholesky`) and only the Laplace
    noise (variance :math:`2b^2` per part) is left, so the precision is :math:`J^\top J/(2b^2)`
    (narrower than the marginal posterior, and of a different shape when ``d`` is large). Scaled
    by :math:`2.38^2/d`; a fixed matrix, so the random walk stays symmetric.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    cov_log = np.diag(special.polygamma(1, alpha)) - special.polygamma(1, alpha.sum())
    jac = n * cov_log * alpha[None, :]
    return _random_walk_cholesky(jac.T @ jac / (2.0 * scale_sum**2))


# ----------------------------------------------------------------------------- the two alpha moves
def _alpha_given_records(log_prior: Callable[[Any], Any], b: int, steps: int) -> Callable[..., Any]:
    r"""``steps`` random-walk Metropolis steps of :math:`\log\alpha` given the records.

    Target (complete data, Guo, Barrientos & Peña (2022), *Differentially Private Inference for Compositional Data*,
    eq. 1, or eq. 5's replicated form) in :math:`\log\alpha`:
    :math:`\log\pi_0(\alpha)+\sum_j\log\alpha_j+w\{(\alpha-1)^\top T-b\log B(\alpha)\}` with
    :math:`T=\sum_i\log x_i`; each step costs O(d) (the records enter through ``T`` only).
    Proposal :math:`\log\alpha'=\log\alpha+hL\varepsilon`, :math:`\varepsilon\sim N(0,I)`.
    Returns ``move(key, alpha, T, w, chol, h) -> (alpha, mean acceptance probability)``.
    """

    def log_target(alpha: Any, t_sum: Any, w: Any) -> Any:
        log_beta = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
        out = log_prior(alpha) + jnp.sum(jnp.log(alpha)) + w * (jnp.dot(alpha - 1.0, t_sum) - b * log_beta)
        return jnp.where(jnp.isnan(out), -jnp.inf, out)

    def move(key: Any, alpha: Any, t_sum: Any, w: Any, chol: Any, h: Any) -> tuple[Any, Any]:
        d = alpha.shape[-1]

        def one(carry: Any, k: Any) -> Any:
            a, lt = carry
            k_eps, k_u = random.split(k)
            a_new = a * jnp.exp(h * (chol @ random.normal(k_eps, (d,), dtype=jnp.float64)))
            lt_new = log_target(a_new, t_sum, w)
            log_r = lt_new - lt
            ok = jnp.log(random.uniform(k_u, dtype=jnp.float64)) < log_r
            prob = jnp.where(jnp.isnan(log_r), 0.0, jnp.exp(jnp.minimum(log_r, 0.0)))
            return (jnp.where(ok, a_new, a), jnp.where(ok, lt_new, lt)), prob

        (alpha, _), probs = lax.scan(one, (alpha, log_target(alpha, t_sum, w)), random.split(key, steps))
        return alpha, jnp.mean(probs)

    return move


def _joint_move(log_prior: Callable[[Any], Any], b: int, d: int, steps: int = 1) -> Callable[..., Any]:
    r"""The joint move of :math:`(\alpha, x_{1:n})` for :func:`dpmcmc`.

    1. Draw auxiliary totals :math:`G_i\sim\text{Gamma}(\sum_j\alpha_j)`, independent of the
       records (an exact Gibbs step on an extended target: :math:`g_{ij}=G_ix_{ij}` are then
       independent :math:`\text{Gamma}(\alpha_j, 1)`), and set :math:`y_{ij}=\log g_{ij}`.
    2. Propose :math:`\log\alpha'=\log\alpha+\varepsilon`,
       :math:`\varepsilon\sim N(0, h^2LL^\top)` (symmetric; ``h`` the adapted step size).
    3. Move every record by the affine map matching the mean :math:`\psi(\alpha_j)` and sd
       :math:`\sigma_j=\sqrt{\psi_1(\alpha_j)}` of :math:`\log g_j`,
       :math:`y'_{ij}=\psi(\alpha'_j)+(\sigma'_j/\sigma_j)(y_{ij}-\psi(\alpha_j))` -- an
       involution together with :math:`\varepsilon\to-\varepsilon`, Jacobian
       :math:`\prod_j(\sigma'_j/\sigma_j)^n` -- and set :math:`\log x'_i=y'_i-\log\sum_je^{y'_{ij}}`.
    4. Accept with the Metropolis-Hastings ratio in :math:`(\log\alpha, y)`

       .. math:: r=\frac{\pi_0(\alpha')\prod_j\alpha'_j}{\pi_0(\alpha)\prod_j\alpha_j}
                 \prod_{i,j}\frac{\text{Gamma}(e^{y'_{ij}}\mid\alpha'_j)\,e^{y'_{ij}}}
                 {\text{Gamma}(e^{y_{ij}}\mid\alpha_j)\,e^{y_{ij}}}
                 \prod_j\Bigl(\frac{\sigma'_j}{\sigma_j}\Bigr)^{n}
                 \frac{\eta(s_L\mid s_0(x'))}{\eta(s_L\mid s_0(x))},

       Steps 2-4 run ``steps`` times in a row (each a Metropolis-Hastings step on the extended
       target, so sharing one draw of :math:`G` is fine; the returned acceptance probability is
       their mean); then forget :math:`G`. In :math:`(\log\alpha, y)` the extended target
       :math:`\pi(\alpha,x\mid s_L)\prod_i\text{Gamma}(G_i\mid\sum_j\alpha_j)` is the density in
       the ratio times :math:`\prod_iG_i^{d-1}`-free-of-:math:`\alpha` Jacobian terms that cancel,
       so the move leaves :math:`\pi(\alpha, x\mid s_L)` invariant exactly; the affine map only
       has to be *close* to the exact push-forward for the ratio to stay near the noise ratio.

    Returns ``move(key, alpha, logx, log_noise, h, chol) -> (alpha, logx, mean acceptance probability)``.
    """

    def log_gamma_y(y: Any, alpha: Any) -> Any:  # sum_ij log[Gamma(e^y | alpha_j) e^y]
        return jnp.sum(alpha * y - jnp.exp(y)) - b * jnp.sum(gammaln(alpha))

    def move(key: Any, alpha0: Any, logx: Any, log_noise: Callable[[Any], Any], step: Any, chol: Any) -> Any:
        k_g, k_steps = random.split(key)
        y0 = logx + loggamma(k_g, jnp.sum(alpha0), (b, 1))

        def one(carry: Any, k: Any) -> Any:
            alpha, y, _, lp, lg, ln = carry
            k_eps, k_u = random.split(k)
            eps = step * (chol @ random.normal(k_eps, (d,), dtype=jnp.float64))
            alpha_new = alpha * jnp.exp(eps)
            sd, sd_new = jnp.sqrt(polygamma(1, alpha)), jnp.sqrt(polygamma(1, alpha_new))
            y_new = digamma(alpha_new) + (sd_new / sd) * (y - digamma(alpha))
            logx_new = y_new - jax.nn.logsumexp(y_new, axis=-1, keepdims=True)
            lp_new = log_prior(alpha_new) + jnp.sum(jnp.log(alpha_new))
            lg_new = log_gamma_y(y_new, alpha_new)
            ln_new = log_noise(logx_new)
            log_r = lp_new - lp + lg_new - lg + b * jnp.sum(jnp.log(sd_new / sd)) + ln_new - ln
            ok = jnp.log(random.uniform(k_u, dtype=jnp.float64)) < log_r  # NaN rejects
            prob = jnp.where(jnp.isnan(log_r), 0.0, jnp.exp(jnp.minimum(log_r, 0.0)))
            new = (alpha_new, y_new, logx_new, lp_new, lg_new, ln_new)
            return tuple(jnp.where(ok, a, c) for a, c in zip(new, carry, strict=True)), prob

        init = (alpha0, y0, logx, log_prior(alpha0) + jnp.sum(jnp.log(alpha0)), log_gamma_y(y0, alpha0),
                log_noise(logx))
        (alpha, _, logx, *_), probs = lax.scan(one, init, random.split(k_steps, steps))
        return alpha, logx, jnp.mean(probs)

    return move


def _joint_move_cuberoot(
    log_prior: Callable[[Any], Any], b: int, d: int, steps: int = 1, *, jacobian: bool = True
) -> Callable[..., Any]:
    r"""The joint move of :func:`_joint_move` with a Wilson-Hilferty map of the Gamma variables.

    Same extended target and same steps 1, 2, 4 as :func:`_joint_move`; only the map carrying the
    records along differs. With :math:`u_{ij}=g_{ij}^{1/3}` (nearly normal for a Gamma variable:
    Wilson & Hilferty 1931), mean :math:`m_j=\Gamma(\alpha_j+1/3)/\Gamma(\alpha_j)` and sd
    :math:`s_j=\{\Gamma(\alpha_j+2/3)/\Gamma(\alpha_j)-m_j^2\}^{1/2}`,

    .. math:: u'_{ij}=m'_j+(s'_j/s_j)(u_{ij}-m_j),\qquad y'_{ij}=3\log u'_{ij},

    an involution together with :math:`\varepsilon\to-\varepsilon` (the map back is its exact
    inverse); in :math:`y=\log g` its Jacobian is :math:`\prod_{ij}(s'_j/s_j)\,u_{ij}/u'_{ij}`.
    A proposal with some :math:`u'_{ij}\le 0` lies outside the support and is rejected (its
    reverse proposal is outside the support too, so detailed balance holds on the extended space).
    The map is far closer to the exact push-forward of :math:`\text{Gamma}(\alpha_j)` to
    :math:`\text{Gamma}(\alpha'_j)` than the affine map of :math:`\log g`, so the Gamma-density
    part of the ratio stays near 1 for larger steps of :math:`\alpha`: the move is then nearly a
    random walk on the non-centred posterior of :math:`\alpha` given the standardized records.

    ``jacobian=False`` leaves the Jacobian out of the ratio: a wrong move, for the tests only.
    Returns ``move(key, alpha, logx, log_noise, h, chol) -> (alpha, logx, mean acceptance probability)``.
    """
    jac_factor = 1.0 if jacobian else 0.0

    def moments(alpha: Any) -> tuple[Any, Any]:
        return _power_moments(alpha, 1.0 / 3.0)

    def log_gamma(alpha: Any, log_u: Any, u: Any) -> Any:  # sum_ij log[Gamma(g | alpha_j) g], g = u^3
        return 3.0 * jnp.sum(alpha * jnp.sum(log_u, axis=0)) - jnp.sum(u * u * u) - b * jnp.sum(gammaln(alpha))

    def move(key: Any, alpha0: Any, logx: Any, log_noise: Callable[[Any], Any], step: Any, chol: Any) -> Any:
        k_g, k_steps = random.split(key)
        log_u0 = (logx + loggamma(k_g, jnp.sum(alpha0), (b, 1))) / 3.0  # log u = log(g) / 3
        u0 = jnp.exp(log_u0)

        def one(carry: Any, k: Any) -> Any:
            alpha, u, log_u, _, lp, lg, ln = carry
            k_eps, k_u = random.split(k)
            eps = step * (chol @ random.normal(k_eps, (d,), dtype=jnp.float64))
            alpha_new = alpha * jnp.exp(eps)
            m, sd = moments(alpha)
            m_new, sd_new = moments(alpha_new)
            u_new = m_new + (sd_new / sd) * (u - m)
            log_u_new = jnp.log(u_new)  # NaN where u_new <= 0: the ratio is NaN and rejects
            cube = u_new * u_new * u_new
            logx_new = 3.0 * log_u_new - jnp.log(jnp.sum(cube, axis=-1, keepdims=True))
            lp_new = log_prior(alpha_new) + jnp.sum(jnp.log(alpha_new))
            lg_new = log_gamma(alpha_new, log_u_new, u_new)
            ln_new = log_noise(logx_new)
            log_jac = b * jnp.sum(jnp.log(sd_new / sd)) + jnp.sum(log_u) - jnp.sum(log_u_new)
            log_r = lp_new - lp + lg_new - lg + jac_factor * log_jac + ln_new - ln
            ok = jnp.log(random.uniform(k_u, dtype=jnp.float64)) < log_r  # NaN rejects
            prob = jnp.where(jnp.isnan(log_r), 0.0, jnp.exp(jnp.minimum(log_r, 0.0)))
            new = (alpha_new, u_new, log_u_new, logx_new, lp_new, lg_new, ln_new)
            return tuple(jnp.where(ok, a, c) for a, c in zip(new, carry, strict=True)), prob

        init = (alpha0, u0, log_u0, logx, log_prior(alpha0) + jnp.sum(jnp.log(alpha0)),
                log_gamma(alpha0, log_u0, u0), log_noise(logx))
        (alpha, _, _, logx, *_), probs = lax.scan(one, init, random.split(k_steps, steps))
        return alpha, logx, jnp.mean(probs)

    return move


def _power(alpha: Any) -> Any:
    r"""Exponent :math:`p_j=p(\alpha_j)` of the surrogate move's power map :math:`u=g^{p}` (JAX front end).

    The exponent whose standardized power is least informative about :math:`\log\alpha`
    (:func:`noiseaware.dirichlet._power_map.power`: 0.165 at :math:`\alpha=1`, 0.23 at 2, about
    :math:`1/3-0.18/\alpha` for large shapes), so that holding the standardized records fixed pins
    :math:`\alpha` least.
    """
    return power(alpha, _JB)


def _power_moments(alpha: Any, p: Any) -> tuple[Any, Any]:
    r"""Mean and sd of :math:`G^{p}`, :math:`G\sim\text{Gamma}(\alpha)` (JAX front end).

    See :func:`noiseaware.dirichlet._power_map.power_moments`.
    """
    return power_moments(alpha, p, _JB)


def _from_powers(u: Any, p: Any) -> tuple[Any, Any, Any, Any]:
    r"""Records from their powers :math:`u=g^{p}`: :math:`y=\log g`, :math:`g`, :math:`\log x` and :math:`x`.

    Two transcendental functions per element (:math:`\log u` and one exponential, shifted by the
    record's largest :math:`y` so that nothing overflows or underflows to a wrong log); NaN where
    :math:`u\le0`.
    """
    y = jnp.log(u) / p
    top = jnp.max(y, axis=-1, keepdims=True)
    e = jnp.exp(y - top)
    tot = jnp.sum(e, axis=-1, keepdims=True)
    return y, e * jnp.exp(top), y - top - jnp.log(tot), e / tot


def _surrogate_expansion(
    lam: Any, zc: Any, p: Any, w: Any, log_a: Any, jac_factor: float = 1.0
) -> tuple[Any, Any, Any, Any]:
    r"""Gradient and c-curvature of :math:`D`, and :math:`T` and :math:`\partial T/\partial c`, at :math:`(\lambda, 0)`.

    For :func:`_joint_move_surrogate`: the records are :math:`u_{ij}=m_j+s_j(z_{ij}+c_j)`,
    :math:`y_{ij}=\log(u_{ij})/p_j`, with :math:`m_j, s_j` functions of :math:`\alpha_j=e^{\lambda_j}`
    only, so :math:`D=\sum_jD_j(\lambda_j, c_j)` is separable and its Hessian in :math:`c` is
    diagonal. With :math:`e=\alpha y-e^{y}-\log u` per element (:math:`\partial_c u=s`,
    :math:`\partial_\lambda u=m_\lambda+s_\lambda z`) and the per-part
    :math:`b(\log s-\log\Gamma(\alpha))` (differentiated by JAX: O(d)),

    .. math:: \partial_\lambda e=\alpha y+(\alpha-e^y)\,y_\lambda-u_\lambda/u,\quad
              \partial_c e=(\alpha-e^y)\,y_c-s/u,\quad
              \partial_c^2 e=(\alpha-e^y)\,y_{cc}-e^yy_c^2+(s/u)^2,

    :math:`y_\lambda=u_\lambda/(pu)`, :math:`y_c=s/(pu)`, :math:`y_{cc}=-s^2/(pu^2)`: elementwise
    arithmetic on the arrays of one evaluation, no automatic differentiation over the ``b x d``
    records. The censored log-sum :math:`T_k=w\sum_i\max(\log x_{ik},\log a)`,
    :math:`\log x_i=y_i-\log\sum_ke^{y_{ik}}`, has
    :math:`\partial T_k/\partial c_j=w\sum_i1[\log x_{ik}>\log a]\,y_{c,ij}(\delta_{kj}-x_{ij})`,
    and :math:`\partial T_k/\partial\lambda_j` alike with :math:`y_\lambda` (censored elements,
    :math:`\log x_{ik}\le\log a`, contribute nothing: what an expected log-sum that ignores
    censoring gets wrong).
    ``jac_factor = 0`` leaves out the Jacobian terms as the test-only wrong move does.
    Returns ``(gradient in (lambda, c) (2d,), d^2 D / dc_j^2 (d,), T (d,), dT/d(lambda, c) (d, 2d))``.
    """
    b = zc.shape[0]
    a = jnp.exp(lam)

    def moments(lj: Any, pj: Any) -> Any:
        m, sd = _power_moments(jnp.exp(lj), pj)
        return jnp.stack([m, sd])

    def scalar_part(lj: Any, pj: Any) -> Any:
        return b * (jac_factor * jnp.log(_power_moments(jnp.exp(lj), pj)[1]) - gammaln(jnp.exp(lj)))

    ms = jax.vmap(moments)(lam, p)  # (d, 2)
    d1 = jax.vmap(jax.jacfwd(moments))(lam, p)  # (d, 2): d/dlambda of (m, s)
    m, sd, m1, s1 = ms[:, 0], ms[:, 1], d1[:, 0], d1[:, 1]
    u = m + sd * zc
    y, g, logx, x = _from_powers(u, p)
    inv_u = 1.0 / u
    u_l = m1 + s1 * zc
    y_l, y_c = u_l * inv_u / p, sd * inv_u / p
    y_cc = -((sd * inv_u) ** 2) / p
    e_l = a * y + (a - g) * y_l - jac_factor * u_l * inv_u
    e_c = (a - g) * y_c - jac_factor * sd * inv_u
    e_cc = (a - g) * y_cc - g * y_c**2 + jac_factor * (sd * inv_u) ** 2
    grad = jnp.concatenate([jnp.sum(e_l, axis=0) + jax.vmap(jax.grad(scalar_part))(lam, p), jnp.sum(e_c, axis=0)])
    mask = (logx > log_a).astype(jnp.float64)
    t = w * jnp.sum(jnp.maximum(logx, log_a), axis=0)

    def jac(y_v: Any) -> Any:  # dT_k / dv_j for a per-part coordinate v_j moving y_ij by y_v,ij
        return w * (jnp.diag(jnp.sum(mask * y_v, axis=0)) - mask.T @ (x * y_v))

    return grad, jnp.sum(e_cc, axis=0), t, jnp.concatenate([jac(y_l), jac(y_c)], axis=1)


def _joint_move_surrogate(
    log_prior: Callable[[Any], Any], b: int, d: int, rounds: int = 1, *, surrogate_steps: int = 20,
    correct: bool = True, jacobian: bool = True,
) -> Callable[..., Any]:
    r"""The joint move of :math:`(\alpha, x_{1:n})` as a surrogate transition (Liu 2001, §9.4.3): the default.

    The auxiliary totals :math:`G_i\sim\text{Gamma}(\sum_j\alpha_j)` are drawn as in
    :func:`_joint_move` (:math:`g_{ij}=G_ix_{ij}`, :math:`y=\log g`), and the records are
    written by their standardized powers :math:`z_{ij}=(g_{ij}^{p_j}-m_j(\alpha))/s_j(\alpha)`,
    with :math:`m_j, s_j` the mean and sd of :math:`G^{p_j}` (:func:`_power_moments`) and
    :math:`p_j=p(\alpha_{\text{ref},j})` (:func:`_power`: the exponent whose standardized power
    carries the least Fisher information about :math:`\log\alpha`, 0.165 at shape 1 and near
    Wilson-Hilferty's 1/3 only for large shapes; :mod:`noiseaware.dirichlet._power_map`).
    Split :math:`z_{ij}=z^c_{ij}+c_j` into the records' mean :math:`c=\bar z` and the
    centred :math:`z^c` (a linear change of variables with a constant Jacobian). The move holds
    :math:`z^c` fixed and updates :math:`\theta=(\lambda, c)`, :math:`\lambda=\log\alpha`: the
    records are then a function of :math:`\theta`, :math:`u_{ij}=m_j+s_j(z^c_{ij}+c_j)`,
    :math:`y_{ij}=\log(u_{ij})/p_j`, :math:`\log x_i=y_i-\log\sum_ke^{y_{ik}}`, and the target
    of :math:`\theta` given :math:`z^c` (Jacobian :math:`\partial y/\partial z=s_j/(p_ju_{ij})`
    included) is, up to a constant,

    .. math:: f(\theta)=\log\pi_0(\alpha)+\textstyle\sum_j\lambda_j+D(\theta)
              +\log\eta\bigl(s_{dp}\bigm|T(\theta)\bigr),\qquad
              D(\theta)=\sum_{ij}\{\alpha_jy_{ij}-e^{y_{ij}}-\log u_{ij}\}
              +b\sum_j\{\log s_j-\log\Gamma(\alpha_j)\},

    with :math:`T=\sum_i w\max(\log x_i,\log a)`: O(nd) per evaluation. Moving :math:`c` moves
    all records together, so the part of the log-sum that the records' sampling noise leaves
    free (of order :math:`\sqrt n`) changes within one move instead of through the record sweep.
    The surrogate costs O(d):

    .. math:: \tilde f(\theta)=\log\pi_0(\alpha)+\textstyle\sum_j\lambda_j
              +\nabla D^\top\Delta+\tfrac12\textstyle\sum_j\partial^2_{c_j}D\,c_j^2
              +\log\eta\bigl(s_{dp}\bigm|\tilde T(\theta)\bigr),\qquad
              \mu_j(\alpha)=\psi(\alpha_j)-\psi(\textstyle\sum_k\alpha_k),

    with :math:`\Delta=\theta-\theta_{\text{ref}}`, :math:`\theta_{\text{ref}}=(\log\alpha_{\text{ref}}, 0)`:
    the expansion of :math:`D` at the reference point, linear in :math:`\lambda` (:math:`D` is
    nearly constant in :math:`\lambda` -- the map nearly pushes :math:`\text{Gamma}(\alpha_j)`
    forward to :math:`\text{Gamma}(\alpha'_j)`; its curvature there is left out, as it
    extrapolates badly along the weakly identified scale of :math:`\alpha` and made chains stick
    at epsilon = 0.5) and quadratic in :math:`c` (close to :math:`-b|c|^2/2`), the expected
    log-sum's curvature, and the censored log-sum to first order at the reference point: with
    :math:`J=\partial T/\partial\theta` there (censored elements contribute nothing),
    :math:`\tilde T(\theta)=T(\theta_{\text{ref}})+J\Delta+bw\{\mu(\alpha)-\mu(\alpha_{\text{ref}})
    -\mu'(\alpha_{\text{ref}})\Delta_\lambda\}`, all in closed form from one O(nd) pass
    (:func:`_surrogate_expansion`). :math:`\alpha_{\text{ref}}` follows the chain during warmup (a
    geometric moving average) and is then fixed at the geometric mean of :math:`\alpha` over the second
    half of warmup: the expansion's error grows with the distance from the reference point, and a
    reference at the posterior's centre keeps it small wherever the chain goes (a moving average's last
    value can lie far out where the scale of :math:`\alpha` is weakly identified).
    ``surrogate_steps`` random-walk Metropolis steps on :math:`\tilde f` (proposal
    :math:`h\,L\varepsilon`, :math:`L` from the warmup draws of :math:`\theta`, :func:`_adapt_walk`)
    carry :math:`\theta` to :math:`\theta^*`, which is accepted with probability

    .. math:: \min\Bigl\{1, \exp\bigl(f(\theta^*)-f(\theta)-\tilde f(\theta^*)+\tilde f(\theta)\bigr)\Bigr\}.

    The surrogate walk is reversible with respect to :math:`\tilde f`, which is fixed during the
    move (it depends on :math:`z^c`, :math:`\theta_{\text{ref}}` and :math:`p` only, none of which
    the move changes: shifting every record by the same :math:`c` leaves :math:`z^c` as it is), so
    the whole move is reversible with respect to :math:`f(\cdot\mid z^c)` (surrogate transition
    method; Liu 2001, *Monte Carlo Strategies in Scientific Computing*, §9.4.3): exact whatever
    the surrogate's accuracy, which only sets the acceptance rate. A round costs one O(nd)
    expansion and one O(nd) value (the current point's :math:`f` comes from the arrays at hand),
    against one O(nd) value per random-walk step of :func:`_joint_move_cuberoot`. ``rounds``
    rounds share one draw of :math:`G`.

    ``correct=False`` accepts :math:`\theta^*` without the correction, ``jacobian=False`` leaves
    the Jacobian out of :math:`D`: wrong moves, for the tests only.
    Returns ``move(key, alpha, logx, total, log_eta, h, chol, alpha_ref, w, log_a) ->
    (alpha, logx, correction acceptance probability, surrogate acceptance probability, theta)``.
    """
    jac_factor = 1.0 if jacobian else 0.0

    def mapped(lam: Any, z: Any, p: Any) -> tuple[Any, Any, Any, Any]:
        m, sd = _power_moments(jnp.exp(lam), p)
        u = m + sd * z  # NaN records where u <= 0: outside the support, f is NaN and the move rejects
        y, g, logx, _ = _from_powers(u, p)
        return u, y, g, logx

    def move(key: Any, alpha0: Any, logx0: Any, total: Callable[[Any], Any], log_eta: Callable[[Any], Any],
             step: Any, chol: Any, alpha_ref: Any, w: Any, log_a: Any) -> Any:
        k_g, k_rounds = random.split(key)
        p = _power(alpha_ref)
        log_tot = loggamma(k_g, jnp.sum(alpha0), (b, 1))  # log G_i
        y0 = logx0 + log_tot
        u0 = jnp.exp(p * y0)
        m0, sd0 = _power_moments(alpha0, p)
        z = (u0 - m0) / sd0
        # z = zc + c: the centred records zc are held fixed (invariant under the move), their common shift c moves
        c0 = jnp.mean(z, axis=0)
        zc = z - c0
        theta_ref = jnp.concatenate([jnp.log(alpha_ref), jnp.zeros((d,), jnp.float64)])

        def records(theta: Any) -> tuple[Any, Any, Any, Any]:
            return mapped(theta[:d], zc + theta[d:], p)

        def density(lam: Any, y: Any, g_sum: Any) -> Any:
            # Gamma densities of g = e^y (g_sum = sum_ij g_ij), Jacobian dy/dz = s / (p u), log u = p y
            a = jnp.exp(lam)
            _, sd = _power_moments(a, p)
            jac = b * jnp.sum(jnp.log(sd)) - jnp.sum(p * y)
            return jnp.sum(a * jnp.sum(y, axis=0)) - g_sum - b * jnp.sum(gammaln(a)) + jac_factor * jac

        def exact(theta: Any) -> tuple[Any, Any]:
            lam = theta[:d]
            _, y, g, logx = records(theta)
            f = log_prior(jnp.exp(lam)) + jnp.sum(lam) + density(lam, y, jnp.sum(g)) + log_eta(total(logx))
            return jnp.where(jnp.isnan(f), -jnp.inf, f), logx

        def mean_total(lam: Any) -> Any:
            a = jnp.exp(lam)
            return b * w * (digamma(a) - digamma(jnp.sum(a)))

        # the surrogate's coefficients at the reference point, in closed form (one O(bd) pass, no autodiff)
        slope, curv, t_ref, jac_t = _surrogate_expansion(theta_ref[:d], zc, p, w, log_a, jac_factor)
        fine = jnp.all(jnp.isfinite(slope)) & jnp.all(jnp.isfinite(curv)) & jnp.all(jnp.isfinite(jac_t))
        slope, curv, jac_t = (jnp.where(fine, x, 0.0) for x in (slope, curv, jac_t))
        # T's expansion: exact first order at the reference (censoring included), plus the curvature of the
        # expected log-sum in log alpha (its remainder past first order)
        mt_ref = mean_total(theta_ref[:d])
        dmt_ref = jax.jacfwd(mean_total)(theta_ref[:d])

        def surrogate(theta: Any) -> Any:
            lam, dt = theta[:d], theta - theta_ref
            f = (log_prior(jnp.exp(lam)) + jnp.sum(lam) + jnp.dot(slope, dt) + 0.5 * jnp.sum(curv * dt[d:] ** 2)
                 + log_eta(t_ref + jac_t @ dt + mean_total(lam) - mt_ref - dmt_ref @ dt[:d]))
            return jnp.where(jnp.isnan(f), -jnp.inf, f)

        def one_round(carry: Any, k: Any) -> Any:
            theta, logx, f = carry
            k_walk, k_u = random.split(k)

            def rw(c: Any, inp: Any) -> Any:
                t_cur, s_cur = c
                eps, log_u = inp
                t_new = t_cur + eps
                s_new = surrogate(t_new)
                log_r = s_new - s_cur
                ok = log_u < log_r
                prob = jnp.where(jnp.isnan(log_r), 0.0, jnp.exp(jnp.minimum(log_r, 0.0)))
                return (jnp.where(ok, t_new, t_cur), jnp.where(ok, s_new, s_cur)), prob

            # the walk's random numbers drawn at once (one key split per round, not per step)
            k_eps, k_acc = random.split(k_walk)
            eps = step * random.normal(k_eps, (surrogate_steps, 2 * d), dtype=jnp.float64) @ chol.T
            log_us = jnp.log(random.uniform(k_acc, (surrogate_steps,), dtype=jnp.float64))
            s0 = surrogate(theta)
            (t_star, s_star), probs = lax.scan(rw, (theta, s0), (eps, log_us))
            f_star, logx_star = exact(t_star)
            log_r = (f_star - f) - (s_star - s0) if correct else jnp.where(jnp.isfinite(f_star), 0.0, -jnp.inf)
            ok = jnp.log(random.uniform(k_u, dtype=jnp.float64)) < log_r  # NaN rejects
            prob = jnp.where(jnp.isnan(log_r), 0.0, jnp.exp(jnp.minimum(log_r, 0.0)))
            new = (jnp.where(ok, t_star, theta), jnp.where(ok, logx_star, logx), jnp.where(ok, f_star, f))
            return new, (prob, jnp.mean(probs))

        lam0 = jnp.log(alpha0)
        theta0 = jnp.concatenate([lam0, c0])
        # f at the current point from the arrays at hand (its records are logx0: z was taken at alpha0)
        # (sum_ij g_ij = sum_i G_i: the parts of a record sum to 1, so no exponential of the b x d array)
        f0 = log_prior(alpha0) + jnp.sum(lam0) + density(lam0, y0, jnp.sum(jnp.exp(log_tot))) + log_eta(total(logx0))
        f0 = jnp.where(jnp.isnan(f0), -jnp.inf, f0)
        (theta, logx, _), (p_corr, p_sur) = lax.scan(
            one_round, (theta0, logx0, f0), random.split(k_rounds, rounds)
        )
        return jnp.exp(theta[:d]), logx, jnp.mean(p_corr), jnp.mean(p_sur), theta

    return move


# ----------------------------------------------------------------------------- the compiled sampler
def _window_sweep(
    key: Any, logx: Any, alpha: Any, s_dp: Any, m: int, statistic: Callable[..., Any], laplace: Callable[..., Any]
) -> tuple[Any, Any]:
    r"""The record sweep of :mod:`noiseaware.augment` on ``m`` of the ``b`` records.

    The records :math:`i\in W=\{k, k+1, \dots, k+m-1\} \bmod b` with :math:`k` uniform (drawn
    independently of the state) get the Metropolis-within-Gibbs step of Eng, Awan, Gong, Ju & Rao (2024), *dapper:
    Data Augmentation for Private Posterior Estimation in R*, §3 in turn; the
    others are held fixed, so their part :math:`s_{\text{rest}}` of the log-sum is a constant and
    the Laplace density of :math:`s_{dp}` at :math:`s_W+s_{\text{rest}}` is that of
    :math:`s_{dp}-s_{\text{rest}}` at :math:`s_W` (a location family). Each step leaves
    :math:`\pi(\alpha, D\mid s_L)` invariant, hence so does their composition, for every
    :math:`k`, and so does the mixture over :math:`k`. Returns ``(records, accept_rate)``.
    """
    b = logx.shape[0]
    k_off, k_sweep = random.split(key)
    idx = (random.randint(k_off, (), 0, b) + jnp.arange(m)) % b
    sub = logx[idx]
    s_rest = statistic_total(statistic, logx, s_dp) - statistic_total(statistic, sub, s_dp)
    new_sub, accept = record_sweep(
        k_sweep, sub, alpha, s_dp - s_rest,
        latent=lambda k, a: log_dirichlet(k, a, (m,)), statistic=statistic, log_density=laplace, per_record=False,
    )
    return logx.at[idx].set(new_sub), accept


def _adapt_walk(walk: _WalkAdaptation, i: Any, lam: Any, warmup: Any) -> tuple[_WalkAdaptation, Any]:
    r"""Adapt the surrogate walk's proposal from warmup draws of its coordinates.

    Accumulates :math:`\theta=(\log\alpha, c)` (``lam``, :func:`_joint_move_surrogate`) over
    ``[warmup/4, warmup/2)``; at the window's end sets the walk's Cholesky factor to that of
    :math:`(2.38^2/k)\,\hat\Sigma`, ``k = lam.size`` (Roberts, Gelman & Gilks 1997), with
    :math:`\hat\Sigma` shrunk towards :math:`10^{-3}I` as NumPyro's mass-matrix adaptation does.
    Returns ``(walk, at_end)``; after warmup nothing changes (the kept draws see one fixed kernel).
    """
    d = lam.shape[-1]
    lo, hi = warmup // 4, warmup // 2
    inside = (i >= lo) & (i < hi)
    count = walk.count + inside
    delta = lam - walk.mean
    mean = walk.mean + jnp.where(inside, delta / jnp.maximum(count, 1.0), 0.0)
    m2 = walk.m2 + jnp.where(inside, jnp.outer(delta, lam - mean), 0.0)
    at_end = (i == hi - 1) & (count >= d + 2)
    cov = m2 / jnp.maximum(count - 1.0, 1.0)
    cov = (count / (count + 5.0)) * cov + 1e-3 * (5.0 / (count + 5.0)) * jnp.eye(d)
    chol = jnp.linalg.cholesky(0.5 * (cov + cov.T) * (2.38**2 / d))
    ok = at_end & jnp.all(jnp.isfinite(chol))
    return _WalkAdaptation(count, mean, m2, jnp.where(ok, chol, walk.chol)), ok


class _Sampler(NamedTuple):
    """The kernel mix of one iteration (part of the compiled program's cache key)."""

    joint_map: str  # "surrogate", "cuberoot" (:func:`_joint_move_cuberoot`) or "log" (:func:`_joint_move`)
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
#: Window sweep and ten cube-root joint moves per iteration: the benchmark's middle column.
CUBEROOT_SAMPLER = _Sampler("cuberoot", SWEEP_FRACTION, SWEEP_MIN, JOINT_STEPS, ALPHA_STEPS)
#: Full sweep and ten random-walk joint moves affine in log g: the reference kernels of the benchmark
#: ``benchmarks/dpmcmc_speed.py`` and the tests.
BASELINE_SAMPLER = _Sampler("log", 1.0, 0, 10, 5)
_JOINT_MAPS: dict[str, Callable[..., Any]] = {
    "surrogate": _joint_move_surrogate, "cuberoot": _joint_move_cuberoot, "log": _joint_move,
}


class _Data(NamedTuple):
    """One release's numbers, as arrays (arguments of the compiled program, not constants)."""

    s_dp: Any  # (d,) released log-sum n * s_L
    log_a: Any  # () log threshold
    scale_sum: Any  # () Laplace scale of the log-sum, -d log(a) / epsilon_1
    w: Any  # () weight of a latent record, n / b
    chol_alpha: Any  # (d, d) proposal of the draw of log alpha given the records
    chol_joint: Any  # (d, d) proposal of the joint move (affine map of log g: marginal covariance)
    chol_joint_cond: Any  # (d, d) proposal of the joint move (cube-root map: conditional covariance)


class _WalkAdaptation(NamedTuple):
    r"""Covariance of the walk's :math:`\theta=(\log\alpha, c)` over ``[warmup/4, warmup/2)`` (Welford).

    With the random-walk Cholesky factor taken from it at the window's end (fixed from then on).
    """

    count: Any  # ()
    mean: Any  # (2d,)
    m2: Any  # (2d, 2d)
    chol: Any  # (2d, 2d)


class _Chain(NamedTuple):
    """State of one chain."""

    alpha: Any
    logx: Any
    adapt: StepAdaptation  # (2,) log step sizes (alpha | records, joint move) and their dual averaging
    i: Any
    key: Any
    alpha_ref: Any  # (d,) reference point of the surrogate joint move: tracks alpha in warmup, then fixed at
    #                 the geometric mean of alpha over the second half of warmup
    walk: _WalkAdaptation  # proposal of the surrogate joint move's random walk, from warmup draws
    log_alpha_sum: Any  # (d,) sum of log alpha over the second half of warmup (the fixed reference is its mean)


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
        chol0 = jax.scipy.linalg.block_diag(data.chol_joint_cond, jnp.eye(kw - d) / math.sqrt(b))
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

            alpha, logx, p_joint, p_step, theta = joint(
                k_joint, alpha, logx, total, log_eta, h[1], state.walk.chol, state.alpha_ref, data.w, data.log_a
            )
        elif static.joint:
            def log_noise(lx: Any) -> Any:
                return noise_log_density(lx, data.s_dp, statistic=statistic, log_density=laplace, per_record=False)

            chol = data.chol_joint_cond if static.sampler.joint_map == "cuberoot" else data.chol_joint
            alpha, logx, p_joint = joint(k_joint, alpha, logx, log_noise, h[1], chol)
            p_step = p_joint
        # both step sizes adapt during warmup and then freeze (the engine's dual averaging); the surrogate
        # move adapts its step to the surrogate walk's acceptance (its correction has no step to tune)
        walk, at_end, w_end = state.walk, jnp.zeros((), bool), warmup // 2
        i1, warm1 = state.i, warmup
        if surrogate:
            walk, at_end = _adapt_walk(state.walk, state.i, theta, warmup)
            # the walk's step adapts again from the window's end, for its new covariance
            i1, warm1 = jnp.where(state.i >= w_end, state.i - w_end, state.i), jnp.where(state.i >= w_end,
                                                                                         warmup - w_end, w_end)
        a0 = jax.tree.map(lambda x: x[:1], state.adapt)
        a1 = jax.tree.map(lambda x: jnp.where(at_end, 0.0, x[1:]), state.adapt)
        a0 = adapt_step(a0, state.i, p_alpha[None], target, warmup)
        a1 = adapt_step(a1, i1, p_step[None], target, warm1)
        adapt = jax.tree.map(lambda x, y: jnp.concatenate([x, y]), a0, a1)
        # the surrogate's reference point follows alpha (geometric moving average) during warmup; at its end it is
        # set to the geometric mean of alpha over warmup's second half and stays there
        log_sum = state.log_alpha_sum + jnp.where((state.i >= w_end) & (state.i < warmup), jnp.log(alpha), 0.0)
        ref = jnp.where(
            state.i < warmup, jnp.exp(0.9 * jnp.log(state.alpha_ref) + 0.1 * jnp.log(alpha)), state.alpha_ref
        )
        ref = jnp.where(state.i == warmup - 1, jnp.exp(log_sum / jnp.maximum(warmup - w_end, 1)), ref)
        new = _Chain(alpha, logx, adapt, state.i + 1, key, ref, walk, log_sum)
        return new, (alpha, accept, p_alpha, p_joint, jnp.exp(adapt.log_step[1]))

    def advance_chain(state: _Chain, data: _Data, warmup: Any, target: Any) -> tuple[_Chain, Any]:
        return lax.scan(lambda s, _: iterate(s, data, warmup, target), state, None, length=CHUNK)

    over_chains = (0, 0, None)  # key/state per chain; the release's data shared by its chains
    init = jax.vmap(jax.vmap(init_chain, in_axes=over_chains))
    advance = jax.vmap(jax.vmap(advance_chain, in_axes=(0, None, None, None)), in_axes=(0, 0, None, None))
    groups = static.groups
    if groups > 1:
        # the chains of each release in one group per local device (one per core), run at the same time; a
        # chain's draws depend on its own key only, so they are the same on any number of devices
        from jax.sharding import Mesh
        from jax.sharding import PartitionSpec as P

        mesh = Mesh(np.asarray(jax.local_devices()[:groups]), ("chains",))
        c, r = P(None, "chains"), P()
        init = jax.shard_map(init, mesh=mesh, in_specs=(c, c, r), out_specs=c, check_vma=False)
        advance = jax.shard_map(advance, mesh=mesh, in_specs=(c, r, r, r), out_specs=(c, c), check_vma=False)
    return jit(init), jit(advance)


# ----------------------------------------------------------------------------- inputs
class _Prepared(NamedTuple):
    data: _Data
    inits: np.ndarray  # (chains, d)
    part: LogMeanPart
    b: int
    w: float
    joint: bool


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
    p = select_part(_OWNER, release, part)
    d, n = p.d, p.n
    if d < 2:
        v.fail(_OWNER, "release", "must describe compositions of at least 2 parts", f"d={d}")
    r = v.integer(_OWNER, "replicates", replicates, minimum=1)
    if r > n:
        v.fail(_OWNER, "replicates", f"must be at most the number of records n={n}", r)
    if joint_move is not None and not isinstance(joint_move, bool):
        raise NoiseawareTypeError(v.message(_OWNER, "joint_move", "must be True, False or None", joint_move))
    log_prior, _ = _prior_logdensity(prior, d)
    b = max(1, round(n / r))
    w = n / b
    if joint_move and b != n:
        v.fail(
            _OWNER, "joint_move", "needs the exact DPMCMC target (replicates=1); DPreMCMC has no joint density",
            joint_move, "Leave joint_move=None.",
        )
    use_joint = b == n if joint_move is None else joint_move
    scale_sum = p.scale * n  # Laplace scale of the released log-sum, -d log(a) / epsilon_1
    inits = np.stack([x[_ALPHA] for x in _initial_values(init, p, chains, seed)])
    bad = [i for i, a0 in enumerate(inits) if not np.isfinite(float(log_prior(jnp.asarray(a0))))]
    if bad:
        v.fail(_OWNER, "prior", "must have a finite log-density at the initial alpha", inits[bad[0]].tolist())
    ref = np.exp(np.mean(np.log(inits), axis=0))
    data = _Data(
        s_dp=np.asarray(p.s_l * n, dtype=np.float64),
        log_a=np.float64(math.log(p.a)),
        scale_sum=np.float64(scale_sum),
        w=np.float64(w),
        chol_alpha=_log_fisher_cholesky(ref, w * b),
        chol_joint=_proposal_cholesky(ref, n, scale_sum),
        chol_joint_cond=_conditional_proposal_cholesky(ref, n, scale_sum),
    )
    return _Prepared(data, inits, p, b, w, use_joint)


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
                    if float(p_corr.mean(axis=(1, 2)).min()) < SURROGATE_MIN_ACCEPT:
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


class DPMCMCFit(FitResult):
    r"""Result of :func:`dpmcmc`: an ArviZ ``InferenceData`` with posterior ``alpha`` and ``composition``.

    A :class:`noiseaware.FitResult`:
    every ArviZ function takes it as it takes ``pm.sample``'s result (``az.summary(res)``).

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> a = np.random.default_rng(0).gamma(4.0, size=(2, 50, 3))
    >>> res = DPMCMCFit(az.from_dict(posterior={"alpha": a, "composition": a / a.sum(-1, keepdims=True)}))
    >>> res.alpha.shape, res.interval(0.9)[0].shape, res.posterior["alpha"].shape
    ((100, 3), (3,), (2, 50, 3))
    """

    default_var = "alpha"

    @property
    def alpha(self) -> np.ndarray:
        """Posterior draws of alpha pooled over chains, shape ``(chains * draws, d)``."""
        return self.draws_of("alpha")

    @property
    def composition(self) -> np.ndarray:
        r"""Posterior draws of :math:`E[x\mid\alpha]=\alpha/\sum_j\alpha_j`, shape ``(chains * draws, d)``."""
        return self.draws_of("composition")


def _idata(
    raw: Mapping[str, Any], k: int, prep: _Prepared, release: Any, prior: Any, settings: SamplingSettings
) -> az.InferenceData:
    """The InferenceData of release ``k`` of a run."""
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
        **settings.as_attrs(),
    }
    stats = {"accept_rate": raw["accept_rate"][k], "alpha_accept_prob": raw["alpha_accept_prob"][k]}
    if prep.joint:
        stats |= {"joint_accept_prob": raw["joint_accept_prob"][k], "joint_step_size": raw["joint_step_size"][k]}
    return az.from_dict(
        posterior={_ALPHA: alpha, "composition": alpha / alpha.sum(axis=-1, keepdims=True)},
        sample_stats=stats,
        coords={"component": columns},
        dims={_ALPHA: ["component"], "composition": ["component"]},
        attrs=attrs,
    )


# ----------------------------------------------------------------------------- the sampler
@float64
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
) -> DPMCMCFit:
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
        Chains, run vectorized in one compiled program.
    draws, warmup : int
        Kept and discarded iterations per chain.
    seed : int, optional
        Random seed (JAX key and the jitter of the starting values); drawn from the OS when
        omitted and recorded in ``result.settings.seed`` and ``attrs["noiseaware_seed"]``.
    progressbar : bool
        Show a progress bar (the run advances in compiled blocks of ``CHUNK = 100`` iterations).
    target_accept : float, optional
        Target acceptance probability of the two adapted random-walk moves (the draw of
        :math:`\alpha` given the records and the joint move). Default (None): 0.3
        (``RWM_TARGET_ACCEPT`` of the engine; a random walk in a few dimensions is most efficient
        near 0.234-0.44, Roberts, Gelman & Gilks 1997); NUTS's 0.8 would make its steps small.
    check_mixing : bool
        Warn (:class:`~noiseaware.exceptions.MixingWarning`) when ``alpha`` has bulk ESS below 100
        per chain or R-hat above 1.01 (the engine's check, :func:`noiseaware.augment.check_mixing`).
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
    DPMCMCFit
        An ArviZ ``InferenceData`` (a :class:`noiseaware.FitResult`; ``alpha`` and ``composition``
        as pooled draws). ``posterior``:
        ``alpha`` and ``composition`` :math:`=E[x\mid\alpha]=\alpha/\sum_j\alpha_j`,
        dims ``(chain, draw, component)`` with the release's column names. ``sample_stats``:
        ``accept_rate`` (fraction of record proposals accepted per sweep), ``alpha_accept_prob``
        and, with the joint move, ``joint_accept_prob`` and ``joint_step_size``. ``attrs``:
        method, ``a``, ``n``, ``latent_records`` (``b``), ``weight`` (``w``), the Laplace scale of
        the mean, ``epsilon_1``, the prior.

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
    Against the reference kernels -- a map affine in :math:`\log g_{ij}` (:func:`_joint_move`), ten
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
    >>> res.posterior["composition"].shape, res.alpha.shape
    ((2, 300, 3), (600, 3))
    """
    st = _settings(draws, warmup, chains, seed, progressbar, target_accept, check_mixing)
    prep = _prepare(release, prior, st.chains, st.seed, replicates, part=part, init=init, joint_move=joint_move)
    raw = _run([prep], prior, st.draws, st.warmup, st.seed, st.progressbar, target_accept=st.target_accept)
    res = DPMCMCFit(_idata(raw, 0, prep, release, prior, st), settings=st)
    if st.check_mixing:
        _mixing(res.idata, [_ALPHA], owner=_OWNER)
    return res


def _settings(
    draws: Any, warmup: Any, chains: Any, seed: Any, progressbar: Any, target_accept: Any, check_mixing: Any
) -> SamplingSettings:
    return check_settings(
        _OWNER, chains=chains, draws=draws, warmup=warmup, seed=seed, progressbar=progressbar,
        target_accept=target_accept, check_mixing=check_mixing, default_target=RWM_TARGET_ACCEPT,
    )


@float64
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
) -> list[DPMCMCFit]:
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
    prior, chains, draws, warmup, seed, progressbar, target_accept, check_mixing, replicates, part, joint_move
        As in :func:`dpmcmc` (the default starting values of each release are its own). Every
        result records the same settings (release ``k`` ran with the seed stream of its index).

    Returns
    -------
    list of DPMCMCFit
        One per release, as :func:`dpmcmc` returns.

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
    >>> [f.posterior["alpha"].shape for f in fits]
    [(2, 200, 3), (2, 200, 3), (2, 200, 3)]
    """
    st = _settings(draws, warmup, chains, seed, progressbar, target_accept, check_mixing)
    if isinstance(releases, (str, bytes)) or not isinstance(releases, Sequence):
        raise NoiseawareTypeError(v.message(_OWNER, "releases", "must be a list of releases", type(releases).__name__))
    if len(releases) == 0:
        v.fail(_OWNER, "releases", "must hold at least one release", "[]")
    preps = [
        _prepare(rel, prior, st.chains, st.seed + k, replicates, part=part, init=None, joint_move=joint_move)
        for k, rel in enumerate(releases)
    ]
    shapes = {(p.part.d, p.b) for p in preps}
    if len(shapes) != 1:
        v.fail(
            _OWNER, "releases", "must share d and the number of latent records b (n for DPMCMC)",
            sorted(f"d={d}, b={b}" for d, b in shapes), "Group the releases by n and d.",
        )
    raw = _run(preps, prior, st.draws, st.warmup, st.seed, st.progressbar, target_accept=st.target_accept)
    out = []
    for k, (prep, rel) in enumerate(zip(preps, releases, strict=True)):
        res = DPMCMCFit(_idata(raw, k, prep, rel, prior, st), settings=st)
        if st.check_mixing:
            _mixing(res.idata, [_ALPHA], owner=_OWNER)
        out.append(res)
    return out
