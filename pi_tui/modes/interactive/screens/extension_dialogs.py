"""The modal dialogs behind an extension's ``ctx.ui`` (select, confirm, input, editor).

Each returns its answer through ``dismiss``; ``None`` means cancelled (Esc). When the extension
gave a timeout the dialog shows the seconds left; closing it when the time is up is the job of
``ExtensionUIContext`` (pi_tui/extensions/ui.py), which cancels the wait.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static, TextArea

from pi_tui.core.terminal_text import printable
from pi_tui.modes.interactive.screens.row_list import (
    RowList,
    RowPickerActions,
    row_navigation_bindings,
)


class _ExtensionDialog(ModalScreen[Any]):
    """Shared parts: a bold title, a help line, and the countdown when there is a timeout."""

    CSS_PATH = "extension_dialogs.tcss"
    HELP = ""

    def __init__(self, title: str, *, timeout_s: float | None = None) -> None:
        super().__init__()
        self._title = title
        self._timeout_s = timeout_s
        self._deadline: float | None = None
        self.displayed = asyncio.Event()
        """Set once mounted: the person can see it, and its time starts (a loaded machine can
        take a good part of a second between asking for a dialog and showing it)."""

    def title_widget(self) -> Static:
        return Static(Content(printable(self._title)), classes="ext-title")

    def help_widget(self) -> Static:
        return Static(self.HELP, classes="ext-help", id="ext-help")

    def on_mount(self) -> None:
        if self._timeout_s is not None:
            self._deadline = time.monotonic() + self._timeout_s
            self._show_countdown()
            self.set_interval(1.0, self._show_countdown)
        self.displayed.set()

    def _show_countdown(self) -> None:
        if self._deadline is None:
            return
        left = max(0, round(self._deadline - time.monotonic()))
        self.query_one("#ext-help", Static).update(f"{self.HELP}   (closes in {left}s)")

    def action_cancel(self) -> None:
        self.dismiss(None)


class ExtensionConfirmScreen(_ExtensionDialog):
    """y / enter: True, n: False, esc: None (cancelled; the extension reads it as False)."""

    HELP = "y / enter: yes   n: no   esc: cancel"
    BINDINGS = [  # noqa: RUF012
        Binding("y,enter", "answer(True)", "Yes", id="extension_dialog.yes"),
        Binding("n", "answer(False)", "No", id="extension_dialog.no"),
        Binding("escape", "cancel", "Cancel", id="extension_dialog.cancel"),
    ]

    def __init__(self, title: str, message: str, *, timeout_s: float | None = None) -> None:
        super().__init__(title, timeout_s=timeout_s)
        self._message = message

    def compose(self) -> ComposeResult:
        with Vertical(classes="ext-dialog ext-confirm"):
            yield self.title_widget()
            if self._message:
                yield Static(Content(printable(self._message)), classes="ext-message")
            yield self.help_widget()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class ExtensionInputScreen(_ExtensionDialog):
    """One line: enter returns it (possibly empty), esc returns None."""

    HELP = "enter: submit   esc: cancel"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="extension_dialog.cancel")]  # noqa: RUF012

    def __init__(self, title: str, placeholder: str | None = None, *, timeout_s: float | None = None) -> None:
        super().__init__(title, timeout_s=timeout_s)
        self._placeholder = printable(placeholder or "")

    def compose(self) -> ComposeResult:
        with Vertical(classes="ext-dialog"):
            yield self.title_widget()
            yield Input(placeholder=self._placeholder, id="ext-input")
            yield self.help_widget()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#ext-input", Input).focus()

    @on(Input.Submitted, "#ext-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)


class ExtensionEditorScreen(_ExtensionDialog):
    """Several lines in a text area: ctrl+s (or ctrl+enter where the terminal sends it) returns
    the text, esc returns None."""

    HELP = "ctrl+s: submit   esc: cancel"
    BINDINGS = [  # noqa: RUF012
        Binding("ctrl+s,ctrl+enter", "submit", "Submit", priority=True, id="extension_dialog.submit"),
        Binding("escape", "cancel", "Cancel", priority=True, id="extension_dialog.cancel"),
    ]

    def __init__(self, title: str, prefill: str = "", *, timeout_s: float | None = None) -> None:
        super().__init__(title, timeout_s=timeout_s)
        self._prefill = prefill

    def compose(self) -> ComposeResult:
        with Vertical(classes="ext-dialog"):
            yield self.title_widget()
            yield TextArea(self._prefill, id="ext-editor", soft_wrap=True, show_line_numbers=False)
            yield self.help_widget()

    def on_mount(self) -> None:
        super().on_mount()
        area = self.query_one("#ext-editor", TextArea)
        area.focus()
        area.move_cursor(area.document.end)

    def action_submit(self) -> None:
        self.dismiss(self.query_one("#ext-editor", TextArea).text)


class ExtensionSelectScreen(RowPickerActions, _ExtensionDialog):
    """The options with a filter line: typing narrows them, ↑/↓ move, enter chooses, esc cancels."""

    HELP = "type to filter   ↑/↓ move   enter: choose   esc: cancel"
    BINDINGS = [  # noqa: RUF012
        *row_navigation_bindings("extension_dialog"),
        Binding("escape", "cancel", "Cancel", id="extension_dialog.cancel"),
    ]

    def __init__(self, title: str, options: Sequence[str], *, timeout_s: float | None = None) -> None:
        super().__init__(title, timeout_s=timeout_s)
        self._options = list(options)
        self._shown: list[str] = list(self._options)

    @property
    def shown(self) -> list[str]:
        return list(self._shown)

    def compose(self) -> ComposeResult:
        with Vertical(classes="ext-dialog ext-select"):
            yield self.title_widget()
            yield Input(placeholder="type to filter", id="ext-filter")
            yield RowList(self._row, id="ext-options")
            yield Static("No option matches.", id="ext-empty")
            yield self.help_widget()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#ext-filter", Input).focus()
        self._filter()

    def _row(self, index: int, is_cursor: bool = False) -> Content:
        # An option may span lines (pi's permission prompts do); a row shows it on one.
        return Content(" ".join(printable(self._shown[index]).split()))

    @property
    def _rows(self) -> RowList:
        return self.query_one("#ext-options", RowList)

    @on(Input.Changed, "#ext-filter")
    def _filter(self) -> None:
        tokens = self.query_one("#ext-filter", Input).value.lower().split()
        self._shown = [option for option in self._options if all(t in option.lower() for t in tokens)]
        self._rows.styles.height = max(1, min(len(self._shown), 12))
        self._rows.set_rows(len(self._shown), cursor=0 if self._shown else None)
        self.query_one("#ext-empty", Static).display = not self._shown

    @on(Input.Submitted, "#ext-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._choose()

    @on(RowList.Selected, "#ext-options")
    def _clicked(self, event: RowList.Selected) -> None:
        event.stop()
        self._choose()

