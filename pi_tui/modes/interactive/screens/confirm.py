"""Small generic dialogs: a yes/no question and a one-line text prompt."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask ``question``; y/enter answers True, n/esc False."""

    CSS_PATH = "confirm.tcss"
    BINDINGS = [  # noqa: RUF012
        Binding("y,enter", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, *, detail: str = "") -> None:
        super().__init__()
        self._question = question
        self._detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(self._question, id="confirm-question")
            if self._detail:
                yield Static(self._detail, id="confirm-detail", markup=False)
            yield Static("y / enter: yes   n / esc: no", id="confirm-help")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class TextInputScreen(ModalScreen[str | None]):
    """Ask for one line of text: Enter returns it (possibly empty), Esc returns None."""

    CSS_PATH = "confirm.tcss"
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
    ]

    def __init__(self, *, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="input-dialog"):
            yield Static(self._title, id="input-title", markup=False)
            yield Input(value=self._value, placeholder=self._placeholder, id="text-input")
            yield Static("enter save  esc cancel", id="input-help")

    def on_mount(self) -> None:
        self.query_one("#text-input", Input).focus()

    @on(Input.Submitted, "#text-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
