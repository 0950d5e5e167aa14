"""The release record as the readers of ``_core`` see it: an abstract base below :class:`noiseaware.Release`.

``_core``'s readers (``_release``, ``_dirichlet_release``, ``_covariance_release``, ``_noisy``,
``_specs``) turn a release into a likelihood's parameters. They check and read a
:class:`ReleaseRecord`, which :class:`noiseaware.Release` subclasses, so that ``_core`` imports
nothing above it: the mechanisms read their noise laws from ``_core`` and the release record reads
the mechanisms, so a reader importing :mod:`noiseaware.release` would make ``_core`` two layers.
Nothing but :class:`~noiseaware.Release` subclasses :class:`ReleaseRecord`.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validation import current_owner
from ..exceptions import NoiseawareTypeError

__all__ = ["ReleaseRecord", "as_release"]


class ReleaseRecord(abc.ABC):
    """The fields of a release that the readers use (:class:`noiseaware.Release` defines and checks them)."""

    statistic: str
    values: np.ndarray
    labels: tuple[tuple[str, ...], ...]
    mechanism: Any
    composition: str
    guarantee: Any
    secure: bool
    n: int | None
    metadata: Mapping[str, Any]
    components: tuple[Any, ...]


def as_release(release: Any) -> ReleaseRecord:
    """``release`` if it is a :class:`noiseaware.Release`; else a ``NoiseawareTypeError`` naming the current owner.

    Examples
    --------
    >>> from noiseaware._validation import owner_scope
    >>> with owner_scope("Foo.from_release"):
    ...     as_release(3)
    Traceback (most recent call last):
    ...
    noiseaware.exceptions.NoiseawareTypeError: Foo.from_release: release must be a noiseaware.Release; got int.
    """
    owner = current_owner()
    if not isinstance(release, ReleaseRecord):
        raise NoiseawareTypeError(f"{owner}: release must be a noiseaware.Release; got {type(release).__name__}.")
    return release
