"""JSON-RPC 2.0 over newline-delimited JSON, both directions (ACP's transport).

Our own framing rather than the SDK's: ``import acp`` costs ~1.7 s (its pydantic schema), which
every editor would pay at each agent start (docs/acp.md). Records are split with the RPC mode's
``LineSplitter`` (LF only; a ``\\r`` before it dropped; U+2028 inside a string is payload) and
written with ``encode_frame`` (compact JSON, control characters escaped: lossless, and a frame
never drives a terminal).

* Requests from the client run each in their own task (``session/cancel`` arrives while a
  ``session/prompt`` is running); a handler's return value is the ``result``, ``RpcError`` the
  ``error``, any other exception an internal error (-32603) whose trace goes to stderr.
* Bad input never ends the connection: a record that is not JSON gets -32700 (``id: null``); JSON
  that is not a request, notification or response gets -32600; an unknown method -32601; bad
  parameters -32602 (the handlers raise ``invalid_params``). Unknown notifications are ignored
  (the spec's rule for notifications), noted on stderr.
* ``request()`` sends to the client and waits for its answer; a client error answer raises
  ``RpcError``; the end of input fails every pending request with ``ConnectionClosed``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from pi_tui.modes.rpc.framing import LineSplitter

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002

Handler = Callable[[dict[str, Any]], Awaitable[Any]]
NotificationHandler = Callable[[dict[str, Any]], Awaitable[None]]


class RpcError(Exception):
    """An error answer: ``{code, message, data?}``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ConnectionClosed(Exception):
    """The client went away (end of input) before answering."""


def invalid_params(message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, "Invalid params", {"details": message})


class Peer:
    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self._write = write
        self.requests: dict[str, Handler] = {}
        self.notifications: dict[str, NotificationHandler] = {}
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._splitter = LineSplitter()
        self.closed = False

    # ------------------------------------------------------------------ outgoing

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        if self.closed:
            raise ConnectionClosed(f"{method}: the client has closed the connection")
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)

    # ------------------------------------------------------------------ incoming

    def feed(self, chunk: bytes) -> None:
        for record in self._splitter.feed(chunk):
            self.handle_record(record)

    def finish_input(self) -> None:
        """End of input: the last unterminated record, then fail what waits for the client."""
        tail = self._splitter.finish()
        if tail is not None:
            self.handle_record(tail)
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed("the client closed the connection"))

    def handle_record(self, record: str) -> None:
        if not record.strip():
            return
        try:
            message = json.loads(record)
        except (ValueError, RecursionError) as err:
            details = "nested too deeply" if isinstance(err, RecursionError) else str(err)
            self._error(None, RpcError(PARSE_ERROR, "Parse error", {"details": details}))
            return
        if not isinstance(message, dict):
            self._error(None, RpcError(INVALID_REQUEST, "Invalid request", {"details": "expected a JSON object"}))
            return
        method = message.get("method")
        if method is None and "id" in message and ("result" in message or "error" in message):
            self._answer(message)
            return
        problem = _request_problem(message)
        if problem is not None:
            request_id = message.get("id") if _valid_id(message.get("id")) else None
            self._error(request_id, RpcError(INVALID_REQUEST, "Invalid request", {"details": problem}))
            return
        params = message.get("params")
        params = {} if params is None else params
        if "id" in message:
            self._spawn(self._run_request(message["id"], str(method), params))
        else:
            self._spawn(self._run_notification(str(method), params))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_request(self, request_id: Any, method: str, params: Any) -> None:
        handler = self.requests.get(method)
        try:
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, "Method not found", {"method": method})
            if not isinstance(params, dict):
                raise invalid_params(f"{method}: params must be an object")
            result = await handler(params)
        except RpcError as err:
            self._error(request_id, err)
            return
        except ConnectionClosed:
            return  # nobody to answer
        except Exception as err:  # a bug: answer, keep the trace for the log
            traceback.print_exc(file=sys.stderr)
            self._error(request_id, RpcError(INTERNAL_ERROR, "Internal error", {"details": f"{type(err).__name__}: {err}"}))
            return
        self._write({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def _run_notification(self, method: str, params: Any) -> None:
        handler = self.notifications.get(method)
        if handler is None:
            print(f"pi-tui: ACP notification {method!r} ignored (not supported)", file=sys.stderr)
            return
        if not isinstance(params, dict):
            print(f"pi-tui: ACP notification {method!r} ignored: params must be an object", file=sys.stderr)
            return
        try:
            await handler(params)
        except RpcError as err:
            print(f"pi-tui: ACP notification {method!r}: {err.message} {err.data or ''}", file=sys.stderr)
        except Exception:
            traceback.print_exc(file=sys.stderr)

    def _answer(self, message: dict[str, Any]) -> None:
        future = self._pending.get(message["id"]) if isinstance(message["id"], int) else None
        if future is None or future.done():
            print(f"pi-tui: ACP answer to no pending request ignored (id {message['id']!r})", file=sys.stderr)
            return
        error = message.get("error")
        if error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            text = error.get("message") if isinstance(error, dict) else None
            future.set_exception(RpcError(code if isinstance(code, int) else INTERNAL_ERROR,
                                          str(text or "error"), error.get("data") if isinstance(error, dict) else None))
        else:
            future.set_result(message.get("result"))

    def _error(self, request_id: Any, err: RpcError) -> None:
        self._write({"jsonrpc": "2.0", "id": request_id, "error": err.to_json()})

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, (str, int)) and not isinstance(value, bool))


def _request_problem(message: dict[str, Any]) -> str | None:
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if not isinstance(message.get("method"), str):
        return "method must be a string"
    if "id" in message and not _valid_id(message["id"]):
        return "id must be a string, a number or null"
    params = message.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        return "params must be an object or an array"
    return None
