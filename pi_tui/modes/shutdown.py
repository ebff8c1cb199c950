"""Leaving on a signal: SIGTERM, SIGHUP and SIGINT end a run cleanly, as pi does.

On the first signal the running commands' process groups are killed at once (a ``bash`` call's
shell and everything it started, SIGKILL, so a child that ignores SIGTERM goes too), then the
mode's ``on_signal`` runs (the session's abort: the aborted reply and tool results are recorded,
which writes the session file), bounded by ``ABORT_GRACE_SECONDS``. Then the mode's main task is
cancelled, so its ``finally`` blocks shut the session down (extensions' ``session_shutdown``, the
file lock released), and the process exits with pi's status: 143 for SIGTERM, 129 for SIGHUP,
130 for SIGINT. A second signal cancels at once; if the way out itself hangs, ``os._exit`` ends
the process ``HARD_EXIT_SECONDS`` after the first signal (the kernel then releases the lock).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable

from pi_tui.tools.shell import kill_running_process_groups

SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
ABORT_GRACE_SECONDS = 1.0
HARD_EXIT_SECONDS = 4.0


def exit_status(signum: int) -> int:
    """The shell's convention, as pi: 128 + the signal number (143, 129, 130)."""
    return 128 + signum


class SignalShutdown:
    """Signal handlers for one ``asyncio.run`` of a non-interactive mode (print, JSON, RPC)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.on_signal: Callable[[], Awaitable[object]] | None = None
        """Set by the mode once its session exists: what to do before the main task is cancelled."""
        self._task: asyncio.Task[object] | None = None
        self._installed: list[int] = []
        self._leaving: asyncio.Future[None] | None = None

    @property
    def exit_code(self) -> int | None:
        return exit_status(self.signum) if self.signum is not None else None

    def install(self) -> None:
        """Handle the signals for the current task (the mode's main task) on the running loop."""
        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        for signum in SIGNALS:
            with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):  # not the main thread
                loop.add_signal_handler(signum, self._received, signum)
                self._installed.append(signum)

    def remove(self) -> None:
        with contextlib.suppress(Exception):
            loop = asyncio.get_running_loop()
            for signum in self._installed:
                loop.remove_signal_handler(signum)
        self._installed.clear()

    def _received(self, signum: int) -> None:
        kill_running_process_groups()
        if self.signum is not None:  # a second signal: stop waiting for the abort
            self._cancel_main()
            return
        self.signum = signum
        start_hard_exit_timer(exit_status(signum), HARD_EXIT_SECONDS)
        self._leaving = asyncio.ensure_future(self._leave())

    async def _leave(self) -> None:
        if self.on_signal is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self.on_signal(), ABORT_GRACE_SECONDS)
        kill_running_process_groups()  # anything the abort itself started
        self._cancel_main()

    def _cancel_main(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()


def start_hard_exit_timer(code: int, seconds: float) -> None:
    """A backstop for a way out that hangs (a handler that never returns, a blocked write):
    kill the commands again and end the process."""

    def hard_exit() -> None:
        kill_running_process_groups()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)

    timer = threading.Timer(seconds, hard_exit)
    timer.daemon = True
    timer.start()
