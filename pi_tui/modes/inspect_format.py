"""Plain-text renderings for ``pi-tui tree`` and ``pi-tui context``.

The tree is drawn iteratively with ASCII connectors. A linear run of entries stays at one
indentation (a 100,000-entry session does not march off the screen); only the side branches of a
branch point are indented under ``|--`` connectors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pi_tui.core.messages import LlmMessage
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.tree import TreeNode

SHORT_TEXT = 80


def short(text: str, limit: int = SHORT_TEXT) -> str:
    """One line: whitespace runs collapsed, cut with ``...`` past ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    images = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")
    text = " ".join(parts)
    return f"{text} [+{images} image{'s' if images != 1 else ''}]" if images else text


def _tool_call_brief(block: dict[str, Any]) -> str:
    args = block.get("arguments")
    first = next(iter(args.values()), "") if isinstance(args, dict) and args else ""
    value = first if isinstance(first, str) else json.dumps(first, ensure_ascii=False)
    return f"{block.get('name', '?')}({short(value, 40)})"


def _describe_message(message: dict[str, Any]) -> str:
    role = message.get("role", "?")
    if role == "assistant":
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
        text = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = [_tool_call_brief(b) for b in blocks if b.get("type") == "toolCall"]
        out = "assistant"
        if message.get("stopReason") in ("error", "aborted"):
            out += f" ({message['stopReason']}: {short(str(message.get('errorMessage', '')), 40)})"
        out += ": " + short(text) if text else ""
        return out + (" -> " + ", ".join(calls) if calls else "")
    if role == "toolResult":
        flag = " (error)" if message.get("isError") else ""
        return f"toolResult {message.get('toolName', '?')}{flag}: {short(_content_text(message.get('content')))}"
    if role == "bashExecution":
        code = message.get("exitCode")
        status = " (cancelled)" if message.get("cancelled") else (f" (exit {code})" if code else "")
        excluded = " [not in context]" if message.get("excludeFromContext") else ""
        return f"bash: !{short(str(message.get('command', '')), 60)}{status}{excluded}"
    if role == "custom":
        return f"custom {message.get('customType', '?')}: {short(_content_text(message.get('content')))}"
    return f"{role}: {short(_content_text(message.get('content')))}"


def describe_entry(entry: Entry) -> str:
    """``type/role: short text`` for one tree entry."""
    kind = entry.get("type", "?")
    if kind == "message":
        message = entry.get("message")
        return _describe_message(message) if isinstance(message, dict) else "message (no payload)"
    if kind == "model_change":
        return f"model: {entry.get('provider', '?')}/{entry.get('modelId', '?')}"
    if kind == "thinking_level_change":
        return f"thinking: {entry.get('thinkingLevel', '?')}"
    if kind == "compaction":
        return (
            f"compaction ({entry.get('tokensBefore', '?')} tokens before, keeps from "
            f"{entry.get('firstKeptEntryId', '?')}): {short(str(entry.get('summary', '')), 50)}"
        )
    if kind == "branch_summary":
        return f"branch_summary from {entry.get('fromId', '?')}: {short(str(entry.get('summary', '')), 60)}"
    if kind == "custom":
        return f"custom {entry.get('customType', '?')}"
    if kind == "custom_message":
        return f"custom_message {entry.get('customType', '?')}: {short(_content_text(entry.get('content')))}"
    if kind == "label":
        label = entry.get("label")
        return f"label {entry.get('targetId', '?')}: " + (repr(label) if label else "(cleared)")
    if kind == "session_info":
        return f"session_info: name {entry.get('name', '')!r}"
    if kind == "invalid_entry":  # a damaged entry (core/session/validation.py), kept in its place
        return f"(unreadable {entry.get('invalidType', '?')} entry: {short(str(entry.get('problem', '')), 60)})"
    return str(kind)


def render_tree(roots: list[TreeNode], leaf_id: str | None, active: set[str]) -> Iterator[str]:
    """One line per entry: ``*`` marks the active path, ``<- leaf`` the leaf, labels in ``[]``.

    At a branch point the older children hang off ``|--`` rows; the newest child (the last, as
    children are sorted by time) carries on at the parent's indentation, so a long session with
    many branches keeps a readable width: only side branches are indented.
    """
    stack: list[tuple[TreeNode, str, str]] = []
    for index, root in enumerate(reversed(roots)):
        if index == 0 or len(roots) == 1:
            stack.append((root, "", ""))
        else:
            stack.append((root, "|-- ", "|   "))
    while stack:
        node, lead, cont = stack.pop()
        entry_id = str(node.entry.get("id", "?"))
        line = f"{'*' if entry_id in active else ' '} {lead}{entry_id} {describe_entry(node.entry)}"
        if node.label:
            line += f"  [{node.label}]"
        count = len(node.children)
        if count > 1:
            line += f"  ({count} branches)"
        if entry_id == leaf_id:
            line += "  <- leaf"
        yield line
        if count == 0:
            continue
        children = node.children
        stack.append((children[-1], cont, cont))
        for child in reversed(children[:-1]):
            stack.append((child, cont + "|-- ", cont + "|   "))


def _block_lines(block: dict[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind == "text":
        return [str(block.get("text", ""))]
    if kind == "thinking":
        return ["[thinking]", str(block.get("thinking", ""))]
    if kind == "toolCall":
        args = json.dumps(block.get("arguments", {}), ensure_ascii=False)
        return [f"[tool call {block.get('name', '?')} id={block.get('id', '?')}] {args}"]
    if kind == "image":
        size = len(str(block.get("data", ""))) * 3 // 4
        return [f"[image {block.get('mimeType', '?')}, ~{size} bytes]"]
    return [f"[{kind} block]"]


def render_message(number: int, message: LlmMessage, tokens: int) -> list[str]:
    """A header line, then every block in full (this is what the model reads)."""
    raw: Any = message
    role = raw.get("role", "?")
    title = role
    if role == "toolResult":
        title += f" {raw.get('toolName', '?')} id={raw.get('toolCallId', '?')}"
        if raw.get("isError"):
            title += " (error)"
    elif role == "assistant" and raw.get("stopReason") not in (None, "stop"):
        title += f" (stopReason {raw.get('stopReason')})"
    lines = [f"=== [{number}] {title} (~{tokens} tokens) ==="]
    content = raw.get("content")
    if isinstance(content, str):
        lines.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                lines.extend(_block_lines(block))
    if role == "assistant" and raw.get("errorMessage"):
        lines.append(f"[error] {raw['errorMessage']}")
    return lines
