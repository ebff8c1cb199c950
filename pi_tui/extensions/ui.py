"""``ctx.ui``: dialogs and status texts for extensions (pi-behaviour.md §9.4, §10; docs/extensions.md).

The mode that talks to a person provides the dialogs through the small ``ExtensionUI`` protocol
below (the interactive TUI shows modal screens, RPC mode sends ``extension_ui_request`` frames)
and hands it to the session (``AgentSession.set_extension_ui``). Extensions never see that
object: they get an ``ExtensionUIContext`` (``ctx.ui``), which

* answers at once with the cancelled value (``None``, or ``False`` for ``confirm``) when the mode
  has no UI (print and JSON mode, an SDK session without one), so a handler never hangs there;
* applies the optional ``timeout_s`` (pi's ``timeout`` in ms): when it runs out the dialog closes
  and the cancelled value is returned (a UI that queues dialogs counts it from when the dialog
  is shown, see ``ExtensionUI``);
* stops the handler time limit (``extensionHandlerTimeoutMs``) while a person is answering: a
  slow answer is not a stuck handler.

This module imports no mode: the layering is modes → session → extensions.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Literal, Protocol, TypeVar, runtime_checkable

from pi_tui.core.errors import ExtensionError

NotifyLevel = Literal["info", "warning", "error"]
T = TypeVar("T")


@runtime_checkable
class ExtensionUI(Protocol):
    """What a mode implements to show extension dialogs.

    A dialog method returns the answer, or ``None`` when the person cancelled (Esc, or the RPC
    client answered ``cancelled``). ``timeout_s`` is for display (a countdown, pi's RPC
    ``timeout`` field): ``ExtensionUIContext`` enforces it by cancelling the awaited call, so an
    implementation must close its dialog when cancelled. An implementation that queues dialogs
    (shows one at a time) sets the optional attribute ``enforces_timeout = True`` instead and
    answers ``None`` itself ``timeout_s`` after the dialog is shown: a dialog waiting behind
    another must not run out before anyone has seen it.
    """

    async def select(self, title: str, options: Sequence[str], *, timeout_s: float | None) -> str | None: ...

    async def confirm(self, title: str, message: str, *, timeout_s: float | None) -> bool | None: ...

    async def input(self, title: str, placeholder: str | None, *, timeout_s: float | None) -> str | None: ...

    async def editor(self, title: str, prefill: str, *, timeout_s: float | None) -> str | None: ...

    def set_status(self, key: str, text: str | None) -> None:
        """Show ``text`` as the status of ``key`` (one short line); ``None`` removes it."""


# --------------------------------------------------------------------------- the handler clock


class HandlerClock:
    """The time limit of one running handler (``HandlerDispatcher`` sets it), which dialogs stop
    while they wait for a person. Pauses nest: the limit resumes when the last dialog closes,
    with the time that was left when the first one opened."""

    def __init__(self, deadline: asyncio.Timeout) -> None:
        self._deadline = deadline
        self._paused = 0
        self._remaining: float | None = None

    def pause(self) -> None:
        self._paused += 1
        if self._paused > 1:
            return
        when = self._deadline.when()
        if when is None:
            return
        with contextlib.suppress(RuntimeError):  # the handler has already finished
            self._remaining = when - asyncio.get_running_loop().time()
            self._deadline.reschedule(None)

    def resume(self) -> None:
        self._paused -= 1
        if self._paused > 0 or self._remaining is None:
            return
        remaining, self._remaining = self._remaining, None
        with contextlib.suppress(RuntimeError):
            self._deadline.reschedule(asyncio.get_running_loop().time() + max(remaining, 0.0))


CURRENT_HANDLER_CLOCK: contextvars.ContextVar[HandlerClock | None] = contextvars.ContextVar(
    "pi_extension_handler_clock", default=None
)
"""Set by the dispatcher around each timed handler call (the handler runs in the same task)."""


@contextlib.contextmanager
def handler_clock_paused() -> Iterator[None]:
    clock = CURRENT_HANDLER_CLOCK.get()
    if clock is None:
        yield
        return
    clock.pause()
    try:
        yield
    finally:
        clock.resume()


# --------------------------------------------------------------------------- ctx.ui


def _check_timeout(timeout_s: float | None) -> float | None:
    if timeout_s is None:
        return None
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not math.isfinite(timeout_s) \
            or timeout_s <= 0:
        raise ExtensionError(f"ctx.ui: timeout_s must be a positive number of seconds, not {timeout_s!r}")
    return float(timeout_s)


def _check_text(what: str, value: object) -> str:
    if not isinstance(value, str):
        raise ExtensionError(f"ctx.ui: {what} must be a string, not {type(value).__name__}")
    return value


class ExtensionUIContext:
    """``ctx.ui`` as a handler or command sees it (see the module docstring for the rules)."""

    def __init__(self, ui: ExtensionUI | None, notify: Callable[[str, NotifyLevel], None]) -> None:
        self._ui = ui
        self._notify = notify

    @property
    def available(self) -> bool:
        """True when dialogs reach a person (the same as ``ctx.has_ui``)."""
        return self._ui is not None

    async def select(self, title: str, options: Sequence[str], *, timeout_s: float | None = None) -> str | None:
        """One of ``options``, or None when cancelled, timed out or without a UI."""
        _check_text("select title", title)
        if isinstance(options, str) or not isinstance(options, Sequence):
            raise ExtensionError(f"ctx.ui.select: options must be a list of strings, not {type(options).__name__}")
        choices = [_check_text(f"select options[{i}]", option) for i, option in enumerate(options)]
        timeout = _check_timeout(timeout_s)
        ui = self._ui
        if ui is None or not choices:
            return None
        answer = await self._ask(lambda: ui.select(title, choices, timeout_s=timeout), timeout)
        return answer if answer in choices else None

    async def confirm(self, title: str, message: str = "", *, timeout_s: float | None = None) -> bool:
        """True only when the person said yes; False when they said no, cancelled, the time ran
        out, or there is no UI."""
        _check_text("confirm title", title)
        _check_text("confirm message", message)
        timeout = _check_timeout(timeout_s)
        ui = self._ui
        if ui is None:
            return False
        return await self._ask(lambda: ui.confirm(title, message, timeout_s=timeout), timeout) is True

    async def input(self, title: str, placeholder: str | None = None, *,
                    timeout_s: float | None = None) -> str | None:
        """One line of text (possibly empty), or None when cancelled, timed out or without a UI."""
        _check_text("input title", title)
        if placeholder is not None:
            _check_text("input placeholder", placeholder)
        timeout = _check_timeout(timeout_s)
        ui = self._ui
        if ui is None:
            return None
        answer = await self._ask(lambda: ui.input(title, placeholder, timeout_s=timeout), timeout)
        return answer if isinstance(answer, str) else None

    async def editor(self, title: str, prefill: str = "", *, timeout_s: float | None = None) -> str | None:
        """Multi-line text starting from ``prefill``, or None when cancelled, timed out or without
        a UI."""
        _check_text("editor title", title)
        _check_text("editor prefill", prefill)
        timeout = _check_timeout(timeout_s)
        ui = self._ui
        if ui is None:
            return None
        answer = await self._ask(lambda: ui.editor(title, prefill, timeout_s=timeout), timeout)
        return answer if isinstance(answer, str) else None

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """Show a message (``info``, ``warning``, ``error``); in every mode (a ``notify`` session
        event: print mode logs it, JSON and RPC clients receive it)."""
        if level not in ("info", "warning", "error"):
            raise ExtensionError(f"ctx.ui.notify: level must be info, warning or error, not {level!r}")
        self._notify(str(message), level)

    def set_status(self, key: str, text: str | None) -> None:
        """Show ``text`` under ``key`` in the footer (one line; ``None`` or ``""`` removes it).
        Without a UI it does nothing."""
        _check_text("status key", key)
        if text is not None:
            _check_text("status text", text)
        if self._ui is not None:
            self._ui.set_status(key, text or None)

    async def _ask(self, show: Callable[[], Awaitable[T | None]], timeout_s: float | None) -> T | None:
        with handler_clock_paused():
            if timeout_s is None or getattr(self._ui, "enforces_timeout", False) is True:
                return await show()
            try:
                async with asyncio.timeout(timeout_s):
                    return await show()
            except TimeoutError:
                return None
