"""read, write, ls, find, grep: a path or pattern as the title and the head of the text."""

from __future__ import annotations

from pi_tui.modes.interactive.tool_views.common import (
    ToolCallState,
    ToolView,
    head_preview,
    notes_from_details,
    title,
)

PREVIEW_LINES = {"read": 10, "write": 10, "ls": 20, "find": 20, "grep": 15}


def _subject(state: ToolCallState) -> str:
    args = state.args
    if state.name == "read":
        path = str(args.get("path", ""))
        offset, limit = args.get("offset"), args.get("limit")
        if offset or limit:
            start = int(offset or 1)
            end = f"{start + int(limit) - 1}" if limit else ""
            path += f":{start}-{end}"
        return path
    if state.name in ("write", "ls"):
        return str(args.get("path", "." if state.name == "ls" else ""))
    pattern = str(args.get("pattern", ""))
    where = args.get("path")
    return f"{pattern}" + (f"  in {where}" if where else "")


def render_file_tool(state: ToolCallState, *, expanded: bool) -> ToolView:
    lines = PREVIEW_LINES.get(state.name, 10)
    style = "$error" if state.is_error else ""
    if state.name == "write" and not state.is_error:
        # The interesting text of a write is what it wrote, not "Successfully wrote N bytes".
        text = str(state.args.get("content", ""))
        body = head_preview(text, lines, expanded=expanded) if text else None
        notes = [state.output] if state.output and state.status == "ok" else []
        return ToolView(title("write", _subject(state)), body, notes + notes_from_details(state.details))
    body = head_preview(state.output, lines, expanded=expanded, style=style) if state.output else None
    return ToolView(title(state.name, _subject(state)), body, notes_from_details(state.details))
