"""Token accounting (pi-behaviour.md §2.2).

The last valid usage reported by the provider is the ground truth for the context size; only the
messages after it are estimated. The estimate is pi's chars/4 (it over-counts code by ~8% and
prose by ~12%, which errs on the safe side for compaction triggers). ``count_tokens_exact`` uses
tiktoken for displays that want a closer number (``/context``).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any, cast

from pi_tui.core.messages import AgentMessage, AssistantMessage, Usage

IMAGE_CHARS = 4800
"""Each image counts as 4,800 characters (~1,200 tokens), as in pi."""


def calculate_context_tokens(usage: Usage) -> int:
    """``totalTokens``, or the sum of the components when the total is 0 or absent."""
    total = usage.get("totalTokens") or 0
    if total:
        return int(total)
    return int(usage.get("input", 0) + usage.get("output", 0) + usage.get("cacheRead", 0) + usage.get("cacheWrite", 0))


def has_valid_usage(message: AgentMessage) -> bool:
    """An assistant message whose usage counts: not aborted, not an error."""
    return (
        message["role"] == "assistant"
        and message.get("stopReason") not in ("aborted", "error")
        and isinstance(message.get("usage"), dict)
    )


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    chars = 0
    for block in content:
        kind = block.get("type")
        if kind == "text":
            chars += len(block.get("text", ""))
        elif kind == "image":
            chars += IMAGE_CHARS
    return chars


def message_chars(agent_message: AgentMessage) -> int:
    """The character count pi's estimate is based on."""
    message = cast("dict[str, Any]", agent_message)  # read by role below; the union does not narrow
    role = message["role"]
    if role == "user":
        content = message["content"]
        if isinstance(content, str):
            return len(content)
        return sum(len(b.get("text", "")) for b in content if b.get("type") == "text")
    if role == "assistant":
        chars = 0
        for block in message["content"]:
            if block["type"] == "text":
                chars += len(block["text"])
            elif block["type"] == "thinking":
                chars += len(block["thinking"])
            elif block["type"] == "toolCall":
                chars += len(block["name"]) + len(json.dumps(block["arguments"], separators=(",", ":"), ensure_ascii=False))
        return chars
    if role in ("toolResult", "custom"):
        return _content_chars(message["content"])
    if role == "bashExecution":
        return len(message["command"]) + len(message["output"])
    if role in ("branchSummary", "compactionSummary"):
        return len(message["summary"])
    return 0


def estimate_tokens(message: AgentMessage) -> int:
    """ceil(chars / 4)."""
    return math.ceil(message_chars(message) / 4)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEstimate:
    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None


def last_assistant_usage_index(messages: list[AgentMessage]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if has_valid_usage(messages[i]):
            return i
    return None


def estimate_context_tokens(messages: list[AgentMessage]) -> ContextEstimate:
    """Last valid usage + estimates of every later message; all estimated without usage."""
    index = last_assistant_usage_index(messages)
    if index is None:
        trailing = sum(estimate_tokens(m) for m in messages)
        return ContextEstimate(tokens=trailing, usage_tokens=0, trailing_tokens=trailing, last_usage_index=None)
    anchor = messages[index]
    assert anchor["role"] == "assistant"
    usage_tokens = calculate_context_tokens(_usage(anchor))
    trailing = sum(estimate_tokens(m) for m in messages[index + 1 :])
    return ContextEstimate(
        tokens=usage_tokens + trailing, usage_tokens=usage_tokens, trailing_tokens=trailing, last_usage_index=index
    )


def _usage(message: AssistantMessage) -> Usage:
    return message["usage"]


def should_compact(tokens: int, context_window: int, *, enabled: bool, reserve_tokens: int) -> bool:
    return enabled and tokens > context_window - reserve_tokens


# --------------------------------------------------------------------------- exact counts

_encoding: Any = None


def _tiktoken_cache_dir() -> str | None:
    """litellm ships tiktoken's files; find them without importing litellm (which is slow)."""
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(next(iter(spec.submodule_search_locations)), "litellm_core_utils", "tokenizers")
    return path if os.path.isdir(path) else None


def count_tokens_exact(text: str) -> int:
    """o200k_base token count via tiktoken, offline; falls back to chars/4 if unavailable."""
    global _encoding
    if _encoding is None:
        try:
            cache = _tiktoken_cache_dir()
            if cache and not os.environ.get("TIKTOKEN_CACHE_DIR"):
                os.environ["TIKTOKEN_CACHE_DIR"] = cache
            import tiktoken

            _encoding = tiktoken.get_encoding("o200k_base")
        except Exception:  # no tokenizer files offline: the estimate still works
            _encoding = False
    if _encoding is False:
        return math.ceil(len(text) / 4)
    return len(_encoding.encode_ordinary(text))
