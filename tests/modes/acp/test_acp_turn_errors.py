"""What goes wrong during a prompt turn over ACP, against a real ``pi-tui --mode acp``: a provider
error that survived the retries is the prompt's JSON-RPC error and the session goes on; a second
prompt while one runs is refused; an editor answering a permission question with an error or an
option it was not offered gets the call rejected, never run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import text_block
from acp.exceptions import RequestError

from pi_tui.testing.fake_server import FakeServer
from tests.modes.acp.conftest import EditorClient, acp_agent, cancel_when, wait_during, write_models


async def test_a_provider_error_is_the_prompts_error_and_the_session_goes_on(project: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1}}))
    turns = [{"error": {"status": 400, "message": "model fake-model does not accept this request"}},
             {"text": "Fine now."}]
    editor = EditorClient()
    with FakeServer(turns) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            with pytest.raises(RequestError) as failed:
                await conn.prompt(session_id=session.session_id, prompt=[text_block("one")])
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("two")])
            assert conn.process.returncode is None
    assert failed.value.code == -32603
    assert "does not accept this request" in failed.value.data["details"]
    assert answer.stop_reason == "end_turn" and editor.message_text().endswith("Fine now.")
    assert len(server.requests) == 2  # a 400 is not retried


async def test_a_second_prompt_while_one_runs_is_refused(project: Path, agent_dir: Path) -> None:
    slow = {"text": "word " * 200, "chunk_size": 5, "chunk_delay_ms": 100}
    editor = EditorClient()
    with FakeServer([slow, {"text": "after"}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("talk")]))
            await wait_during(turn, lambda: editor.of_kind("agent_message_chunk"))
            with pytest.raises(RequestError) as refused:
                await conn.prompt(session_id=session.session_id, prompt=[text_block("me too")])
            await conn.cancel(session_id=session.session_id)
            first = await asyncio.wait_for(turn, 10)
            after = await conn.prompt(session_id=session.session_id, prompt=[text_block("now")])
    assert refused.value.code == -32600 and "already answering" in refused.value.data["details"]
    assert first.stop_reason == "cancelled" and after.stop_reason == "end_turn"
    assert "me too" not in json.dumps(server.requests)


@pytest.mark.parametrize("answer", ["error", "maybe"])
async def test_a_broken_permission_answer_rejects_the_call(project: Path, agent_dir: Path, answer: str) -> None:
    script = [{"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "touch made"}}]}, {"text": "ok"}]
    editor = EditorClient(choices=[answer])
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            result = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
            stderr = conn.stderr_log.read_text()
    assert result.stop_reason == "end_turn" and not (project / "made").exists()
    tool_result = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "The user rejected this bash call; it did not run." in str(tool_result)
    assert "treated as rejected" in stderr


async def test_cancel_stops_a_compaction_within_a_second(project: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 50}}))
    slow_summary = {"text": "## Goal\n" + "summary " * 300, "chunk_size": 8, "chunk_delay_ms": 100}
    turns = [{"text": "First answer. " * 50}, {"text": "Second answer. " * 50}, slow_summary, {"text": "unused"}]
    editor = EditorClient()
    with FakeServer(turns) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            for text in ("one", "two"):
                await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("/compact")]))
            await wait_during(turn, lambda: len(server.requests) >= 3)
            await asyncio.sleep(0.3)  # the summary is streaming
            answer, elapsed = await cancel_when(conn, session.session_id, turn, lambda: True)
    assert answer.stop_reason == "cancelled" and elapsed < 1.0, elapsed
    assert "> Context compacted:" not in editor.message_text()
    session_file, = (agent_dir / "sessions").rglob(f"*_{session.session_id}.jsonl")
    assert not any(json.loads(line)["type"] == "compaction" for line in session_file.read_text().splitlines())


async def test_cancel_ends_a_retry_wait_within_a_second(project: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 30000}}))
    editor = EditorClient()
    with FakeServer([{"error": {"status": 503, "message": "upstream busy"}}, {"text": "unused"}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
            answer, elapsed = await cancel_when(conn, session.session_id, turn, lambda: "> Retrying in" in editor.message_text())
    assert answer.stop_reason == "cancelled" and elapsed < 1.0, elapsed
    assert len(server.requests) == 1
