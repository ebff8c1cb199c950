"""The skeleton every native streaming client shares: one POST, one streamed reply, no raise.

Each of pi-tui's own wires (chat completions, Anthropic Messages, OpenAI Responses, Gemini) does
the same things around its own encoding and decoding, and does them in the same order:

1. build pi's body, hand it to the ``before_provider_request`` hook (``on_payload``), which may
   replace it; the wire may then seal it (Anthropic forces ``stream`` again) and derive its
   headers from the final body;
2. post it compactly (``JSON.stringify``'s bytes) with an **idle** timeout
   (``retry.provider.timeoutMs`` when the request carries one) and a connect timeout of at most
   30 s (``http_stream.post_stream``); on the body the timeout counts from the last piece of the
   reply (an event the decoder yielded, or bytes of an event still arriving: ``ReplyWatch``), so
   keep-alives (SSE comments, blank lines, ``ping`` events, empty chunks) never hold a dead
   reply open while a reply dripping in slowly is never cut;
3. an HTTP error, or a 200 that is not an event stream, is read (64 KB at most: enough for any
   error text) and turned into the wire's error message (its own texts, kinds, retry delay);
4. otherwise ``start``, then the wire's decoder turns the body into events and decides whether
   the stream finished (a stream that did not is an error, never an answer);
5. a transport failure (no connection, cut, no data within the timeout) ends the reply through
   the wire's own texts, and the connection is closed whatever happens — also when the consumer
   cancels (asyncio cancellation closes this generator; the ``finally`` closes the socket).

No HTTP-level retries anywhere: the session retries, with visible events, after the delay the
server asked for (``retryAfterMs`` on the error message).

A wire subclasses ``WireCall`` (one object per model call: its decoder's state lives there) and
``HttpWireProvider`` (stateless, names its ``WireCall``).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from pi_tui import __version__
from pi_tui.core.messages import ErrorKind
from pi_tui.core.provider import AssistantMessageEvent, CompletionRequest
from pi_tui.providers.classify import CONNECTION_ERROR_MESSAGE
from pi_tui.providers.http_stream import (
    ConnectFailed,
    HttpStreamError,
    ReadTimeout,
    StreamCut,
    StreamResponse,
    post_stream,
)
from pi_tui.providers.openai_sse import is_event_stream, response_failure
from pi_tui.providers.stream_failures import (
    CONNECTION_CUT_MESSAGE,
    TIMEOUT_MESSAGE,
    keepalive_timeout_message,
)

DEFAULT_TIMEOUT_S = 600.0
"""The idle timeout without ``retry.provider.timeoutMs``: pi's SDK default of 10 minutes."""
CONNECT_TIMEOUT_S = 30.0
ERROR_BODY_LIMIT = 64 * 1024
"""How much of an error page or other non-stream body is read (enough for any error text)."""
USER_AGENT = f"pi-tui/{__version__}"


def compact_json(body: Any) -> bytes:
    """The body as JavaScript's ``JSON.stringify`` writes it: no whitespace, raw UTF-8."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class Reply(Protocol):
    """What accumulates one reply (an assembler or a wire's decoder): it starts and it can fail."""

    def start(self) -> AssistantMessageEvent: ...

    def fail(self, error_message: str, kind: ErrorKind, *, retry_after_ms: int | None = None) -> list[AssistantMessageEvent]: ...


def bearer_headers(request: CompletionRequest, accept: str) -> dict[str, str]:
    """The OpenAI SDK's basics: JSON, what is accepted back, our agent, the key as a bearer token."""
    headers = {"Content-Type": "application/json", "Accept": accept, "User-Agent": USER_AGENT}
    if request.api_key:
        headers["Authorization"] = f"Bearer {request.api_key}"
    return headers


def timeout_cause(error: ReadTimeout, silent: str = TIMEOUT_MESSAGE) -> str:
    """The error text of a timeout: ``silent`` when nothing came, else that only keep-alives did."""
    return keepalive_timeout_message(error.seconds) if error.keepalives_only else silent


class ReplyWatch:
    """Tells the body's clock (``StreamResponse.progress``) when part of an event arrives.

    A whole event counts when the decoder makes something of it (``HttpWireProvider.stream``);
    that alone would cut a reply that drips in slower than one event per timeout. So bytes that
    extend an unfinished line of the event stream count too, unless that line is a comment
    (``: keep-alive``). Keep-alives arrive whole (one write each): a comment, a blank line, a
    ``ping`` event or a chunk with nothing in it leaves no unfinished line and is never counted.
    """

    def __init__(self, progress: Callable[[], None]) -> None:
        self._progress = progress
        self._line_start = b""
        """The first byte of the line still arriving (empty: none is)."""

    def __call__(self, data: bytes) -> None:
        _, newline, tail = data.rpartition(b"\n")
        if newline:
            self._line_start = tail.lstrip(b"\r")[:1]
        elif not self._line_start:
            self._line_start = data.lstrip(b"\r")[:1]
        if self._line_start and self._line_start != b":":
            self._progress()


class WireCall(ABC):
    """One model call on one wire: its body, headers and URL, and its decoder's state."""

    url: str
    """Where the body is posted (set by the subclass's constructor)."""
    reply: Reply
    """What accumulates the reply (set by the subclass's constructor)."""
    timeout_message = TIMEOUT_MESSAGE
    """The error text when no data came within the idle timeout."""

    def __init__(self, request: CompletionRequest) -> None:
        self.request = request

    @abstractmethod
    def body(self) -> dict[str, Any]:
        """pi's body for this request (what ``on_payload`` receives)."""

    def sealed(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body after the hook, with what the wire forces whatever a hook did."""
        return body

    @abstractmethod
    def headers(self, body: dict[str, Any]) -> dict[str, str]:
        """The request headers for the final body."""

    def start(self) -> AssistantMessageEvent:
        """The ``start`` event (the stream is being read)."""
        return self.reply.start()

    def fail(self, error_message: str, kind: ErrorKind, *, retry_after_ms: int | None = None) -> list[AssistantMessageEvent]:
        """End the reply as an error, keeping what streamed so far."""
        return self.reply.fail(error_message, kind, retry_after_ms=retry_after_ms)

    @abstractmethod
    def events(self, response: StreamResponse) -> AsyncIterator[AssistantMessageEvent]:
        """Decode the body into events, ending with exactly one ``done`` or ``error``. Transport
        errors (``HttpStreamError``) propagate to ``transport_failure``."""

    def is_stream(self, response: StreamResponse) -> bool:
        """Whether the body is the stream (else it is read whole as an error or a wrong answer)."""
        return response.status < 400 and is_event_stream(response.headers)

    def answer_failure(self, response: StreamResponse, raw: bytes) -> list[AssistantMessageEvent]:
        """An HTTP error, or a 200 that is not a stream (``raw``: its body, cut at 64 KB):
        §14.2's texts by default."""
        return response_failure(self, response.status, response.headers, raw)

    def transport_failure(self, error: HttpStreamError) -> list[AssistantMessageEvent]:
        """No connection, a cut body or no data within the timeout: a transient error."""
        if isinstance(error, ReadTimeout):
            return self.fail(timeout_cause(error, self.timeout_message), "transient")
        if isinstance(error, StreamCut):
            return self.fail(CONNECTION_CUT_MESSAGE, "transient")
        return self.fail(CONNECTION_ERROR_MESSAGE, "transient")


class HttpWireProvider(ABC):
    """A ``Provider`` that streams each reply over its wire; stateless and cheap to create.

    ``timeout`` is the idle timeout (seconds without any data on connect and headers, and
    without any more of the reply on the body: keep-alives do not count) when the request does
    not carry ``timeout_ms``.
    """

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout = timeout

    @abstractmethod
    def call(self, request: CompletionRequest) -> WireCall:
        """A new call object for this request."""

    async def stream(self, request: CompletionRequest) -> AsyncIterator[AssistantMessageEvent]:
        call = self.call(request)
        body = call.body()
        if request.on_payload is not None:
            replaced = request.on_payload(body)
            if isinstance(replaced, dict):
                body = replaced
        body = call.sealed(body)
        headers = call.headers(body)
        timeout = request.timeout_ms / 1000 if request.timeout_ms else self.timeout
        response: StreamResponse | None = None
        try:
            response = await post_stream(call.url, compact_json(body), headers, timeout=timeout,
                                         connect_timeout=min(timeout, CONNECT_TIMEOUT_S))
            if not call.is_stream(response):
                raw = await response.read(limit=ERROR_BODY_LIMIT)
                for event in call.answer_failure(response, raw):
                    yield event
                return
            yield call.start()
            response.on_body = ReplyWatch(response.progress)
            response.progress()
            async for event in call.events(response):
                yield event
                # the reply grew (keep-alives never get here); counted from now, not from before
                # the consumer took its time with the event
                response.progress()
        except (ReadTimeout, StreamCut, ConnectFailed) as error:
            for event in call.transport_failure(error):
                yield event
        finally:
            if response is not None:
                await response.close()
