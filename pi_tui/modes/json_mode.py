"""``--mode json``: the session header line, then every session event as one compact JSON line
(pi-behaviour.md §9.3, §13.7). Used by print mode for ``--mode json``."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from pi_tui.core.terminal_text import json_line
from pi_tui.session.agent_session import AgentSession


def event_line(event: Any) -> str:
    """One event as a JSON line; control characters in texts stay, JSON-escaped (lossless)."""
    return json_line(event)


def attach_json_output(session: AgentSession, out: TextIO | None = None) -> None:
    """Print the header now and each event as it happens (flushed per line, so a reader sees
    the stream live)."""
    stream = out or sys.stdout
    stream.write(event_line(session.session_manager.header) + "\n")
    stream.flush()

    def write(event: dict[str, Any]) -> None:
        stream.write(event_line(event) + "\n")
        stream.flush()

    session.subscribe(write)
