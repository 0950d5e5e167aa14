"""Readers of a ``dpcopula`` release (Li et al. 2014): the noisy margins and the correlation estimate."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._domains import Domain
from .._validation import current_owner, owned
from ..exceptions import NoiseawareTypeError
from ..release import Release

__all__ = ['dpcopula_correlation', 'dpcopula_margins']

_OWNER = "synthesize"


# ----------------------------------------------------------------------------- release readers
def _check(release: Any) -> Release:
    owner = current_owner()
    if not isinstance(release, Release) or release.statistic != "dpcopula":
        raise NoiseawareTypeError(
            f"{owner}: needs a 'dpcopula' Release (privatize(..., statistic='dpcopula'), or 'dpcopula_hybrid' "
            "with hybrid=...) or a fit_dpcopula result; "
            f"got {type(release).__name__}"
            + (f" of statistic {release.statistic!r}" if isinstance(release, Release) else "")
            + "."
        )
    return release


def _domains(release: Release) -> list[Domain]:
    return [Domain.from_dict(d, f"metadata.domains[{j}]") for j, d in enumerate(release.metadata["domains"])]


def _split(release: Release) -> list[np.ndarray]:
    bins = [int(b) for b in release.metadata["bins"]]
    return np.split(release.values.astype(np.int64), np.cumsum(bins)[:-1])


@owned("dpcopula_margins")
def dpcopula_margins(release: Release) -> list[np.ndarray]:
    """Cell probabilities of each margin: the noisy histogram clipped at 0, normalised (uniform if all 0).

    Examples
    --------
    >>> import numpy as np, noiseaware as na, pandas as pd
    >>> df = pd.DataFrame({"a": [0, 1, 1, 2] * 50, "b": [1, 0, 2, 2] * 50})
    >>> rel = na.privatize(df, statistic="dpcopula", epsilon=5.0, domains={"a": range(3), "b": range(3)},
    ...                    rng=np.random.default_rng(0))
    >>> [p.round(1).tolist() for p in dpcopula_margins(rel)]
    [[0.3, 0.5, 0.3], [0.2, 0.2, 0.5]]
    """
    rel = _check(release)
    out = []
    for h in _split(rel):
        c = np.maximum(h, 0).astype(np.float64)
        out.append(c / c.sum() if c.sum() > 0 else np.full(c.size, 1.0 / c.size))
    return out


def _eigen_repair(P: np.ndarray, floor: float = 1e-6) -> np.ndarray:
    """Algorithm 5 step 3: negative eigenvalues to ``floor``, rescaled to a unit diagonal."""
    P = (P + P.T) / 2.0
    np.fill_diagonal(P, 1.0)
    w, q = np.linalg.eigh(P)
    if w.min() <= floor:
        P = (q * np.maximum(w, floor)) @ q.T
        d = 1.0 / np.sqrt(np.diag(P))
        P = P * d[:, None] * d[None, :]
        np.fill_diagonal(P, 1.0)
    return P


@owned("dpcopula_correlation")
def dpcopula_correlation(release: Release) -> np.ndarray:
    r"""Point estimate :math:`\tilde P` of the copula correlation from a ``dpcopula`` release.

    ``kendall``: :func:`~noiseaware.copula.li_kendall` (Algorithm 5, :math:`\sin(\pi\tilde\tau/2)`
    and the eigenvalue repair); ``mle``: the noisy averages clipped to ``[-1, 1]`` and repaired the
    same way; ``median``: the MLE-NN of Wang, Feldman & Reiter (2026), *Differentially Private Bayesian Inference
    for Gaussian Copula Correlations* (:func:`~noiseaware.copula.mle_nn`).

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).multivariate_normal([0, 0], [[1, .7], [.7, 1]], size=3000)
    >>> rel = na.privatize(x, statistic="dpcopula", epsilon=4.0, domains=[{"lower": -5.0, "upper": 5.0,
    ...                    "bins": 40}] * 2, rng=np.random.default_rng(1))
    >>> bool(abs(dpcopula_correlation(rel)[0, 1] - 0.7) < 0.05)
    True
    """
    rel = _check(release)
    comp = rel.components[0]
    corr = rel.metadata["correlation"]
    if corr == "kendall":
        from ._baselines import li_kendall

        return li_kendall(comp)
    if corr == "median":
        from ._mle import mle_nn

        return mle_nn(comp).R
    m = int(comp.metadata["p"])
    P = np.eye(m)
    for (j, k), r in zip(comp.metadata["pairs"], np.clip(comp.values, -1.0, 1.0).tolist(), strict=True):
        P[j, k] = P[k, j] = r
    return _eigen_repair(P)
