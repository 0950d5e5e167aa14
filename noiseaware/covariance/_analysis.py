r"""Analyst side of the covariance releases: measurements, reconstruction, metrics (Ferrando et al. 2026)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core._covariance_release import Measurements, _check_release, combine_measurements, measurements
from .._core._maxent import reconstruct_entries
from .._validation import current_owner, owned
from ..exceptions import NoiseawareValueError
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


def reconstruct(release: Release, *, use_components: bool = True) -> np.ndarray:
    r"""The maximum-entropy estimate :math:`\hat\Sigma` from a release (Ferrando et al. 2026, eq. 2, Algorithm 4).

    For a ``"pace_ggm"`` release this is the curator's final :math:`\hat\Sigma^{(t)}` up to the
    solver's tolerance (post-processing; the curator re-solved block by block with warm starts,
    here all blocks are solved once from the final measurements). For ``"second_moment"`` it is
    the maximum-entropy PSD fit of all entries (the SSP estimate made PSD).

    Parameters
    ----------
    release : Release
        A ``"pace_ggm"`` or ``"second_moment"`` release.
    use_components : bool
        Solve each connected component of the measurement graph separately (default; exact, Ferrando, Fuentes,
        Mullins, Musco & Sheldon (2026), *Private Adaptive Covariance Estimation via Gaussian Graphical Models*, §4.4)
        or the whole matrix as one block (App. F ablation).

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


@owned("ssp_estimate")
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
    rel = _check_release(release, ("second_moment",))
    d = int(rel.metadata["d"])
    out = np.zeros((d, d))
    out[np.tril_indices(d)] = rel.values  # row-major lower triangle = ENTRY_ORDER
    out = out + np.tril(out, -1).T
    if psd:
        w, u = np.linalg.eigh(out)
        out = (u * np.maximum(w, 0.0)) @ u.T
    return out


def _square(name: str, a: Any) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or not np.all(np.isfinite(arr)):
        raise NoiseawareValueError(f"{current_owner()}: {name} must be a finite square matrix; got shape {arr.shape}.")
    return arr


@owned("frobenius_error")
def frobenius_error(estimate: Any, truth: Any) -> float:
    r""":math:`\|\hat\Sigma - \Sigma\|_F` (Ferrando et al. 2026, §5, error metrics).

    Examples
    --------
    >>> frobenius_error([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 2.0]])
    1.0
    """
    e, t = _square("estimate", estimate), _square("truth", truth)
    return float(np.linalg.norm(e - t))


@owned("mahalanobis_error")
def mahalanobis_error(estimate: Any, truth: Any) -> float:
    r""":math:`\|\Sigma^{-1/2}\hat\Sigma\Sigma^{-1/2} - I\|_F` (Ferrando et al. 2026, §5); ``truth`` positive definite.

    Raises
    ------
    NoiseawareValueError
        ``truth`` is not positive definite.

    Examples
    --------
    >>> mahalanobis_error([[2.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    1.0
    """
    e, t = _square("estimate", estimate), _square("truth", truth)
    w, u = np.linalg.eigh((t + t.T) / 2.0)
    if not np.all(w > 0):
        raise NoiseawareValueError(
            f"mahalanobis_error: truth must be positive definite; got smallest eigenvalue {float(w.min())!r}."
        )
    r = (u / np.sqrt(w)) @ u.T
    return float(np.linalg.norm(r @ e @ r - np.eye(t.shape[0])))
