"""``includeTools`` / ``excludeTools`` and ``--mcp-config FILE``: the tools a config leaves out are
neither in the request nor counted or named by ``pi-tui mcp list``, ``get_state`` and ``/mcp``
(which read ``manager.state()``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_tui.testing.fake_server import FakeServer
from tests.mcp.conftest import hostile, session_with, tool_names, write_servers
from tests.modes.test_print_mode import _agent_dir, _run

ALL = ["mcp__x__big", "mcp__x__echo", "mcp__x__env", "mcp__x__fail", "mcp__x__hang"]


def _mcp(names: list[str]) -> list[str]:
    return [n for n in names if n.startswith("mcp__")]


async def test_include_and_exclude_tools_shape_the_request_the_state_and_the_mcp_tool(
        project: Path, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"x": hostile(excludeTools=["hang", "big"]),
                                           "y": hostile(includeTools=["echo"])})
    turns: list[dict[str, Any]] = [{"tool_calls": [{"id": "c1", "name": "mcp", "arguments": {"action": "search", "query": ""}}]},
             {"text": "done"}]
    session, provider = session_with(project, agent_dir, turns)
    try:
        await session.prompt("go")
        assert _mcp(tool_names(provider.requests[0])) == ["mcp__x__echo", "mcp__x__env", "mcp__x__fail",
                                                          "mcp__y__echo"]
        rows = {r["name"]: r for r in session.mcp.state()}
        assert (rows["x"]["tools"], rows["y"]["tools"]) == (3, 1)
        assert [n for n, _cost in session.mcp.tool_costs("y")] == ["mcp__y__echo"]
        search = next(m for m in session.messages if m["role"] == "toolResult")["content"][0]["text"]
        assert "mcp__x__hang" not in search and "mcp__y__env" not in search and "mcp__y__echo" in search
    finally:
        await session.mcp.close()


def test_mcp_list_with_an_mcp_config_file_counts_and_names_only_the_kept_tools(
        project: Path, agent_dir: Path, tmp_path: Path) -> None:
    config = write_servers(tmp_path / "extra.json", {"x": hostile(excludeTools=["hang", "big"]),
                                                      "y": hostile(includeTools=["echo", "env"])})
    listed = _run(["mcp", "list", "--json", "--mcp-config", str(config)], agent_dir, project)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert (rows["x"]["tools"], rows["x"]["toolNames"]) == (3, ["mcp__x__echo", "mcp__x__env", "mcp__x__fail"])
    assert (rows["y"]["tools"], rows["y"]["toolNames"]) == (2, ["mcp__y__echo", "mcp__y__env"])
    assert rows["x"]["source"] == str(config)
    text = _run(["mcp", "list", "--mcp-config", str(config)], agent_dir, project)
    assert "  3 tools, ~" in text.stdout and "mcp__x__hang" not in text.stdout and "mcp__x__big" not in text.stdout


def test_print_mode_takes_servers_from_mcp_config(project: Path, tmp_path: Path) -> None:
    config = write_servers(tmp_path / "extra.json", {"x": hostile(includeTools=["echo"])})
    turns: list[dict[str, Any]] = [{"tool_calls": [{"id": "c1", "name": "mcp__x__echo", "arguments": {"text": "from the file"}}]},
             {"text": "done"}]
    with FakeServer(turns) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        result = _run(["-p", "go", "--mcp-config", str(config)], agent, project)
        requests = server.requests
    assert result.returncode == 0, result.stderr
    assert _mcp([t["function"]["name"] for t in requests[0]["tools"]]) == ["mcp__x__echo"]
    assert "echo: from the file" in json.dumps(requests[1]["messages"])
    assert result.stdout == "done\n"
