"""An OpenAI-compatible chat-completions server on 127.0.0.1, driven by a script.

It is the network twin of ``ScriptedProvider``: the same script (``providers/script.py``) answers
over real HTTP, so litellm's HTTP client, SSE parsing and error mapping are exercised without a
real provider. Stdlib only, on purpose: it must start fast and never load litellm.

Command line::

    python -m pi_tui.providers.fake_server --script FILE [--port 0] [--log FILE]

prints ``PORT <n>`` as its first stdout line, then serves until interrupted. In tests::

    with FakeServer(turns) as server:
        ... server.base_url ...        # http://127.0.0.1:<port>/v1
        server.requests[0]             # the first request body (parsed JSON)

Routes: ``POST /v1/chat/completions`` and ``/chat/completions`` (SSE when ``stream`` is true,
else one JSON completion), ``GET /v1/models``. Streamed bodies use chunked transfer encoding.

Faults (a turn's ``fault``, ``providers/script_faults.py``) break the reply the way networks and
proxies do: a body cut at a chosen place (cleanly terminated, ended by closing the connection, or
dropped mid-chunk), a stall, garbage, an HTML page, a slow drip, an error quoting the request's
``Authorization``; a turn's ``error`` answers 4xx/5xx with ``Retry-After``/``retry-after-ms``.
``send_plan`` carries a fault out on the socket and is shared with the Anthropic fake.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from pi_tui.providers.script import (
    EXHAUSTED_ERROR,
    RequestView,
    Script,
    error_body,
    openai_error_body,
    retry_headers,
    turn_completion,
    turn_frames,
)
from pi_tui.providers.script_faults import (
    STALL_SECONDS,
    Pause,
    ResponsePlan,
    Stall,
    legacy_fault,
    response_plan,
)

DEFAULT_MODEL = "fake-model"
__all__ = ["STALL_SECONDS", "FakeServer", "RecordedRequest", "send_plan"]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as it arrived (headers lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = field(repr=False)


def view_of_body(body: Any, raw_text: str) -> RequestView:
    """The part of an OpenAI request a script's ``when`` can look at."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    system = ""
    last_user = ""
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") in ("system", "developer") and not system:
            system = _text_of_wire_content(message.get("content"))
        if message.get("role") == "user":
            last_user = _text_of_wire_content(message.get("content"))
    return RequestView(
        system_prompt=system,
        last_user_text=last_user,
        has_tools=bool(isinstance(body, dict) and body.get("tools")),
        body_text=raw_text,
    )


def _text_of_wire_content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr access logs
        return

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.server.models]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, {"error": {"message": f"Not found: {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        self.server.record(RecordedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw))
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, {"error": {"message": f"Not found: {self.path}", "type": "not_found"}})
            return
        if not isinstance(body, dict):
            self._send_json(400, {"error": {"message": "Request body is not a JSON object", "type": "invalid_request_error"}})
            return
        view = view_of_body(body, raw.decode("utf-8", errors="replace"))
        turn = self.server.script.next_turn(view) or {"error": EXHAUSTED_ERROR}
        if turn.get("delay_ms"):
            self.server.wait(turn["delay_ms"] / 1000)
        if "error" in turn:
            self._send_error(turn["error"])
            return
        model = str(body.get("model") or DEFAULT_MODEL)
        if body.get("stream"):
            plan = response_plan(turn_frames(turn, view, model), legacy_fault(turn), error_body=openai_error_body,
                                 credential=self.headers.get("Authorization", ""), encode_json=_json_bytes)
            send_plan(self, plan, pace=float(turn.get("chunk_delay_ms", 0)) / 1000)
        else:
            self._send_json(200, turn_completion(turn, view, model))

    # ------------------------------------------------------------------ responses

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else _json_bytes(payload)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, error: dict[str, Any]) -> None:
        body = error_body(error)
        payload = body.encode() if isinstance(body, str) else body
        self._send_json(int(error.get("status", 500)), payload, retry_headers(error))

    def _write_chunk(self, data: bytes) -> None:
        """One chunk of a chunked body (for fakes that write their own streams)."""
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _cut(self) -> None:
        _drop(self)


def _json_bytes(payload: Any) -> bytes:
    return json.dumps(payload).encode()


class _Writer(Protocol):
    """What ``send_plan`` needs of a request handler (either fake's)."""

    server: Any
    wfile: Any
    connection: socket.socket
    close_connection: bool

    def send_response(self, code: int, message: str | None = None) -> None: ...
    def send_header(self, keyword: str, value: str) -> None: ...
    def end_headers(self) -> None: ...


def send_plan(handler: _Writer, plan: ResponsePlan, *, pace: float = 0.0) -> None:
    """Carry out a response plan on a request handler (shared by the fakes of both wires).

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
            handler.server.wait(step.seconds)
            _drop(handler)
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
        _drop(handler)
        return
    if chunked:
        handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()
    if plan.framing == "eof":
        handler.close_connection = True


def _drop(handler: _Writer) -> None:
    """Drop the connection mid-body (no terminating chunk): a broken stream for the client."""
    handler.wfile.flush()
    handler.close_connection = True
    try:
        handler.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, script: Script, log_path: Path | None, models: list[str],
                 handler: type[BaseHTTPRequestHandler] | None = None) -> None:
        super().__init__(("127.0.0.1", port), handler or _Handler)
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

    def stop(self) -> None:
        self._stopping.set()
        self.shutdown()
        self.server_close()


def _coerce_script(script: Script | list[dict[str, Any]] | dict[str, Any] | Path | str) -> tuple[Script, list[str]]:
    if isinstance(script, Script):
        return script, [DEFAULT_MODEL]
    if isinstance(script, (str, Path)):
        path = Path(script)
        loaded = Script.load(path)
        return loaded, loaded.models or [DEFAULT_MODEL]
    parsed = Script.from_data(script)
    return parsed, parsed.models or [DEFAULT_MODEL]


class FakeServer:
    """The server on a background thread, as a context manager (``with FakeServer(turns) as s``)."""

    def __init__(
        self,
        script: Script | list[dict[str, Any]] | dict[str, Any] | Path | str,
        log_path: Path | None = None,
        *,
        port: int = 0,
    ) -> None:
        self.script, models = _coerce_script(script)
        self._server = _Server(port, self.script, log_path, models)
        # a short poll interval: shutdown() waits up to one interval, and tests start many servers
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai-server", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[Any]:
        """Every chat request body received so far (parsed JSON), in arrival order."""
        return [r.body for r in self._server.requests if r.method == "POST"]

    @property
    def recorded(self) -> list[RecordedRequest]:
        """The full requests (path, headers, raw bytes)."""
        return list(self._server.requests)

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.stop()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    from pi_tui.providers.fake_cli import serve_from_command_line

    return serve_from_command_line(argv, prog="pi_tui.providers.fake_server", description=__doc__.split("\n\n")[0],
                                   make_server=lambda args: FakeServer(args.script, args.log, port=args.port))


if __name__ == "__main__":
    sys.exit(main())
