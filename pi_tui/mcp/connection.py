"""One MCP server: connect (in the background, within its start-up timeout), list its tools and
prompts, call them with a timeout and cancellation, restart it once if it dies.

The SDK's ``Client`` is entered and left by one long-lived task (``_serve``), as its anyio task
groups require; calls come from the tool tasks and only await replies. Cancelling a call (Esc,
abort, the tool timeout) cancels the awaiting task, which the SDK answers by sending
``notifications/cancelled`` to the server. The server's stderr and log messages go to a log file
(``log_path``), never to the terminal; the last lines are kept for ``/mcp``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.deadline import cancel_and_wait, within
from pi_tui.core.terminal_text import printable
from pi_tui.mcp.config import ServerConfig
from pi_tui.mcp.server_log import ServerLog

Status = Literal["starting", "connected", "failed", "disabled", "untrusted", "stopped"]
Elicit = Callable[[str, str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""``(server, message, requested JSON schema)`` → the user's answers, or None to decline."""
Progress = Callable[[float, float | None, str | None], None]
Events = Callable[[dict[str, Any]], None]
RESTART_BACKOFF_S = 1.0
_WATCH_INTERVAL_S = 0.5
_SDK_MODULES = ("mcp.client.client", "mcp.client.stdio", "mcp.client.streamable_http", "mcp.client.sse")


def import_sdk() -> None:
    """Import the SDK (~1 s cold): called in a thread so the event loop keeps drawing."""
    for name in _SDK_MODULES:
        importlib.import_module(name)


@dataclass(slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class PromptSpec:
    name: str
    description: str
    arguments: list[dict[str, Any]] = field(default_factory=list)


class McpCallError(Exception):
    """A call that failed as a whole (timeout, server gone, protocol error): the message says
    which server and why."""


class Connection:
    def __init__(self, config: ServerConfig, *, cwd: Path, log_dir: Path, events: Events,
                 elicit: Elicit | None = None) -> None:
        self.config = config
        self.name = config.name
        self._cwd = cwd
        self._events = events
        self._elicit = elicit
        self.status: Status = "disabled" if config.disabled else "stopped"
        self.error: str | None = None
        self.tools: list[ToolSpec] = []
        self.prompts: list[PromptSpec] = []
        self.instructions = ""
        self.protocol_version = ""
        self.server_info = ""
        self.restarts = 0
        self.http_refusal = 0
        self._asking_since: float | None = None
        self._asked_total_s = 0.0
        """Time spent in elicitation dialogs: a call's timeout does not count it (``_within``)."""
        """An HTTP server's 401/403 while connecting (the SDK reports only "an error response")."""
        self.log = ServerLog(log_dir / f"{_file_safe(config.name)}.log")
        self.started_at: float | None = None
        self.connected_at: float | None = None
        self._client: Any = None
        self.pid: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        """Set once the first attempt connected or failed (``wait_started``)."""
        self._tools_changed: Callable[[Connection], None] | None = None
        self._relist_wanted = False
        """A ``list_changed`` came while connecting (before ``_client`` is set): list again."""
        self._relists: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ lifecycle

    def start(self, on_tools_changed: Callable[[Connection], None] | None = None) -> None:
        if self._task is not None or self.config.disabled:
            self._settled.set()
            return
        self._tools_changed = on_tools_changed
        self._stop.clear()
        self._task = asyncio.get_running_loop().create_task(self._serve(), name=f"mcp:{self.name}")

    @property
    def settled(self) -> bool:
        """The first attempt connected or failed (or the server is disabled)."""
        return self._settled.is_set()

    async def wait_started(self, limit_s: float | None = None) -> bool:
        """True once connected; False when it failed or is still starting after ``limit_s``."""
        with contextlib.suppress(TimeoutError):
            await within(self._settled.wait(), limit_s)
        return self.status == "connected"

    async def stop(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None and not task.done():
            await cancel_and_wait(task, seconds=8)
        if self.status != "disabled":
            self._set_status("stopped")
        self.log.close()

    async def reconnect(self) -> None:
        """``/mcp`` reconnect: stop and start again (the restart budget is reset)."""
        task, self._task = self._task, None
        self._stop.set()
        if task is not None and not task.done():
            await cancel_and_wait(task, seconds=8)
        self.restarts = 0
        self.log.reopen()
        self._settled.clear()
        self._stop.clear()
        self._task = asyncio.get_running_loop().create_task(self._serve(), name=f"mcp:{self.name}")

    async def set_enabled(self, enabled: bool) -> None:
        """``/mcp`` enable/disable, for this session only (the config file is not changed)."""
        if enabled:
            await self.reconnect()
            return
        await self.stop()
        self.error = None
        self._set_status("disabled")

    async def _serve(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            self._set_status("starting")
            self.started_at = time.monotonic()
            try:
                await asyncio.to_thread(import_sdk)
                await self._connect_and_wait()
            except asyncio.CancelledError:
                raise
            except BaseException as error:  # the SDK raises groups, OSError, MCPError …
                if not (self.status == "connected" and self.error):  # keep "closed the connection":
                    self.error = _describe(error, self.config)  # what the SDK raises on the way out is noise
                    if self.http_refusal:
                        self.error = (f"the server answered HTTP {self.http_refusal}: it wants a sign-in, and OAuth is "
                                      "not supported yet (give a token in \"headers\", docs/mcp.md)")
            self._client = None
            self._ready.clear()
            if self._stop.is_set():
                return
            was_connected = self.status == "connected"
            self._set_status("failed")
            self._settled.set()
            if not was_connected or attempt >= 1:
                return  # a server that never came up is not retried; a dead one once
            attempt += 1
            self.restarts += 1
            self._events({"type": "mcp_server", "server": self.name, "status": "restarting", "error": self.error})
            await asyncio.sleep(RESTART_BACKOFF_S * attempt)

    async def _connect_and_wait(self) -> None:
        from mcp.client.client import Client

        async with contextlib.AsyncExitStack() as stack:
            target = await self._transport(stack)
            elicit: Any = self._on_elicit if self._elicit else None
            client = Client(target, elicitation_callback=elicit,
                            logging_callback=self._on_log, message_handler=self._on_message,
                            client_info=_client_info())
            started = self.started_at if self.started_at is not None else time.monotonic()
            left = max(0.1, self.config.startup_timeout_s - (time.monotonic() - started))  # the SDK import counts
            try:
                entered = await within(stack.enter_async_context(client), left)
            except TimeoutError:
                self.error = f"no answer to initialize within {self.config.startup_timeout_s:g} s"
                self._set_status("failed")  # now, not after the transport has wound down
                self._settled.set()
                raise TimeoutError(self.error) from None
            self._track(target, stack)
            self.protocol_version = str(entered.protocol_version or "")
            info = entered.server_info
            self.server_info = f"{info.name} {info.version}" if info is not None else ""
            self.instructions = printable(entered.instructions or "")
            await within(self._list_settled(entered), self.config.startup_timeout_s)
            self._client = entered
            self.error = None
            self.connected_at = time.monotonic()
            self._set_status("connected")
            self._settled.set()
            self._ready.set()
            while not self._stop.is_set() and not _closed(entered):
                with contextlib.suppress(TimeoutError):
                    await within(self._stop.wait(), _WATCH_INTERVAL_S)
            if not self._stop.is_set():
                self.error = "the server closed the connection (it exited?)"

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        config = self.config
        if config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            cwd = self._server_cwd()
            params = StdioServerParameters(command=config.command, args=list(config.args), env=dict(config.env),
                                           cwd=cwd, encoding_error_handler="replace")
            # The SDK gives the child only its allow-list (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus
            # the server's own env: provider keys never reach a server.
            errlog = stack.enter_context(self.log.open_pipe())
            return stdio_client(params, errlog=errlog)
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(config.url, headers=dict(config.headers), timeout=config.startup_timeout_s)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async def status(response: Any) -> None:  # the SDK's error does not say which status came back
            if response.status_code in (401, 403) and self.status == "starting":
                self.http_refusal = response.status_code

        http = await stack.enter_async_context(httpx2.AsyncClient(
            headers=dict(config.headers), timeout=httpx2.Timeout(config.startup_timeout_s, read=300),
            event_hooks={"response": [status]}))
        return streamable_http_client(config.url, http_client=http)

    def _track(self, target: Any, stack: contextlib.AsyncExitStack) -> None:
        """A stdio server's process group dies with pi-tui however pi-tui ends (the shell tools'
        registry and reaper). The SDK keeps the process inside its transport generator."""
        frame = getattr(getattr(target, "gen", None), "ag_frame", None)
        process = frame.f_locals.get("process") if frame is not None else None
        pid = getattr(process, "pid", None)
        if isinstance(pid, int):
            from pi_tui.tools.shell import track_process_group, untrack_process_group

            track_process_group(pid)  # the SDK starts it in a session of its own: pgid == pid
            stack.callback(untrack_process_group, pid)
            self.pid = pid

    def _server_cwd(self) -> str:
        """The configured cwd, relative ones from the session's cwd; else the session's cwd."""
        configured = self.config.cwd
        return os.path.join(self._cwd, os.path.expanduser(configured)) if configured else str(self._cwd)

    @property
    def allowed_tools(self) -> list[ToolSpec]:
        """The server's tools the config keeps (``includeTools`` / ``excludeTools``)."""
        return [t for t in self.tools if self.config.allows_tool(t.name)]

    async def _list_settled(self, client: Any) -> None:
        """List while connecting; a ``list_changed`` that arrives meanwhile (the server registers
        tools as the session starts) lists again, a few times at most, so the connected server's
        list is its current one."""
        for _round in range(4):
            self._relist_wanted = False
            await self._list(client)
            if not self._relist_wanted:
                return

    async def _list(self, client: Any) -> None:
        tools: list[ToolSpec] = []
        cursor = None
        for _page in range(100):  # a server that pages forever cannot hang the start
            result = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
            for tool in result.tools:
                annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
                tools.append(ToolSpec(tool.name, tool.description or "", dict(tool.input_schema or {}), annotations))
            cursor = result.next_cursor
            if not cursor:
                break
        self.tools = tools
        capabilities = client.server_capabilities
        if getattr(capabilities, "prompts", None) is not None:
            with contextlib.suppress(Exception):
                listed = await client.list_prompts()
                self.prompts = [PromptSpec(p.name, p.description or "",
                                           [a.model_dump(by_alias=True, exclude_none=True) for a in p.arguments or []])
                                for p in listed.prompts]

    # ------------------------------------------------------------------ calls

    async def _connected_client(self) -> Any:
        dead = self._client
        if dead is not None and _closed(dead):  # it died: wait for the one restart (backoff + start)
            deadline = time.monotonic() + RESTART_BACKOFF_S * 2 + self.config.startup_timeout_s
            while time.monotonic() < deadline and (self._client is dead or self._client is None):
                if self._task is None or self._task.done():
                    break
                await asyncio.sleep(0.05)
        if self.status == "starting":
            await self.wait_started(self.config.startup_timeout_s)
            with contextlib.suppress(TimeoutError):
                await within(self._ready.wait(), self.config.startup_timeout_s)
        if self._client is None:
            why = f": {self.error}" if self.error else ""
            raise McpCallError(f"MCP server '{self.name}' is not connected ({self.status}{why})")
        return self._client

    async def call_tool(self, tool: str, arguments: dict[str, Any], *, progress: Progress | None = None,
                        limit_s: float | None = None) -> Any:
        """The raw ``CallToolResult``; ``McpCallError`` when the call fails as a whole. Cancelling
        the caller sends ``notifications/cancelled``."""
        client = await self._connected_client()
        limit = limit_s if limit_s is not None else self.config.tool_timeout_s

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            if progress is not None:
                with contextlib.suppress(Exception):
                    progress(done, total, message)

        try:
            return await self._within(client.call_tool(tool, arguments, progress_callback=on_progress), limit)
        except TimeoutError:
            raise McpCallError(f"MCP tool '{tool}' on server '{self.name}' timed out after {limit:g} s "
                               "(toolTimeoutMs); the call was cancelled") from None
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if _closed(client):
                raise McpCallError(f"MCP server '{self.name}' exited during the call to '{tool}'"
                                   + (" (it is restarted once)" if self.restarts == 0 else "")) from None
            raise McpCallError(f"MCP tool '{tool}' on server '{self.name}' failed: {_error_text(error)}") from None

    async def _within(self, call: Awaitable[Any], limit: float) -> Any:
        """``call`` within ``limit`` seconds, not counting the time the person spends answering
        this server's questions meanwhile (elicitation): TimeoutError, the call cancelled, after."""
        task = asyncio.ensure_future(call)
        loop = asyncio.get_running_loop()
        asked_before, granted = self._asked_s(), 0.0
        deadline = loop.time() + limit
        try:
            while True:
                done, _pending = await asyncio.wait({task}, timeout=max(0.0, deadline - loop.time()))
                if done:
                    return task.result()
                asked = self._asked_s() - asked_before
                if asked <= granted and self._asking_since is None:
                    raise TimeoutError
                deadline += max(asked - granted, 0.5)  # still answering: look again shortly
                granted = max(asked, granted + 0.5)
        finally:
            if not task.done():
                task.cancel()  # the SDK sends notifications/cancelled
                with contextlib.suppress(BaseException):
                    await task

    def _asked_s(self) -> float:
        ongoing = time.monotonic() - self._asking_since if self._asking_since is not None else 0.0
        return self._asked_total_s + ongoing

    async def get_prompt(self, prompt: str, arguments: dict[str, str]) -> Any:
        client = await self._connected_client()
        try:
            return await within(client.get_prompt(prompt, arguments), self.config.tool_timeout_s)
        except TimeoutError:
            raise McpCallError(f"MCP prompt '{prompt}' on server '{self.name}' timed out") from None
        except Exception as error:
            raise McpCallError(f"MCP prompt '{prompt}' on server '{self.name}' failed: {_error_text(error)}") from None

    # ------------------------------------------------------------------ server → client

    async def _on_log(self, params: Any) -> None:
        data = params.data if isinstance(params.data, str) else repr(params.data)
        self.log.write(f"[{params.level}] {data}\n")

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", "")
        if method == "notifications/tools/list_changed":
            if self._client is None:  # still connecting: _list_settled lists again
                self._relist_wanted = True
                return
            task = asyncio.get_running_loop().create_task(self._relist())
            self._relists.add(task)
            task.add_done_callback(self._relists.discard)
        elif isinstance(message, Exception):
            self.log.write(f"[transport] {message}\n")

    async def _relist(self) -> None:
        client = self._client
        if client is None:
            return
        before = [(t.name, t.description, t.input_schema) for t in self.tools]
        with contextlib.suppress(Exception):
            await within(self._list(client), self.config.startup_timeout_s)
            changed = [(t.name, t.description, t.input_schema) for t in self.tools] != before
            if changed and self._tools_changed is not None:
                self._tools_changed(self)

    async def _on_elicit(self, _context: Any, params: Any) -> Any:
        import mcp_types

        assert self._elicit is not None
        url = getattr(params, "url", None)  # URL mode: the person opens a link (a sign-in, a payment)
        schema = getattr(params, "requested_schema", None)
        dump = getattr(schema, "model_dump", None)
        schema_dict = dump(by_alias=True, exclude_none=True) if callable(dump) else dict(schema or {})
        try:
            message = printable(params.message) + (f"\n\nOpen: {printable(str(url))}" if url else "")
            self._asking_since = time.monotonic()
            answer = await self._elicit(self.name, message, schema_dict)
        except Exception:
            answer = None
        finally:
            if self._asking_since is not None:
                self._asked_total_s += time.monotonic() - self._asking_since
                self._asking_since = None
        if answer is None:
            return mcp_types.ElicitResult(action="decline")
        return mcp_types.ElicitResult(action="accept", content=None if url else answer)

    def _set_status(self, status: Status) -> None:
        if status == self.status:
            return
        self.status = status
        event: dict[str, Any] = {"type": "mcp_server", "server": self.name, "status": status}
        if status == "failed" and self.error:
            event["error"] = self.error
        if status == "connected":
            event["tools"] = len(self.allowed_tools)
        self._events(event)


def _closed(client: Any) -> bool:
    dispatcher = getattr(getattr(client, "_session", None), "_dispatcher", None)
    return bool(getattr(dispatcher, "_closed", False))


def _client_info() -> Any:
    from mcp_types import Implementation

    from pi_tui import __version__

    return Implementation(name="pi-tui", version=__version__)


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80] or "server"


def _error_text(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_error_text(e) for e in error.exceptions)
    text = str(error) or type(error).__name__
    return printable(text)[:500]


def _describe(error: BaseException, config: ServerConfig) -> str:
    if isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        return _describe(error.exceptions[0], config)
    if isinstance(error, FileNotFoundError):
        return f"cannot start `{config.command}`: not found"
    if isinstance(error, TimeoutError):
        return str(error) or f"no answer within {config.startup_timeout_s:g} s (startupTimeoutMs)"
    return _error_text(error)
