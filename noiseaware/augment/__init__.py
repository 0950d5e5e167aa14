r"""Data-augmentation MCMC for any privatized statistic (dapper; Eng et al. (2024), Ju et al. 2022).

When the marginal likelihood :math:`p(s_{dp}\mid\theta)=\int\eta(s_{dp}\mid x)f(x\mid\theta)\,dx`
of a noisy statistic has no tractable form, sample :math:`p(\theta, x\mid s_{dp})` by alternating

1. a sweep over the confidential records :math:`x_1,\dots,x_n`, each updated by Metropolis
   with the prior proposal :math:`x_i^*\sim f(\cdot\mid\theta)` and acceptance
   :math:`\min\{1,\eta(s_{dp}\mid s^*)/\eta(s_{dp}\mid s)\}` -- the record-additive statistic
   :math:`s=\sum_i t_i(x_i,s_{dp})` is updated in O(1) as :math:`s^*=s-t_i(x_i)+t_i(x_i^*)`
   (Eng, Awan, Gong, Ju & Rao (2024), *dapper: Data Augmentation for Private Posterior Estimation in R*, §3);
2. a draw of :math:`\theta\mid x` -- a user-supplied conjugate draw (``posterior=``, dapper's
   ``post_f``) or NUTS on an ordinary NumPyro model of the complete data, run inside NumPyro's
   ``HMCGibbs`` with the record sweep as its Gibbs step.

The sweep is compiled with JAX (``lax.scan`` over records, or one vectorized pass for
record-level mechanisms such as randomized response) and chains are vectorized with ``vmap``;
everything runs in float64 (:func:`sample` switches ``jax_enable_x64`` on for its own duration;
your model function is traced inside that scope).

API
---
``AugmentationModel(statistic, log_density=None, model=None, records="x", latent=None, posterior=None,``
``per_record=None, model_args=(), model_kwargs={}, joint_move=None, indexed=False)``

    * ``statistic(x_i, s_dp) -> t_i`` -- one record's contribution (shape of ``s_dp``; with
      ``per_record`` it gets ``s_dp[i]`` and returns the record's true answers; with
      ``indexed=True`` it also gets the record index, ``statistic(x_i, s_dp, i)``);
    * ``per_record=True`` with a per-unit release (one noisy value per unit, entrywise additive
      noise, e.g. a ``counts`` release of county counts): record ``i`` is unit ``i`` (exact; see
      :class:`AugmentationModel` Notes);
    * ``log_density(s_dp, s) -> scalar`` -- :math:`\log\eta(s_{dp}\mid s)`; omit it and pass a
      :class:`~noiseaware.Release` as ``sdp`` to use the release's mechanism
      (:func:`mechanism_log_density`);
    * ``model`` -- NumPyro model sampling the parameters, then the records at site(s) ``records``
      (leading axis ``n``, unobserved);
    * ``latent(key, theta) -> records`` -- optional, default: run ``model`` given ``theta``;
    * ``posterior(key, records, theta) -> dict`` -- optional, default: NUTS on ``model``.

``sample(model, sdp, init=None, *, chains=4, draws=1000, warmup=1000, seed=None, progressbar=False,``
``target_accept=None, check_mixing=True, keep_records=False, nuts_kwargs=None, ...)`` (the package's
one sampling convention, ``docs/architecture.md``)

    -> the host stack's own container (an ``xarray.DataTree`` under ArviZ 1, an
    ``arviz.InferenceData`` under ArviZ 0.x, read by :mod:`noiseaware.results`) with the
    parameters in ``posterior`` and the per-iteration record acceptance rate ``accept_rate`` in
    ``sample_stats``; warns :class:`~noiseaware.exceptions.MixingWarning` on poor mixing
    (:func:`check_mixing`).

Records may be discrete (cells of a contingency table) or continuous (regression rows,
compositional vectors): whatever ``latent`` draws and ``statistic`` maps to a fixed-size array.

Examples
--------
The discrete Gaussian example of Eng et al. (2024) in miniature -- N = 30 records in four cells, cell counts
released with discrete Gaussian noise, NUTS for the cell probabilities:

>>> import jax, jax.numpy as jnp, numpyro, numpyro.distributions as dist
>>> import noiseaware as na
>>> from noiseaware.augment import AugmentationModel, sample
>>> def model(n):
...     pi = numpyro.sample("pi", dist.Dirichlet(jnp.ones(4)))
...     with numpyro.plate("records", n):
...         numpyro.sample("x", dist.Categorical(pi))
>>> release = na.privatize(jnp.array([10, 5, 7, 8]), statistic="counts", sigma=2.0, sensitivity=1,
...                        rng=__import__("numpy").random.default_rng(0))
>>> aug = AugmentationModel(statistic=lambda x, s_dp: jax.nn.one_hot(x, 4), model=model, model_args=(30,))
>>> idata = sample(aug, release, draws=100, warmup=100, chains=2, check_mixing=False)  # doctest: +SKIP
>>> sorted(idata["posterior"].data_vars), sorted(idata["sample_stats"].data_vars)  # doctest: +SKIP
(['pi'], ['accept_rate', 'diverging', 'n_steps'])

(Skipped here for the fast suite's compile time; ``tests/test_augment.py`` runs this route.)
"""

from __future__ import annotations

from ._model import AugmentationModel, mechanism_log_density
from ._sample import ACCEPT_SITE, ESS_PER_CHAIN, RHAT_MAX, check_mixing, sample

__all__ = [
    "ACCEPT_SITE",
    "ESS_PER_CHAIN",
    "RHAT_MAX",
    "AugmentationModel",
    "check_mixing",
    "mechanism_log_density",
    "sample",
]
