"""The conversation as plain text for a summarizer (pi-behaviour.md §2.6).

A summarizer must not see the conversation as chat turns, or it tends to *continue* the
conversation instead of summarizing it. So the messages are flattened into labelled text:
``[User]:``, ``[Assistant thinking]:``, ``[Assistant]:``, ``[Assistant tool calls]:`` and
``[Tool result]:``. Tool results are cut at 2,000 characters (they are the bulk and the least
valuable part); user and assistant texts are never cut. Images are left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pi_tui.core.messages import LlmMessage

TOOL_RESULT_MAX_CHARS = 2000


def _json(value: Any) -> str:
    """``JSON.stringify`` equivalent: compact, non-ASCII kept as is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _texts(content: Any, sep: str) -> str:
    if isinstance(content, str):
        return content
    return sep.join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def truncate_tool_result(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n\n[... {len(text) - max_chars} more characters truncated]"


def _assistant_parts(content: list[Any]) -> list[str]:
    parts: list[str] = []
    thinking = [b.get("thinking", "") for b in content if b.get("type") == "thinking"]
    texts = [b.get("text", "") for b in content if b.get("type") == "text"]
    calls = [b for b in content if b.get("type") == "toolCall"]
    if thinking:
        parts.append("[Assistant thinking]: " + "\n".join(thinking))
    if texts:
        parts.append("[Assistant]: " + "\n".join(texts))
    if calls:
        rendered = []
        for call in calls:
            arguments = call.get("arguments") or {}
            args = ", ".join(f"{key}={_json(value)}" for key, value in arguments.items())
            rendered.append(f"{call.get('name', '')}({args})")
        parts.append("[Assistant tool calls]: " + "; ".join(rendered))
    return parts


def serialize_conversation(
    messages: Sequence[LlmMessage], *, tool_result_max_chars: int = TOOL_RESULT_MAX_CHARS
) -> str:
    """LLM messages (after ``convert_to_llm``) → the summarizer's text, parts joined by a blank line."""
    parts: list[str] = []
    for message in messages:
        role = message["role"]
        if role == "user":
            text = _texts(message["content"], "")
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            parts.extend(_assistant_parts(list(message["content"])))
        elif role == "toolResult":
            text = _texts(message["content"], "")
            if text:
                parts.append("[Tool result]: " + truncate_tool_result(text, tool_result_max_chars))
    return "\n\n".join(parts)
