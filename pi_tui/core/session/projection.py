"""Context projection: what the model sees from a leaf (pi-behaviour.md §1.5).

The path is walked backwards from the leaf and the walk stops as soon as everything is known
(latest compaction, its first kept entry, model, thinking level), so a long compacted session
costs only its tail. Messages are the stored dicts themselves, not copies: treat them as
read-only. ``tests/core/session/test_projection.py`` checks this against a literal forward
transcription of the spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from pi_tui.core.messages import AgentMessage
from pi_tui.core.session.entries import Entry, ms_from_iso
from pi_tui.core.session.tree import index_entries


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


def _walk_back(index: dict[str, Entry], leaf: Entry) -> tuple[list[Entry], str, ModelRef | None, int]:
    """Walk from ``leaf`` towards the root, collecting what the context needs.

    Returns the walked entries (leaf first), the thinking level, the model and the position of
    the latest compaction in that list (-1 if none). The walk stops early once everything is
    known: the latest compaction, its first kept entry, the model and the thinking level. A
    100,000-entry session with compactions therefore reads only its last few thousand entries.
    """
    walked: list[Entry] = []
    thinking: str | None = None
    model: ModelRef | None = None
    compaction_at = -1
    first_kept: Any = None
    kept_found = False
    limit = len(index) + 1  # a parentId cycle must not loop forever
    entry: Entry | None = leaf
    while entry is not None and limit:
        limit -= 1
        walked.append(entry)
        kind = entry.get("type")
        if kind == "message":
            if model is None:
                message = entry.get("message")
                if isinstance(message, dict) and message.get("role") == "assistant":
                    model = ModelRef(str(message.get("provider", "")), str(message.get("model", "")))
        elif kind == "thinking_level_change":
            if thinking is None:
                thinking = str(entry.get("thinkingLevel", "off"))
        elif kind == "model_change":
            if model is None:
                model = ModelRef(str(entry.get("provider", "")), str(entry.get("modelId", "")))
        elif kind == "compaction" and compaction_at < 0:
            compaction_at = len(walked) - 1
            first_kept = entry.get("firstKeptEntryId")
            kept_found = first_kept not in index  # not in the file: nothing to look for
        if compaction_at >= 0 and compaction_at != len(walked) - 1 and entry.get("id") == first_kept:
            kept_found = True
        if kept_found and model is not None and thinking is not None:
            break
        parent = entry.get("parentId")
        entry = index.get(parent) if isinstance(parent, str) and parent != entry.get("id") else None
    if entry is not None and not limit:  # a cycle: keep each entry once, where first reached
        walked = list({id(e): e for e in walked}.values())
    return walked, thinking or "off", model, compaction_at


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
    leaf = index.get(leaf_id) if isinstance(leaf_id, str) else None
    if leaf is None:
        leaf = entries[-1]
    walked, thinking_level, model, compaction_at = _walk_back(index, leaf)

    messages: list[AgentMessage] = []
    if compaction_at < 0:
        selected = walked[::-1]
    else:
        compaction = walked[compaction_at]
        messages.append(compaction_summary_message(compaction))
        first_kept = compaction.get("firstKeptEntryId")
        newer = walked[compaction_at - 1 :: -1] if compaction_at > 0 else []
        older = walked[compaction_at + 1 :]
        kept_from = next((i for i, e in enumerate(older) if e.get("id") == first_kept), None)
        # older is leaf-side first: entries from the root side end up to first_kept, in order
        kept = older[kept_from::-1] if kept_from is not None else []
        selected = kept + newer
    append = messages.append
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
