"""A strict local fake of the Gemini API (``streamGenerateContent?alt=sse``) on 127.0.0.1.

It speaks Gemini's own format, not OpenAI's: ``POST /v1beta/models/<model>:streamGenerateContent
?alt=sse`` with ``x-goog-api-key`` (or ``?key=``), a ``contents``/``systemInstruction``/``tools``/
``generationConfig`` body, and an SSE stream of ``GenerateContentResponse`` objects
(``data: {...}\\r\\n\\r\\n``, no ``[DONE]``). Requests are checked by ``gemini_fake_rules`` before a
scripted turn is used, so a rejected request (a function call replayed without its thought
signature on Gemini 3, a broken function-call/response pairing...) costs no turn, as with the API.

The script is the shared format of ``testing/script.py`` (``turns``, ``when``, ``text``,
``thinking``, ``tool_calls``, ``error``, ``delay_ms``, ``chunk_delay_ms``, ``cut_after_chunks``,
``stall_after_chunks``), with Gemini's own meanings:

``usage``              ``{"prompt_tokens", "completion_tokens", "cached_tokens"?, "thoughts_tokens"?}``
                       → ``promptTokenCount``, ``candidatesTokenCount``, ``cachedContentTokenCount``,
                       ``thoughtsTokenCount`` (default: estimated, chars/4)
``finish_reason``      ``STOP`` (default, also after function calls), ``MAX_TOKENS``, ``SAFETY``...
``signatures``         false: the reply carries no ``thoughtSignature`` (default true: the first
                       function call is signed, else the last text part)
``thought_signature``  true: the last thought part is signed too
``raw_chunks``         ``GenerateContentResponse`` objects to stream verbatim instead (shapes the
                       other keys cannot express: duplicate call ids, several usage reports...)
``garbage_after_chunks``  send a non-JSON ``data:`` line after N chunks, then end the stream
``stream_error``       ``{"after": N, "status"?, "message"?}``: an ``error`` object in the stream after
                       N chunks (default 503 "The model is overloaded...")
``fault``              the shared fault steps (``script_faults.py``) at the named places: each chunk
                       is tagged with its part (``thinking``, ``text``, ``tool:<i>``; the first
                       function call's chunk goes out in two writes split inside its ``args``, so a
                       cut can land in the middle of them), the last one with ``finish``/``usage``
``error``              ``{"status", "message"?, "retry_after"? (seconds, as RetryInfo)}``

Every signature the fake mints is remembered; ``issued_signatures`` lists them. With
``context_window`` set, a request whose size (chars/4) exceeds it gets Gemini's overflow error.
``placeholders_ok=False`` refuses Google's "skip validation" placeholder signature as if missing
(stricter than the API; see ``gemini_fake_rules.validate``).

Command line (for pi and benchmarks)::

    python -m pi_tui.testing.gemini_fake --script FILE [--port 0]
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pi_tui.testing.fake_base import (
    FakeServerBase,
    ScriptHandler,
    ScriptServer,
    ScriptSource,
    load_script,
)
from pi_tui.testing.fake_cli import serve_from_command_line
from pi_tui.testing.gemini_fake_rules import Rejection, normalized, validate
from pi_tui.testing.script import DEFAULT_CHUNK_SIZE, RequestView, Script
from pi_tui.testing.script_faults import Frame

API_PREFIX = "/v1beta/models/"
EXHAUSTED = {"status": 500, "message": "script exhausted: no scripted turn left for this request"}
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}
_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS"}
NO_KEY_MESSAGE = (
    "Method doesn't allow unregistered callers (callers without established identity). "
    "Please use API Key or other form of API consumer identity to call this API."
)


def google_error(status: int, message: str, *, retry_after: float | None = None) -> dict[str, Any]:
    """The API's error object (``google.rpc.Status`` as JSON)."""
    error: dict[str, Any] = {"code": status, "message": message, "status": _STATUS_NAMES.get(status, "UNKNOWN")}
    if retry_after is not None:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after:g}s"}]
    return {"error": error}


def view_of_gemini_body(body: dict[str, Any], raw_text: str) -> RequestView:
    """What a script's ``when`` sees of a Gemini request."""
    body = normalized(body)
    system = "".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))
    last_user = ""
    for content in body.get("contents") or []:
        if content.get("role") == "user":
            last_user = "".join(p.get("text", "") for p in content.get("parts", []) if "text" in p)
    return RequestView(system_prompt=system, last_user_text=last_user, has_tools=bool(body.get("tools")), body_text=raw_text)


def _usage_metadata(turn: dict[str, Any], view: RequestView) -> dict[str, Any]:
    given = turn.get("usage") or {}
    prompt = int(given.get("prompt_tokens", math.ceil(len(view.body_text) / 4)))
    produced = len(turn.get("text", "")) + sum(len(json.dumps(c.get("arguments", {}))) for c in turn.get("tool_calls", []))
    candidates = int(given.get("completion_tokens", math.ceil(produced / 4)))
    thoughts = int(given.get("thoughts_tokens", math.ceil(len(turn.get("thinking", "")) / 4)))
    usage: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": candidates}
    if given.get("cached_tokens"):
        usage["cachedContentTokenCount"] = int(given["cached_tokens"])
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    usage["totalTokenCount"] = prompt + candidates + thoughts
    usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
    return usage


def _fragments(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


class _GeminiServer(ScriptServer):
    """The shared fake server with Gemini's handler, signatures and limits."""

    def __init__(self, port: int, script: Script, log_path: Path | None, *, api_key: str | None, context_window: int | None,
                 placeholders_ok: bool) -> None:
        super().__init__(port, script, log_path, script.models, _GeminiHandler)
        self.api_key = api_key
        self.placeholders_ok = placeholders_ok
        self.context_window = context_window
        self.issued: list[str] = []
        self._counter = itertools.count(1)
        self._issue_lock = threading.Lock()

    def mint_signature(self, model: str) -> str:
        with self._issue_lock:
            raw = f"fake-gemini-signature:{model}:{next(self._counter)}".encode()
            signature = base64.b64encode(raw).decode("ascii")
            self.issued.append(signature)
            return signature

    def is_issued(self, signature: str) -> bool:
        with self._issue_lock:
            return signature in self.issued


class _GeminiHandler(ScriptHandler):
    server: _GeminiServer

    def do_GET(self) -> None:
        self.send_json(404, google_error(404, f"Method not found: {self.path}"))

    def do_POST(self) -> None:
        raw, body, headers = self.read_request(empty={})
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        model, _, method = url.path.removeprefix(API_PREFIX).partition(":")
        if not url.path.startswith(API_PREFIX) or method != "streamGenerateContent":
            self.send_json(404, google_error(404, f"Method not found: {url.path}"))
            return
        if query.get("alt") != ["sse"]:
            self.send_json(400, google_error(400, "fake: only ?alt=sse streaming is implemented"))
            return
        key = headers.get("x-goog-api-key") or next(iter(query.get("key", [])), "")
        if not key:
            self.send_json(403, google_error(403, NO_KEY_MESSAGE))
            return
        if self.server.api_key is not None and key != self.server.api_key:
            self.send_json(400, google_error(400, "API key not valid. Please pass a valid API key."))
            return
        if body is None:
            self.send_json(400, google_error(400, "Invalid JSON payload received. Unexpected token."))
            return
        rejection = validate(body, model, is_issued=self.server.is_issued, placeholders_ok=self.server.placeholders_ok)
        if rejection is None:
            rejection = self._overflow(raw)
        if rejection is not None:
            self.send_json(rejection.status, google_error(rejection.status, rejection.message))
            return
        view = view_of_gemini_body(body, raw.decode("utf-8", errors="replace"))
        turn = self.server.script.next_turn(view) or {"error": EXHAUSTED}
        if turn.get("delay_ms"):
            self.server.wait(turn["delay_ms"] / 1000)
        if "error" in turn:
            error = turn["error"]
            status = int(error.get("status", 500))
            retry_after = error.get("retry_after")
            payload = google_error(status, str(error.get("message") or _STATUS_NAMES.get(status, "Error")),
                                   retry_after=float(retry_after) if retry_after is not None else None)
            self.send_json(status, error.get("body", payload))
            return
        self._stream(self._chunks(turn, view, model), turn, key)

    def _overflow(self, raw: bytes) -> Rejection | None:
        window = self.server.context_window
        tokens = math.ceil(len(raw) / 4)
        if window is not None and tokens > window:
            return Rejection(400, f"The input token count ({tokens}) exceeds the maximum number of tokens allowed ({window}).")
        return None

    def _chunks(self, turn: dict[str, Any], view: RequestView, model: str) -> list[dict[str, Any]]:
        """The reply as ``GenerateContentResponse`` chunks, one part each."""
        if turn.get("raw_chunks") is not None:
            return [dict(chunk) for chunk in turn["raw_chunks"]]
        size = int(turn.get("chunk_size", DEFAULT_CHUNK_SIZE))
        parts: list[dict[str, Any]] = [{"text": t, "thought": True} for t in _fragments(turn.get("thinking", ""), size)]
        if parts and turn.get("thought_signature"):
            parts[-1]["thoughtSignature"] = self.server.mint_signature(model)
        texts = [{"text": t} for t in _fragments(turn.get("text", ""), size)]
        calls: list[dict[str, Any]] = []
        for call in turn.get("tool_calls", []):
            function: dict[str, Any] = {"name": call["name"], "args": call.get("arguments", {})}
            if call.get("id"):
                function["id"] = call["id"]
            calls.append({"functionCall": function})
        signed = turn.get("signatures", True)
        if signed and calls:
            calls[0]["thoughtSignature"] = self.server.mint_signature(model)
        elif signed and texts:
            texts[-1]["thoughtSignature"] = self.server.mint_signature(model)
        parts += texts + calls
        if not parts:
            parts = [{"text": ""}]
        usage = _usage_metadata(turn, view)
        response_id = str(turn.get("id") or f"fake-gemini-{len(self.server.requests)}")
        finish = str(turn.get("finish_reason") or "STOP")
        chunks = []
        for n, part in enumerate(parts):
            candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
            last = n == len(parts) - 1
            if last:
                candidate["finishReason"] = _FINISH.get(finish, finish)
            metadata = usage if last else {"promptTokenCount": usage["promptTokenCount"], "totalTokenCount": usage["promptTokenCount"]}
            chunks.append({"candidates": [candidate], "usageMetadata": metadata, "modelVersion": turn.get("response_model") or model,
                           "responseId": response_id})
        return chunks

    def _stream(self, chunks: list[dict[str, Any]], turn: dict[str, Any], key: str) -> None:
        def stream_error(error: dict[str, Any], after: int) -> bytes:
            status = int(error.get("status", 503))
            payload = google_error(status, str(error.get("message") or "The model is overloaded. Please try again later."))
            return f"data: {json.dumps(payload)}\r\n\r\n".encode()

        self.send_frames(tagged_frames(chunks), turn, error_body=google_error, credential=key, stream_error=stream_error,
                         garbage=b"data: <html><body>502 Bad Gateway</body></html>\r\n\r\n", keepalive=b": keep-alive\r\n\r\n")


def tagged_frames(chunks: list[dict[str, Any]]) -> list[Frame]:
    """The chunks as ``script_faults`` frames tagged with the part each carries; the first
    function call's chunk is split in two inside its ``args`` (a cut there leaves the call's JSON
    unfinished, the way a cut mid-arguments looks on this wire)."""
    frames: list[Frame] = []
    calls = 0
    for chunk in chunks:
        candidate = (chunk.get("candidates") or [{}])[0]
        part = ((candidate.get("content") or {}).get("parts") or [{}])[0]
        tags: set[str] = set()
        if "functionCall" in part:
            tags.add(f"tool:{calls}")
            calls += 1
        elif part.get("text"):
            tags.add("thinking" if part.get("thought") else "text")
        if "finishReason" in candidate:
            tags |= {"finish", "usage"}
        data = f"data: {json.dumps(chunk, ensure_ascii=False)}\r\n\r\n".encode()
        args_at = data.find(b'"args": ')
        if "tool:0" in tags and args_at >= 0:
            middle = args_at + len(b'"args": ') + len(json.dumps(part["functionCall"]["args"], ensure_ascii=False).encode()) // 2
            frames += [Frame(data[:middle], frozenset({"tool:0"})), Frame(data[middle:], frozenset(tags))]
        else:
            frames.append(Frame(data, frozenset(tags)))
    return frames


class GeminiFakeServer(FakeServerBase):
    """``with GeminiFakeServer(turns) as server``: ``server.base_url`` ends in ``/v1beta`` (pi's
    baseUrl and litellm's ``api_base`` for Gemini)."""

    thread_name = "fake-gemini-server"
    url_path = "/v1beta"

    def __init__(self, script: ScriptSource, log_path: Path | None = None, *,
                 port: int = 0, api_key: str | None = None, context_window: int | None = None, placeholders_ok: bool = True) -> None:
        self._gemini = _GeminiServer(port, load_script(script), log_path, api_key=api_key, context_window=context_window,
                                     placeholders_ok=placeholders_ok)
        super().__init__(self._gemini)

    def mint_signature(self, model: str) -> str:
        """A signature as the API would issue it (accepted in later requests), for tests that
        build a history by hand."""
        return self._gemini.mint_signature(model)

    @property
    def issued_signatures(self) -> list[str]:
        with self._gemini._issue_lock:
            return list(self._gemini.issued)


def main(argv: list[str] | None = None) -> int:
    return serve_from_command_line(argv, prog="pi_tui.testing.gemini_fake", description=__doc__.split("\n\n")[0],
                                   make_server=lambda args: GeminiFakeServer(args.script, args.log, port=args.port))


if __name__ == "__main__":
    sys.exit(main())
