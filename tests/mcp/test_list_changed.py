"""``notifications/tools/list_changed``: the frozen tool list stays the same bytes, the change is
reported (``mcp_tools_changed``) and the new tool is reached through the ``mcp`` tool; a change
announced while the server is still connecting is not lost. Against ``hostile_server.py``'s
``changing`` and ``racing`` modes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.mcp.conftest import hostile, result_texts, session_with, tool_names, write_servers


def _tools_bytes(request: Any) -> str:
    return json.dumps([[t.name, t.description, t.parameters] for t in request.tools])


async def test_a_tool_added_after_a_call_reaches_the_model_through_mcp_and_the_list_stays_the_same_bytes(
        project: Path, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"h": hostile("changing")})
    turns: list[dict[str, Any]] = [{"tool_calls": [{"id": "c1", "name": "mcp__h__echo", "arguments": {"text": "one"}}]},
             {"text": "first done"},
             {"tool_calls": [{"id": "c2", "name": "mcp", "arguments": {"action": "search", "query": "late"}}]},
             {"tool_calls": [{"id": "c3", "name": "mcp", "arguments": {"action": "describe", "tool": "mcp__h__late"}}]},
             {"tool_calls": [{"id": "c4", "name": "mcp", "arguments": {"action": "call", "tool": "mcp__h__late",
                                                                      "arguments": {"x": "y"}}}]},
             {"text": "second done"}]
    session, provider = session_with(project, agent_dir, turns)
    events: list[dict[str, Any]] = []
    changed = asyncio.Event()
    session.subscribe(events.append)
    session.subscribe(lambda e: changed.set() if e.get("type") == "mcp_tools_changed" else None)
    try:
        await asyncio.wait_for(session.prompt("first"), 30)
        await asyncio.wait_for(changed.wait(), 10)
        await asyncio.wait_for(session.prompt("second"), 30)
        assert [e for e in events if e.get("type") == "mcp_tools_changed"] == [
            {"type": "mcp_tools_changed", "server": "h", "tools": 6, "frozen": True}]
        assert len(provider.requests) == 6
        assert len({_tools_bytes(r) for r in provider.requests}) == 1
        assert len({r.system_prompt for r in provider.requests}) == 1
        assert "mcp__h__late" not in tool_names(provider.requests[-1])
        echo, search, describe, call = result_texts(session)
        assert echo == "echo: one"
        assert "mcp__h__late: A tool that arrived late" in search
        assert json.loads(describe)["inputSchema"]["properties"] == {"x": {"type": "string"}}
        assert call == "late: ok"
    finally:
        await session.mcp.close()


async def test_a_list_changed_that_arrives_while_connecting_is_listed_again_before_the_server_counts_as_up(
        project: Path, agent_dir: Path) -> None:
    """The server announces ``early`` before it answers the first ``tools/list`` (with the list of
    before): pi-tui lists again, so the frozen list has it."""
    write_servers(agent_dir / "mcp.json", {"r": hostile("racing")})
    session, provider = session_with(project, agent_dir, [{"text": "ok"}])
    try:
        await asyncio.wait_for(session.prompt("go"), 30)
        assert "mcp__r__early" in tool_names(provider.requests[0])
        assert "early" in [t.name for t in session.mcp.connections["r"].tools]
    finally:
        await session.mcp.close()
