"""The one seam between ``AgentSession`` and Textual.

The session calls listeners synchronously from whatever coroutine emits the event; the bridge
only queues the event and posts one message per batch, which is cheap, never raises into the session and
never touches a widget. Textual delivers the messages in order on the UI's own loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.message_pump import MessagePump

from pi_tui.modes.interactive.messages import AgentEventsBatched


class EventSource(Protocol):
    def subscribe(self, listener: Callable[[Any], None]) -> Callable[[], None]: ...


class SessionBridge:
    """Subscribes to a session and forwards every event to ``target`` as ``AgentEventReceived``."""

    def __init__(self, target: MessagePump) -> None:
        self._target = target
        self._unsubscribe: Callable[[], None] | None = None
        self._pending: list[dict[str, Any]] = []
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
        self._pending.append(dict(event))
        if len(self._pending) == 1:
            # One message per batch: events arriving before the screen takes it join it.
            self._target.post_message(AgentEventsBatched(self._pending))

    def take(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Called by the receiver when it handles a batch: later events start a new one."""
        if batch is self._pending:
            self._pending = []
        return batch
