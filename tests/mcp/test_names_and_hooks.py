"""The names the model sees (sanitized, capped at 64 with a hash, a collision reported like other
tool conflicts) and the extension ``tool_call`` / ``tool_result`` hooks on MCP calls."""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path
from typing import Any

from tests.mcp.conftest import hostile, result_texts, session_with, tool_names, write_servers

LONG = "t" * 80


def _long_name(server: str) -> str:
    digest = hashlib.sha256(f"{server}\0{LONG}".encode()).hexdigest()[:8]
    return f"mcp__{server}__{LONG}"[:55] + "_" + digest


async def test_names_are_sanitized_capped_with_a_hash_and_a_collision_is_reported(
        project: Path, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"n": hostile("names"), "a b": hostile(), "a_b": hostile(includeTools=["echo"])})
    long_name = _long_name("n")
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"id": "c1", "name": "mcp__n__a_b_c", "arguments": {}},
                        {"id": "c2", "name": long_name, "arguments": {}},
                        {"id": "c3", "name": "mcp__a_b__echo", "arguments": {"text": "who"}}]},
        {"text": "done"}]
    session, provider = session_with(project, agent_dir, turns)
    notes: list[dict[str, Any]] = []
    session.subscribe(notes.append)
    try:
        await session.prompt("go")
        names = tool_names(provider.requests[0])
        assert len(long_name) == 64 and long_name in names
        assert "mcp__n__a_b_c" in names
        assert names.count("mcp__a_b__echo") == 1
        assert all(len(n) <= 64 for n in names)
        assert result_texts(session) == ["a.b c: ok", f"{LONG}: ok", "echo: who"]
        warnings = [e["message"] for e in notes if e.get("type") == "notify" and e.get("level") == "warning"]
        assert ("MCP tool a_b/echo: the name mcp__a_b__echo is also a b/echo's; not added "
                "(call it through the mcp tool)") in warnings
    finally:
        await session.mcp.close()


HOOKS = """
    def register(pi):
        @pi.on("tool_call")
        def gate(event):
            if event["toolName"] == "mcp__h__env":
                return {"block": True, "reason": "no env for you"}

        @pi.on("tool_result")
        def rewrite(event):
            if event["toolName"] == "mcp__h__echo":
                text = event["content"][0]["text"]
                return {"content": [{"type": "text", "text": text.upper()}], "details": {"seen": event["input"]}}
"""


async def test_extension_hooks_block_an_mcp_call_and_rewrite_an_mcp_result(
        project: Path, agent_dir: Path, tmp_path: Path) -> None:
    extension = tmp_path / "ext.py"
    extension.write_text(textwrap.dedent(HOOKS), encoding="utf-8")
    write_servers(agent_dir / "mcp.json", {"h": hostile()})
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"id": "c1", "name": "mcp__h__env", "arguments": {}},
                        {"id": "c2", "name": "mcp__h__echo", "arguments": {"text": "quiet"}}]},
        {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns, extension_paths=[str(extension)])
    try:
        await session.prompt("go")
        results = {m["toolCallId"]: m for m in session.messages if m["role"] == "toolResult"}
        assert results["c1"]["isError"] and "no env for you" in results["c1"]["content"][0]["text"]
        assert "HOME" not in results["c1"]["content"][0]["text"]
        assert results["c2"]["content"] == [{"type": "text", "text": "ECHO: QUIET"}]
        assert results["c2"]["details"] == {"seen": {"text": "quiet"}}
    finally:
        await session.mcp.close()


async def test_a_block_on_a_server_tool_holds_when_it_is_called_through_the_mcp_tool(
        project: Path, agent_dir: Path, tmp_path: Path) -> None:
    """``mcp`` action=call runs ``mcp__h__env``: the extension that blocks that name sees it (it
    saw only ``mcp`` before, and the server's environment came back)."""
    extension = tmp_path / "ext.py"
    extension.write_text(textwrap.dedent(HOOKS), encoding="utf-8")
    write_servers(agent_dir / "mcp.json", {"h": hostile()})
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"id": "c1", "name": "mcp", "arguments": {"action": "call", "tool": "mcp__h__env"}},
                        {"id": "c2", "name": "mcp", "arguments": {"action": "call", "tool": "mcp__h__echo",
                                                                   "arguments": {"text": "fine"}}}]},
        {"text": "done"}]
    session, _provider = session_with(project, agent_dir, turns, extension_paths=[str(extension)])
    try:
        await session.prompt("go")
        results = {m["toolCallId"]: m for m in session.messages if m["role"] == "toolResult"}
        assert results["c1"]["isError"] and "no env for you" in results["c1"]["content"][0]["text"]
        assert "HOME" not in results["c1"]["content"][0]["text"]
        assert not results["c2"]["isError"] and "fine" in results["c2"]["content"][0]["text"].lower()
    finally:
        await session.mcp.close()
