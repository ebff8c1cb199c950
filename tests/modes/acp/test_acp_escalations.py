"""The permission room's questions over ACP: a bash call asking to leave the sandbox
(``escalate``) reaches the editor as ``session/request_permission`` with allow once / always /
reject once / always, driven here by the official ACP client against a real ``pi-tui --mode acp``
in ``auto`` mode with the real bwrap sandbox. Cancelled, an error answer or an option that was
not offered is a denial; the editor is not asked a second time for a call it approved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from pi_tui.permissions.sandbox import find_bwrap
from pi_tui.testing.fake_server import FakeServer
from tests.modes.acp.conftest import EditorClient, acp_agent, write_models

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed")


def _escalate(call_id: str, command: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "bash", "arguments": {
        "command": command, "escalate": True, "justification": "write outside the project"}}]}


def _results(server: FakeServer) -> dict[str, str]:
    """Each call's result as the model got it (the last request holds the whole history)."""
    return {m["tool_call_id"]: str(m["content"]) for m in server.requests[-1]["messages"] if m["role"] == "tool"}


async def test_escalations_are_asked_with_the_four_answers(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "outside"
    out.mkdir()
    same = f"echo again >> {out}/again"
    steps = [("e1", f"echo one > {out}/one", "allow_once"), ("e2", f"echo two > {out}/two", "reject_once"),
             ("e3", same, "allow_always"), ("e4", same, None),  # remembered: not asked, runs
             ("e5", f"echo five > {out}/five", "reject_always"), ("e6", f"echo five > {out}/five", None),
             ("e7", f"echo seven > {out}/seven", "cancelled"), ("e8", f"echo eight > {out}/eight", "bogus"),
             ("e9", f"echo nine > {out}/nine", "error")]
    script: list[dict[str, Any]] = []
    for call_id, command, _ in steps:
        script += [_escalate(call_id, command), {"text": "ok"}]
    editor = EditorClient(choices=[choice for _, _, choice in steps if choice is not None])
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project, "--permission-mode", "auto") as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            for call_id, _, _ in steps:
                answer = await conn.prompt(session_id=session.session_id, prompt=[text_block(call_id)])
                assert answer.stop_reason == "end_turn"
    asked = [tool_call.tool_call_id for tool_call, _ in editor.permission_requests]
    assert asked == ["e1", "e2", "e3", "e5", "e7", "e8", "e9"]  # once each; e4 and e6 remembered
    tool_call, options = editor.permission_requests[0]
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert "run it outside the sandbox" in tool_call.title
    shown = tool_call.content[0].content.text
    assert "the model says: write outside the project" in shown and f"echo one > {out}/one" in shown
    assert (out / "one").read_text() == "one\n"  # allowed once: ran outside the sandbox
    assert (out / "again").read_text() == "again\nagain\n"  # always (this session): e4 ran unasked
    for name in ("two", "five", "seven", "eight", "nine"):
        assert not (out / name).exists(), name
    results = _results(server)
    assert "Denied by the user: do not retry it" in results["e2"]
    assert "rejected always" in results["e6"]
    for call_id in ("e7", "e8", "e9"):
        assert "Denied by the user: do not retry it" in results[call_id], results[call_id]
