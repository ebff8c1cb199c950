"""bash: the command as the title, the tail of the output (pi shows the last 5 lines collapsed)."""

from __future__ import annotations

from pi_tui.modes.interactive.tool_views.common import (
    ToolCallState,
    ToolView,
    notes_from_details,
    tail_preview,
    title,
)

COLLAPSED_LINES = 5


def render_bash(state: ToolCallState, *, expanded: bool) -> ToolView:
    command = str(state.args.get("command", ""))
    timeout = state.args.get("timeout")
    subject = f"$ {command}" + (f"  (timeout {timeout}s)" if timeout else "")
    body = None
    if state.output:
        body = tail_preview(state.output, COLLAPSED_LINES, expanded=expanded,
                            style="$error" if state.is_error else "")
    elif state.status == "ok":
        body = None
    return ToolView(title(subject, style="bold"), body, notes_from_details(state.details))
