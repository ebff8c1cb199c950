"""The process groups of running commands die with pi-tui, however pi-tui dies.

The ways out pi-tui sees — a signal, the terminal gone, an exception — kill the running commands'
groups itself (``shell.kill_running_process_groups``). SIGKILL, the OOM killer or a crash in C
give it no such moment: the shell and its children ran on, orphaned (a ``make test``, a server,
for hours). So the first command also starts the *reaper*, a few lines of POSIX sh: pi-tui tells
it each group that starts (``+PGID``) and ends (``-PGID``) through a pipe only pi-tui holds (the
write end is close-on-exec, so no command inherits it). However pi-tui ends, the kernel closes
that pipe; the reaper reads end-of-file, SIGKILLs the groups still listed and exits. It runs in a
session of its own, so a signal to pi-tui's process group (Ctrl+C, a hang-up) does not end it
first. Best effort: if it cannot be started, commands run as before. One window stays: a group
is told to the reaper once its shell has started (``subprocess_exec`` returned), so a SIGKILL in
those first milliseconds still orphans it; the reaper itself is started before the first
command, not in that window.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading

_SCRIPT = r"""
groups=" "
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups${line#+} " ;;
    -*) gone=${line#-}; kept=" "
        for g in $groups; do [ "$g" = "$gone" ] || kept="$kept$g "; done
        groups=$kept ;;
  esac
done
for g in $groups; do kill -9 "-$g" 2>/dev/null; done
"""


class _Reaper:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._owner = 0
        """The pid that started it: a forked child must not write into its parent's reaper."""

    def _start(self) -> int | None:
        read_end, write_end = os.pipe()  # both close-on-exec: only the reaper gets read_end
        try:
            subprocess.Popen(["/bin/sh", "-c", _SCRIPT], stdin=read_end, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
        except OSError:
            os.close(write_end)
            return None
        finally:
            os.close(read_end)
        os.set_blocking(write_end, False)  # a stopped reaper must never stall a command's start
        return write_end

    def ensure_started(self) -> None:
        with self._lock:
            self._ensure_started()

    def _ensure_started(self) -> None:
        if self._fd is None or self._owner != os.getpid():
            self._fd, self._owner = self._start(), os.getpid()

    def tell(self, line: str) -> None:
        with self._lock:
            self._ensure_started()
            if self._fd is None:
                return
            try:
                os.write(self._fd, line.encode("ascii"))
            except OSError:  # gone or full: best effort
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None


_REAPER = _Reaper()


def start_reaper() -> None:
    """Before a command starts: the reaper runs by the time its group is told."""
    _REAPER.ensure_started()


def group_started(pgid: int) -> None:
    """``pgid`` now runs a command: killed if pi-tui dies before ``group_ended``."""
    _REAPER.tell(f"+{pgid}\n")


def group_ended(pgid: int) -> None:
    _REAPER.tell(f"-{pgid}\n")
