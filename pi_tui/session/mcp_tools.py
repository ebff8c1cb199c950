"""The session's two moments with its MCP servers (``pi_tui/mcp``): they start with the session
(``session.start()``, in the background), and before the first model request their tools are
added to the session's tools once — after the servers had at most their start-up timeout — and
never changed again, so every request of the session carries the same tool list."""

from __future__ import annotations

from typing import Any


def start_mcp(session: Any) -> None:
    manager = session.mcp
    if manager is not None:
        manager.subscribe(session.emit)
        manager.start()


async def freeze_mcp_tools(session: Any) -> None:
    manager = session.mcp
    missing = await manager.wait_started()
    for name in missing:
        connection = manager.connections[name]
        if connection.status == "starting":
            why = f"no answer within {connection.config.startup_timeout_s:g} s"
        else:
            why = connection.status + (f": {connection.error}" if connection.error else "")
        session.notify(f"MCP server '{name}' is not connected ({why}); its tools are reached through the mcp "
                       "tool once it is", "warning")
    model = session.model
    before = len(manager.diagnostics)
    tools = manager.freeze(list(session._all_tools), model.context_window if model is not None else None)
    for message in manager.diagnostics[before:]:
        session.notify(message, "warning")
    for tool in tools:
        session._all_tools[tool.name] = tool
        if tool.name not in session._active_tool_names:
            session._active_tool_names.append(tool.name)
