"""The todo list above the editor: the ``todo`` tool's list at the current tree node.

Hidden while the list is empty; one line per item (✓ done, ▶ in progress, ○ pending), the done
ones dimmed. It is fed by ``todo_update`` events and, after a resume, ``/tree`` or ``/new``, by
the session's tracker. Mounted after the first frame (``ChatScreen.mount_secondary``).
"""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widgets import Static

from pi_tui.modes.interactive.tool_views.delegation import todo_lines

MAX_ROWS = 8
"""More items than this show the in-progress one's neighbourhood and a count of the rest."""


class TodoPanel(Static):
    DEFAULT_CSS = "TodoPanel { height: auto; max-height: 10; padding: 0 1; border-left: thick $accent; }"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.todos: list[Any] = []
        self.display = False

    def show(self, todos: Any) -> None:
        self.todos = list(todos) if isinstance(todos, list) else []
        rows = todo_lines(self.todos)
        self.display = bool(rows)
        if not rows:
            self.update("")
            return
        done = sum(1 for mark, _ in rows if mark == "✓")
        current = next((i for i, (mark, _) in enumerate(rows) if mark == "▶"), None)
        start = 0
        if len(rows) > MAX_ROWS:
            anchor = current if current is not None else next((i for i, (m, _) in enumerate(rows) if m != "✓"), 0)
            start = max(0, min(anchor - 2, len(rows) - MAX_ROWS))
        shown = rows[start:start + MAX_ROWS]
        text = Content.styled(f"Todo {done}/{len(rows)}", "bold")
        for mark, item in shown:
            style = "$text-muted" if mark == "✓" else ("bold" if mark == "▶" else "")
            line = f"\n{mark} {item}"
            text = text + (Content.styled(line, style) if style else Content(line))
        hidden = len(rows) - len(shown)
        if hidden:
            text = text + Content.styled(f"\n… {hidden} more", "$text-muted")
        self.update(text)
