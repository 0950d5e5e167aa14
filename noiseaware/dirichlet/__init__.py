"""Compositional data under differential privacy (seed 004): Dirichlet routes from a ``dirichlet_logmean`` release."""

__all__: list[str] = []
