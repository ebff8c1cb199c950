"""The prompt editor: multi-line input with history, completion and pi's submit keys.

Enter submits (a steer while the agent runs), Alt+Enter queues a follow-up, Shift+Enter (or
Ctrl+J, which every terminal can send) inserts a new line. ↑ on the first line and ↓ on the last
walk the history. ``/`` at the start completes commands; ``@`` completes file paths. Which key means
what comes from the keymap, never from literals here: the editor's bindings are generated from it
(in place of TextArea's own), and the keys it reads itself are looked up in it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.binding import BindingsMap
from textual.message import Message
from textual.widgets import TextArea

from pi_tui.modes.interactive.keymap import Keymap
from pi_tui.modes.interactive.widgets.editor_actions import EditorActions

if TYPE_CHECKING:  # the menu is mounted after the first frame; its module is imported then
    from pi_tui.modes.interactive.widgets.completion import CompletionItem, CompletionMenu

Completer = Callable[[str, str], "list[CompletionItem]"]
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


class PromptEditor(EditorActions):
    DEFAULT_CSS = "PromptEditor { height: auto; max-height: 12; min-height: 3; }"

    @dataclass
    class Submitted(Message):
        text: str
        follow_up: bool = False

    @dataclass
    class ImagePathPasted(Message):
        """A paste that is only an image file's path (a dragged file): attach it."""

        path: Path

    def __init__(self, keymap: Keymap, completer: Completer | None = None, **kwargs: object) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)  # type: ignore[arg-type]
        # TextArea's class bindings are replaced, not extended: a rebound action leaves its default key.
        self._bindings = BindingsMap(keymap.editor_bindings())
        self.keymap = keymap
        self.completer = completer
        self.menu: CompletionMenu | None = None
        self._completion_start = 0
        self.attachments: list[Any] = []
        """Images pasted for the next message (``image_paste.ImageAttachment``), in order."""
        self.image_path_for: Callable[[str], Path | None] | None = None
        """Set by the chat screen: the image file a paste names (``image_paste.pasted_image_path``)."""
        self._init_editor_actions()

    # ------------------------------------------------------------------ attachments

    def attach(self, attachment: Any) -> None:
        self.attachments.append(attachment)
        self._show_attachments()

    def take_attachments(self) -> list[Any]:
        """The attachments, to send with the message; the editor has none afterwards."""
        taken, self.attachments = self.attachments, []
        self._show_attachments()
        return taken

    def _show_attachments(self) -> None:
        from textual.content import Content

        chips = "  ".join(f"[{a.label}]" for a in self.attachments)
        self.border_title = Content(chips) if chips else None
        self.border_subtitle = Content("backspace at the start removes an image") if chips else None

    async def _on_paste(self, event: events.Paste) -> None:
        # Any other paste is TextArea's: Textual runs its ``_on_paste`` after this one unless the
        # default is prevented.
        path = self.image_path_for(event.text) if self.image_path_for is not None else None
        if path is not None:
            event.stop()
            event.prevent_default()
            self.post_message(self.ImagePathPasted(path))

    def action_delete_left(self) -> None:
        """Backspace at the very start of the message (nothing selected) removes the last
        attachment; anywhere else it deletes as usual."""
        if self.attachments and self.cursor_location == (0, 0) and self.selection.is_empty:
            self.attachments.pop()
            self._show_attachments()
            return
        super().action_delete_left()

    # ------------------------------------------------------------------ keys

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        km = self.keymap
        self.begin_key()
        if self.jump_mode is not None and self._handle_jump(event):
            return
        if self.menu is not None and self.menu.display and self._handle_menu_key(event):
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
        # Everything else: printable text is inserted by TextArea; other keys reach the editor's
        # bindings (generated from the keymap) once the event bubbles to the app.
        await super()._on_key(event)

    def _handle_jump(self, event: events.Key) -> bool:
        """The key after jumpForward/jumpBackward: a character to jump to, the jump key again
        (cancels), or anything else (cancels and is handled as usual)."""
        direction, self.jump_mode = self.jump_mode, None
        km = self.keymap
        if km.matches("tui.editor.jumpForward", event.key) or km.matches("tui.editor.jumpBackward", event.key) \
                or km.matches("tui.select.cancel", event.key):
            self._consume(event)
            return True
        if event.is_printable and event.character:
            self._consume(event)
            self.jump_to(event.character, direction or "forward")
            return True
        return False

    def cancel_jump(self) -> bool:
        """Esc while waiting for a jump target (the screen's interrupt key asks first)."""
        waiting, self.jump_mode = self.jump_mode is not None, None
        return waiting

    def _handle_menu_key(self, event: events.Key) -> bool:
        assert self.menu is not None
        km, key = self.keymap, event.key
        page = max(1, (self.menu.size.height or 10) - 1)
        moves = {"tui.select.up": -1, "tui.select.down": 1, "tui.select.pageUp": -page, "tui.select.pageDown": page}
        for action_id, step in moves.items():
            if km.matches(action_id, key):
                self._consume(event)
                if abs(step) == 1:
                    self.menu.move(step)  # wraps around, like pi's lists
                elif self.menu.items:
                    current = self.menu.highlighted or 0
                    self.menu.highlighted = min(max(current + step, 0), len(self.menu.items) - 1)
                return True
        if km.matches("tui.input.tab", key):
            self._consume(event)
            self._accept_completion()
            return True
        if km.matches("tui.select.confirm", key):
            # Enter on a command whose arguments are optional completes it and sends it at once.
            self._consume(event)
            item = self._accept_completion()
            if item is not None and item.source in ("builtin", "extension") and not item.hint.startswith("<"):
                self.post_message(self.Submitted(self.text, follow_up=False))
            return True
        if km.matches("tui.select.cancel", key):
            self._consume(event)
            self.menu.hide()
            return True
        return False

    @staticmethod
    def _consume(event: events.Key) -> None:
        event.stop()
        event.prevent_default()

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
