"""OpenAI Responses stream events → pi's stream events and final assistant message (§15.14).

Each output item becomes one block, in order:

* ``reasoning`` → thinking; its text is the summary parts joined with ``"\\n\\n"`` (else the
  reasoning content, else what streamed) and its ``thinkingSignature`` is the whole item from
  ``response.output_item.done`` as JSON — ``encrypted_content`` included, which is what the
  next request must send back (``store`` is false);
* ``message`` → text, with ``textSignature`` ``{"v":1,"id":<item id>,"phase"?}``;
* ``function_call`` → toolCall with id ``<call_id>|<item id>``.

Usage comes only from ``response.completed``: ``input`` = input − cached, ``cacheRead`` =
cached, ``output`` = output tokens; the cost is scaled by the served ``service_tier``. A stream
that ends without ``response.completed`` (or ``response.failed``) is an error: the answer was
cut off, whatever arrived before it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pi_tui.core.messages import ErrorKind
from pi_tui.core.partial_json import parse_partial_json, parse_tool_arguments
from pi_tui.core.provider import AssistantMessageEvent, ModelInfo
from pi_tui.providers.classify import classify_http_error
from pi_tui.providers.reply_builder import ReplyBuilder
from pi_tui.providers.stream_assembler import js_number
from pi_tui.providers.stream_failures import CONNECTION_CUT_MESSAGE

_STATUS = {"completed": "stop", "incomplete": "length", "failed": "error", "cancelled": "error", "in_progress": "stop", "queued": "stop"}
_TIER = {"flex": 0.5, "priority": 2.0}


class ResponsesAssembler(ReplyBuilder):
    """Accumulates one streamed Responses reply: ``start()``, ``feed(event)`` per SSE event, then
    ``finish()`` or ``fail(...)``."""

    def __init__(self, model: ModelInfo) -> None:
        super().__init__(model)
        self._item: dict[str, Any] | None = None
        self._block: dict[str, Any] | None = None
        self._json = ""
        self._completed = False
        self._failure: tuple[str, ErrorKind] | None = None

    def _index(self) -> int:
        return len(self.message["content"]) - 1

    @property
    def failure(self) -> tuple[str, ErrorKind] | None:
        """Set when the stream itself reported an error (``error`` / ``response.failed``)."""
        return self._failure

    def feed(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        kind = event.get("type")
        handler = _HANDLERS.get(str(kind))
        return handler(self, event) if handler is not None else []

    # ------------------------------------------------------------------ event handlers

    def _created(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        response = event.get("response") or {}
        if response.get("id"):
            self.message["responseId"] = str(response["id"])
        return []

    def _item_added(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        item = copy.deepcopy(event.get("item") or {})
        kind = item.get("type")
        if kind == "reasoning":
            block: dict[str, Any] = {"type": "thinking", "thinking": ""}
            start = "thinking_start"
        elif kind == "message":
            block, start = {"type": "text", "text": ""}, "text_start"
        elif kind == "function_call":
            block = {"type": "toolCall", "id": f"{item.get('call_id', '')}|{item.get('id', '')}", "name": item.get("name", ""), "arguments": {}}
            self._json = item.get("arguments") or ""
            start = "toolcall_start"
        else:
            return []
        self._item, self._block = item, block
        self.message["content"].append(block)  # type: ignore[arg-type]
        return [{"type": start, "contentIndex": self._index(), "partial": self._snapshot()}]  # type: ignore[typeddict-item]

    def _delta(self, kind: str, text: str) -> list[AssistantMessageEvent]:
        return [{"type": kind, "contentIndex": self._index(), "delta": text, "partial": self._snapshot()}]  # type: ignore[typeddict-item]

    def _summary_part_added(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        if self._item is not None and self._item.get("type") == "reasoning":
            self._item.setdefault("summary", []).append(dict(event.get("part") or {}))
        return []

    def _thinking_text(self, text: str) -> list[AssistantMessageEvent]:
        if self._block is None or self._block["type"] != "thinking" or not text:
            return []
        self._block["thinking"] += text
        return self._delta("thinking_delta", text)

    def _summary_delta(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        parts = (self._item or {}).get("summary") or []
        if not parts:
            return []
        parts[-1]["text"] = parts[-1].get("text", "") + str(event.get("delta", ""))
        return self._thinking_text(str(event.get("delta", "")))

    def _summary_part_done(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        return self._thinking_text("\n\n") if (self._item or {}).get("summary") else []

    def _reasoning_delta(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        return self._thinking_text(str(event.get("delta", "")))

    def _text_delta(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        delta = str(event.get("delta", ""))
        if self._block is None or self._block["type"] != "text" or not delta:
            return []
        self._block["text"] += delta
        return self._delta("text_delta", delta)

    def _arguments_delta(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        delta = str(event.get("delta", ""))
        if self._block is None or self._block["type"] != "toolCall":
            return []
        self._json += delta
        partial = parse_partial_json(self._json)
        self._block["arguments"] = partial if isinstance(partial, dict) else {}
        return self._delta("toolcall_delta", delta)

    def _arguments_done(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        final = str(event.get("arguments", ""))
        if self._block is None or self._block["type"] != "toolCall":
            return []
        rest = final[len(self._json):] if final.startswith(self._json) else ""
        self._json = final
        return self._delta("toolcall_delta", rest) if rest else []

    def _item_done(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        item = event.get("item") or {}
        block, kind = self._block, item.get("type")
        self._item = self._block = None
        if block is None:
            return []
        index = self.message["content"].index(block)  # type: ignore[arg-type]
        if kind == "reasoning" and block["type"] == "thinking":
            summary = "\n\n".join(str(s.get("text", "")) for s in item.get("summary") or [])
            content = "\n\n".join(str(c.get("text", "")) for c in item.get("content") or [])
            block["thinking"] = summary or content or block["thinking"]
            block["thinkingSignature"] = json.dumps(item, separators=(",", ":"), ensure_ascii=False)
            return [{"type": "thinking_end", "contentIndex": index, "content": block["thinking"], "partial": self._snapshot()}]
        if kind == "message" and block["type"] == "text":
            block["text"] = "".join(str(c.get("text") if c.get("type") == "output_text" else c.get("refusal", "")) for c in item.get("content") or [])
            signature: dict[str, Any] = {"v": 1, "id": item.get("id")}
            if item.get("phase"):
                signature["phase"] = item["phase"]
            block["textSignature"] = json.dumps(signature, separators=(",", ":"))
            return [{"type": "text_end", "contentIndex": index, "content": block["text"], "partial": self._snapshot()}]
        if kind == "function_call" and block["type"] == "toolCall":
            block["arguments"] = parse_tool_arguments(self._json or str(item.get("arguments") or "{}"))
            return [{"type": "toolcall_end", "contentIndex": index, "toolCall": copy.deepcopy(block), "partial": self._snapshot()}]  # type: ignore[typeddict-item]
        return []

    def _completed_event(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        response = event.get("response") or {}
        if response.get("id"):
            self.message["responseId"] = str(response["id"])
        self._usage(response)
        status = _STATUS.get(str(response.get("status") or "completed"), "stop")
        if status == "stop" and any(b["type"] == "toolCall" for b in self.message["content"]):
            status = "toolUse"
        self.message["stopReason"] = status  # type: ignore[typeddict-item]
        self._completed = True
        return []

    def _usage(self, response: dict[str, Any]) -> None:
        raw = response.get("usage") or {}
        cached = int((raw.get("input_tokens_details") or {}).get("cached_tokens") or 0)
        usage = self.message["usage"]
        usage["input"] = int(raw.get("input_tokens") or 0) - cached
        usage["output"] = int(raw.get("output_tokens") or 0)
        usage["cacheRead"], usage["cacheWrite"] = cached, 0
        usage["totalTokens"] = int(raw.get("total_tokens") or 0)
        multiplier = _TIER.get(str(response.get("service_tier")), 1.0)
        if response.get("service_tier") == "priority" and self.model.id == "gpt-5.5":
            multiplier = 2.5
        prices = self.model.cost
        parts = [prices.input * usage["input"] / 1e6 * multiplier, prices.output * usage["output"] / 1e6 * multiplier,
                 prices.cache_read * cached / 1e6 * multiplier, 0.0]
        cost = usage["cost"]
        cost["input"], cost["output"], cost["cacheRead"], cost["cacheWrite"] = (js_number(p) for p in parts)
        cost["total"] = js_number(sum(parts))

    def _error(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        text = f"Error Code {event.get('code')}: {event.get('message')}"
        self._failure = (text, classify_http_error(None, text, str(event.get("code") or "") or None))
        return []

    def _failed(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        response = event.get("response") or {}
        self._usage(response)
        error, details = response.get("error"), response.get("incomplete_details")
        if isinstance(error, dict):
            text = f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
            code = str(error.get("code") or "") or None
        elif isinstance(details, dict) and details.get("reason"):
            text, code = f"incomplete: {details['reason']}", None
        else:
            text, code = "Unknown error (no error details in response)", None
        self._failure = (text, classify_http_error(None, text, code))
        return []

    # ------------------------------------------------------------------ the end

    def finish(self) -> list[AssistantMessageEvent]:
        """The stream ended: done, or an error when it never said it completed."""
        if self._failure is not None:
            return self.fail(*self._failure)
        if not self._completed:
            return self.interrupted(f"{CONNECTION_CUT_MESSAGE} (no response.completed)")
        if self.message["stopReason"] == "error":
            return self.fail("An unknown error occurred", "unknown")
        reason = self.message["stopReason"]
        return [{"type": "done", "reason": reason, "message": copy.deepcopy(self.message)}]  # type: ignore[typeddict-item]

    def position(self) -> str:
        """Where a broken stream stopped: inside a function call whose item never finished, or
        after the last block (``ReplyBuilder``)."""
        if self._block is not None and self._block["type"] == "toolCall":
            return f"in the middle of the arguments of tool call {self._block['name'] or '?'!r}"
        return super().position()

    def fail(self, error_message: str, kind: ErrorKind, *, retry_after_ms: int | None = None) -> list[AssistantMessageEvent]:
        """End with ``error``; the partial content is kept (an unfinished block is closed as is)."""
        events: list[AssistantMessageEvent] = []
        if self._block is not None and self._block["type"] == "toolCall":
            self._block["arguments"] = parse_tool_arguments(self._json)
        self._block = self._item = None
        events.append(self._error_event(error_message, kind, retry_after_ms))
        return events


_HANDLERS = {
    "response.created": ResponsesAssembler._created,
    "response.output_item.added": ResponsesAssembler._item_added,
    "response.reasoning_summary_part.added": ResponsesAssembler._summary_part_added,
    "response.reasoning_summary_text.delta": ResponsesAssembler._summary_delta,
    "response.reasoning_summary_part.done": ResponsesAssembler._summary_part_done,
    "response.reasoning_text.delta": ResponsesAssembler._reasoning_delta,
    "response.output_text.delta": ResponsesAssembler._text_delta,
    "response.refusal.delta": ResponsesAssembler._text_delta,
    "response.function_call_arguments.delta": ResponsesAssembler._arguments_delta,
    "response.function_call_arguments.done": ResponsesAssembler._arguments_done,
    "response.output_item.done": ResponsesAssembler._item_done,
    "response.completed": ResponsesAssembler._completed_event,
    # pi 0.73.1 ignores this event (its reply then ends as "stop" with no usage); it is the
    # API's normal end of a reply cut by max_output_tokens, so here it is a "length" stop
    "response.incomplete": ResponsesAssembler._completed_event,
    "error": ResponsesAssembler._error,
    "response.failed": ResponsesAssembler._failed,
}
