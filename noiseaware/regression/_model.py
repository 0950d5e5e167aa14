r"""The prior and the two PPL models of :func:`noiseaware.regression.fit` (one model, written in each PPL)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._core._regression_release import RegressionStatistics
from .._validation import current_owner, owned
from ..exceptions import NoiseawareValueError

__all__ = ["RegressionPrior", "numpyro_model", "prior_scales", "pymc_model"]


@dataclass(frozen=True)
class RegressionPrior:
    r"""Prior of :func:`noiseaware.regression.fit` (each scale ``None``: from the release's public bounds).

    .. math::

        \beta_j \sim N(0, s_{\beta,j}^2),\quad \sigma \sim \mathrm{HalfNormal}(s_\sigma),\quad
        \mu_{x,j} \sim N(0, s_{\mu,j}^2),\quad \Sigma_x = D R D,\ D_{jj} \sim \mathrm{HalfNormal}(s_{x,j}),\
        R \sim \mathrm{LKJ}(\eta).

    Defaults from the bounds ``b`` of ``Z``'s columns (the response's :math:`b_y`): :math:`s_{\beta,j}
    = b_y / b_j` (a change of :math:`b_j` in covariate ``j`` moves the response by about its bound;
    ``b = 1`` for the intercept), :math:`s_\sigma = b_y`, :math:`s_{\mu,j} = s_{x,j} = b_j`. They
    depend on public bounds only, never on the noisy statistics.

    Parameters
    ----------
    beta_scale, x_loc_scale, x_scale : float or array, optional
        The scales above (finite, > 0; an array has one value per coefficient / covariate, its
        length checked against the release by :func:`~noiseaware.regression.fit`).
    sigma_scale : float, optional
        :math:`s_\sigma` (finite, > 0; or an array of one such value).
    eta : float
        LKJ concentration (finite, > 0), default 2.

    Raises
    ------
    NoiseawareTypeError
        If a scale or ``eta`` is not a number (or an array of numbers).
    NoiseawareValueError
        If a scale or ``eta`` is not finite and > 0, or an array scale is not 1-D and non-empty.

    Examples
    --------
    >>> RegressionPrior(beta_scale=2.0).eta
    2.0
    """

    beta_scale: Any = None
    sigma_scale: Any = None
    x_loc_scale: Any = None
    x_scale: Any = None
    eta: float = 2.0

    @owned("RegressionPrior")
    def __post_init__(self) -> None:
        """Check every scale and ``eta`` at once, so that a bad prior never reaches a fit."""
        for name in ("beta_scale", "x_loc_scale", "x_scale"):
            _scale_array(name, getattr(self, name))
        _scale_array("sigma_scale", self.sigma_scale, 1)
        object.__setattr__(self, "eta", v.positive("eta", self.eta))


def _scale_array(name: str, value: Any, size: int | None = None) -> np.ndarray | None:
    """A prior scale as a float64 array of finite values > 0 (a number, or ``size`` of them); None stays None."""
    if value is None:
        return None
    arr = v.numeric_array(name, value, booleans=False)
    rule = "must be a finite number > 0"
    if size != 1:
        rule += ", or a 1-D array of them (one per coefficient / covariate)"
    if arr.ndim > 1 or arr.size == 0:
        v.refuse(name, rule, value)
    if not np.all(np.isfinite(arr) & (arr > 0)):
        raise NoiseawareValueError(v.message(name, rule, value, limit=200))
    if size is not None and arr.ndim == 1 and arr.size != size:
        what = "a single number" if size == 1 else f"a number or hold {size} values (one per coefficient / covariate)"
        raise NoiseawareValueError(v.message(name, f"must be {what}", value, limit=200))
    return arr


def prior_scales(prior: RegressionPrior | None, st: RegressionStatistics) -> dict[str, Any]:
    """The prior's scales as arrays: ``beta (p,)``, ``sigma ()``, ``x_loc (d_x,)``, ``x (d_x,)``, ``eta``."""
    owner = current_owner()
    if prior is None:
        prior = RegressionPrior()
    if not isinstance(prior, RegressionPrior):
        from ..exceptions import NoiseawareTypeError

        raise NoiseawareTypeError(f"{owner}: prior must be a RegressionPrior or None; got {type(prior).__name__}.")
    k = len(st.columns)
    b = np.ones(k) if st.bounds is None else np.asarray(st.bounds, dtype=np.float64)
    p, d_x = k - 1, k - 1 - int(st.intercept)
    bx = b[int(st.intercept) : p]

    def scale(name: str, value: Any, default: np.ndarray, size: int) -> np.ndarray:
        arr = _scale_array(f"prior.{name}", value, size)
        return np.broadcast_to(default if arr is None else arr, (size,)).astype(np.float64)

    return {
        "beta": scale("beta_scale", prior.beta_scale, b[-1] / b[:p], p),
        "sigma": float(scale("sigma_scale", prior.sigma_scale, np.array(b[-1]), 1)[0]),
        "x_loc": scale("x_loc_scale", prior.x_loc_scale, bx, d_x),
        "x": scale("x_scale", prior.x_scale, bx, d_x),
        "eta": v.positive("prior.eta", prior.eta),
    }


def numpyro_model(st: RegressionStatistics, sc: dict[str, Any]) -> tuple[Any, tuple[Any, ...], tuple[Any, ...]]:
    """The NumPyro model of ``fit``: ``(model, data, cache_key)`` for :func:`~noiseaware._engine.numpyro_nuts`.

    ``model(obs)`` takes the release's noisy entries as its argument; everything else it uses (``n``,
    the noise scales and family, the intercept, the prior scales) is in ``cache_key``, so a second
    release with the same public settings reuses the compiled programs.
    """
    from .._core._regression import released_entries

    rows, cols = released_entries(len(st.columns), st.intercept)
    obs = np.asarray(st.moments, dtype=np.float64)[rows, cols]
    scale = np.asarray(st.scale, dtype=np.float64)
    key = (
        "regression", st.family, bool(st.intercept), float(st.n), scale.shape, scale.tobytes(),
        tuple((k, np.asarray(v, dtype=np.float64).tobytes()) for k, v in sorted(sc.items())),
    )
    return _numpyro_model(st.family, bool(st.intercept), float(st.n), scale, sc, rows.size), (obs,), key


def _numpyro_model(family: str, intercept: bool, n: float, scale: np.ndarray, sc: dict[str, Any], m: int) -> Any:
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    from ..numpyro import NoisySufficientStatistics

    d_x = sc["x"].size

    def model(obs: Any) -> None:
        beta = numpyro.sample("beta", dist.Normal(jnp.zeros(sc["beta"].size), jnp.asarray(sc["beta"])).to_event(1))
        sigma = numpyro.sample("sigma", dist.HalfNormal(sc["sigma"]))
        mu_x = numpyro.sample("mu_x", dist.Normal(jnp.zeros(d_x), jnp.asarray(sc["x_loc"])).to_event(1))
        sd_x = numpyro.sample("sd_x", dist.HalfNormal(jnp.asarray(sc["x"])).to_event(1))
        if d_x > 1:
            corr = numpyro.sample("corr_x_chol", dist.LKJCholesky(d_x, sc["eta"]))
            low = sd_x[:, None] * corr
            cov_x = numpyro.deterministic("cov_x", low @ low.T)
        else:
            cov_x = numpyro.deterministic("cov_x", (sd_x * sd_x)[:, None])
        latent = None
        if family == "laplace":
            latent = numpyro.sample("stats_w", dist.Normal(jnp.zeros(m), 1.0).to_event(1))
        law = NoisySufficientStatistics(beta, sigma, mu_x, cov_x, n=n, scale=scale, intercept=intercept, family=family,
                                        latent=latent)
        numpyro.sample("stats", law, obs=obs)

    return model


def pymc_model(st: RegressionStatistics, sc: dict[str, Any]) -> Any:
    """The PyMC model of ``fit`` (the same variables and priors)."""
    import pymc as pm

    from .._core._regression import released_entries
    from ..pymc import NoisySufficientStatistics

    rows, cols = released_entries(len(st.columns), st.intercept)
    obs = np.asarray(st.moments)[rows, cols]
    d_x = sc["x"].size
    with pm.Model() as model:
        beta = pm.Normal("beta", 0.0, sc["beta"], shape=sc["beta"].size)
        sigma = pm.HalfNormal("sigma", sc["sigma"])
        mu_x = pm.Normal("mu_x", 0.0, sc["x_loc"], shape=d_x)
        if d_x > 1:
            sd_dist = pm.HalfNormal.dist(sc["x"], shape=d_x)
            chol, _, _ = pm.LKJCholeskyCov("chol_x", n=d_x, eta=sc["eta"], sd_dist=sd_dist, compute_corr=True)
            cov_x = pm.Deterministic("cov_x", chol @ chol.T)
        else:
            sd_x = pm.HalfNormal("sd_x", sc["x"], shape=1)
            cov_x = pm.Deterministic("cov_x", (sd_x * sd_x)[:, None])
        NoisySufficientStatistics("stats", beta, sigma, mu_x, cov_x, n=st.n, scale=np.asarray(st.scale),
                                  intercept=st.intercept, family=st.family, observed=obs)
    return model
