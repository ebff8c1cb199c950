"""``pi-tui checkpoints SESSION``: which node of a session changed which files (docs/checkpoints.md).

Read from the session file alone (each snapshot entry records what it changed), so it works
without git and without the store.
"""

from __future__ import annotations

from typing import Any

from pi_tui.checkpoints.binding import bindings
from pi_tui.core.session.loading import LoadedSession
from pi_tui.core.terminal_text import json_line
from pi_tui.modes.inspect_format import short


def _node_text(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "(before the first entry)"
    message = entry.get("message") if entry.get("type") == "message" else None
    if isinstance(message, dict):
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else " ".join(
            str(c.get("text", "")) for c in content or [] if isinstance(c, dict) and c.get("type") == "text")
        if role == "toolResult":
            return f"toolResult {message.get('toolName', '')}"
        return f"{role}: {short(text.replace(chr(10), ' '), 60)}"
    return str(entry.get("type"))


def checkpoint_lines(loaded: LoadedSession, *, as_json: bool) -> list[str]:
    by_id = {str(e.get("id")): e for e in loaded.entries}
    found = bindings(loaded.entries)
    if as_json:
        return [json_line({"entryId": b.bound_to, "reason": b.reason, "commit": b.commit,
                           "counts": b.data.get("counts"), "files": b.data.get("files"),
                           "skipped": b.data.get("skippedBecause")}) for b in found]
    if not found:
        return [f"session {loaded.header['id']}: no file snapshots"]
    lines = [f"session {loaded.header['id']}: {len(found)} file snapshot(s)"]
    for b in found:
        node = by_id.get(b.bound_to) if b.bound_to else None
        head = f"{(b.bound_to or 'root')[:8]:8}  {b.reason:8}  {_node_text(node)}"
        if not b.usable:
            lines.append(f"{head}  — skipped: {b.data.get('skippedBecause', '')}")
            continue
        files = b.data.get("files") if isinstance(b.data.get("files"), dict) else None
        if files is None:
            lines.append(f"{head}  — snapshot {str(b.commit)[:12]}")
            continue
        lines.append(head)
        for key, mark in (("changed", "M"), ("created", "A"), ("deleted", "D")):
            for path in files.get(key) or []:
                lines.append(f"          {mark} {path}")
    return lines
