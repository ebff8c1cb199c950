"""Small builders for session paths in pi's JSON shapes (test helpers, not fixtures)."""

from __future__ import annotations

import itertools
from typing import Any

from pi_tui.core.messages import empty_usage

_ids = itertools.count(1)


def _entry(kind: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    entry_id = fields.pop("id", None) or f"e{next(_ids):07d}"
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": "2026-11-30T03:00:00.000Z", **fields}


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def assistant(text: str = "", *, calls: list[tuple[str, str, dict[str, Any]]] = (), total: int = 0, stop: str | None = None) -> dict[str, Any]:  # type: ignore[assignment]
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    for call_id, name, args in calls:
        content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
    usage = empty_usage()
    usage["totalTokens"] = total
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "usage": usage,
        "stopReason": stop or ("toolUse" if calls else "stop"),
        "timestamp": 2,
    }


def result(call_id: str, text: str, name: str = "bash") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3,
    }


class PathBuilder:
    """Appends entries as a chain, like a session whose leaf never moves."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    @property
    def leaf(self) -> str | None:
        return self.entries[-1]["id"] if self.entries else None

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        entry = _entry(kind, self.leaf, **fields)
        self.entries.append(entry)
        return entry

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        return self.add("message", message=message)

    def compaction(self, summary: str, first_kept: str, tokens_before: int = 0, *, details: Any = None, from_hook: bool = False) -> dict[str, Any]:
        return self.add(
            "compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=tokens_before, details=details, fromHook=from_hook
        )
