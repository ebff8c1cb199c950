"""What the TUI tells the terminal around the screen: run progress and desktop notifications.

* **Progress** (``terminal.showTerminalProgress``, off by default as in pi): pi's OSC 9;4
  sequences — ``ESC ]9;4;3 BEL`` (indeterminate) when a run or a compaction starts, repeated every
  second as pi does (a terminal drops a stale indicator), and ``ESC ]9;4;0 BEL`` once the session
  is idle again: the run ended, was aborted or failed, and no retry is pending; also when the app
  closes.
* **Notifications** (``terminal.notifications``, ``"auto"`` by default): when a run ends, or a
  dialog waits for an answer, while the terminal does not have the focus (Textual turns on focus
  reporting, ``CSI ?1004h``, and tracks ``FocusIn``/``FocusOut`` as ``App.app_focus``). The
  sequence follows the terminal (``notification_kind``): OSC 777 (Ghostty, WezTerm, rxvt), OSC 9
  (iTerm2), OSC 99 (kitty), else a bell. Inside tmux (``$TMUX``) the OSC is wrapped in tmux's
  DCS passthrough (``ESC Ptmux; … ESC \\``, every ESC doubled; tmux needs
  ``allow-passthrough on``); the bell is left to tmux's own bell handling.
* **notifyCommand**: a command (a list: the program and its arguments, never run by a shell) run
  instead of the sequence, at most ``NOTIFY_COMMAND_SECONDS`` (then killed). The title and the
  body reach it as ``$PI_NOTIFY_TITLE`` / ``$PI_NOTIFY_BODY`` and in place of ``{title}`` /
  ``{body}`` inside its arguments — always as whole argument text, so a message can never add
  an argument or run anything.

Titles and bodies are built from session text (an answer's first line, a dialog's title): control
characters and escape sequences are removed (``clean``) before anything is written.

No Textual here: the app hands in the writer (its driver's ``write``), the focus test and the
session; everything else is plain asyncio, so the tests drive it directly too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pi_tui.core.deadline import within
from pi_tui.core.terminal_text import printable

PROGRESS_ACTIVE = "\x1b]9;4;3\x07"
PROGRESS_CLEAR = "\x1b]9;4;0\x07"
PROGRESS_KEEPALIVE_SECONDS = 1.0
SETTLE_SECONDS = 0.2
"""After ``agent_end``, how long before asking whether the session is idle (a retry or a queued
follow-up starts within it): only then is the progress cleared and the user notified."""
NOTIFY_COMMAND_SECONDS = 5.0
TEXT_LIMIT = 160
APP_TITLE = "pi-tui"

NotifyKind = Literal["osc777", "osc9", "osc99", "bell"]
NOTIFY_CHOICES = ("auto", "osc777", "osc9", "osc99", "bell", "off")

_log = logging.getLogger(__name__)
_PLACEHOLDER = re.compile(r"\{(title|body)\}")


def clean(text: str, limit: int = TEXT_LIMIT) -> str:
    """One line of plain text: no escape sequences or control characters, spaces collapsed, cut
    to ``limit`` characters."""
    line = " ".join(printable(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def notification_kind(env: Mapping[str, str]) -> NotifyKind:
    """Which notification the terminal understands, from what it sets in the environment. Inside
    tmux ``TERM_PROGRAM`` is ``tmux``; the outer terminal's own variables (``KITTY_WINDOW_ID``,
    ``GHOSTTY_RESOURCES_DIR``, ``WEZTERM_PANE``, ``ITERM_SESSION_ID``, ``LC_TERMINAL``) are
    inherited by the panes, so they are asked first."""
    program = env.get("TERM_PROGRAM", "").lower()
    term = env.get("TERM", "").lower()
    if env.get("KITTY_WINDOW_ID") or program == "kitty" or term == "xterm-kitty":
        return "osc99"
    if (program in ("ghostty", "wezterm") or env.get("GHOSTTY_RESOURCES_DIR") or env.get("WEZTERM_PANE")
            or term.startswith("rxvt") or term == "xterm-ghostty"):
        return "osc777"
    if program == "iterm.app" or env.get("ITERM_SESSION_ID") or env.get("LC_TERMINAL", "").lower() == "iterm2":
        return "osc9"
    return "bell"


def notification_sequence(kind: NotifyKind, title: str, body: str) -> str:
    """The bytes of one notification (title and body are cleaned here)."""
    title, body = clean(title), clean(body)
    if kind == "osc777":  # ESC ]777;notify;<title>;<body> BEL: a ';' in the title would end it
        return f"\x1b]777;notify;{title.replace(';', ',')};{body}\x07"
    if kind == "osc9":  # iTerm2: one message; it starts with our title, never with "<digit>;"
        return f"\x1b]9;{title}: {body}\x07"
    if kind == "osc99":  # kitty: the title (d=0: more follows), then the body
        return f"\x1b]99;i=pi-tui:d=0;{title}\x1b\\\x1b]99;i=pi-tui:p=body;{body}\x1b\\"
    return "\x07"


def tmux_wrap(sequence: str) -> str:
    """``sequence`` in tmux's DCS passthrough: ``ESC Ptmux;`` + the sequence with ESC doubled + ST."""
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def for_terminal(sequence: str, env: Mapping[str, str]) -> str:
    """``sequence`` as written from inside tmux when ``$TMUX`` is set (a bell is tmux's own)."""
    if env.get("TMUX") and sequence != "\x07":
        return tmux_wrap(sequence)
    return sequence


def command_argv(command: Sequence[str], title: str, body: str) -> list[str]:
    """``notifyCommand`` with ``{title}`` / ``{body}`` replaced inside its arguments (one pass,
    so a title holding ``{body}`` stays text)."""
    values = {"title": title, "body": body}
    return [_PLACEHOLDER.sub(lambda m: values[m.group(1)], part) for part in command]


async def run_notify_command(command: Sequence[str], title: str, body: str, *,
                             seconds: float = NOTIFY_COMMAND_SECONDS, env: Mapping[str, str] | None = None) -> int | None:
    """Run ``notifyCommand`` (no shell, no terminal: stdin/stdout/stderr closed, its own process
    group); returns its exit status, None when it failed to start or ran out of time (then its
    group is killed). Failures are logged, never raised: a notification must not break a run."""
    title, body = clean(title), clean(body)
    argv = command_argv(command, title, body)
    child_env = {**(env if env is not None else os.environ), "PI_NOTIFY_TITLE": title, "PI_NOTIFY_BODY": body}
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL, env=child_env, start_new_session=True)
    except (OSError, ValueError) as err:
        _log.warning("notifyCommand %r could not start: %s", argv[:1], err)
        return None
    try:
        return await within(process.wait(), seconds)
    except (TimeoutError, asyncio.CancelledError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await within(process.wait(), 1.0)
        _log.warning("notifyCommand %r ran longer than %.0f s and was killed", argv[:1], seconds)
        return None


class TerminalSignals:
    """Progress and notifications for one app (see the module docstring).

    ``write`` puts bytes on the terminal; ``focused`` says whether it has the focus; ``settings``
    is read at each use (``/settings`` and ``/reload`` apply at once); ``is_idle`` is the
    session's ``is_idle``.
    """

    def __init__(self, write: Callable[[str], None], *, focused: Callable[[], bool], settings: Callable[[], Any],
                 is_idle: Callable[[], bool], env: Mapping[str, str] | None = None) -> None:
        self._write = write
        self._focused = focused
        self._settings = settings
        self._is_idle = is_idle
        self.env: Mapping[str, str] = env if env is not None else os.environ
        self.progress_shown = False
        self._keepalive: asyncio.TimerHandle | None = None
        self._settle: asyncio.TimerHandle | None = None
        self._ended: dict[str, Any] | None = None
        """The last ``agent_end`` not yet told: the user hears of it once the session is idle."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    # ------------------------------------------------------------------ settings

    def _setting(self, path: str, default: Any) -> Any:
        settings = self._settings()
        getter = getattr(settings, "get", None)
        return getter(path, default) if callable(getter) else default

    def progress_enabled(self) -> bool:
        return self._setting("terminal.showTerminalProgress", False) is True

    def notify_mode(self) -> str:
        mode = self._setting("terminal.notifications", "auto")
        return mode if mode in NOTIFY_CHOICES else "auto"

    # ------------------------------------------------------------------ session events

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "agent_start":
            self._ended = None
        if kind in ("agent_start", "compaction_start", "auto_retry_start"):
            self._cancel_settle()
            self.set_progress(True)
        elif kind in ("agent_end", "compaction_end", "auto_retry_end"):
            if kind == "agent_end":
                self._ended = event
            self._schedule_settle()

    def _schedule_settle(self) -> None:
        self._cancel_settle()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._settle = loop.call_later(SETTLE_SECONDS, self._settled)

    def _cancel_settle(self) -> None:
        if self._settle is not None:
            self._settle.cancel()
            self._settle = None

    def _settled(self) -> None:
        self._settle = None
        try:
            idle = self._is_idle()
        except Exception:
            idle = True
        if not idle:  # a retry, a follow-up or a compaction goes on: its own end settles again
            return
        self.set_progress(False)
        ended, self._ended = self._ended, None
        if ended is not None:
            body = run_summary(ended)
            if body is not None:
                self.notify(body)

    def dialog_waiting(self, title: str) -> None:
        """A dialog asks the user something (a permission, an extension's question)."""
        self.notify(f"Waiting for your answer: {title}" if clean(title) else "Waiting for your answer")

    # ------------------------------------------------------------------ progress

    def set_progress(self, active: bool) -> None:
        if self._closed:
            return
        if active:
            if not self.progress_enabled():
                return
            self._emit(PROGRESS_ACTIVE)
            self.progress_shown = True
            if self._keepalive is None:
                self._start_keepalive()
            return
        self._stop_keepalive()
        if self.progress_shown:
            self.progress_shown = False
            self._emit(PROGRESS_CLEAR)

    def _start_keepalive(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return

        def again() -> None:
            self._keepalive = None
            if self.progress_shown and not self._closed:
                self._emit(PROGRESS_ACTIVE)
                self._start_keepalive()

        self._keepalive = loop.call_later(PROGRESS_KEEPALIVE_SECONDS, again)

    def _stop_keepalive(self) -> None:
        if self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None

    # ------------------------------------------------------------------ notifications

    def notify(self, body: str, title: str = APP_TITLE) -> bool:
        """Notify unless the terminal has the focus or notifications are off; True when sent."""
        mode = self.notify_mode()
        if self._closed or mode == "off":
            return False
        try:
            focused = self._focused()
        except Exception:
            focused = True
        if focused:
            return False
        command = self._setting("notifyCommand", None)
        if isinstance(command, list) and command and all(isinstance(p, str) for p in command):
            self._spawn(run_notify_command(command, title, body, env=self.env))
            return True
        kind: NotifyKind = notification_kind(self.env) if mode == "auto" else mode  # type: ignore[assignment]
        self._emit(notification_sequence(kind, title, body))
        return True

    def _spawn(self, coro: Any) -> None:
        try:
            task = asyncio.get_running_loop().create_task(coro)
        except RuntimeError:
            coro.close()
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ writing

    def _emit(self, sequence: str) -> None:
        try:
            self._write(for_terminal(sequence, self.env))
        except Exception as err:  # the terminal is gone or closing: nothing to tell it
            _log.debug("terminal signal not written: %s", err)

    def close(self) -> None:
        """The app closes: clear the progress indicator; nothing is written afterwards."""
        self._cancel_settle()
        self.set_progress(False)
        self._closed = True
        for task in list(self._tasks):
            task.cancel()


def run_summary(event: Mapping[str, Any]) -> str | None:
    """The notification body for a finished run: the answer's first line, or the error; None for
    a run the user aborted (they are there)."""
    messages = [m for m in event.get("messages") or [] if isinstance(m, Mapping) and m.get("role") == "assistant"]
    last = messages[-1] if messages else None
    if last is None:
        return "Done"
    stop = last.get("stopReason")
    if stop == "aborted":
        return None
    if stop == "error":
        return "Failed: " + clean(str(last.get("errorMessage") or "the model call failed"))
    texts = [b.get("text", "") for b in last.get("content") or [] if isinstance(b, Mapping) and b.get("type") == "text"]
    first = next((line for line in "\n".join(str(t) for t in texts).splitlines() if line.strip()), "")
    return "Done: " + clean(first) if first.strip() else "Done"
