"""The session side of the ``todo`` tool: record each accepted list, report changes, and give
the list back to the model after a compaction.

* Each successful ``todo`` call (its ``tool_execution_end``) appends a ``custom`` entry
  ``{customType: "pi-tui:todo", data: {todos}}``. It lands before the call's toolResult entry,
  so the result's node and every node after it see the new list; ``current()`` reads the list
  of the current leaf's branch, which is what resume and ``/tree`` give (a ``custom`` entry is
  outside pi's projection: pi 0.73.1 reads the file unchanged).
* Every change is a ``todo_update`` session event (``{type, todos}``): JSON mode prints it, the
  TUI panel redraws from it, RPC ``get_state`` carries ``current()``.
* After a compaction that replaced the history, the list is appended once as a ``custom``
  message (``pi-tui:todo-reminder``, not displayed) after the compaction entry (the pipeline
  strategy's JSON summary, made inside a run, through ``SessionHooks.pipeline_summarized``) — at the end of
  the context, never inside the summary: the prefix the provider caches (system prompt, summary,
  kept messages) stays byte-identical whatever the list says, and the reminder is written once
  into the file, so every later request repeats the same bytes. A list edited inside the summary
  would also be re-summarized (and paraphrased) by the next compaction.
"""

from __future__ import annotations

from typing import Any, Protocol

from pi_tui.core.session.manager import SessionManager
from pi_tui.subagents.todo import (
    TODO_ENTRY_TYPE,
    TODO_TOOL_NAME,
    TodoItem,
    render_list,
    todos_from_details,
    todos_on_branch,
)

REMINDER_TYPE = "pi-tui:todo-reminder"


class TodoHost(Protocol):
    """What the tracker needs of its session (``AgentSession`` has it)."""

    session_manager: SessionManager

    def emit(self, event: dict[str, Any]) -> None: ...

    def send_message(self, message: dict[str, Any], *, trigger_turn: bool = False) -> None: ...


def reminder_text(items: list[TodoItem]) -> str:
    return ("The context was compacted. Your task list (todo tool) as it stands — continue from it and keep it "
            "up to date:\n" + render_list(items))


class TodoTracker:
    def __init__(self, host: TodoHost) -> None:
        self._host = host

    def current(self) -> list[TodoItem]:
        """The list as of the session's current leaf."""
        return todos_on_branch(self._host.session_manager.get_branch())

    def observe(self, event: dict[str, Any]) -> None:
        """A session listener (synchronous, never raises into the session)."""
        kind = event.get("type")
        if kind == "tool_execution_end" and event.get("toolName") == TODO_TOOL_NAME and not event.get("isError"):
            result = event.get("result")
            items = todos_from_details(result.get("details") if isinstance(result, dict) else None)
            if items is not None:
                self._record(items)
        elif kind == "compaction_end" and event.get("result") and not event.get("aborted"):
            self._remind()

    def _record(self, items: list[TodoItem]) -> None:
        if items == self.current():
            return
        self._host.session_manager.append_custom_entry(TODO_ENTRY_TYPE, {"todos": [dict(i) for i in items]})
        self._host.emit({"type": "todo_update", "todos": [dict(i) for i in items]})

    def _remind(self) -> None:
        items = self.current()
        if not items:
            return
        self._host.send_message({
            "customType": REMINDER_TYPE, "content": reminder_text(items), "display": False,
            "details": {"todos": [dict(i) for i in items]},
        })

    async def after_pipeline_summary(self, _entry_id: str) -> None:
        """``SessionHooks.pipeline_summarized``: the same reminder, written straight after the
        compaction entry — the run is streaming (``send_message`` would steer it into a later
        turn), and the request being prepared is rebuilt from the file right after this."""
        items = self.current()
        if items:
            self._host.session_manager.append_custom_message_entry(
                REMINDER_TYPE, reminder_text(items), False, {"todos": [dict(i) for i in items]})

    def announce(self) -> None:
        """Tell the listeners the list of the (new) current leaf: after resume, ``/tree``, a switch."""
        self._host.emit({"type": "todo_update", "todos": [dict(i) for i in self.current()]})
