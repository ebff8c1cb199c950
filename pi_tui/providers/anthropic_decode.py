"""Anthropic's SSE stream → pi's stream events and final assistant message (pi-behaviour.md
§15.9, §15.10, §15.12).

Two layers: ``iter_sse(chunks)`` frames bytes into ``(event, data)`` pairs (lines may end in CRLF,
LF or CR; ``:`` comments; multi-line data joined with newlines; a last unterminated event is
still delivered), and ``AnthropicStreamDecoder`` turns the events into pi's events, dispatching
on the SSE event *name* as pi does.

What it refuses to call an answer, so nothing half-received is ever acted on:

* a stream that ends without ``message_stop`` (``Anthropic stream ended before message_stop``);
* a ``tool_use`` whose input JSON did not finish (the reply becomes an error, the tool never runs);
* a ``refusal`` stop (``An unknown error occurred``) or an unknown stop reason.

Every failure keeps the partial content and the usage counted so far (§15.9 "End").
"""

from __future__ import annotations

import codecs
import copy
import json
from collections.abc import AsyncIterator
from typing import Any

from pi_tui.core.messages import ErrorKind
from pi_tui.core.overflow import is_overflow_error_text
from pi_tui.core.partial_json import PartialJson, parse_json_with_repair
from pi_tui.core.provider import AssistantMessageEvent, ModelInfo
from pi_tui.providers.reply_builder import ReplyBuilder, usage_with_cost

STOP_REASONS = {"end_turn": "stop", "pause_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                "tool_use": "toolUse", "refusal": "error", "sensitive": "error"}
MESSAGE_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                            "message_delta", "message_stop"})
UNKNOWN_ERROR = "An unknown error occurred"
ENDED_EARLY = "Anthropic stream ended before message_stop"
REDACTED_TEXT = "[Reasoning redacted]"


async def iter_sse(chunks: AsyncIterator[bytes]) -> AsyncIterator[tuple[str | None, str]]:
    """``(event name or None, data)`` per SSE event, framed exactly as pi frames them."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    buffer = ""
    event: str | None = None
    data: list[str] = []

    def take(line: str) -> tuple[str | None, str] | None:
        nonlocal event, data
        if line == "":
            if event is None and not data:
                return None
            out = (event, "\n".join(data))
            event, data = None, []
            return out
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        return None

    async for chunk in chunks:
        buffer += decoder.decode(chunk)
        while True:
            cut = _line_break(buffer)
            if cut is None:
                break
            line, buffer = cut
            dispatched = take(line)
            if dispatched is not None:
                yield dispatched
    buffer += decoder.decode(b"", final=True)
    while (cut := _line_break(buffer, final=True)) is not None:
        line, buffer = cut
        if (dispatched := take(line)) is not None:
            yield dispatched
    if buffer:
        take(buffer)
    if event is not None or data:
        yield event, "\n".join(data)


def _line_break(text: str, *, final: bool = False) -> tuple[str, str] | None:
    """Split off the first line; a CR at the very end waits for a possible LF (unless final)."""
    cr, lf = text.find("\r"), text.find("\n")
    if cr == -1 and lf == -1:
        return None
    if cr != -1 and (lf == -1 or cr < lf):
        if cr == len(text) - 1 and not final:
            return None
        rest = cr + 2 if text[cr + 1 : cr + 2] == "\n" else cr + 1
        return text[:cr], text[rest:]
    return text[:lf], text[lf + 1 :]


class StreamFailure(Exception):
    """The stream cannot become an answer; ``kind`` classifies it for the retry logic."""

    def __init__(self, message: str, kind: ErrorKind = "unknown") -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind


class AnthropicStreamDecoder(ReplyBuilder):
    """Feed ``(event, data)`` pairs with ``feed``; then ``finish()`` or ``fail(...)``."""

    def __init__(self, model: ModelInfo, *, tool_names: list[str] | None = None) -> None:
        super().__init__(model)
        self.tool_names = tool_names or []
        self._indexes: dict[int, int] = {}  # stream index -> content index
        self._buffers: dict[int, PartialJson] = {}  # content index -> tool input JSON
        self._open: set[int] = set()
        self._started = False
        self._stopped = False

    @property
    def started(self) -> bool:
        """Whether ``message_start`` arrived (a body without it is not an answer)."""
        return self._started

    def feed(self, name: str | None, data: str) -> list[AssistantMessageEvent]:
        """One SSE event; raises ``StreamFailure`` when the stream must end as an error."""
        if name == "error":
            raise StreamFailure(data, _classify_stream_error(data))
        if name not in MESSAGE_EVENTS:
            return []  # ping, unknown events, data-only events
        try:
            event = parse_json_with_repair(data)
        except ValueError as err:
            raise StreamFailure(f"Could not parse Anthropic SSE event {name}: {err}; data={data}", "transient") from err
        if not isinstance(event, dict):
            raise StreamFailure(f"Could not parse Anthropic SSE event {name}: not an object; data={data}", "transient")
        handler = getattr(self, f"_on_{name}")
        result: list[AssistantMessageEvent] = handler(event)
        return result

    # ------------------------------------------------------------------ events

    def _on_message_start(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        self._started = True
        message = event.get("message") or {}
        if message.get("id"):
            self.message["responseId"] = str(message["id"])
        raw = message.get("usage") or {}
        usage = self.message["usage"]
        usage["input"] = int(raw.get("input_tokens") or 0)
        usage["output"] = int(raw.get("output_tokens") or 0)
        usage["cacheRead"] = int(raw.get("cache_read_input_tokens") or 0)
        usage["cacheWrite"] = int(raw.get("cache_creation_input_tokens") or 0)
        usage_with_cost(self.model, usage)
        return []

    def _on_content_block_start(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        block = event.get("content_block") or {}
        kind = block.get("type")
        content = self.message["content"]
        if kind == "text":
            content.append({"type": "text", "text": ""})
            started = "text_start"
        elif kind == "thinking":
            content.append({"type": "thinking", "thinking": "", "thinkingSignature": ""})
            started = "thinking_start"
        elif kind == "redacted_thinking":
            content.append({"type": "thinking", "thinking": REDACTED_TEXT, "thinkingSignature": str(block.get("data", "")),
                            "redacted": True})
            started = "thinking_start"
        elif kind == "tool_use":
            name = str(block.get("name", ""))
            known = next((t for t in self.tool_names if t.lower() == name.lower()), name)
            # the start event's own input is dropped (§15.9): the deltas are the arguments
            content.append({"type": "toolCall", "id": str(block.get("id", "")), "name": known, "arguments": {}})
            self._buffers[len(content) - 1] = PartialJson()
            started = "toolcall_start"
        else:
            return []  # server tools and future block types are ignored with their deltas
        position = len(content) - 1
        self._indexes[int(event.get("index", position))] = position
        self._open.add(position)
        return [{"type": started, "contentIndex": position, "partial": self._snapshot()}]  # type: ignore[typeddict-item]

    def _on_content_block_delta(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        position = self._indexes.get(int(event.get("index", -1)))
        if position is None:
            return []
        block: Any = self.message["content"][position]
        delta = event.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta" and block["type"] == "text":
            text = str(delta.get("text", ""))
            block["text"] += text
            return [{"type": "text_delta", "contentIndex": position, "delta": text, "partial": self._snapshot()}]
        if kind == "thinking_delta" and block["type"] == "thinking":
            text = str(delta.get("thinking", ""))
            block["thinking"] += text
            return [{"type": "thinking_delta", "contentIndex": position, "delta": text, "partial": self._snapshot()}]
        if kind == "signature_delta" and block["type"] == "thinking":
            block["thinkingSignature"] = block.get("thinkingSignature", "") + str(delta.get("signature", ""))
            return []
        if kind == "input_json_delta" and block["type"] == "toolCall":
            fragment = str(delta.get("partial_json", ""))
            partial = self._buffers[position].append(fragment).value()
            block["arguments"] = partial if isinstance(partial, dict) else {}
            return [{"type": "toolcall_delta", "contentIndex": position, "delta": fragment, "partial": self._snapshot()}]
        return []

    def _on_content_block_stop(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        position = self._indexes.pop(int(event.get("index", -1)), None)
        if position is None or position not in self._open:
            return []
        self._open.discard(position)
        block: Any = self.message["content"][position]
        if block["type"] == "text":
            return [{"type": "text_end", "contentIndex": position, "content": block["text"], "partial": self._snapshot()}]
        if block["type"] == "thinking":
            return [{"type": "thinking_end", "contentIndex": position, "content": block["thinking"], "partial": self._snapshot()}]
        buffer = self._buffers[position]
        arguments = _complete_arguments(buffer)
        if arguments is None:
            raise StreamFailure(f"The arguments of tool call {block['name']} ({block['id']}) did not finish streaming: "
                                f"{buffer.text[-200:]!r}")
        block["arguments"] = arguments
        return [{"type": "toolcall_end", "contentIndex": position, "toolCall": copy.deepcopy(block), "partial": self._snapshot()}]

    def _on_message_delta(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        reason = (event.get("delta") or {}).get("stop_reason")
        if reason:
            mapped = STOP_REASONS.get(str(reason))
            if mapped is None:
                text = f"Unhandled stop reason: {reason}"
                raise StreamFailure(text, "context_overflow" if is_overflow_error_text(text) else "unknown")
            self.message["stopReason"] = mapped  # type: ignore[typeddict-item]
        raw = event.get("usage")
        if not isinstance(raw, dict):
            raise StreamFailure("Anthropic message_delta carried no usage")
        usage = self.message["usage"]
        for wire, field in (("input_tokens", "input"), ("output_tokens", "output"),
                            ("cache_read_input_tokens", "cacheRead"), ("cache_creation_input_tokens", "cacheWrite")):
            if raw.get(wire) is not None:
                usage[field] = int(raw[wire])  # type: ignore[literal-required]
        usage_with_cost(self.model, usage)
        return []

    def _on_message_stop(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        self._stopped = True
        return []

    # ------------------------------------------------------------------ endings

    def finish(self) -> list[AssistantMessageEvent]:
        """The body ended: ``done`` only after ``message_stop`` and a good stop reason."""
        # a stream cut short is transient (issue 13: retried per the retry settings; pi does not
        # retry it), and so is corrupted framing; the texts stay pi's
        if self._started and not self._stopped:
            return self.fail(ENDED_EARLY, "transient")
        unfinished = [self.message["content"][p] for p in self._open if self.message["content"][p]["type"] == "toolCall"]
        if unfinished:
            call: Any = unfinished[0]
            return self.fail(f"The arguments of tool call {call['name']} ({call['id']}) did not finish streaming", "transient")
        if self.message["stopReason"] == "error":
            return self.fail(UNKNOWN_ERROR, "unknown")
        reason = self.message["stopReason"]
        return [{"type": "done", "reason": reason, "message": copy.deepcopy(self.message)}]  # type: ignore[typeddict-item]

    def fail(self, error_message: str, kind: ErrorKind, *, retry_after_ms: int | None = None,
             aborted: bool = False) -> list[AssistantMessageEvent]:
        """End as an error (or ``aborted``), keeping the partial content and usage. Open text and
        thinking blocks are closed; an open tool call is not (it never finished, it never runs)."""
        events: list[AssistantMessageEvent] = []
        for position in sorted(self._open):
            block: Any = self.message["content"][position]
            if block["type"] == "text":
                events.append({"type": "text_end", "contentIndex": position, "content": block["text"], "partial": self._snapshot()})
            elif block["type"] == "thinking":
                events.append({"type": "thinking_end", "contentIndex": position, "content": block["thinking"],
                               "partial": self._snapshot()})
        self._open.clear()
        self.message["stopReason"] = "aborted" if aborted else "error"
        self.message["errorMessage"] = error_message
        if not aborted:
            self.message["errorKind"] = kind
        if retry_after_ms is not None:
            self.message["retryAfterMs"] = retry_after_ms
        reason = "aborted" if aborted else "error"
        events.append({"type": "error", "reason": reason, "error": copy.deepcopy(self.message)})  # type: ignore[typeddict-item]
        return events


def _complete_arguments(buffer: PartialJson) -> dict[str, Any] | None:
    """The tool input when its JSON is complete (``{}`` for none), else None."""
    if not buffer.text.strip():
        return {}
    if not buffer.is_complete:
        return None
    try:
        value = parse_json_with_repair(buffer.text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _classify_stream_error(data: str) -> ErrorKind:
    """A mid-stream ``event: error`` (overloaded, api_error, rate limit...)."""
    try:
        error = (json.loads(data) or {}).get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    kind = str(error.get("type", "")) if isinstance(error, dict) else ""
    if kind == "rate_limit_error":
        return "rate_limit"
    if kind in ("overloaded_error", "api_error") or "overloaded" in data.lower():
        return "transient"
    if is_overflow_error_text(data):
        return "context_overflow"
    return "unknown"
