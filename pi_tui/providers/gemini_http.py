"""The ``google-generative-ai`` provider: pi's Gemini request (``gemini_encode``) over the shared
streaming skeleton (``http_wire.py``), decoded by ``gemini_decode``.

Serves the built-in ``gemini`` and ``google`` providers and every models.json provider with
``"api": "google-generative-ai"`` (the Gemini API or a proxy of it).

Why not litellm: its import alone (3.5–9 s here) is ~95% of a ``-p`` round trip on Gemini, and it
has no slot for a thinking part's own signature (it sends the function-call and text ones only).
Why not Google's SDK: pi uses it, but in Python it drags in pydantic, httpx and google-auth for
what is one POST and one SSE stream.

Errors read as pi's (its Google SDK's): an HTTP error is the JSON body itself, compactly
(``{"error":{"code":429,"message":"…","status":"RESOURCE_EXHAUSTED","details":[…]}}``); a body
that is not JSON is wrapped the same way (``{"error":{"message":<text>,"code":<status>,"status":
<reason>}}``), except an HTML page, which is named by its title, never quoted whole. The delay a
429 asks for comes from the body's ``RetryInfo.retryDelay`` (``"7s"``), as Gemini sends it, else
from ``retry-after``; the session retries with visible events after it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pi_tui.core.messages import ErrorKind
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.providers.classify import (
    classify_http_error,
    looks_like_html,
    retry_after_ms,
    retry_info_ms,
)
from pi_tui.providers.classify import error_text as shared_error_text
from pi_tui.providers.gemini_decode import (
    GeminiEventFramer,
    GeminiStreamDecoder,
    event_data,
    malformed,
    partial_call_name,
)
from pi_tui.providers.gemini_encode import build_gemini_body, gemini_headers, gemini_url
from pi_tui.providers.http_stream import HttpStreamError, ReadTimeout, StreamCut, StreamResponse
from pi_tui.providers.http_wire import HttpWireProvider, WireCall, timeout_cause
from pi_tui.providers.openai_sse import response_failure, snippet
from pi_tui.providers.stream_failures import CONNECTION_CUT_MESSAGE

CUT_OFF = f"{CONNECTION_CUT_MESSAGE} (its last event was cut off)"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def error_message(status: int, reason: str, content_type: str, raw: str) -> tuple[str, dict[str, Any] | None]:
    """pi's text for an HTTP error and the parsed ``error`` object (None when there is none)."""
    if not raw.strip():
        return f"{status} status code (no body)", None
    if looks_like_html(raw, content_type):
        return shared_error_text(status, raw)[0], None
    if "application/json" in content_type.lower():
        try:
            parsed = json.loads(raw)
        except ValueError:
            return f"{status} {raw}".rstrip(), None
        error = parsed.get("error") if isinstance(parsed, dict) else None
        return _compact(parsed), error if isinstance(error, dict) else None
    return _compact({"error": {"message": raw, "code": status, "status": reason}}), None


def _kind(status: int | None, text: str, error: dict[str, Any] | None) -> ErrorKind:
    code = error.get("status") if error else None
    return classify_http_error(status, text, code if isinstance(code, str) else None)


class _GeminiCall(WireCall):
    def __init__(self, request: CompletionRequest) -> None:
        super().__init__(request)
        self.reply: GeminiStreamDecoder = GeminiStreamDecoder(request.model)
        self.framer = GeminiEventFramer()
        self.url = gemini_url(request.model)

    def body(self) -> dict[str, Any]:
        return build_gemini_body(self.request)

    def headers(self, body: dict[str, Any]) -> dict[str, str]:
        return gemini_headers(self.request)

    def answer_failure(self, response: StreamResponse, raw: bytes) -> list[AssistantMessageEvent]:
        status, headers = response.status, response.headers
        if status < 400:  # a login page or a proxy's JSON instead of the stream
            return response_failure(self, status, headers, raw)
        text, error = error_message(status, response.reason, headers.get("content-type", ""), raw.decode("utf-8", errors="replace"))
        kind = _kind(status, text, error)
        delay = (retry_info_ms(error) or retry_after_ms(headers)) if kind in ("rate_limit", "transient") else None
        return self.fail(text, kind, retry_after_ms=delay)

    async def events(self, response: StreamResponse) -> AsyncIterator[AssistantMessageEvent]:
        decoder = self.reply
        async for data in response.iter_bytes():
            for event in self.framer.feed(data):
                chunk = self._chunk(event)
                if isinstance(chunk, list):  # the stream ends here
                    for out in chunk:
                        yield out
                    return
                for out in decoder.feed(chunk):
                    yield out
        if self.framer.pending():
            decoder.partial_call = partial_call_name(self.framer.pending())
            for out in decoder.interrupted(CUT_OFF):
                yield out
            return
        for out in decoder.finish():
            yield out

    def _chunk(self, event: str) -> dict[str, Any] | list[AssistantMessageEvent]:
        """The ``GenerateContentResponse`` an SSE event carries, or the events that end the stream
        there (corrupted framing or data, an error object)."""
        try:
            data = event_data(event)
        except ValueError as err:
            self.reply.partial_call = partial_call_name(event)
            return malformed(self.reply, str(err))
        if data is None:
            return {}  # a comment
        try:
            chunk: Any = json.loads(data)
        except ValueError:
            chunk = None
        if not isinstance(chunk, dict):
            self.reply.partial_call = partial_call_name(data)
            return malformed(self.reply, f"event data is not a JSON object: {snippet(data)}")
        error = chunk.get("error")
        if error is None:
            return chunk
        details = error if isinstance(error, dict) else {"message": error}
        text = _compact(chunk)
        code = details.get("code")
        kind = _kind(code if isinstance(code, int) else None, text, details)
        return self.fail(text, kind, retry_after_ms=retry_info_ms(details) if kind in ("rate_limit", "transient") else None)

    def transport_failure(self, error: HttpStreamError) -> list[AssistantMessageEvent]:
        """A timeout or a cut names where the stream stopped (and a call it cut in the middle)."""
        if isinstance(error, (ReadTimeout, StreamCut)):
            if self.framer.pending():
                self.reply.partial_call = partial_call_name(self.framer.pending())
            return self.reply.interrupted(timeout_cause(error) if isinstance(error, ReadTimeout) else CONNECTION_CUT_MESSAGE)
        return super().transport_failure(error)


class GeminiHttpProvider(HttpWireProvider):
    """Streams one reply from ``<baseUrl>/models/<id>:streamGenerateContent?alt=sse``."""

    def call(self, request: CompletionRequest) -> WireCall:
        return _GeminiCall(request)
