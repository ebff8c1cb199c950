"""A deterministic in-process provider driven by a script (see ``providers.script``).

It produces exactly the events and final messages the litellm adapter produces for the same
script over the fake server, without HTTP: it renders each scripted turn into the same OpenAI
chunk dicts the fake server sends (``script.turn_chunks``) and runs them through the same
``StreamAssembler`` the litellm adapter uses. Tests and demos use it to run the whole agent
offline. Every request it receives is kept in ``requests`` so tests can assert on what was sent.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pi_tui.core.messages import text_of
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.providers.classify import classify_http_error
from pi_tui.providers.openai_encode import build_request_body
from pi_tui.providers.script import (
    CONNECTION_CUT_MESSAGE,
    EXHAUSTED_ERROR,
    TIMEOUT_MESSAGE,
    RequestView,
    Script,
    error_message_for,
    turn_chunks,
)
from pi_tui.providers.stream_assembler import StreamAssembler, usage_from_openai

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


class ScriptedProvider:
    """Streams scripted turns. Construct from a ``Script``, a list of turns or a file path."""

    def __init__(self, script: Script | list[dict[str, Any]] | Path, *, api: str | None = None) -> None:
        if isinstance(script, Path):
            script = Script.load(script)
        elif isinstance(script, list):
            script = Script.from_data(script)
        self.script = script
        self.api = api
        """The ``api`` recorded on messages; None means the model's own ``api``."""
        self.requests: list[CompletionRequest] = []

    async def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        self.requests.append(request)
        if request.on_payload is not None:
            request.on_payload(build_request_body(request))  # the body a real endpoint would get
        view = request_view(request)
        turn = self.script.next_turn(view) or {"error": EXHAUSTED_ERROR}
        assembler = StreamAssembler(request.model, api=self.api)
        if turn.get("delay_ms"):
            await asyncio.sleep(turn["delay_ms"] / 1000)
        if "error" in turn:
            error = turn["error"]
            text = error_message_for(error)
            kind = classify_http_error(int(error.get("status", 500)), text, error.get("code"))
            retry = math.ceil(float(error["retry_after"]) * 1000) if error.get("retry_after") is not None else None
            for event in assembler.fail(text, kind, retry_after_ms=retry):
                yield event
            return
        yield assembler.start()
        chunk_delay = float(turn.get("chunk_delay_ms", 0)) / 1000
        cut_after = turn.get("cut_after_chunks")
        stall_after = turn.get("stall_after_chunks")
        for n, chunk in enumerate(turn_chunks(turn, view, request.model.id)):
            if cut_after is not None and n >= int(cut_after):
                for event in assembler.fail(CONNECTION_CUT_MESSAGE, "transient"):
                    yield event
                return
            if stall_after is not None and n >= int(stall_after):
                for event in assembler.fail(TIMEOUT_MESSAGE, "transient"):
                    yield event
                return
            if chunk_delay:
                await asyncio.sleep(chunk_delay)
            for event in assembler.feed(chunk):
                yield event
        for event in assembler.finish():
            yield event
