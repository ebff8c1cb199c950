"""The body of an OpenAI chat-completions response → pi's stream events, strictly.

Shared by the direct HTTP client (``openai_http.py``) and the scripted provider, which decodes
the very bytes the fake server would send, so the two end every stream the same way.

A stream is an answer only if it **finishes**: ``data: [DONE]`` arrived. Everything else is an
error, never an answer (the partial content stays in the error message, §14.14):

* the body ended (cleanly or not) before ``[DONE]``: a transient ``Connection error`` naming
  where it stopped (during the text, in the middle of a tool call's arguments, ...);
* a line that is not a server-sent-event field, or event data that is not a JSON object: a
  transient ``Malformed stream`` error (the stream was corrupted on the way);
* a 200 whose content type is not an event stream (an HTML login page, a proxy's JSON):
  ``unknown`` (a misconfigured endpoint; retried only if its text says so, §7.5).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Protocol

from pi_tui.core.messages import ErrorKind
from pi_tui.core.provider import AssistantMessageEvent
from pi_tui.providers.classify import (
    classify_http_error,
    error_text,
    html_title,
    looks_like_html,
    retry_after_ms,
)
from pi_tui.providers.stream_assembler import StreamAssembler
from pi_tui.providers.stream_failures import CONNECTION_CUT_MESSAGE as CUT_CAUSE

MALFORMED_CAUSE = "Malformed stream from the provider"
_SSE_FIELDS = ("data", "event", "id", "retry")
_SNIPPET = 80


def snippet(text: str | bytes, limit: int = _SNIPPET) -> str:
    """A short, printable quote of untrusted bytes for an error message."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    flat = "".join(ch if ch.isprintable() else " " for ch in text)
    flat = " ".join(flat.split())
    return repr(flat[:limit] + ("…" if len(flat) > limit else ""))


def is_event_stream(headers: Mapping[str, str]) -> bool:
    """A missing content type is let through: the strict line check still catches garbage."""
    kind = headers.get("content-type")
    return kind is None or "text/event-stream" in kind.lower()


class Failing(Protocol):
    """What ends a reply as an error: the ``StreamAssembler``, or another wire's decoder."""

    def fail(self, error_message: str, kind: ErrorKind, *, retry_after_ms: int | None = None) -> list[AssistantMessageEvent]: ...


def response_failure(assembler: Failing, status: int, headers: Mapping[str, str],
                     body: bytes) -> list[AssistantMessageEvent]:
    """The events for a response that is not a stream: an HTTP error (§14.2), or a 200 with a
    body of another kind."""
    raw = body.decode("utf-8", errors="replace")
    if status >= 400:
        text, code = error_text(status, raw)
        kind = classify_http_error(status, text, code)
        return assembler.fail(text, kind, retry_after_ms=retry_after_ms(headers))
    content_type = headers.get("content-type", "")
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("error") is not None:  # a proxy's error sent as 200
        text, code = error_text(status, raw)
        return assembler.fail(text, classify_http_error(None, text, code))
    if looks_like_html(raw, content_type):
        title = html_title(raw)
        named = f" (titled {snippet(title)})" if title else ""
        message = (f"The provider answered {status} with an HTML page{named} instead of an event stream; "
                   "is the model's baseUrl right?")
    else:
        message = (f"The provider answered {status} with {content_type or 'no content type'!r} instead of an "
                   f"event stream: {snippet(body)}")
    return assembler.fail(message, "unknown")


class OpenAIStreamDecoder:
    """Feed it the body bytes as they arrive; it returns the events for each piece. After a
    terminal event (``done`` or ``error``) ``finished`` is true and the caller stops reading."""

    def __init__(self, assembler: StreamAssembler) -> None:
        self.assembler = assembler
        self.finished = False
        self._buffer = b""
        self._data: list[str] = []
        self._line_number = 0

    def feed(self, data: bytes) -> list[AssistantMessageEvent]:
        events: list[AssistantMessageEvent] = []
        self._buffer += data
        while not self.finished and b"\n" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\n", 1)
            events += self._line(raw.rstrip(b"\r"))
        return events

    def end_of_body(self) -> list[AssistantMessageEvent]:
        """The body ended without an error from the transport."""
        if self.finished:
            return []
        events: list[AssistantMessageEvent] = []
        if self._buffer:
            events += self._line(self._buffer.rstrip(b"\r"))
            self._buffer = b""
        if not self.finished:
            events += self._dispatch()
        if not self.finished:
            events += self.interrupted(CUT_CAUSE + " (no [DONE])")
        return events

    def interrupted(self, cause: str) -> list[AssistantMessageEvent]:
        """The transport failed (connection reset, read timeout) before the stream finished."""
        if self.finished:
            return []
        self.finished = True
        return self.assembler.interrupted(cause)

    def _line(self, raw: bytes) -> list[AssistantMessageEvent]:
        self._line_number += 1
        if not raw:
            return self._dispatch()
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            return self._malformed(f"line {self._line_number} is not UTF-8 text: {snippet(raw)}")
        if line.startswith(":"):
            return []  # a comment (keep-alive)
        name, colon, value = line.partition(":")
        if not colon or name not in _SSE_FIELDS:
            return self._malformed(f"line {self._line_number} is not an event-stream field: {snippet(raw)}")
        if name == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return []

    def _dispatch(self) -> list[AssistantMessageEvent]:
        if not self._data:
            return []
        data, self._data = "\n".join(self._data), []
        if data == "[DONE]":
            self.finished = True
            return self.assembler.finish()
        try:
            chunk = json.loads(data)
        except ValueError:
            chunk = None
        if not isinstance(chunk, dict):
            return self._malformed(f"event data is not a JSON object: {snippet(data)}")
        error = chunk.get("error")
        if error is not None:
            self.finished = True
            details = error if isinstance(error, dict) else {"message": error}
            message = str(details.get("message") or json.dumps(details))
            code = details.get("code")
            return self.assembler.fail(message, classify_http_error(None, message, str(code) if code else None))
        return self.assembler.feed(chunk)

    def _malformed(self, detail: str) -> list[AssistantMessageEvent]:
        return self.interrupted(f"{MALFORMED_CAUSE}: {detail}")
