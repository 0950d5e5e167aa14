"""Chains spread over the local JAX devices (one XLA host device per core; ``noiseaware.config``).

Private. The compiled samplers (``copula.fit``, ``dirichlet.dpmcmc``) cut their chains into one group per
device with ``jax.shard_map``: the groups run at the same time with no communication, and every chain's
draws depend only on its own key, so a seed gives the same draws on any number of devices.
"""

from __future__ import annotations

__all__ = ["chain_groups"]


def chain_groups(chains: int) -> int:
    """How many devices the chains are spread over: the most local devices that divide ``chains``.

    Examples
    --------
    >>> chain_groups(1)
    1
    """
    import jax

    ndev = min(jax.local_device_count(), chains)
    return max(g for g in range(1, ndev + 1) if chains % g == 0)
