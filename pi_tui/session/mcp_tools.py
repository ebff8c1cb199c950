"""The session's two moments with its MCP servers (``pi_tui/mcp``), attached through the hook
lists (``hooks.py``): the servers start with the session (``session_started``, in the
background), and before the first prompt their tools are added once (``add_tools``) — after the
servers had at most their start-up timeout, or until the person stopped the wait (the TUI's Esc,
``manager.stop_waiting``) — and never changed again, so every request of the session carries the
same tool list.

``allow`` is the session's explicit tool selection (``--tools a,b``; ``--no-tools`` is an empty
one): the MCP tools are registered but only those it names are active (``mcp`` for the small
tool, ``mcp__server__tool`` for one) — ``--no-tools`` means no tool at all, MCP's included. The
servers still start (their prompts and ``/mcp`` work)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def attach_mcp(session: Any, manager: Any, allow: Collection[str] | None = None) -> None:
    session.mcp = manager

    async def started(reason: str) -> None:
        if reason == "startup":
            manager.subscribe(session.emit)
            manager.start()

    async def before_prompt(_text: str) -> None:
        if manager.frozen is None:
            await freeze_mcp_tools(session, manager, allow)

    session.hooks.session_started.append(started)
    session.hooks.before_prompt.append(before_prompt)


async def freeze_mcp_tools(session: Any, manager: Any, allow: Collection[str] | None = None) -> None:
    missing = await manager.wait_started(announce=True)
    for name in missing:
        connection = manager.connections[name]
        if connection.status == "starting":
            why = ("still starting: the prompt went on without it" if manager.went_on
                   else f"no answer within {connection.config.startup_timeout_s:g} s")
        else:
            why = connection.status + (f": {connection.error}" if connection.error else "")
        session.notify(f"MCP server '{name}' is not connected ({why}); its tools are reached through the mcp "
                       "tool once it is", "warning")
    model = session.model
    before = len(manager.diagnostics)
    tools = manager.freeze(session.get_all_tools(), model.context_window if model is not None else None)
    for message in manager.diagnostics[before:]:
        session.notify(message, "warning")
    if tools:
        # An explicit selection already holds the names it gives, in its order: those become
        # active as they arrive; the others stay registered, inactive.
        session.add_tools(tools, active=allow is None)


async def close_mcp(session: Any) -> None:
    """Stop the session's servers (each bounded: the SDK closes stdin, then terminates, then kills)."""
    manager = getattr(session, "mcp", None)
    if manager is not None:
        await manager.close()
