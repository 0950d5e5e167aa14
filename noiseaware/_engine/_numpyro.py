"""NumPyro NUTS on a model function, run the package's way (``numpyro.infer.MCMC``, chains vectorized)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["numpyro_nuts"]


def numpyro_nuts(
    model: Callable[[], None],
    *,
    chains: int,
    draws: int,
    warmup: int,
    seed: int,
    progressbar: bool,
    target_accept: float,
    init_strategy: Any = None,
) -> Any:
    """``MCMC(NUTS(model))`` with vectorized chains, as ArviZ ``InferenceData``.

    Records ``diverging``, ``accept_prob`` and ``num_steps`` for every draw, so that
    :func:`~noiseaware._engine.standard_stats` can name the acceptance statistic ``accept_rate``
    as every other fit does.
    """
    import arviz as az
    import jax
    import numpyro

    kwargs = {} if init_strategy is None else {"init_strategy": init_strategy}
    kernel = numpyro.infer.NUTS(model, target_accept_prob=target_accept, **kwargs)
    mcmc = numpyro.infer.MCMC(
        kernel,
        num_warmup=warmup,
        num_samples=draws,
        num_chains=chains,
        chain_method="vectorized",
        progress_bar=progressbar,
    )
    mcmc.run(jax.random.PRNGKey(seed), extra_fields=("diverging", "accept_prob", "num_steps"))
    # no log_likelihood group: the covariance fits observe one joint vector (correlated entries), so
    # there is no pointwise log-likelihood for az.loo to leave out
    return az.from_numpyro(mcmc, log_likelihood=False)
