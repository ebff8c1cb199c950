"""Secrets over ACP: the keys pi-tui knows never reach the editor (every frame it is sent) nor the
model, whichever way a tool touches them — ``bash`` in the editor's terminal (the replaced tool
is still behind the session's ``RedactingTool``, and the command's environment loses the secret
variables as the local tool's does), or an edit of a file holding a key (the permission
question's whole-file diff)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from pi_tui.testing.fake_server import FakeServer
from tests.modes.acp.conftest import EditorClient, acp_agent, write_models
from tests.reliability.planted import ENV_SECRETS, leaks

SECRET_ENV = {name: value for name, value in ENV_SECRETS.items() if name != "PROXY_CRED"}


@pytest.fixture
def planted_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The keys in the environment of the editor and of the agent it starts."""
    for name, value in SECRET_ENV.items():
        monkeypatch.setenv(name, value)


def _all_text(editor: EditorClient, server: FakeServer) -> str:
    return json.dumps(editor.frames) + json.dumps(server.requests)


async def test_bash_in_the_editors_terminal_gets_no_secrets(project: Path, agent_dir: Path, planted_env: None) -> None:
    command = "echo github=$GITHUB_TOKEN openai=$OPENAI_API_KEY; env | grep -c PLANTED || true"
    script = [{"tool_calls": [{"id": "t1", "name": "bash", "arguments": {"command": command}}]}, {"text": "ok"}]
    editor = EditorClient(terminals={}, choices=["allow_once"])
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("show the env")])
    assert editor.terminal_calls[0] == "create"
    shown = "".join(editor.terminal_shown)
    assert shown.startswith("github= openai=\n0\n"), shown  # the editor's terminal never had them
    assert leaks(shown, _all_text(editor, server)) == []


async def test_a_terminal_command_printing_a_key_reaches_neither_model_nor_frames(
        project: Path, agent_dir: Path, planted_env: None) -> None:
    """The replaced ``bash`` is still redacted: a key the command prints (here from a file the
    editor's terminal can read) is ``[redacted]`` in the result the model and the editor get."""
    (project / "notes.txt").write_text(f"deploy with {SECRET_ENV['GITHUB_TOKEN']}\n")
    script = [{"tool_calls": [{"id": "t1", "name": "bash", "arguments": {"command": "cat notes.txt"}}]}, {"text": "ok"}]
    editor = EditorClient(terminals={}, choices=["allow_once"])
    with FakeServer(script) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("read the notes")])
    tool_result = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "deploy with [redacted]" in str(tool_result)
    assert leaks(_all_text(editor, server)) == []


async def test_the_diff_of_an_edit_to_a_file_holding_a_key_is_redacted(
        project: Path, agent_dir: Path, planted_env: None) -> None:
    key = SECRET_ENV["OPENAI_API_KEY"]
    dotenv = project / ".env"
    dotenv.write_text(f"OPENAI_API_KEY={key}\nDEBUG=1\n")
    edit: dict[str, Any] = {"tool_calls": [{"id": "e1", "name": "edit", "arguments": {
        "path": ".env", "edits": [{"oldText": "DEBUG=1", "newText": "DEBUG=0"}]}}]}
    editor = EditorClient(choices=["allow_once"])
    with FakeServer([edit, {"text": "done"}]) as server:
        write_models(agent_dir, server.base_url)
        async with acp_agent(editor, agent_dir, project) as conn:
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("turn debug off")])
    assert dotenv.read_text() == f"OPENAI_API_KEY={key}\nDEBUG=0\n"  # the file itself keeps its key
    (question, _options), = editor.permission_requests
    diff = question.content[0]
    assert diff.old_text == "OPENAI_API_KEY=[redacted]\nDEBUG=1\n"
    assert diff.new_text == "OPENAI_API_KEY=[redacted]\nDEBUG=0\n"
    assert leaks(_all_text(editor, server)) == []
