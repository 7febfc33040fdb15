"""One name -> object registry, used by every lookup-by-name in nolo.

A :class:`Registry` maps names (strings) to objects -- loss classes, kernel
classes, configurable classes, experiments, datasets -- and refuses an unknown
name with a :class:`nolo.ParameterError` that names the parameter and lists
the allowed names::

    >>> from nolo._registry import Registry
    >>> shapes = Registry("shape")
    >>> shapes.register("square", 4)
    4
    >>> shapes.register("triangle", 3)
    3
    >>> shapes.get("square")
    4
    >>> shapes.names()
    ('square', 'triangle')
    >>> shapes.get("circle")
    Traceback (most recent call last):
    ...
    nolo.exceptions.ParameterError: shape must be one of 'square', 'triangle', got 'circle'

``register`` also works as a class decorator (``@KERNELS.register("linear")``)
and accepts aliases (``register("rbf", GaussianKernel, alias=True)`` keeps
``"rbf"`` out of :meth:`Registry.names` and in :meth:`Registry.all_names`).
Registering a name twice is an error unless ``replace=True``.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from nolo.exceptions import ParameterError

__all__ = ["Registry"]

_MISSING = object()


class Registry:
    """A name -> object table with one error message for unknown names.

    Parameters
    ----------
    what : str
        What the names name, used in error messages (``"loss"``, ``"kernel"``,
        ``"experiment"``); it is also the parameter name the message cites.
    error : type, optional
        Exception class raised for an unknown name (default
        :class:`nolo.ParameterError`; it is called with the message).
    """

    def __init__(self, what: str, error: type = ParameterError):
        self.what = what
        self.error = error
        self._items: dict[str, Any] = {}
        self._aliases: set[str] = set()

    # -- filling ---------------------------------------------------------------------
    def register(self, name: str, obj: Any = _MISSING, *, alias: bool = False, replace: bool = False):
        """Register ``obj`` under ``name`` and return it; without ``obj``, return a decorator."""
        if obj is _MISSING:
            def decorator(o):
                return self.register(name, o, alias=alias, replace=replace)

            return decorator
        if not isinstance(name, str) or not name:
            raise ParameterError(f"a {self.what} name must be a non-empty string, got {name!r}")
        if name in self._items and not replace and self._items[name] is not obj:
            raise ParameterError(f"{self.what} {name!r} is already registered")
        self._items[name] = obj
        if alias:
            self._aliases.add(name)
        else:
            self._aliases.discard(name)
        return obj

    def unregister(self, name: str) -> None:
        """Remove ``name`` (no error if absent)."""
        self._items.pop(name, None)
        self._aliases.discard(name)

    def clear(self) -> None:
        """Remove every entry."""
        self._items.clear()
        self._aliases.clear()

    # -- lookup ----------------------------------------------------------------------
    def get(self, name: str, param: str | None = None) -> Any:
        """The object registered as ``name``; an unknown name raises ``error`` naming ``param`` (default ``what``)."""
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise self.error(self.unknown_message(name, param)) from None

    def unknown_message(self, name: Any, param: str | None = None) -> str:
        """The message for an unknown ``name``: the parameter, the allowed names, what was given."""
        allowed = ", ".join(map(repr, self.names())) or "none registered"
        return f"{param or self.what} must be one of {allowed}, got {name!r}"

    def names(self) -> tuple[str, ...]:
        """Registered names in registration order, without aliases."""
        return tuple(n for n in self._items if n not in self._aliases)

    def all_names(self) -> tuple[str, ...]:
        """Registered names in registration order, aliases included."""
        return tuple(self._items)

    def items(self) -> list[tuple[str, Any]]:
        """``(name, object)`` pairs in registration order, aliases included."""
        return list(self._items.items())

    def find(self, predicate: Callable[[Any], bool]) -> list[str]:
        """Names whose object satisfies ``predicate``."""
        return [n for n, o in self._items.items() if predicate(o)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, names={list(self.names())})"
