"""The prompt editor's own editing actions: kill ring deletions, yank, jump-to-character, history.

Textual's TextArea has the plain moves and single-character deletions (``action_cursor_left``,
``action_delete_left``...); what pi's editor does beyond them lives here, as ``action_*`` methods
the keymap's editor bindings name (see ``keymap.ACTIONS``, scope ``editor``).
"""

from __future__ import annotations

import re

from textual.widgets import TextArea
from textual.widgets.text_area import Location

from pi_tui.modes.interactive.kill_ring import KillRing

_WORD_AHEAD = re.compile(r"\s*(\w+|[^\w\s]+)")


class EditorActions(TextArea):
    """Mixed into ``PromptEditor``: state for the kill ring, the last yank and jump mode."""

    def _init_editor_actions(self) -> None:
        self.kill_ring = KillRing()
        self.sent_history: list[str] = []
        self._history_index: int | None = None
        self._draft = ""
        self._last_action: str | None = None
        """``kill`` or ``yank`` when the previous key did that (kills accumulate, yankPop works)."""
        self._previous_action: str | None = None
        self._yanked: tuple[Location, Location] | None = None
        self.jump_mode: str | None = None
        """``forward`` / ``backward`` after a jump key: the next typed character is the target."""

    def begin_key(self) -> None:
        """Called for every key before it is handled: the key breaks a kill or yank sequence
        unless its action continues it."""
        self._previous_action, self._last_action = self._last_action, None

    # ------------------------------------------------------------------ public helpers

    def set_text(self, text: str) -> None:
        self.load_text(text)
        lines = text.split("\n")
        self.move_cursor((len(lines) - 1, len(lines[-1])))

    def remember(self, text: str) -> None:
        if text.strip() and (not self.sent_history or self.sent_history[-1] != text):
            self.sent_history.append(text)
        self._history_index = None

    # ------------------------------------------------------------------ history

    def action_cursor_up_or_history(self) -> None:
        if self.cursor_location[0] == 0 and self.sent_history:
            self.history_step(-1)
        else:
            self.action_cursor_up()

    def action_cursor_down_or_history(self) -> None:
        if self.cursor_location[0] == self.document.line_count - 1 and self._history_index is not None:
            self.history_step(1)
        else:
            self.action_cursor_down()

    def action_history_previous(self) -> None:
        if self.sent_history:
            self.history_step(-1)

    def action_history_next(self) -> None:
        self.history_step(1)

    def history_step(self, step: int) -> None:
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

    # ------------------------------------------------------------------ kill ring

    def _kill(self, start: Location, end: Location, *, backward: bool) -> None:
        start, end = sorted((start, end))
        if start == end:
            return
        removed = self.delete(start, end).replaced_text
        self.move_cursor(start)
        self.kill_ring.kill(removed, backward=backward, accumulate=self._previous_action == "kill")
        self._last_action = "kill"

    def _selection_or(self, start: Location, end: Location) -> tuple[Location, Location]:
        selection = self.selection
        return (selection.start, selection.end) if not selection.is_empty else (start, end)

    def action_kill_word_left(self) -> None:
        cursor = self.cursor_location
        self._kill(*self._selection_or(self.get_cursor_word_left_location(), cursor), backward=True)

    def action_kill_word_right(self) -> None:
        row, column = cursor = self.cursor_location
        line = self.document[row]
        match = _WORD_AHEAD.match(line, column)
        if match is not None:
            end = (row, match.end())
        elif column == len(line) and row < self.document.line_count - 1:
            end = (row + 1, 0)
        else:
            end = (row, len(line))
        self._kill(*self._selection_or(cursor, end), backward=False)

    def action_kill_to_line_start(self) -> None:
        row, column = cursor = self.cursor_location
        # At a line start the deletion joins this line to the previous one.
        start = (row - 1, len(self.document[row - 1])) if column == 0 and row > 0 else (row, 0)
        self._kill(start, cursor, backward=True)

    def action_kill_to_line_end(self) -> None:
        row, column = cursor = self.cursor_location
        line_length = len(self.document[row])
        end = (row + 1, 0) if column == line_length and row < self.document.line_count - 1 else (row, line_length)
        self._kill(cursor, end, backward=False)

    def action_yank(self) -> None:
        text = self.kill_ring.newest()
        if text is None:
            return
        self._insert_yank(text, *self.selection)

    def action_yank_pop(self) -> None:
        if self._previous_action != "yank" or self._yanked is None:
            return
        text = self.kill_ring.rotate()
        if text is None:
            self._last_action = "yank"
            return
        self._insert_yank(text, *self._yanked)

    def _insert_yank(self, text: str, start: Location, end: Location) -> None:
        start, end = sorted((start, end))
        result = self.replace(text, start, end)
        self.move_cursor(result.end_location)
        self._yanked = (start, result.end_location)
        self._last_action = "yank"

    # ------------------------------------------------------------------ jump to character

    def action_jump_forward(self) -> None:
        self.jump_mode = "forward"

    def action_jump_backward(self) -> None:
        self.jump_mode = "backward"

    def jump_to(self, character: str, direction: str) -> bool:
        """Move to the next (or previous) occurrence of ``character``; False when there is none."""
        text = self.text
        row, column = self.cursor_location
        lines = text.split("\n")
        here = sum(len(line) + 1 for line in lines[:row]) + column
        index = text.find(character, here + 1) if direction == "forward" else text.rfind(character, 0, here)
        if index < 0:
            return False
        before = text[:index]
        self.move_cursor((before.count("\n"), index - (before.rfind("\n") + 1)))
        return True
