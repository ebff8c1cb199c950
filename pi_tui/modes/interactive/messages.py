"""Textual messages that carry the session's activity into the UI ("attributes down, messages up").

Only ``bridge.py`` posts session events (``AgentEventsBatched``; a single ``AgentEventReceived``
is accepted too); only the chat screen's handlers turn them into widget changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
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
class SessionReplaced(Message):
    """The session file changed (/new, /resume, /fork, tree navigation): rebuild the conversation."""

    notice: str = ""
    editor_text: str | None = None


@dataclass
class ChildSessionRequested(Message):
    """A ``task`` panel was clicked: open the subagent's session file read-only."""

    path: Path
    description: str = ""
