"""A direct streaming client for the OpenAI Responses API (provider ``openai`` and models.json
``api: "openai-responses"`` providers; pi-behaviour.md §15.14).

Why our own client and not litellm: OpenAI's reasoning models keep their reasoning across turns
only through the encrypted ``reasoning`` items the Responses API returns (``store: false``);
chat completions never return them. pi replays those items verbatim, and so must we: this
client posts pi's exact body (``responses_encode``) over the shared streaming skeleton
(``http_wire.py``) and stores each item as pi stores it (``responses_stream``). Like
``openai_http`` it needs no litellm import (3.5 s or more here), so an OpenAI model starts as
fast as a local one. Errors read as ``openai_http``'s (§14.2 texts, the same classification,
``retry-after`` honoured).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.providers.http_stream import HttpStreamError, ReadTimeout, StreamCut, StreamResponse
from pi_tui.providers.http_wire import HttpWireProvider, WireCall, bearer_headers, timeout_cause
from pi_tui.providers.openai_sse import MALFORMED_CAUSE, snippet
from pi_tui.providers.responses_encode import base_url, build_body, request_headers
from pi_tui.providers.responses_stream import ResponsesAssembler
from pi_tui.providers.stream_failures import CONNECTION_CUT_MESSAGE


class _ResponsesCall(WireCall):
    def __init__(self, request: CompletionRequest) -> None:
        super().__init__(request)
        self.reply: ResponsesAssembler = ResponsesAssembler(request.model)
        self.url = base_url(request.model) + "/responses"

    def body(self) -> dict[str, Any]:
        return build_body(self.request)

    def headers(self, body: dict[str, Any]) -> dict[str, str]:
        return {**bearer_headers(self.request, "text/event-stream"), **request_headers(self.request)}

    async def events(self, response: StreamResponse) -> AsyncIterator[AssistantMessageEvent]:
        async for line in response.iter_lines():
            if not line.startswith("data:"):
                if line and not line.startswith((":", "event:", "id:", "retry:")):
                    for out in self.reply.interrupted(f"{MALFORMED_CAUSE}: {snippet(line)}"):
                        yield out
                    return
                continue
            data = line[5:].lstrip(" ")
            try:
                parsed: Any = json.loads(data)
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                for out in self.reply.interrupted(f"{MALFORMED_CAUSE}: {snippet(data)}"):
                    yield out
                return
            for out in self.reply.feed(parsed):
                yield out
            if self.reply.failure is not None:
                break
        for out in self.reply.finish():
            yield out


    def transport_failure(self, error: HttpStreamError) -> list[AssistantMessageEvent]:
        """A cut body or no data within the timeout, named by where the reply stopped and which
        of its calls did not run (as on the other wires); no connection at all is the usual text."""
        if isinstance(error, ReadTimeout):
            return self.reply.interrupted(timeout_cause(error, self.timeout_message))
        if isinstance(error, StreamCut):
            return self.reply.interrupted(CONNECTION_CUT_MESSAGE)
        return super().transport_failure(error)


class ResponsesHttpProvider(HttpWireProvider):
    """Streams one reply from ``<baseUrl>/responses``."""

    def call(self, request: CompletionRequest) -> WireCall:
        return _ResponsesCall(request)
