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
from pi_tui.providers.openai_encode import (
    build_request_body,
    effective_base_url,
    model_compat,
    request_headers,
)
from pi_tui.providers.script import CONNECTION_CUT_MESSAGE, TIMEOUT_MESSAGE
from pi_tui.providers.stream_assembler import StreamAssembler

DEFAULT_TIMEOUT_S = 600.0


class OpenAIHttpProvider:
    """Streams one reply from ``<baseUrl>/chat/completions``; stateless and cheap to create."""

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
        response: StreamResponse | None = None
        try:
            response = await post_stream(url, payload, headers, timeout=self.timeout)
            if response.status >= 400:
                raw = (await response.read()).decode("utf-8", errors="replace")
                text, code = error_text(response.status, raw)
                kind = classify_http_error(response.status, text, code)
                for event in assembler.fail(text, kind, retry_after_ms=retry_after_ms(response.headers)):
                    yield event
                return
            yield assembler.start()
            async for data in _sse_data(response):
                if data == "[DONE]":
                    break
                try:
                    chunk = json.loads(data)
                except ValueError:
                    continue
                if isinstance(chunk, dict) and isinstance(chunk.get("error"), dict):
                    message = str(chunk["error"].get("message") or json.dumps(chunk["error"]))
                    for event in assembler.fail(message, classify_http_error(None, message, chunk["error"].get("code"))):
                        yield event
                    return
                if isinstance(chunk, dict):
                    for event in assembler.feed(chunk):
                        yield event
        except ReadTimeout:
            for event in assembler.fail(TIMEOUT_MESSAGE, "transient"):
                yield event
            return
        except StreamCut:
            for event in assembler.fail(CONNECTION_CUT_MESSAGE, "transient"):
                yield event
            return
        except ConnectFailed:
            for event in assembler.fail(CONNECTION_ERROR_MESSAGE, "transient"):
                yield event
            return
        finally:
            if response is not None:
                await response.close()
        for event in assembler.finish():
            yield event


async def _sse_data(response: Any) -> AsyncIterator[str]:
    """The payload of each SSE ``data:`` field (multi-line data joined with newlines)."""
    lines: list[str] = []
    async for line in response.iter_lines():
        if not line:
            if lines:
                yield "\n".join(lines)
                lines = []
            continue
        if line.startswith("data:"):
            lines.append(line[5:].lstrip(" "))
    if lines:
        yield "\n".join(lines)
