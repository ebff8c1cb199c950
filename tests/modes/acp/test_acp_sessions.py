"""Sessions over ACP: a conversation started with ``pi-tui -p`` loaded in the editor (replayed)
and continued, then continued again with ``-p``; the configuration problems the editor is told
about (authentication), MCP servers declined politely, the permission setting, the session list."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.exceptions import RequestError

from pi_tui.testing.fake_server import FakeServer
from tests.modes.acp.conftest import EditorClient, acp_agent, agent_env, write_models


def _print_mode(agent_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pi_tui", *args], cwd=cwd, env=agent_env(agent_dir),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def _user_texts(request: dict[str, Any]) -> list[str]:
    texts = []
    for message in request["messages"]:
        if message["role"] == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
    return texts


async def test_a_print_mode_session_continues_in_the_editor_and_back(project: Path, agent_dir: Path) -> None:
    turns = [
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo from-print"}}]},
        {"text": "Printed it."},
        {"text": "Continued in the editor."},
        {"text": "Back in print mode."},
    ]
    editor = EditorClient()
    with FakeServer(turns) as server:
        write_models(agent_dir, server.base_url)
        first = _print_mode(agent_dir, project, "-p", "run echo")
        assert first.returncode == 0, first.stderr
        session_file, = (agent_dir / "sessions").rglob("*.jsonl")
        session_id = session_file.stem.split("_", 1)[1]
        async with acp_agent(editor, agent_dir, project) as conn:
            await conn.load_session(session_id=session_id, cwd=str(project), mcp_servers=[])
            answer = await conn.prompt(session_id=session_id, prompt=[text_block("and now?")])
        back = _print_mode(agent_dir, project, "--session", session_id, "-p", "and back?")
        assert back.returncode == 0, back.stderr
    assert answer.stop_reason == "end_turn"
    # the replay comes before the answer to session/load, the commands after it
    order = [f["params"]["update"]["sessionUpdate"] if f.get("method") == "session/update" else "ANSWER"
             for f in editor.frames]
    assert order[1:6] == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk", "ANSWER"]
    assert order[6] == "available_commands_update"
    assert editor.of_kind("user_message_chunk")[0].content.text == "run echo"
    replayed_call = editor.of_kind("tool_call_update")[0]
    assert replayed_call.status == "completed" and "from-print" in replayed_call.content[0].content.text
    assert editor.message_text().startswith("Printed it.")
    assert _user_texts(server.requests[2]) == ["run echo", "and now?"]  # the editor continued the -p session
    assert _user_texts(server.requests[3]) == ["run echo", "and now?", "and back?"]
    assert back.stdout.strip() == "Back in print mode."


async def test_loading_an_unknown_session_is_resource_not_found(project: Path, agent_dir: Path) -> None:
    editor = EditorClient()
    with FakeServer([]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            with pytest.raises(RequestError) as raised:
                await conn.load_session(session_id="0000-nope", cwd=str(project), mcp_servers=[])
            listed = await conn.list_sessions(cwd=str(project))
    assert raised.value.code == -32002
    assert "No session matching '0000-nope'" in raised.value.data["details"]
    assert listed.sessions == []


async def test_without_a_model_the_editor_is_told_what_to_set(project: Path, agent_dir: Path) -> None:
    editor = EditorClient()
    async with acp_agent(editor, agent_dir, project) as conn:
        methods = conn.init.auth_methods
        with pytest.raises(RequestError) as new:
            await conn.new_session(cwd=str(project), mcp_servers=[])
        with pytest.raises(RequestError) as auth:
            await conn.authenticate(method_id=methods[0].id)
    assert len(methods) == 1 and "No model selected" in (methods[0].description or "")
    assert new.value.code == -32000 and "No model selected" in new.value.data["details"]
    assert auth.value.code == -32000 and "models.json" in auth.value.data["details"]


async def test_the_editors_mcp_servers_are_started_and_the_setting_skips_questions(project: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"acp": {"askPermission": False}}))
    (project / ".pi").mkdir()  # a repository cannot switch the questions back off for the user...
    (project / ".pi" / "settings.json").write_text(json.dumps({"acp": {"askPermission": True}}))
    turns = [{"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "touch made"}}]}, {"text": "ok"}]
    editor = EditorClient()
    with FakeServer(turns) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            servers = [{"name": "github", "command": "gh-mcp-not-installed", "args": [], "env": []}]
            session = await conn.new_session(cwd=str(project), mcp_servers=servers)
            await conn.prompt(session_id=session.session_id, prompt=[text_block("make it")])
            listed = await conn.list_sessions(cwd=str(project))
    assert editor.permission_requests == []
    assert (project / "made").exists()
    assert "MCP server 'github' is not connected (failed: cannot start `gh-mcp-not-installed`: not found)" \
        in editor.message_text()
    assert [s.session_id for s in listed.sessions] == [session.session_id]


async def test_a_project_setting_cannot_switch_the_questions_off(project: Path, agent_dir: Path) -> None:
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text(json.dumps({"acp": {"askPermission": False}}))
    turns = [{"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "touch made"}}]}, {"text": "ok"}]
    editor = EditorClient(choices=["reject_once"])
    with FakeServer(turns) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("make it")])
    assert len(editor.permission_requests) == 1
    assert not (project / "made").exists()


def _place(agent_dir: Path, project: Path, session_id: str, text: str) -> None:
    """A session file where pi would keep it for ``project``."""
    from pi_tui.resources.locations import default_session_dir

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
        directory = default_session_dir(project)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl").write_text(text)


async def test_a_session_pi_wrote_and_a_damaged_one_load_and_continue(project: Path, agent_dir: Path,
                                                                      pi_fixtures: Path) -> None:
    """pi's own file (compactions, a model_change to a provider we have no key for) replays and
    continues on our model; a damaged copy (a line that is not JSON, an entry whose parent is
    missing, blocks of the wrong type, a cut last line) replays what is readable, and each
    problem reaches the editor as a notice naming the file and line."""
    original = (pi_fixtures / "v3-compact-manual.jsonl").read_text().splitlines()
    pi_id = json.loads(original[0])["id"]
    _place(agent_dir, project, pi_id, "\n".join(original) + "\n")
    damaged_id = "01a22a84-0000-7000-8000-00000000dead"
    damaged = [json.dumps({**json.loads(original[0]), "id": damaged_id}), *original[1:5], "{not json",
               '{"type":"message","id":"zz","parentId":"nope","message":{"role":"assistant","content":"str"}}',
               '{"type":"message","id":"yy","parentId":null,"message":{"role":"user","content":[{"type":"image"},5]}}',
               *original[5:9], original[9][:40]]
    _place(agent_dir, project, damaged_id, "\n".join(damaged))
    editor = EditorClient()
    with FakeServer([{"text": "Continued from pi."}, {"text": "Continued the damaged one."}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project, "--model", "fake/fake-model") as conn:
            await conn.load_session(session_id=pi_id, cwd=str(project), mcp_servers=[])
            first = await conn.prompt(session_id=pi_id, prompt=[text_block("go on")])
            replayed_pi = [u for sid, u in editor.updates if sid == pi_id]
            await conn.load_session(session_id=damaged_id, cwd=str(project), mcp_servers=[])
            second = await conn.prompt(session_id=damaged_id, prompt=[text_block("go on")])
    assert first.stop_reason == second.stop_reason == "end_turn"
    kinds = [u.session_update for u in replayed_pi]
    assert kinds.count("user_message_chunk") >= 3 and "tool_call" in kinds
    pi_text = "".join(u.content.text for u in replayed_pi if u.session_update == "agent_message_chunk")
    assert "> Context compacted here:" in pi_text and pi_text.endswith("Continued from pi.")
    damaged_text = "".join(u.content.text for sid, u in editor.updates
                           if sid == damaged_id and u.session_update == "agent_message_chunk")
    for problem in (":6: ", "parent nope is not in the file", "is a number, expected a content block"):
        assert problem in damaged_text, problem
    assert damaged_text.endswith("Continued the damaged one.")
    assert _user_texts(server.requests[1])[-1] == "go on"


async def test_two_sessions_answer_at_once_each_in_its_own_stream(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    slow = {"text": "word " * 30, "chunk_size": 5, "chunk_delay_ms": 20}
    editor = EditorClient()
    with FakeServer([dict(slow, when={"last_user_contains": "A"}), dict(slow, text="other " * 30)]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            a = await conn.new_session(cwd=str(project), mcp_servers=[])
            b = await conn.new_session(cwd=str(other), mcp_servers=[])
            answers = await asyncio.gather(conn.prompt(session_id=a.session_id, prompt=[text_block("A")]),
                                           conn.prompt(session_id=b.session_id, prompt=[text_block("B")]))
    assert [answer.stop_reason for answer in answers] == ["end_turn", "end_turn"]
    streamed = dict.fromkeys((a.session_id, b.session_id), "")
    for sid, update in editor.updates:
        if update.session_update == "agent_message_chunk":
            streamed[sid] += update.content.text
    assert streamed == {a.session_id: slow["text"], b.session_id: "other " * 30}
    assert {json.loads(f.read_text().splitlines()[0])["cwd"] for f in (agent_dir / "sessions").rglob("*.jsonl")} == {
        str(project), str(other)}
