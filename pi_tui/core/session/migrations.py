"""Session format migrations v1 → v2 → v3 (pi-behaviour.md §1.3).

They mutate the loaded dicts in place, as pi does, so new keys land where pi's would (``id`` and
``parentId`` after the existing fields of a v1 entry). Running them on a v3 file changes nothing.
The caller decides what to do with the file; ``SessionManager`` keeps a backup before rewriting.
"""

from __future__ import annotations

from pi_tui.core.session.entries import CURRENT_SESSION_VERSION, Entry
from pi_tui.core.session.ids import new_entry_id


def file_version(header: Entry) -> int:
    version = header.get("version")
    return version if isinstance(version, int) else 1


def migrate_v1_to_v2(entries: list[Entry]) -> None:
    """Give every entry an 8-hex id chained by ``parentId``; index-based compaction → id-based."""
    ids: set[str] = set()
    previous: str | None = None
    for entry in entries:
        if entry.get("type") == "session":
            entry["version"] = 2
            continue
        entry_id = new_entry_id(ids)
        ids.add(entry_id)
        entry["id"] = entry_id
        entry["parentId"] = previous
        previous = entry_id
        if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
            index = entry["firstKeptEntryIndex"]
            # The index counts the header too (0 = header); it always points backwards, so the
            # target has its new id already.
            if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(entries):
                target = entries[index]
                if target.get("type") != "session" and "id" in target:
                    entry["firstKeptEntryId"] = target["id"]
            del entry["firstKeptEntryIndex"]


def migrate_v2_to_v3(entries: list[Entry]) -> None:
    """Header version 3; the old ``hookMessage`` role is now ``custom``."""
    for entry in entries:
        if entry.get("type") == "session":
            entry["version"] = 3
            continue
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"


def migrate_entries(entries: list[Entry]) -> int | None:
    """Bring ``entries`` (header first) to the current version.

    Returns the version the file had if anything was migrated, else None.
    """
    if not entries:
        return None
    original = file_version(entries[0])
    if original >= CURRENT_SESSION_VERSION:
        return None
    if original < 2:
        migrate_v1_to_v2(entries)
    if original < 3:
        migrate_v2_to_v3(entries)
    return original
