"""``--mode json``: the session header line, then every session event as one compact JSON line
(pi-behaviour.md §9.3, §13.7). Used by print mode for ``--mode json``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from pi_tui.core.terminal_text import json_line
from pi_tui.session.agent_session import AgentSession


def event_line(event: Any) -> str:
    """One event as a JSON line; control characters in texts stay, JSON-escaped (lossless)."""
    return json_line(event)


def attach_json_output(session: AgentSession, out: TextIO | None = None, *,
                       on_closed: Callable[[], None] | None = None) -> None:
    """Print the header now and each event as it happens (flushed per line, so a reader sees
    the stream live). Once the reader is gone (a closed pipe: ``pi-tui --mode json -p … | head``)
    nothing more is written and ``on_closed`` runs, once."""
    stream = out or sys.stdout
    closed = False

    def write(event: Any) -> None:
        nonlocal closed
        if closed:
            return
        try:
            stream.write(event_line(event) + "\n")
            stream.flush()
        except (OSError, ValueError):  # BrokenPipeError; ValueError: the stream was closed
            closed = True
            if on_closed is not None:
                on_closed()

    write(session.session_manager.header)
    session.subscribe(write)
