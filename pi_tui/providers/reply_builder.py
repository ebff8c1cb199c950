"""What every decoder of a streamed reply shares (the chat-completions ``StreamAssembler``, the
Anthropic, Responses and Gemini decoders): the assistant message in pi's key order, the
snapshots carried by events, how a reply ends as an error, how a broken stream is named, and
pi's ``calculateCost``.
"""

from __future__ import annotations

import copy

from pi_tui.core.messages import AssistantMessage, ErrorKind, Usage, empty_usage, now_ms
from pi_tui.core.provider import AssistantMessageEvent, ModelInfo


def usage_with_cost(model: ModelInfo, usage: Usage) -> Usage:
    """pi's ``calculateCost`` (§15.1): unrounded floats, ``price / 1e6 * count``; ``totalTokens``
    is the sum of the four counts."""
    usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    prices = model.cost
    cost = usage["cost"]
    cost["input"] = prices.input / 1_000_000 * usage["input"]
    cost["output"] = prices.output / 1_000_000 * usage["output"]
    cost["cacheRead"] = prices.cache_read / 1_000_000 * usage["cacheRead"]
    cost["cacheWrite"] = prices.cache_write / 1_000_000 * usage["cacheWrite"]
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    for key in ("input", "output", "cacheRead", "cacheWrite", "total"):
        value = cost[key]
        if isinstance(value, float) and value.is_integer():
            cost[key] = int(value)  # JavaScript writes 0, not 0.0
    return usage


class ReplyBuilder:
    """The reply being built: ``message`` (pi's keys: ``role, content, api, provider, model, usage,
    stopReason, timestamp``, the timestamp taken before the request), ``start()``, and the error
    ending the subclasses' ``fail`` use."""

    def __init__(self, model: ModelInfo, *, api: str | None = None) -> None:
        self.model = model
        self.message: AssistantMessage = {
            "role": "assistant", "content": [], "api": api or model.api, "provider": model.provider, "model": model.id,
            "usage": empty_usage(), "stopReason": "stop", "timestamp": now_ms(),
        }

    def _snapshot(self) -> AssistantMessage:
        snap = dict(self.message)
        snap["content"] = [dict(b) for b in self.message["content"]]
        return snap  # type: ignore[return-value]

    def start(self) -> AssistantMessageEvent:
        return {"type": "start", "partial": self._snapshot()}

    def _error_event(self, error_message: str, kind: ErrorKind, retry_after_ms: int | None = None) -> AssistantMessageEvent:
        """Mark the message failed (the partial content stays) and return the ``error`` event."""
        self.message["stopReason"] = "error"
        self.message["errorMessage"] = error_message
        self.message["errorKind"] = kind
        if retry_after_ms is not None:
            self.message["retryAfterMs"] = retry_after_ms
        return {"type": "error", "reason": "error", "error": copy.deepcopy(self.message)}

    def fail(self, error_message: str, kind: ErrorKind, *, retry_after_ms: int | None = None) -> list[AssistantMessageEvent]:
        return [self._error_event(error_message, kind, retry_after_ms)]

    # ------------------------------------------------------------------ broken streams

    def interrupted(self, cause: str) -> list[AssistantMessageEvent]:
        """The stream stopped before it was complete (cut, closed early, stalled, corrupted): a
        transient error whose message says what happened, where it stopped and which tool calls
        of the reply did not run. The partial content is kept, never handed on as an answer."""
        message = f"{cause}, {self.position()}"
        calls = self.calls_not_run()
        if calls:
            message += f"; tool call{'s' if len(calls) > 1 else ''} {', '.join(repr(c) for c in calls)} not run"
        return self.fail(message, "transient")

    def calls_not_run(self) -> list[str]:
        return [block["name"] or "?" for block in self.message["content"] if block["type"] == "toolCall"]

    def position(self) -> str:
        """Where the stream stopped, in words (the same words on every wire)."""
        content = self.message["content"]
        if not content:
            return "before any content"
        block = content[-1]
        if block["type"] == "toolCall":
            return f"after tool call {block['name'] or '?'!r}"
        return f"during the {block['type']}"
