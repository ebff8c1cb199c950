"""The one seam between ``AgentSession`` and Textual.

The session calls listeners synchronously from whatever coroutine emits the event; the bridge
only wraps the event in a message and posts it, which is cheap, never raises into the session and
never touches a widget. Textual delivers the messages in order on the UI's own loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.message_pump import MessagePump

from pi_tui.modes.interactive.messages import AgentEventReceived


class EventSource(Protocol):
    def subscribe(self, listener: Callable[[Any], None]) -> Callable[[], None]: ...


class SessionBridge:
    """Subscribes to a session and forwards every event to ``target`` as ``AgentEventReceived``."""

    def __init__(self, target: MessagePump) -> None:
        self._target = target
        self._unsubscribe: Callable[[], None] | None = None
        self.forwarded = 0

    def attach(self, session: EventSource) -> None:
        self.detach()
        self._unsubscribe = session.subscribe(self._on_event)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            try:
                self._unsubscribe()
            finally:
                self._unsubscribe = None

    def _on_event(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        self.forwarded += 1
        # A shallow copy: the session may keep mutating its own dict after the call returns.
        self._target.post_message(AgentEventReceived(dict(event)))
