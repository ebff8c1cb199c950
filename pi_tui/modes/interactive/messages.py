"""Textual messages that carry the session's activity into the UI ("attributes down, messages up").

Only ``bridge.py`` posts ``AgentEventReceived``; only the main screen's handlers turn it into
widget changes. Workers post ``PromptFinished`` when ``session.prompt`` returns or fails, so a
failure the session could not express as an event still reaches the screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class AgentEventReceived(Message):
    """One ``SessionEvent`` (pi's JSON shape, core/events.py)."""

    event: dict[str, Any]


@dataclass
class AgentEventsBatched(Message):
    """Events that arrived while the screen was busy, delivered together in order.

    At thousands of stream deltas per second one Textual message per delta costs more than the
    delta's own work; the bridge coalesces whatever piles up between two deliveries.
    """

    events: list[dict[str, Any]]


@dataclass
class PromptFinished(Message):
    """A worker running ``session.prompt`` (or a command) ended; ``error`` when it raised."""

    error: str | None = None


@dataclass
class SessionReplaced(Message):
    """The session file changed (/new, /resume, /fork, tree navigation): rebuild the conversation."""

    notice: str = ""
    editor_text: str | None = None
