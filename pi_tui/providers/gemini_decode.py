"""Gemini's ``streamGenerateContent?alt=sse`` body → pi's stream events and final assistant message
(pi-behaviour.md §15.15).

Two layers: ``GeminiEventFramer`` cuts the body into events as Google's SDK does (an event ends at
the first ``\\n\\n``, ``\\r\\r`` or ``\\r\\n\\r\\n``), and ``GeminiStreamDecoder`` turns each
``GenerateContentResponse`` chunk into pi's events, storing what pi stores:

* consecutive ``thought: true`` parts form one thinking block, other text parts one text block;
  a block keeps the last non-empty ``thoughtSignature`` it saw (``thinkingSignature`` /
  ``textSignature``); a ``functionCall`` part is a whole tool call with its ``thoughtSignature``,
  its ``id`` when the server gave a unique one, else ``<name>_<epoch ms>_<n>``;
* every chunk carrying ``usageMetadata`` replaces the usage (``input`` = prompt − cached,
  ``output`` = candidates + thoughts, ``totalTokens`` = the server's total);
* ``responseId`` is the first non-empty one.

Stricter than pi 0.73.1, on purpose (a stream that does not finish is an error, never an answer):

* a body that ends without a ``finishReason`` is a transient error naming where it stopped (pi
  takes whatever arrived as a finished ``stop``) — a cut, a proxy that closed early, a stall;
* an event cut in the middle (no terminating blank line) is never parsed, so a function call
  whose ``args`` did not arrive whole never becomes a tool call, let alone runs; the error names it;
* a line that is not an event-stream field, or event data that is not a JSON object, is a
  transient ``Malformed stream`` error (pi's SDK throws on bad JSON too, and skips the rest);
* an ``error`` object inside the stream ends it as an error, classified by its code.
"""

from __future__ import annotations

import codecs
import copy
import json
import re
import time
from itertools import count
from typing import Any

from pi_tui.core.messages import ErrorKind, empty_usage
from pi_tui.core.provider import AssistantMessageEvent, ModelInfo
from pi_tui.providers.openai_sse import MALFORMED_CAUSE, snippet
from pi_tui.providers.reply_builder import ReplyBuilder, usage_with_cost
from pi_tui.providers.stream_failures import CONNECTION_CUT_MESSAGE

STOP_REASONS = {"STOP": "stop", "MAX_TOKENS": "length"}
UNKNOWN_ERROR = "An unknown error occurred"
_DELIMITERS = ("\r\n\r\n", "\n\n", "\r\r")
_SSE_FIELDS = ("data", "event", "id", "retry")
_PARTIAL_CALL = re.compile(r'"functionCall"\s*:\s*\{.*?"name"\s*:\s*"((?:[^"\\]|\\.)*)"', re.DOTALL)
_call_numbers = count(1)
"""pi's module-wide counter in generated tool-call ids (``bash_1796133751774_1``)."""


class GeminiEventFramer:
    """Body bytes → event texts (trimmed), framed as Google's SDK frames them."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""

    def feed(self, data: bytes) -> list[str]:
        self._buffer += self._decoder.decode(data)
        events: list[str] = []
        while True:
            found = [(i, d) for d in _DELIMITERS if (i := self._buffer.find(d)) >= 0]
            if not found:
                return events
            index, delimiter = min(found)
            event, self._buffer = self._buffer[:index], self._buffer[index + len(delimiter):]
            if event.strip():
                events.append(event.strip())

    def pending(self) -> str:
        """What arrived after the last complete event (an event cut in the middle)."""
        return (self._buffer + self._decoder.decode(b"", final=True)).strip()


def event_data(event: str) -> str | None:
    """The ``data`` of one event (lines joined with newlines; None for a comment-only event);
    ``ValueError`` naming the line for anything that is not an event-stream field."""
    data: list[str] = []
    for line in event.splitlines():
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if not colon or name.strip() not in _SSE_FIELDS:
            raise ValueError(f"a line is not an event-stream field: {snippet(line)}")
        if name.strip() == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    return "\n".join(data) if data else None


def partial_call_name(text: str) -> str | None:
    """The function name in the text of an event that never completed, if it was a call."""
    found = _PARTIAL_CALL.search(text)
    return found.group(1) if found else None


class GeminiStreamDecoder(ReplyBuilder):
    """Feed it parsed chunks; then exactly one of ``finish()``, ``fail(...)``, ``interrupted(...)``."""

    def __init__(self, model: ModelInfo) -> None:
        super().__init__(model)
        self._open: int | None = None  # the content index of the thinking/text block being streamed
        self._finish: str | None = None
        self._blocked: str | None = None
        self.partial_call: str | None = None
        """The name of a function call cut in the middle of its event (set by the caller)."""

    # ------------------------------------------------------------------ chunks

    def feed(self, chunk: dict[str, Any]) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        if chunk.get("responseId") and not self.message.get("responseId"):
            self.message["responseId"] = str(chunk["responseId"])
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            self._blocked = str(feedback["blockReason"])
        candidates = chunk.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict) else {}
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                events += self._text(part)
            if isinstance(part.get("functionCall"), dict):
                events += self._function_call(part)
        if candidate.get("finishReason"):
            self._finish = str(candidate["finishReason"])
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            self._usage(usage)
        return events

    def _close_open(self) -> list[AssistantMessageEvent]:
        if self._open is None:
            return []
        index, self._open = self._open, None
        block: Any = self.message["content"][index]
        if block["type"] == "thinking":
            return [{"type": "thinking_end", "contentIndex": index, "content": block["thinking"], "partial": self._snapshot()}]
        return [{"type": "text_end", "contentIndex": index, "content": block["text"], "partial": self._snapshot()}]

    def _text(self, part: dict[str, Any]) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        kind = "thinking" if part.get("thought") is True else "text"
        content: list[Any] = self.message["content"]
        if self._open is None or content[self._open]["type"] != kind:
            events += self._close_open()
            content.append({"type": "thinking", "thinking": ""} if kind == "thinking" else {"type": "text", "text": ""})
            self._open = len(content) - 1
            events.append({"type": f"{kind}_start", "contentIndex": self._open, "partial": self._snapshot()})  # type: ignore[typeddict-item]
        block = content[self._open]
        block[kind] += part["text"]
        signature = part.get("thoughtSignature")
        if isinstance(signature, str) and signature:
            block["thinkingSignature" if kind == "thinking" else "textSignature"] = signature
        events.append({"type": f"{kind}_delta", "contentIndex": self._open, "delta": part["text"],  # type: ignore[typeddict-item]
                       "partial": self._snapshot()})
        return events

    def _function_call(self, part: dict[str, Any]) -> list[AssistantMessageEvent]:
        events = self._close_open()
        call = part["functionCall"]
        name = str(call.get("name") or "")
        content: list[Any] = self.message["content"]
        given = call.get("id")
        taken = any(b["type"] == "toolCall" and b["id"] == given for b in content)
        call_id = str(given) if given and not taken else f"{name}_{int(time.time() * 1000)}_{next(_call_numbers)}"
        args = call.get("args")
        block: dict[str, Any] = {"type": "toolCall", "id": call_id, "name": name, "arguments": args if isinstance(args, dict) else {}}
        if isinstance(part.get("thoughtSignature"), str) and part["thoughtSignature"]:
            block["thoughtSignature"] = part["thoughtSignature"]
        content.append(block)
        index = len(content) - 1
        events.append({"type": "toolcall_start", "contentIndex": index, "partial": self._snapshot()})
        events.append({"type": "toolcall_delta", "contentIndex": index, "partial": self._snapshot(),
                       "delta": json.dumps(block["arguments"], separators=(",", ":"), ensure_ascii=False)})
        events.append({"type": "toolcall_end", "contentIndex": index, "toolCall": copy.deepcopy(block),  # type: ignore[typeddict-item]
                       "partial": self._snapshot()})
        return events

    def _usage(self, raw: dict[str, Any]) -> None:
        def number(key: str) -> int:
            value = raw.get(key)
            return int(value) if isinstance(value, (int, float)) else 0

        usage = empty_usage()
        usage["input"] = number("promptTokenCount") - number("cachedContentTokenCount")
        usage["output"] = number("candidatesTokenCount") + number("thoughtsTokenCount")
        usage["cacheRead"] = number("cachedContentTokenCount")
        usage = usage_with_cost(self.model, usage)
        usage["totalTokens"] = number("totalTokenCount")
        self.message["usage"] = usage

    # ------------------------------------------------------------------ endings

    def finish(self) -> list[AssistantMessageEvent]:
        """The body ended cleanly: an answer only if a ``finishReason`` came."""
        if self._finish is None:
            if self._blocked is not None and not self.message["content"]:
                return self.fail(f"The prompt was blocked by the provider (blockReason {self._blocked})", "unknown")
            return self.interrupted(f"{CONNECTION_CUT_MESSAGE} (no finishReason)")
        events = self._close_open()
        stop = STOP_REASONS.get(self._finish, "error")
        if any(b["type"] == "toolCall" for b in self.message["content"]):
            stop = "toolUse"  # as pi: a function call makes it a tool turn, whatever the reason said
        if stop == "error":
            return [*events, *self.fail(f"{UNKNOWN_ERROR} (finishReason {self._finish})", "unknown")]
        self.message["stopReason"] = stop  # type: ignore[typeddict-item]
        events.append({"type": "done", "reason": stop, "message": copy.deepcopy(self.message)})  # type: ignore[typeddict-item]
        return events

    def fail(self, error_message: str, kind: ErrorKind, *, retry_after_ms: int | None = None) -> list[AssistantMessageEvent]:
        """End as an error, keeping the partial content and the usage counted so far."""
        return [*self._close_open(), self._error_event(error_message, kind, retry_after_ms)]

    def calls_not_run(self) -> list[str]:
        calls = super().calls_not_run()
        return calls if self.partial_call is None else [*calls, self.partial_call or "?"]

    def position(self) -> str:
        if self.partial_call is not None:
            return f"in the middle of the arguments of tool call {self.partial_call or '?'!r}"
        if self._finish is not None:
            return "after the finish reason, before the end of the stream"
        return super().position()


def malformed(decoder: GeminiStreamDecoder, detail: str) -> list[AssistantMessageEvent]:
    return decoder.interrupted(f"{MALFORMED_CAUSE}: {detail}")
