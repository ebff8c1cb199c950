"""MCP tools through a real AgentSession on the scripted provider, against the small stdlib
server of ``hostile_server.py``: names, the frozen list, results, errors, timeouts, aborts."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from tests.mcp.conftest import hostile, result_texts, session_with, tool_names, write_servers


async def test_the_model_sees_the_servers_tools_sorted_and_calls_one(project: Path, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"h": hostile()})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__h__echo", "arguments": {"text": "héllo ✓"}}]},
             {"text": "done"}]
    session, provider = session_with(project, agent_dir, turns)
    try:
        await session.prompt("go")
        names = tool_names(provider.requests[0])
        assert [n for n in names if n.startswith("mcp")] == [
            "mcp__h__big", "mcp__h__echo", "mcp__h__env", "mcp__h__fail", "mcp__h__hang", "mcp"]
        assert result_texts(session) == ["echo: héllo ✓"]
        assert provider.requests[0].system_prompt == provider.requests[1].system_prompt
    finally:
        await session.mcp.close()


async def test_an_error_result_is_a_tool_error(project: Path, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"h": hostile()})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__h__fail", "arguments": {}}]}, {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns)
    try:
        await session.prompt("go")
        result = next(m for m in session.messages if m["role"] == "toolResult")
        assert result["isError"] is True
        assert "it went wrong" in result["content"][0]["text"]
    finally:
        await session.mcp.close()


async def test_a_stdio_server_gets_no_provider_key_and_its_process_group_is_tracked(
        project: Path, agent_dir: Path, monkeypatch) -> None:
    from pi_tui.tools import shell

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-should-not-leak")
    write_servers(agent_dir / "mcp.json", {"h": hostile(env={"OWN": "mine"})})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__h__env", "arguments": {}}]}, {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns)
    try:
        await session.prompt("go")
        env = json.loads(result_texts(session)[0])
        assert env["OWN"] == "mine"
        assert "OPENAI_API_KEY" not in env and "sk-secret" not in json.dumps(env)
        assert set(env) <= {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "OWN", "LC_CTYPE"}
        pid = session.mcp.connections["h"].pid
        assert pid in shell._RUNNING_GROUPS
    finally:
        await session.mcp.close()
    assert pid not in shell._RUNNING_GROUPS


def _size(path: str) -> int:
    return os.path.getsize(path)


async def test_a_5_mb_result_is_cut_and_saved_whole(project: Path, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"h": hostile()})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__h__big", "arguments": {"mb": 5}}]}, {"text": "done"}]
    session, provider = session_with(project, agent_dir, turns)
    try:
        await session.prompt("go")
        text = result_texts(session)[0]
        assert len(text.encode()) < 60_000
        assert "Full output: " in text
        saved = text.rsplit("Full output: ", 1)[1].rstrip("]")
        assert _size(saved) == 5 * 1024 * 1024
        assert len(json.dumps(provider.requests[1].messages)) < 100_000
    finally:
        await session.mcp.close()


async def test_a_call_that_hangs_ends_at_the_tool_timeout_and_the_server_hears_the_cancel(
        project: Path, agent_dir: Path, tmp_path: Path, monkeypatch) -> None:
    cancel_file = tmp_path / "cancelled.jsonl"
    write_servers(agent_dir / "mcp.json", {"h": hostile(toolTimeoutMs=500, env={"CANCEL_FILE": str(cancel_file)})})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__h__hang", "arguments": {}}]}, {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns)
    try:
        await asyncio.wait_for(session.prompt("go"), 20)
        result = next(m for m in session.messages if m["role"] == "toolResult")
        assert result["isError"]
        assert "timed out after 0.5 s" in result["content"][0]["text"]
        for _ in range(50):
            if cancel_file.exists():
                break
            await asyncio.sleep(0.05)
        assert cancel_file.exists(), "the server never got notifications/cancelled"
    finally:
        await session.mcp.close()


async def test_an_abort_ends_a_hanging_call_and_cancels_it_on_the_server(
        project: Path, agent_dir: Path, tmp_path: Path) -> None:
    cancel_file = tmp_path / "cancelled.jsonl"
    write_servers(agent_dir / "mcp.json", {"h": hostile(env={"CANCEL_FILE": str(cancel_file)})})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__h__hang", "arguments": {}}]}, {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns)
    try:
        running = asyncio.ensure_future(session.prompt("go"))
        for _ in range(400):
            if any(m["role"] == "assistant" and m.get("stopReason") == "toolUse" for m in session.messages):
                break
            await asyncio.sleep(0.025)
        await asyncio.sleep(0.2)
        await session.abort()
        await asyncio.wait_for(running, 10)
        for _ in range(50):
            if cancel_file.exists():
                break
            await asyncio.sleep(0.05)
        assert cancel_file.exists(), "the server never got notifications/cancelled"
    finally:
        await session.mcp.close()


async def test_a_server_that_crashes_is_restarted_once_and_the_call_in_flight_fails_clearly(
        project: Path, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"h": hostile("crash", 1)})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__h__echo", "arguments": {"text": "one"}}]},
             {"tool_calls": [{"id": "c2", "name": "mcp__h__echo", "arguments": {"text": "two"}}]},
             {"tool_calls": [{"id": "c3", "name": "mcp__h__echo", "arguments": {"text": "three"}}]},
             {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns)
    try:
        await asyncio.wait_for(session.prompt("go"), 30)
        first, second, third = result_texts(session)
        assert first == "echo: one"
        assert "exited during the call to 'echo'" in second
        assert third == "echo: three" or "not connected" in third
        for _ in range(100):
            if session.mcp.connections["h"].status == "connected":
                break
            await asyncio.sleep(0.05)
        assert session.mcp.connections["h"].restarts == 1
    finally:
        await session.mcp.close()


async def test_garbage_on_stdout_and_a_stderr_flood_do_not_break_the_server_nor_reach_the_terminal(
        project: Path, agent_dir: Path, capfd) -> None:
    write_servers(agent_dir / "mcp.json", {"g": hostile("garbage"), "f": hostile("flood", 3)})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__g__echo", "arguments": {"text": "a"}},
                             {"id": "c2", "name": "mcp__f__echo", "arguments": {"text": "b"}}]}, {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns)
    try:
        await asyncio.wait_for(session.prompt("go"), 30)
        assert sorted(result_texts(session)) == ["echo: a", "echo: b"]
        log = session.mcp.connections["f"].log
        assert log.path.stat().st_size <= 2 * 1024 * 1024 + 200
        assert "log limit" in log.path.read_text()
    finally:
        await session.mcp.close()
    out, err = capfd.readouterr()
    assert "flood" not in err and "garbage" not in out


async def test_over_the_context_share_only_the_mcp_tool_is_given_and_it_reaches_every_tool(
        project: Path, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"h": hostile()})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp", "arguments": {"action": "search", "query": "echo"}}]},
             {"tool_calls": [{"id": "c2", "name": "mcp", "arguments": {"action": "describe", "tool": "mcp__h__echo"}}]},
             {"tool_calls": [{"id": "c3", "name": "mcp", "arguments": {"action": "call", "tool": "mcp__h__echo",
                                                                      "arguments": {"text": "via proxy"}}}]},
             {"text": "done"}]
    session, provider = session_with(project, agent_dir, turns, context_window=1000)
    notes: list[dict] = []
    session.subscribe(notes.append)
    try:
        await session.prompt("go")
        assert tool_names(provider.requests[0]) == ["read", "bash", "edit", "write", "mcp"]
        search, describe, call = result_texts(session)
        assert "mcp__h__echo: Echo the text back" in search
        assert json.loads(describe)["inputSchema"]["required"] == ["text"]
        assert call == "echo: via proxy"
        assert any("over 10% of the context window" in str(e.get("message")) for e in notes)
    finally:
        await session.mcp.close()


def test_pi_tui_mcp_add_list_remove(project: Path, agent_dir: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pi_tui", "mcp", *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=60)

    server = hostile()
    added = run("add", "h", "--env", "A=1", "--", server["command"], *server["args"])
    assert added.returncode == 0, added.stderr
    stored = json.loads((agent_dir / "mcp.json").read_text())["mcpServers"]["h"]
    assert stored == {"command": server["command"], "args": server["args"], "env": {"A": "1"}}
    listed = run("list", "--json")
    assert listed.returncode == 0, listed.stderr
    row = json.loads(listed.stdout)[0]
    assert (row["name"], row["status"], row["tools"]) == ("h", "connected", 5)
    assert row["toolTokens"] > 50 and "mcp__h__echo" in row["toolNames"]
    assert run("remove", "h").returncode == 0
    assert json.loads((agent_dir / "mcp.json").read_text())["mcpServers"] == {}
    assert run("remove", "h").returncode == 1
