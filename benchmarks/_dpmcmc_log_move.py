"""The baseline joint move of ``dirichlet.dpmcmc``: a map affine in log g, for the benchmarks only.

The package's joint moves (``noiseaware.dirichlet._dpmcmc_moves``: the surrogate transition and its
cube-root fallback) replaced this kernel; ``dpmcmc_speed.py`` still measures against it. Run with
``BASELINE_SAMPLER`` on a release prepared by :func:`baseline_prep` (the marginal proposal of
:func:`proposal_cholesky`), after :func:`register` has added the kernel to the sampler's joint maps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, random
from jax.scipy.special import digamma, gammaln, polygamma
from scipy import special

from noiseaware._core._gamma import loggamma
from noiseaware.dirichlet import _dpmcmc as M
from noiseaware.dirichlet._dpmcmc_moves import _random_walk_cholesky as random_walk_cholesky

#: Full sweep and ten random-walk joint moves affine in log g: the reference kernels of ``dpmcmc_speed.py``.
BASELINE_SAMPLER = M._Sampler("log", 1.0, 0, 10, 5)


def register() -> None:
    """Add the kernel to ``dpmcmc``'s joint maps under ``"log"`` (so its programs are cached as the others)."""
    M._JOINT_MAPS["log"] = joint_move_log


def baseline_prep(prep: Any) -> Any:
    """``prep`` (from ``_prepare``) with the joint move's proposal of this kernel: the marginal posterior's."""
    ref = np.exp(np.mean(np.log(prep.inits), axis=0))
    chol = proposal_cholesky(ref, prep.part.n, float(prep.data.scale_sum))
    return prep._replace(data=prep.data._replace(chol_joint=chol))


def joint_move_log(log_prior: Callable[[Any], Any], b: int, d: int, steps: int = 1) -> Callable[..., Any]:
    r"""The joint move of :math:`(\alpha, x_{1:n})` affine in :math:`\log g` (the baseline kernel).

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


def proposal_cholesky(alpha: np.ndarray, n: int, scale_sum: float) -> np.ndarray:
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
    return random_walk_cholesky(jac.T @ np.linalg.solve(var_s, jac))
