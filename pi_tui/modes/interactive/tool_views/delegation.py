"""``task`` (a subagent) and ``todo`` panels.

A task panel streams the child's progress from the call's ``details`` (``subagents/progress``):
collapsed, the last few tool calls of the child and a status line (turns, tokens, cost);
expanded (ctrl+o), every tool call and the child's answer, and the child's session file; a click
on the panel (or ``/subagent``) opens that file read-only (``screens/child_session.py``). A todo
panel is the list.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content

from pi_tui.modes.interactive.formatting import format_tokens
from pi_tui.modes.interactive.tool_views.common import (
    EXPAND_HINT,
    ToolCallState,
    ToolView,
    head_preview,
    notes_from_details,
    title,
)

COLLAPSED_LINES = 3
ANSWER_LINES = 30
TODO_MARKS = {"completed": "✓", "in_progress": "▶", "pending": "○"}


def usage_line(details: dict[str, Any]) -> str:
    usage = details.get("usage")
    parts = [f"{details.get('agent', 'general')}"]
    calls = details.get("toolCalls")
    if isinstance(calls, int):
        parts.append(f"{calls} tool call{'s' if calls != 1 else ''}")
    if isinstance(usage, dict):
        parts.append(f"{usage.get('turns', 0)} turns")
        parts.append(f"{format_tokens(int(usage.get('totalTokens', 0)))} tokens")
        cost = usage.get("cost")
        if isinstance(cost, (int, float)) and cost:
            parts.append(f"${cost:.3f}")
    model = details.get("model")
    if model:
        parts.append(str(model))
    return " · ".join(parts)


def render_task(state: ToolCallState, *, expanded: bool) -> ToolView:
    args = state.args
    kind = str(args.get("subagent_type") or "general")
    heading = title("task", f"{kind}: {args.get('description', '')}")
    details = state.details if isinstance(state.details, dict) else {}
    lines = [str(x) for x in details.get("lines") or []]
    body = Content()
    if lines:
        shown = lines if expanded else lines[-COLLAPSED_LINES:]
        hidden = len(lines) - len(shown)
        if hidden:
            body = body.append_text(f"... ({hidden} earlier tool calls, {EXPAND_HINT})\n", "$text-muted")
        body = body.append_text("\n".join(f"→ {line}" for line in shown))
    answer = state.output if state.status in ("ok", "error", "aborted") else details.get("answerPreview")
    if answer and (expanded or state.status != "running"):
        style = "$error" if state.is_error else ""
        separator = "\n" if body.plain else ""
        limit = ANSWER_LINES if expanded else COLLAPSED_LINES
        body = body.append_text(separator) + head_preview(str(answer), limit, expanded=False, style=style)
    notes = [usage_line(details)] if details else []
    if expanded and details.get("childSession"):
        notes.append(f"[Child session: {details['childSession']}]")
    notes += [str(n) for n in details.get("notes") or []]
    return ToolView(heading, body if body.plain else None, notes + notes_from_details(details))


def todo_lines(todos: Any) -> list[tuple[str, str]]:
    """(mark, text) per item of a todo list, for the tool panel and the panel above the editor."""
    rows: list[tuple[str, str]] = []
    for item in todos if isinstance(todos, list) else []:
        if isinstance(item, dict):
            rows.append((TODO_MARKS.get(str(item.get("status")), "○"), " ".join(str(item.get("content", "")).split())))
    return rows


def render_todo(state: ToolCallState, *, expanded: bool) -> ToolView:
    details = state.details if isinstance(state.details, dict) else {}
    todos = details.get("todos") if "todos" in details else state.args.get("todos")
    rows = todo_lines(todos)
    done = sum(1 for mark, _ in rows if mark == "✓")
    heading = title("todo", f"{done}/{len(rows)} done")
    if state.is_error:
        return ToolView(heading, Content.styled(state.output or "", "$error"))
    body = Content()
    for index, (mark, text) in enumerate(rows):
        style = "$text-muted strike" if mark == "✓" else ("bold" if mark == "▶" else "")
        line = Content.styled(text, style) if style else Content(text)
        body = body.append_text(("\n" if index else "") + f"{mark} ") + line
    return ToolView(heading, body if body.plain else None)
