"""Leaving on a signal: SIGTERM, SIGHUP and SIGINT end a run cleanly, as pi does.

On the first signal the running commands' process groups are killed at once (a ``bash`` call's
shell and everything it started, SIGKILL, so a child that ignores SIGTERM goes too), then the
mode's ``on_signal`` runs (the session's abort: the aborted reply and tool results are recorded,
which writes the session file), bounded by ``ABORT_GRACE_SECONDS``. Then the mode's main task is
cancelled, so its ``finally`` blocks shut the session down (extensions' ``session_shutdown``, the
file lock released), and the process exits with pi's status: 143 for SIGTERM, 129 for SIGHUP,
130 for SIGINT. A second signal cancels at once; if the way out itself hangs, ``os._exit`` ends
the process ``HARD_EXIT_SECONDS`` after the first signal (the kernel then releases the lock).

That backstop is armed by the signal itself, not by the loop: a loop blocked in a write (a JSON
or RPC client that stopped reading stdout fills the pipe) never runs its signal callbacks, and
pi-tui then ignored SIGTERM for good. The Python-level handler still runs (the write is
interrupted, the handler runs, the write resumes), so it arms ``HardExitWatch``; the loop gets the
signal through its wakeup fd as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Awaitable, Callable

from pi_tui.core.deadline import within
from pi_tui.core.exit_cleanup import exit_now
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
        self._watch: HardExitWatch | None = None

    @property
    def exit_code(self) -> int | None:
        return exit_status(self.signum) if self.signum is not None else None

    def install(self) -> None:
        """Handle the signals for the current task (the mode's main task) on the running loop."""
        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._watch = HardExitWatch(HARD_EXIT_SECONDS)
        for signum in SIGNALS:
            with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):  # not the main thread
                loop.add_signal_handler(signum, self._received, signum)
                # Replaces asyncio's no-op Python handler (the loop still hears the signal) and
                # lets the signal interrupt a blocked write so that this handler runs.
                signal.signal(signum, self._arm_watch)
                signal.siginterrupt(signum, True)
                self._installed.append(signum)

    def trigger(self, signum: int) -> None:
        """Leave as if ``signum`` had arrived (on the loop's thread). For SIGPIPE, which Python
        ignores: the mode's reader went away (its stdout pipe closed), so nobody can see what the
        run does any more — stop it (recorded) rather than run tool calls unwatched."""
        if self.signum is None:
            self._received(signum)

    def _arm_watch(self, signum: int, _frame: object) -> None:
        if self._watch is not None:
            self._watch.arm(exit_status(signum))

    def remove(self) -> None:
        with contextlib.suppress(Exception):
            loop = asyncio.get_running_loop()
            for signum in self._installed:
                loop.remove_signal_handler(signum)
        self._installed.clear()
        if self._watch is not None and self.signum is None:  # no signal came: nothing to guard
            self._watch.stop()

    def _received(self, signum: int) -> None:
        kill_running_process_groups()
        if self.signum is not None:  # a second signal: stop waiting for the abort
            self._cancel_main()
            return
        self.signum = signum
        if self._watch is not None:
            self._watch.arm(exit_status(signum))  # already armed by the handler, unless it was replaced
        self._leaving = asyncio.ensure_future(self._leave())

    async def _leave(self) -> None:
        if self.on_signal is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await within(self.on_signal(), ABORT_GRACE_SECONDS)
        kill_running_process_groups()  # anything the abort itself started
        self._cancel_main()

    def _cancel_main(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()


class HardExitWatch:
    """Ends the process ``seconds`` after it is armed, unless stopped first. Its thread is started
    up front because ``arm`` runs inside a signal handler, which must not start a thread (the
    interrupted code may hold the lock that takes)."""

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._code: int | None = None
        self._armed = threading.Event()
        self._stopped = threading.Event()
        threading.Thread(target=self._run, name="signal-hard-exit", daemon=True).start()

    def arm(self, code: int) -> None:
        if self._code is None:  # the first signal's status; a nested handler does not set() again
            self._code = code
            self._armed.set()

    def stop(self) -> None:
        self._stopped.set()
        self._armed.set()

    def _run(self) -> None:
        self._armed.wait()
        if self._stopped.wait(self._seconds) or self._code is None:
            return
        hard_exit(self._code)


BACKSTOP_CLEANUP_SECONDS = 2.0
"""How long the hard exit waits for ``core/exit_cleanup``'s cleanups: it ends the process regardless."""


def hard_exit(code: int) -> None:
    """Kill the commands again and end the process at once."""
    kill_running_process_groups()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    exit_now(code, within=BACKSTOP_CLEANUP_SECONDS)


def start_hard_exit_timer(code: int, seconds: float) -> None:
    """A backstop for a way out that hangs (a handler that never returns, a blocked write):
    kill the commands again and end the process."""

    timer = threading.Timer(seconds, hard_exit, args=(code,))
    timer.daemon = True
    timer.start()
