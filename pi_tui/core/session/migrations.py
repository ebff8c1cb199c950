"""Session format migrations v1 → v2 → v3 (pi-behaviour.md §1.3).

They mutate the loaded dicts in place, as pi does, so new keys land where pi's would (``id`` and
``parentId`` after the existing fields of a v1 entry). Running them on a v3 file changes nothing.
The caller decides what to do with the file; ``SessionManager`` keeps a backup before rewriting.
"""

from __future__ import annotations

from pi_tui.core.session.entries import CURRENT_SESSION_VERSION, Entry
from pi_tui.core.session.ids import new_entry_id
from pi_tui.core.session.message_checks import describe


def header_version(header: Entry, entries: list[Entry] | None = None) -> tuple[int, str | None]:
    """The version to migrate from, and a problem to report (or None).

    A missing version is 1 (pi), unless the entries have ids: v1 entries have none, and migrating
    from v1 would re-chain every entry in file order, flattening the tree (pi does that); such a
    file is read as v2. A version that is not a whole number is a damaged header, read as the
    current version when the entries have ids (else as v1).
    """
    has_ids = any(type(e.get("id")) is str for e in (entries or [])[:50])
    stated = header.get("version")
    if "version" not in header or (type(stated) in (int, float) and stated == 1):
        if has_ids:  # v1 entries have no ids: re-chaining these would flatten the tree
            said = f"version is {header['version']}" if "version" in header else "version is missing"
            return 2, f"{said}, but the entries have ids (version 2 or later); read as 2"
        return 1, None
    version = header["version"]
    if type(version) is float and version.is_integer():
        version = int(version)
    if type(version) is not int or version < 1:
        guess = CURRENT_SESSION_VERSION if has_ids else 1
        return guess, f"version is {describe(header['version'])}, expected a whole number; read as {guess}"
    if version > CURRENT_SESSION_VERSION:
        return version, (f"version {version} is newer than this pi-tui reads ({CURRENT_SESSION_VERSION}); "
                         "read as version 3, entries of unknown types are kept as they are")
    return version, None


def file_version(header: Entry, entries: list[Entry] | None = None) -> int:
    return header_version(header, entries)[0]


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
    original = file_version(entries[0], entries[1:])
    if original >= CURRENT_SESSION_VERSION:
        return None
    if original < 2:
        migrate_v1_to_v2(entries)
    if original < 3:
        migrate_v2_to_v3(entries)
    return original
