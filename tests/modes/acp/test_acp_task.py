"""A ``task`` call over ACP (a real ``pi-tui --mode acp``): one tool call whose content follows
the subagent's progress, then its answer; the child's own tool calls are not the editor's."""

from __future__ import annotations

import json
from pathlib import Path

from acp import text_block

from pi_tui.testing.fake_server import FakeServer
from tests.modes.acp.conftest import EditorClient, acp_agent, write_models


async def test_a_task_is_one_tool_call_that_updates_with_the_child(project: Path, agent_dir: Path) -> None:
    (project / "notes.txt").write_text("the notes\n")
    (agent_dir / "settings.json").write_text(json.dumps({"subagents": {"enabled": True}}))
    script = {"turns": [
        {"when": {"last_user_contains": "PARENT"}, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
            "description": "read notes", "prompt": "CHILD: read notes.txt", "subagent_type": "explore"}}]},
        {"when": {"last_user_contains": "CHILD"}, "tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.txt"}}]},
        {"when": {"last_user_contains": "CHILD"}, "text": "The notes say: the notes."},
        {"when": {"last_user_contains": "PARENT"}, "text": "Done."},
    ]}
    editor = EditorClient(choices=["allow_once"])
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("PARENT: delegate")])
    assert answer.stop_reason == "end_turn"
    calls = editor.of_kind("tool_call") + editor.of_kind("tool_call_update")
    assert {u.tool_call_id for u in calls} == {"t1"}  # the child's read is not shown as the editor's call
    assert editor.of_kind("tool_call")[0].title == "task (explore): read notes"
    progress = [u.content[0].content.text for u in calls if u.content and u.status is None]
    assert any("read notes.txt" in text for text in progress)
    assert calls[-1].status == "completed" and calls[-1].content[0].content.text == "The notes say: the notes."
    assert editor.message_text() == "Done."
