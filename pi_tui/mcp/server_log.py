"""A server's stderr and log messages: into a file per server, never the terminal.

The stderr pipe's read end is drained by the event loop; what comes is appended to
``<agentDir>/mcp-logs/<server>.log`` up to ``LOG_LIMIT_BYTES`` per session (a flood cannot fill
the disk nor slow the TUI), and the last lines are kept for ``/mcp``. Escapes and control
characters are removed from the kept lines (they are shown); the file has the bytes as sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from pathlib import Path
from typing import Any

from pi_tui.core.terminal_text import printable

LOG_LIMIT_BYTES = 2 * 1024 * 1024
STDERR_TAIL_LINES = 40


class ServerLog:
    """The server's stderr (a pipe we read) and its log messages: appended to ``path`` up to
    ``LOG_LIMIT_BYTES`` (a flood cannot fill the disk), the last lines kept for ``/mcp``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._written = 0
        self._dropped = False
        self._partial = ""
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "w", encoding="utf-8", errors="replace")  # noqa: SIM115 (closed in close())
        self._read_fd: int | None = None
        self.write_fd: int | None = None

    def open_pipe(self) -> Any:
        """A text file on a pipe's write end for the child's stderr; the loop reads the other end."""
        if self.write_fd is None:
            read_fd, self.write_fd = os.pipe()
            os.set_blocking(read_fd, False)
            self._read_fd = read_fd
            asyncio.get_running_loop().add_reader(read_fd, self._drain)
        return os.fdopen(os.dup(self.write_fd), "w", encoding="utf-8", errors="replace")

    def _drain(self) -> None:
        assert self._read_fd is not None
        try:
            data = os.read(self._read_fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._stop_reading()
            return
        self.write(data.decode("utf-8", "replace"))

    def write(self, text: str) -> None:
        if self._written < LOG_LIMIT_BYTES:
            chunk = text[: LOG_LIMIT_BYTES - self._written]
            self._file.write(chunk)
            self._file.flush()
            self._written += len(chunk)
        elif not self._dropped:
            self._dropped = True
            self._file.write(f"\n[log limit {LOG_LIMIT_BYTES} bytes reached: further output dropped]\n")
            self._file.flush()
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()[-500:]
        for line in lines[-STDERR_TAIL_LINES:]:
            self.tail.append(printable(line)[:500])

    def _stop_reading(self) -> None:
        if self._read_fd is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._read_fd)
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
            self._read_fd = None

    def reopen(self) -> None:
        """After ``close`` (a server stopped, then reconnected or enabled in ``/mcp``): append."""
        if self._file.closed:
            self._file = open(self.path, "a", encoding="utf-8", errors="replace")  # noqa: SIM115

    def close(self) -> None:
        self._stop_reading()
        if self.write_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.write_fd)
            self.write_fd = None
        with contextlib.suppress(Exception):
            self._file.close()
