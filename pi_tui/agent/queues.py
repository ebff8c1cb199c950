"""Steering and follow-up queues (pi-behaviour.md §7.4, §13.7).

A queue is drained by the loop's polls: in ``one-at-a-time`` mode (the default) each poll takes
one message, in ``all`` mode it takes everything queued. Steering is polled at loop start and
after each ``turn_end``; follow-ups when the agent would otherwise stop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Literal

from pi_tui.core.messages import AgentMessage

QueueMode = Literal["one-at-a-time", "all"]


def queue_modes(settings: Any) -> tuple[QueueMode, QueueMode]:
    """The steering and follow-up modes the settings name (``one-at-a-time`` unless ``all``)."""
    steering = getattr(settings, "steering_mode", "one-at-a-time")
    follow_up = getattr(settings, "follow_up_mode", "one-at-a-time")
    return ("all" if steering == "all" else "one-at-a-time", "all" if follow_up == "all" else "one-at-a-time")


class MessageQueue:
    def __init__(self, mode: QueueMode = "one-at-a-time", *, on_change: Callable[[], None] | None = None) -> None:
        self.mode: QueueMode = mode
        self._items: deque[AgentMessage] = deque()
        self._on_change = on_change

    def push(self, message: AgentMessage) -> None:
        self._items.append(message)
        self._changed()

    def poll(self) -> list[AgentMessage]:
        """Take what one poll delivers (see the module docstring); ``[]`` when empty."""
        if not self._items:
            return []
        if self.mode == "all":
            taken = list(self._items)
            self._items.clear()
        else:
            taken = [self._items.popleft()]
        self._changed()
        return taken

    def clear(self) -> list[AgentMessage]:
        taken = list(self._items)
        self._items.clear()
        if taken:
            self._changed()
        return taken

    def peek(self) -> list[AgentMessage]:
        return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()
