"""Replacing a session with a copy of part of it: branched sessions, ``/fork`` and ``--fork``
(pi-behaviour.md §1.6, §13.1) — the planning half.

These functions decide *what* the new session holds (which entries, which fresh label entries,
where a fork starts); ``SessionManager`` installs the result and writes it. They see entries and
labels, never the manager, so the manager imports them and nothing here imports it back.
Writing follows deferred persistence with the per-entry bookkeeping of ``persistence.py``, so a
branched session that gets its first message later is written exactly once, header included
(pi's duplicate-header bug, §12 item 11, cannot happen).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pi_tui.core.errors import EntryNotFoundError, SessionError, SessionFormatError
from pi_tui.core.messages import text_of
from pi_tui.core.session import entries as E
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.ids import new_entry_id
from pi_tui.core.session.loading import CheckedSession, checked_session, read_session
from pi_tui.core.session.tree import LabelState

ForkPosition = Literal["before", "at"]


@dataclass(frozen=True, slots=True)
class ForkResult:
    selected_text: str | None
    """The forked user message's text (``before``), to put back in the editor."""
    session_file: Path | None


@dataclass(frozen=True, slots=True)
class ForkPlan:
    """Where a ``/fork`` starts: ``branch_from`` (copy root → it) or, when None, an empty session."""

    selected_text: str | None
    branch_from: str | None


def branched_entries(path: list[Entry], labels: LabelState) -> list[Entry]:
    """What a session branched at the end of ``path`` holds: the path without label entries,
    then one fresh ``label`` entry per label held on that path (with the original label
    timestamp, as pi 0.73.1)."""
    if not path:
        raise EntryNotFoundError("(empty path)")
    kept = _without_labels(path)
    ids = {entry["id"] for entry in kept}
    label_entries: list[Entry] = []
    parent_id = kept[-1]["id"] if kept else None
    for target_id, label in labels.labels.items():
        if target_id not in ids:
            continue
        entry_id = new_entry_id(ids)
        ids.add(entry_id)
        timestamp = labels.timestamps.get(target_id) or E.iso_now()
        label_entries.append(E.make_label_entry(entry_id, parent_id, timestamp, target_id, label))
        parent_id = entry_id
    return kept + label_entries


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


def fork_plan(entry_id: str, position: ForkPosition, get_entry: Callable[[str], Entry | None]) -> ForkPlan:
    """``before`` (default): fork from a user message, which goes back to the editor; the new
    session ends at its parent (an empty session if it has none). ``at``: copy root → entry."""
    entry = get_entry(entry_id)
    if position == "at":
        if entry is None:
            raise EntryNotFoundError(entry_id)
        return ForkPlan(None, entry_id)
    message = entry.get("message") if entry is not None else None
    if entry is None or entry.get("type") != "message" or not isinstance(message, dict) or message.get("role") != "user":
        raise SessionError("Invalid entry ID for forking")
    selected = text_of(message.get("content", ""))
    parent_id = entry.get("parentId")
    if isinstance(parent_id, str) and get_entry(parent_id) is not None:
        return ForkPlan(selected, parent_id)
    return ForkPlan(selected, None)


def read_fork_source(source: Path) -> CheckedSession:
    """``--fork``: every entry of ``source``, checked, or a clear error naming the file."""
    try:
        read = read_session(source)
    except OSError:
        read = None
    if read is None or not read.parsed.valid:
        raise SessionFormatError(f"Cannot fork: source session file is empty or invalid: {source}")
    return checked_session(read)
