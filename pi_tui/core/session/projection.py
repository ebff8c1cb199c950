"""Context projection: what the model sees from a leaf (pi-behaviour.md §1.5).

The path from the leaf to the root is walked once; messages are the stored dicts themselves
(no copies), so projecting 100,000 entries stays cheap. Treat the returned messages as
read-only: they are the session's own objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from pi_tui.core.messages import AgentMessage
from pi_tui.core.session.entries import Entry, ms_from_iso
from pi_tui.core.session.tree import index_entries, path_to


class LastEntry:
    """Sentinel: no leaf given, use the last entry in file order."""

    def __repr__(self) -> str:
        return "LAST_ENTRY"


LAST_ENTRY: Final = LastEntry()


@dataclass(frozen=True, slots=True)
class ModelRef:
    provider: str
    model_id: str


@dataclass(slots=True)
class SessionContext:
    messages: list[AgentMessage] = field(default_factory=list)
    thinking_level: str = "off"
    model: ModelRef | None = None


def _timestamp_ms(entry: Entry) -> int:
    try:
        return ms_from_iso(str(entry.get("timestamp", "")))
    except ValueError:
        return 0


def entry_to_message(entry: Entry) -> AgentMessage | None:
    """The message an entry contributes to the context, or None."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return message if isinstance(message, dict) else None  # type: ignore[return-value]
    if kind == "custom_message":
        custom: dict[str, Any] = {
            "role": "custom",
            "customType": entry.get("customType", ""),
            "content": entry.get("content", ""),
            "display": entry.get("display", True),
        }
        if "details" in entry:
            custom["details"] = entry["details"]
        custom["timestamp"] = _timestamp_ms(entry)
        return custom  # type: ignore[return-value]
    if kind == "branch_summary" and entry.get("summary"):
        return {
            "role": "branchSummary",
            "summary": entry["summary"],
            "fromId": entry.get("fromId", ""),
            "timestamp": _timestamp_ms(entry),
        }
    return None


def compaction_summary_message(entry: Entry) -> AgentMessage:
    return {
        "role": "compactionSummary",
        "summary": str(entry.get("summary", "")),
        "tokensBefore": int(entry.get("tokensBefore") or 0),
        "timestamp": _timestamp_ms(entry),
    }


def build_session_context(
    entries: list[Entry],
    leaf_id: str | LastEntry | None = LAST_ENTRY,
    *,
    by_id: dict[str, Entry] | None = None,
) -> SessionContext:
    """Project tree ``entries`` (no header) from ``leaf_id``.

    ``None`` gives an empty context; an unknown id or ``LAST_ENTRY`` uses the last entry in file
    order. Pass ``by_id`` when an index exists already.
    """
    if leaf_id is None or not entries:
        return SessionContext()
    index = by_id if by_id is not None else index_entries(entries)
    if isinstance(leaf_id, LastEntry) or leaf_id not in index:
        last = entries[-1]
        path = path_to(index, last["id"]) if isinstance(last.get("id"), str) else [last]
    else:
        path = path_to(index, leaf_id)

    thinking_level = "off"
    model: ModelRef | None = None
    compaction_index = -1
    for position, entry in enumerate(path):
        kind = entry.get("type")
        if kind == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                model = ModelRef(str(message.get("provider", "")), str(message.get("model", "")))
        elif kind == "thinking_level_change":
            thinking_level = str(entry.get("thinkingLevel", "off"))
        elif kind == "model_change":
            model = ModelRef(str(entry.get("provider", "")), str(entry.get("modelId", "")))
        elif kind == "compaction":
            compaction_index = position

    messages: list[AgentMessage] = []
    append = messages.append
    if compaction_index < 0:
        selected: list[Entry] = path
    else:
        compaction = path[compaction_index]
        append(compaction_summary_message(compaction))
        first_kept = compaction.get("firstKeptEntryId")
        start = compaction_index  # not found before the compaction: keep none of them
        for position in range(compaction_index):
            if path[position].get("id") == first_kept:
                start = position
                break
        selected = path[start:compaction_index] + path[compaction_index + 1 :]
    for entry in selected:
        if entry.get("type") == "message":
            message = entry.get("message")
            if isinstance(message, dict):
                append(message)  # type: ignore[arg-type]
            continue
        converted = entry_to_message(entry)
        if converted is not None:
            append(converted)
    return SessionContext(messages=messages, thinking_level=thinking_level, model=model)
