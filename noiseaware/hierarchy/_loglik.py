r"""The pointwise log-likelihood of a hierarchy release: one term per released noisy measurement.

Given the leaf cell counts :math:`x` (one draw, real or integer), every noisy measurement
:math:`y_m` of level :math:`l`, unit :math:`u` and query :math:`q` is an independent discrete
Gaussian draw around the unit's true count of that query,

.. math:: \log p(y_m \mid x) = \log \mathcal N_{\mathbb Z}\big(y_m;\ a_q^\top s_{lu}(x),\ \sigma_{lq}^2\big),

with :math:`s_{lu}(x)` the sums of the leaf cells below unit :math:`u` and :math:`a_q` the unit
vector of cell :math:`q` or the all-ones vector for ``"total"`` (Canonne, Kamath & Steinke (2020),
*The discrete Gaussian for differential privacy*; the record's measurement model,
:class:`~noiseaware.hierarchy.NoisyHierarchy`). The density is the noise-law registry's
(``NOISE_LAWS["discrete_gaussian"]``), evaluated in NumPy and float64; the exact totals are not
measurements and have no term. The terms sum to the log-likelihood of :func:`~noiseaware.hierarchy.model`
at the same counts, so :func:`~noiseaware.hierarchy.fit` stores them as its ``log_likelihood`` group
for ``az.loo`` / ``az.compare`` (leave-one-measurement-out, conditional on the latent counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _validation as v
from .._validation import owned
from ..exceptions import NoiseawareValueError

if TYPE_CHECKING:
    from ._data import ModelData
    from ._record import NoisyHierarchy

__all__ = ["measurement_labels", "pointwise_log_likelihood"]

#: Leaf cells times draws aggregated at once (a block of about 32 MiB of float64 per level table).
_BLOCK = 1 << 22


def _where(data: ModelData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(level, unit, query)`` of each measurement: the positions ``data.index`` unflattened."""
    q = data.n_cells + 1
    sizes = np.asarray(data.n_units, dtype=np.int64) * q
    start = np.concatenate([[0], np.cumsum(sizes)])
    level = np.searchsorted(start, data.index, side="right") - 1
    rest = data.index - start[level]
    return level, rest // q, rest % q


def measurement_labels(release: NoisyHierarchy, data: ModelData) -> dict[str, np.ndarray]:
    """The level, unit and query names of each measurement of ``data`` (from ``release``), and one label each.

    Returns ``{"measurement": "level/unit/query", "level": ..., "unit": ..., "query": ...}``, arrays of
    str of length ``len(data.y)`` in the order of :func:`pointwise_log_likelihood`'s last axis.
    """
    level, unit, query = _where(data)
    lev = np.array([release.levels[i] for i in level], dtype=str)
    un = np.array([release.units[i][j] for i, j in zip(level, unit, strict=True)], dtype=str)
    qu = np.array([release.queries[k] for k in query], dtype=str)
    labels = np.array([f"{a}/{b}/{c}" for a, b, c in zip(lev, un, qu, strict=True)], dtype=str)
    return {"measurement": labels, "level": lev, "unit": un, "query": qu}


@owned("hierarchy.pointwise_log_likelihood")
def pointwise_log_likelihood(data: ModelData, counts: Any) -> np.ndarray:
    r"""Log-likelihood of each released noisy measurement given leaf cell counts, for any number of draws.

    For each draw of the leaf cell counts :math:`x` (shape ``(leaves, cells)``) and each noisy
    measurement :math:`m` (level :math:`l`, unit :math:`u`, query :math:`q`, in the order of
    ``data.y``):

    .. math:: \ell_m(x) = -\frac{(y_m - \mu_m(x))^2}{2\sigma_m^2} - \log Z(\sigma_m), \qquad
              \mu_m(x) = \sum_{t \le u} \big[x_{t q}\ \text{or}\ \textstyle\sum_c x_{tc}\ \text{for the total}\big],

    the discrete Gaussian log-pmf of the noise-law registry (:math:`Z(\sigma) = \sum_{k \in \mathbb Z}
    e^{-k^2/(2\sigma^2)}`; Canonne, Kamath & Steinke (2020), *The discrete Gaussian for differential
    privacy*), the sum over the leaves :math:`t` below unit :math:`u`. Exact at integer counts (the
    integer model) and the relaxed model's smooth interpolation at real counts
    (:func:`~noiseaware.hierarchy.model`), so it serves both. Vectorized over draws (in blocks of
    bounded memory), float64.

    Parameters
    ----------
    data : ModelData
        From :func:`~noiseaware.hierarchy.model_data`.
    counts : array_like, shape (..., leaves, cells)
        Leaf cell counts (real or integer), e.g. the posterior draws ``(chain, draw, leaves, cells)``.

    Returns
    -------
    numpy.ndarray of float64, shape (..., measurements)
        One term per released noisy measurement; ``sum(axis=-1)`` is the whole log-likelihood.

    Raises
    ------
    NoiseawareValueError
        If ``counts`` does not end in ``(leaves, cells)`` of ``data``, or holds NaN or inf.
    NoiseawareTypeError
        If ``counts`` is not numeric.

    Examples
    --------
    >>> import numpy as np
    >>> from noiseaware import hierarchy
    >>> sim = hierarchy.synthetic_nmf(1, 2, 2, rng=0)
    >>> data = hierarchy.model_data(sim.release)
    >>> ll = hierarchy.pointwise_log_likelihood(data, np.stack([sim.truth, sim.truth]))
    >>> ll.shape == (2, sim.release.n_measurements), bool(np.all(ll < 0))
    (True, True)
    """
    from .._core._backend import get_backend
    from .._core._noise import NOISE_LAWS

    x = np.asarray(v.numeric_array("counts", counts, booleans=False), dtype=np.float64)
    n_leaf, n_cell = data.n_units[-1], data.n_cells
    if x.ndim < 2 or x.shape[-2:] != (n_leaf, n_cell):
        raise NoiseawareValueError(v.message(
            "counts", f"must have shape (..., {n_leaf}, {n_cell}) (leaves, cells of the release)", x.shape,
            "Pass the leaf cell counts with their leaf and cell axes last.",
        ))
    if not np.all(np.isfinite(x)):
        raise NoiseawareValueError(v.message("counts", "must be finite", "an array with NaN or inf",
                                             "Check the sampler's output (divergences, a failed chain)."))
    lead = x.shape[:-2]
    flat = x.reshape(-1, n_leaf, n_cell)
    level, unit, query = _where(data)
    ancestors = [data.ancestor(lev) for lev in range(len(data.n_units))]
    law, bk = NOISE_LAWS["discrete_gaussian"], get_backend("numpy")
    out = np.empty((flat.shape[0], data.y.size), dtype=np.float64)
    step = max(1, _BLOCK // max(1, n_leaf * n_cell))
    for lo in range(0, flat.shape[0], step):
        block = flat[lo:lo + step]
        loc = np.empty((block.shape[0], data.y.size), dtype=np.float64)
        for lev, anc in enumerate(ancestors):
            at = level == lev
            if not at.any():
                continue
            cells = np.zeros((block.shape[0], data.n_units[lev], n_cell), dtype=np.float64)
            np.add.at(cells, (slice(None), anc), block)  # the unit's sums of the leaf cells below it
            table = np.concatenate([cells.sum(axis=2, keepdims=True), cells], axis=2)
            loc[:, at] = table[:, unit[at], query[at]]
        out[lo:lo + step] = law.logpdf(bk, data.y, loc, data.sigma)
    return out.reshape(*lead, data.y.size)
