"""MCP server configuration: the ``mcpServers`` files users already have (docs/mcp.md).

Read in this order, a later file replacing a server of the same name whole:

1. ``<agentDir>/mcp.json`` — the user's servers (``pi-tui mcp add`` writes it);
2. ``<project>/.mcp.json`` — Claude Code's project file, unchanged;
3. ``<project>/.pi/mcp.json`` — pi-tui's project file;
4. each ``--mcp-config FILE`` — given on the command line, so the user's own.

The format is the de-facto one (Claude Code, VS Code, Gemini CLI)::

    {"mcpServers": {"name": {"command": "npx", "args": ["-y", "pkg"], "env": {"K": "v"}, "cwd": "dir"},
                    "remote": {"type": "http", "url": "https://…/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}

plus ``disabled``, ``includeTools`` / ``excludeTools``, ``startupTimeoutMs`` (30 s) and
``toolTimeoutMs`` (60 s). Keys we do not know are ignored (other agents add their own). A bad
file or a bad key is a diagnostic naming the file and the key; the other servers still load.

``${VAR}`` and ``${VAR:-default}`` are expanded in ``command``, ``args``, ``env``, ``cwd``,
``url`` and ``headers`` — only once the server may start (a project's servers once the project is
trusted: a header could otherwise carry the user's secrets to a URL a repository chose).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.regular_files import NotRegularFileError, read_regular_text
from pi_tui.mcp.files import Scope, config_files

Transport = Literal["stdio", "http", "sse"]
DEFAULT_STARTUP_TIMEOUT_MS = 30_000
DEFAULT_TOOL_TIMEOUT_MS = 60_000
_TRANSPORT_NAMES: dict[str, Transport] = {
    "stdio": "stdio", "http": "http", "streamable-http": "http", "streamablehttp": "http", "streamable_http": "http",
    "sse": "sse",
}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One server as configured (``${VAR}`` not yet expanded unless ``expanded``)."""

    name: str
    source: Path
    scope: Scope
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_MS / 1000
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_MS / 1000
    expanded: bool = False

    @property
    def is_project(self) -> bool:
        return self.scope == "project"

    def where(self) -> str:
        return f"{self.source}: mcpServers.{self.name}"

    def describe(self) -> str:
        """What would run or be contacted, exactly as configured: the trust dialog shows it and
        trust is remembered by it, so a changed command, argument, cwd, env name or URL asks again."""
        if self.transport == "stdio":
            text = f"runs `{shlex.join([self.command, *self.args])}`"
            if self.cwd:
                text += f" in {self.cwd}"
            if self.env:
                text += f" with env {', '.join(sorted(self.env))}"
            return text
        text = f"connects to {self.url} ({self.transport})"
        if self.headers:
            text += f" with headers {', '.join(sorted(self.headers))}"
        return text

    def allows_tool(self, tool: str) -> bool:
        if self.include_tools is not None and tool not in self.include_tools:
            return False
        return tool not in self.exclude_tools

    def expand(self, environ: Mapping[str, str]) -> ServerConfig:
        """``${VAR}`` / ``${VAR:-default}`` filled from ``environ``; ``ValueError`` names the key of
        a variable that is unset and has no default."""
        if self.expanded:
            return self

        def one(value: str, key: str) -> str:
            def sub(match: re.Match[str]) -> str:
                name, default = match.group(1), match.group(2)
                found = environ.get(name)
                if found is not None and (found or default is None):
                    return found
                if default is not None:
                    return default
                raise ValueError(f"{self.where()}.{key}: ${{{name}}} is not set (give a default with ${{{name}:-value}})")

            return _VAR.sub(sub, value)

        cwd = one(self.cwd, "cwd") if self.cwd else None  # relative: to the session's cwd, at the start
        return replace(
            self,
            command=one(self.command, "command"),
            args=tuple(one(a, f"args[{i}]") for i, a in enumerate(self.args)),
            env={k: one(v, f"env.{k}") for k, v in self.env.items()},
            cwd=os.path.expanduser(cwd) if cwd else None,
            url=one(self.url, "url"),
            headers={k: one(v, f"headers.{k}") for k, v in self.headers.items()},
            expanded=True,
        )


@dataclass(slots=True)
class McpConfig:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    diagnostics: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    """The files that exist and were read, in order."""


def load_config(cwd: Path, agent_dir: Path, extra: Sequence[Path] = ()) -> McpConfig:
    config = McpConfig()
    for path, scope in config_files(cwd, agent_dir, extra):
        if scope != "flag" and not os.path.lexists(path):
            continue
        data = _read(path, config.diagnostics)
        if data is None:
            continue
        config.files.append(path)
        for server in parse_servers(data, path, scope, config.diagnostics):
            config.servers[server.name] = server
    return config


def _read(path: Path, diagnostics: list[str]) -> dict[str, Any] | None:
    try:
        text = read_regular_text(path)
    except NotRegularFileError as error:
        diagnostics.append(f"{path}: not read: it is {error.kind}, not a regular file")
        return None
    except (OSError, UnicodeDecodeError) as error:
        diagnostics.append(f"{path}: cannot be read: {error}")
        return None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        diagnostics.append(f"{path}: bad JSON at line {error.lineno} column {error.colno}: {error.msg}")
        return None
    except RecursionError:
        diagnostics.append(f"{path}: bad JSON: nested too deeply")
        return None
    if not isinstance(data, dict):
        diagnostics.append(f"{path}: expected a JSON object with \"mcpServers\", got {type(data).__name__}")
        return None
    return data


def parse_servers(data: Mapping[str, Any], path: Path, scope: Scope, diagnostics: list[str]) -> list[ServerConfig]:
    """The servers of one file's JSON; a bad entry is a diagnostic and is skipped."""
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        diagnostics.append(f"{path}: mcpServers: expected an object of servers by name")
        return []
    found = []
    for name, entry in servers.items():
        try:
            found.append(parse_server(name, entry, path, scope))
        except ValueError as error:
            diagnostics.append(f"{error} (server skipped)")
    return found


def parse_server(name: str, entry: Any, path: Path, scope: Scope) -> ServerConfig:
    where = f"{path}: mcpServers.{name}"
    if not name.strip():
        raise ValueError(f"{path}: mcpServers: a server has an empty name")
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected an object with \"command\" or \"url\"")

    def string(key: str, default: str = "") -> str:
        value = entry.get(key, default)
        if not isinstance(value, str):
            raise ValueError(f"{where}.{key}: expected a string, got {json.dumps(value)[:60]}")
        return value

    def strings(key: str) -> tuple[str, ...] | None:
        value = entry.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{where}.{key}: expected a list of strings")
        return tuple(value)

    def mapping(key: str) -> dict[str, str]:
        value = entry.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ValueError(f"{where}.{key}: expected an object of strings")
        return dict(value)

    def millis(key: str, default: int) -> float:
        value = entry.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"{where}.{key}: expected a positive number of milliseconds")
        return float(value) / 1000

    kind = string("type", "").strip().lower()
    url = string("url")
    command = string("command")
    if kind and kind not in _TRANSPORT_NAMES:
        raise ValueError(f"{where}.type: {kind!r} is not one of stdio, http, sse")
    transport: Transport = _TRANSPORT_NAMES[kind] if kind else ("http" if url and not command else "stdio")
    if transport == "stdio" and not command.strip():
        raise ValueError(f"{where}.command: missing (a stdio server needs the program to run)")
    if transport != "stdio" and not url.strip():
        raise ValueError(f"{where}.url: missing (a {transport} server needs its URL)")
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ValueError(f"{where}.disabled: expected true or false")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError(f"{where}.cwd: expected a string")
    return ServerConfig(
        name=name, source=path, scope=scope, transport=transport,
        command=command, args=strings("args") or (), env=mapping("env"), cwd=cwd or None,
        url=url, headers=mapping("headers"), disabled=disabled,
        include_tools=strings("includeTools"), exclude_tools=strings("excludeTools") or (),
        startup_timeout_s=millis("startupTimeoutMs", DEFAULT_STARTUP_TIMEOUT_MS),
        tool_timeout_s=millis("toolTimeoutMs", DEFAULT_TOOL_TIMEOUT_MS),
    )


def editor_servers(entries: Sequence[Mapping[str, Any]], diagnostics: list[str]) -> list[ServerConfig]:
    """ACP's ``mcpServers`` (``session/new``): ``{name, command, args, env: [{name, value}]}`` or
    ``{type: "http"|"sse", name, url, headers: [{name, value}]}``. The editor is the user's."""
    found = []
    where = Path("session/new")
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            diagnostics.append(f"ACP mcpServers[{index}]: expected an object with a name (server skipped)")
            continue
        raw: dict[str, Any] = {k: v for k, v in entry.items() if k in ("type", "command", "args", "url")}
        for key in ("env", "headers"):
            pairs = entry.get(key) or []
            if isinstance(pairs, list):
                raw[key] = {p.get("name"): p.get("value") for p in pairs if isinstance(p, Mapping)}
        try:
            found.append(replace(parse_server(entry["name"], raw, where, "editor"), expanded=True))
        except ValueError as error:
            diagnostics.append(f"{error} (server skipped)")
    return found
