r"""Preconditioners of the NUTS driver: a point near the mode and a Laplace scale ``A`` (engine, private).

NUTS then samples ``u`` in ``z = z_hat + A u`` (:mod:`._nuts`), an affine, constant-Jacobian change
of variables: the target is unchanged, only the sampler's efficiency depends on ``z_hat`` and
``A``. With ``A A^T`` the inverse Hessian of the potential near its minimum (a Laplace
approximation), ``u`` is close to standard normal whatever the posterior's scale -- which matters
when the posterior is very concentrated (sd ~ 1e-3) and its unconstrained coordinates have very
unequal scales: from a unit metric NUTS then spends its warmup at its maximum tree depth, and
NumPyro's regularization of the adapted mass matrix is far larger than such variances.

* :func:`laplace_precondition` -- dense ``A`` from damped Newton steps with the Hessian
  (:func:`fd_hessian`: central differences of the compiled gradient, or a compiled Hessian);
* :func:`diagonal_precondition` -- diagonal ``A`` from a curvature vector (no ``d x d`` matrix);
* :func:`lkj_pairwise_curvature` -- that curvature vector for the LKJ-Cholesky coordinates of a
  correlation matrix under a likelihood that is a sum of one-pair terms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "FD_MAX_D",
    "diagonal_precondition",
    "fd_hessian",
    "laplace_precondition",
    "lkj_pairwise_curvature",
]

#: Up to this many coordinates the dense preconditioner's Hessian is best taken by central differences
#: of the compiled gradient (:func:`fd_hessian`, 2 d gradients) instead of a compiled Hessian program,
#: whose compilation costs a large share of a moderate ``copula.fit``.
FD_MAX_D = 105


def fd_hessian(value_grad: Callable[[Any], Any], x: np.ndarray, rel_step: float = 1e-5) -> np.ndarray:
    r"""The Hessian of a potential at ``x`` by central differences of its exact gradient.

    Column ``i`` is :math:`(\nabla U(x + h_i e_i) - \nabla U(x - h_i e_i)) / (2 h_i)`,
    :math:`h_i = 10^{-5} \max(1, |x_i|)`, then symmetrised: error :math:`O(h^2 U^{(3)})` plus the
    gradient's rounding over ``h`` (relative ~1e-9 for ``copula.fit``). Used only to precondition the
    sampler (its efficiency), never in the target.

    Examples
    --------
    >>> import numpy as np
    >>> H = fd_hessian(lambda x: (0.0, np.array([2 * x[0] + x[1], x[0] + 4 * x[1]])), np.zeros(2))
    >>> np.round(H, 6).tolist()
    [[2.0, 1.0], [1.0, 4.0]]
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


def _line_search(
    vg: Callable[[np.ndarray], tuple[float, np.ndarray]],
    z: np.ndarray,
    f: float,
    g: np.ndarray,
    step: np.ndarray,
    *,
    finite_gradient: bool,
) -> tuple[np.ndarray, float, np.ndarray] | None:
    """Backtracking (Armijo) along the descent direction ``step`` from ``z``, value ``f`` and gradient ``g``.

    Halves ``t`` from 1 while ``t > 1e-4`` until ``f(z + t step) <= f - 1e-4 t d`` with ``d = -g.step``
    the Newton decrement (finite, and with a finite gradient if ``finite_gradient``). Returns the new
    ``(z, f, g)``, or None when ``d < 1e-8`` (converged) or no ``t`` is accepted: the Newton loop stops.
    """
    decrement = float(-(g @ step))
    if decrement < 1e-8:
        return None
    t = 1.0
    while t > 1e-4:
        zn = z + t * step
        fn, gn = vg(zn)
        if np.isfinite(fn) and fn <= f - 1e-4 * t * decrement and (not finite_gradient or np.all(np.isfinite(gn))):
            return zn, fn, gn
        t *= 0.5
    return None


def _numpy_value_grad(value_grad: Callable[[Any], Any]) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """``value_grad`` on NumPy points: ``x -> (float f, float64 gradient)`` for the Newton searches."""
    import jax.numpy as jnp

    def vg(x: np.ndarray) -> tuple[float, np.ndarray]:
        f, g = value_grad(jnp.asarray(x))
        return float(f), np.asarray(g, dtype=np.float64)

    return vg


def laplace_precondition(
    value_grad: Callable[[Any], Any], hessian: Callable[[np.ndarray], np.ndarray], z: np.ndarray, newton_steps: int = 8
) -> tuple[np.ndarray, np.ndarray]:
    r"""A point near the posterior mode and a dense Laplace scale, in the unconstrained space.

    From the start point ``z``, damped Newton steps on the potential, whose value and gradient
    ``value_grad`` and Hessian ``hessian`` compute (e.g. :func:`fd_hessian`), the Hessian's
    eigenvalues floored at 1 (i.e. at most a unit scale, roughly a prior's); the Hessian is taken
    at accepted points only. Returns ``(z_hat, A)`` with ``A A^T`` the inverse of the floored
    Hessian at ``z_hat`` (the identity where the Hessian is not finite).
    """
    vg = _numpy_value_grad(value_grad)
    f, g = vg(z)
    H = hessian(z) if np.isfinite(f) and np.all(np.isfinite(g)) else np.full((z.size, z.size), np.nan)
    for _ in range(newton_steps):
        if not (np.isfinite(f) and np.all(np.isfinite(g)) and np.all(np.isfinite(H))):
            break
        lam, V = np.linalg.eigh(0.5 * (H + H.T))
        step = -(V @ ((V.T @ g) / np.maximum(lam, 1.0)))
        moved = _line_search(vg, z, f, g, step, finite_gradient=True)
        if moved is None:
            break
        z, f, g = moved
        H = hessian(z)
    if not np.all(np.isfinite(H)):
        return z, np.eye(z.size)
    lam, V = np.linalg.eigh(0.5 * (H + H.T))
    return z, V * (1.0 / np.sqrt(np.maximum(lam, 1.0)))


def diagonal_precondition(
    value_grad: Callable[[Any], Any], curvature: Callable[[Any], Any], z: np.ndarray, steps: int = 30
) -> tuple[np.ndarray, np.ndarray]:
    r"""A point near the mode and a diagonal Laplace scale, without forming a ``d x d`` matrix.

    Like :func:`laplace_precondition` with the Hessian replaced by a curvature vector ``h``
    (``curvature(z)``, e.g. :func:`lkj_pairwise_curvature`'s, floored at 1): from ``z``, up to
    ``steps`` damped diagonally-scaled Newton steps (``h`` refreshed every 5 steps), then
    ``a = 1 / sqrt(h)`` at the last point. Returns ``(z_hat, a)``; the sampler's coordinates are
    ``z = z_hat + a * u``.
    """
    import jax.numpy as jnp

    vg = _numpy_value_grad(value_grad)

    def diag_at(x: np.ndarray) -> np.ndarray:
        return np.maximum(np.asarray(curvature(jnp.asarray(x)), dtype=np.float64), 1.0)

    f, g = vg(z)
    h = diag_at(z)
    for i in range(steps):
        if not (np.isfinite(f) and np.all(np.isfinite(g)) and np.all(np.isfinite(h))):
            break
        moved = _line_search(vg, z, f, g, -g / h, finite_gradient=False)
        if moved is None:
            break
        z, f, g = moved
        if i % 5 == 4:
            h = diag_at(z)
    h = diag_at(z)
    if not np.all(np.isfinite(h)):
        return z, np.ones(z.size)
    return z, 1.0 / np.sqrt(h)


def lkj_pairwise_curvature(
    p: int,
    pairs: Any,
    to_chol: Callable[[Any], Any],
    prior_potential: Callable[[Any], Any],
    loglik_pairs: Callable[[Any, Any], Any],
) -> Callable[[Any, Any], Any]:
    r"""A jitted ``(z, data) -> h``: the diagonal of a Gauss-Newton Hessian of the potential, no ``d x d`` matrix.

    For a correlation matrix in NumPyro's ``CorrCholeskyTransform`` coordinates ``z`` (``to_chol``;
    ``z`` fills the strict lower triangle row by row, and row ``i`` of ``L`` depends on row
    ``i``'s entries only), a prior potential ``prior_potential(z)`` (log prior plus log-Jacobian)
    and a likelihood ``loglik_pairs(R, data)`` that is a sum of one-pair terms over ``pairs``:

    * the prior potential is a sum over rows, its Hessian is block diagonal by row, and one
      Hessian-vector product along the indicator of column ``m`` returns the exact diagonal
      entries of every coordinate in column ``m`` (``p - 1`` products in all);
    * the likelihood's curvature in ``R`` is a vector ``w`` (one Hessian-vector product with a
      vector of ones), and the Gauss-Newton diagonal is
      :math:`\sum_{b \ne i} w_{ib} (\partial R_{ib} / \partial z_{im})^2` with
      :math:`\partial R_{ib} / \partial z_{im} = (\partial L_i / \partial z_{im}) \cdot L_b`, the
      derivative of row ``i`` taken by one forward product along the same column indicator.

    ``w`` is clipped at 0 (Gauss-Newton keeps only the positive curvature). The full ``d x d``
    matrix is never formed: the loop over the ``p - 1`` columns holds ``p x p`` temporaries, and
    the program needs about the memory of one gradient (measured 4.0-4.9 doubles per pair and
    window term for ``copula.fit``, 55 MB at p = 200, n = 300). Cost: ``p - 1`` forward products and
    ``p x p`` matrix products, about 1 s at p = 200 on 2 cores once compiled.
    """
    import jax
    import jax.numpy as jnp
    from jax import lax

    rows, cols = (jnp.asarray(a) for a in np.tril_indices(p, -1))  # NumPyro's layout of z
    pi, pj = (jnp.asarray(a) for a in np.asarray(pairs, dtype=np.int64).reshape(-1, 2).T)

    def loglik_r(r: Any, data: Any) -> Any:
        return loglik_pairs(jnp.eye(p, dtype=r.dtype).at[pi, pj].set(r).at[pj, pi].set(r), data)

    grad_prior = jax.grad(prior_potential)

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
