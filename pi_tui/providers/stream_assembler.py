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
import re
from typing import Any

from pi_tui.core.messages import AssistantMessage, ErrorKind, Usage, empty_usage, now_ms
from pi_tui.core.provider import AssistantMessageEvent, ModelInfo

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


# --------------------------------------------------------------------------- tolerant JSON

_BAD_ESCAPE = re.compile(r'\\(?!["\\/bfnrtu])')


def _scan_strings(text: str) -> tuple[list[bool], bool]:
    """For each character, whether it lies inside a JSON string (delimiting quotes excluded);
    and whether the text ends inside an open string."""
    inside: list[bool] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                inside.append(False)
                continue
        elif ch == '"':
            in_string = True
            inside.append(False)
            continue
        inside.append(in_string)
    return inside, in_string


def _escape_controls_in_strings(text: str) -> str:
    inside, _ = _scan_strings(text)
    return "".join(f"\\u{ord(ch):04x}" if flag and ord(ch) < 0x20 else ch for ch, flag in zip(text, inside, strict=True))


class _PartialJson:
    """A JSON prefix growing by fragments, with its bracket/string state kept incrementally so a
    long streamed argument (a whole file for ``write``) is scanned once, not once per delta."""

    _DANGLING = re.compile(r'(,\s*"[^"]*"\s*:?\s*|,\s*|:\s*|"[^"]*"\s*:\s*)$')
    _TAIL = 512
    _ALWAYS_REPARSE_BELOW = 8192
    _REPARSE_GROWTH = 8
    """Past 8 KB, re-parse only after the text grew by 1/8: parsing every delta of a 500 KB
    ``write`` argument would be quadratic (minutes); this keeps it near-linear. The final
    arguments are always parsed from the whole text."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._size = 0
        self._closers: list[str] = []
        self._in_string = self._escaped = False
        self._parsed_length = -1
        self._parsed: Any = None

    def append(self, fragment: str) -> _PartialJson:
        for ch in fragment:
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif ch == "\\":
                    self._escaped = True
                elif ch == '"':
                    self._in_string = False
            elif ch == '"':
                self._in_string = True
            elif ch in "{[":
                self._closers.append("}" if ch == "{" else "]")
            elif ch in "}]" and self._closers:
                self._closers.pop()
        self._parts.append(fragment)
        self._size += len(fragment)
        return self

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def value(self) -> Any:
        """The parsed prefix (closing what is open, dropping a dangling key); None if hopeless."""
        size = self._size
        if size >= self._ALWAYS_REPARSE_BELOW and size - self._parsed_length < size // self._REPARSE_GROWTH:
            return self._parsed
        self._parsed_length = size
        self._parsed = self._parse()
        return self._parsed

    def _parse(self) -> Any:
        if not self._closers and not self._in_string:  # possibly complete already
            try:
                return json.loads(self.text)
            except ValueError:
                pass
        candidate = self.text + ('"' if self._in_string else "")
        closers = "".join(reversed(self._closers))
        for _ in range(3):
            try:
                return json.loads(candidate + closers)
            except ValueError:
                head, tail = candidate[: -self._TAIL], candidate[-self._TAIL :]
                trimmed = self._DANGLING.sub("", tail.rstrip())
                if trimmed == tail:
                    break
                candidate = head + trimmed
        return None


def parse_partial_json(text: str) -> Any:
    """Best-effort parse of a JSON prefix (streaming tool arguments); None when hopeless."""
    return _PartialJson().append(text).value()


def parse_tool_arguments(text: str) -> dict[str, Any]:
    """The final tool-call arguments as pi reads them: as JSON, else repaired (raw control
    characters escaped, invalid backslashes doubled), else a partial parse, else ``{}``."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        repaired = _BAD_ESCAPE.sub(r"\\\\", _escape_controls_in_strings(text))
        try:
            value = json.loads(repaired)
        except ValueError:
            value = parse_partial_json(repaired)
    return value if isinstance(value, dict) else {}


# --------------------------------------------------------------------------- the assembler


class StreamAssembler:
    """Accumulates one streamed reply. Call ``start()``, ``feed(chunk)`` per chunk, then exactly
    one of ``finish()`` (the stream ended) or ``fail(...)`` (it broke)."""

    def __init__(self, model: ModelInfo, *, api: str | None = None) -> None:
        self.model = model
        self.message: AssistantMessage = {
            "role": "assistant",
            "content": [],
            "api": api or model.api,
            "provider": model.provider,
            "model": model.id,
            "usage": empty_usage(),
            "stopReason": "stop",
            "timestamp": now_ms(),
        }
        self._text_index: int | None = None
        self._thinking_index: int | None = None
        self._calls: list[tuple[int, int | None, str]] = []  # (block index, stream index, id)
        self._buffers: dict[int, _PartialJson] = {}
        self._finish: str | None = None

    def _snapshot(self) -> AssistantMessage:
        snap = dict(self.message)
        snap["content"] = [dict(b) for b in self.message["content"]]
        return snap  # type: ignore[return-value]

    def start(self) -> AssistantMessageEvent:
        return {"type": "start", "partial": self._snapshot()}

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
        if not choices:
            return events
        choice = choices[0]
        if choice.get("finish_reason"):
            self._finish = str(choice["finish_reason"])
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
        return events

    def _thinking(self, text: str, field: str) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        content = self.message["content"]
        if self._thinking_index is None:
            self._thinking_index = len(content)
            content.append({"type": "thinking", "thinking": "", "thinkingSignature": field})
            events.append({"type": "thinking_start", "contentIndex": self._thinking_index, "partial": self._snapshot()})
        block = content[self._thinking_index]
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
            self._buffers[block_index] = _PartialJson()
            events.append({"type": "toolcall_start", "contentIndex": block_index, "partial": self._snapshot()})
        block = content[block_index]
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

    def _error_event(self, error_message: str, kind: ErrorKind, retry_after_ms: int | None = None) -> AssistantMessageEvent:
        self.message["stopReason"] = "error"
        self.message["errorMessage"] = error_message
        self.message["errorKind"] = kind
        if retry_after_ms is not None:
            self.message["retryAfterMs"] = retry_after_ms
        return {"type": "error", "reason": "error", "error": copy.deepcopy(self.message)}
