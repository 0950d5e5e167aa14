r"""Readers of the covariance releases (Ferrando et al. 2026): the Gaussian measurements and the constant parameters.

The analyst side's view of a ``"pace_ggm"`` or ``"second_moment"`` release, read by the
``NoisyCovarianceEntries`` spec (:mod:`._specs`), both front ends and :mod:`noiseaware.covariance`
(which re-exports :class:`Measurements`, :func:`combine_measurements` and :func:`measurements`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import current_owner, owned
from ..exceptions import NoiseawareValueError
from ._record import ReleaseRecord, as_release

__all__ = ["Measurements", "combine_measurements", "entry_params", "measurements"]


@dataclass(frozen=True)
class Measurements:
    r"""The Gaussian measurements of entries of :math:`S = X^\top X / n` a release holds.

    Attributes
    ----------
    d, n : int
        Dimension and number of records.
    bound : float
        The coordinate-wise bound ``B``.
    columns : list of str
        Column names.
    pairs : ndarray of int, shape (m, 2)
        Distinct measured entries ``(j, k)``, ``j >= k``, in order of first measurement.
    y : ndarray, shape (m,)
        Precision-weighted mean of the measurements of each entry (Ferrando, Fuentes, Mullins, Musco & Sheldon (2026),
        *Private Adaptive Covariance Estimation via Gaussian Graphical Models*, Prop. 4.2).
    precision : ndarray, shape (m,)
        Summed precisions :math:`\lambda_{jk} = \sum_t \sigma_t^{-2}`.
    raw_pairs, raw_values, raw_sigma : ndarray
        Every single measurement, in release order (diagonal first, then the rounds).
    center : ndarray or None
        Centred releases (``center=True``): the point :math:`c = \mathrm{clip}(z, -B, B)` the
        second moment was taken about; ``None`` for uncentred releases.
    mean_values : ndarray or None
        The released noisy mean :math:`z = \bar x + N(0, \sigma_m^2 I)` (before clipping).
    mean_sigma : float or None
        Its noise standard deviation :math:`\sigma_m`.
    data_bound : float or None
        The bound ``B`` of the raw data (``bound`` is then the centred data's bound
        :math:`B + \max_j |c_j| \le 2B`).
    """

    d: int
    n: int
    bound: float
    columns: list[str]
    pairs: np.ndarray
    y: np.ndarray
    precision: np.ndarray
    raw_pairs: np.ndarray
    raw_values: np.ndarray
    raw_sigma: np.ndarray
    center: np.ndarray | None = None
    mean_values: np.ndarray | None = None
    mean_sigma: float | None = None
    data_bound: float | None = None

    @property
    def sigma(self) -> np.ndarray:
        """Noise standard deviation of each combined measurement, ``precision ** -0.5``."""
        return 1.0 / np.sqrt(self.precision)


def combine_measurements(pairs: Any, values: Any, sigma: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Precision-weighted combination of repeated measurements (Ferrando et al. 2026, Prop. 4.2, App. B.3).

    For each distinct entry, :math:`\lambda = \sum_t \sigma_t^{-2}` and
    :math:`y = \lambda^{-1}\sum_t \sigma_t^{-2} z_t`; then
    :math:`\sum_t (W - z_t)^2/(2\sigma_t^2) = \lambda (W - y)^2/2 + C`. (The paper's Prop. 4.2 calls
    this sum a log-likelihood; it is the *negative* log-likelihood up to a constant.)

    Parameters
    ----------
    pairs : array of int, shape (T, 2)
        The entry ``(j, k)`` of each measurement.
    values : array, shape (T,)
        The measurements ``z_t``.
    sigma : array, shape (T,)
        Their noise standard deviations.

    Returns
    -------
    (pairs, y, precision) : distinct entries in order of first appearance.

    Raises
    ------
    NoiseawareValueError
        Shapes disagree or a sigma is not positive.

    Examples
    --------
    >>> p, y, lam = combine_measurements([[0, 0], [0, 0]], [1.0, 3.0], [1.0, 1.0])
    >>> p.tolist(), y.tolist(), lam.tolist()
    ([[0, 0]], [2.0], [2.0])
    """
    P = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    z = np.asarray(values, dtype=np.float64).ravel()
    s = np.asarray(sigma, dtype=np.float64).ravel()
    if not (P.shape[0] == z.size == s.size):
        raise NoiseawareValueError(
            f"combine_measurements: pairs, values and sigma must have one row each per measurement; got "
            f"{P.shape[0]}, {z.size}, {s.size}."
        )
    if np.any(~(s > 0)):
        raise NoiseawareValueError("combine_measurements: sigma must be > 0 for every measurement.")
    order: dict[tuple[int, int], int] = {}
    for j, k in P:
        order.setdefault((int(j), int(k)), len(order))
    idx = np.array([order[(int(j), int(k))] for j, k in P], dtype=np.int64)
    w = 1.0 / s**2
    lam = np.bincount(idx, weights=w, minlength=len(order))
    y = np.bincount(idx, weights=w * z, minlength=len(order)) / lam
    return np.array(list(order), dtype=np.int64).reshape(-1, 2), y, lam


def _check_release(release: Any, allowed: tuple[str, ...]) -> ReleaseRecord:
    release = as_release(release)
    if release.statistic not in allowed:
        raise NoiseawareValueError(
            f"{current_owner()}: release must be a {' or '.join(repr(a) for a in allowed)} release; "
            f"got statistic={release.statistic!r}."
        )
    return release


@owned("measurements")
def measurements(release: ReleaseRecord) -> Measurements:
    """Every Gaussian measurement of a ``"pace_ggm"`` or ``"second_moment"`` release, combined per entry.

    Selections are not measurements: the rounds' selected indices are read only to know which
    entry each measurement is of.

    Raises
    ------
    NoiseawareTypeError, NoiseawareValueError
        Not a covariance release.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=(200, 3))
    >>> rel = na.privatize(x, statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    >>> m = measurements(rel)
    >>> m.pairs.shape, bool(np.all(m.precision == m.precision[0]))
    ((6, 2), True)
    """
    rel = _check_release(release, ("pace_ggm", "second_moment"))
    meta = rel.metadata
    d = int(meta["d"])
    sig = float(rel.mechanism.sigma)  # type: ignore[attr-defined]
    if rel.statistic == "second_moment":
        raw_p = np.array([(j, k) for j in range(d) for k in range(j + 1)], dtype=np.int64)
        raw_z = rel.values.astype(np.float64)
        raw_s = np.full(raw_z.size, sig)
    else:
        rounds = meta["rounds"]
        raw_p = np.array([(j, j) for j in range(d)] + [tuple(r["entry"]) for r in rounds], dtype=np.int64)
        raw_z = np.concatenate([rel.values.astype(np.float64), [float(r["measurement"]) for r in rounds]])
        raw_s = np.concatenate([np.full(d, sig), [float(r["sigma"]) for r in rounds]])
    pairs, y, lam = combine_measurements(raw_p, raw_z, raw_s)
    centre: dict[str, Any] = {}
    if meta.get("center", False):
        mean_rel = rel.components[-1]
        centre = {
            "center": np.asarray(meta["mean"], dtype=np.float64),
            "mean_values": mean_rel.values.astype(np.float64),
            "mean_sigma": float(mean_rel.mechanism.sigma),  # type: ignore[attr-defined]
            "data_bound": float(meta["data_bound"]),
        }
    return Measurements(
        d=d,
        n=int(rel.n),  # type: ignore[arg-type]
        bound=float(meta["bound"]),
        columns=list(meta["columns"]),
        pairs=pairs,
        y=y,
        precision=lam,
        raw_pairs=raw_p,
        raw_values=raw_z,
        raw_sigma=raw_s,
        **centre,
    )


def entry_params(
    n: Any, pairs: Any, precision: Any, d: int
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """``n``, row and column indices, and precisions, checked against dimension ``d``."""
    owner = current_owner()
    nn = v.integer("n", n, minimum=1)
    P = v.integer_array("pairs", pairs)
    if P.ndim != 2 or P.shape[1] != 2 or P.shape[0] < 1 or np.any(P < 0) or (d and np.any(P >= d)):
        raise NoiseawareValueError(
            f"{owner}: pairs must be an (m, 2) array of entries (j, k) with 0 <= j, k < d = {d}; "
            f"got shape {P.shape}."
        )
    if len({(int(a), int(b)) for a, b in P}) != P.shape[0]:
        raise NoiseawareValueError(f"{owner}: pairs must list each entry once (combine repeats first).")
    lam = v.finite_array("precision", precision, remedy="Pass a finite precision matrix.").reshape(-1)
    if lam.size != P.shape[0] or np.any(lam <= 0):
        raise NoiseawareValueError(
            f"{owner}: precision must hold one value > 0 per pair ({P.shape[0]}); got {lam.size} value(s), "
            f"minimum {float(lam.min()) if lam.size else None!r}."
        )
    return nn, P[:, 0].copy(), P[:, 1].copy(), lam
