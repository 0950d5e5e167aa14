"""Old names kept importable, with a ``FutureWarning`` naming the new one (private)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["renamed", "renamed_attribute"]


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


def renamed_attribute(owner: str, old: str, new: str) -> property:
    """A read-only property ``old`` that returns attribute ``new``, with a ``FutureWarning``.

    Examples
    --------
    >>> import warnings
    >>> class Box:
    ...     size = 3
    ...     volume = renamed_attribute("Box", "volume", "size")
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     value = Box().volume
    >>> value, str(w[0].message)
    (3, 'Box.volume is deprecated; use Box.size.')
    """

    def get(self: Any) -> Any:
        warnings.warn(f"{owner}.{old} is deprecated; use {owner}.{new}.", FutureWarning, stacklevel=2)
        return getattr(self, new)

    return property(get, doc=f"Former name of :attr:`{new}` (deprecated).")
