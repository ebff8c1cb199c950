"""A direct streaming client for the OpenAI Responses API (provider ``openai`` and models.json
``api: "openai-responses"`` providers; pi-behaviour.md §15.14).

Why our own client and not litellm: OpenAI's reasoning models keep their reasoning across turns
only through the encrypted ``reasoning`` items the Responses API returns (``store: false``);
chat completions never return them. pi replays those items verbatim, and so must we: this
client posts pi's exact body (``responses_encode``) and stores each item as pi stores it
(``responses_stream``). Like ``openai_http`` it needs no litellm import (3.5 s or more here), so
an OpenAI model starts as fast as a local one. Errors read as ``openai_http``'s (§14.2 texts,
the same classification, ``retry-after`` honoured); no HTTP-level retries (the session retries,
with visible events).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pi_tui import __version__
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.providers.classify import (
    CONNECTION_ERROR_MESSAGE,
    classify_http_error,
    error_text,
    retry_after_ms,
)
from pi_tui.providers.http_stream import (
    ConnectFailed,
    ReadTimeout,
    StreamCut,
    StreamResponse,
    post_stream,
)
from pi_tui.providers.openai_http import _sse_data
from pi_tui.providers.responses_encode import base_url, build_body, request_headers
from pi_tui.providers.responses_stream import ResponsesAssembler
from pi_tui.providers.script import CONNECTION_CUT_MESSAGE, TIMEOUT_MESSAGE

DEFAULT_TIMEOUT_S = 600.0


class ResponsesHttpProvider:
    """Streams one reply from ``<baseUrl>/responses``; stateless and cheap to create."""

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout = timeout

    async def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        assembler = ResponsesAssembler(request.model)
        body = build_body(request)
        if request.on_payload is not None:
            replaced = request.on_payload(body)
            if isinstance(replaced, dict):
                body = replaced
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": f"pi-tui/{__version__}"}
        if request.api_key:
            headers["Authorization"] = f"Bearer {request.api_key}"
        headers.update(request_headers(request))
        payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        response: StreamResponse | None = None
        try:
            response = await post_stream(base_url(request.model) + "/responses", payload, headers, timeout=self.timeout)
            if response.status >= 400:
                raw = (await response.read()).decode("utf-8", errors="replace")
                text, code = error_text(response.status, raw)
                kind = classify_http_error(response.status, text, code)
                for out in assembler.fail(text, kind, retry_after_ms=retry_after_ms(response.headers)):
                    yield out
                return
            yield assembler.start()
            async for data in _sse_data(response):
                if data == "[DONE]":
                    break
                try:
                    parsed: Any = json.loads(data)
                except ValueError:
                    continue  # not an event; a stream that never completes ends as an error below
                if isinstance(parsed, dict):
                    for out in assembler.feed(parsed):
                        yield out
                    if assembler.failure is not None:
                        break
        except ReadTimeout:
            for out in assembler.fail(TIMEOUT_MESSAGE, "transient"):
                yield out
            return
        except StreamCut:
            for out in assembler.fail(CONNECTION_CUT_MESSAGE, "transient"):
                yield out
            return
        except ConnectFailed:
            for out in assembler.fail(CONNECTION_ERROR_MESSAGE, "transient"):
                yield out
            return
        finally:
            if response is not None:
                await response.close()
        for out in assembler.finish():
            yield out
