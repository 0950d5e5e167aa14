r"""The kernels of :func:`noiseaware.dirichlet.dpmcmc`: proposals, the draw of alpha given the records, the joint moves.

Each kernel is a factory of a JAX function that the compiled sampler (:mod:`noiseaware.dirichlet._dpmcmc`)
calls once per iteration and chain: :func:`_alpha_given_records` (random-walk Metropolis on the
complete-data posterior of :math:`\log\alpha`), and the two joint moves of :math:`(\alpha, x_{1:n})` the
package uses, :func:`_joint_move_surrogate` (the default) and :func:`_joint_move_cuberoot` (its fallback
where the surrogate's correction accepts too little). Both leave the exact posterior of Guo, Barrientos &
Peña (2022), *Differentially Private Inference for Compositional Data*, eq. (2) invariant.

The extended target of the joint moves: draw auxiliary totals :math:`G_i\sim\text{Gamma}(\sum_j\alpha_j)`
independently of the records (an exact Gibbs step: :math:`g_{ij}=G_ix_{ij}` are then independent
:math:`\text{Gamma}(\alpha_j, 1)`), propose :math:`\log\alpha'=\log\alpha+\varepsilon`, carry the records
along by a map of the Gamma variables that is an involution together with :math:`\varepsilon\to-\varepsilon`,
accept with the Metropolis-Hastings ratio in :math:`(\log\alpha, \log g)` (the map's Jacobian included),
then forget :math:`G`. The map only has to be *close* to the exact push-forward of
:math:`\text{Gamma}(\alpha_j)` to :math:`\text{Gamma}(\alpha'_j)` for the ratio to stay near the noise ratio.

Module private.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, random
from jax.scipy.special import digamma, gammaln
from scipy import special

from .._core._backend import get_backend
from .._core._gamma import log_dirichlet, loggamma
from .._engine._adapt import StepAdaptation, adapt_step
from .._engine._compile import jit
from .._engine._sweep import record_sweep, statistic_total
from ._power_map import power, power_moments

__all__: list[str] = []

_JB = get_backend("jax")


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


def _conditional_proposal_cholesky(alpha: np.ndarray, n: int, scale_sum: float) -> np.ndarray:
    r"""Cholesky factor of the proposal of :func:`_joint_move_cuberoot` for :math:`\log\alpha`.

    The joint move keeps the standardized records fixed, so it explores :math:`\alpha` given them:
    :math:`S_0` is then a deterministic function of :math:`\alpha` with Jacobian
    :math:`J = nC\,\mathrm{diag}(\alpha)` in :math:`\log\alpha` (:math:`S_0` has mean
    :math:`n\,E[\log x\mid\alpha]`, :math:`C=\mathrm{Cov}(\log x)=\mathrm{diag}\,\psi_1(\alpha)-
    \psi_1(\sum_j\alpha_j)\mathbf 1\mathbf 1^\top`) and only the Laplace
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

def _joint_move_cuberoot(
    log_prior: Callable[[Any], Any], b: int, d: int, steps: int = 1, *, jacobian: bool = True
) -> Callable[..., Any]:
    r"""The joint move of :math:`(\alpha, x_{1:n})` with a Wilson-Hilferty map of the Gamma variables.

    On the extended target of the module docstring (auxiliary totals :math:`G_i`,
    :math:`g_{ij}=G_ix_{ij}`), with the proposal :math:`\log\alpha'=\log\alpha+\varepsilon`,
    :math:`\varepsilon\sim N(0, h^2LL^\top)` (``h`` the adapted step size), ``steps``
    Metropolis-Hastings steps share one draw of :math:`G` (each is a step on the extended target;
    the returned acceptance probability is their mean). With :math:`u_{ij}=g_{ij}^{1/3}` (nearly
    normal for a Gamma variable:
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


class _SurrogateTarget(NamedTuple):
    """What the surrogate joint move reads of the release (built inside the compiled iteration, never traced)."""

    total: Callable[[Any], Any]  # T(log x): the records' censored log-sum, sum_i w max(log x_i, log a)
    log_eta: Callable[[Any], Any]  # log eta(s_dp | T): the release's noise log-density at a log-sum T
    w: Any  # () weight of a latent record, n / b
    log_a: Any  # () log threshold


def _joint_move_surrogate(
    log_prior: Callable[[Any], Any], b: int, d: int, rounds: int = 1, *, surrogate_steps: int = 20,
    correct: bool = True, jacobian: bool = True,
) -> Callable[..., Any]:
    r"""The joint move of :math:`(\alpha, x_{1:n})` as a surrogate transition (Liu 2001, §9.4.3): the default.

    The auxiliary totals :math:`G_i\sim\text{Gamma}(\sum_j\alpha_j)` are drawn as in the module
    docstring (:math:`g_{ij}=G_ix_{ij}`, :math:`y=\log g`), and the records are
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
    Returns ``move(key, alpha, logx, target, h, chol, alpha_ref) ->
    (alpha, logx, correction acceptance probability, surrogate acceptance probability, theta)``,
    ``target`` a :class:`_SurrogateTarget` (:math:`T`, :math:`\log\eta`, ``w``, :math:`\log a`).
    """
    jac_factor = 1.0 if jacobian else 0.0

    def mapped(lam: Any, z: Any, p: Any) -> tuple[Any, Any, Any, Any]:
        m, sd = _power_moments(jnp.exp(lam), p)
        u = m + sd * z  # NaN records where u <= 0: outside the support, f is NaN and the move rejects
        y, g, logx, _ = _from_powers(u, p)
        return u, y, g, logx

    def move(key: Any, alpha0: Any, logx0: Any, target: _SurrogateTarget, step: Any, chol: Any, alpha_ref: Any) -> Any:
        total, log_eta, w, log_a = target
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


# ----------------------------------------------------------------------------- the record sweep and the walk
class _WalkAdaptation(NamedTuple):
    r"""Covariance of the walk's :math:`\theta=(\log\alpha, c)` over ``[warmup/4, warmup/2)`` (Welford).

    With the random-walk Cholesky factor taken from it at the window's end (fixed from then on).
    """

    count: Any  # ()
    mean: Any  # (2d,)
    m2: Any  # (2d, 2d)
    chol: Any  # (2d, 2d)


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


# ----------------------------------------------------------------------------- a chain's state
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


def _adapt_chain(
    state: _Chain, alpha: Any, theta: Any, p_alpha: Any, p_step: Any, *, warmup: Any, target: Any, surrogate: bool
) -> tuple[StepAdaptation, _WalkAdaptation, Any, Any]:
    """Warmup's adaptation after one iteration: ``(step sizes, surrogate walk, reference point, log alpha sum)``.

    ``alpha`` and ``theta`` are the iteration's new draw (``theta``: the surrogate walk's coordinates),
    ``p_alpha`` and ``p_step`` the acceptance probabilities the two step sizes adapt to.
    """
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
    return adapt, walk, ref, log_sum


def _vectorize(init_chain: Callable[..., Any], advance_chain: Callable[..., Any], groups: int) -> tuple[Any, Any]:
    """(init, advance) of one chain, compiled and vectorized over releases and chains (``groups`` devices)."""
    over_chains = (0, 0, None)  # key/state per chain; the release's data shared by its chains
    init = jax.vmap(jax.vmap(init_chain, in_axes=over_chains))
    advance = jax.vmap(jax.vmap(advance_chain, in_axes=(0, None, None, None)), in_axes=(0, 0, None, None))
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
