"""The ``todo`` tool: the model writes its whole task list each call (Claude Code's TodoWrite,
Codex's ``update_plan``, opencode's ``todowrite``, Gemini's ``write_todos``).

Each item has ``content`` and ``status`` (``pending`` / ``in_progress`` / ``completed``); at most
one item is in progress. Bad input is an error result naming the item and the field, and the
list is left as it was. The tool itself keeps no state: the list it accepted travels in the
result's ``details`` and ``todo_tracker.TodoTracker`` records it in the session as a ``custom``
entry (``TODO_ENTRY_TYPE``), so every node of the tree knows the list as it was there
(``todos_on_branch``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypedDict

from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue
from pi_tui.core.tool import ToolContext, ToolResult, text_result

TODO_TOOL_NAME = "todo"
TODO_ENTRY_TYPE = "pi-tui:todo"
"""``customType`` of the session entries holding the list (pi 0.73.1 skips ``custom`` entries)."""
STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed")
MAX_ITEMS = 100
MAX_CONTENT_CHARS = 500

TodoStatus = Literal["pending", "in_progress", "completed"]


class TodoItem(TypedDict):
    content: str
    status: TodoStatus


DESCRIPTION = """\
Write your task list for the current work: the whole list each time (it replaces the previous one).
Use it for work with 3 or more steps, or when the user gives several tasks; skip it for a single simple step.
Each item: content (what to do, imperative, short) and status: pending, in_progress or completed.
Keep exactly one item in_progress while you work; mark an item completed as soon as it is done, then set the next one in_progress.
The user sees the list live; after a context compaction you get the current list back."""

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "description": "The complete task list, in order",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "The task, short and imperative"},
                    "status": {"type": "string", "description": "pending, in_progress or completed"},
                },
                "required": ["content", "status"],
            },
        },
    },
    "required": ["todos"],
}


def parse_todos(value: Any) -> list[TodoItem]:
    """The list from the tool's arguments; ``ToolError`` naming the item and field otherwise."""
    if not isinstance(value, list):
        raise ToolError(f"todo: 'todos' must be an array of {{content, status}} items, got {_kind(value)}")
    if len(value) > MAX_ITEMS:
        raise ToolError(f"todo: at most {MAX_ITEMS} items, got {len(value)}")
    items: list[TodoItem] = []
    for number, raw in enumerate(value, start=1):
        if not isinstance(raw, Mapping):
            raise ToolError(f"todo: item {number} must be an object with content and status, got {_kind(raw)}")
        content = raw.get("content")
        if not isinstance(content, str) or not content.strip():
            raise ToolError(f"todo: item {number}: 'content' must be a non-empty string")
        status = raw.get("status")
        if status not in STATUSES:
            raise ToolError(f"todo: item {number} ({_short(content)}): 'status' must be one of "
                            f"{', '.join(STATUSES)}, got {status!r}")
        items.append({"content": content.strip()[:MAX_CONTENT_CHARS], "status": status})
    active = [n for n, item in enumerate(items, start=1) if item["status"] == "in_progress"]
    if len(active) > 1:
        raise ToolError(f"todo: only one item may be in_progress at a time, items {', '.join(map(str, active))} are")
    return items


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def summary_line(items: list[TodoItem]) -> str:
    if not items:
        return "Todo list cleared."
    done = sum(1 for i in items if i["status"] == "completed")
    current = next((i["content"] for i in items if i["status"] == "in_progress"), None)
    line = f"Todo list updated: {done}/{len(items)} completed"
    return line + (f"; in progress: {current}" if current else "") + "."


def render_list(items: list[TodoItem]) -> str:
    """The list as plain text (the compaction reminder, ``/todo``-style views)."""
    marks = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}
    return "\n".join(f"{marks[i['status']]} {i['content']}" for i in items)


def todos_from_details(details: Any) -> list[TodoItem] | None:
    """The list a todo result (or entry) carries, None when ``details`` holds none."""
    if not isinstance(details, Mapping) or not isinstance(details.get("todos"), list):
        return None
    try:
        return parse_todos(details["todos"])
    except ToolError:
        return None


def todos_on_branch(entries: Iterable[Mapping[str, Any]]) -> list[TodoItem]:
    """The list as of the last entry of ``entries`` (root → leaf): the newest todo entry's."""
    found: list[TodoItem] = []
    for entry in entries:
        if entry.get("type") == "custom" and entry.get("customType") == TODO_ENTRY_TYPE:
            found = todos_from_details(entry.get("data")) or []
    return found


class TodoTool:
    name = TODO_TOOL_NAME
    label = "Todo"
    description = DESCRIPTION
    parameters = PARAMETERS
    prompt_snippet: str | None = "Write your task list (the whole list each call; one item in progress)"
    prompt_guidelines: tuple[str, ...] = ()
    execution_mode: Literal["parallel", "sequential"] = "sequential"

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        items = parse_todos(args.get("todos"))
        details: dict[str, JsonValue] = {"todos": [dict(i) for i in items]}
        return text_result(summary_line(items), details=details)
