"""The text of one /tree row for a session entry (pi-behaviour.md §8.4), without Textual."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

RowKind: TypeAlias = Literal["user", "assistant", "tool", "error", "summary", "meta"]

ROW_TEXT_LIMIT = 240
"""Characters of an entry's text kept in a row (the screen truncates to its width anyway)."""
ERROR_TEXT_LIMIT = 80
"""pi shows the first 80 characters of an assistant error."""


def describe_entry(entry: Mapping[str, Any], tool_calls: Mapping[str, Mapping[str, Any]]) -> tuple[str, RowKind]:
    """The row text of an entry and the kind that colours it."""
    entry_type = entry.get("type")
    if entry_type == "message" and isinstance(entry.get("message"), dict):
        return _describe_message(entry["message"], tool_calls)
    if entry_type == "compaction":
        return f"[compaction: {round(int(entry.get('tokensBefore') or 0) / 1000)}k tokens]", "summary"
    if entry_type == "branch_summary":
        return clip_line(f"[branch summary]: {entry.get('summary', '')}"), "summary"
    if entry_type == "custom_message":
        return clip_line(f"[{entry.get('customType', 'custom')}]: {_text_of(entry.get('content'))}"), "meta"
    if entry_type == "model_change":
        return f"[model: {entry.get('provider', '?')}/{entry.get('modelId', '?')}]", "meta"
    if entry_type == "thinking_level_change":
        return f"[thinking: {entry.get('thinkingLevel', '?')}]", "meta"
    if entry_type == "label":
        label = entry.get("label")
        return (f"[label: {label}]" if label else "[label cleared]"), "meta"
    if entry_type == "session_info":
        return f"[session name: {entry.get('name') or '(cleared)'}]", "meta"
    if entry_type == "custom":
        return f"[custom: {entry.get('customType', '?')}]", "meta"
    return f"[{entry_type}]", "meta"


def _describe_message(message: Mapping[str, Any], tool_calls: Mapping[str, Mapping[str, Any]]) -> tuple[str, RowKind]:
    role = message.get("role")
    if role == "user":
        return clip_line(f"user: {_text_of(message.get('content'))}"), "user"
    if role == "assistant":
        return _describe_assistant(message)
    if role == "toolResult":
        call = tool_calls.get(str(message.get("toolCallId")))
        name = str(message.get("toolName", "tool"))
        text = format_tool_call(name, call.get("arguments") if call else None)
        return (f"{text} (error)", "error") if message.get("isError") else (text, "tool")
    if role == "bashExecution":
        return clip_line(f"[!{message.get('command', '')}]"), "tool"
    if role == "custom":
        return clip_line(f"[{message.get('customType', 'custom')}]: {_text_of(message.get('content'))}"), "meta"
    return f"[{role}]", "meta"


def _describe_assistant(message: Mapping[str, Any]) -> tuple[str, RowKind]:
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    text = " ".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text").strip()
    if text:
        return clip_line(f"assistant: {text}"), "assistant"
    if message.get("stopReason") == "aborted":
        return "assistant: (aborted)", "error"
    if message.get("stopReason") == "error":
        error = _flatten(str(message.get("errorMessage") or "error"))[:ERROR_TEXT_LIMIT]
        return f"assistant: {error}", "error"
    calls = [b for b in blocks if b.get("type") == "toolCall"]
    if calls:
        return clip_line("assistant: " + ", ".join(format_tool_call(str(c.get("name")), c.get("arguments")) for c in calls)), "assistant"
    return "assistant: (no content)", "assistant"


_MAIN_ARGUMENT = {"bash": "command", "read": "path", "edit": "path", "write": "path", "ls": "path", "grep": "pattern", "find": "pattern"}


def format_tool_call(name: str, arguments: Any) -> str:
    """``[bash: echo hello]``, ``[read: src/app.py]``, or the arguments as compact JSON."""
    if not isinstance(arguments, dict):
        return f"[{name}]"
    main = _MAIN_ARGUMENT.get(name)
    if main and isinstance(arguments.get(main), str):
        return clip_line(f"[{name}: {_flatten(arguments[main])}]", 120)
    rendered = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    return clip_line(f"[{name}: {rendered}]", 120)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return _flatten(content)
    if isinstance(content, list):
        return _flatten(" ".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"))
    return ""


def _flatten(text: str) -> str:
    return " ".join(text.split())


def clip_line(text: str, limit: int = ROW_TEXT_LIMIT) -> str:
    """One line (whitespace runs become one space) of at most ``limit`` characters, ``…`` if cut."""
    text = _flatten(text)
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"
