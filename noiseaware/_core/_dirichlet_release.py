"""Read the parts of a ``dirichlet_logmean`` release (Guo et al. 2022, Algorithm 1) for the likelihoods.

Shared by both front ends and the workflows so that every route reads ``a``, ``n`` and the Laplace
scale from the record, never from a hand-typed copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import current_owner
from ..exceptions import NoiseawareValueError
from ._record import as_release

__all__ = ["LogMeanPart", "logmean_parts", "select_part"]


@dataclass(frozen=True)
class LogMeanPart:
    """One released :math:`S_L(D_l, a)` with what its likelihood needs.

    Attributes
    ----------
    s_l : numpy.ndarray, shape (d,)
        Noisy censored mean-log statistic (``values[l] / n_l``).
    n : int
        Records in this part.
    a : float
        Censoring threshold.
    scale : float
        Laplace scale of ``s_l``, ``-d log(a) / (n epsilon_1)``.
    epsilon_1 : float
        The budget of the Laplace step.
    """

    s_l: np.ndarray
    n: int
    a: float
    scale: float
    epsilon_1: float

    @property
    def d(self) -> int:
        """Number of parts of the composition."""
        return int(self.s_l.size)


def logmean_parts(release: Any) -> list[LogMeanPart]:
    """The one part (no split) or the two parts ``[D1, D2]`` of a ``dirichlet_logmean`` release.

    Raises
    ------
    TypeError, ValueError
        If ``release`` is not a :class:`~noiseaware.Release` of statistic ``dirichlet_logmean``
        with Laplace noise.
    """
    owner = current_owner()
    release = as_release(release)
    if release.statistic != "dirichlet_logmean":
        raise NoiseawareValueError(
            f"{owner}: the release's statistic must be 'dirichlet_logmean'; got statistic={release.statistic!r}."
        )
    if release.mechanism.family != "laplace":
        raise NoiseawareValueError(
            f"{owner}: the release's mechanism must be 'laplace'; got family={release.mechanism.family!r}."
        )
    meta = release.metadata
    a = float(meta["a"])
    n_parts = [int(m) for m in meta["n_parts"]]
    vals = np.asarray(release.values, dtype=np.float64).reshape(len(n_parts), -1)
    scale = float(release.mechanism.scale)  # type: ignore[attr-defined]
    eps1 = float(meta["epsilon_1"])
    return [LogMeanPart(vals[i] / m, m, a, scale / m, eps1) for i, m in enumerate(n_parts)]


def select_part(release: Any, part: int | None) -> LogMeanPart:
    """Part ``part`` (default: the last, i.e. ``D2`` of a split release, the whole data otherwise)."""
    parts = logmean_parts(release)
    if part is None:
        return parts[-1]
    if not isinstance(part, int) or isinstance(part, bool) or not -len(parts) <= part < len(parts):
        raise NoiseawareValueError(
            f"{current_owner()}: part must be an index into the release's {len(parts)} part(s); got part={part!r}."
        )
    return parts[part]
