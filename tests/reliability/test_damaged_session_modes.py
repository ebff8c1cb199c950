"""A damaged session file opened by every mode: the TUI (load, /tree, a new prompt), print mode
resuming it against the fake server, and RPC's ``get_messages``/``get_state``.

The file (``session_readers.write_damaged_sample``) holds one wrong-typed entry of each kind in
the middle of a good session. Each mode must start, show the problems as diagnostics naming the
file and line, keep the good messages, send the model a valid request, and append after the
damaged lines without rewriting them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pi_tui.core.session.loading import load_session_readonly
from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.widgets.chat_items import UserMessageView
from pi_tui.modes.interactive.widgets.markdown_stream import StreamedMarkdown
from pi_tui.sdk import create_agent_session
from pi_tui.testing.fake_server import FakeServer
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.conftest import fixed_clock, settle, wait_for

from .session_readers import write_damaged_sample

FAULT_CLASS = "session files: wrong types"


def _agent_dir(root: Path, base_url: str) -> Path:
    agent = root / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 1000}],
    }}}))
    return agent


def _env(agent: Path) -> dict[str, str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    env.pop("PYTEST_CURRENT_TEST", None)
    return env


async def test_the_tui_opens_a_damaged_session_shows_its_tree_and_carries_on(project: Path, agent_dir: Path) -> None:
    path, damaged = write_damaged_sample(project)
    before = path.read_bytes()
    session = create_agent_session(cwd=project, agent_dir=agent_dir, settings={}, load_extensions=False,
                                   session=str(path), provider=ScriptedProvider([{"text": "carried on"}]))
    named = {int(source_message.split(":")[1]) for _, source_message in session.diagnostics()
             if source_message.startswith(f"{path}:")}
    assert named >= set(damaged)
    app = PiApp(session, cwd=project, agent_dir=agent_dir, clock=fixed_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ChatScreen")
        await settle(app, pilot)
        shown = [u.text for u in app.screen.query(UserMessageView)]
        assert shown[0] == "hello" and shown[-1] == "still here"
        await pilot.press("escape", "escape")  # /tree
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TreeScreen")
        shown_ids = {row.entry_id for row in app.screen.rows}  # type: ignore[attr-defined]
        entries = session.session_manager.get_entries()
        placeholders = {e["id"] for e in entries if e["type"] == "invalid_entry"}
        assert placeholders and placeholders | {"e1", "last"} <= shown_ids  # damaged entries keep their place
        await pilot.press("escape")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ChatScreen")
        for key in "go on":
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(m.text == "carried on" for m in app.screen.query(StreamedMarkdown)))
        await settle(app, pilot)
    session.session_manager.close()
    assert path.read_bytes().startswith(before)
    after = load_session_readonly(path)
    assert after.entries[-1]["message"]["content"][0]["text"] == "carried on"


def test_print_mode_resumes_a_damaged_session_and_sends_a_valid_request(tmp_path: Path, project: Path) -> None:
    path, damaged = write_damaged_sample(project)
    before = path.read_bytes()
    with FakeServer([{"text": "resumed"}]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        result = subprocess.run([sys.executable, "-m", "pi_tui", "-p", "--session", str(path), "go on"], cwd=project,
                                env=_env(agent), capture_output=True, text=True, timeout=60)
        (request,) = server.requests
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == "resumed\n"
    for line in damaged:
        assert f"{path}:{line}: " in result.stderr
    json.dumps(request, allow_nan=False)
    users = [m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])
             for m in request["messages"] if m["role"] == "user"]
    assert users[0] == "hello" and users[-2:] == ["still here", "go on"]
    assert path.read_bytes().startswith(before)


def test_rpc_get_messages_on_a_damaged_session_is_valid_json(tmp_path: Path, project: Path) -> None:
    path, _damaged = write_damaged_sample(project)
    with FakeServer([]) as server:
        agent = _agent_dir(tmp_path, server.base_url)
        commands = [{"id": "1", "type": "get_messages"}, {"id": "2", "type": "get_state"}]
        result = subprocess.run([sys.executable, "-m", "pi_tui", "--mode", "rpc", "--session", str(path)], cwd=project,
                                env=_env(agent), input="".join(json.dumps(c) + "\n" for c in commands),
                                capture_output=True, text=True, timeout=60)
    assert "Traceback" not in result.stderr
    responses = {}
    for line in result.stdout.splitlines():
        parsed = json.loads(line, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
        if parsed.get("type") == "response":
            responses[parsed["id"]] = parsed
    assert responses["1"]["success"] and responses["2"]["success"], responses
    messages = responses["1"]["data"]["messages"]
    assert messages[0]["content"] == "hello" and messages[-1]["content"] == "still here"
    assert responses["2"]["data"]["sessionFile"] == str(path)
