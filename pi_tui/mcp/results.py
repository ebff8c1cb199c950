"""An MCP ``CallToolResult`` as a tool result: text passes through, images become image blocks,
``structuredContent`` is given as JSON, resource links by name and URI, ``isError`` is an error
result. Text over the built-in tools' limits (2,000 lines / 50 KB) is cut like ``read`` cuts a
file and the whole result saved beside the session, its path in the notice (as ``bash`` does)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pi_tui.core.messages import JsonValue, UserContent
from pi_tui.core.tool import ToolResult
from pi_tui.tools.common import output_dir
from pi_tui.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncate_head,
    utf8_len,
)

_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def convert_result(result: Any, *, server: str, tool: str, artifact_dir: Path | None,
                   images: bool = True, secrets: Collection[str] = ()) -> ToolResult:
    texts: list[str] = []
    blocks: list[UserContent] = []
    kinds: list[str] = []
    for item in result.content or []:
        kind = getattr(item, "type", "")
        kinds.append(kind)
        if kind == "text":
            texts.append(item.text)
        elif kind == "image" and item.mime_type in _IMAGE_TYPES:
            # Kept in the session even for a model without image input (as the read tool does):
            # the request's projection puts a placeholder in its place, the TUI still draws it,
            # and a later switch to a vision model sees it.
            blocks.append({"type": "image", "data": item.data, "mimeType": item.mime_type})
            if not images:
                texts.append(f"[image {item.mime_type}, {format_size(len(item.data) * 3 // 4)}: "
                             "not shown to this model, which does not support images]")
        elif kind == "image":
            texts.append(f"[image {item.mime_type}, {format_size(len(item.data) * 3 // 4)}: "
                         "not a format models take (PNG, JPEG, GIF, WebP)]")
        elif kind == "audio":
            texts.append(f"[audio {item.mime_type}, {format_size(len(item.data) * 3 // 4)}: not supported]")
        elif kind == "resource_link":
            title = f" ({item.description})" if getattr(item, "description", None) else ""
            texts.append(f"[resource link: {item.name} {item.uri}{title}]")
        elif kind == "resource":
            resource = item.resource
            text = getattr(resource, "text", None)
            if text is not None:
                texts.append(f"[resource {resource.uri}]\n{text}")
            else:
                size = len(getattr(resource, "blob", "") or "") * 3 // 4
                texts.append(f"[resource {resource.uri}: {getattr(resource, 'mime_type', None) or 'binary'}, "
                             f"{format_size(size)}]")
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        dumped = json.dumps(structured, ensure_ascii=False)
        if dumped not in texts:  # servers usually send the same JSON as text too
            texts.append(dumped)
    text = "\n".join(texts)
    details: dict[str, JsonValue] = {"server": server, "tool": tool, "content": kinds}
    text = _truncated(text, details, artifact_dir, tool, secrets)
    content: list[UserContent] = []
    if text or not blocks:
        content.append({"type": "text", "text": text or "(no output)"})
    content += blocks
    return ToolResult(content=content, details=details, is_error=bool(getattr(result, "is_error", False)))


def _truncated(text: str, details: dict[str, JsonValue], artifact_dir: Path | None, tool: str,
               known_secrets: Collection[str]) -> str:
    if len(text) <= DEFAULT_MAX_BYTES // 4 and text.count("\n") < DEFAULT_MAX_LINES:
        return text  # cheap check first: most results are small
    truncation = truncate_head(text)
    if not truncation.truncated:
        return text
    folder = output_dir(artifact_dir)
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in tool)[:40]
    path = folder / f"pi-mcp-{safe}-{secrets.token_hex(4)}.txt"
    saved = text
    for secret in known_secrets:  # the session's keys never reach the disk
        if secret:
            saved = saved.replace(secret, "[redacted]")
    path.write_text(saved, encoding="utf-8")
    kept = truncation.content
    if not kept:  # one line longer than the limit (a JSON blob): its first bytes
        kept = text.encode("utf-8")[:DEFAULT_MAX_BYTES].decode("utf-8", "ignore")
    details["truncated"] = True
    details["fullOutputPath"] = str(path)
    details["totalBytes"] = truncation.total_bytes
    return (f"{kept}\n\n[Showing {format_size(utf8_len(kept))} of {format_size(truncation.total_bytes)} "
            f"({truncation.total_lines} lines). Full output: {path}]")
