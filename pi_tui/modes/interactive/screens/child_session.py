"""A subagent's session, read-only: the child's whole conversation (its prompt, tool calls and
results, its answer; compactions where they happened) from its own session file, in the chat's
own blocks. Nothing here can send, branch or change the file: the screen has no editor, reads the
file without its lock (``load_session_readonly``) and closes with Esc.

Opened from a ``task`` panel (a click, or ``/subagent [N]``: docs/subagents.md).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

from pi_tui.core.deadline import within
from pi_tui.core.terminal_text import printable
from pi_tui.modes.interactive.widgets.conversation import Conversation

TITLE = "Subagent session (read-only)"


def child_conversation(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and every message on the file's last branch, root first (compaction summaries
    in place: the view shows what the child did, not only what its model saw last)."""
    from pi_tui.core.session.loading import load_session_readonly
    from pi_tui.core.session.projection import compaction_summary_message, entry_to_message
    from pi_tui.core.session.tree import index_entries, path_to

    loaded = load_session_readonly(path)
    leaf = loaded.entries[-1].get("id") if loaded.entries else None
    messages: list[dict[str, Any]] = []
    for entry in path_to(index_entries(loaded.entries), leaf if isinstance(leaf, str) else None):
        message = compaction_summary_message(entry) if entry.get("type") == "compaction" else entry_to_message(entry)
        if message is not None:
            messages.append(dict(message))
    return dict(loaded.header), messages


def child_sessions(messages: list[Any]) -> list[tuple[Path, str]]:
    """(file, "agent: description") of each ``task`` call of a conversation that has a child file, in order."""
    found: list[tuple[Path, str]] = []
    for raw in messages:
        message: dict[str, Any] = dict(raw)
        details = message.get("details")
        if message.get("role") != "toolResult" or message.get("toolName") != "task" or not isinstance(details, dict):
            continue
        if isinstance(details.get("childSession"), str) and details["childSession"]:
            label = f"{details.get('agent') or 'general'}: {details.get('description') or ''}".rstrip(": ")
            found.append((Path(details["childSession"]), label))
    return found


def pick_child(messages: list[Any], args: str) -> tuple[Path, str] | str:
    """``/subagent [N]``: the Nth task's child (1 = the first), the last without N; or why not."""
    children = child_sessions(messages)
    if not children:
        return "No subagent session in this conversation yet (the task tool has not run here)."
    if not args.strip():
        return children[-1]
    try:
        number = int(args.strip())
    except ValueError:
        number = 0
    if not 1 <= number <= len(children):
        return f"Usage: /subagent [N] — N from 1 to {len(children)} (the tasks of this conversation, in order)."
    return children[number - 1]


class ChildSessionScreen(ModalScreen[None]):
    """One child session file, shown and never changed."""

    DEFAULT_CSS = """
    ChildSessionScreen { background: $background; }
    ChildSessionScreen #child-title { height: auto; padding: 0 1; background: $boost; text-wrap: nowrap;
        text-overflow: ellipsis; }
    ChildSessionScreen #child-log { height: 1fr; padding: 0 1; }
    """
    BINDINGS = [  # noqa: RUF012
        Binding("escape,q", "close", "Close", id="child.close"),
        Binding("ctrl+o", "toggle_expanded", "Expand tool output", id="child.expand"),
    ]

    def __init__(self, path: Path, *, description: str = "") -> None:
        super().__init__()
        self.path = path
        self.description = description
        self.header: dict[str, Any] = {}
        self.messages: list[dict[str, Any]] = []
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(printable(f"{TITLE} · loading {self.path}"), id="child-title")
        yield Conversation(id="child-log")

    async def on_mount(self) -> None:
        try:
            self.header, self.messages = await within(asyncio.to_thread(child_conversation, self.path), 30)
        except Exception as err:  # a missing, unreadable or foreign file: said, not raised
            self.error = f"Cannot open the subagent's session: {err}"
            self.query_one("#child-title", Static).update(printable(f"{TITLE} · {self.error} · esc closes"))
            return
        parent = self.header.get("parentSession")
        parts = [TITLE, self.description, str(self.path),
                 f"subagent of {Path(str(parent)).name}" if parent else "", "esc closes · ctrl+o expands"]
        self.query_one("#child-title", Static).update(printable(" · ".join(p for p in parts if p)))
        log = self.query_one("#child-log", Conversation)
        await log.load_history(self.messages)
        log.focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_toggle_expanded(self) -> None:
        log = self.query_one("#child-log", Conversation)
        log.set_expanded(not log.expanded)
