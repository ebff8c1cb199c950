"""What ``--tools``/``--no-tools`` do to MCP tools, the prompts' argument parsing, elicitation
forms (typed answers), and headless sessions declining an elicitation from the real
server-everything."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pi_tui.mcp.connection import PromptSpec
from pi_tui.mcp.elicitation import answers, form_fields
from pi_tui.mcp.prompts import argument_hint, parse_arguments
from pi_tui.testing.fake_server import FakeServer
from tests.mcp.conftest import (
    EVERYTHING,
    hostile,
    need,
    result_texts,
    session_with,
    tool_names,
    write_servers,
)
from tests.modes.test_print_mode import _agent_dir, _run


async def test_no_tools_means_no_mcp_tools_either_and_tools_can_name_them(project: Path, agent_dir: Path) -> None:
    write_servers(agent_dir / "mcp.json", {"h": hostile("normal")})
    session, provider = session_with(project, agent_dir, [{"text": "hi"}], active_tools=[])
    try:
        await session.prompt("go")
        assert tool_names(provider.requests[0]) == []
        assert session.mcp.connections["h"].status == "connected"  # its prompts and /mcp still work
        assert "mcp__h__echo" in session.get_all_tools()  # registered, not active
    finally:
        await session.mcp.close()

    session, provider = session_with(project, agent_dir, [{"text": "hi"}], active_tools=["read", "mcp__h__echo", "mcp"])
    try:
        await session.prompt("go")
        assert tool_names(provider.requests[0]) == ["read", "mcp__h__echo", "mcp"]
    finally:
        await session.mcp.close()


def test_the_cli_accepts_mcp_names_in_tools_and_no_tools_sends_none(tmp_path: Path, project: Path) -> None:
    with FakeServer([{"text": "one"}, {"text": "two"}]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        write_servers(agent / "mcp.json", {"h": hostile("normal")})
        named = _run(["-p", "--tools", "read,mcp__h__echo", "hi"], agent, project)
        none = _run(["-p", "--no-tools", "hi"], agent, project)
        requests = server.requests
    assert named.returncode == 0, named.stderr
    assert none.returncode == 0, none.stderr
    assert [t["function"]["name"] for t in requests[0]["tools"]] == ["read", "mcp__h__echo"]
    assert not requests[1].get("tools")


async def test_annotations_inform_the_permission_gate_and_never_allow(project: Path, agent_dir: Path) -> None:
    from pi_tui.permissions.setup import PermissionOptions

    write_servers(agent_dir / "mcp.json", {"h": hostile("normal")})
    turns = [{"tool_calls": [{"id": "c1", "name": "mcp__h__fail", "arguments": {}},
                             {"id": "c2", "name": "mcp__h__echo", "arguments": {"text": "x"}}]}, {"text": "ok"}]
    session, _provider = session_with(project, agent_dir, turns, permissions=PermissionOptions(mode="plan"))
    try:
        await session.prompt("go")
        destructive, read_only = result_texts(session)
    finally:
        await session.mcp.close()
    assert "plan mode is read-only: mcp__h__fail's server marks it destructive" in destructive
    assert "its server says it only reads: a claim, not a guarantee" in read_only  # still asked: denied headless
    assert "echo: x" not in read_only


def test_prompt_arguments_by_name_and_by_position() -> None:
    spec = PromptSpec("args-prompt", "", [{"name": "city", "required": True}, {"name": "state"}])
    assert argument_hint(spec) == "<city> [state]"
    assert parse_arguments(spec, '"São Paulo" SP') == {"city": "São Paulo", "state": "SP"}
    assert parse_arguments(spec, "state=TX city=Austin") == {"city": "Austin", "state": "TX"}
    assert parse_arguments(spec, "state=TX Austin") == {"city": "Austin", "state": "TX"}
    with pytest.raises(ValueError, match="needs city"):
        parse_arguments(spec, "state=TX")
    with pytest.raises(ValueError, match="'extra' is one too many"):
        parse_arguments(spec, "a b extra")
    with pytest.raises(ValueError, match="No closing quotation"):
        parse_arguments(spec, '"open')


def test_an_elicitation_form_types_the_answers_as_its_schema_asks() -> None:
    schema = {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string", "description": "Your name"},
        "check": {"type": "boolean"},
        "count": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "ratio": {"type": "number"},
        "friend": {"type": "string", "enum": ["Monica", "Joey"]},
        "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}]},
        "fish": {"type": "array", "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}]}},
    }}
    fields = form_fields(schema)
    assert [f.kind for f in fields] == ["string", "boolean", "integer", "number", "choice", "choice", "choices"]
    assert fields[2].initial_text() == "42"
    content, problems = answers(fields, {"name": "Ada", "check": "yes", "count": "7", "ratio": "0.5",
                                         "friend": "joey", "hero": "Superman", "fish": "Tuna, f2"})
    assert problems == {}
    assert content == {"name": "Ada", "check": True, "count": 7, "ratio": 0.5, "friend": "Joey", "hero": "hero-1",
                       "fish": ["f1", "f2"]}
    _content, problems = answers(fields, {"check": "maybe", "count": "500", "friend": "Ross"})
    assert set(problems) == {"name", "check", "count", "friend"}
    assert problems["name"] == "required" and "≤ 100" in problems["count"]


async def test_a_headless_session_declines_an_elicitation(project: Path, agent_dir: Path) -> None:
    need(EVERYTHING)
    write_servers(agent_dir / "mcp.json", {"ev": {"command": str(EVERYTHING), "args": ["stdio"]}})
    turns = [{"tool_calls": [{"id": "e1", "name": "mcp__ev__trigger-elicitation-request", "arguments": {}}]},
             {"text": "ok"}]
    session, _provider = session_with(project, agent_dir, turns)
    try:
        await asyncio.wait_for(session.prompt("go"), 60)
        text = result_texts(session)[0]
        assert "declined" in text and '"action": "decline"' in text
    finally:
        await session.mcp.close()


def test_print_mode_declines_an_elicitation_without_waiting(tmp_path: Path, project: Path) -> None:
    need(EVERYTHING)
    with FakeServer([{"tool_calls": [{"id": "e1", "name": "mcp__ev__trigger-elicitation-request", "arguments": {}}]},
                     {"text": "done"}]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        write_servers(agent / "mcp.json", {"ev": {"command": str(EVERYTHING), "args": ["stdio"]}})
        out = _run(["-p", "go"], agent, project)
        sent = json.dumps(server.requests[1]["messages"])
    assert out.returncode == 0, out.stderr
    assert out.stdout == "done\n"
    assert "User declined" in sent

