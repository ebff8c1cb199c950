"""Session file entries in pi's v3 JSON shapes (pi-behaviour.md §1.2, §13.1).

Entries stay plain dicts from ``json.loads`` so that a load → save round trip keeps unknown fields,
unknown entry types and key order, and loading 100,000 entries costs nothing beyond parsing. The
TypedDicts below give mypy the known fields; the builders create new entries with their keys in
the exact order pi's ``JSON.stringify`` writes them, so files we write are byte-compatible.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from pi_tui.core.messages import AgentMessage, JsonValue, UserContent

CURRENT_SESSION_VERSION = 3


class SessionHeader(TypedDict):
    type: Literal["session"]
    version: NotRequired[int]
    id: str
    timestamp: str
    cwd: str
    parentSession: NotRequired[str]


class MessageEntry(TypedDict):
    type: Literal["message"]
    id: str
    parentId: str | None
    timestamp: str
    message: AgentMessage


class ThinkingLevelChangeEntry(TypedDict):
    type: Literal["thinking_level_change"]
    id: str
    parentId: str | None
    timestamp: str
    thinkingLevel: str


class ModelChangeEntry(TypedDict):
    type: Literal["model_change"]
    id: str
    parentId: str | None
    timestamp: str
    provider: str
    modelId: str


class FileOperationDetails(TypedDict):
    readFiles: list[str]
    modifiedFiles: list[str]


class CompactionEntry(TypedDict):
    type: Literal["compaction"]
    id: str
    parentId: str | None
    timestamp: str
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: NotRequired[JsonValue]
    fromHook: NotRequired[bool]


class BranchSummaryEntry(TypedDict):
    type: Literal["branch_summary"]
    id: str
    parentId: str | None
    timestamp: str
    fromId: str
    summary: str
    details: NotRequired[JsonValue]
    fromHook: NotRequired[bool]


class CustomEntry(TypedDict):
    type: Literal["custom"]
    customType: str
    data: NotRequired[JsonValue]
    id: str
    parentId: str | None
    timestamp: str


class CustomMessageEntry(TypedDict):
    type: Literal["custom_message"]
    customType: str
    content: str | list[UserContent]
    display: bool
    details: NotRequired[JsonValue]
    id: str
    parentId: str | None
    timestamp: str


class LabelEntry(TypedDict):
    type: Literal["label"]
    id: str
    parentId: str | None
    timestamp: str
    targetId: str
    label: NotRequired[str]


class SessionInfoEntry(TypedDict):
    type: Literal["session_info"]
    id: str
    parentId: str | None
    timestamp: str
    name: NotRequired[str]


SessionEntry: TypeAlias = (
    MessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
)
"""A tree entry. Entries of unknown types are kept as the dicts they were read as."""

Entry: TypeAlias = dict[str, Any]
"""How the store handles entries internally: the raw JSON object (known or unknown type)."""

ENTRY_TYPES = (
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
)


def iso_now() -> str:
    """The current time as pi writes it: ``2026-11-30T03:34:03.510Z``."""
    return iso_from_ms(int(datetime.now(UTC).timestamp() * 1000))


def iso_from_ms(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def ms_from_iso(value: str) -> int:
    """Parse an ISO timestamp (``Z`` or offset) into epoch ms; raises ValueError if invalid."""
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


# --------------------------------------------------------------------------- builders
# Each builder writes the keys in pi's order and leaves out optional fields that are None, as
# JSON.stringify drops undefined values.


def make_header(session_id: str, timestamp: str, cwd: str, parent_session: str | None = None) -> Entry:
    header: Entry = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


def _base(kind: str, entry_id: str, parent_id: str | None, timestamp: str) -> Entry:
    return {"type": kind, "id": entry_id, "parentId": parent_id, "timestamp": timestamp}


def make_message_entry(entry_id: str, parent_id: str | None, timestamp: str, message: AgentMessage) -> Entry:
    entry = _base("message", entry_id, parent_id, timestamp)
    entry["message"] = message
    return entry


def make_thinking_level_entry(entry_id: str, parent_id: str | None, timestamp: str, level: str) -> Entry:
    entry = _base("thinking_level_change", entry_id, parent_id, timestamp)
    entry["thinkingLevel"] = level
    return entry


def make_model_change_entry(
    entry_id: str, parent_id: str | None, timestamp: str, provider: str, model_id: str
) -> Entry:
    entry = _base("model_change", entry_id, parent_id, timestamp)
    entry["provider"] = provider
    entry["modelId"] = model_id
    return entry


def make_compaction_entry(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    *,
    summary: str,
    first_kept_entry_id: str,
    tokens_before: int,
    details: JsonValue = None,
    from_hook: bool | None = None,
) -> Entry:
    entry = _base("compaction", entry_id, parent_id, timestamp)
    entry["summary"] = summary
    entry["firstKeptEntryId"] = first_kept_entry_id
    entry["tokensBefore"] = tokens_before
    if details is not None:
        entry["details"] = details
    if from_hook is not None:
        entry["fromHook"] = from_hook
    return entry


def make_branch_summary_entry(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    *,
    from_id: str,
    summary: str,
    details: JsonValue = None,
    from_hook: bool | None = None,
) -> Entry:
    entry = _base("branch_summary", entry_id, parent_id, timestamp)
    entry["fromId"] = from_id
    entry["summary"] = summary
    if details is not None:
        entry["details"] = details
    if from_hook is not None:
        entry["fromHook"] = from_hook
    return entry


def make_custom_entry(
    entry_id: str, parent_id: str | None, timestamp: str, custom_type: str, data: JsonValue = None
) -> Entry:
    entry: Entry = {"type": "custom", "customType": custom_type}
    if data is not None:
        entry["data"] = data
    entry.update(id=entry_id, parentId=parent_id, timestamp=timestamp)
    return entry


def make_custom_message_entry(
    entry_id: str,
    parent_id: str | None,
    timestamp: str,
    *,
    custom_type: str,
    content: str | list[UserContent],
    display: bool,
    details: JsonValue = None,
) -> Entry:
    entry: Entry = {"type": "custom_message", "customType": custom_type, "content": content, "display": display}
    if details is not None:
        entry["details"] = details
    entry.update(id=entry_id, parentId=parent_id, timestamp=timestamp)
    return entry


def make_label_entry(
    entry_id: str, parent_id: str | None, timestamp: str, target_id: str, label: str | None
) -> Entry:
    entry = _base("label", entry_id, parent_id, timestamp)
    entry["targetId"] = target_id
    if label is not None:
        entry["label"] = label
    return entry


def make_session_info_entry(entry_id: str, parent_id: str | None, timestamp: str, name: str | None) -> Entry:
    entry = _base("session_info", entry_id, parent_id, timestamp)
    if name is not None:
        entry["name"] = name
    return entry


def session_name_of(entry: Entry) -> str | None:
    """The name a ``session_info`` entry sets: trimmed, or None when empty (pi 0.73.1 clears)."""
    name = entry.get("name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    return None


def is_assistant_message_entry(entry: Entry) -> bool:
    return entry.get("type") == "message" and (entry.get("message") or {}).get("role") == "assistant"


def starts_the_file(entry: Entry) -> bool:
    """A user or assistant message: from it on the session is worth a file (the user's prompt
    reaches the disk before the request that answers it)."""
    return entry.get("type") == "message" and (entry.get("message") or {}).get("role") in ("user", "assistant")
