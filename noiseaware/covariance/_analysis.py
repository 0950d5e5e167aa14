r"""Analyst side of the covariance releases: measurements, reconstruction, metrics (seed 002)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core._maxent import reconstruct_entries
from ..exceptions import NoiseawareTypeError, NoiseawareValueError
from ..release import Release

__all__ = [
    "Measurements",
    "combine_measurements",
    "frobenius_error",
    "mahalanobis_error",
    "measurements",
    "reconstruct",
    "ssp_estimate",
]


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
        Precision-weighted mean of the measurements of each entry (seed 002 Prop. 4.2).
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
    r"""Precision-weighted combination of repeated measurements (seed 002 Prop. 4.2, App. B.3).

    For each distinct entry, :math:`\lambda = \sum_t \sigma_t^{-2}` and
    :math:`y = \lambda^{-1}\sum_t \sigma_t^{-2} z_t`; then
    :math:`\sum_t (W - z_t)^2/(2\sigma_t^2) = \lambda (W - y)^2/2 + C`. (The seed's Prop. 4.2 calls
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


def _check_release(owner: str, release: Any, allowed: tuple[str, ...]) -> Release:
    if not isinstance(release, Release):
        raise NoiseawareTypeError(f"{owner}: release must be a noiseaware Release; got {type(release).__name__}.")
    if release.statistic not in allowed:
        raise NoiseawareValueError(
            f"{owner}: release must be a {' or '.join(repr(a) for a in allowed)} release; "
            f"got statistic={release.statistic!r}."
        )
    return release


def measurements(release: Release) -> Measurements:
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
    rel = _check_release("measurements", release, ("pace_ggm", "second_moment"))
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


def reconstruct(release: Release, *, use_components: bool = True) -> np.ndarray:
    r"""The maximum-entropy estimate :math:`\hat\Sigma` from a release (seed 002 eq. 2, Algorithm 4).

    For a ``"pace_ggm"`` release this is the curator's final :math:`\hat\Sigma^{(t)}` up to the
    solver's tolerance (post-processing; the curator re-solved block by block with warm starts,
    here all blocks are solved once from the final measurements). For ``"second_moment"`` it is
    the maximum-entropy PSD fit of all entries (the SSP estimate made PSD).

    Parameters
    ----------
    release : Release
        A ``"pace_ggm"`` or ``"second_moment"`` release.
    use_components : bool
        Solve each connected component of the measurement graph separately (default; exact, seed
        002 §4.4) or the whole matrix as one block (App. F ablation).

    Returns
    -------
    ndarray, shape (d, d)

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=(500, 4))
    >>> rel = na.privatize(x, statistic="pace_ggm", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    >>> s = reconstruct(rel)
    >>> s.shape, bool(np.all(np.linalg.eigvalsh(s) >= -1e-12))
    ((4, 4), True)
    """
    m = measurements(release)
    return reconstruct_entries(m.d, m.pairs, m.y, m.precision, use_components=use_components)


def ssp_estimate(release: Release, *, psd: bool = False) -> np.ndarray:
    """The SSP estimate: the noisy entries of a ``"second_moment"`` release as a symmetric matrix.

    Parameters
    ----------
    release : Release
        A ``"second_moment"`` release.
    psd : bool
        Clip negative eigenvalues at 0 (the projection onto the PSD cone in Frobenius norm).

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> x = np.random.default_rng(0).uniform(-1, 1, size=(500, 3))
    >>> rel = na.privatize(x, statistic="second_moment", rho=1.0, bound=1.0, rng=np.random.default_rng(1))
    >>> s = ssp_estimate(rel)
    >>> bool(np.allclose(s, s.T))
    True
    """
    rel = _check_release("ssp_estimate", release, ("second_moment",))
    d = int(rel.metadata["d"])
    out = np.zeros((d, d))
    out[np.tril_indices(d)] = rel.values  # row-major lower triangle = ENTRY_ORDER
    out = out + np.tril(out, -1).T
    if psd:
        w, u = np.linalg.eigh(out)
        out = (u * np.maximum(w, 0.0)) @ u.T
    return out


def _square(owner: str, name: str, a: Any) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or not np.all(np.isfinite(arr)):
        raise NoiseawareValueError(f"{owner}: {name} must be a finite square matrix; got shape {arr.shape}.")
    return arr


def frobenius_error(estimate: Any, truth: Any) -> float:
    r""":math:`\|\hat\Sigma - \Sigma\|_F` (seed 002 §5, error metrics).

    Examples
    --------
    >>> frobenius_error([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 2.0]])
    1.0
    """
    e, t = _square("frobenius_error", "estimate", estimate), _square("frobenius_error", "truth", truth)
    return float(np.linalg.norm(e - t))


def mahalanobis_error(estimate: Any, truth: Any) -> float:
    r""":math:`\|\Sigma^{-1/2}\hat\Sigma\Sigma^{-1/2} - I\|_F` (seed 002 §5); ``truth`` must be positive definite.

    Raises
    ------
    NoiseawareValueError
        ``truth`` is not positive definite.

    Examples
    --------
    >>> mahalanobis_error([[2.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    1.0
    """
    e, t = _square("mahalanobis_error", "estimate", estimate), _square("mahalanobis_error", "truth", truth)
    w, u = np.linalg.eigh((t + t.T) / 2.0)
    if not np.all(w > 0):
        raise NoiseawareValueError(
            f"mahalanobis_error: truth must be positive definite; got smallest eigenvalue {float(w.min())!r}."
        )
    r = (u / np.sqrt(w)) @ u.T
    return float(np.linalg.norm(r @ e @ r - np.eye(t.shape[0])))
