"""Opening a session file for a ``SessionManager`` (pi-behaviour.md §1.3, §1.4).

pi rewrites a migrated file in place and replaces a corrupt one with a fresh header. We do the
same so pi can still read the result (v3), but first copy the original next to it:
``<file>.v<N>.bak`` before a migration, ``<file>.corrupt.bak`` before replacing an unreadable
file. Nothing the user had is lost.

Every reader of a session file goes through ``checked_session``: parse, migrate (in memory), then
``validation`` checks every entry, so what the rest of pi-tui sees has pi's shapes and every
problem is a warning naming the file and line. A migration rewrite writes the entries as they
were read, damaged ones included: only the in-memory copy is repaired.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pi_tui.core.errors import SessionError, SessionFormatError
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.jsonl import ParsedSession, read_session_file
from pi_tui.core.session.migrations import header_version, migrate_entries
from pi_tui.core.session.persistence import Persistence
from pi_tui.core.session.store import keep_backup
from pi_tui.core.session.validation import CheckedEntries, Diagnostics, check_entries, check_header
from pi_tui.core.session.well_formed import Admission


@dataclass(slots=True)
class CheckedSession:
    """A parsed, migrated and checked session: ``entries`` are the ones to use (repaired copies
    and placeholders where the file is damaged); the file's own lines are unchanged."""

    header: Entry
    entries: list[Entry]
    warnings: list[str]
    migrated_from: int | None
    index: CheckedEntries
    """``entries`` by id, and which of them are not plain messages (``check_entries``)."""


@dataclass(slots=True)
class ReadSession:
    """A parsed file and what its entries' fast check answered while it was read."""

    parsed: ParsedSession
    well_formed: bytearray
    """``well_formed[i]``: ``parsed.entries[i]`` passed ``well_formed.entry_ok``."""


def read_session(path: Path) -> ReadSession:
    """``read_session_file`` with the entries' fast check run block by block as the file is
    parsed (``well_formed.Admission``), for ``checked_session``. Raises what that raises."""
    admission = Admission()
    parsed = read_session_file(path, admission)
    admission(parsed.entries, len(admission.well_formed))  # a small file, the last lines
    return ReadSession(parsed, admission.well_formed)


def checked_session(read: ReadSession, on_migrated: Callable[[list[Entry], int], None] | None = None) -> CheckedSession:
    """Migrate ``read.parsed`` (a valid session) in memory, then check it.

    ``on_migrated`` receives the migrated raw entries (header first) and the version they had,
    before they are checked, so a rewrite keeps every line that was read.
    """
    parsed = read.parsed
    raw = parsed.entries
    diagnostics = Diagnostics(parsed.path)
    _, problem = header_version(raw[0], raw[1:])
    if problem is not None:
        diagnostics.add(1, "session header", problem)
    migrated_from = migrate_entries(raw)
    if migrated_from is not None and on_migrated is not None:
        on_migrated(raw, migrated_from)
    header = check_header(raw[0], diagnostics, suspect=parsed.lines[0] in parsed.suspect_lines)
    # a migration rewrote the entries after they were admitted: they are checked again
    admitted = memoryview(read.well_formed)[1:] if migrated_from is None and len(read.well_formed) == len(raw) else None
    checked = check_entries(raw[1:], parsed.lines[1:], diagnostics, frozenset(parsed.suspect_lines), admitted)
    return CheckedSession(header, checked.entries, [*parsed.warnings, *diagnostics.warnings()], migrated_from, checked)


@dataclass(slots=True)
class OpenOutcome:
    header: Entry | None = None
    """None: start a new session at the path."""
    entries: list[Entry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    migrated_from: int | None = None
    backup_file: Path | None = None
    rewrite_header: bool = False
    """The file exists but holds no session: write a fresh header into it now (as pi)."""
    index: CheckedEntries | None = None


def load_for_open(path: Path, persistence: Persistence) -> OpenOutcome:
    """Lock ``path``, read it, migrate it; rewrite it when needed. A missing ``path`` is created
    empty and locked (reserved for the new session, see ``store.py``).

    Raises ``SessionLockedError`` when another process holds the file and ``SessionError`` for
    anything the file system refuses (named with the path), never a bare ``OSError``.
    """
    try:
        if not path.exists():
            assert persistence.file is not None
            try:
                persistence.file.reserve()  # the path is ours until this session closes
                return OpenOutcome()
            except FileExistsError:
                pass  # another process created it just now: open it like any existing file
        return _load_locked(path, persistence)
    except OSError as error:
        persistence.close()
        raise SessionError(f"Cannot open session file {path}: {error.strerror or error}") from None


def _load_locked(path: Path, persistence: Persistence) -> OpenOutcome:
    assert persistence.file is not None
    persistence.file.open()  # lock before reading: no one may append while we look
    read = read_session(path)
    parsed = read.parsed
    outcome = OpenOutcome(warnings=parsed.warnings)
    if not parsed.valid:
        outcome.rewrite_header = True
        if parsed.has_content:
            outcome.backup_file = keep_backup(path, ".corrupt.bak")
            outcome.warnings.append(
                f"{path}: started a new session in this file; the original was kept as {outcome.backup_file}"
            )
        return outcome

    def rewrite_migrated(raw: list[Entry], from_version: int) -> None:
        outcome.backup_file = keep_backup(path, f".v{from_version}.bak")
        persistence.rewrite(raw[0], raw[1:])

    checked = checked_session(read, rewrite_migrated)
    outcome.warnings = checked.warnings
    outcome.migrated_from = checked.migrated_from
    outcome.header = checked.header
    outcome.entries = checked.entries
    outcome.index = checked.index
    return outcome


@dataclass(slots=True)
class LoadedSession:
    """A session read without opening it for writing (no lock, the file is never touched)."""

    path: Path
    header: Entry
    entries: list[Entry]
    warnings: list[str]
    migrated_from: int | None


def load_session_readonly(path: Path) -> LoadedSession:
    """Read, validate and migrate (in memory only) a session file for inspection or benchmarks.

    Raises ``FileNotFoundError`` for a missing file, ``SessionFormatError`` for a file that is not
    a session, and ``SessionError`` for other read failures.
    """
    if not path.exists():
        raise FileNotFoundError(f"session file not found: {path}")
    if path.is_dir():
        raise SessionFormatError(f"{path} is a directory, not a session file")
    try:
        read = read_session(path)
    except OSError as error:
        raise SessionError(f"cannot read session file {path}: {error.strerror or error}") from None
    if not read.parsed.valid:
        what = "is empty" if not read.parsed.has_content else "is not a pi session file (no valid session header)"
        raise SessionFormatError(f"{path} {what}")
    checked = checked_session(read)
    return LoadedSession(path, checked.header, checked.entries, checked.warnings, checked.migrated_from)
