"""RPC mode and MCP: ``get_state`` carries each server's state, and ``mcp_server`` events report
connects and failures as they happen (docs/mcp.md, docs/rpc.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.mcp.conftest import hostile, write_servers


async def test_get_state_and_events_report_the_servers(make_client: Any, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"ok": hostile("normal"), "gone": {"command": str(agent_dir / "nothing")}})
    client = make_client([])
    try:
        await client.wait_for(lambda: {(f.get("server"), f.get("status")) for f in client.frames
                                       if f.get("type") == "mcp_server"} >= {("ok", "connected"), ("gone", "failed")})
        state = (await client.request({"id": "s", "type": "get_state"}))["data"]
    finally:
        await client.session.mcp.close()
        await client.close()
    rows = {row["name"]: row for row in state["mcpServers"]}
    assert rows["ok"]["status"] == "connected" and rows["ok"]["tools"] == 5 and rows["ok"]["toolTokens"] > 0
    assert rows["ok"]["server"] == "hostile-normal 1" and rows["ok"]["log"].endswith("ok.log")
    assert rows["gone"]["status"] == "failed" and "cannot start" in rows["gone"]["error"]
    connected = next(f for f in client.frames if f.get("type") == "mcp_server" and f.get("status") == "connected")
    assert connected == {"type": "mcp_server", "server": "ok", "status": "connected", "tools": 5}
