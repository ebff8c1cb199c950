"""Prompt turns over ACP against a real ``pi-tui --mode acp``: streamed thoughts and text, tool
calls with their permission question (each answer), edits shown as diffs, the client's buffers
as the file system, cancel mid-stream, ``/compact``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from acp import text_block

from pi_tui.testing.fake_server import FakeServer
from tests.modes.acp.conftest import EditorClient, acp_agent, cancel_when, write_models
from tests.reliability.pi_process import live_in_group, wait_until


def _bash(call_id: str, command: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "bash", "arguments": {"command": command}}]}


def _last_tool_result(request: dict[str, Any]) -> str:
    return str([m for m in request["messages"] if m["role"] == "tool"][-1]["content"])


async def test_a_tool_call_asks_first_and_streams_its_progress(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    script = [{"thinking": "Let me look.", **_bash("call_1", "echo hello")}, {"text": "It printed hello."}]
    editor = EditorClient(choices=["allow_once"])
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            assert conn.init.protocol_version == 1
            caps = conn.init.agent_capabilities
            assert caps.load_session and caps.prompt_capabilities.image and caps.prompt_capabilities.embedded_context
            assert conn.init.auth_methods == []
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("run echo")])
    assert answer.stop_reason == "end_turn"
    assert editor.message_text("agent_thought_chunk") == "Let me look."
    assert editor.message_text() == "It printed hello."
    (tool_call, options), = editor.permission_requests
    assert tool_call.tool_call_id == "call_1" and tool_call.kind == "execute" and tool_call.title == "`echo hello`"
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    calls = [u for u in editor.of_kind("tool_call") + editor.of_kind("tool_call_update") if u.tool_call_id == "call_1"]
    assert [u.status for u in calls if u.status] == ["pending", "in_progress", "completed"]
    assert calls[-1].content[0].content.text == "hello\n"
    assert "hello" in _last_tool_result(server.requests[1])
    kinds = editor.kinds()
    assert kinds[0] == "available_commands_update"
    assert kinds.index("tool_call") < kinds.index("agent_message_chunk")
    files = list((agent_dir / "sessions").rglob(f"*_{session.session_id}.jsonl"))
    assert len(files) == 1  # the ACP session id is pi's session id


async def test_allow_always_is_remembered_for_the_session(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    script = [_bash("c1", "echo one"), {"text": "one"}, _bash("c2", "echo two"), {"text": "two"},
              _bash("c3", "echo three"), {"text": "three"}]
    editor = EditorClient(choices=["allow_always", "allow_once"])
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("first")])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("second")])
            assert len(editor.permission_requests) == 1
            other = await conn.new_session(cwd=str(project), mcp_servers=[])  # another session asks again
            await conn.prompt(session_id=other.session_id, prompt=[text_block("third")])
    assert len(editor.permission_requests) == 2
    assert "two" in _last_tool_result(server.requests[3]) and "three" in _last_tool_result(server.requests[5])


async def test_reject_once_and_reject_always(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    script = [_bash("c1", "touch one"), {"text": "ok"}, _bash("c2", "touch two"), {"text": "ok"},
              _bash("c3", "touch three"), {"text": "ok"}, _bash("c4", "touch four"), {"text": "ok"}]
    editor = EditorClient(choices=["reject_once", "reject_always"])
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            for text in ("1", "2", "3", "4"):
                answer = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
                assert answer.stop_reason == "end_turn"
    assert len(editor.permission_requests) == 2  # the third and fourth were rejected by "always"
    assert not any((project / name).exists() for name in ("one", "two", "three", "four"))
    failed = [u for u in editor.of_kind("tool_call_update") if u.status == "failed"]
    assert [u.tool_call_id for u in failed] == ["c1", "c2", "c3", "c4"]
    for index in (1, 3, 5, 7):
        assert "The user rejected this bash call; it did not run." in _last_tool_result(server.requests[index])


async def test_an_edit_is_asked_and_shown_as_a_whole_file_diff(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    target = project / "app.py"
    target.write_text("def main():\n    return 1\n")
    edit = {"tool_calls": [{"id": "e1", "name": "edit", "arguments": {
        "path": "app.py", "edits": [{"oldText": "return 1", "newText": "return 2"}]}}]}
    editor = EditorClient(choices=["allow_once"])
    with FakeServer([edit, {"text": "Changed."}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("change it")])
    (tool_call, _options), = editor.permission_requests
    assert tool_call.kind == "edit"
    diff = tool_call.content[0]
    assert diff.type == "diff" and diff.path == str(target)
    assert diff.old_text == "def main():\n    return 1\n" and diff.new_text == "def main():\n    return 2\n"
    assert target.read_text() == "def main():\n    return 2\n"
    done = next(u for u in editor.of_kind("tool_call_update") if u.status == "completed")
    assert done.locations[0].path == str(target) and done.locations[0].line == 2


async def test_files_go_through_the_editors_buffers(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    target = project / "notes.md"
    target.write_text("saved text\n")
    buffers = {str(target): "unsaved text\n"}
    turns = [
        {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.md"}}]},
        {"tool_calls": [{"id": "e1", "name": "edit", "arguments": {
            "path": "notes.md", "edits": [{"oldText": "unsaved", "newText": "edited"}]}}]},
        {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "new.md", "content": "fresh\n"}}]},
        {"text": "Done."},
    ]
    editor = EditorClient(buffers=buffers, choices=["allow_always", "allow_always"])
    with FakeServer(turns) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("edit notes")])
    assert "unsaved text" in _last_tool_result(server.requests[1])  # the model read the buffer
    assert buffers[str(target)] == "edited text\n"
    assert buffers[str(project / "new.md")] == "fresh\n"
    assert target.read_text() == "saved text\n" and not (project / "new.md").exists()  # the disk is the editor's job
    assert ("write", str(target)) in editor.fs_calls and ("read", str(target)) in editor.fs_calls
    edit_question = editor.permission_requests[0][0]
    assert edit_question.content[0].old_text == "unsaved text\n"  # the diff is against the buffer
    write_question = editor.permission_requests[1][0]  # a new file: a diff from nothing
    diff = write_question.content[0]
    assert write_question.kind == "edit" and diff.type == "diff" and diff.path == str(project / "new.md")
    assert diff.old_text is None and diff.new_text == "fresh\n"


async def test_cancel_stops_the_stream_within_a_second(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    slow = {"text": "word " * 200, "chunk_size": 5, "chunk_delay_ms": 100}
    editor = EditorClient()
    with FakeServer([slow]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("talk")]))
            answer, elapsed = await cancel_when(conn, session.session_id, turn,
                                                lambda: editor.of_kind("agent_message_chunk"))
            streamed = len(editor.message_text())
            await asyncio.sleep(0.5)
            assert len(editor.message_text()) == streamed  # nothing after the answer
    assert answer.stop_reason == "cancelled"
    assert elapsed < 1.0, f"cancel took {elapsed:.2f} s"
    assert streamed < len(slow["text"])


async def test_compact_runs_from_the_prompt_with_its_events(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    turns = [{"text": "First answer. " * 50}, {"text": "Second answer. " * 50}, {"text": "## Goal\nSummary of the talk."},
             {"text": "## Goal\nSummary of the turn prefix."}]
    editor = EditorClient()
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 50}}))
    with FakeServer(turns) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("one")])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("two")])
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("/compact keep the goal")])
    assert answer.stop_reason == "end_turn"
    text = editor.message_text()
    assert "> Compacting the context…" in text
    assert "> Context compacted:" in text
    summaries = [json.dumps(r) for r in server.requests[2:]]  # the two summary calls run at once: either may arrive first
    assert any("keep the goal" in s for s in summaries)  # the instructions reached the summary call
    names = [c.name for c in editor.of_kind("available_commands_update")[0].available_commands]
    assert names[:2] == ["compact", "template"]
    session_file, = (agent_dir / "sessions").rglob(f"*_{session.session_id}.jsonl")
    entries = [json.loads(line) for line in session_file.read_text().splitlines()]
    assert any(e["type"] == "compaction" and "Summary of the talk" in e["summary"] for e in entries)


async def test_bash_runs_in_the_editors_terminal(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    script = [_bash("t1", "echo in-terminal; exit 3"), {"text": "It failed."},
              {"tool_calls": [{"id": "t2", "name": "bash", "arguments": {"command": "sleep 30", "timeout": 1}}]},
              {"text": "It timed out."}]
    editor = EditorClient(terminals={}, choices=["allow_always"])
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("run it")])
            started = time.monotonic()
            await conn.prompt(session_id=session.session_id, prompt=[text_block("wait")])
            waited = time.monotonic() - started
    assert _last_tool_result(server.requests[1]) == "in-terminal\n\n\nCommand exited with code 3"
    assert "Command timed out after 1 seconds" in _last_tool_result(server.requests[3]) and waited < 15
    embedded = [u for u in editor.of_kind("tool_call_update") if u.content and u.content[0].type == "terminal"]
    assert [u.tool_call_id for u in embedded] == ["t1", "t2"]
    final = [u for u in editor.of_kind("tool_call_update") if u.status == "failed"]
    assert [u.tool_call_id for u in final] == ["t1", "t2"] and all(u.content is None for u in final)  # the terminal stays
    assert editor.terminal_calls == ["create", "wait", "output", "release", "create", "wait", "kill", "output", "release"]


async def test_cancel_while_a_permission_question_is_open(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    editor = EditorClient(choices=["cancelled"])
    conn_box: list[Any] = []

    async def cancel_first() -> None:  # the user presses stop while the question is shown
        await conn_box[0].cancel(session_id=conn_box[1])
        await asyncio.sleep(0.2)

    editor.on_permission = cancel_first
    with FakeServer([_bash("c1", "touch never"), {"text": "unused"}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            conn_box += [conn, session.session_id]
            answer = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]), 10)
    assert answer.stop_reason == "cancelled"
    assert not (project / "never").exists()
    assert len(server.requests) == 1  # no model call after the cancel


def _group_ends(pgid: int) -> bool:
    """No live process is left in the group within a second (zombies do not count)."""
    return wait_until(lambda: not live_in_group(pgid), 1.0)


async def test_cancel_stops_a_running_bash_within_a_second(project: Path, agent_dir: Path) -> None:
    """Local ``bash`` and ``bash`` in the editor's terminal: the command is killed, the prompt
    answers ``cancelled``, nothing is sent after the answer, the model is not called again."""
    pidfile = project / "pid"
    for terminals in (None, {}):
        pidfile.unlink(missing_ok=True)
        editor = EditorClient(choices=["allow_once"], terminals=terminals)
        with FakeServer([_bash("c1", "echo $$ > pid; sleep 30; touch after"), {"text": "unused"}]) as server:
            write_models(agent_dir, server.base_url)
            async with acp_agent(editor, agent_dir, project) as conn:
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
                answer, elapsed = await cancel_when(conn, session.session_id, turn,
                                                     lambda: pidfile.exists() and pidfile.read_text().strip())
                sent = len(editor.updates)
                await asyncio.sleep(0.5)
                assert len(editor.updates) == sent  # nothing after the answer
        assert answer.stop_reason == "cancelled" and elapsed < 1.0, (terminals, elapsed)
        pgid = int(pidfile.read_text())  # the shell leads its own process group (sleep is in it)
        assert _group_ends(pgid) and not (project / "after").exists()
        assert len(server.requests) == 1
        final = editor.of_kind("tool_call_update")[-1]
        assert final.tool_call_id == "c1" and final.status == "failed"
        if terminals is not None:
            assert "kill" in editor.terminal_calls and editor.terminal_calls[-1] == "release"


async def test_retries_and_overflow_recovery_are_shown_as_agent_messages(project: Path, agent_dir: Path) -> None:
    """A retried 503, then an overflow answered by compaction and a retried request: each is a
    quoted paragraph of the agent's message, in order, before the recovered answer."""
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1},
                                                         "compaction": {"keepRecentTokens": 20}}))
    overflow = "This model's maximum context length is 8000 tokens. However, your messages resulted in 9234 tokens."
    summary = {"system_contains": "You summarize conversations"}
    turns = [{"text": "First answer. " * 400},
             {"error": {"status": 503, "message": "upstream busy"}}, {"text": "Second answer. " * 10},
             {"error": {"status": 400, "code": "context_length_exceeded", "message": overflow}},
             {"when": summary, "text": "## Goal\nSummary."}, {"text": "Recovered."}]
    editor = EditorClient()
    with FakeServer(turns) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            for text in ("one", "two"):
                await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("three " * 30)])
    assert answer.stop_reason == "end_turn"
    text = editor.message_text()
    notices = ["> Retrying in 0.001 s (attempt 1 of 3) after: 503 upstream busy",
               "> Compacting the context (the model said the context is too long)…",
               "> Context compacted:"]
    positions = [text.find(notice) for notice in notices]
    assert -1 not in positions and positions == sorted(positions), text[-1500:]
    assert text.endswith("Recovered.")


async def test_cancel_while_the_editor_is_starting_the_terminal(project: Path, agent_dir: Path) -> None:
    """The command already runs in the editor's terminal before ``terminal/create`` is answered:
    a cancel in between still kills and releases that terminal once its id arrives."""
    pidfile = project / "pid"
    editor = EditorClient(choices=["allow_once"], terminals={}, create_delay=1.0)
    with FakeServer([_bash("c1", "echo $$ > pid; sleep 30; touch after"), {"text": "unused"}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
            answer, _elapsed = await cancel_when(conn, session.session_id, turn,
                                                  lambda: pidfile.exists() and pidfile.read_text().strip())
            assert editor.terminal_calls == ["create", "kill", "release"]  # before the prompt's answer
    pgid = int(pidfile.read_text())
    try:
        assert answer.stop_reason == "cancelled" and len(server.requests) == 1
        assert _group_ends(pgid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, 9)


async def test_cancel_ends_the_turn_even_if_the_editor_never_answers_the_question(project: Path, agent_dir: Path) -> None:
    """The spec has the client answer an open permission question ``cancelled`` after
    ``session/cancel``; an editor that does not (the question left on screen) must not keep the
    turn running: the prompt answers ``cancelled`` at once and the call never runs."""
    editor = EditorClient()
    asked = asyncio.Event()

    async def leave_it_open() -> None:
        asked.set()
        await asyncio.sleep(30)

    editor.on_permission = leave_it_open
    with FakeServer([_bash("c1", "touch never"), {"text": "unused"}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
            await asyncio.wait_for(asked.wait(), 30)
            started = time.monotonic()
            await conn.cancel(session_id=session.session_id)
            answer = await asyncio.wait_for(turn, 10)
            elapsed = time.monotonic() - started
    assert answer.stop_reason == "cancelled" and elapsed < 1.0, elapsed
    assert not (project / "never").exists() and len(server.requests) == 1


STAMP_EXTENSION = '''
from pathlib import Path


def register(pi):
    def stamp(call_id, args, ctx):
        Path(ctx.cwd, "stamped").write_text("yes")
        return "stamped"
    pi.register_tool(name="stamp", description="writes a stamp file", execute=stamp,
                     parameters={"type": "object", "properties": {}})
'''


async def test_an_extension_tool_is_asked_about_and_read_only_tools_are_not(project: Path, agent_dir: Path) -> None:
    """pi-tui cannot know what an extension's tool changes, so it asks before it runs (kind
    ``other``); the built-in read-only tools (read here; grep, find, ls) run without a question."""
    (agent_dir / "extensions").mkdir()
    (agent_dir / "extensions" / "stamp.py").write_text(STAMP_EXTENSION)
    (project / "notes.md").write_text("notes\n")
    script = [{"tool_calls": [{"id": "s1", "name": "stamp", "arguments": {}},
                              {"id": "r1", "name": "read", "arguments": {"path": "notes.md"}}]},
              {"text": "ok"}]
    editor = EditorClient(choices=["reject_once"])
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("stamp it")])
    (question, options), = editor.permission_requests
    assert question.tool_call_id == "s1" and question.kind == "other" and question.title == "stamp"
    assert [o.name for o in options] == ["Allow", "Always allow stamp", "Reject", "Always reject stamp"]
    assert not (project / "stamped").exists()
    results = {m["tool_call_id"]: str(m["content"]) for m in server.requests[1]["messages"] if m["role"] == "tool"}
    assert "The user rejected this stamp call; it did not run." in results["s1"]
    assert "notes" in results["r1"]
