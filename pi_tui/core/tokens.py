"""Token accounting (pi-behaviour.md §2.2).

The last valid usage reported by the provider is the ground truth for the context size; only the
messages after it are estimated. The estimate is pi's chars/4 (it over-counts code by ~8% and
prose by ~12%, which errs on the safe side for compaction triggers). ``count_tokens_exact`` uses
tiktoken (o200k) where a closer number matters: ``/context``, and whether a summarizer request
fits the window (chars/4 undercounts CJK text ~2.4×).
"""

from __future__ import annotations

import json
import math
import os
import threading
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
_loading = threading.Lock()
_O200K_FILE = "fb374d419588a4632f3f557e76b4b70aebbca790"
"""tiktoken's cache name for o200k_base (the sha1 of its download URL)."""


def _tiktoken_cache_dir() -> str | None:
    """litellm ships tiktoken's files; find them without importing litellm (which is slow)."""
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(next(iter(spec.submodule_search_locations)), "litellm_core_utils", "tokenizers")
    return path if os.path.isdir(path) else None


def _load_encoding() -> Any:
    """o200k_base from a folder that has its file (the user's TIKTOKEN_CACHE_DIR, else
    litellm's), or False. tiktoken downloads a missing file with no timeout, so it is never
    asked to; the environment is left as it was."""
    folders = [os.environ.get("TIKTOKEN_CACHE_DIR") or "", _tiktoken_cache_dir() or ""]
    folder = next((f for f in folders if f and os.path.isfile(os.path.join(f, _O200K_FILE))), None)
    if folder is None:
        return False
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = folder
    try:
        import tiktoken

        return tiktoken.get_encoding("o200k_base")
    except Exception:  # a damaged file: the estimate still works
        return False
    finally:
        if previous is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous


def _encoder() -> Any:
    global _encoding
    if _encoding is None:
        with _loading:
            if _encoding is None:
                _encoding = _load_encoding()
    return _encoding


def _fallback_tokens(text: str) -> int:
    """Without the tokenizer: chars/4, or UTF-8 bytes/4 when larger (CJK text is ~3 bytes and
    ~0.65 o200k tokens a character: chars/4 would undercount it 2.6×)."""
    return math.ceil(max(len(text), len(text.encode("utf-8", "surrogatepass"))) / 4)


def count_tokens_exact(text: str) -> int:
    """o200k_base token count via tiktoken, offline (loaded once, on first use: never at
    start-up); without the tokenizer files, ``_fallback_tokens``."""
    encoding = _encoder()
    if encoding is False:
        return _fallback_tokens(text)
    try:
        return len(encoding.encode_ordinary(text))
    except Exception:  # e.g. a lone surrogate from undecodable tool output
        return _fallback_tokens(text)


def tail_within_tokens(text: str, budget: int) -> int:
    """Where the longest tail of ``text`` of at most ``budget`` tokens starts (about: a few
    characters may be left out where token boundaries shift)."""
    if budget <= 0:
        return len(text)
    if count_tokens_exact(text) <= budget:
        return 0
    start = 0
    encoding = _encoder()
    if encoding is not False:
        try:  # the last ``budget`` tokens, decoded (a character cut in two is dropped whole)
            tail = encoding.decode_bytes(encoding.encode_ordinary(text)[-budget:]).decode("utf-8", "ignore")
            start = len(text) - len(tail)
        except Exception:
            start = 0
    step = 8  # re-encoding the tail can give a token or two more: move on until it fits
    while start < len(text) and count_tokens_exact(text[start:]) > budget:
        start = min(len(text), start + step)
        step *= 2
    return start
