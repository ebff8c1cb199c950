"""The script format shared by the scripted provider and the fake OpenAI-compatible server.

One script drives both doubles, so a test can run the same conversation in-process
(``ScriptedProvider``) and over real HTTP through litellm (``fake_server``). A script is a JSON
(or YAML) object::

    {"turns": [TURN, ...]}

Each request consumes the first unused turn whose ``when`` matches (a turn without ``when``
matches anything). A TURN may hold:

``text``                 assistant text, streamed in pieces of ``chunk_size`` characters (8)
``thinking``             reasoning text, streamed before the text (``reasoning_field`` names the
                         wire field, default ``reasoning_content``)
``tool_calls``           ``[{"id"?, "name", "arguments": {..} | "raw json", "chunks"?: 3}]``;
                         arguments are split over ``chunks`` deltas
``usage``                ``{"prompt_tokens", "completion_tokens", "cached_tokens"?,
                         "cache_write_tokens"?}``; default: estimated from the request (chars/4)
``finish_reason``        default ``tool_calls`` when there are tool calls, else ``stop``
``error``                ``{"status": 429, "message"?, "code"?, "type"?, "body"?, "retry_after"?,
                         "retry_after_ms"?}``:
                         answer with an HTTP error instead of a stream
``fault``                how the reply breaks: a cut, a stall, garbage, an HTML page, a slow
                         drip, an error echoing the credential (``script_faults.py``)
``cut_after_chunks``     short for ``fault: {kind: cut, after_frames: N, style: reset}``
``stall_after_chunks``   short for ``fault: {kind: stall, after_frames: N}`` (the client's read
                         timeout fires; the scripted provider reports the timeout at once)
``delay_ms``             wait before answering; ``chunk_delay_ms`` wait between chunks
``id`` / ``response_model``  the completion id and a model name differing from the request
``when``                 ``{"system_contains"?, "last_user_contains"?, "has_tools"?,
                         "request_contains"?}``

A script may also list ``models`` (ids the fake server reports on ``GET /v1/models``).

Only text, thinking, tool calls, usage and errors must be the same through both doubles. Default
usage is estimated from each double's own view of the request, so tests comparing the two give
``usage`` explicitly.

When no turn is left the double answers with HTTP 500 ``script exhausted`` (the scripted provider
returns the same as an error message), so a test never hangs on a missing turn.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.errors import ConfigError
from pi_tui.testing.script_faults import Frame, validate_fault

DEFAULT_CHUNK_SIZE = 8
DEFAULT_ARGUMENT_CHUNKS = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestView:
    """What a turn's ``when`` can look at, built from either kind of request."""

    system_prompt: str
    last_user_text: str
    has_tools: bool
    body_text: str
    """The whole request serialized (for ``request_contains`` and default usage)."""


@dataclass(frozen=True, slots=True)
class Piece:
    """One logical streaming step; each double renders it in its own format."""

    kind: Literal["thinking", "text", "tool_call", "finish", "usage"]
    text: str = ""
    index: int = 0
    call_id: str | None = None
    name: str | None = None
    reason: str = ""
    usage: dict[str, int] | None = None


class Script:
    """A thread-safe queue of scripted turns."""

    def __init__(self, turns: list[dict[str, Any]], *, models: list[str] | None = None) -> None:
        self.models = list(models or [])
        self._turns = [dict(t) for t in turns]
        self._used = [False] * len(self._turns)
        self._lock = threading.Lock()
        self.requests: list[RequestView] = []

    @classmethod
    def load(cls, path: Path) -> Script:
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as err:
            raise ConfigError(f"Cannot read script {path}: {err.strerror}") from err
        try:
            if path.suffix in (".yaml", ".yml"):
                import yaml

                data = yaml.safe_load(raw)
            else:
                data = json.loads(raw)
        except Exception as err:
            raise ConfigError(f"Script {path} is not valid JSON/YAML: {err}") from err
        return cls.from_data(data, source=str(path))

    @classmethod
    def from_data(cls, data: Any, *, source: str = "<script>") -> Script:
        if isinstance(data, list):
            data = {"turns": data}
        if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
            raise ConfigError(f"Script {source} must be an object with a 'turns' list")
        for i, turn in enumerate(data["turns"]):
            if not isinstance(turn, dict):
                raise ConfigError(f"Script {source}: turn {i} is not an object")
            if turn.get("fault") is not None:
                validate_fault(turn["fault"], f"Script {source}: turn {i}")
        models = data.get("models")
        if models is not None and not (isinstance(models, list) and all(isinstance(m, str) for m in models)):
            raise ConfigError(f"Script {source}: 'models' must be a list of strings")
        return cls(data["turns"], models=models)

    def next_turn(self, view: RequestView) -> dict[str, Any] | None:
        with self._lock:
            self.requests.append(view)
            for i, turn in enumerate(self._turns):
                if not self._used[i] and _matches(turn.get("when"), view):
                    self._used[i] = True
                    return turn
        return None

    @property
    def remaining(self) -> int:
        with self._lock:
            return self._used.count(False)


def _matches(when: Any, view: RequestView) -> bool:
    if not when:
        return True
    checks = {
        "system_contains": lambda v: v in view.system_prompt,
        "last_user_contains": lambda v: v in view.last_user_text,
        "request_contains": lambda v: v in view.body_text,
        "has_tools": lambda v: bool(v) == view.has_tools,
    }
    return all(checks[k](v) for k, v in when.items() if k in checks)


def estimate_usage(turn: dict[str, Any], view: RequestView) -> dict[str, int]:
    """The turn's usage, or an estimate (chars/4) when the script gives none."""
    given = turn.get("usage")
    if isinstance(given, dict):
        return {k: int(v) for k, v in given.items()}
    produced = len(turn.get("text", "")) + len(turn.get("thinking", ""))
    produced += sum(len(json.dumps(c.get("arguments", {}))) for c in turn.get("tool_calls", []))
    return {
        "prompt_tokens": math.ceil(len(view.body_text) / 4),
        "completion_tokens": math.ceil(produced / 4),
    }


def _split(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), max(1, size)):
        yield text[start : start + size]


def split_parts(text: str, parts: int) -> list[str]:
    if not text:
        return [""]
    parts = max(1, min(parts, len(text)))
    step = math.ceil(len(text) / parts)
    return [text[i : i + step] for i in range(0, len(text), step)]


def turn_pieces(turn: dict[str, Any], view: RequestView) -> Iterator[Piece]:
    """The streaming steps of a successful turn, in wire order."""
    size = int(turn.get("chunk_size", DEFAULT_CHUNK_SIZE))
    for fragment in _split(turn.get("thinking", ""), size):
        yield Piece("thinking", fragment)
    for fragment in _split(turn.get("text", ""), size):
        yield Piece("text", fragment)
    calls = turn.get("tool_calls", [])
    for index, call in enumerate(calls):
        args = call.get("arguments", {})
        raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        call_id = call.get("id") or f"call_{index}"
        for n, fragment in enumerate(split_parts(raw, int(call.get("chunks", DEFAULT_ARGUMENT_CHUNKS)))):
            first = n == 0
            yield Piece(
                "tool_call",
                fragment,
                index=index,
                call_id=call_id if first else None,
                name=call["name"] if first else None,
            )
    yield Piece("finish", reason=turn.get("finish_reason") or ("tool_calls" if calls else "stop"))
    yield Piece("usage", usage=estimate_usage(turn, view))


def error_message_for(error: dict[str, Any]) -> str:
    """pi's error text for an HTTP error (§14.2): ``<status> <message>``."""
    status = int(error.get("status", 500))
    message = error.get("message") or _default_error_text(status, error.get("code"))
    return f"{status} {message}"


def _default_error_text(status: int, code: Any) -> str:
    if code == "context_length_exceeded":
        return "This model's maximum context length is 8192 tokens. Please reduce the length of the messages."
    return {
        400: "Bad request",
        401: "Incorrect API key provided",
        403: "Forbidden",
        404: "Not found",
        413: "Request too large",
        429: "Rate limit reached, please try again later",
        500: "Internal server error",
        502: "Bad gateway",
        503: "Service unavailable",
    }.get(status, "Error")


def error_body(error: dict[str, Any]) -> Any:
    """The HTTP body the fake server sends for a scripted error."""
    if "body" in error:
        return error["body"]
    status = int(error.get("status", 500))
    message = error.get("message") or _default_error_text(status, error.get("code"))
    body: dict[str, Any] = {"message": message, "type": error.get("type", "invalid_request_error")}
    if error.get("code"):
        body["code"] = error["code"]
    return {"error": body}


def openai_error_body(status: int, message: str) -> dict[str, Any]:
    """An OpenAI error body (for faults that make up their own message)."""
    return {"error": {"message": message, "type": "invalid_request_error",
                      "code": "invalid_api_key" if status == 401 else None}}


def retry_headers(error: dict[str, Any]) -> dict[str, str]:
    """``Retry-After`` (seconds) and ``retry-after-ms`` of a scripted error."""
    headers: dict[str, str] = {}
    if error.get("retry_after") is not None:
        headers["Retry-After"] = str(error["retry_after"])
    if error.get("retry_after_ms") is not None:
        headers["retry-after-ms"] = str(error["retry_after_ms"])
    return headers


FAKE_COMPLETION_ID = "chatcmpl-fake"
"""The completion id when a turn gives none (OpenAI servers always send one)."""


def empty_chunk(model: str) -> bytes:
    """A chunk with nothing in it (an empty content delta), as some OpenAI-compatible servers send
    to keep a connection busy: a keep-alive, not a piece of the reply."""
    chunk = {"id": FAKE_COMPLETION_ID, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
             "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": None}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()

EXHAUSTED_ERROR = {"status": 500, "message": "script exhausted: no scripted turn left for this request"}


def context_length_error(window: int, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    """OpenAI's refusal of a request whose prompt plus requested output exceed the window."""
    return {"status": 400, "code": "context_length_exceeded", "message": (
        f"This model's maximum context length is {window} tokens. However, you requested "
        f"{prompt_tokens + completion_tokens} tokens ({prompt_tokens} in the messages, {completion_tokens} in the "
        "completion). Please reduce the length of the messages or completion.")}


# --------------------------------------------------------------------------- wire rendering


def _usage_json(raw: dict[str, int]) -> dict[str, Any]:
    prompt = int(raw.get("prompt_tokens", 0))
    completion = int(raw.get("completion_tokens", 0))
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    details = {k: int(raw[k]) for k in ("cached_tokens", "cache_write_tokens") if k in raw}
    if details:
        usage["prompt_tokens_details"] = details
    return usage


def _delta_of(piece: Piece, reasoning_field: str) -> dict[str, Any] | None:
    if piece.kind == "thinking":
        return {reasoning_field: piece.text}
    if piece.kind == "text":
        return {"content": piece.text}
    if piece.kind == "tool_call":
        call: dict[str, Any] = {"index": piece.index}
        function: dict[str, Any] = {}
        if piece.call_id is not None:
            call["id"] = piece.call_id
            call["type"] = "function"
        if piece.name is not None:
            function["name"] = piece.name
        function["arguments"] = piece.text
        call["function"] = function
        return {"tool_calls": [call]}
    return None


def turn_chunks(turn: dict[str, Any], view: RequestView, model: str) -> list[dict[str, Any]]:
    """A successful turn as OpenAI ``chat.completion.chunk`` objects, one per ``Piece``."""
    return [chunk for chunk, _tags in _tagged_chunks(turn, view, model)]


def turn_frames(turn: dict[str, Any], view: RequestView, model: str) -> list[Frame]:
    """A successful turn as the SSE events of the OpenAI wire, tagged for ``script_faults``.

    The fake server sends these; the scripted provider decodes the same bytes with the same
    decoder as the HTTP client, which is why the doubles cannot drift apart.
    """
    frames = [Frame(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode(), tags)
              for chunk, tags in _tagged_chunks(turn, view, model)]
    return [*frames, Frame(b"data: [DONE]\n\n", frozenset({"done"}))]


def _tagged_chunks(turn: dict[str, Any], view: RequestView, model: str) -> list[tuple[dict[str, Any], frozenset[str]]]:
    completion_id = turn.get("id") or FAKE_COMPLETION_ID
    reported_model = turn.get("response_model") or model
    created = int(turn.get("created", 1_700_000_000))
    reasoning_field = turn.get("reasoning_field", "reasoning_content")
    out: list[tuple[dict[str, Any], frozenset[str]]] = []
    first = True
    for piece in turn_pieces(turn, view):
        base = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": reported_model}
        tag = f"tool:{piece.index}" if piece.kind == "tool_call" else piece.kind
        if piece.kind == "finish":
            out.append(({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": piece.reason}]}, frozenset({tag})))
        elif piece.kind == "usage" and piece.usage is not None:
            out.append(({**base, "choices": [], "usage": _usage_json(piece.usage)}, frozenset({tag})))
        else:
            delta = _delta_of(piece, reasoning_field)
            if delta is None:
                continue
            if first:
                delta = {"role": "assistant", **delta}
                first = False
            out.append(({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}, frozenset({tag})))
    return out


def turn_completion(turn: dict[str, Any], view: RequestView, model: str) -> dict[str, Any]:
    """A successful turn as one non-streamed ``chat.completion``."""
    text = reasoning = ""
    calls: dict[int, dict[str, Any]] = {}
    finish = "stop"
    usage: dict[str, Any] | None = None
    for piece in turn_pieces(turn, view):
        if piece.kind == "thinking":
            reasoning += piece.text
        elif piece.kind == "text":
            text += piece.text
        elif piece.kind == "tool_call":
            call = calls.setdefault(
                piece.index,
                {"id": piece.call_id or "", "type": "function", "function": {"name": piece.name or "", "arguments": ""}},
            )
            call["function"]["arguments"] += piece.text
        elif piece.kind == "finish":
            finish = piece.reason
        elif piece.kind == "usage" and piece.usage is not None:
            usage = _usage_json(piece.usage)
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reasoning:
        message[turn.get("reasoning_field", "reasoning_content")] = reasoning
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    result: dict[str, Any] = {
        "id": turn.get("id") or FAKE_COMPLETION_ID,
        "object": "chat.completion",
        "created": int(turn.get("created", 1_700_000_000)),
        "model": turn.get("response_model") or model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if usage is not None:
        result["usage"] = usage
    return result
