"""``Forwarded``: an attribute of ``AgentSession`` that lives in one of its parts.

``session_manager = Forwarded[SessionManager]("_state")`` makes ``session.session_manager``
read and write ``session._state.session_manager``: the public API keeps its attributes while
each value has exactly one home (the live state or the collaborator that owns it).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast, overload

T = TypeVar("T")


class Forwarded(Generic[T]):
    def __init__(self, part: str, name: str | None = None) -> None:
        self._part = part
        self._name = name or ""

    def __set_name__(self, owner: type, name: str) -> None:
        if not self._name:
            self._name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Forwarded[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> Forwarded[T] | T:
        if obj is None:
            return self
        return cast(T, getattr(getattr(obj, self._part), self._name))

    def __set__(self, obj: object, value: T) -> None:
        part: Any = getattr(obj, self._part)
        setattr(part, self._name, value)
