"""A server that keeps dying is restarted once, after the backoff, and then left failed: a call
says so at once instead of waiting on a server that will not come back."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.mcp.conftest import hostile, result_texts, session_with, write_servers


async def test_a_server_that_dies_again_after_its_restart_stays_failed(project: Path, agent_dir: Path) -> None:
    from pi_tui.mcp.connection import RESTART_BACKOFF_S

    write_servers(agent_dir / "mcp.json", {"h": hostile("crash", 0)})  # dies at every first call
    calls = [{"tool_calls": [{"id": f"c{i}", "name": "mcp__h__echo", "arguments": {"text": str(i)}}]} for i in range(3)]
    session, _provider = session_with(project, agent_dir, [*calls, {"text": "done"}])
    events: list[tuple[float, dict]] = []
    session.subscribe(lambda e: events.append((time.monotonic(), e)) if e.get("type") == "mcp_server" else None)
    try:
        await asyncio.wait_for(session.prompt("go"), 60)
        first, second, third = result_texts(session)
        connection = session.mcp.connections["h"]
    finally:
        await session.mcp.close()
    assert "exited during the call to 'echo' (it is restarted once)" in first
    assert "exited during the call to 'echo'" in second and "restarted once" not in second
    assert "MCP server 'h' is not connected (failed: the server closed the connection" in third
    assert connection.restarts == 1
    statuses = [e["status"] for _t, e in events]
    assert statuses.count("restarting") == 1
    restarting = next(t for t, e in events if e["status"] == "restarting")
    reconnected = [t for t, e in events if e["status"] == "connected"][-1]
    assert reconnected - restarting >= RESTART_BACKOFF_S  # the backoff before the one restart


async def test_the_tool_timeout_does_not_count_the_time_the_person_answers(project: Path, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"q": hostile("ask", toolTimeoutMs=1000)})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__q__ask", "arguments": {}}]},
             {"tool_calls": [{"id": "c2", "name": "mcp__q__hang", "arguments": {}}]}, {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns)

    async def slow_person(server: str, message: str, schema: dict) -> dict:
        await asyncio.sleep(2.5)  # longer than the call's 1 s timeout
        return {"name": "Ada"}

    session.mcp.elicit = slow_person
    try:
        started = time.monotonic()
        await asyncio.wait_for(session.prompt("go"), 60)
        elapsed = time.monotonic() - started
        answered, hung = result_texts(session)
    finally:
        await session.mcp.close()
    assert answered == 'answered: {"action": "accept", "content": {"name": "Ada"}}'
    assert "timed out after 1 s" in hung  # without a question the timeout holds
    assert elapsed < 30
