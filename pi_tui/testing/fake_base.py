"""What every local fake API server shares (the OpenAI-compatible, Anthropic, Responses and Gemini
fakes): a threaded HTTP server on 127.0.0.1 that answers from a script, records every request,
can be stopped at once (waits wake up), and runs as a context manager or from the command line.

Stdlib only, on purpose: the fakes must start fast and never load litellm.

A fake is three small classes:

* a ``ScriptHandler`` subclass: its ``do_POST`` reads the request (``read_request``, which also
  records it), checks it against the API's rules and answers with the helpers here
  (``send_json``, ``send_raw``, ``write_chunk``/``end_chunks``, ``cut``) or a fault plan
  (``send_plan``);
* optionally a ``ScriptServer`` subclass holding the fake's own state (issued signatures, a
  prompt cache, ids);
* a ``FakeServerBase`` subclass building that server: ``with Fake(turns) as server`` gives
  ``server.base_url``, ``server.requests`` (bodies) and ``server.recorded`` (headers, raw bytes).
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

from pi_tui.testing.script import Script
from pi_tui.testing.script_faults import (
    SSE_KEEPALIVE,
    ErrorBody,
    Frame,
    Pause,
    ResponsePlan,
    Stall,
    legacy_fault,
    response_plan,
)

DEFAULT_MODEL = "fake-model"
ScriptSource = Script | list[dict[str, Any]] | dict[str, Any] | Path | str
"""A script object, its turns, its JSON/YAML data, or the path of a script file."""


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as it arrived (headers lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = field(repr=False)


def load_script(script: ScriptSource) -> Script:
    if isinstance(script, Script):
        return script
    if isinstance(script, (str, Path)):
        return Script.load(Path(script))
    return Script.from_data(script)


class ScriptServer(ThreadingHTTPServer):
    """The listening socket, the script, the request log; ``wait`` sleeps until shutdown."""

    daemon_threads = True

    def __init__(self, port: int, script: Script, log_path: Path | None, models: list[str],
                 handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", port), handler)
        self.script = script
        self.models = models
        self.log_path = log_path
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            if self.log_path is not None:
                line = json.dumps(request.body, ensure_ascii=False) if request.body is not None else json.dumps(request.raw.decode("utf-8", "replace"))
                with self.log_path.open("a", encoding="utf-8") as log:
                    log.write(line + "\n")

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-stream (a cancelled call) is normal here, not an error."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)

    def wait(self, seconds: float) -> None:
        """Sleep, but wake up at once when the server is shutting down."""
        self._stopping.wait(seconds)

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def stop(self) -> None:
        self._stopping.set()
        self.shutdown()
        self.server_close()


class ScriptHandler(BaseHTTPRequestHandler):
    """The request handler's shared half: reading and recording, and the ways to answer."""

    server: ScriptServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr access logs
        return

    def read_request(self, *, empty: Any = None) -> tuple[bytes, Any, dict[str, str]]:
        """The raw body, its JSON (None when it is not JSON; ``empty`` for no body) and the
        lower-cased headers; the request is recorded before anything judges it."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else empty
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.record(RecordedRequest("POST", self.path, headers, body, raw))
        return raw, body, headers

    def send_raw(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_raw(status, data, "application/json", headers)

    def start_chunks(self, content_type: str = "text/event-stream", headers: dict[str, str] | None = None) -> None:
        """A 200 with a chunked body; write it with ``write_chunk`` and end it with ``end_chunks``."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def write_chunk(self, data: bytes) -> None:
        """One chunk of a chunked body."""
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def cut(self) -> None:
        """Drop the connection mid-body (no terminating chunk)."""
        drop_connection(self)

    def send_frames(self, frames: Sequence[Frame], turn: dict[str, Any], *, error_body: ErrorBody, credential: str = "",
                    garbage: bytes | None = None, stream_error: Callable[[dict[str, Any], int], bytes] | None = None,
                    content_type: str = "text/event-stream", keepalive: bytes = SSE_KEEPALIVE) -> None:
        """Stream a rendered turn with its breakages: the shared ``fault`` (``script_faults``), the
        older ``cut_after_chunks``/``stall_after_chunks``, and two keys counted in frames:
        ``garbage_after_chunks`` (``garbage`` replaces the rest of the stream) and
        ``stream_error`` (``{"after": N, ...}``: the wire's error event, built by ``stream_error``
        with its position, ends the stream)."""
        sent = list(frames)
        if garbage is not None and turn.get("garbage_after_chunks") is not None:
            sent = [*sent[: int(turn["garbage_after_chunks"])], Frame(garbage)]
        elif stream_error is not None and turn.get("stream_error") is not None:
            after = int(turn["stream_error"].get("after", 0))
            sent = [*sent[:after], Frame(stream_error(turn["stream_error"], after))]
        plan = response_plan(sent, legacy_fault(turn), error_body=error_body, credential=credential,
                             encode_json=lambda value: json.dumps(value).encode(), keepalive=keepalive)
        if plan.content_type == "text/event-stream":
            plan.content_type = content_type
        send_plan(self, plan, pace=float(turn.get("chunk_delay_ms", 0)) / 1000)


class _Writer(Protocol):
    """What ``send_plan`` needs of a request handler."""

    server: Any
    wfile: Any
    connection: socket.socket
    close_connection: bool

    def send_response(self, code: int, message: str | None = None) -> None: ...
    def send_header(self, keyword: str, value: str) -> None: ...
    def end_headers(self) -> None: ...


def send_plan(handler: _Writer, plan: ResponsePlan, *, pace: float = 0.0) -> None:
    """Carry out a response plan (``script_faults.response_plan``) on a request handler.

    ``pace`` spaces the body's writes by deadline, not by sleeping after each write: write n
    leaves at start + n * pace (at once when late), so "2,000 chunks/s" really is 2,000/s even
    though one wait plus one write costs more than 0.5 ms.
    """
    handler.send_response(plan.status)
    handler.send_header("Content-Type", plan.content_type)
    if plan.content_type.startswith("text/event-stream"):
        handler.send_header("Cache-Control", "no-cache")
    for name, value in plan.headers.items():
        handler.send_header(name, value)
    if plan.framing == "length":
        handler.send_header("Content-Length", str(len(plan.body)))
    elif plan.framing == "chunked":
        handler.send_header("Transfer-Encoding", "chunked")
    else:
        handler.send_header("Connection", "close")
    handler.end_headers()
    chunked = plan.framing == "chunked"
    started = time.monotonic()
    sent = 0
    for step in plan.steps:
        if isinstance(step, Stall):
            _stall(handler, step, chunked)
            drop_connection(handler)
            return
        if isinstance(step, Pause):
            handler.server.wait(step.seconds)
            continue
        if pace:
            sent += 1
            ahead = started + sent * pace - time.monotonic()
            if ahead > 0:
                handler.server.wait(ahead)
        handler.wfile.write(f"{len(step.data):x}\r\n".encode() + step.data + b"\r\n" if chunked else step.data)
        handler.wfile.flush()  # one write per step, so a cut or a drip lands where it says
    if plan.ending == "reset":
        drop_connection(handler)
        return
    if chunked:
        handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()
    if plan.framing == "eof":
        handler.close_connection = True


def _stall(handler: _Writer, stall: Stall, chunked: bool) -> None:
    """Send nothing of the reply for ``stall.seconds`` (the wire's keep-alives meanwhile, if any);
    ends early when the server stops or the client has gone."""
    if not stall.keepalive:
        handler.server.wait(stall.seconds)
        return
    until = time.monotonic() + stall.seconds
    while time.monotonic() < until and not handler.server.stopping:
        data = stall.keepalive
        try:
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n" if chunked else data)
            handler.wfile.flush()
        except OSError:
            return
        handler.server.wait(stall.interval)


def drop_connection(handler: _Writer) -> None:
    """Drop the connection mid-body (no terminating chunk): a broken stream for the client."""
    handler.wfile.flush()
    handler.close_connection = True
    try:
        handler.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class FakeServerBase:
    """A fake's server on a background thread, as a context manager (``with Fake(turns) as s``)."""

    thread_name = "fake-server"
    url_path = ""
    """What pi's ``baseUrl`` for this API adds to the host (``/v1``, ``/v1beta``, nothing)."""

    def __init__(self, server: ScriptServer) -> None:
        self._server = server
        self.script = server.script
        # a short poll interval: shutdown() waits up to one interval, and tests start many servers
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name=self.thread_name, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.url_path}"

    @property
    def requests(self) -> list[Any]:
        """Every POSTed body received so far (parsed JSON), in arrival order."""
        return [r.body for r in self._server.requests if r.method == "POST"]

    @property
    def recorded(self) -> list[RecordedRequest]:
        """The full requests (path, headers, raw bytes)."""
        return list(self._server.requests)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.stop()
        self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        """Serve on the calling thread until interrupted (the command line)."""
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
