"""A strict local fake of the OpenAI Responses API (``POST /v1/responses``, streamed) on 127.0.0.1.

It answers in the API's SSE format (``event: response.output_item.added`` … ``response.completed``,
each ``data`` a JSON event with ``type`` and ``sequence_number``) and checks every request with
``responses_fake_rules`` before a scripted turn is used. It keeps what the real server keeps
with ``store: false`` — nothing but the ability to verify its own ``encrypted_content`` and to
know which reasoning item each of its message/function-call items came with — so a client that
drops or alters reasoning items is refused, as by the API.

Script turns (``testing/script.py`` format) with the Responses meanings:

``thinking``           a ``reasoning`` item with one summary part (and ``encrypted_content`` when
                       the request ``include``s it); reasoning models only
``text`` / ``tool_calls``  a ``message`` item / ``function_call`` items (``call_<n>``, ``fc_<n>``)
``usage``              ``{"prompt_tokens", "completion_tokens", "cached_tokens"?, "reasoning_tokens"?}``
``finish_reason``      ``length`` → ``response.incomplete`` (``max_output_tokens``)
``service_tier``       the tier the response reports (default ``default``)
``failed``             ``{"code", "message"}``: end with ``response.failed``
``stream_error``       ``{"after": N, "code"?, "message"?}``: an ``error`` event after N events
``error``              an HTTP error (``{"status", "message"?, "code"?, "retry_after"?}``)
``cut_after_chunks`` / ``stall_after_chunks`` / ``garbage_after_chunks``: counted in events
``fault``              the shared fault steps (``script_faults.py``): cut/stall/garbage at a named
                       place (``thinking``, ``text``, ``tool_args``, ``between_tool_calls``,
                       ``before_usage``...), an HTML page, a drip, an error echoing the key
``tool_calls[].chunks``  split that call's arguments over this many deltas

With ``context_window`` set, a request larger than it (chars/4) gets the API's overflow error.

Command line (for pi and benchmarks): ``python -m pi_tui.testing.responses_fake --script FILE``.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import math
import re
import sys
import threading
from pathlib import Path
from typing import Any

from pi_tui.testing.fake_base import (
    FakeServerBase,
    ScriptHandler,
    ScriptServer,
    ScriptSource,
    load_script,
)
from pi_tui.testing.fake_cli import serve_from_command_line
from pi_tui.testing.responses_fake_rules import (
    IssuedState,
    Rejection,
    is_reasoning_model,
    validate,
)
from pi_tui.testing.script import DEFAULT_CHUNK_SIZE, RequestView, Script, error_body, split_parts
from pi_tui.testing.script_faults import Frame

OVERFLOW_MESSAGE = "Your input exceeds the context window of this model. Please adjust your input and try again."
EXHAUSTED = {"status": 500, "message": "script exhausted: no scripted turn left for this request"}


def view_of_responses_body(body: dict[str, Any], raw_text: str) -> RequestView:
    system = last_user = ""
    given = body.get("input")
    items: list[Any] = given if isinstance(given, list) else []
    for item in items:
        if not isinstance(item, dict):
            continue
        content = item.get("content")
        text = content if isinstance(content, str) else "".join(
            p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "input_text")
        if item.get("role") in ("system", "developer") and not system:
            system = text
        elif item.get("role") == "user":
            last_user = text
    return RequestView(system_prompt=system, last_user_text=last_user, has_tools=bool(body.get("tools")), body_text=raw_text)


_SIGNING_KEY = b"pi-tui fake responses encryption key"


def encrypted_content(n: int, reasoning_id: str) -> str:
    """The ``encrypted_content`` the fake issues for reasoning item ``reasoning_id`` of its n-th
    reply. Like OpenAI's, it is verifiable without any server memory (the API keeps nothing with
    ``store: false``): an HMAC with the fake's fixed key, so a session resumed against a fresh
    fake (another process, another test step) replays items that still verify, and a made-up or
    edited one does not."""
    mac = hmac.new(_SIGNING_KEY, f"{n}\0{reasoning_id}".encode(), hashlib.sha256).hexdigest()[:24]
    return f"gAAAAB-fake-{n}-{reasoning_id}-{mac}"


def verified_reasoning_id(content: str) -> str | None:
    """The reasoning item id an ``encrypted_content`` was issued for, if the fake issued it."""
    found = re.fullmatch(r"gAAAAB-fake-(\d+)-(rs_[A-Za-z0-9_]+)-[0-9a-f]{24}", content)
    if found is None or not hmac.compare_digest(content, encrypted_content(int(found.group(1)), found.group(2))):
        return None
    return found.group(2)


class _ResponsesServer(ScriptServer):
    def __init__(self, port: int, script: Script, log_path: Path | None, *, api_key: str | None, context_window: int | None) -> None:
        super().__init__(port, script, log_path, script.models, _ResponsesHandler)
        self.api_key = api_key
        self.context_window = context_window
        self._ids = itertools.count(1)
        self._issued_lock = threading.Lock()
        self.encrypted: dict[str, str] = {}  # encrypted_content → reasoning item id
        self.paired: dict[str, str] = {}  # message/function_call item id → reasoning item id
        self.state = IssuedState(encrypted=self._encrypted, required_reasoning=self._paired)

    def _encrypted(self, content: str) -> str | None:
        with self._issued_lock:
            return self.encrypted.get(content) or verified_reasoning_id(content)

    def _paired(self, item_id: str) -> str | None:
        with self._issued_lock:
            return self.paired.get(item_id)

    def next_id(self) -> int:
        with self._issued_lock:
            return next(self._ids)

    def remember(self, encrypted: str | None, reasoning_id: str, paired: list[str]) -> None:
        with self._issued_lock:
            if encrypted:
                self.encrypted[encrypted] = reasoning_id
            for item_id in paired:
                self.paired[item_id] = reasoning_id


class _Reply:
    """One streamed response: events with sequence numbers, and the items it produced."""

    def __init__(self, response: dict[str, Any]) -> None:
        self.response = response
        self.events: list[dict[str, Any]] = []

    def add(self, kind: str, **fields: Any) -> None:
        self.events.append({"type": kind, "sequence_number": len(self.events), **fields})


class _ResponsesHandler(ScriptHandler):
    server: _ResponsesServer

    def do_POST(self) -> None:
        raw, body, _ = self.read_request()
        if self.path.split("?")[0].rstrip("/") not in ("/v1/responses", "/responses"):
            self.send_json(404, {"error": {"message": f"Invalid URL (POST {self.path})", "type": "invalid_request_error", "param": None, "code": None}})
            return
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("Bearer ") or (self.server.api_key is not None and auth != f"Bearer {self.server.api_key}"):
            self._reject(Rejection(401, "Incorrect API key provided.", None, "invalid_api_key"))
            return
        rejection = validate(body, self.server.state)
        if rejection is None and self.server.context_window is not None and math.ceil(len(raw) / 4) > self.server.context_window:
            rejection = Rejection(400, OVERFLOW_MESSAGE, "input", "context_length_exceeded")
        if rejection is not None:
            self._reject(rejection)
            return
        view = view_of_responses_body(body, raw.decode("utf-8", errors="replace"))
        turn = self.server.script.next_turn(view) or {"error": EXHAUSTED}
        if turn.get("delay_ms"):
            self.server.wait(turn["delay_ms"] / 1000)
        if "error" in turn:
            error = dict(turn["error"])
            headers = {"retry-after": str(error["retry_after"])} if error.get("retry_after") is not None else {}
            payload = error_body(error)
            self.send_json(int(error.get("status", 500)), payload.encode() if isinstance(payload, str) else payload, headers)
            return
        self._stream(self._reply(turn, body, view).events, turn)

    def _reject(self, rejection: Rejection) -> None:
        kind = "invalid_request_error" if rejection.status < 500 else "server_error"
        self.send_json(rejection.status, {"error": {"message": rejection.message, "type": kind, "param": rejection.param,
                                                     "code": rejection.code}})

    def _reply(self, turn: dict[str, Any], body: dict[str, Any], view: RequestView) -> _Reply:
        n = self.server.next_id()
        model = str(body["model"])
        response = {"id": f"resp_fake{n}", "object": "response", "created_at": 1_700_000_000 + n, "status": "in_progress",
                    "model": model, "output": [], "usage": None, "store": bool(body.get("store", True))}
        reply = _Reply(response)
        reply.add("response.created", response=dict(response))
        reply.add("response.in_progress", response=dict(response))
        size = int(turn.get("chunk_size", DEFAULT_CHUNK_SIZE))
        output: list[dict[str, Any]] = []
        reasoning_id = None
        if turn.get("thinking") and is_reasoning_model(model):
            reasoning_id = f"rs_fake{n}"
            encrypted = None
            if "reasoning.encrypted_content" in (body.get("include") or []):
                encrypted = encrypted_content(n, reasoning_id)
            self._reasoning(reply, len(output), reasoning_id, str(turn["thinking"]), encrypted, size, output)
        paired: list[str] = []
        if turn.get("text"):
            msg_id = f"msg_fake{n}"
            paired.append(msg_id)
            self._message(reply, len(output), msg_id, str(turn["text"]), size, output)
        for k, call in enumerate(turn.get("tool_calls", [])):
            fc_id = f"fc_fake{n}_{k}"
            paired.append(fc_id)
            args = call.get("arguments", {})
            raw_args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            fragments = split_parts(raw_args, int(call["chunks"])) if call.get("chunks") else \
                [raw_args[i : i + size] for i in range(0, len(raw_args), size)]
            self._call(reply, len(output), fc_id, call.get("id") or f"call_fake{n}_{k}", call["name"], raw_args, fragments, output)
        if reasoning_id is not None:
            self.server.remember(output[0].get("encrypted_content"), reasoning_id, paired)
        final = {**response, "output": output, "usage": self._usage(turn, view), "service_tier": turn.get("service_tier", "default")}
        if turn.get("failed"):
            reply.add("response.failed", response={**final, "status": "failed", "error": dict(turn["failed"])})
        elif turn.get("finish_reason") == "length":
            reply.add("response.incomplete", response={**final, "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}})
        else:
            reply.add("response.completed", response={**final, "status": "completed"})
        return reply

    @staticmethod
    def _reasoning(reply: _Reply, index: int, item_id: str, text: str, encrypted: str | None, size: int, output: list[Any]) -> None:
        item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
        if encrypted is not None:
            item["encrypted_content"] = None
        reply.add("response.output_item.added", output_index=index, item=dict(item))
        part = {"type": "summary_text", "text": ""}
        reply.add("response.reasoning_summary_part.added", item_id=item_id, output_index=index, summary_index=0, part=part)
        for i in range(0, len(text), size):
            reply.add("response.reasoning_summary_text.delta", item_id=item_id, output_index=index, summary_index=0, delta=text[i : i + size])
        reply.add("response.reasoning_summary_text.done", item_id=item_id, output_index=index, summary_index=0, text=text)
        reply.add("response.reasoning_summary_part.done", item_id=item_id, output_index=index, summary_index=0,
                  part={"type": "summary_text", "text": text})
        done = {**item, "summary": [{"type": "summary_text", "text": text}]}
        if encrypted is not None:
            done["encrypted_content"] = encrypted
        reply.add("response.output_item.done", output_index=index, item=done)
        output.append(done)

    @staticmethod
    def _message(reply: _Reply, index: int, item_id: str, text: str, size: int, output: list[Any]) -> None:
        item = {"id": item_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
        reply.add("response.output_item.added", output_index=index, item=item)
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        reply.add("response.content_part.added", item_id=item_id, output_index=index, content_index=0, part=part)
        for i in range(0, len(text), size):
            reply.add("response.output_text.delta", item_id=item_id, output_index=index, content_index=0, delta=text[i : i + size], logprobs=[])
        reply.add("response.output_text.done", item_id=item_id, output_index=index, content_index=0, text=text, logprobs=[])
        full = {**part, "text": text}
        reply.add("response.content_part.done", item_id=item_id, output_index=index, content_index=0, part=full)
        done = {**item, "status": "completed", "content": [full]}
        reply.add("response.output_item.done", output_index=index, item=done)
        output.append(done)

    @staticmethod
    def _call(reply: _Reply, index: int, item_id: str, call_id: str, name: str, args: str, fragments: list[str],
              output: list[Any]) -> None:
        item = {"id": item_id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id, "name": name}
        reply.add("response.output_item.added", output_index=index, item=item)
        for fragment in fragments:
            reply.add("response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=fragment)
        reply.add("response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=args)
        done = {**item, "status": "completed", "arguments": args}
        reply.add("response.output_item.done", output_index=index, item=done)
        output.append(done)

    @staticmethod
    def _usage(turn: dict[str, Any], view: RequestView) -> dict[str, Any]:
        given = turn.get("usage") or {}
        prompt = int(given.get("prompt_tokens", math.ceil(len(view.body_text) / 4)))
        produced = len(turn.get("text", "")) + len(turn.get("thinking", "")) + len(json.dumps(turn.get("tool_calls", [])))
        output = int(given.get("completion_tokens", math.ceil(produced / 4)))
        return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": int(given.get("cached_tokens", 0))},
                "output_tokens": output, "output_tokens_details": {"reasoning_tokens": int(given.get("reasoning_tokens", 0))},
                "total_tokens": prompt + output}

    def _stream(self, events: list[dict[str, Any]], turn: dict[str, Any]) -> None:
        frames = tagged_frames(events)

        def stream_error(error: dict[str, Any], n: int) -> bytes:
            data = {"type": "error", "sequence_number": n, "code": error.get("code", "server_error"),
                    "message": error.get("message", "The server had an error while processing your request."), "param": None}
            return f"event: error\ndata: {json.dumps(data)}\n\n".encode()

        self.send_frames(frames, turn, error_body=lambda status, message: {"error": {"message": message, "type": "invalid_request_error"}},
                         credential=self.headers.get("Authorization", ""), garbage=b"data: <html><body>502 Bad Gateway</body></html>\n\n",
                         stream_error=stream_error, content_type="text/event-stream; charset=utf-8")


_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


def tagged_frames(events: list[dict[str, Any]]) -> list[Frame]:
    """The events as ``script_faults`` frames, tagged with what they carry, so a turn's ``fault``
    lands at the same named places as on the other wires: ``thinking`` (reasoning summary text),
    ``text``, ``tool:<i>`` (the i-th function call's argument fragments), ``tool_end:<i>`` (its
    ``output_item.done``); the final ``response.completed`` carries the finish, the usage and the
    end of the stream at once (``finish``, ``usage``, ``done``)."""
    frames = []
    calls = -1
    for event in events:
        kind = event["type"]
        tags: set[str] = set()
        item: dict[str, Any] = event["item"] if isinstance(event.get("item"), dict) else {}
        if kind == "response.output_item.added" and item.get("type") == "function_call":
            calls += 1
        elif kind == "response.reasoning_summary_text.delta":
            tags.add("thinking")
        elif kind == "response.output_text.delta":
            tags.add("text")
        elif kind == "response.function_call_arguments.delta":
            tags.add(f"tool:{calls}")
        elif kind == "response.output_item.done" and item.get("type") == "function_call":
            tags.add(f"tool_end:{calls}")
        elif kind in _FINAL_EVENTS:
            tags |= {"finish", "usage", "done"}
        frames.append(Frame(f"event: {kind}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode(), frozenset(tags)))
    return frames


class ResponsesFakeServer(FakeServerBase):
    """``with ResponsesFakeServer(turns) as server``: ``server.base_url`` ends in ``/v1``."""

    thread_name = "fake-responses-server"
    url_path = "/v1"

    def __init__(self, script: ScriptSource, log_path: Path | None = None, *,
                 port: int = 0, api_key: str | None = None, context_window: int | None = None) -> None:
        super().__init__(_ResponsesServer(port, load_script(script), log_path, api_key=api_key, context_window=context_window))


def main(argv: list[str] | None = None) -> int:
    return serve_from_command_line(argv, prog="pi_tui.testing.responses_fake", description=__doc__.split("\n\n")[0],
                                   make_server=lambda args: ResponsesFakeServer(args.script, args.log, port=args.port))


if __name__ == "__main__":
    sys.exit(main())
