"""A project's servers are project code (trust by what they run), the SDK is imported only when
a server is configured, and a server that never answers holds nothing up for long."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from pi_tui.testing.fake_server import FakeServer
from tests.mcp.conftest import hostile, session_with, tool_names, write_servers
from tests.modes.test_print_mode import _agent_dir, _run


def _trust_now(project: Path, agent_dir: Path) -> None:
    from pi_tui.resources.trust import TrustStore
    from pi_tui.sdk import project_trust

    trust = project_trust(project, agent_dir, None, None)
    TrustStore(agent_dir).remember(trust.project, True, trust.code)


async def test_a_project_server_runs_nothing_until_trusted_and_a_changed_argument_asks_again(
        project: Path, agent_dir: Path) -> None:
    marker = project / "MARKER"
    write_servers(project / ".mcp.json", {"t": {"command": "touch", "args": [str(marker)]}})
    session, provider = session_with(project, agent_dir, [{"text": "hi"}])
    await session.prompt("go")
    await session.mcp.close()
    assert not marker.exists()
    assert session.project_trust.trusted is False
    described = [item.describe() for item in session.project_trust.code]
    assert described == [f".mcp.json MCP server t: runs `touch {marker}`"]
    assert session.mcp.state()[0]["status"] == "untrusted"
    assert not [n for n in tool_names(provider.requests[0]) if n.startswith("mcp")]

    _trust_now(project, agent_dir)
    session, _provider = session_with(project, agent_dir, [{"text": "hi"}])
    assert session.project_trust.trusted is True
    await session.prompt("go")
    await session.mcp.close()
    assert marker.exists()  # trusted: it ran (and is no MCP server, so it failed to connect)

    marker.unlink()
    other = project / "OTHER"
    write_servers(project / ".mcp.json", {"t": {"command": "touch", "args": [str(other)]}})
    session, _provider = session_with(project, agent_dir, [{"text": "hi"}])
    assert session.project_trust.trusted is False and session.project_trust.decided is False
    assert [c.describe() for c in session.project_trust.new_code] == [f".mcp.json MCP server t: runs `touch {other}`"]
    await session.prompt("go")
    await session.mcp.close()
    assert not other.exists()


async def test_an_untrusted_projects_headers_are_not_expanded(project: Path, agent_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "tok-123")
    write_servers(project / ".pi" / "mcp.json", {"r": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                                                       "headers": {"Authorization": "Bearer ${SECRET_TOKEN}"}}})
    session, _provider = session_with(project, agent_dir, [{"text": "hi"}])
    assert session.mcp.connections == {}
    assert session.mcp.skipped[0].headers == {"Authorization": "Bearer ${SECRET_TOKEN}"}
    assert "tok-123" not in json.dumps(session.mcp.state())


def test_bad_config_names_the_file_and_the_key(project: Path, agent_dir: Path) -> None:
    from pi_tui.mcp.config import load_config

    (agent_dir / "mcp.json").write_text('{"mcpServers": {"a": {"command": "x", "args": "not-a-list"}, '
                                        '"b": {"command": "y", "startupTimeoutMs": -1}, "c": {"command": "ok"}}}')
    (project / ".mcp.json").write_text("{not json")
    config = load_config(project, agent_dir)
    assert list(config.servers) == ["c"]
    assert config.diagnostics == [
        f"{agent_dir / 'mcp.json'}: mcpServers.a.args: expected a list of strings (server skipped)",
        f"{agent_dir / 'mcp.json'}: mcpServers.b.startupTimeoutMs: expected a positive number of milliseconds "
        "(server skipped)",
        f"{project / '.mcp.json'}: bad JSON at line 1 column 2: Expecting property name enclosed in double quotes",
    ]


def test_later_files_win_and_variables_expand(project: Path, agent_dir: Path) -> None:
    from pi_tui.mcp.config import load_config

    write_servers(agent_dir / "mcp.json", {"s": {"command": "user"}, "u": {"command": "${TOOL:-fallback}",
                                                                            "args": ["--x=${HOME}"]}})
    write_servers(project / ".pi" / "mcp.json", {"s": {"command": "project"}})
    config = load_config(project, agent_dir)
    assert config.servers["s"].command == "project" and config.servers["s"].scope == "project"
    expanded = config.servers["u"].expand({"HOME": "/h"})
    assert (expanded.command, expanded.args) == ("fallback", ("--x=/h",))


def test_nothing_of_mcp_is_imported_without_servers_and_the_sdk_only_with_one(project: Path, agent_dir: Path) -> None:
    code = (
        "import json, sys, asyncio\n"
        "from pi_tui.testing.scripted import ScriptedProvider\n"
        "from pi_tui.sdk import create_agent_session\n"
        "s = create_agent_session(provider=ScriptedProvider([{'text': 'hi'}]), settings={}, no_session=True,\n"
        "                         load_extensions=False)\n"
        "asyncio.run(s.prompt('go'))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'httpx2')"
        " or m.startswith('pi_tui.mcp'))))\n"
    )
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)}
    out = subprocess.run([sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == ["pi_tui.mcp", "pi_tui.mcp.files"]
    write_servers(agent_dir / "mcp.json", {"off": {"command": "nothing", "disabled": True}})
    out = subprocess.run([sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True, check=True)
    assert not [m for m in json.loads(out.stdout.splitlines()[-1]) if m.split(".")[0] == "mcp"]


def test_print_mode_waits_for_a_silent_server_only_its_startup_timeout_and_names_it(tmp_path: Path, project: Path) -> None:
    with FakeServer([{"text": "answer"}]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        write_servers(agent / "mcp.json", {"mute": hostile("silent", startupTimeoutMs=1500)})
        started = time.monotonic()
        result = _run(["-p", "hi"], agent, project)
        elapsed = time.monotonic() - started
        tools = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert result.returncode == 0, result.stderr
    assert result.stdout == "answer\n"
    assert "MCP server 'mute' is not connected (" in result.stderr
    assert "within 1.5 s)" in result.stderr  # 'failed: no answer to initialize …' or, slower, 'no answer …'

    assert elapsed < 15
    assert tools == ["read", "bash", "edit", "write", "mcp"]
