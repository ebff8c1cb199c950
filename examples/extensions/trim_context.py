"""Trim the middle of long conversations for each request (seed 004, ``transformContext``).

Keeps the most recent ``KEEP_RECENT`` messages verbatim and replaces everything before them with
one placeholder, so the model knows something was cut. Only the request is trimmed: the session
file keeps the full history, and the next request is trimmed again from the full history.

Load it with ``pi-tui -e examples/extensions/trim_context.py`` or copy it to ``~/.pi/agent/extensions/``.
"""

from __future__ import annotations

import time
from typing import Any

KEEP_RECENT = 12
"""How many of the newest messages reach the model unchanged."""


def trim(messages: list[dict[str, Any]], keep_recent: int = KEEP_RECENT) -> list[dict[str, Any]]:
    # Messages carrying the system prompt or tool declarations would always be kept; pi-tui sends
    # the system prompt separately, but a custom transform may have added one.
    system = [m for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    if len(rest) <= keep_recent:
        return messages  # below the limit: trimming would only lose information
    cut = len(rest) - keep_recent
    # Never start the kept part with a tool result: its tool call would be cut away and the
    # provider rejects a result without its call. Move the cut back to the assistant message.
    while cut > 0 and rest[cut].get("role") == "toolResult":
        cut -= 1
    head, tail = rest[:cut], rest[cut:]
    if not head:
        return messages
    placeholder = {
        "role": "user",
        "content": [{
            "type": "text",
            "text": f"[Trimmed {len(head)} earlier messages: the initial task and old tool output]",
        }],
        "timestamp": int(time.time() * 1000),
    }
    return [*system, placeholder, *tail]


def register(pi: Any) -> None:
    @pi.on("context")
    def on_context(event: dict[str, Any]) -> dict[str, Any] | None:
        trimmed = trim(event["messages"])
        return None if trimmed is event["messages"] else {"messages": trimmed}
