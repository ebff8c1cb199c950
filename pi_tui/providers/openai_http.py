"""A direct streaming client for OpenAI-compatible chat completions (models.json
``api: "openai-completions"`` providers: local servers, proxies, the fake server).

Why it exists: ``import litellm`` costs ~3.5 s and ~200 MB here, more than pi's whole round
trip (1.28 s). For an endpoint that already speaks pi's wire format there is nothing for litellm
to translate, so this client posts pi's exact body (``openai_encode.build_request_body``) with
a small stdlib HTTP client (``http_stream.py``) and feeds the SSE chunks through the same ``StreamAssembler`` as the litellm adapter:
same events, same final message, same error texts (§14.2), same classification. Anything else
(``anthropic/...``, ``gemini/...``) goes through ``LiteLLMProvider``.

No HTTP-level retries: retries are the session's, with visible events (§7.5).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from pi_tui import __version__
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.providers.classify import CONNECTION_ERROR_MESSAGE
from pi_tui.providers.http_stream import (
    ConnectFailed,
    ReadTimeout,
    StreamCut,
    StreamResponse,
    post_stream,
)
from pi_tui.providers.openai_encode import (
    build_request_body,
    effective_base_url,
    model_compat,
    request_headers,
)
from pi_tui.providers.openai_sse import OpenAIStreamDecoder, is_event_stream, response_failure
from pi_tui.providers.script import CONNECTION_CUT_MESSAGE, TIMEOUT_MESSAGE
from pi_tui.providers.stream_assembler import StreamAssembler

DEFAULT_TIMEOUT_S = 600.0
CONNECT_TIMEOUT_S = 30.0
NON_STREAM_BODY_LIMIT = 64 * 1024
"""How much of an error page or other non-stream body is read (enough for any error text)."""


class OpenAIHttpProvider:
    """Streams one reply from ``<baseUrl>/chat/completions``; stateless and cheap to create.

    ``timeout`` is the idle timeout (seconds without any data, on connect, headers and every
    read of the body) when the request does not carry ``timeout_ms``.
    """

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout = timeout

    async def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        assembler = StreamAssembler(request.model)
        compat = model_compat(request.model)
        body = build_request_body(request, compat)
        if request.on_payload is not None:
            replaced = request.on_payload(body)
            if isinstance(replaced, dict):
                body = replaced
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"pi-tui/{__version__}",
        }
        if request.api_key:
            headers["Authorization"] = f"Bearer {request.api_key}"
        headers.update(request_headers(request, compat))
        url = effective_base_url(request.model).rstrip("/") + "/chat/completions"
        payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        timeout = request.timeout_ms / 1000 if request.timeout_ms else self.timeout
        decoder = OpenAIStreamDecoder(assembler)
        response: StreamResponse | None = None
        try:
            response = await post_stream(url, payload, headers, timeout=timeout,
                                         connect_timeout=min(timeout, CONNECT_TIMEOUT_S))
            if response.status >= 400 or not is_event_stream(response.headers):
                raw = await response.read(limit=NON_STREAM_BODY_LIMIT)
                for event in response_failure(assembler, response.status, response.headers, raw):
                    yield event
                return
            yield assembler.start()
            async for data in response.iter_bytes():
                for event in decoder.feed(data):
                    yield event
                if decoder.finished:
                    return
            for event in decoder.end_of_body():
                yield event
        except ReadTimeout:
            for event in decoder.interrupted(TIMEOUT_MESSAGE):
                yield event
        except StreamCut:
            for event in decoder.interrupted(CONNECTION_CUT_MESSAGE):
                yield event
        except ConnectFailed:
            for event in assembler.fail(CONNECTION_ERROR_MESSAGE, "transient"):
                yield event
        finally:
            if response is not None:
                await response.close()

