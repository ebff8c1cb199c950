"""MCP tools as registry tools: one per server tool (``mcp__<server>__<tool>``) and the small
``mcp`` tool (search / describe / call) that reaches every tool of every connected server,
including those that connected or changed after the tool list was frozen (``manager.freeze``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue, UserContent
from pi_tui.core.tool import ToolContext, ToolResult, text_result
from pi_tui.mcp.results import convert_result

if TYPE_CHECKING:
    from pi_tui.mcp.connection import Connection, ToolSpec

MAX_DESCRIPTION = 2000
"""Characters of a server's tool description the model sees (some servers send pages)."""
PROXY_NAME = "mcp"
PROXY_DESCRIPTION = (
    "Use tools of the user's MCP servers. action=search lists tools whose name or description "
    "matches `query` (empty query: all tools); action=describe shows one tool's input schema; "
    "action=call runs `tool` (its full name, mcp__<server>__<tool>) with `arguments`. Search "
    "first when you do not know a tool's name; describe it before a first call."
)
PROXY_PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["search", "describe", "call"]},
        "query": {"type": "string", "description": "search: words to look for"},
        "tool": {"type": "string", "description": "describe/call: the tool's full name"},
        "arguments": {"type": "object", "description": "call: the tool's arguments"},
    },
    "required": ["action"],
}


def capped(text: str, limit: int = MAX_DESCRIPTION) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_parameters(schema: dict[str, Any]) -> dict[str, JsonValue]:
    """The server's JSON schema as the tool's parameters (an object schema, as providers need)."""
    params: dict[str, JsonValue] = dict(schema) if isinstance(schema, dict) else {}
    if params.get("type") != "object":
        params = {"type": "object", "properties": {}}
    params.pop("$schema", None)  # some providers refuse unknown top-level keywords
    return params


def definition_tokens(name: str, description: str, parameters: dict[str, JsonValue]) -> int:
    """What a tool definition costs in the request, chars/4 as the rest of pi-tui estimates."""
    text = json.dumps({"name": name, "description": description, "parameters": parameters}, ensure_ascii=False)
    return max(1, len(text) // 4)


Caller = Callable[["Connection", str, dict[str, Any], ToolContext], Any]


async def run_call(connection: Connection, tool: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Call ``tool`` on ``connection``; progress notifications become partial results."""
    from pi_tui.mcp.connection import McpCallError

    def progress(done: float, total: float | None, message: str | None) -> None:
        share = f"{done:g}/{total:g}" if total else f"{done:g}"
        text = f"[{connection.name}: {tool} progress {share}{' — ' + message if message else ''}]"
        ctx.on_update(text_result(text, details={"progress": done, "total": total, "message": message}))

    try:
        result = await connection.call_tool(tool, arguments, progress=progress)
    except McpCallError as error:
        raise ToolError(str(error)) from None
    converted = convert_result(result, server=connection.name, tool=tool, artifact_dir=ctx.artifact_dir,
                               images=ctx.model_supports_images, secrets=ctx.secret_values)
    if converted.is_error:
        images: list[UserContent] = [c for c in converted.content if c.get("type") == "image"]
        converted.content = [{"type": "text", "text": _error_text(converted)}, *images]
    return converted


def _error_text(result: ToolResult) -> str:
    text = "\n".join(str(c.get("text", "")) for c in result.content if c.get("type") == "text")
    return text or "the MCP tool reported an error"


@dataclass(slots=True)
class McpTool:
    """One server tool under its exposed name; frozen with the session's tool list."""

    name: str
    description: str
    parameters: dict[str, JsonValue]
    connection: Connection
    remote_name: str
    label: str = ""
    prompt_snippet: str | None = None
    prompt_guidelines: tuple[str, ...] = ()
    execution_mode: Literal["parallel", "sequential"] = "parallel"
    annotations: dict[str, Any] | None = None

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        return await run_call(self.connection, self.remote_name, dict(args), ctx)


def make_tool(exposed: str, connection: Connection, spec: ToolSpec) -> McpTool:
    return McpTool(name=exposed, description=capped(spec.description) or f"{spec.name} ({connection.name} MCP server)",
                   parameters=tool_parameters(spec.input_schema), connection=connection, remote_name=spec.name,
                   label=f"{connection.name}: {spec.name}", annotations=dict(spec.annotations))


class ProxyTool:
    """The ``mcp`` tool. ``catalog`` gives the current tools by exposed name (late ones too)."""

    name = PROXY_NAME
    label = "mcp"
    description = PROXY_DESCRIPTION
    parameters = PROXY_PARAMETERS
    prompt_snippet: str | None = None
    prompt_guidelines: tuple[str, ...] = ()
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    def __init__(self, catalog: Callable[[], dict[str, tuple[Connection, ToolSpec]]],
                 status: Callable[[], str]) -> None:
        self._catalog = catalog
        self._status = status

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        action = args.get("action")
        catalog = self._catalog()
        if action == "search":
            query = str(args.get("query") or "").lower().split()
            hits = [(name, conn, spec) for name, (conn, spec) in sorted(catalog.items())
                    if all(word in f"{name} {spec.description}".lower() for word in query)]
            lines = [f"{name}: {capped(spec.description, 160).splitlines()[0] if spec.description else ''}"
                     for name, _conn, spec in hits[:50]]
            more = f"\n({len(hits) - 50} more: narrow the query)" if len(hits) > 50 else ""
            head = self._status()
            return text_result(f"{head}\n" + ("\n".join(lines) if lines else "No tool matches.") + more,
                               details={"action": "search", "matches": len(hits)})
        name = str(args.get("tool") or "")
        if action not in ("describe", "call"):
            raise ToolError("action must be one of search, describe, call")
        found = catalog.get(name)
        if found is None:
            raise ToolError(f"No MCP tool named '{name}' (use action=search to find one). {self._status()}")
        connection, spec = found
        if action == "describe":
            body = {"name": name, "server": connection.name, "description": capped(spec.description),
                    "inputSchema": tool_parameters(spec.input_schema)}
            if connection.instructions:
                body["serverInstructions"] = capped(connection.instructions)
            return text_result(json.dumps(body, indent=2, ensure_ascii=False), details={"action": "describe"})
        arguments = args.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise ToolError("arguments must be an object")
        return await run_call(connection, spec.name, dict(arguments), ctx)
