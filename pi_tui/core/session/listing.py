"""Session listing and "most recent session" (pi-behaviour.md §1.4, §13.1)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_tui.core.messages import text_of
from pi_tui.core.session.entries import Entry, ms_from_iso, session_name_of
from pi_tui.core.session.jsonl import read_header
from pi_tui.core.session.loading import checked_session, read_session

SUBAGENT_ENTRY_TYPE = "pi-tui:subagent"
"""``customType`` of the entry a ``task`` child's file starts with (``data``: ``agent``,
``description``), so listings can tell a subagent's session from a fork (both have a
``parentSession``); pi 0.73.1 skips ``custom`` entries."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: datetime
    modified: datetime
    message_count: int
    first_message: str
    all_messages_text: str
    file_mtime_ns: int = 0
    """Breaks ties between sessions whose last message has the same millisecond: the file
    written last is the newer one (best effort: many filesystems' mtimes tick only every few
    milliseconds or coarser, so such ties can remain)."""
    subagent: str | None = None
    """``agent: description`` when the file is a ``task`` child's (``SUBAGENT_ENTRY_TYPE``), else None."""

    def to_json(self) -> dict[str, Any]:
        """pi's SessionInfo field names, dates as ISO strings (plus ``subagent`` for a child's)."""
        shape = {
            "path": str(self.path),
            "id": self.id,
            "cwd": self.cwd,
            "name": self.name,
            "parentSessionPath": self.parent_session_path,
            "created": _iso(self.created),
            "modified": _iso(self.modified),
            "messageCount": self.message_count,
            "firstMessage": self.first_message,
        }
        if self.subagent is not None:
            shape["subagent"] = self.subagent
        return shape


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _from_ms(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def _parse_iso(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return ms_from_iso(value)
    except ValueError:
        return None


def _last_activity_ms(entries: list[Entry]) -> int | None:
    """The newest user/assistant message time: ``message.timestamp``, else the entry's."""
    latest: int | None = None
    for entry in entries:
        if entry.get("type") != "message":
            continue
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        stamp = message.get("timestamp")
        if not isinstance(stamp, int | float) or isinstance(stamp, bool):
            stamp = _parse_iso(entry.get("timestamp"))
        if stamp is not None:
            latest = max(latest or 0, int(stamp))
    return latest


def session_info(path: Path) -> SessionInfo | None:
    """Read one file; None if it can't be read or is not a session."""
    try:
        read = read_session(path)
        stat = path.stat()
        mtime = stat.st_mtime
    except OSError:
        return None
    if not read.parsed.valid:
        return None
    checked = checked_session(read)
    header, entries = checked.header, checked.entries
    name: str | None = None
    count = 0
    first: str | None = None
    texts: list[str] = []
    subagent: str | None = None
    for entry in entries:
        kind = entry.get("type")
        if kind == "session_info":
            name = session_name_of(entry)
        elif kind == "custom" and entry.get("customType") == SUBAGENT_ENTRY_TYPE and subagent is None:
            subagent = _subagent_label(entry.get("data"))
        elif kind == "message":
            count += 1
            message = entry.get("message")
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                continue
            text = text_of(message.get("content") or "")
            if message["role"] == "user" and first is None and text:
                first = text
            if text:
                texts.append(text)
    activity = _last_activity_ms(entries)
    created_ms = _parse_iso(header.get("timestamp"))
    if activity:
        modified = _from_ms(activity)
    elif created_ms is not None:
        modified = _from_ms(created_ms)
    else:
        modified = datetime.fromtimestamp(mtime, UTC)
    parent = header.get("parentSession")
    return SessionInfo(
        path=path,
        id=str(header["id"]),
        cwd=str(header.get("cwd") or ""),
        name=name,
        parent_session_path=parent if isinstance(parent, str) else None,
        created=_from_ms(created_ms) if created_ms is not None else datetime.fromtimestamp(mtime, UTC),
        modified=modified,
        message_count=count,
        first_message=first if first is not None else "(no messages)",
        all_messages_text=" ".join(texts),
        file_mtime_ns=stat.st_mtime_ns,
        subagent=subagent,
    )


def _subagent_label(data: Any) -> str:
    values = data if isinstance(data, dict) else {}
    agent, description = values.get("agent"), values.get("description")
    label = f"{agent if isinstance(agent, str) and agent else 'general'}"
    return f"{label}: {' '.join(description.split())}" if isinstance(description, str) and description.strip() else label


def _newest_first(info: SessionInfo) -> tuple[datetime, int]:
    return info.modified, info.file_mtime_ns


def list_sessions(session_dir: Path) -> list[SessionInfo]:
    """Sessions in one folder, newest ``modified`` first."""
    if not session_dir.is_dir():
        return []
    infos = [info for path in session_dir.glob("*.jsonl") if (info := session_info(path)) is not None]
    infos.sort(key=_newest_first, reverse=True)
    return infos


def list_all_sessions(sessions_root: Path) -> list[SessionInfo]:
    """Sessions in every subfolder of ``sessions_root``, newest first."""
    if not sessions_root.is_dir():
        return []
    infos: list[SessionInfo] = []
    for folder in sorted(p for p in sessions_root.iterdir() if p.is_dir()):
        infos.extend(list_sessions(folder))
    infos.sort(key=_newest_first, reverse=True)
    return infos


def find_most_recent_session(session_dir: Path) -> Path | None:
    """The newest ``*.jsonl`` by file mtime whose first line is a valid session header."""
    if not session_dir.is_dir():
        return None
    candidates: list[tuple[float, Path]] = []
    for path in session_dir.glob("*.jsonl"):
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if read_header(path) is not None:
            candidates.append((mtime, path))
    if not candidates:
        return None
    return max(candidates)[1]
