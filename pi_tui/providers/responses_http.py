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
from pi_tui.providers.classify import CONNECTION_ERROR_MESSAGE
from pi_tui.providers.http_stream import (
    ConnectFailed,
    ReadTimeout,
    StreamCut,
    StreamResponse,
    post_stream,
)
from pi_tui.providers.openai_sse import MALFORMED_CAUSE, is_event_stream, response_failure, snippet
from pi_tui.providers.responses_encode import base_url, build_body, request_headers
from pi_tui.providers.responses_stream import ResponsesAssembler
from pi_tui.providers.script import CONNECTION_CUT_MESSAGE, TIMEOUT_MESSAGE

DEFAULT_TIMEOUT_S = 600.0
CONNECT_TIMEOUT_S = 30.0
NON_STREAM_BODY_LIMIT = 64 * 1024


class ResponsesHttpProvider:
    """Streams one reply from ``<baseUrl>/responses``; stateless and cheap to create.

    ``timeout`` is the idle timeout (seconds without data) when the request carries no
    ``timeout_ms``.
    """

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout = timeout

    async def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        assembler = ResponsesAssembler(request.model)
        body = build_body(request)
        if request.on_payload is not None:
            replaced = request.on_payload(body)
            if isinstance(replaced, dict):
                body = replaced
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream", "User-Agent": f"pi-tui/{__version__}"}
        if request.api_key:
            headers["Authorization"] = f"Bearer {request.api_key}"
        headers.update(request_headers(request))
        payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        timeout = request.timeout_ms / 1000 if request.timeout_ms else self.timeout
        response: StreamResponse | None = None
        try:
            response = await post_stream(base_url(request.model) + "/responses", payload, headers, timeout=timeout,
                                         connect_timeout=min(timeout, CONNECT_TIMEOUT_S))
            if response.status >= 400 or not is_event_stream(response.headers):
                raw = await response.read(limit=NON_STREAM_BODY_LIMIT)
                failure_target: Any = assembler  # the same fail() contract as StreamAssembler's
                for out in response_failure(failure_target, response.status, response.headers, raw):
                    yield out
                return
            yield assembler.start()
            async for line in response.iter_lines():
                if not line.startswith("data:"):
                    if line and not line.startswith((":", "event:", "id:", "retry:")):
                        for out in assembler.fail(f"{MALFORMED_CAUSE}: {snippet(line)}", "transient"):
                            yield out
                        return
                    continue
                data = line[5:].lstrip(" ")
                try:
                    parsed: Any = json.loads(data)
                except ValueError:
                    parsed = None
                if not isinstance(parsed, dict):
                    for out in assembler.fail(f"{MALFORMED_CAUSE}: {snippet(data)}", "transient"):
                        yield out
                    return
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
