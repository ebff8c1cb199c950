"""The ``anthropic-messages`` provider: pi's Messages API request over the project's own stdlib
streaming client (``http_stream.py``), decoded by ``anthropic_decode.py``.

Serves the built-in ``anthropic`` provider and every models.json provider with
``"api": "anthropic-messages"`` (Anthropic-compatible endpoints and proxies).

Why not the vendor SDK: ``import anthropic`` costs 1.9–3.4 s on this machine (pydantic, httpx,
its generated types), ~20x the 0.13 s of this client, and it would decide retries and SSE
parsing for us; bench/RESULTS.md has the numbers. Why not litellm: its import alone (3.5–9 s)
exceeds pi's whole ``-p`` round trip, and it rewrites the request (no signatures kept, no cache
markers where pi puts them).

No HTTP-level retries: the session retries with visible events and honours the server's
``retry-after`` (``retryAfterMs`` on the error message, §15.11).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from pi_tui import __version__
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.providers.anthropic_decode import AnthropicStreamDecoder, StreamFailure, iter_sse
from pi_tui.providers.anthropic_encode import anthropic_headers, base_url, build_anthropic_body
from pi_tui.providers.classify import (
    CONNECTION_ERROR_MESSAGE,
    classify_http_error,
    looks_like_html,
    retry_after_ms,
)
from pi_tui.providers.classify import error_text as shared_error_text
from pi_tui.providers.http_stream import (
    ConnectFailed,
    ReadTimeout,
    StreamCut,
    StreamResponse,
    post_stream,
)
from pi_tui.providers.openai_sse import is_event_stream, response_failure
from pi_tui.providers.script import CONNECTION_CUT_MESSAGE

DEFAULT_TIMEOUT_S = 600.0
CONNECT_TIMEOUT_S = 30.0
ERROR_BODY_LIMIT = 64 * 1024
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


class AnthropicHttpProvider:
    """Streams one reply from ``<baseUrl>/v1/messages``; stateless and cheap to create."""

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """``timeout``: seconds without any data before the call fails (unless the request
        carries ``timeout_ms``, ``retry.provider.timeoutMs``)."""
        self.timeout = timeout

    async def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        decoder = AnthropicStreamDecoder(request.model, tool_names=[t.name for t in request.tools])
        body = build_anthropic_body(request)
        if request.on_payload is not None:
            replaced = request.on_payload(body)
            if isinstance(replaced, dict):
                body = replaced
        body["stream"] = True  # forced again after the hook (§15.4)
        headers = {"user-agent": f"pi-tui/{__version__}", **anthropic_headers(request, body)}
        url = base_url(request.model) + "/v1/messages"
        payload = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        key = request.api_key
        timeout = request.timeout_ms / 1000 if request.timeout_ms else self.timeout
        response: StreamResponse | None = None
        try:
            response = await post_stream(url, payload, headers, timeout=timeout,
                                         connect_timeout=min(timeout, CONNECT_TIMEOUT_S))
            if response.status < 400 and not is_event_stream(response.headers):
                # an HTML page or a proxy's JSON: one line saying so, as on the OpenAI wire
                raw = (await response.read(limit=ERROR_BODY_LIMIT)).decode("utf-8", errors="replace")
                for event in response_failure(decoder, response.status, response.headers, redact(raw, key).encode()):
                    yield event
                return
            if response.status >= 400:
                raw = (await response.read(limit=ERROR_BODY_LIMIT)).decode("utf-8", errors="replace")
                text, code = error_text(response.status, raw)
                text = redact(text, key)
                kind = classify_http_error(response.status, text, code)
                if response.status == 529:
                    kind = "transient"
                for event in decoder.fail(text, kind, retry_after_ms=retry_after_ms(response.headers)):
                    yield event
                return
            yield decoder.start()
            async for name, data in iter_sse(response.iter_bytes()):
                for event in decoder.feed(name, data):
                    yield event
        except StreamFailure as failure:
            for event in decoder.fail(redact(str(failure), key), failure.kind):
                yield event
            return
        except ReadTimeout:
            for event in decoder.fail(TIMEOUT_MESSAGE, "transient"):
                yield event
            return
        except StreamCut:
            for event in decoder.fail(CONNECTION_CUT_MESSAGE, "transient"):
                yield event
            return
        except ConnectFailed:
            for event in decoder.fail(CONNECTION_ERROR_MESSAGE, "transient"):
                yield event
            return
        finally:
            if response is not None:
                await response.close()
        if not decoder.started:
            for event in decoder.fail(NO_MESSAGE, "unknown"):
                yield event
            return
        for event in decoder.finish():
            yield event
