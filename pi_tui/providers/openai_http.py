"""A direct streaming client for OpenAI-compatible chat completions (models.json
``api: "openai-completions"`` providers: local servers, proxies, the fake server).

Why it exists: ``import litellm`` costs ~3.5 s and ~200 MB here, more than pi's whole round
trip (1.28 s). For an endpoint that already speaks pi's wire format there is nothing for litellm
to translate, so this client posts pi's exact body (``openai_encode.build_request_body``) over
the shared streaming skeleton (``http_wire.py``) and feeds the SSE chunks through the same
``StreamAssembler`` as the litellm adapter: same events, same final message, same error texts
(§14.2), same classification.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.providers.http_stream import HttpStreamError, ReadTimeout, StreamCut, StreamResponse
from pi_tui.providers.http_wire import HttpWireProvider, WireCall, bearer_headers, timeout_cause
from pi_tui.providers.openai_encode import (
    build_request_body,
    effective_base_url,
    model_compat,
    request_headers,
)
from pi_tui.providers.openai_sse import OpenAIStreamDecoder
from pi_tui.providers.stream_assembler import StreamAssembler
from pi_tui.providers.stream_failures import CONNECTION_CUT_MESSAGE


class _ChatCompletionsCall(WireCall):
    def __init__(self, request: CompletionRequest) -> None:
        super().__init__(request)
        self.compat = model_compat(request.model)
        self.reply = StreamAssembler(request.model)
        self.decoder = OpenAIStreamDecoder(self.reply)
        self.url = effective_base_url(request.model).rstrip("/") + "/chat/completions"

    def body(self) -> dict[str, Any]:
        return build_request_body(self.request, self.compat)

    def headers(self, body: dict[str, Any]) -> dict[str, str]:
        return {**bearer_headers(self.request, "application/json"), **request_headers(self.request, self.compat)}

    async def events(self, response: StreamResponse) -> AsyncIterator[AssistantMessageEvent]:
        async for data in response.iter_bytes():
            for event in self.decoder.feed(data):
                yield event
            if self.decoder.finished:
                return
        for event in self.decoder.end_of_body():
            yield event

    def transport_failure(self, error: HttpStreamError) -> list[AssistantMessageEvent]:
        """A timeout or a cut names where the stream stopped (``interrupted``)."""
        if isinstance(error, ReadTimeout):
            return self.decoder.interrupted(timeout_cause(error))
        if isinstance(error, StreamCut):
            return self.decoder.interrupted(CONNECTION_CUT_MESSAGE)
        return super().transport_failure(error)


class OpenAIHttpProvider(HttpWireProvider):
    """Streams one reply from ``<baseUrl>/chat/completions``."""

    def call(self, request: CompletionRequest) -> WireCall:
        return _ChatCompletionsCall(request)
