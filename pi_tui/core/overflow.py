"""Context-overflow detection, as pi 0.73.1 does it (pi-behaviour.md §7.6 + §13.7).

Providers word "your prompt is too big" in many ways and some say nothing at all (they truncate or
return a short, normal-looking reply). pi therefore decides from three signals, and so do we:

1. an error message matching one of the known overflow texts (unless it is really a rate limit or
   a throttling error, whose texts can contain the same words);
2. a normal ``stop`` whose reported input (``input + cacheRead``) exceeds the context window;
3. a ``length`` stop that produced no output while the input filled >= 99% of the window.

The adapter also stores ``errorKind: "context_overflow"`` when litellm raised
``ContextWindowExceededError`` or the error carried an overflow code; that is honoured too.
"""

from __future__ import annotations

import re
from typing import Any

_OVERFLOW_PATTERNS: tuple[str, ...] = (
    r"prompt is too long",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"model_context_window_exceeded",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    # 0.73.1 additions (§13.7)
    r"request_too_large",
    r"prompt too long; exceeded (?:max )?context length",
    # Cerebras answers an overflow with an empty 400/413
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
)

OVERFLOW_RE = re.compile("|".join(f"(?:{p})" for p in _OVERFLOW_PATTERNS), re.IGNORECASE)
"""Any of pi's overflow texts (case-insensitive)."""

NOT_OVERFLOW_RE = re.compile(r"^(?:Throttling error|Service unavailable):|rate limit|too many requests", re.IGNORECASE)
"""Texts that are never an overflow, even when they also match ``OVERFLOW_RE`` (§13.7)."""

LENGTH_STOP_FILL_RATIO = 0.99


def is_overflow_error_text(text: str) -> bool:
    """Whether an error message reads as a context overflow (pi's patterns and exclusions)."""
    if not text or NOT_OVERFLOW_RE.search(text):
        return False
    return OVERFLOW_RE.search(text) is not None


def is_context_overflow(message: Any, context_window: int | None = None) -> bool:
    """pi's ``isContextOverflow(msg, contextWindow?)`` for an assistant message (a dict).

    ``context_window`` of ``None`` or ``0`` disables the usage-based checks (unknown window).
    """
    if not isinstance(message, dict) or message.get("role", "assistant") != "assistant":
        return False
    stop_reason = message.get("stopReason")
    if stop_reason == "error":
        if message.get("errorKind") == "context_overflow":
            return True
        return is_overflow_error_text(str(message.get("errorMessage") or ""))
    if not context_window:
        return False
    usage = message.get("usage") or {}
    seen_input = int(usage.get("input", 0) or 0) + int(usage.get("cacheRead", 0) or 0)
    if stop_reason == "stop":
        return seen_input > context_window
    if stop_reason == "length":
        return int(usage.get("output", 0) or 0) == 0 and seen_input >= LENGTH_STOP_FILL_RATIO * context_window
    return False
