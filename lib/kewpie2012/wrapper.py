"""A wrapper that adds kewpie 2012's names to a modern object and is otherwise it.

:class:`ModernWrapper` is the base of the 2012 server and server-manager
objects (:mod:`lib.kewpie2012.server_compat`, :mod:`lib.kewpie2012.manager_compat`): a
name the wrapper class defines is the wrapper's (the 2012 names); every other
name is read from, and written to, the wrapped object, so 2012 code that uses
modern names (``execute``, ``restart``, ``vardir``...) still works.  A
wrapper equals, and hashes as, the object it wraps; :func:`unwrap` gives that
object back.
"""
from __future__ import annotations

from typing import Any


class ModernWrapper:
    """The 2012 face of a modern object (subclasses define the 2012 names)."""

    _wrapped: Any

    def __init__(self, wrapped: Any) -> None:
        object.__setattr__(self, "_wrapped", wrapped)

    def __getattr__(self, name: str) -> Any:
        if name == "_wrapped":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self._wrapped, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") or hasattr(type(self), name):
            object.__setattr__(self, name, value)  # the wrapper's own (a read-only 2012 name raises)
        else:
            setattr(self._wrapped, name, value)

    def __eq__(self, other: object) -> bool:
        return bool(self._wrapped == unwrap(other))

    def __hash__(self) -> int:
        return hash(self._wrapped)

    def __repr__(self) -> str:
        return repr(self._wrapped)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(type(self))) | set(dir(self._wrapped)))


def unwrap(obj: Any) -> Any:
    """The modern object behind a 2012 wrapper (obj itself when it is none)."""
    return obj._wrapped if isinstance(obj, ModernWrapper) else obj
