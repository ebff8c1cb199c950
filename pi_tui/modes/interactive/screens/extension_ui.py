"""``ExtensionUI`` (pi_tui/extensions/ui.py) for the interactive TUI.

The session runs on the app's event loop (the chat screen's workers), so a dialog is awaited in
place: the modal screen is pushed and the extension's coroutine waits on a future that the
screen's result resolves. One dialog is shown at a time (tools run in parallel may ask together;
the second waits for the first answer), so the extension's timeout is counted here, from when
the dialog is shown, i.e. mounted (``enforces_timeout``): a dialog queued behind another does not
run out unseen. When the wait is cancelled (an abort) or the time is up, the dialog is closed.

Status texts (``ctx.ui.set_status``) are kept here, sorted by key when shown; the footer reads
them through ``session_view.footer_data`` and ``on_status`` asks it to redraw.

The screens module (Textual's text area and friends) is imported on the first dialog, not when
the app attaches the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any


class TuiExtensionUI:
    enforces_timeout = True
    """The timeout starts when the dialog is shown, not while it waits for an earlier one."""

    def __init__(self, app: Any, *, on_status: Callable[[], None] | None = None,
                 on_dialog: Callable[[str], None] | None = None) -> None:
        self._app = app
        self._on_status = on_status
        self._on_dialog = on_dialog
        """Told each dialog's title when it is shown (a desktop notification if the user is away)."""
        self._one_at_a_time = asyncio.Lock()
        self.statuses: dict[str, str] = {}

    async def select(self, title: str, options: Sequence[str], *, timeout_s: float | None) -> str | None:
        from pi_tui.modes.interactive.screens.extension_dialogs import ExtensionSelectScreen

        answer = await self._show(lambda: ExtensionSelectScreen(title, options, timeout_s=timeout_s), timeout_s, title)
        return answer if isinstance(answer, str) else None

    async def confirm(self, title: str, message: str, *, timeout_s: float | None) -> bool | None:
        from pi_tui.modes.interactive.screens.extension_dialogs import ExtensionConfirmScreen

        answer = await self._show(lambda: ExtensionConfirmScreen(title, message, timeout_s=timeout_s), timeout_s, title)
        return answer if isinstance(answer, bool) else None

    async def input(self, title: str, placeholder: str | None, *, timeout_s: float | None) -> str | None:
        from pi_tui.modes.interactive.screens.extension_dialogs import ExtensionInputScreen

        answer = await self._show(lambda: ExtensionInputScreen(title, placeholder, timeout_s=timeout_s), timeout_s, title)
        return answer if isinstance(answer, str) else None

    async def editor(self, title: str, prefill: str, *, timeout_s: float | None) -> str | None:
        from pi_tui.modes.interactive.screens.extension_dialogs import ExtensionEditorScreen

        answer = await self._show(lambda: ExtensionEditorScreen(title, prefill, timeout_s=timeout_s), timeout_s, title)
        return answer if isinstance(answer, str) else None

    def set_status(self, key: str, text: str | None) -> None:
        from pi_tui.core.terminal_text import printable

        # One footer line of plain text: newlines, tabs and terminal escapes would break it.
        line = " ".join(printable(text).split()) if text else ""
        if line:
            self.statuses[key] = line
        else:
            self.statuses.pop(key, None)
        if self._on_status is not None:
            self._on_status()

    async def show_screen(self, make_screen: Callable[[], Any], title: str = "") -> Any:
        """Another modal dialog (an MCP elicitation), in turn with these; its dismiss value."""
        return await self._show(make_screen, None, title)

    async def _show(self, make_screen: Callable[[], Any], timeout_s: float | None, title: str = "") -> Any:
        async with self._one_at_a_time:
            screen = make_screen()
            answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

            def answered(value: Any) -> None:
                if not answer.done():
                    answer.set_result(value)

            self._app.push_screen(screen, callback=answered)
            if self._on_dialog is not None:
                try:
                    self._on_dialog(title)
                except Exception:  # a notification must never keep the question from being asked
                    pass
            try:
                async with asyncio.timeout(None) as time_left:
                    if timeout_s is not None:
                        # From when it is on screen, as its countdown (set when it mounts) says.
                        await screen.displayed.wait()
                        time_left.reschedule(asyncio.get_running_loop().time() + timeout_s)
                    return await answer
            except TimeoutError:
                return None
            finally:
                # The time is up or the wait was cancelled (an abort): close the dialog.
                unanswered = answer.cancelled() or not answer.done()
                if unanswered and self._app.screen is screen:
                    screen.dismiss(None)
