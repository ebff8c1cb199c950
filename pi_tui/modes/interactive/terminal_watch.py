"""The TUI's ways out that are not a key: SIGTERM/SIGINT, SIGHUP, and a terminal that went away.

* SIGTERM (SIGINT from ``kill``): the running commands' process groups are killed at once, the
  session's run is aborted (recorded), and the app exits through Textual, which restores the
  terminal: status 143 (130).
* SIGHUP, or the terminal hung up without one reaching us (pi-tui under ``make``, an SSH drop):
  the terminal is gone, so nothing is drawn or restored. Commands killed, the run aborted and
  recorded, extensions told, the session file closed (its lock released), then ``os._exit(129)``
  within a second, however long any of those steps takes.

Why a watcher thread: a hung-up terminal does not always send SIGHUP to us (only the session
leader gets it: ``make`` when pi-tui runs under ``make run``). Textual's input thread then spins
on the end of input (~70 % CPU; upstream Textual PR #6690) and its writer blocks. The watcher
waits in ``poll`` for POLLHUP/POLLERR on the terminal (no CPU while the terminal lives).

Imported after the first frame (``PiApp``) or on a signal, never before: it pulls in the tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import sys
import threading
from typing import Any

from pi_tui.core.deadline import within
from pi_tui.core.exit_cleanup import exit_now
from pi_tui.modes.shutdown import (
    ABORT_GRACE_SECONDS,
    HARD_EXIT_SECONDS,
    exit_status,
    start_hard_exit_timer,
)
from pi_tui.tools.shell import kill_running_process_groups

HANGUP_EXIT_SECONDS = 1.0
"""The whole way out once the terminal is gone: abort, session_shutdown and close share this."""
_HANGUP_STEP_SECONDS = 0.3


class TerminalWatch:
    """Installed once per real (not headless) app run."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.leaving: int | None = None
        self._tasks: set[asyncio.Future[None]] = set()

    # ------------------------------------------------------------------ signals

    def on_signal(self, signum: int) -> None:
        kill_running_process_groups()
        if signum == signal.SIGHUP:
            self.terminal_lost()
            return
        code = exit_status(signum)
        if self.leaving is not None:  # a second signal: leave now
            self.app.exit(self.leaving, return_code=self.leaving)
            return
        self.leaving = code
        start_hard_exit_timer(code, HARD_EXIT_SECONDS)
        self._spawn(self._leave_gracefully(code))

    async def _leave_gracefully(self, code: int) -> None:
        await _bounded(_abort(self.app.session), ABORT_GRACE_SECONDS)
        kill_running_process_groups()
        self.app.exit(code, return_code=code)  # unmount: extensions' session_shutdown, terminal restored

    # ------------------------------------------------------------------ the terminal is gone

    def terminal_lost(self) -> None:
        """On the event loop: leave without touching the terminal."""
        if self.leaving == exit_status(signal.SIGHUP):
            return
        self.leaving = exit_status(signal.SIGHUP)
        kill_running_process_groups()
        start_hard_exit_timer(self.leaving, HANGUP_EXIT_SECONDS)
        self.app.exiting = True  # events still arriving are not drawn
        self._spawn(self._leave_without_terminal())

    async def _leave_without_terminal(self) -> None:
        session = self.app.session
        await _bounded(_abort(session), _HANGUP_STEP_SECONDS)
        kill_running_process_groups()
        runner = getattr(session, "extensions", None)
        if runner is not None and runner.has_handlers("session_shutdown"):
            await _bounded(runner.emit("session_shutdown", {"reason": "quit"}), _HANGUP_STEP_SECONDS)
        manager = getattr(session, "session_manager", None)
        if manager is not None:
            with contextlib.suppress(Exception):
                manager.close()
        exit_now(exit_status(signal.SIGHUP), within=_HANGUP_STEP_SECONDS)

    def watch_terminal(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the watcher thread on the terminal's file descriptors."""
        fds = sorted({fd for fd in (_fileno(sys.__stdin__), _fileno(sys.__stdout__)) if fd is not None and os.isatty(fd)})
        if not fds:
            return

        def lost() -> None:
            # The loop may be stuck (a write to the dead terminal blocking it): the timer ends the
            # process from here even then; the loop, if alive, gets there first and cleanly.
            kill_running_process_groups()
            start_hard_exit_timer(exit_status(signal.SIGHUP), HANGUP_EXIT_SECONDS + 0.5)
            with contextlib.suppress(RuntimeError):  # the loop is already closed: we are exiting
                loop.call_soon_threadsafe(self.terminal_lost)

        threading.Thread(target=_wait_for_hangup, args=(fds, lost), name="pi-tui-terminal-watch", daemon=True).start()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def install(app: Any) -> TerminalWatch:
    """Handle SIGTERM/SIGINT/SIGHUP on the app's loop and watch the terminal for a hang-up."""
    watch = TerminalWatch(app)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
            loop.add_signal_handler(signum, watch.on_signal, signum)
    watch.watch_terminal(loop)
    return watch


def _wait_for_hangup(fds: list[int], lost: Any) -> None:
    poller = select.poll()
    for fd in fds:
        poller.register(fd, 0)  # no events asked for: POLLHUP/POLLERR/POLLNVAL are always reported
    while True:
        try:
            events = poller.poll()
        except InterruptedError:
            continue
        except OSError:
            break
        if any(mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _fd, mask in events):
            break
    lost()


async def _abort(session: Any) -> None:
    if session is None:
        return
    with contextlib.suppress(Exception):
        session.abort_user_bash()
    await session.abort()


async def _bounded(awaitable: Any, seconds: float) -> None:
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await within(awaitable, seconds)


def _fileno(stream: Any) -> int | None:
    try:
        return int(stream.fileno()) if stream is not None else None
    except (OSError, ValueError, AttributeError):
        return None
