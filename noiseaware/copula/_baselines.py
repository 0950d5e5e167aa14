"""Baseline estimators compared with Bayes-NA in seed 000 §5."""

from __future__ import annotations

import numpy as np

from ..exceptions import NoiseawareValueError
from ..release import Release

__all__ = ["li_kendall"]


def li_kendall(release: Release, *, floor: float = 1e-6) -> np.ndarray:
    r"""Li-Kendall estimate of the copula correlation (seed ``003_0df7ba8143acea66.txt`` Algorithm 5).

    From a ``"kendall_pairs"`` release: :math:`\tilde P = \sin(\pi \tilde\tau / 2)` with unit
    diagonal; if it is not positive definite, negative eigenvalues are replaced by ``floor``
    (Rousseeuw & Molenberghs' eigenvalue method, Algorithm 5 step 3) and the result rescaled to
    a unit diagonal.

    Raises
    ------
    ValueError
        If the release is not a ``"kendall_pairs"`` release.
    """
    if not isinstance(release, Release) or release.statistic != "kendall_pairs":
        raise NoiseawareValueError("li_kendall: needs a 'kendall_pairs' Release (from privatize).")
    p = int(release.metadata["p"])
    tau = np.clip(release.values.astype(np.float64), -1.0, 1.0)
    P = np.eye(p)
    for (j, k), t in zip(release.metadata["pairs"], tau.tolist(), strict=True):
        P[j, k] = P[k, j] = np.sin(np.pi * t / 2.0)
    w, q = np.linalg.eigh(P)
    if w.min() <= 0:
        P = (q * np.maximum(w, floor)) @ q.T
        d = 1.0 / np.sqrt(np.diag(P))
        P = P * d[:, None] * d[None, :]
        np.fill_diagonal(P, 1.0)
    return P
