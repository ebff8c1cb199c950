"""The on-disk side of a session: an append-only JSONL file under an OS lock.

Crash safety: every write goes straight to the file descriptor with ``os.write`` (no Python
buffer), one complete line per entry, so a killed process leaves at most one torn last line. If
the file does not end with ``\\n`` when we open it, the next append starts with one, so a torn line
never swallows the next entry.

Exclusion: ``fcntl.flock`` (exclusive, non-blocking) on the session file itself. The lock belongs
to the open file description, so a second ``SessionManager`` on the same file fails too, even in
the same process. pi does not lock; it is unaffected.

Creation is covered too. A file that does not exist yet is created with ``O_EXCL`` (so of two
processes starting the same new path only one creates it) and locked at once; the other then
finds an existing, locked file and is refused. A new session opened at an explicit path
*reserves* it that way when it opens: the file exists, empty, while the session has no assistant
reply yet, and is removed again if it closes still empty (deferred persistence: an abandoned
session leaves no file). After taking a lock the file is checked to still be the one at the
path, so a lock on a file that was just removed is never mistaken for the session's.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from pi_tui.core.errors import SessionLockedError
from pi_tui.core.regular_files import NotRegularFileError, file_kind
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.jsonl import dump_lines

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: no locking, like pi
    fcntl = None  # type: ignore[assignment]


class SessionFile:
    """One session file opened for appending, holding its lock until ``close()``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._needs_newline = False
        self._reserved = False
        """We created the file empty (``reserve``): remove it on close if it is still empty."""

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def open(self, *, create: bool = False) -> None:
        """Open and take the lock. ``create``: the file must not exist yet (``O_EXCL``); raises
        ``FileExistsError`` if another process created it first. Without it a missing file is
        created too (a file of ours that was removed meanwhile)."""
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | (os.O_EXCL if create else 0)
        for _attempt in range(10):
            fd = os.open(self.path, flags | os.O_NONBLOCK, 0o644)
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):  # appending to a FIFO would block once its pipe is full
                os.close(fd)
                raise NotRegularFileError(self.path, file_kind(mode))
            os.set_blocking(fd, True)
            self._lock(fd)
            if create or self._still_at_path(fd):
                break
            os.close(fd)  # locked a file that was removed (an empty reservation): open again
        else:  # pragma: no cover - the path keeps being replaced under us
            raise SessionLockedError(f"Session file {self.path} keeps being replaced by another process")
        self._fd = fd
        size = os.fstat(fd).st_size
        self._needs_newline = size > 0 and os.pread(fd, 1, size - 1) != b"\n"

    def reserve(self) -> None:
        """Create the (missing) file empty and lock it, so no other process can start a session
        at this path; raises ``FileExistsError`` if it exists by now."""
        self.open(create=True)
        self._reserved = True

    def _lock(self, fd: int) -> None:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise SessionLockedError(
                    f"Session file {self.path} is in use by another pi-tui process "
                    "(it holds the lock); close that one or fork the session"
                ) from None

    def _still_at_path(self, fd: int) -> bool:
        try:
            at_path = os.stat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (mine.st_dev, mine.st_ino) == (at_path.st_dev, at_path.st_ino)

    def append(self, entries: list[Entry]) -> None:
        """Append complete lines (opening and locking the file on first use)."""
        if not entries:
            return
        self.open()
        data = dump_lines(entries)
        if self._needs_newline:
            data = b"\n" + data
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        try:
            self._write_all(data)
        except OSError:
            # A full disk can take part of the data: cut it off again, so the caller's retry
            # writes whole lines once (no torn line swallowing the next entry, no duplicates).
            try:
                os.ftruncate(self._fd, size)
            except OSError:
                self._needs_newline = True  # at least start the next write on a fresh line
            raise
        self._needs_newline = False

    def rewrite(self, entries: list[Entry]) -> None:
        """Replace the whole content (migrations, recovery), keeping the lock; synced to disk."""
        self.open()
        assert self._fd is not None
        os.ftruncate(self._fd, 0)
        self._write_all(dump_lines(entries))
        os.fsync(self._fd)
        self._needs_newline = False

    def _write_all(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def close(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        if self._reserved and os.fstat(fd).st_size == 0:
            try:  # still under our lock: nobody else can have written to it
                os.unlink(self.path)
            except OSError:
                pass
        self._reserved = False
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            except OSError:
                pass
        os.close(fd)


def backup_path(path: Path, suffix: str) -> Path:
    """``<file><suffix>``, or ``<file><suffix>.1``, ``.2`` … if that exists already."""
    candidate = path.with_name(path.name + suffix)
    counter = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}{suffix}.{counter}")
        counter += 1
    return candidate


def keep_backup(path: Path, suffix: str) -> Path:
    """Copy ``path`` to a fresh backup name beside it and return that name."""
    target = backup_path(path, suffix)
    shutil.copy2(path, target)
    return target
