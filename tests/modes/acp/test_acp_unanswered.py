"""An editor that never answers one of pi-tui's requests (hung, buggy, or busy elsewhere) must not
hold a turn for good: every wait on the editor either has a bound or ends at ``session/cancel``.

* the permission question's preview reads the file through ``fs/read_text_file`` before asking:
  unanswered, the question comes anyway after a few seconds (with the edited pieces as the diff),
  and ``session/cancel`` ends the turn at once;
* ``terminal/release`` carries nothing pi-tui needs: unanswered, neither a finished command nor a
  cancelled one waits for it.

(The question itself is left open for as long as the person takes; ``session/cancel`` ends it:
``test_acp_turns.test_cancel_ends_the_turn_even_if_the_editor_never_answers_the_question``.)
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path
from typing import Any

from acp import text_block

from pi_tui.modes.acp.permissions import PREVIEW_READ_TIMEOUT
from pi_tui.modes.shutdown import HARD_EXIT_SECONDS
from pi_tui.testing.fake_server import FakeServer
from tests.modes.acp.conftest import EditorClient, acp_agent, cancel_when, write_models


def _edit(call_id: str, path: str, old: str, new: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "edit", "arguments": {"path": path, "edits": [
        {"oldText": old, "newText": new}]}}]}


async def test_cancel_ends_a_turn_whose_preview_read_is_never_answered(project: Path, agent_dir: Path) -> None:
    target = project / "app.py"
    target.write_text("x = 1\n")
    buffers = {str(target): "x = 1\n"}
    editor = EditorClient(buffers=buffers, choices=["allow_once"], unanswered={"fs/read_text_file": 1})
    with FakeServer([_edit("e1", "app.py", "x = 1", "x = 2"), {"text": "unused"}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
            answer, elapsed = await cancel_when(conn, session.session_id, turn, lambda: editor.fs_calls)
    assert answer.stop_reason == "cancelled" and elapsed < 1.0, elapsed
    assert editor.permission_requests == [] and buffers[str(target)] == "x = 1\n"
    assert len(server.requests) == 1  # no model call after the cancel
    final = editor.of_kind("tool_call_update")[-1]
    assert final.tool_call_id == "e1" and final.status == "failed"


async def test_an_unanswered_preview_read_still_lets_the_question_come(project: Path, agent_dir: Path) -> None:
    target = project / "app.py"
    buffers = {str(target): "x = 1\ny = 1\n"}
    editor = EditorClient(buffers=buffers, choices=["allow_once"], unanswered={"fs/read_text_file": 1})
    with FakeServer([_edit("e1", "app.py", "x = 1", "x = 2"), {"text": "Done."}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            started = time.monotonic()
            answer = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]), 30)
            elapsed = time.monotonic() - started
    assert answer.stop_reason == "end_turn" and elapsed < PREVIEW_READ_TIMEOUT + 10, elapsed
    (question, _options), = editor.permission_requests
    diff = question.content[0]  # the edited piece: the whole file could not be read in time
    assert diff.type == "diff" and diff.old_text == "x = 1" and diff.new_text == "x = 2"
    assert buffers[str(target)] == "x = 2\ny = 1\n"  # the edit itself read the buffer (answered) and ran


async def test_an_unanswered_terminal_release_holds_no_turn(project: Path, agent_dir: Path) -> None:
    script = [{"tool_calls": [{"id": "t1", "name": "bash", "arguments": {"command": "echo hi"}}]}, {"text": "ok"},
              {"tool_calls": [{"id": "t2", "name": "bash", "arguments": {"command": "sleep 30"}}]}, {"text": "unused"}]
    editor = EditorClient(terminals={}, choices=["allow_always"], unanswered={"terminal/release": 2})
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            first = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("one")]), 10)
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("two")]))
            second, elapsed = await cancel_when(conn, session.session_id, turn,
                                                lambda: editor.terminal_calls.count("wait") == 2)
    assert first.stop_reason == "end_turn" and "hi" in str(server.requests[1]["messages"][-1])
    assert second.stop_reason == "cancelled" and elapsed < 1.0, elapsed
    assert editor.terminal_calls.count("release") == 2 and "kill" in editor.terminal_calls


async def test_sigterm_with_a_question_left_open_ends_cleanly(project: Path, agent_dir: Path) -> None:
    """The editor stops the agent (SIGTERM) while a permission question it never answers is open:
    pi-tui stops waiting for it, records the blocked call, and exits 143 within the abort grace —
    not by the hard-exit backstop, which skips the session's clean shutdown."""
    editor = EditorClient()
    asked = asyncio.Event()

    async def leave_it_open() -> None:
        asked.set()
        await asyncio.Event().wait()

    editor.on_permission = leave_it_open
    with FakeServer([{"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "touch never"}}]},
                     {"text": "unused"}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
            await asyncio.wait_for(asked.wait(), 30)
            started = time.monotonic()
            conn.process.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(conn.process.wait(), 10)
            took = time.monotonic() - started
            turn.cancel()
    assert code == 143 and took < HARD_EXIT_SECONDS - 1, (code, took)
    assert not (project / "never").exists() and len(server.requests) == 1
    session_file, = (agent_dir / "sessions").rglob(f"*_{session.session_id}.jsonl")
    entries = [json.loads(line) for line in session_file.read_text().splitlines()]
    results = [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult"]
    assert [r["toolCallId"] for r in results] == ["c1"] and results[0]["isError"]
