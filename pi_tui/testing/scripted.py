"""A deterministic in-process provider driven by a script (see ``pi_tui.testing.script``).

It produces exactly the events and final messages the HTTP providers produce for the same
script over the fake server, without HTTP: it renders each scripted turn into the bytes the fake
server sends (``script.turn_frames``, with the turn's ``fault`` applied) and decodes them with
the direct client's decoder (``openai_sse``) into the shared ``StreamAssembler``. A stall fails
at once with the timeout error (there is no clock to wait on in-process). Tests and demos use it to run the whole agent
offline. Every request it receives is kept in ``requests`` so tests can assert on what was sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pi_tui.core.messages import text_of
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.core.tokens import count_tokens_exact
from pi_tui.providers.http_wire import DEFAULT_TIMEOUT_S
from pi_tui.providers.openai_encode import build_request_body
from pi_tui.providers.openai_sse import OpenAIStreamDecoder, is_event_stream, response_failure
from pi_tui.providers.stream_assembler import StreamAssembler, usage_from_openai
from pi_tui.providers.stream_failures import (
    CONNECTION_CUT_MESSAGE,
    TIMEOUT_MESSAGE,
    keepalive_timeout_message,
)
from pi_tui.testing.script import (
    EXHAUSTED_ERROR,
    RequestView,
    Script,
    context_length_error,
    empty_chunk,
    error_body,
    openai_error_body,
    retry_headers,
    turn_frames,
)
from pi_tui.testing.script_faults import Pause, Stall, legacy_fault, response_plan

__all__ = ["ScriptedProvider", "request_view", "usage_from_openai"]


def request_view(request: CompletionRequest) -> RequestView:
    last_user = ""
    for message in reversed(request.messages):
        if message["role"] == "user":
            last_user = text_of(message["content"])
            break
    body = json.dumps(
        {"system": request.system_prompt, "messages": request.messages, "tools": [t.name for t in request.tools]},
        ensure_ascii=False,
        default=str,  # a Python tool's details may hold a Path; the real bodies never carry details
    )
    return RequestView(
        system_prompt=request.system_prompt,
        last_user_text=last_user,
        has_tools=bool(request.tools),
        body_text=body,
    )


def request_tokens(request: CompletionRequest) -> int:
    """The prompt as a real endpoint counts it, in o200k tokens: the system prompt, each
    message's text, tool calls (name and arguments) and results, the tools' definitions, and
    4 tokens of chat framing a message."""
    parts = [request.system_prompt]
    for message in request.messages:
        content = message.get("content") or ""
        parts.append(text_of(content))
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                parts.append(str(block.get("name", "")) + json.dumps(block.get("arguments"), ensure_ascii=False))
    parts += [json.dumps({"name": t.name, "description": t.description, "parameters": t.parameters}, ensure_ascii=False)
              for t in request.tools]
    return sum(count_tokens_exact(part) for part in parts if part) + 4 * len(request.messages)


class ScriptedProvider:
    """Streams scripted turns. Construct from a ``Script``, a list of turns or a file path.

    ``refuse_beyond_window``: like a real endpoint, refuse a request whose prompt
    (``request_tokens``, real tokens) plus the output it asks for (``max_tokens``) exceeds the
    model's window, with OpenAI's ``context_length_exceeded`` error; no scripted turn is used.
    """

    def __init__(self, script: Script | list[dict[str, Any]] | Path, *, api: str | None = None,
                 refuse_beyond_window: bool = False) -> None:
        if isinstance(script, Path):
            script = Script.load(script)
        elif isinstance(script, list):
            script = Script.from_data(script)
        self.script = script
        self.api = api
        """The ``api`` recorded on messages; None means the model's own ``api``."""
        self.requests: list[CompletionRequest] = []
        self.refuse_beyond_window = refuse_beyond_window

    async def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        self.requests.append(request)
        if request.on_payload is not None:
            request.on_payload(build_request_body(request))  # the body a real endpoint would get
        view = request_view(request)
        turn = self._refusal(request) or self.script.next_turn(view) or {"error": EXHAUSTED_ERROR}
        assembler = StreamAssembler(request.model, api=self.api)
        if turn.get("delay_ms"):
            await asyncio.sleep(turn["delay_ms"] / 1000)
        if "error" in turn:
            body = error_body(turn["error"])
            raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            for event in response_failure(assembler, int(turn["error"].get("status", 500)), _lower(retry_headers(turn["error"])), raw):
                yield event
            return
        credential = f"Bearer {request.api_key}" if request.api_key else ""
        plan = response_plan(turn_frames(turn, view, request.model.id), legacy_fault(turn), error_body=openai_error_body,
                             credential=credential, encode_json=lambda value: json.dumps(value).encode(),
                             empty_chunk=empty_chunk(request.model.id))
        headers = {"content-type": plan.content_type, **_lower(plan.headers)}
        if plan.status >= 400 or not is_event_stream(headers):
            for event in response_failure(assembler, plan.status, headers, plan.body):
                yield event
            return
        yield assembler.start()
        decoder = OpenAIStreamDecoder(assembler)
        pace = float(turn.get("chunk_delay_ms", 0)) / 1000
        for step in plan.steps:
            if isinstance(step, Stall):  # no clock to wait on here: the timeout fires at once
                seconds = request.timeout_ms / 1000 if request.timeout_ms else DEFAULT_TIMEOUT_S
                for event in decoder.interrupted(keepalive_timeout_message(seconds) if step.keepalive else TIMEOUT_MESSAGE):
                    yield event
                return
            if isinstance(step, Pause) or pace:
                await asyncio.sleep(step.seconds if isinstance(step, Pause) else pace)
                if isinstance(step, Pause):
                    continue
            for event in decoder.feed(step.data):
                yield event
            if decoder.finished:
                return
        ending = decoder.interrupted(CONNECTION_CUT_MESSAGE) if plan.ending == "reset" else decoder.end_of_body()
        for event in ending:
            yield event


    def _refusal(self, request: CompletionRequest) -> dict[str, Any] | None:
        window = request.model.context_window
        if not self.refuse_beyond_window or window <= 0:
            return None
        prompt, completion = request_tokens(request), request.max_tokens or 0
        return {"error": context_length_error(window, prompt, completion)} if prompt + completion > window else None


def _lower(headers: dict[str, str]) -> dict[str, str]:
    """Header names as the HTTP client keeps them."""
    return {name.lower(): value for name, value in headers.items()}
