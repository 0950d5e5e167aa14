r"""Reader of the regression release: the noisy sufficient statistics :math:`Z^\top Z` and their noise.

``Z = [1, X, y]`` (the intercept column when the release has one). The release holds the unique
entries of :math:`W^\top W` with ``W = (Z - s) / b`` column by column (``s`` the public mid-points of
the columns' ranges, ``b`` their half-widths; 0 and 1 for the intercept); this reader returns them in
the units of the shifted :math:`Z' = Z - s`: :math:`(Z'^\top Z')_{jl} = b_j b_l (W^\top W)_{jl}`, with
the noise scale multiplied alike, and the public entry :math:`(Z'^\top Z')_{00} = n` exact (scale 0).
The noise stays independent across entries only in these units (the moments of ``Z`` itself,
:math:`B^\top Z'^\top Z' B` with :math:`B = I + e_0 s^\top`, mix them), so the likelihood reads the
shifted moments and the shift (:func:`noiseaware._core._regression.centred_parameters`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import NoiseawareValueError
from ._record import ReleaseRecord, as_release

__all__ = ["RegressionStatistics", "read_regression"]

_INTERCEPT = "(intercept)"


@dataclass(frozen=True)
class RegressionStatistics:
    r"""The noisy :math:`Z^\top Z` of a regression release and the law of its noise.

    Attributes
    ----------
    n : int
        Number of records (public).
    columns : tuple of str
        ``Z``'s columns in order: ``"(intercept)"`` first if ``intercept``, the predictors, the response last.
    response : str
        The response's name.
    intercept : bool
        Whether ``Z`` has the constant column of ones.
    family : str
        Noise family of the released entries: ``"gaussian"`` or ``"laplace"``.
    moments : ndarray, shape (k, k)
        Symmetric noisy :math:`Z'^\top Z'` of the shifted columns :math:`Z' = Z - s` (``shift``), float64;
        the public entry ``(0, 0) = n`` exact with an intercept.
    scale : ndarray, shape (k, k)
        Symmetric per-entry noise scale (Gaussian sigma or Laplace ``b``) of ``moments``; 0.0 marks a
        public exact entry. The noise is independent across entries ``j >= l`` (the upper triangle
        mirrors the lower).
    method : str
        ``"ssp"``, ``"adassp"`` or ``"pace_ggm"``.
    bounds : ndarray, shape (k,), optional
        The public half-width of each column's range (1.0 for the intercept): :math:`|z_j - s_j| \le b_j`.
    shift : ndarray, shape (k,), optional
        The public mid-point :math:`s_j` of each column's range (0.0 for the intercept; all 0 for a release
        of symmetric bounds, and for a record without ``metadata.shift``).
    """

    n: int
    columns: tuple[str, ...]
    response: str
    intercept: bool
    family: str
    moments: np.ndarray
    scale: np.ndarray
    method: str
    bounds: np.ndarray | None = None
    shift: np.ndarray | None = None

    @property
    def predictors(self) -> tuple[str, ...]:
        """The design's columns (intercept included), every column but the response."""
        return self.columns[:-1]


def _symmetric(k: int, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = np.zeros((k, k), dtype=np.float64)
    out[rows, cols] = values
    out[cols, rows] = values
    return out


def read_regression(release: ReleaseRecord) -> RegressionStatistics:
    r"""Check and read a ``"regression"`` release of method ``"ssp"`` or ``"adassp"``.

    The release was checked on construction or load against its schema (sensitivities, shapes,
    labels, bounds, budgets); this reader maps it to :class:`RegressionStatistics`. For
    ``"adassp"`` the sufficient statistics are read and the minimum-eigenvalue component (used only
    for the point estimate's regularisation) is left aside: a likelihood of the statistics alone is
    exact.

    Raises
    ------
    NoiseawareTypeError
        ``release`` is not a :class:`~noiseaware.Release`.
    NoiseawareValueError
        Not a ``"regression"`` release, or one of method ``"pace_ggm"``: its entries of
        :math:`W^\top W` were chosen adaptively (exponential mechanism) and only some are measured,
        so their noise is not a fixed, independent law over all entries; release with
        ``method="ssp"`` or ``method="adassp"`` for a noise-aware posterior.

    Examples
    --------
    >>> import numpy as np, noiseaware as na
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, size=(500, 2))
    >>> data = np.column_stack([x, np.clip(x @ [0.5, -0.3] + 0.1 * rng.normal(size=500), -1, 1)])
    >>> rel = na.privatize(data, statistic="regression", response="x2", bound=1.0, rho=1.0, rng=rng)
    >>> st = read_regression(rel)
    >>> st.columns, float(st.moments[0, 0]), float(st.scale[0, 0])
    (('(intercept)', 'x0', 'x1', 'x2'), 500.0, 0.0)
    """
    owner = "read_regression"
    rel = as_release(owner, release)
    if rel.statistic != "regression":
        raise NoiseawareValueError(f"{owner}: release must be a 'regression' release; got statistic={rel.statistic!r}.")
    meta = rel.metadata
    method = str(meta["method"])
    if method == "pace_ggm":
        raise NoiseawareValueError(
            f"{owner}: release must hold every entry of Z^T Z with a fixed noise law; got method='pace_ggm' (its "
            "entries were selected adaptively and only some measured). Release with method='ssp' or "
            "method='adassp' for a noise-aware posterior; pace_ggm_regression gives this release's point estimate."
        )
    cols = tuple(str(c) for c in meta["columns"])
    intercept = bool(meta["intercept"])
    k = len(cols)
    n = int(rel.n)  # type: ignore[arg-type]
    b = np.asarray(meta["bounds"], dtype=np.float64)
    shift = np.asarray(meta.get("shift", [0.0] * k), dtype=np.float64)
    pairs = [(j, m) for j in range(k) for m in range(j + 1) if not (intercept and j == 0)]
    rows = np.array([j for j, _ in pairs], dtype=np.int64)
    cidx = np.array([m for _, m in pairs], dtype=np.int64)
    unit = b[rows] * b[cidx]
    mech = rel.mechanism
    per = float(mech.sigma if mech.family == "gaussian" else mech.scale)
    moments = _symmetric(k, rows, cidx, rel.values.astype(np.float64) * unit)
    scale = _symmetric(k, rows, cidx, per * unit)
    if intercept:
        moments[0, 0] = float(n)
    moments.setflags(write=False)
    scale.setflags(write=False)
    b.setflags(write=False)
    shift.setflags(write=False)
    return RegressionStatistics(
        n=n,
        columns=cols,
        response=str(meta["response"]),
        intercept=intercept,
        family=str(mech.family),
        moments=moments,
        scale=scale,
        method=method,
        bounds=b,
        shift=shift,
    )
