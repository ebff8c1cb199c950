"""Any other tool (extension tools): the arguments as compact JSON, then the result's text."""

from __future__ import annotations

from pi_tui.modes.interactive.tool_views.common import (
    ToolCallState,
    ToolView,
    compact_json,
    head_preview,
    notes_from_details,
    title,
)

PREVIEW_LINES = 10


def render_generic(state: ToolCallState, *, expanded: bool) -> ToolView:
    subject = compact_json(state.args, limit=400 if expanded else 100) if state.args else ""
    style = "$error" if state.is_error else ""
    body = head_preview(state.output, PREVIEW_LINES, expanded=expanded, style=style) if state.output else None
    return ToolView(title(state.name, subject), body, notes_from_details(state.details))
