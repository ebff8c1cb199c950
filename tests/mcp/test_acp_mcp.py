"""ACP: the editor's ``mcpServers`` in ``session/new`` are used, a server that never answers does
not hold ``session/new`` up, and the agent advertises the transports it speaks."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from acp import text_block

from pi_tui.testing.fake_server import FakeServer
from tests.mcp.conftest import HOSTILE
from tests.modes.acp.conftest import EditorClient, acp_agent, write_models


async def test_the_editors_stdio_server_gives_the_model_its_tools(
        project: Path, agent_dir: Path) -> None:
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__ed__echo", "arguments": {"text": "from the editor"}}]},
             {"text": "ok"}]
    editor = EditorClient(choices=["allow_once"])
    with FakeServer(turns) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            servers = [
                {"name": "ed", "command": sys.executable, "args": [str(HOSTILE), "normal"],
                 "env": [{"name": "OWN", "value": "1"}]},
            ]
            session = await conn.new_session(cwd=str(project), mcp_servers=servers)
            await conn.prompt(session_id=session.session_id, prompt=[text_block("use it")])
            requests = server.requests
    tools = [t["function"]["name"] for t in requests[0]["tools"]]
    assert "mcp__ed__echo" in tools and "mcp" in tools
    assert "echo: from the editor" in str(requests[1]["messages"])


async def test_a_silent_server_does_not_hold_session_new_and_http_sse_are_advertised(
        project: Path, agent_dir: Path) -> None:
    editor = EditorClient()
    with FakeServer([]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            capabilities = conn.init.agent_capabilities.mcp_capabilities
            started = time.monotonic()
            servers = [{"name": "mute", "command": sys.executable, "args": [str(HOSTILE), "silent"], "env": []}]
            await conn.new_session(cwd=str(project), mcp_servers=servers)
            took = time.monotonic() - started
    assert took < 5  # the server has 30 s to answer initialize; session/new does not wait for it
    assert (capabilities.http, capabilities.sse) == (True, True)


async def test_session_load_uses_the_editors_servers(project: Path, agent_dir: Path) -> None:
    turns = [{"text": "first"},
             {"tool_calls": [{"id": "c1", "name": "mcp__ed__echo", "arguments": {"text": "after load"}}]},
             {"text": "ok"}]
    servers = [{"name": "ed", "command": sys.executable, "args": [str(HOSTILE), "normal"], "env": []}]
    with FakeServer(turns) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(EditorClient(), agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
        async with acp_agent(EditorClient(choices=["allow_once"]), agent_dir, project) as conn:
            await conn.load_session(session_id=session.session_id, cwd=str(project), mcp_servers=servers)
            await conn.prompt(session_id=session.session_id, prompt=[text_block("use it")])
        requests = server.requests
    assert not [t for t in requests[0]["tools"] if t["function"]["name"].startswith("mcp")]
    tools = [t["function"]["name"] for t in requests[1]["tools"]]
    assert "mcp__ed__echo" in tools and "mcp" in tools
    assert "echo: after load" in str(requests[2]["messages"])
    assert "hello" in str(requests[2]["messages"])  # the loaded history is there too
