"""Replacing a session with a copy of part of it: branched sessions, ``/fork`` and ``--fork``
(pi-behaviour.md §1.6, §13.1).

These work on a ``SessionManager``'s state (this module is its friend, not a public API of its
own). Writing follows deferred persistence with the per-entry bookkeeping of ``persistence.py``,
so a branched session that gets its first message later is written exactly once, header
included (pi's duplicate-header bug, §12 item 11, cannot happen).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pi_tui.core.errors import EntryNotFoundError, SessionError, SessionFormatError
from pi_tui.core.messages import text_of
from pi_tui.core.session import entries as E
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.ids import new_entry_id, session_file_name, uuid7
from pi_tui.core.session.jsonl import read_session_file
from pi_tui.core.session.loading import checked_session

if TYPE_CHECKING:
    from pi_tui.core.session.manager import SessionManager

ForkPosition = Literal["before", "at"]


@dataclass(frozen=True, slots=True)
class ForkResult:
    selected_text: str | None
    """The forked user message's text (``before``), to put back in the editor."""
    session_file: Path | None


def create_branched_session(manager: SessionManager, leaf_id: str) -> Path | None:
    """A new session holding root → ``leaf_id`` without label entries, then one fresh ``label``
    entry per label held on that path (with the original label timestamp, as pi 0.73.1).

    Returns the new file (None for in-memory sessions). Written now if the path has a user or
    assistant message; otherwise with the first one, as any new session.
    """
    path = manager.get_branch(leaf_id)
    if not path:
        raise EntryNotFoundError(leaf_id)
    kept = _without_labels(path)
    ids = {entry["id"] for entry in kept}
    label_entries: list[Entry] = []
    parent_id = kept[-1]["id"] if kept else None
    for target_id, label in manager._labels.labels.items():
        if target_id not in ids:
            continue
        entry_id = new_entry_id(ids)
        ids.add(entry_id)
        timestamp = manager._labels.timestamps.get(target_id) or E.iso_now()
        label_entries.append(E.make_label_entry(entry_id, parent_id, timestamp, target_id, label))
        parent_id = entry_id

    old_file = manager.session_file
    header = E.make_header(uuid7(), E.iso_now(), str(manager.cwd), str(old_file) if old_file else None)
    manager._replace_file(manager._new_file_path(header))
    manager._install(header, kept + label_entries)
    manager._persistence.flush(manager._header, manager._entries)
    return manager.session_file


def _without_labels(path: list[Entry]) -> list[Entry]:
    """The path minus its label entries, re-linked past them.

    Label entries sit on the path (they advance the leaf), so dropping one would leave its child
    pointing at a missing parent; pi does exactly that, and its branched session then projects
    only from the orphan onwards. Here such a child gets a shallow copy whose ``parentId`` is the
    nearest kept ancestor (same keys, same order; the original entry is not touched).
    """
    kept: list[Entry] = []
    previous: str | None = None
    dropped = False
    for entry in path:
        if entry.get("type") == "label":
            dropped = True
            continue
        if dropped and entry.get("parentId") != previous:
            entry = {**entry, "parentId": previous}
        kept.append(entry)
        previous = entry.get("id")
        dropped = False
    return kept


def fork(manager: SessionManager, entry_id: str, position: ForkPosition) -> ForkResult:
    """``before`` (default): fork from a user message, which goes back to the editor; the new
    session ends at its parent (an empty session if it has none). ``at``: copy root → entry."""
    entry = manager.get_entry(entry_id)
    if position == "at":
        if entry is None:
            raise EntryNotFoundError(entry_id)
        return ForkResult(None, create_branched_session(manager, entry_id))
    message = entry.get("message") if entry is not None else None
    if entry is None or entry.get("type") != "message" or not isinstance(message, dict) or message.get("role") != "user":
        raise SessionError("Invalid entry ID for forking")
    selected = text_of(message.get("content", ""))
    parent_id = entry.get("parentId")
    if isinstance(parent_id, str) and manager.get_entry(parent_id) is not None:
        return ForkResult(selected, create_branched_session(manager, parent_id))
    old_file = manager.session_file
    manager.new_session(parent_session=str(old_file) if old_file else None)
    return ForkResult(selected, manager.session_file)


def fork_from(cls: type[SessionManager], source: Path, target_cwd: Path, session_dir: Path) -> SessionManager:
    """``--fork``: every entry of ``source`` in a new session of ``target_cwd``, written now."""
    try:
        parsed = read_session_file(source)
    except OSError:
        parsed = None
    if parsed is None or not parsed.valid:
        raise SessionFormatError(f"Cannot fork: source session file is empty or invalid: {source}")
    checked = checked_session(parsed)
    header = E.make_header(uuid7(), E.iso_now(), str(target_cwd), str(source))
    manager = cls(cwd=target_cwd, session_dir=session_dir, session_file=None)
    manager.load_warnings = checked.warnings
    manager._replace_file(session_dir / session_file_name(str(header["timestamp"]), str(header["id"])))
    manager._install(header, checked.entries)
    manager._persistence.rewrite(manager._header, manager._entries)
    return manager
