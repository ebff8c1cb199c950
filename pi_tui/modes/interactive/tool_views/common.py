"""What every tool view shares: the call's state, the view's shape, previews and notes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from textual.content import Content

EXPAND_HINT = "ctrl+o to expand"
EXPANDED_LINE_CAP = 400
"""Even expanded, a panel shows at most this many lines; the full text is in the session file."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallState:
    """A tool call as the UI knows it at one moment (pure data, no widgets)."""

    name: str
    args: dict[str, Any]
    output: str | None = None
    """The result's text (or the live partial output while running)."""
    details: Any = None
    is_error: bool = False
    status: str = "running"
    """``pending`` (arguments streaming), ``running``, ``ok``, ``error`` or ``aborted``."""


@dataclass(frozen=True, slots=True)
class ToolView:
    title: Content
    body: Content | None = None
    notes: list[str] = field(default_factory=list)


def content_text(result: Any, *, images: bool = True) -> str:
    """The text blocks of a ``{"content": [...]}`` result (or a plain string); with ``images`` an
    image block is a ``[image <mime>]`` line (the tool panel shows them itself: ``image_preview``)."""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        content = result.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            parts = []
            for block in content:
                if isinstance(block, dict) and block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif images and isinstance(block, dict) and block.get("type") == "image":
                    parts.append(f"[image {block.get('mimeType', '')}]")
            return "\n".join(parts)
    return ""


def title(name: str, subject: str = "", *, style: str = "bold") -> Content:
    text = Content.styled(name, style)
    if subject:
        text = text.append_text("  " + subject)
    return text


def head_preview(text: str, lines: int, *, expanded: bool, style: str = "") -> Content:
    """The first ``lines`` lines, with a count of what is hidden."""
    rows = text.rstrip("\n").split("\n") if text else []
    limit = EXPANDED_LINE_CAP if expanded else lines
    shown = rows[:limit]
    out = Content.styled("\n".join(shown), style) if style else Content("\n".join(shown))
    hidden = len(rows) - len(shown)
    if hidden > 0:
        hint = "" if expanded else f", {EXPAND_HINT}"
        out = out.append_text(f"\n... ({hidden} more lines{hint})", "$text-muted")
    return out


def tail_preview(text: str, lines: int, *, expanded: bool, style: str = "") -> Content:
    """The last ``lines`` lines, with a count of the earlier ones (pi's bash preview)."""
    rows = text.rstrip("\n").split("\n") if text else []
    limit = EXPANDED_LINE_CAP if expanded else lines
    shown = rows[-limit:] if rows else []
    hidden = len(rows) - len(shown)
    out = Content()
    if hidden > 0:
        hint = "" if expanded else f", {EXPAND_HINT}"
        out = out.append_text(f"... ({hidden} earlier lines{hint})\n", "$text-muted")
    out = out.append_text("\n".join(shown), style)
    return out


def notes_from_details(details: Any) -> list[str]:
    """Truncation facts and the paths where the full output lives (bash log, artifacts)."""
    if not isinstance(details, dict):
        return []
    notes: list[str] = []
    truncation = details.get("truncation")
    full = details.get("fullOutputPath")
    if isinstance(truncation, dict) and truncation.get("truncated"):
        shown = truncation.get("outputLines")
        total = truncation.get("totalLines")
        by = truncation.get("truncatedBy")
        what = f"showing {shown} of {total} lines" if shown is not None else "output truncated"
        if by == "bytes":
            what += " (byte limit)"
        notes.append(f"[Truncated: {what}" + (f". Full output: {full}]" if full else "]"))
    elif isinstance(full, str) and full:
        notes.append(f"[Full output: {full}]")
    for key in ("artifactPath", "artifact_path", "artifact"):
        value = details.get(key)
        if isinstance(value, dict):
            value = value.get("path")
        if isinstance(value, str) and value:
            size = details.get("originalBytes") or details.get("original_bytes")
            extra = f" ({size:,} bytes)" if isinstance(size, int) else ""
            notes.append(f"[Saved as artifact{extra}: {value}]")
            break
    return notes


def compact_json(value: Any, limit: int = 160) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
