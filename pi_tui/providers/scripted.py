"""A deterministic in-process provider driven by a script (see ``providers.script``).

It produces exactly the events and final messages the litellm adapter produces for the same
script over the fake server, without HTTP: tests and demos use it to run the whole agent offline.
Every request it receives is kept in ``requests`` so tests can assert on what was sent.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pi_tui.core.messages import AssistantMessage, ToolCall, Usage, empty_usage, now_ms, text_of
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest, ModelInfo
from pi_tui.providers.classify import classify_http_error
from pi_tui.providers.script import (
    EXHAUSTED_ERROR,
    RequestView,
    Script,
    error_message_for,
    turn_pieces,
)

_FINISH = {"stop": "stop", "end": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse"}


def request_view(request: CompletionRequest) -> RequestView:
    last_user = ""
    for message in reversed(request.messages):
        if message["role"] == "user":
            last_user = text_of(message["content"])
            break
    body = json.dumps(
        {"system": request.system_prompt, "messages": request.messages, "tools": [t.name for t in request.tools]},
        ensure_ascii=False,
    )
    return RequestView(
        system_prompt=request.system_prompt,
        last_user_text=last_user,
        has_tools=bool(request.tools),
        body_text=body,
    )


def usage_from_openai(raw: dict[str, int], model: ModelInfo) -> Usage:
    """pi's usage arithmetic for OpenAI-style numbers (§14.14), with cost from the model's prices."""
    cached = int(raw.get("cached_tokens", 0))
    cache_write = int(raw.get("cache_write_tokens", 0))
    cache_read = max(0, cached - cache_write) if cache_write > 0 else cached
    inp = max(0, int(raw.get("prompt_tokens", 0)) - cache_read - cache_write)
    out = int(raw.get("completion_tokens", 0))
    usage = empty_usage()
    usage.update(input=inp, output=out, cacheRead=cache_read, cacheWrite=cache_write)
    usage["totalTokens"] = inp + out + cache_read + cache_write
    c = model.cost
    cost = usage["cost"]
    cost["input"] = c.input * inp / 1e6
    cost["output"] = c.output * out / 1e6
    cost["cacheRead"] = c.cache_read * cache_read / 1e6
    cost["cacheWrite"] = c.cache_write * cache_write / 1e6
    cost["total"] = cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    return usage


class ScriptedProvider:
    """Streams scripted turns. Construct from a ``Script``, a list of turns or a file path."""

    def __init__(self, script: Script | list[dict[str, Any]] | Path, *, api: str = "openai-completions") -> None:
        if isinstance(script, Path):
            script = Script.load(script)
        elif isinstance(script, list):
            script = Script.from_data(script)
        self.script = script
        self.api = api
        self.requests: list[CompletionRequest] = []

    async def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        self.requests.append(request)
        view = request_view(request)
        turn = self.script.next_turn(view)
        message = self._empty_message(request.model)
        if turn is None:
            turn = {"error": EXHAUSTED_ERROR}
        if turn.get("delay_ms"):
            await asyncio.sleep(turn["delay_ms"] / 1000)
        if "error" in turn:
            yield self._error(message, turn["error"])
            return
        if turn.get("id"):
            message["responseId"] = turn["id"]
        if turn.get("response_model"):
            message["responseModel"] = turn["response_model"]
        yield {"type": "start", "partial": copy.deepcopy(message)}
        async for event in self._stream_turn(turn, view, message):
            yield event

    async def _stream_turn(
        self, turn: dict[str, Any], view: RequestView, message: AssistantMessage
    ) -> AsyncIterator[AssistantMessageEvent]:
        chunk_delay = turn.get("chunk_delay_ms", 0) / 1000
        cut_after = turn.get("cut_after_chunks")
        buffers: dict[int, str] = {}
        block_of_call: dict[int, int] = {}
        text_index = thinking_index = None
        finish = "stop"
        for n, piece in enumerate(turn_pieces(turn, view)):
            if cut_after is not None and n >= int(cut_after):
                for event in self._close_blocks(message, text_index, thinking_index, buffers, block_of_call):
                    yield event
                message["stopReason"] = "error"
                message["errorMessage"] = "Connection error: the stream ended before it was complete"
                message["errorKind"] = "transient"
                yield {"type": "error", "reason": "error", "error": copy.deepcopy(message)}
                return
            if chunk_delay:
                await asyncio.sleep(chunk_delay)
            content = message["content"]
            if piece.kind == "thinking":
                if thinking_index is None:
                    thinking_index = len(content)
                    content.append({"type": "thinking", "thinking": "", "thinkingSignature": turn.get("reasoning_field", "reasoning_content")})
                    yield {"type": "thinking_start", "contentIndex": thinking_index, "partial": copy.deepcopy(message)}
                block = content[thinking_index]
                assert block["type"] == "thinking"
                block["thinking"] += piece.text
                yield {"type": "thinking_delta", "contentIndex": thinking_index, "delta": piece.text, "partial": copy.deepcopy(message)}
            elif piece.kind == "text":
                if text_index is None:
                    text_index = len(content)
                    content.append({"type": "text", "text": ""})
                    yield {"type": "text_start", "contentIndex": text_index, "partial": copy.deepcopy(message)}
                tblock = content[text_index]
                assert tblock["type"] == "text"
                tblock["text"] += piece.text
                yield {"type": "text_delta", "contentIndex": text_index, "delta": piece.text, "partial": copy.deepcopy(message)}
            elif piece.kind == "tool_call":
                if piece.index not in block_of_call:
                    block_of_call[piece.index] = len(content)
                    content.append({"type": "toolCall", "id": piece.call_id or "", "name": piece.name or "", "arguments": {}})
                    buffers[piece.index] = ""
                    yield {"type": "toolcall_start", "contentIndex": block_of_call[piece.index], "partial": copy.deepcopy(message)}
                buffers[piece.index] += piece.text
                call = content[block_of_call[piece.index]]
                assert call["type"] == "toolCall"
                call["arguments"] = _parse_partial(buffers[piece.index])
                yield {"type": "toolcall_delta", "contentIndex": block_of_call[piece.index], "delta": piece.text, "partial": copy.deepcopy(message)}
            elif piece.kind == "finish":
                finish = piece.reason
            elif piece.kind == "usage" and piece.usage is not None:
                message["usage"] = usage_from_openai(piece.usage, self._model)
        for event in self._close_blocks(message, text_index, thinking_index, buffers, block_of_call):
            yield event
        stop = _FINISH.get(finish)
        if stop is None:
            message["stopReason"] = "error"
            message["errorMessage"] = f"Provider finish_reason: {finish}"
            message["errorKind"] = "unknown"
            yield {"type": "error", "reason": "error", "error": copy.deepcopy(message)}
            return
        message["stopReason"] = stop  # type: ignore[typeddict-item]
        yield {"type": "done", "reason": stop, "message": copy.deepcopy(message)}  # type: ignore[typeddict-item]

    def _close_blocks(
        self,
        message: AssistantMessage,
        text_index: int | None,
        thinking_index: int | None,
        buffers: dict[int, str],
        block_of_call: dict[int, int],
    ) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        content = message["content"]
        if thinking_index is not None:
            block = content[thinking_index]
            assert block["type"] == "thinking"
            events.append({"type": "thinking_end", "contentIndex": thinking_index, "content": block["thinking"], "partial": copy.deepcopy(message)})
        if text_index is not None:
            tblock = content[text_index]
            assert tblock["type"] == "text"
            events.append({"type": "text_end", "contentIndex": text_index, "content": tblock["text"], "partial": copy.deepcopy(message)})
        for index, block_index in block_of_call.items():
            call = content[block_index]
            assert call["type"] == "toolCall"
            call["arguments"] = _parse_final(buffers[index])
            tool_call: ToolCall = copy.deepcopy(call)
            events.append({"type": "toolcall_end", "contentIndex": block_index, "toolCall": tool_call, "partial": copy.deepcopy(message)})
        return events

    def _empty_message(self, model: ModelInfo) -> AssistantMessage:
        self._model = model
        return {
            "role": "assistant",
            "content": [],
            "api": self.api,
            "provider": model.provider,
            "model": model.id,
            "usage": empty_usage(),
            "stopReason": "stop",
            "timestamp": now_ms(),
        }

    def _error(self, message: AssistantMessage, error: dict[str, Any]) -> AssistantMessageEvent:
        message["stopReason"] = "error"
        message["errorMessage"] = error_message_for(error)
        message["errorKind"] = classify_http_error(int(error.get("status", 500)), message["errorMessage"], error.get("code"))
        if error.get("retry_after") is not None:
            message["retryAfterMs"] = math.ceil(float(error["retry_after"]) * 1000)
        return {"type": "error", "reason": "error", "error": message}


def _parse_partial(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _parse_final(raw: str) -> dict[str, Any]:
    return _parse_partial(raw)
