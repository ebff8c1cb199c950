"""The ``anthropic-messages`` provider: pi's Messages API request over the shared streaming
skeleton (``http_wire.py``), decoded by ``anthropic_decode.py``.

Serves the built-in ``anthropic`` provider and every models.json provider with
``"api": "anthropic-messages"`` (Anthropic-compatible endpoints and proxies).

Why not the vendor SDK: ``import anthropic`` costs 1.9–3.4 s on this machine (pydantic, httpx,
its generated types), ~20x the 0.13 s of this client, and it would decide retries and SSE
parsing for us; bench/RESULTS.md has the numbers. Why not litellm: its import alone (3.5–9 s)
exceeds pi's whole ``-p`` round trip, and it rewrites the request (no signatures kept, no cache
markers where pi puts them).

The session retries with visible events and honours the server's ``retry-after``
(``retryAfterMs`` on the error message, §15.11). Error texts are pi's (§15.11), not §14.2's.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.providers.anthropic_decode import AnthropicStreamDecoder, StreamFailure, iter_sse
from pi_tui.providers.anthropic_encode import anthropic_headers, base_url, build_anthropic_body
from pi_tui.providers.classify import (
    classify_http_error,
    looks_like_html,
    retry_after_ms,
)
from pi_tui.providers.classify import error_text as shared_error_text
from pi_tui.providers.http_stream import StreamResponse
from pi_tui.providers.http_wire import USER_AGENT, HttpWireProvider, WireCall
from pi_tui.providers.openai_sse import response_failure

TIMEOUT_MESSAGE = "Request timed out."
NO_MESSAGE = "Anthropic stream ended without a message (no message_start)"
REDACTED = "[redacted]"


def error_text(status: int, raw: str) -> tuple[str, str | None]:
    """pi's error text for an HTTP error (§15.11) and the error ``type`` when there is one:
    the whole JSON body re-serialized compactly, a top-level ``message``, or the raw text."""
    if not raw.strip():
        return f"{status} status code (no body)", None
    try:
        parsed = json.loads(raw)
    except ValueError:
        if looks_like_html(raw):  # a proxy's error page: named by its title, not quoted whole
            return shared_error_text(status, raw)
        return f"{status} {raw}".rstrip(), None
    code = None
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if isinstance(error, dict) and isinstance(error.get("type"), str):
            code = error["type"]
        if isinstance(parsed.get("message"), str):
            return f"{status} {parsed['message']}", code
    return f"{status} {json.dumps(parsed, separators=(',', ':'), ensure_ascii=False)}", code


def redact(text: str, secret: str | None) -> str:
    """An error body that quotes our key must not carry it to the session file or the screen."""
    if secret and len(secret) >= 8 and secret in text:
        return text.replace(secret, REDACTED)
    return text


class _MessagesCall(WireCall):
    timeout_message = TIMEOUT_MESSAGE  # pi's (§15.11); cuts and refused connections read as elsewhere
    def __init__(self, request: CompletionRequest) -> None:
        super().__init__(request)
        self.reply: AnthropicStreamDecoder = AnthropicStreamDecoder(request.model, tool_names=[t.name for t in request.tools])
        self.url = base_url(request.model) + "/v1/messages"

    def body(self) -> dict[str, Any]:
        return build_anthropic_body(self.request)

    def sealed(self, body: dict[str, Any]) -> dict[str, Any]:
        body["stream"] = True  # forced again after the hook (§15.4)
        return body

    def headers(self, body: dict[str, Any]) -> dict[str, str]:
        return {"user-agent": USER_AGENT, **anthropic_headers(self.request, body)}

    def answer_failure(self, response: StreamResponse, raw: bytes) -> list[AssistantMessageEvent]:
        status, headers = response.status, response.headers
        text = raw.decode("utf-8", errors="replace")
        key = self.request.api_key
        if status < 400:  # an HTML page or a proxy's JSON: one line saying so, as on the OpenAI wire
            return response_failure(self, status, headers, redact(text, key).encode())
        message, code = error_text(status, text)
        message = redact(message, key)
        kind = "transient" if status == 529 else classify_http_error(status, message, code)
        return self.fail(message, kind, retry_after_ms=retry_after_ms(headers))

    async def events(self, response: StreamResponse) -> AsyncIterator[AssistantMessageEvent]:
        try:
            async for name, data in iter_sse(response.iter_bytes()):
                for event in self.reply.feed(name, data):
                    yield event
        except StreamFailure as failure:
            for event in self.fail(redact(str(failure), self.request.api_key), failure.kind):
                yield event
            return
        if not self.reply.started:
            for event in self.fail(NO_MESSAGE, "unknown"):
                yield event
            return
        for event in self.reply.finish():
            yield event


class AnthropicHttpProvider(HttpWireProvider):
    """Streams one reply from ``<baseUrl>/v1/messages``."""

    def call(self, request: CompletionRequest) -> WireCall:
        return _MessagesCall(request)
