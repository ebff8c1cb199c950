"""OpenAI-style stream chunks → pi's stream events and final assistant message (§14.14, §7.1).

Both the litellm adapter and the scripted provider feed plain chunk dicts (``{"id", "model",
"choices": [{"delta", "finish_reason"}], "usage"}``) through one ``StreamAssembler``, so the two
produce the same events and the same final message by construction.

Event order: ``start``; per block ``*_start`` at its first delta and ``*_delta`` per delta; when
the stream ends, ``*_end`` for every block in content order, then ``done`` or ``error``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pi_tui.core.messages import ErrorKind, Usage, empty_usage
from pi_tui.core.partial_json import PartialJson, parse_tool_arguments
from pi_tui.core.provider import AssistantMessageEvent, ModelInfo
from pi_tui.providers.reply_builder import ReplyBuilder

FINISH_REASONS = {"stop": "stop", "end": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse"}
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def usage_from_openai(raw: dict[str, Any], model: ModelInfo) -> Usage:
    """pi's usage arithmetic (§14.14); the server's ``total_tokens`` is ignored on purpose.

    Accepts both the wire shape (``prompt_tokens_details.cached_tokens``) and the flat shape of
    scripts (``cached_tokens``, ``cache_write_tokens``).
    """
    details = raw.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") or raw.get("prompt_cache_hit_tokens") or raw.get("cached_tokens") or 0
    cache_write = details.get("cache_write_tokens") or raw.get("cache_write_tokens") or 0
    cached, cache_write = int(cached), int(cache_write)
    cache_read = max(0, cached - cache_write) if cache_write > 0 else cached
    inp = max(0, int(raw.get("prompt_tokens") or 0) - cache_read - cache_write)
    out = int(raw.get("completion_tokens") or 0)
    usage = empty_usage()
    usage["input"], usage["output"] = inp, out
    usage["cacheRead"], usage["cacheWrite"] = cache_read, cache_write
    usage["totalTokens"] = inp + out + cache_read + cache_write
    prices = model.cost
    cost = usage["cost"]
    parts = (prices.input * inp / 1e6, prices.output * out / 1e6,
             prices.cache_read * cache_read / 1e6, prices.cache_write * cache_write / 1e6)
    cost["input"], cost["output"], cost["cacheRead"], cost["cacheWrite"] = (js_number(p) for p in parts)
    cost["total"] = js_number(sum(parts))
    return usage


def js_number(value: float) -> float:
    """An integral float as an int, so it is written ``0`` (as JavaScript writes numbers in pi's
    files) rather than ``0.0``; other values unchanged."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# --------------------------------------------------------------------------- the assembler


class StreamAssembler(ReplyBuilder):
    """Accumulates one streamed reply. Call ``start()``, ``feed(chunk)`` per chunk, then exactly
    one of ``finish()`` (the stream ended) or ``fail(...)`` (it broke)."""

    def __init__(self, model: ModelInfo, *, api: str | None = None) -> None:
        super().__init__(model, api=api)
        self._text_index: int | None = None
        self._thinking_index: int | None = None
        self._calls: list[tuple[int, int | None, str]] = []  # (block index, stream index, id)
        self._buffers: dict[int, PartialJson] = {}
        self._finish: str | None = None
        self._usage_seen = False
        self._last_block: int | None = None
        """The content index of the block that received the last delta (where a cut lands)."""

    def feed(self, chunk: dict[str, Any]) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        if chunk.get("id") and "responseId" not in self.message:
            self.message["responseId"] = str(chunk["id"])
        reported = chunk.get("model")
        if reported and reported != self.model.id and "responseModel" not in self.message:
            self.message["responseModel"] = str(reported)
        choices = chunk.get("choices") or []
        usage = chunk.get("usage") or (choices[0].get("usage") if choices else None)
        if usage:
            self.message["usage"] = usage_from_openai(usage, self.model)
            self._usage_seen = True
        if not choices:
            return events
        choice = choices[0]
        if choice.get("finish_reason"):
            self._finish = str(choice["finish_reason"])
            stop = FINISH_REASONS.get(self._finish)
            if stop is not None:  # as pi: the partials from here on (the blocks' ends) show it
                self.message["stopReason"] = stop  # type: ignore[typeddict-item]
        delta = choice.get("delta") or {}
        for name in REASONING_FIELDS:
            value = delta.get(name)
            if isinstance(value, str) and value:
                events.extend(self._thinking(value, name))
                break
        content = delta.get("content")
        if isinstance(content, str) and content:
            events.extend(self._text(content))
        for call in delta.get("tool_calls") or []:
            events.extend(self._tool_call(call))
        for detail in delta.get("reasoning_details") or []:
            self._reasoning_detail(detail)
        if len(events) > 1:
            # Every event of one chunk carries the reply as it stands after the chunk, as pi's
            # do (its provider applies the whole chunk before anyone reads them): a tool call's
            # ``toolcall_start`` shows the arguments its first fragment brought.
            snapshot = self._snapshot()
            for event in events:
                event["partial"] = snapshot  # type: ignore[typeddict-unknown-key]
        return events

    def _thinking(self, text: str, field: str) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        content = self.message["content"]
        if self._thinking_index is None:
            self._thinking_index = len(content)
            content.append({"type": "thinking", "thinking": "", "thinkingSignature": field})
            events.append({"type": "thinking_start", "contentIndex": self._thinking_index, "partial": self._snapshot()})
        block = content[self._thinking_index]
        self._last_block = self._thinking_index
        block["thinking"] += text  # type: ignore[typeddict-item]
        events.append({"type": "thinking_delta", "contentIndex": self._thinking_index, "delta": text, "partial": self._snapshot()})
        return events

    def _text(self, text: str) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        content = self.message["content"]
        if self._text_index is None:
            self._text_index = len(content)
            content.append({"type": "text", "text": ""})
            events.append({"type": "text_start", "contentIndex": self._text_index, "partial": self._snapshot()})
        block = content[self._text_index]
        self._last_block = self._text_index
        block["text"] += text  # type: ignore[typeddict-item]
        events.append({"type": "text_delta", "contentIndex": self._text_index, "delta": text, "partial": self._snapshot()})
        return events

    def _tool_call(self, call: dict[str, Any]) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        content = self.message["content"]
        index = call.get("index")
        call_id = call.get("id") or ""
        function = call.get("function") or {}
        block_index = None
        for known_block, known_index, known_id in self._calls:
            if (index is not None and known_index == index) or (index is None and call_id and known_id == call_id):
                block_index = known_block
                break
        if block_index is None:
            block_index = len(content)
            content.append({"type": "toolCall", "id": call_id, "name": function.get("name") or "", "arguments": {}})
            self._calls.append((block_index, index, call_id))
            self._buffers[block_index] = PartialJson()
            events.append({"type": "toolcall_start", "contentIndex": block_index, "partial": self._snapshot()})
        block = content[block_index]
        self._last_block = block_index
        if call_id and not block.get("id"):
            block["id"] = call_id  # type: ignore[typeddict-unknown-key]
        if function.get("name") and not block.get("name"):
            block["name"] = function["name"]  # type: ignore[typeddict-unknown-key]
        fragment = function.get("arguments") or ""
        if fragment:
            partial = self._buffers[block_index].append(fragment).value()
            block["arguments"] = partial if isinstance(partial, dict) else {}  # type: ignore[typeddict-unknown-key]
        events.append({"type": "toolcall_delta", "contentIndex": block_index, "delta": fragment, "partial": self._snapshot()})
        return events

    def _reasoning_detail(self, detail: Any) -> None:
        if not isinstance(detail, dict) or detail.get("type") != "reasoning.encrypted" or not detail.get("data"):
            return
        for block in self.message["content"]:
            if block["type"] == "toolCall" and block["id"] and block["id"] == detail.get("id"):
                block["thoughtSignature"] = json.dumps(detail, separators=(",", ":"), ensure_ascii=False)

    def _close_blocks(self) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        for index, block in enumerate(self.message["content"]):
            if block["type"] == "thinking":
                events.append({"type": "thinking_end", "contentIndex": index, "content": block["thinking"], "partial": self._snapshot()})
            elif block["type"] == "text":
                events.append({"type": "text_end", "contentIndex": index, "content": block["text"], "partial": self._snapshot()})
            elif block["type"] == "toolCall":
                buffer = self._buffers.get(index)
                block["arguments"] = parse_tool_arguments(buffer.text if buffer else "")
                events.append({"type": "toolcall_end", "contentIndex": index, "toolCall": copy.deepcopy(block), "partial": self._snapshot()})
        return events

    def finish(self) -> list[AssistantMessageEvent]:
        """The stream ended normally: close the blocks and map ``finish_reason`` (§14.14)."""
        events = self._close_blocks()
        finish = self._finish
        stop = FINISH_REASONS.get(finish) if finish else "stop"
        if stop is None:
            return [*events, self._error_event(f"Provider finish_reason: {finish}", "unknown")]
        self.message["stopReason"] = stop  # type: ignore[typeddict-item]
        events.append({"type": "done", "reason": stop, "message": copy.deepcopy(self.message)})  # type: ignore[typeddict-item]
        return events

    def fail(self, error_message: str, kind: ErrorKind, *, retry_after_ms: int | None = None) -> list[AssistantMessageEvent]:
        """The stream broke (or never started): keep the partial content, end with ``error``."""
        events = self._close_blocks()
        events.append(self._error_event(error_message, kind, retry_after_ms))
        return events

    @property
    def usage_seen(self) -> bool:
        return self._usage_seen

    def position(self) -> str:
        """Where the stream stopped, in words (for error messages)."""
        if self._finish is not None:
            return "after the finish reason, before the end of the stream" if self._usage_seen else \
                "after the finish reason, before the usage"
        if self._last_block is None:
            return "before any content"
        block = self.message["content"][self._last_block]
        if block["type"] == "toolCall":
            buffer = self._buffers.get(self._last_block)
            if buffer is not None and not buffer.is_complete:
                return f"in the middle of the arguments of tool call {block['name'] or '?'!r}"
            return f"after tool call {block['name'] or '?'!r}"
        return f"during the {block['type']}"
