"""The prompt editor: multi-line input with history, completion and pi's submit keys.

Enter submits (a steer while the agent runs), Alt+Enter queues a follow-up, Shift+Enter (or
Ctrl+J, which every terminal can send) inserts a new line. ↑ on the first line and ↓ on the last
walk the history. ``/`` at the start completes commands; ``@`` completes file paths. Which key means
what comes from the keymap, never from literals here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from pi_tui.modes.interactive.keymap import Keymap
from pi_tui.modes.interactive.widgets.completion import CompletionItem, CompletionMenu

Completer = Callable[[str, str], list[CompletionItem]]
"""(kind, query) → items; kind is ``slash`` or ``file``."""


def completion_context(text: str, row: int, column: int) -> tuple[str, str, int] | None:
    """What the cursor is completing: (kind, query, start column) or None.

    ``/name`` completes only on the first line before any space; ``@path`` completes the word
    under the cursor anywhere.
    """
    lines = text.split("\n")
    if row >= len(lines):
        return None
    before = lines[row][:column]
    if row == 0 and before.startswith("/") and " " not in before:
        return "slash", before[1:], 0
    word_start = max(before.rfind(" "), before.rfind("\t")) + 1
    word = before[word_start:]
    if word.startswith("@"):
        return "file", word[1:], word_start
    return None


class PromptEditor(TextArea):
    DEFAULT_CSS = "PromptEditor { height: auto; max-height: 12; min-height: 3; }"

    @dataclass
    class Submitted(Message):
        text: str
        follow_up: bool = False

    def __init__(self, keymap: Keymap, completer: Completer | None = None, **kwargs: object) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)  # type: ignore[arg-type]
        self.keymap = keymap
        self.completer = completer
        self.menu: CompletionMenu | None = None
        self.sent_history: list[str] = []
        self._history_index: int | None = None
        self._draft = ""
        self._completion_start = 0

    # ------------------------------------------------------------------ public

    def set_text(self, text: str) -> None:
        self.load_text(text)
        lines = text.split("\n")
        self.move_cursor((len(lines) - 1, len(lines[-1])))

    def remember(self, text: str) -> None:
        if text.strip() and (not self.sent_history or self.sent_history[-1] != text):
            self.sent_history.append(text)
        self._history_index = None

    # ------------------------------------------------------------------ keys

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        km = self.keymap
        if self.menu is not None and self.menu.display:
            if km.matches("tui.select.up", key):
                self._consume(event)
                self.menu.move(-1)
                return
            if km.matches("tui.select.down", key):
                self._consume(event)
                self.menu.move(1)
                return
            if km.matches("tui.input.tab", key):
                self._consume(event)
                self._accept_completion()
                return
            if km.matches("tui.select.confirm", key):
                # Enter on a command whose arguments are optional completes it and sends it at once.
                self._consume(event)
                item = self._accept_completion()
                if item is not None and item.source in ("builtin", "extension") and not item.hint.startswith("<"):
                    self.post_message(self.Submitted(self.text, follow_up=False))
                return
            if km.matches("tui.select.cancel", key):
                self._consume(event)
                self.menu.hide()
                return
        if km.matches("tui.input.submit", key):
            self._consume(event)
            self.post_message(self.Submitted(self.text, follow_up=False))
            return
        if km.matches("app.message.followUp", key):
            self._consume(event)
            self.post_message(self.Submitted(self.text, follow_up=True))
            return
        if km.matches("tui.input.newLine", key):
            self._consume(event)
            self.insert("\n")
            return
        if km.matches("tui.input.tab", key):
            self._consume(event)
            self.update_completion(force=True)
            return
        row, _ = self.cursor_location
        if km.matches("tui.editor.historyPrevious", key) and row == 0 and self.sent_history:
            self._consume(event)
            self._history_step(-1)
            return
        if km.matches("tui.editor.historyNext", key) and row == self.document.line_count - 1 \
                and self._history_index is not None:
            self._consume(event)
            self._history_step(1)
            return
        await super()._on_key(event)

    @staticmethod
    def _consume(event: events.Key) -> None:
        event.stop()
        event.prevent_default()

    def _history_step(self, step: int) -> None:
        if self._history_index is None:
            if step > 0:
                return
            self._draft = self.text
            self._history_index = len(self.sent_history)
        index = self._history_index + step
        if index >= len(self.sent_history):
            self._history_index = None
            self.set_text(self._draft)
            return
        self._history_index = max(0, index)
        self.set_text(self.sent_history[self._history_index])

    # ------------------------------------------------------------------ completion

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.set_class(self.text.startswith("!"), "-bash")
        self.update_completion()

    def update_completion(self, *, force: bool = False) -> None:
        if self.menu is None or self.completer is None:
            return
        row, column = self.cursor_location
        context = completion_context(self.text, row, column)
        if context is None:
            self.menu.hide()
            return
        kind, query, start = context
        if kind == "file" and not query and not force:
            self.menu.hide()
            return
        items = self.completer(kind, query)
        self._completion_start = start
        self.menu.show_items(items)

    def _accept_completion(self) -> CompletionItem | None:
        assert self.menu is not None
        item = self.menu.selected()
        self.menu.hide()
        if item is None:
            return None
        row, column = self.cursor_location
        self.replace(item.replacement, (row, self._completion_start), (row, column))
        return item
