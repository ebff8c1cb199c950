"""Pure functions from a tool call (name, arguments, output, details) to renderables.

No widget, no app: each view can be tested by rendering its result with a Rich console.
``render_tool`` picks the view by tool name and falls back to a generic JSON view, so tools
registered by extensions render without UI code.
"""

from __future__ import annotations

from collections.abc import Callable

from pi_tui.modes.interactive.tool_views.bash import render_bash
from pi_tui.modes.interactive.tool_views.common import ToolCallState, ToolView, content_text
from pi_tui.modes.interactive.tool_views.delegation import render_task, render_todo
from pi_tui.modes.interactive.tool_views.edit import render_edit
from pi_tui.modes.interactive.tool_views.files import render_file_tool
from pi_tui.modes.interactive.tool_views.generic import render_generic

_VIEWS: dict[str, Callable[..., ToolView]] = {
    "bash": render_bash,
    "edit": render_edit,
    "read": render_file_tool,
    "write": render_file_tool,
    "ls": render_file_tool,
    "find": render_file_tool,
    "grep": render_file_tool,
    "task": render_task,
    "todo": render_todo,
}


def render_tool(state: ToolCallState, *, expanded: bool = False) -> ToolView:
    view = _VIEWS.get(state.name, render_generic)
    return view(state, expanded=expanded)


__all__ = ["ToolCallState", "ToolView", "content_text", "render_tool"]
