"""The queued texts the UI shows (pi-behaviour.md §7.4, §13.7 ``queue_update``).

The agent's queues hold messages; the session mirrors their texts. A text leaves the mirror when
a user ``message_start`` with the identical text is seen (steering checked first), or when the
queues are cleared. Every change emits ``queue_update{steering, followUp}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class QueueMirror:
    def __init__(self, emit: Callable[[dict[str, Any]], None]) -> None:
        self.steering: list[str] = []
        self.follow_up: list[str] = []
        self._emit = emit

    def add(self, kind: str, text: str) -> None:
        (self.steering if kind == "steer" else self.follow_up).append(text)
        self._changed()

    def delivered(self, text: str) -> None:
        for queue in (self.steering, self.follow_up):
            if text in queue:
                queue.remove(text)
                self._changed()
                return

    def clear(self) -> tuple[list[str], list[str]]:
        taken = (list(self.steering), list(self.follow_up))
        if self.steering or self.follow_up:
            self.steering.clear()
            self.follow_up.clear()
            self._changed()
        return taken

    def _changed(self) -> None:
        self._emit({"type": "queue_update", "steering": list(self.steering), "followUp": list(self.follow_up)})
