"""The session's MCP servers: started in the background, and their tools frozen once.

``start()`` launches every trusted, enabled server without waiting (the first frame, ACP
``session/new`` and ``--help`` never wait for one). ``freeze()`` is called once, before the
first model request, after ``wait_started()`` gave the servers at most their start-up timeout:
the servers up by then contribute their tools directly (sorted by name), and the ``mcp`` tool
reaches everything — servers that connect later, tools a ``list_changed`` adds. From then on the
tool list is the same bytes for every request of the session, so a provider's prompt cache keeps
hitting (docs/mcp.md "Why the list is frozen"). When the direct tools together would take more
than ``maxContextShare`` of the model's context window, only the ``mcp`` tool is given.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pi_tui.core.deadline import cancel_and_wait
from pi_tui.core.terminal_text import printable
from pi_tui.core.tool import Tool
from pi_tui.mcp.config import ServerConfig
from pi_tui.mcp.connection import Connection, Elicit, McpCallError, PromptSpec, ToolSpec
from pi_tui.mcp.names import tool_name
from pi_tui.mcp.tools import ProxyTool, definition_tokens, make_tool

DEFAULT_CONTEXT_SHARE = 0.10
Listener = Callable[[dict[str, Any]], None]


class McpManager:
    def __init__(self, servers: Sequence[ServerConfig], *, cwd: Path, log_dir: Path,
                 skipped: Sequence[ServerConfig] = (), diagnostics: Sequence[str] = (),
                 elicit: Elicit | None = None, context_share: float = DEFAULT_CONTEXT_SHARE) -> None:
        self.cwd = cwd
        self.log_dir = log_dir
        self.skipped = list(skipped)
        """Servers not started: a project's, while the project is not trusted."""
        self.diagnostics = list(diagnostics)
        self.context_share = context_share
        self._listeners: list[Listener] = []
        self.elicit: Elicit | None = elicit
        self.connections: dict[str, Connection] = {}
        for config in servers:
            self.connections[config.name] = Connection(config, cwd=cwd, log_dir=log_dir, events=self._emit,
                                                       elicit=self._elicit)
        self._started = False
        self._go_on: asyncio.Event | None = None
        self.waiting: list[str] = []
        """The servers an announced ``wait_started`` still waits for."""
        self.went_on = False
        """``stop_waiting()`` ended a wait: the late servers were left to the ``mcp`` tool."""
        self.frozen: list[Tool] | None = None
        self.frozen_names: set[str] = set()
        self.mode = "direct"
        """``direct`` (server tools in the list) or ``proxy`` (only the ``mcp`` tool: over the budget)."""

    # ------------------------------------------------------------------ events

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):
                listener(event)

    async def _elicit(self, server: str, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        if self.elicit is None:
            return None
        return await self.elicit(server, message, schema)

    # ------------------------------------------------------------------ lifecycle

    @property
    def configured(self) -> bool:
        return bool(self.connections)

    def start(self) -> None:
        """Start every enabled server in the background (needs a running loop); idempotent."""
        if self._started:
            return
        self._started = True
        for connection in self.connections.values():
            connection.start(self._tools_changed)

    async def wait_started(self, limit_s: float | None = None, *, announce: bool = False) -> list[str]:
        """Wait for the starting servers, each at most its start-up timeout (or ``limit_s``), or
        until ``stop_waiting()``; the names of the enabled servers that are not connected after it.
        ``announce``: ``mcp_waiting`` events name the servers still awaited (the TUI's status
        line), the last one an empty list."""
        self.start()
        pending = [c for c in self.connections.values() if not c.config.disabled]
        go_on = self._go_on = asyncio.Event()
        if announce:
            self.waiting = [c.name for c in pending if not c.settled]
            if self.waiting:
                self._emit({"type": "mcp_waiting", "servers": list(self.waiting)})

        async def one(connection: Connection) -> None:
            # A little past each timeout, so a server that did not make it has failed, with its reason.
            await connection.wait_started(limit_s if limit_s is not None else connection.config.startup_timeout_s + 0.5)
            if connection.name in self.waiting:
                self.waiting.remove(connection.name)
                if self.waiting:
                    self._emit({"type": "mcp_waiting", "servers": list(self.waiting)})

        waits: asyncio.Future[Any] = asyncio.gather(*(one(c) for c in pending))
        stopped: asyncio.Future[Any] = asyncio.ensure_future(go_on.wait())
        try:
            await asyncio.wait({waits, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await cancel_and_wait(waits, stopped)  # the servers go on starting; only the wait ends
            self._go_on = None
            if self.waiting:
                self.waiting = []
                self._emit({"type": "mcp_waiting", "servers": []})
        return [c.name for c in pending if c.status != "connected"]

    def stop_waiting(self) -> bool:
        """End a ``wait_started`` now (the TUI's Esc): True when one was going."""
        if self._go_on is None or self._go_on.is_set():
            return False
        self._go_on.set()
        self.went_on = True
        return True

    async def close(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)

    def _tools_changed(self, connection: Connection) -> None:
        self._emit({"type": "mcp_tools_changed", "server": connection.name, "tools": len(connection.allowed_tools),
                    "frozen": self.frozen is not None})

    # ------------------------------------------------------------------ tools

    def catalog(self) -> dict[str, tuple[Connection, ToolSpec]]:
        """Every tool of every connected server by exposed name, now (the ``mcp`` tool's view).
        A name two tools would share keeps the first in (server, tool) order."""
        found: dict[str, tuple[Connection, ToolSpec]] = {}
        for connection in sorted(self.connections.values(), key=lambda c: c.name):
            if connection.status != "connected":
                continue
            for spec in sorted(connection.tools, key=lambda s: s.name):
                if connection.config.allows_tool(spec.name):
                    found.setdefault(tool_name(connection.name, spec.name), (connection, spec))
        return found

    def freeze(self, taken: Sequence[str] = (), context_window: int | None = None) -> list[Tool]:
        """The session's MCP tools, decided once (see the module docstring). ``taken`` are the
        names of the other tools: an MCP tool may not replace one (reported, like extension
        tool conflicts)."""
        if self.frozen is not None:
            return self.frozen
        direct: list[Tool] = []
        seen: dict[str, str] = {}
        taken_set = set(taken)
        for connection in sorted(self.connections.values(), key=lambda c: c.name):
            if connection.status != "connected":
                continue
            for spec in sorted(connection.tools, key=lambda s: s.name):
                if not connection.config.allows_tool(spec.name):
                    continue
                exposed = tool_name(connection.name, spec.name)
                owner = f"{connection.name}/{spec.name}"
                if exposed in taken_set or exposed == "mcp":
                    self.diagnostics.append(f"MCP tool {owner}: the name {exposed} is already a tool; not added")
                    continue
                if exposed in seen:
                    self.diagnostics.append(f"MCP tool {owner}: the name {exposed} is also {seen[exposed]}'s; "
                                            "not added (call it through the mcp tool)")
                    continue
                seen[exposed] = owner
                direct.append(make_tool(exposed, connection, spec))
        cost = sum(definition_tokens(t.name, t.description, t.parameters) for t in direct)
        budget = int((context_window or 0) * self.context_share)
        proxy = ProxyTool(self.catalog, self.status_line)
        if context_window and cost > budget:
            self.mode = "proxy"
            self.diagnostics.append(f"MCP: the servers' {len(direct)} tools would take ~{cost} tokens, over "
                                    f"{self.context_share:.0%} of the context window ({budget}): they are "
                                    "reached through the mcp tool")
            direct = []
        enabled = any(not c.config.disabled for c in self.connections.values())
        self.frozen = [*direct, proxy] if enabled and "mcp" not in taken_set else direct
        self.frozen_names = {t.name for t in self.frozen}
        return self.frozen

    def tool_tokens(self, connection: Connection) -> int:
        return sum(definition_tokens(tool_name(connection.name, s.name), s.description, s.input_schema)
                   for s in connection.tools if connection.config.allows_tool(s.name))

    # ------------------------------------------------------------------ state

    def status_line(self) -> str:
        up = [c.name for c in self.connections.values() if c.status == "connected"]
        other = [f"{c.name} ({c.status}{': ' + c.error if c.error else ''})"
                 for c in self.connections.values() if c.status != "connected"]
        text = f"MCP servers connected: {', '.join(up) or 'none'}"
        return text + (f"; not connected: {', '.join(other)}" if other else "")

    def counts(self) -> tuple[int, int]:
        """(servers up, servers failed) for the footer."""
        up = sum(1 for c in self.connections.values() if c.status == "connected")
        failed = sum(1 for c in self.connections.values() if c.status == "failed")
        return up, failed

    def state(self) -> list[dict[str, Any]]:
        """Every server's state (JSON-able: RPC ``get_state``, ``pi-tui mcp list``, ``/mcp``)."""
        rows: list[dict[str, Any]] = []
        for connection in self.connections.values():
            config = connection.config
            rows.append({
                "name": connection.name, "status": connection.status, "transport": config.transport,
                "scope": config.scope, "source": str(config.source), "tools": len(connection.allowed_tools),
                "toolTokens": self.tool_tokens(connection), "prompts": len(connection.prompts),
                "error": connection.error, "log": str(connection.log.path), "restarts": connection.restarts,
                "protocolVersion": connection.protocol_version or None, "server": connection.server_info or None,
            })
        for config in self.skipped:
            rows.append({"name": config.name, "status": "untrusted", "transport": config.transport,
                         "scope": config.scope, "source": str(config.source), "tools": 0, "toolTokens": 0,
                         "prompts": 0, "error": "the project is not trusted", "log": None, "restarts": 0,
                         "protocolVersion": None, "server": None})
        return rows

    def tool_costs(self, name: str) -> list[tuple[str, int]]:
        """One server's tools (exposed name, token cost of the definition), sorted (``/mcp``)."""
        connection = self.connections[name]
        return sorted((tool_name(name, s.name), definition_tokens(tool_name(name, s.name), s.description,
                                                                  s.input_schema))
                      for s in connection.tools if connection.config.allows_tool(s.name))

    async def set_enabled(self, name: str, enabled: bool) -> None:
        """``/mcp``: stop a server or start it again, for this session. Its direct tools stay in
        the frozen list (a call says the server is disabled); the ``mcp`` tool skips it."""
        await self.connections[name].set_enabled(enabled)

    async def reconnect(self, name: str) -> None:
        await self.connections[name].reconnect()

    def prompt_commands(self) -> dict[str, tuple[Connection, PromptSpec]]:
        """``mcp__server__prompt`` → (connection, prompt) for the connected servers."""
        found: dict[str, tuple[Connection, PromptSpec]] = {}
        for connection in sorted(self.connections.values(), key=lambda c: c.name):
            if connection.status == "connected":
                for prompt in connection.prompts:
                    found.setdefault(tool_name(connection.name, prompt.name), (connection, prompt))
        return found

    async def run_prompt(self, command: str, text: str) -> str:
        """The text of an MCP prompt (its messages' text joined), for ``/mcp__server__prompt ARGS``;
        ``McpCallError`` (bad arguments, the server failed) says why not."""
        from pi_tui.mcp.prompts import parse_arguments

        found = self.prompt_commands().get(command)
        if found is None:
            raise McpCallError(f"No MCP prompt /{command} (is its server connected? see /mcp)")
        connection, prompt = found
        try:
            arguments = parse_arguments(prompt, text)
        except ValueError as error:
            raise McpCallError(str(error).replace(f"/{prompt.name}", f"/{command}")) from None
        result = await connection.get_prompt(prompt.name, arguments)
        parts = []
        for message in result.messages:
            content = message.content
            text_part = getattr(content, "text", None)
            if text_part is None:  # an embedded resource: its text, when it has one
                text_part = getattr(getattr(content, "resource", None), "text", None)
            if text_part:
                parts.append(printable(str(text_part)))
        return "\n\n".join(parts)
