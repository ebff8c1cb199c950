"""An OpenAI-compatible chat-completions server on 127.0.0.1, driven by a script.

It is the network twin of ``ScriptedProvider``: the same script (``testing/script.py``) answers
over real HTTP, so litellm's HTTP client, SSE parsing and error mapping are exercised without a
real provider. Stdlib only, on purpose: it must start fast and never load litellm.

Command line::

    python -m pi_tui.testing.fake_server --script FILE [--port 0] [--log FILE]

prints ``PORT <n>`` as its first stdout line, then serves until interrupted. In tests::

    with FakeServer(turns) as server:
        ... server.base_url ...        # http://127.0.0.1:<port>/v1
        server.requests[0]             # the first request body (parsed JSON)

Routes: ``POST /v1/chat/completions`` and ``/chat/completions`` (SSE when ``stream`` is true,
else one JSON completion), ``GET /v1/models``. Streamed bodies use chunked transfer encoding.

Faults (a turn's ``fault``, ``testing/script_faults.py``) break the reply the way networks and
proxies do: a body cut at a chosen place (cleanly terminated, ended by closing the connection, or
dropped mid-chunk), a stall, garbage, an HTML page, a slow drip, an error quoting the request's
``Authorization``; a turn's ``error`` answers 4xx/5xx with ``Retry-After``/``retry-after-ms``.
What every fake shares (recording, stopping, fault plans on the socket) is ``fake_base.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pi_tui.testing.fake_base import (
    DEFAULT_MODEL,
    FakeServerBase,
    RecordedRequest,
    ScriptHandler,
    ScriptServer,
    ScriptSource,
    load_script,
    send_plan,
)
from pi_tui.testing.script import (
    EXHAUSTED_ERROR,
    RequestView,
    empty_chunk,
    error_body,
    openai_error_body,
    retry_headers,
    turn_completion,
    turn_frames,
)
from pi_tui.testing.script_faults import STALL_SECONDS, legacy_fault, response_plan

__all__ = ["STALL_SECONDS", "FakeServer", "RecordedRequest", "send_plan"]


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


class _ChatCompletionsHandler(ScriptHandler):
    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.server.models]
            self.send_json(200, {"object": "list", "data": data})
        else:
            self.send_json(404, {"error": {"message": f"Not found: {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        raw, body, _ = self.read_request(empty={})
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self.send_json(404, {"error": {"message": f"Not found: {self.path}", "type": "not_found"}})
            return
        if not isinstance(body, dict):
            self.send_json(400, {"error": {"message": "Request body is not a JSON object", "type": "invalid_request_error"}})
            return
        view = view_of_body(body, raw.decode("utf-8", errors="replace"))
        turn = self.server.script.next_turn(view) or {"error": EXHAUSTED_ERROR}
        if turn.get("delay_ms"):
            self.server.wait(turn["delay_ms"] / 1000)
        if "error" in turn:
            error = turn["error"]
            payload = error_body(error)
            self.send_json(int(error.get("status", 500)), payload.encode() if isinstance(payload, str) else payload,
                           retry_headers(error))
            return
        model = str(body.get("model") or DEFAULT_MODEL)
        if body.get("stream"):
            plan = response_plan(turn_frames(turn, view, model), legacy_fault(turn), error_body=openai_error_body,
                                 credential=self.headers.get("Authorization", ""), encode_json=lambda v: json.dumps(v).encode(),
                                 empty_chunk=empty_chunk(model))
            send_plan(self, plan, pace=float(turn.get("chunk_delay_ms", 0)) / 1000)
        else:
            self.send_json(200, turn_completion(turn, view, model))


class FakeServer(FakeServerBase):
    """The OpenAI-compatible fake: ``with FakeServer(turns) as s`` (``s.base_url`` ends in ``/v1``)."""

    thread_name = "fake-openai-server"
    url_path = "/v1"

    def __init__(self, script: ScriptSource, log_path: Path | None = None, *, port: int = 0) -> None:
        loaded = load_script(script)
        super().__init__(ScriptServer(port, loaded, log_path, loaded.models or [DEFAULT_MODEL], _ChatCompletionsHandler))


def main(argv: list[str] | None = None) -> int:
    from pi_tui.testing.fake_cli import serve_from_command_line

    return serve_from_command_line(argv, prog="pi_tui.testing.fake_server", description=__doc__.split("\n\n")[0],
                                   make_server=lambda args: FakeServer(args.script, args.log, port=args.port))


if __name__ == "__main__":
    sys.exit(main())
