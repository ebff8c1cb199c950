"""/fork: choose one of your earlier messages; the session branches into a new file from there."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from pi_tui.core.messages import text_of
from pi_tui.modes.interactive.formatting import one_line


def user_messages(branch: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(entry id, first line) of every user message on the branch, newest first."""
    rows = []
    for entry in branch:
        message = entry.get("message") if entry.get("type") == "message" else None
        if message and message.get("role") == "user":
            rows.append((str(entry.get("id")), one_line(text_of(message.get("content", "")), 100)))
    return rows[::-1]


class ForkPickerScreen(ModalScreen[str | None]):
    DEFAULT_CSS = """
    ForkPickerScreen { align: center middle; }
    ForkPickerScreen > Vertical { width: 90%; max-width: 110; height: auto; max-height: 80%;
        border: round $primary; background: $surface; padding: 0 1; }
    ForkPickerScreen OptionList { height: auto; max-height: 20; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="fork.cancel")]  # noqa: RUF012

    def __init__(self, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Fork from which message? (enter choose · esc cancel)")
            yield OptionList(*[Option(text or "(empty)", id=entry_id) for entry_id, text in self.choices])

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
