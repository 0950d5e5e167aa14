r"""A hierarchy release as the models read it: the tree as index arrays and the measurements (:class:`ModelData`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from .._validation import owned
from ..exceptions import NoiseawareTypeError
from ._record import NoisyHierarchy

__all__ = ["PRIORS", "ModelData", "as_model_data", "model_data"]


#: The priors of :func:`model`: ``"hierarchical"`` (county and tract effects on tract populations,
#: a cell profile per state) and ``"uniform"`` (uniform over the simplex of each state's cells).
PRIORS = ("hierarchical", "uniform")


@dataclass(frozen=True, eq=False)
class ModelData:
    r"""What :func:`model` reads from a release: the tree as index arrays and the measurements.

    Attributes
    ----------
    n_units : tuple of int
        Units per level (three levels or more; the root level carries the exact totals).
    parents : tuple of numpy.ndarray
        The release's parent indices.
    leaf_root : numpy.ndarray
        For each leaf, its root-level ancestor.
    n_cells : int
        Cells per unit.
    index : numpy.ndarray
        Flat positions of the noisy measurements in the concatenation of every level's
        ``(units, 1 + cells)`` table, C order.
    y, sigma : numpy.ndarray
        The noisy measurements and their discrete Gaussian :math:`\sigma`, in ``index`` order.
    totals : numpy.ndarray
        The root-level exact totals (float64).
    """

    n_units: tuple[int, ...]
    parents: tuple[np.ndarray, ...]
    leaf_root: np.ndarray
    n_cells: int
    index: np.ndarray
    y: np.ndarray
    sigma: np.ndarray
    totals: np.ndarray

    def ancestor(self, level: int) -> np.ndarray:
        """For each leaf, the index of its ancestor at ``level``."""
        idx = np.arange(self.n_units[-1])
        for p in reversed(self.parents[level:]):
            idx = p[idx]
        return idx

    def county_root(self) -> np.ndarray:
        """For each unit of level 1 (counties), the index of its root-level ancestor."""
        return np.asarray(self.parents[0])

    @property
    def cells_per_root(self) -> np.ndarray:
        """Leaf cells below each root unit."""
        return np.bincount(self.leaf_root, minlength=self.n_units[0]) * self.n_cells


@owned("hierarchy.fit")
def model_data(release: NoisyHierarchy) -> ModelData:
    """Read a release for :func:`model`; the root level's totals must be published exactly.

    Raises
    ------
    NoiseawareTypeError
        If ``release`` is not a :class:`NoisyHierarchy`.
    NoiseawareValueError
        If the root totals are not invariants (the posterior allocates them exactly).
    """
    if not isinstance(release, NoisyHierarchy):
        raise NoiseawareTypeError(f"hierarchy.fit: release must be a NoisyHierarchy; got {type(release).__name__}.")
    totals = release.root_totals()
    if totals is None:
        v.refuse("release", "must publish the root level's totals exactly (variance 0)",
               release.variance[0].tolist(), "The posterior allocates these exact totals down the tree.")
    assert totals is not None  # for the type checker: v.fail raised otherwise
    mask = np.concatenate([np.broadcast_to(release.variance[lev] > 0, x.shape).ravel()
                           for lev, x in enumerate(release.values)])
    flat_y = np.concatenate([x.ravel() for x in release.values]).astype(np.float64)
    flat_s = np.concatenate([np.broadcast_to(release.sigma()[lev], x.shape).ravel()
                             for lev, x in enumerate(release.values)])
    index = np.flatnonzero(mask)
    return ModelData(
        n_units=tuple(len(u) for u in release.units), parents=release.parents, leaf_root=release.leaf_parents,
        n_cells=release.n_cells, index=index, y=flat_y[index], sigma=flat_s[index],
        totals=totals.astype(np.float64),
    )


def as_model_data(data: Any) -> ModelData:
    """``data`` itself, or :func:`model_data` of a release; anything else is refused."""
    if isinstance(data, ModelData):
        return data
    if isinstance(data, NoisyHierarchy):
        return model_data(data)
    raise NoiseawareTypeError(v.message("data", "must be a hierarchy.ModelData or a NoisyHierarchy",
                                        type(data).__name__, "Pass hierarchy.model_data(release) or the release."))
