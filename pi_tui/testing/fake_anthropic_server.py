"""A strict fake of Anthropic's Messages API on 127.0.0.1, driven by the shared script format.

The same scripts as the scripted provider and the OpenAI-compatible fake (``testing/script.py``:
``text``, ``thinking``, ``tool_calls``, ``usage``, ``error``, ``delay_ms``, ``chunk_delay_ms``,
``cut_after_chunks``, ``stall_after_chunks``, ``when``) answer here in Anthropic's SSE format
(``message_start``, ``content_block_start/delta/stop`` with ``thinking_delta``, ``signature_delta``
and ``input_json_delta``, ``message_delta`` with usage, ``message_stop``, ``ping``). A "chunk" is
one SSE event here.

It is as strict as the real API (``fake_anthropic_rules.py``: headers, body keys, thinking
budget, tool_use/tool_result pairing, thinking-block continuity and signatures, at most 4 cache
markers), bills usage from the request's cache markers (``fake_anthropic_cache.py``) and answers
an over-long prompt with the API's overflow text. Thinking blocks are only streamed when the
request enabled thinking, as the real API does.

Extra turn keys (Anthropic only):

``stop_reason``          the ``message_delta`` stop reason (default from the script's finish)
``redacted_thinking``    true: stream a ``redacted_thinking`` block before the thinking
``signature``            the signature to stream instead of a valid one; ``signature_parts``: 2
                         splits it over two ``signature_delta`` events
``stream_error``         ``{"type": "overloaded_error", "message": "Overloaded", "after": 1}``: an
                         ``event: error`` after N events, then the stream ends
``cut_in``               ``"text"``, ``"thinking"`` or ``"tool_input"``: drop the connection right
                         after the first delta of that kind
``end_after_chunks``     end the body cleanly after N events (no ``message_stop``)
``garbage``              answer 200 with this raw text as the body (not SSE)
``garbage_event``        true: a ``content_block_delta`` whose data is not JSON, mid-stream
``html``                 ``{"status": 502}``: a proxy's HTML error page instead of JSON
``crlf``                 true: SSE lines end with CRLF
``fault``                the shared fault steps (``script_faults.py``): cut/stall/garbage at a
                         named place, HTML page, drip, echoed key, as on the OpenAI fake
``error`` keys           ``status``, ``type``, ``message``, ``retry_after``, ``retry_after_ms``,
                         ``should_retry``, ``echo_api_key`` (the message quotes the key received),
                         ``body`` (verbatim)

Command line: ``python -m pi_tui.testing.fake_anthropic_server --script FILE [--port 0]
[--api-key KEY] [--context-window N] [--log FILE]`` prints ``PORT <n>`` and serves. In tests::

    with FakeAnthropicServer(turns, api_key="sk-ant-test") as server:
        server.base_url            # http://127.0.0.1:<port> (pi's baseUrl has no /v1)
        server.requests[0]         # the first body; server.recorded: headers and raw bytes
        server.usages              # what each answered request was billed
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import threading
from pathlib import Path
from typing import Any

from pi_tui.testing.fake_anthropic_cache import DEFAULT_MIN_TOKENS, PromptCache, request_tokens
from pi_tui.testing.fake_anthropic_rules import (
    STATUS_TYPES,
    ApiError,
    check_body,
    check_headers,
    redacted_data,
    sign_thinking,
)
from pi_tui.testing.fake_base import (
    FakeServerBase,
    ScriptHandler,
    ScriptServer,
    ScriptSource,
    load_script,
    send_plan,
)
from pi_tui.testing.fake_cli import serve_from_command_line
from pi_tui.testing.script import EXHAUSTED_ERROR, RequestView, Script, turn_pieces
from pi_tui.testing.script_faults import STALL_SECONDS, Frame, response_plan

DEFAULT_CONTEXT_WINDOW = 200_000
STOP_REASONS = {"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}
HTML_PAGE = "<html>\r\n<head><title>{status} Bad Gateway</title></head>\r\n<body>\r\n<center><h1>{status} Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"


def view_of_messages_body(body: dict[str, Any], raw_text: str) -> RequestView:
    """What a script's ``when`` sees of an Anthropic request."""
    system = body.get("system")
    system_text = system if isinstance(system, str) else "".join(
        b.get("text", "") for b in system or [] if isinstance(b, dict))
    last_user = ""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                last_user = content
            elif isinstance(content, list):
                texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
                if texts:
                    last_user = "".join(texts)
    return RequestView(system_prompt=system_text, last_user_text=last_user, has_tools=bool(body.get("tools")),
                       body_text=raw_text)


def _sse(name: str, data: Any, newline: str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return f"event: {name}{newline}data: {text}{newline}{newline}".encode()


class _AnthropicHandler(ScriptHandler):
    server: _AnthropicServer

    def do_GET(self) -> None:
        if self.path.split("?")[0].rstrip("/") in ("/v1/models", "/models"):
            data = [{"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
                    for m in self.server.models]
            self.send_json(200, {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})
        else:
            self._send_api_error(ApiError(404, "not_found_error", f"Not found: {self.path}"))

    def do_POST(self) -> None:
        raw, body, headers = self.read_request()
        if self.path.split("?")[0].rstrip("/") not in ("/v1/messages", "/messages"):
            self._send_api_error(ApiError(404, "not_found_error", f"Not found: {self.path}"))
            return
        problem = check_headers(headers, self.server.api_key) or check_body(body, models=self.server.allowed_models)
        if problem is None and isinstance(body, dict):
            tokens = request_tokens(body)
            if tokens > self.server.context_window:
                problem = ApiError(400, "invalid_request_error",
                                   f"prompt is too long: {tokens} tokens > {self.server.context_window} maximum")
        if problem is not None:
            self._send_api_error(problem)
            return
        assert isinstance(body, dict)
        view = view_of_messages_body(body, raw.decode("utf-8", errors="replace"))
        turn = self.server.script.next_turn(view) or {"error": EXHAUSTED_ERROR}
        if turn.get("delay_ms"):
            self.server.wait(turn["delay_ms"] / 1000)
        if "error" in turn:
            self._send_scripted_error(turn["error"], headers)
        elif "html" in turn:
            status = int(turn["html"].get("status", 502))
            self.send_raw(status, HTML_PAGE.format(status=status).encode(), "text/html")
        elif "garbage" in turn:
            self.send_raw(200, str(turn["garbage"]).encode(), "text/event-stream")
        elif not body.get("stream"):
            self._send_api_error(ApiError(400, "invalid_request_error", "this fake answers streamed requests only"))
        elif turn.get("fault") is not None:
            self._send_fault(self.server.render(turn, view, body), turn, headers)
        else:
            self._send_events(self.server.render(turn, view, body), turn)

    # ------------------------------------------------------------------ responses

    def _send_api_error(self, error: ApiError, headers: dict[str, str] | None = None) -> None:
        request_id = self.server.next_id("req_fake_")
        payload = json.dumps(error.body(request_id), separators=(",", ":")).encode()
        self.send_raw(error.status, payload, "application/json", {"request-id": request_id, **(headers or {})})

    def _send_scripted_error(self, error: dict[str, Any], headers: dict[str, str]) -> None:
        status = int(error.get("status", 500))
        extra: dict[str, str] = {}
        if error.get("retry_after") is not None:
            extra["retry-after"] = str(error["retry_after"])
        if error.get("retry_after_ms") is not None:
            extra["retry-after-ms"] = str(error["retry_after_ms"])
        if error.get("should_retry") is not None:
            extra["x-should-retry"] = "true" if error["should_retry"] else "false"
        if "body" in error:
            body = error["body"]
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_raw(status, data, "application/json", extra)
            return
        message = str(error.get("message") or _default_message(status))
        if error.get("echo_api_key"):
            message += f" (received x-api-key: {headers.get('x-api-key', '')})"
        self._send_api_error(ApiError(status, str(error.get("type") or STATUS_TYPES.get(status, "api_error")), message), extra)

    def _send_fault(self, events: list[tuple[str, Any]], turn: dict[str, Any], headers: dict[str, str]) -> None:
        """A turn's ``fault`` (``script_faults.py``): the OpenAI fake's breakages at the same named
        places (a cut in the tool input, a stall before ``message_stop``, ...)."""
        def error_body(status: int, message: str) -> dict[str, Any]:
            kind = STATUS_TYPES.get(status, "api_error")
            return ApiError(status, kind, message).body(self.server.next_id("req_fake_"))

        plan = response_plan(tagged_frames(events, "\r\n" if turn.get("crlf") else "\n"), turn["fault"],
                             error_body=error_body, credential=headers.get("x-api-key", ""),
                             encode_json=lambda value: json.dumps(value, separators=(",", ":")).encode(),
                             keepalive=_sse("ping", {"type": "ping"}, "\r\n" if turn.get("crlf") else "\n"))
        plan.headers["request-id"] = self.server.next_id("req_fake_")
        send_plan(self, plan, pace=float(turn.get("chunk_delay_ms", 0)) / 1000)

    def _send_events(self, events: list[tuple[str, Any]], turn: dict[str, Any]) -> None:
        self.start_chunks("text/event-stream; charset=utf-8", {"request-id": self.server.next_id("req_fake_")})
        newline = "\r\n" if turn.get("crlf") else "\n"
        delay = float(turn.get("chunk_delay_ms", 0)) / 1000
        cut_after = turn.get("cut_after_chunks")
        if turn.get("cut_in"):
            cut_after = _first_delta(events, str(turn["cut_in"]))
        for n, (name, data) in enumerate(events):
            if cut_after is not None and n >= int(cut_after):
                self.cut()
                return
            if turn.get("stall_after_chunks") is not None and n >= int(turn["stall_after_chunks"]):
                self.server.wait(STALL_SECONDS)
                self.cut()
                return
            if turn.get("end_after_chunks") is not None and n >= int(turn["end_after_chunks"]):
                break
            if delay:
                self.server.wait(delay)
            self.write_chunk(_sse(name, data, newline))
            if name == "error":
                break
        self.end_chunks()


def _default_message(status: int) -> str:
    return {
        400: "Bad request", 401: "invalid x-api-key", 403: "Your API key does not have permission to use the specified resource.",
        404: "Not found", 413: "Request exceeds the maximum allowed number of bytes.",
        429: "Number of request tokens has exceeded your per-minute rate limit", 500: "Internal server error",
        529: "Overloaded",
    }.get(status, "Error")


def tagged_frames(events: list[tuple[str, Any]], newline: str) -> list[Frame]:
    """The events as ``script_faults`` frames, tagged with what they carry (``tool:<i>`` for the
    input of the i-th tool call, ``tool_end:<i>`` for its block's end; ``message_delta`` carries
    the finish and the usage, ``message_stop`` is the end-of-stream marker)."""
    frames = []
    tool = -1
    in_tool = False
    for name, data in events:
        tags: set[str] = set()
        if name == "content_block_start" and isinstance(data, dict):
            in_tool = data["content_block"]["type"] == "tool_use"
            tool += int(in_tool)
        elif name == "content_block_delta" and isinstance(data, dict):
            kind = data["delta"]["type"]
            tags.add(f"tool:{tool}" if kind == "input_json_delta" else {"text_delta": "text"}.get(kind, "thinking"))
        elif name == "content_block_stop" and in_tool:
            tags.add(f"tool_end:{tool}")
        elif name == "message_delta":
            tags |= {"finish", "usage"}
        elif name == "message_stop":
            tags.add("done")
        frames.append(Frame(_sse(name, data, newline), frozenset(tags)))
    return frames


def _first_delta(events: list[tuple[str, Any]], kind: str) -> int | None:
    wanted = {"text": "text_delta", "thinking": "thinking_delta", "tool_input": "input_json_delta"}.get(kind, kind)
    for n, (name, data) in enumerate(events):
        if name == "content_block_delta" and data["delta"]["type"] == wanted:
            return n + 1
    return None


class _AnthropicServer(ScriptServer):
    def __init__(self, port: int, script: Script, log_path: Path | None, *, api_key: str | None,
                 models: list[str], allowed_models: list[str] | None, context_window: int, cache_min_tokens: int) -> None:
        super().__init__(port, script, log_path, models, _AnthropicHandler)
        self.api_key = api_key
        self.allowed_models = allowed_models
        self.context_window = context_window
        self.cache = PromptCache(min_tokens=cache_min_tokens)
        self.usages: list[dict[str, int]] = []
        self._counter = itertools.count(1)
        self._id_lock = threading.Lock()

    def next_id(self, prefix: str) -> str:
        with self._id_lock:
            return f"{prefix}{next(self._counter):024x}"

    def render(self, turn: dict[str, Any], view: RequestView, body: dict[str, Any]) -> list[tuple[str, Any]]:
        """A successful turn as ``(event name, data)`` pairs, in the API's order."""
        thinking_on = isinstance(body.get("thinking"), dict) and body["thinking"].get("type") in ("enabled", "adaptive")
        usage = self._usage(turn, body)
        message = {"id": self.next_id("msg_01Fake"), "type": "message", "role": "assistant", "model": body["model"],
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": usage["input_tokens"],
                             "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                             "cache_read_input_tokens": usage["cache_read_input_tokens"], "output_tokens": 1}}
        events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": message}),
                                         ("ping", {"type": "ping"})]
        blocks = _Blocks(events)
        if thinking_on and turn.get("redacted_thinking"):
            blocks.open({"type": "redacted_thinking", "data": redacted_data(f"redacted reasoning {message['id']}")})
        thinking = ""
        reason = "end_turn"
        for piece in turn_pieces(turn, view):
            if piece.kind == "thinking":
                if not thinking_on:
                    continue
                blocks.ensure("thinking", {"type": "thinking", "thinking": "", "signature": ""})
                blocks.delta({"type": "thinking_delta", "thinking": piece.text})
                thinking += piece.text
            elif piece.kind == "text":
                if blocks.current == "thinking":
                    self._sign(blocks, turn, thinking)
                blocks.ensure("text", {"type": "text", "text": ""})
                blocks.delta({"type": "text_delta", "text": piece.text})
            elif piece.kind == "tool_call":
                if blocks.current == "thinking":
                    self._sign(blocks, turn, thinking)
                if piece.call_id is not None:
                    call = turn["tool_calls"][piece.index]
                    call_id = call.get("id") or self.next_id("toolu_01Fake")
                    blocks.open({"type": "tool_use", "id": call_id, "name": piece.name, "input": {}}, kind=f"tool{piece.index}")
                blocks.delta({"type": "input_json_delta", "partial_json": piece.text})
            elif piece.kind == "finish":
                reason = STOP_REASONS.get(piece.reason, piece.reason)
        if blocks.current == "thinking":
            self._sign(blocks, turn, thinking)
        blocks.close()
        if turn.get("garbage_event"):
            events.insert(max(2, len(events) - 1), ("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":"))
        if turn.get("stream_error"):
            error = dict(turn["stream_error"])
            after = int(error.pop("after", 1))
            payload = {"type": "error", "error": {"type": error.get("type", "overloaded_error"),
                                                  "message": error.get("message", "Overloaded")}}
            events.insert(after, ("error", payload))
        events.append(("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": turn.get("stop_reason") or reason, "stop_sequence": None},
                                         "usage": {"output_tokens": usage["output_tokens"]}}))
        events.append(("message_stop", {"type": "message_stop"}))
        with self._lock:
            self.usages.append(usage)
        return events

    @staticmethod
    def _sign(blocks: _Blocks, turn: dict[str, Any], thinking: str) -> None:
        signature = str(turn.get("signature") or sign_thinking(thinking))
        parts = max(1, int(turn.get("signature_parts", 1)))
        step = math.ceil(len(signature) / parts)
        for start in range(0, len(signature), step):
            blocks.delta({"type": "signature_delta", "signature": signature[start : start + step]})

    def _usage(self, turn: dict[str, Any], body: dict[str, Any]) -> dict[str, int]:
        given = turn.get("usage")
        produced = len(turn.get("text", "")) + len(turn.get("thinking", ""))
        produced += sum(len(json.dumps(c.get("arguments", {}))) for c in turn.get("tool_calls", []))
        if isinstance(given, dict) and "input_tokens" in given:
            return {"input_tokens": int(given["input_tokens"]), "output_tokens": int(given.get("output_tokens", 1)),
                    "cache_read_input_tokens": int(given.get("cache_read_input_tokens", 0)),
                    "cache_creation_input_tokens": int(given.get("cache_creation_input_tokens", 0))}
        if isinstance(given, dict):  # the OpenAI-style keys of shared scripts
            read, write = int(given.get("cached_tokens", 0)), int(given.get("cache_write_tokens", 0))
            return {"input_tokens": max(0, int(given.get("prompt_tokens", 0)) - read - write),
                    "output_tokens": int(given.get("completion_tokens", 1)),
                    "cache_read_input_tokens": read, "cache_creation_input_tokens": write}
        billed = self.cache.bill(body)
        return {"input_tokens": billed.input_tokens, "output_tokens": max(1, math.ceil(produced / 4)),
                "cache_read_input_tokens": billed.cache_read_input_tokens,
                "cache_creation_input_tokens": billed.cache_creation_input_tokens}


class _Blocks:
    """Opens, feeds and closes content blocks, numbering them as the API does."""

    def __init__(self, events: list[tuple[str, Any]]) -> None:
        self.events = events
        self.index = -1
        self.current: str | None = None

    def open(self, block: dict[str, Any], *, kind: str | None = None) -> None:
        self.close()
        self.index += 1
        self.current = kind or block["type"]
        self.events.append(("content_block_start", {"type": "content_block_start", "index": self.index, "content_block": block}))

    def ensure(self, kind: str, block: dict[str, Any]) -> None:
        if self.current != kind:
            self.open(block)

    def delta(self, delta: dict[str, Any]) -> None:
        self.events.append(("content_block_delta", {"type": "content_block_delta", "index": self.index, "delta": delta}))

    def close(self) -> None:
        if self.current is not None:
            self.events.append(("content_block_stop", {"type": "content_block_stop", "index": self.index}))
            self.current = None


class FakeAnthropicServer(FakeServerBase):
    """The server on a background thread, as a context manager (``base_url`` has no ``/v1``, as
    pi's ``baseUrl`` for Anthropic)."""

    thread_name = "fake-anthropic-server"

    def __init__(self, script: ScriptSource, log_path: Path | None = None,
                 *, port: int = 0, api_key: str | None = None, models: list[str] | None = None,
                 context_window: int = DEFAULT_CONTEXT_WINDOW, cache_min_tokens: int = DEFAULT_MIN_TOKENS) -> None:
        parsed = load_script(script)
        allowed = models or parsed.models or None
        self._anthropic = _AnthropicServer(port, parsed, log_path, api_key=api_key, models=allowed or ["claude-sonnet-4-5"],
                                           allowed_models=allowed, context_window=context_window,
                                           cache_min_tokens=cache_min_tokens)
        super().__init__(self._anthropic)

    @property
    def usages(self) -> list[dict[str, int]]:
        """The usage reported for each streamed answer, in order."""
        return list(self._anthropic.usages)


def main(argv: list[str] | None = None) -> int:
    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--api-key", help="the only x-api-key accepted (default: any)")
        parser.add_argument("--context-window", type=int, default=DEFAULT_CONTEXT_WINDOW)

    return serve_from_command_line(
        argv, prog="pi_tui.testing.fake_anthropic_server", description="A strict fake of Anthropic's Messages API on 127.0.0.1.",
        add_arguments=options,
        make_server=lambda args: FakeAnthropicServer(args.script, args.log, port=args.port, api_key=args.api_key,
                                                     context_window=args.context_window))


if __name__ == "__main__":
    sys.exit(main())
