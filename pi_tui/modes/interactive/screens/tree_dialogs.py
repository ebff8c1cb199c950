"""The small dialogs of the /tree flow: summarize chooser, custom instructions, label, progress (§3).

Each is a ``ModalScreen`` with a typed result; ``TreeScreen`` chains them with callbacks so that
Esc always steps back one level (editor → chooser → tree).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import LoadingIndicator, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from pi_tui.modes.interactive.screens.confirm import TextInputScreen

SummarizeChoice: TypeAlias = Literal["none", "summarize", "custom"]

SUMMARIZE_TITLE = "Summarize branch?"
SUMMARIZE_OPTIONS: tuple[tuple[SummarizeChoice, str], ...] = (
    ("none", "No summary"),
    ("summarize", "Summarize"),
    ("custom", "Summarize with custom prompt"),
)
CUSTOM_INSTRUCTIONS_TITLE = "Custom summarization instructions"
SUMMARIZING_TEXT = "Summarizing branch... (Esc to cancel)"


RESTORE_ON = "[x] Restore files too  (r to switch)"
RESTORE_OFF = "[ ] Restore files too  (r to switch)"
FORK_TITLE = "Fork from this message?"
FORK_OPTIONS: tuple[tuple[str, str], ...] = (("fork", "Fork"),)
MOVE_OPTIONS: tuple[tuple[str, str], ...] = (("none", "Move here"),)
"""The chooser when ``branchSummary.skipPrompt`` is on but files could come back."""


class SummarizeChoiceScreen(ModalScreen[str | None]):
    """``No summary`` / ``Summarize`` / ``Summarize with custom prompt``; Esc goes back (None).

    With ``files`` (a restore preview, ``checkpoint_flow.preview_text``) the chooser also shows
    what restoring the files of that point would change and a "restore files" switch beside the
    summary choice (on by default; ``r`` flips it, and so does a click): read ``restore_files``
    after it closes. ``files_blocked`` shows why files cannot come back, without a switch. The
    same chooser serves ``/fork`` (``options=FORK_OPTIONS``)."""

    CSS_PATH = "tree_dialogs.tcss"
    BINDINGS = [  # noqa: RUF012
        Binding("escape,ctrl+c", "dismiss_none", "Back", id="tree.summary.cancel"),
        Binding("r", "toggle_restore", "Restore files", show=False, id="tree.summary.restore_files"),
    ]

    def __init__(self, *, files: str | None = None, files_blocked: str | None = None,
                 title: str = SUMMARIZE_TITLE, options: tuple[tuple[str, str], ...] = SUMMARIZE_OPTIONS) -> None:
        super().__init__()
        self._files = files
        self._blocked = files_blocked
        self._title = title
        self._options = options
        self.restore_files = files is not None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog" + (" with-files" if self._files or self._blocked else "")):
            yield Static(self._title, classes="dialog-title")
            yield OptionList(*(Option(text, id=key) for key, text in self._options), id="summary-choices")
            if self._files is not None:
                yield Static(RESTORE_ON, id="restore-toggle", markup=False)
                yield Static(self._files, id="files-preview", markup=False)
            elif self._blocked is not None:
                yield Static(self._blocked, id="files-preview", markup=False)
            keys = "↑↓ navigate  enter select  " + ("r restore files on/off  " if self._files is not None else "")
            yield Static(keys + "esc back", classes="dialog-help")

    def on_mount(self) -> None:
        choices = self.query_one("#summary-choices", OptionList)
        choices.highlighted = 0
        choices.focus()

    @on(OptionList.OptionSelected, "#summary-choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = next(key for key, _ in self._options if key == event.option.id)
        self.dismiss(chosen)

    def action_toggle_restore(self) -> None:
        if self._files is None:
            return
        self.restore_files = not self.restore_files
        self.query_one("#restore-toggle", Static).update(RESTORE_ON if self.restore_files else RESTORE_OFF)

    def on_click(self, event: Any) -> None:
        widget = getattr(event, "widget", None)
        if widget is not None and widget.id == "restore-toggle":
            self.action_toggle_restore()

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class CustomInstructionsScreen(ModalScreen[str | None]):
    """A multi-line editor for the summarizer's extra focus; ctrl+s / alt+enter submits, Esc goes back."""

    CSS_PATH = "tree_dialogs.tcss"
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "dismiss_none", "Back", id="tree.instructions.cancel"),
        Binding("ctrl+s,alt+enter", "submit", "Summarize", id="tree.instructions.submit"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(CUSTOM_INSTRUCTIONS_TITLE, classes="dialog-title")
            yield TextArea(id="instructions", soft_wrap=True, show_line_numbers=False)
            yield Static("ctrl+s summarize  esc back", classes="dialog-help")

    def on_mount(self) -> None:
        self.query_one("#instructions", TextArea).focus()

    def action_submit(self) -> None:
        self.dismiss(self.query_one("#instructions", TextArea).text)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class LabelEditScreen(TextInputScreen):
    """Edit one entry's label: Enter saves (empty clears), Esc cancels (None)."""

    def __init__(self, *, current: str = "") -> None:
        super().__init__(title="Label (empty clears it)", value=current, placeholder="label")


class SummarizingScreen(ModalScreen[bool]):
    """Shown by the app while ``navigate_tree`` summarizes.

    The result is True when the user pressed Esc (the app then aborts the summary and reopens
    the tree), False when the app closed it with ``finish()`` after the work ended.
    """

    CSS_PATH = "tree_dialogs.tcss"
    BINDINGS = [  # noqa: RUF012
        Binding("escape", "cancel", "Cancel", id="tree.summarizing.cancel"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._finished = False

    def on_mount(self) -> None:
        if self._finished:  # the work ended before the screen was shown
            self.dismiss(False)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="summarizing"):
            yield LoadingIndicator()
            yield Static(SUMMARIZING_TEXT, classes="dialog-title")

    def action_cancel(self) -> None:
        self.dismiss(True)

    def finish(self) -> None:
        """Close after the work ended (no-op if the user already cancelled)."""
        self._finished = True
        if self.is_attached and self.app.screen is self:
            self.dismiss(False)
