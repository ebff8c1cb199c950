"""The one seam between ``AgentSession`` and Textual.

The session calls listeners synchronously from whatever coroutine emits the event; the bridge
only queues the event and posts one message per batch, which is cheap, never raises into the session and
never touches a widget. Textual delivers the messages in order on the UI's own loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from textual.message_pump import MessagePump

from pi_tui.modes.interactive.messages import AgentEventsBatched

BATCH_SECONDS = 1 / 60
"""Events are gathered for at most this long before the screen gets them (one 60 Hz frame)."""


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
        if not isinstance(event, dict) or event.get("type") == "subagent_event":
            return  # a child's own events: its task panel shows them through the call's updates
        self.forwarded += 1
        # A shallow copy: the session may keep mutating its own dict after the call returns.
        self._pending.append(dict(event))
        if len(self._pending) == 1:
            # One message per batch: events arriving before it is posted (one frame later while
            # the session runs on the UI loop) or before the screen takes it join it. Without the
            # wait, a stream read one chunk at a time makes one screen message per token.
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # emitted outside a loop (a loader thread): post at once
                self._post()
            else:
                loop.call_later(BATCH_SECONDS, self._post)

    def _post(self) -> None:
        if self._pending:
            self._target.post_message(AgentEventsBatched(self._pending))

    def take(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Called by the receiver when it handles a batch: later events start a new one.

        Consecutive text/thinking deltas of one block arrive merged (see ``coalesce_deltas``)."""
        if batch is self._pending:
            self._pending = []
        return coalesce_deltas(batch)


    def drain(self) -> list[dict[str, Any]]:
        """Every event not yet handled, now (merged as in ``take``). A message already posted
        with them is emptied, so nothing is handled twice. The screen drains before it reloads
        the conversation for a replaced session: events emitted before the switch come first."""
        events = list(self._pending)
        self._pending.clear()
        self._pending = []
        return coalesce_deltas(events)


_MERGEABLE = frozenset({"text_delta", "thinking_delta"})


def coalesce_deltas(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge runs of ``message_update`` text/thinking deltas of the same content block into one.

    A fast stream delivers hundreds of one-token deltas between two frames; the screen would
    handle each (a handler call, a widget write) only to show their concatenation. The merged
    event is the run's last one with the run's deltas joined, so it carries the newest partial
    message. Anything else (tool-call deltas, other events) passes through untouched, in order.
    """
    merged: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []

    def close_run() -> None:
        if len(run) == 1:
            merged.append(run[0])
        elif run:
            last = run[-1]
            inner = last["assistantMessageEvent"]
            joined = "".join(str(e["assistantMessageEvent"].get("delta", "")) for e in run)
            merged.append({**last, "assistantMessageEvent": {**inner, "delta": joined}})
        run.clear()

    for event in events:
        inner = event.get("assistantMessageEvent") if event.get("type") == "message_update" else None
        if isinstance(inner, dict) and inner.get("type") in _MERGEABLE:
            if run:
                head = run[0]["assistantMessageEvent"]
                if head.get("type") != inner.get("type") or head.get("contentIndex") != inner.get("contentIndex"):
                    close_run()
            run.append(event)
            continue
        close_run()
        merged.append(event)
    close_run()
    return merged
