r"""Reader of the regression release: the noisy sufficient statistics :math:`Z^\top Z` and their noise.

``Z = [1, X, y]`` (the intercept column when the release has one). The release holds the unique
entries of :math:`W^\top W` with ``W = (Z - s) / b`` column by column (``s`` the public mid-points of
the columns' ranges, ``b`` their half-widths; 0 and 1 for the intercept); this reader returns them in
the units of the shifted :math:`Z' = Z - s`: :math:`(Z'^\top Z')_{jl} = b_j b_l (W^\top W)_{jl}`, with
the noise scale multiplied alike, and the public entry :math:`(Z'^\top Z')_{00} = n` exact (scale 0).
The noise stays independent across entries only in these units (the moments of ``Z`` itself,
:math:`B^\top Z'^\top Z' B` with :math:`B = I + e_0 s^\top`, mix them), so the likelihood reads the
shifted moments and the shift (:func:`noiseaware._core._regression.centred_parameters`).

The release's metadata is declared once, here, by :class:`RegressionMetadata`: the curator's writer
(:mod:`noiseaware._privatize._regression`) builds it and stores :meth:`RegressionMetadata.to_dict`, the
loader's schema (:mod:`noiseaware._statistics._regression`) checks a record by building it with
:meth:`RegressionMetadata.from_dict` (each field by its field type of :mod:`noiseaware._core._fields`),
and the readers (:func:`read_regression`, the estimators of :mod:`noiseaware.regression`) read its
attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from .._validation import owned
from ..exceptions import NoiseawareValueError
from ._fields import (
    BOOL,
    ENTRY_ORDER,
    NAMES,
    OPEN_UNIT,
    POSITIVE,
    STR,
    STR_LIST,
    FieldType,
    Float,
    ListOf,
    OneOf,
    read_fields,
)
from ._record import ReleaseRecord, as_release

__all__ = ["INTERCEPT", "METHODS", "RegressionMetadata", "RegressionStatistics", "read_regression"]

#: The name of the constant intercept column in a regression release.
INTERCEPT = "(intercept)"

#: The methods of a regression release.
METHODS = ("ssp", "adassp", "pace_ggm")


@dataclass(frozen=True, kw_only=True)
class RegressionMetadata:
    r"""The metadata of a ``"regression"`` release, declared once: each field, its type and its range.

    Attributes
    ----------
    method : str
        ``"ssp"``, ``"adassp"`` or ``"pace_ggm"``.
    columns : tuple of str
        The columns of ``W``: ``"(intercept)"`` first if ``intercept``, the predictors, the response last.
    response : str
        The response's name (the last column).
    predictors : tuple of str
        The columns between the intercept and the response.
    intercept : bool
        Whether ``W`` has the constant column of ones.
    bounds : tuple of float
        The half-width :math:`b_j > 0` of each column's range (the intercept's 1.0 first).
    shift : tuple of float or None
        The mid-point :math:`s_j` of each column's range (the intercept's 0.0 first); None in a record
        written without it (shift 0).
    clip : bool
        Whether the curator clipped the data to the ranges.
    entry_order : str
        :data:`~noiseaware._core._fields.ENTRY_ORDER`, the order of the released entries.
    scaling : str
        The scaling in words (``W = (Z - shift) / bounds``).
    rho, delta : float or None
        The budget and AdaSSP's failure probability of methods ``"adassp"`` and ``"pace_ggm"``.
    design : tuple of str or None
        The design's columns (every column but the response) of method ``"pace_ggm"``.
    simulation, source : str or None
        The simulation note of a seeded release; the provenance of one made elsewhere.

    Examples
    --------
    >>> md = RegressionMetadata.from_dict({
    ...     "method": "ssp", "columns": ["(intercept)", "x", "y"], "response": "y", "predictors": ["x"],
    ...     "intercept": True, "bounds": [1.0, 2.0, 3.0], "clip": False, "entry_order": ENTRY_ORDER,
    ...     "scaling": "W = (Z - shift) / bounds"})
    >>> md.columns, md.bounds, md.shift
    (('(intercept)', 'x', 'y'), (1.0, 2.0, 3.0), None)
    >>> RegressionMetadata.from_dict({**md.to_dict(), "bounds": [1.0, -2.0, 3.0]})
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.ReleaseFormatError: Release: metadata.bounds[1] must be > 0; got metadata.bounds[1]=-2.0.
    """

    method: str
    columns: tuple[str, ...]
    response: str
    predictors: tuple[str, ...]
    intercept: bool
    bounds: tuple[float, ...]
    shift: tuple[float, ...] | None = None
    clip: bool
    entry_order: str
    scaling: str
    rho: float | None = None
    delta: float | None = None
    design: tuple[str, ...] | None = None
    simulation: str | None = None
    source: str | None = None

    #: The statistic these fields describe.
    STATISTIC: ClassVar[str] = "regression"
    #: The fields every record holds, with their types (checked in this order).
    REQUIRED: ClassVar[Mapping[str, FieldType]] = MappingProxyType({
        "method": OneOf(METHODS),
        "columns": NAMES,
        "response": STR,
        "predictors": STR_LIST,
        "intercept": BOOL,
        "bounds": ListOf(Float(gt=0.0)),
        "clip": BOOL,
        "entry_order": OneOf((ENTRY_ORDER,)),
        "scaling": STR,
    })
    #: The fields a record may hold (besides ``simulation`` and ``source``, which any statistic may).
    OPTIONAL: ClassVar[Mapping[str, FieldType]] = MappingProxyType({
        "rho": POSITIVE,
        "delta": OPEN_UNIT,
        "design": STR_LIST,
        "shift": ListOf(Float()),
    })

    @classmethod
    @owned("Release")
    def from_dict(cls, metadata: Mapping[str, Any]) -> RegressionMetadata:
        """The typed record of a release's metadata, each field checked by its field type.

        Raises
        ------
        ReleaseFormatError
            An unknown or missing key, or a value out of its field's type or range (the loader's
            message: ``"Release: metadata.<key> <rule>; got ..."``).
        """
        typed = read_fields(metadata, cls.REQUIRED, cls.OPTIONAL, cls.STATISTIC)
        seqs = {"columns", "predictors", "bounds", "shift", "design"}
        values: dict[str, Any] = {k: tuple(x) if k in seqs else x for k, x in typed.items()}
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """The JSON metadata: the fields in declaration order, lists for tuples, absent fields left out."""
        out: dict[str, Any] = {}
        for f in fields(self):
            x = getattr(self, f.name)
            if x is not None:
                out[f.name] = list(x) if isinstance(x, tuple) else x
        return out


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


@owned("read_regression")
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
    rel = as_release(release)
    if rel.statistic != "regression":
        raise NoiseawareValueError(f"{owner}: release must be a 'regression' release; got statistic={rel.statistic!r}.")
    md = RegressionMetadata.from_dict(rel.metadata)
    if md.method == "pace_ggm":
        raise NoiseawareValueError(
            f"{owner}: release must hold every entry of Z^T Z with a fixed noise law; got method='pace_ggm' (its "
            "entries were selected adaptively and only some measured). Release with method='ssp' or "
            "method='adassp' for a noise-aware posterior; pace_ggm_regression gives this release's point estimate."
        )
    cols, intercept = md.columns, md.intercept
    k = len(cols)
    n = int(rel.n)  # type: ignore[arg-type]
    b = np.asarray(md.bounds, dtype=np.float64)
    shift = np.asarray(md.shift if md.shift is not None else [0.0] * k, dtype=np.float64)
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
        response=md.response,
        intercept=intercept,
        family=str(mech.family),
        moments=moments,
        scale=scale,
        method=md.method,
        bounds=b,
        shift=shift,
    )
