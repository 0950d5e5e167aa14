"""Old names kept importable, with a ``FutureWarning`` naming the new one (private)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["renamed"]


def renamed(module: str, names: Mapping[str, str], namespace: Mapping[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that serves each old name in ``names`` as its new name, with a warning.

    Examples
    --------
    >>> import warnings
    >>> get = renamed("pkg", {"Old": "New"}, {"New": 42})
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     value = get("Old")
    >>> value, w[0].category.__name__, str(w[0].message)
    (42, 'FutureWarning', 'pkg.Old is now pkg.New; the old name will be removed.')
    """

    def __getattr__(name: str) -> Any:
        if name in names:
            new = names[name]
            warnings.warn(f"{module}.{name} is now {module}.{new}; the old name will be removed.", FutureWarning,
                          stacklevel=2)
            return namespace[new]
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
