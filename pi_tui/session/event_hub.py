"""The session's subscribers: ``subscribe`` and ``emit`` (events are notifications, never hooks).

A listener that raises is logged and skipped: one broken renderer must not break the run or
keep the other listeners from hearing about it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

Listener = Callable[[dict[str, Any]], None]
_log = logging.getLogger(__name__)


class EventHub:
    def __init__(self) -> None:
        self.listeners: list[Listener] = []
        """In subscription order; a benchmark puts its clock first to stamp events as they leave."""

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener) if listener in self.listeners else None

    def emit(self, event: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception as err:  # a broken listener must not break the run
                _log.warning("event listener failed on %s: %s", event.get("type"), err)
