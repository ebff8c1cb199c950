"""edit: a coloured diff — the tool's own ``details.diff`` after it ran, a preview before."""

from __future__ import annotations

from typing import Any

from textual.content import Content

from pi_tui.modes.interactive.tool_views.common import (
    EXPAND_HINT,
    ToolCallState,
    ToolView,
    content_text,
    notes_from_details,
    title,
)

COLLAPSED_DIFF_LINES = 24


def _edits_of(args: dict[str, Any]) -> list[tuple[str, str]]:
    edits = args.get("edits")
    pairs: list[tuple[str, str]] = []
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, dict):
                pairs.append((str(edit.get("oldText", "")), str(edit.get("newText", ""))))
    elif "oldText" in args or "newText" in args:
        pairs.append((str(args.get("oldText", "")), str(args.get("newText", ""))))
    return pairs


def preview_diff(args: dict[str, Any]) -> str:
    """A diff-like preview built from the arguments alone (no file access: views stay pure)."""
    lines: list[str] = []
    for i, (old, new) in enumerate(_edits_of(args)):
        if i:
            lines.append("   ...")
        lines.extend(f"-  {row}" for row in old.split("\n"))
        lines.extend(f"+  {row}" for row in new.split("\n"))
    return "\n".join(lines)


def colour_diff(diff: str, *, expanded: bool) -> Content:
    """Colour pi's diff format (``+12 text``, ``-12 text``, `` 12 text``) line by line."""
    rows = diff.split("\n")
    limit = len(rows) if expanded else COLLAPSED_DIFF_LINES
    out = Content()
    for i, row in enumerate(rows[:limit]):
        if i:
            out = out.append_text("\n")
        if row.startswith("+"):
            out = out.append_text(row, "$success")
        elif row.startswith("-"):
            out = out.append_text(row, "$error")
        else:
            out = out.append_text(row, "$text-muted")
    hidden = len(rows) - limit
    if hidden > 0:
        out = out.append_text(f"\n... ({hidden} more lines, {EXPAND_HINT})", "$text-muted")
    return out


def render_edit(state: ToolCallState, *, expanded: bool) -> ToolView:
    path = str(state.args.get("path", ""))
    details = state.details if isinstance(state.details, dict) else {}
    diff = details.get("diff")
    if state.is_error:
        body: Content | None = Content.styled(state.output or "edit failed", "$error")
    elif isinstance(diff, str) and diff:
        body = colour_diff(diff, expanded=expanded)
    else:
        preview = preview_diff(state.args)
        body = colour_diff(preview, expanded=expanded) if preview else None
    first = details.get("firstChangedLine")
    subject = f"{path}:{first}" if isinstance(first, int) else path
    notes = notes_from_details(state.details)
    if state.status == "ok" and not diff and state.output:
        notes.append(content_text(state.output))
    return ToolView(title("edit", subject), body, notes)
