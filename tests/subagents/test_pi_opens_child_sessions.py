"""pi 0.73.1 opens what the task and todo tools write: the child's session file (header
``parentSession``) and the parent's file with its todo ``custom`` entries and the compaction
reminder's ``custom_message``.

Skipped when pi is not installed (``make pi-ref`` installs it; ``PI_REF`` names another install).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from pi_tui.providers.openai_http import OpenAIHttpProvider
from pi_tui.testing.fake_server import FakeServer
from pi_tui.testing.pi_reference import PI_BIN
from tests.session.conftest import MODEL
from tests.subagents.conftest import read_jsonl

PI = PI_BIN
pytestmark = pytest.mark.skipif(not PI.exists(), reason="pi 0.73.1 is not installed: cannot check it opens the files")


def _pi(session_file: Path, prompt: str, agent_dir: Path, cwd: Path, base_url: str) -> subprocess.CompletedProcess[str]:
    models = {"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 1000}],
    }}}
    (agent_dir / "models.json").write_text(json.dumps(models))
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1"}
    return subprocess.run([str(PI), "--model", "fake/fake-model", "--session", str(session_file), "-p", prompt],
                          cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)


async def test_pi_continues_the_child_session_and_the_parent_with_todo_entries(make_parent, project: Path,
                                                                               agent_dir: Path) -> None:
    (project / "notes.txt").write_text("the notes\n")
    script = [
        {"when": {"last_user_contains": "PARENT"}, "tool_calls": [
            {"id": "d1", "name": "todo", "arguments": {"todos": [{"content": "Ask the child", "status": "in_progress"}]}},
            {"id": "t1", "name": "task", "arguments": {"description": "read notes", "prompt": "CHILD: read notes.txt"}}]},
        {"when": {"last_user_contains": "CHILD"}, "tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.txt"}}]},
        {"when": {"last_user_contains": "CHILD"}, "text": "CHILD-ANSWER"},
        {"when": {"last_user_contains": "PARENT"}, "text": "PARENT-ANSWER"},
    ]
    with FakeServer({"turns": script}) as server:
        model = replace(MODEL, base_url=server.base_url, api="openai-completions")
        session, _, _ = make_parent(OpenAIHttpProvider(), model=model, api_key="fake-key")
        await session.prompt("PARENT: go")
    parent_file = session.session_manager.session_file
    session.session_manager.close()
    result = next(m for m in session.messages if m.get("role") == "toolResult" and m["toolName"] == "task")
    child_file = Path(result["details"]["childSession"])
    assert read_jsonl(child_file)[0]["parentSession"] == str(parent_file)

    with FakeServer({"turns": [{"text": "pi read the child"}, {"text": "pi read the parent"}]}) as server:
        child_run = _pi(child_file, "and then?", agent_dir, project, server.base_url)
        parent_run = _pi(parent_file, "and now?", agent_dir, project, server.base_url)
        bodies = list(server.requests)
    assert child_run.returncode == 0, child_run.stderr[-2000:]
    assert child_run.stdout.strip() == "pi read the child"
    sent = json.dumps(bodies[0]["messages"])
    assert "CHILD: read notes.txt" in sent and "the notes" in sent and "CHILD-ANSWER" in sent and "PARENT" not in sent
    assert parent_run.returncode == 0, parent_run.stderr[-2000:]
    assert parent_run.stdout.strip() == "pi read the parent"
    sent = json.dumps(bodies[1]["messages"])
    assert "CHILD-ANSWER" in sent and "the notes" not in sent and "pi-tui:todo" not in sent
