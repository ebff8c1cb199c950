"""A yes/no question as a modal (used before deleting a session)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


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
