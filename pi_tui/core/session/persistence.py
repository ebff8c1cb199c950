"""Deferred persistence with per-entry bookkeeping (pi-behaviour.md §1.4, §12 item 11).

pi writes nothing until the session has an assistant message, then writes everything at once and
appends one line per entry afterwards. pi-tui starts the file at the first *user* message instead
(header, whatever came before, the message): killed during the first request, pi keeps nothing
of the prompt, pi-tui keeps it. pi 0.73.1 opens such a file (a user message without an answer). Its ``flushed`` flag is reset whenever there is no assistant
yet, even when the header is already on disk, which duplicates the header later. Here the file is
append-only and entries are appended in order, so "what is on disk" is exactly a prefix: a header
flag plus a count of tree entries written. Nothing is ever written twice.
"""

from __future__ import annotations

from pathlib import Path

from pi_tui.core.session.entries import Entry
from pi_tui.core.session.store import SessionFile


class Persistence:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.file: SessionFile | None = SessionFile(path) if path is not None else None
        self.header_on_disk = False
        self.entries_on_disk = 0
        self.started = False
        """The session has a user or assistant message, so it is written (``starts_the_file``)."""

    @property
    def enabled(self) -> bool:
        return self.file is not None

    def mark_all_on_disk(self, entry_count: int) -> None:
        """The file already holds the header and the first ``entry_count`` entries."""
        self.header_on_disk = True
        self.entries_on_disk = entry_count

    def flush(self, header: Entry, entries: list[Entry]) -> None:
        """Write whatever is not on disk yet, once the session has a user or assistant message."""
        if self.file is None or not self.started:
            return
        pending: list[Entry] = [] if self.header_on_disk else [header]
        pending.extend(entries[self.entries_on_disk :])
        if not pending:
            return
        if not self.header_on_disk and not self.file.is_open:
            self.file.open(create=True)  # a new file: never write a header into someone else's
        self.file.append(pending)
        self.header_on_disk = True
        self.entries_on_disk = len(entries)

    def rewrite(self, header: Entry, entries: list[Entry]) -> None:
        """Replace the file with header + entries (migration, recovery, immediate writes)."""
        if self.file is None:
            return
        if not self.header_on_disk and not self.file.is_open and not self.file.path.exists():
            self.file.open(create=True)
        self.file.rewrite([header, *entries])
        self.mark_all_on_disk(len(entries))

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
