"""Opening a session file for a ``SessionManager`` (pi-behaviour.md §1.3, §1.4).

pi rewrites a migrated file in place and replaces a corrupt one with a fresh header. We do the
same so pi can still read the result (v3), but first copy the original next to it:
``<file>.v<N>.bak`` before a migration, ``<file>.corrupt.bak`` before replacing an unreadable
file. Nothing the user had is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pi_tui.core.errors import SessionError, SessionFormatError
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.jsonl import read_session_file
from pi_tui.core.session.migrations import migrate_entries
from pi_tui.core.session.persistence import Persistence
from pi_tui.core.session.store import keep_backup


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


def load_for_open(path: Path, persistence: Persistence) -> OpenOutcome:
    """Lock ``path`` (if it exists), read it, migrate it; rewrite it when needed.

    Raises ``SessionLockedError`` when another process holds the file and ``SessionError`` for
    anything the file system refuses (named with the path), never a bare ``OSError``.
    """
    if not path.exists():
        return OpenOutcome()
    try:
        return _load_locked(path, persistence)
    except OSError as error:
        persistence.close()
        raise SessionError(f"Cannot open session file {path}: {error.strerror or error}") from None


def _load_locked(path: Path, persistence: Persistence) -> OpenOutcome:
    assert persistence.file is not None
    persistence.file.open()  # lock before reading: no one may append while we look
    parsed = read_session_file(path)
    outcome = OpenOutcome(warnings=parsed.warnings)
    if not parsed.valid:
        outcome.rewrite_header = True
        if parsed.has_content:
            outcome.backup_file = keep_backup(path, ".corrupt.bak")
            outcome.warnings.append(
                f"{path}: started a new session in this file; the original was kept as {outcome.backup_file}"
            )
        return outcome
    entries = parsed.entries
    outcome.migrated_from = migrate_entries(entries)
    if outcome.migrated_from is not None:
        outcome.backup_file = keep_backup(path, f".v{outcome.migrated_from}.bak")
        persistence.rewrite(entries[0], entries[1:])
    outcome.header = entries[0]
    outcome.entries = entries[1:]
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
        parsed = read_session_file(path)
    except OSError as error:
        raise SessionError(f"cannot read session file {path}: {error.strerror or error}") from None
    if not parsed.valid:
        what = "is empty" if not parsed.has_content else "is not a pi session file (no valid session header)"
        raise SessionFormatError(f"{path} {what}")
    entries = parsed.entries
    migrated_from = migrate_entries(entries)
    return LoadedSession(path, entries[0], entries[1:], parsed.warnings, migrated_from)
