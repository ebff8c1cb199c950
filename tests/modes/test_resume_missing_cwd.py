"""Resuming a session whose working directory is gone (issue 19 item 14): pi 0.73.1 asks in its
TUI ("Session cwd not found": continue in the current folder, or cancel and exit); pi-tui asks
the same, and in print mode continues in the current folder and says so on stderr (it was silent).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from pi_tui.cli import build_parser
from pi_tui.testing.fake_server import FakeServer

GONE = "/nonexistent/pi-tui-project-that-was-deleted"


def _session_file(folder: Path) -> Path:
    """A pi session written in a folder that no longer exists (one question, one answer)."""
    lines = [
        {"type": "session", "version": 3, "id": "01a233d1-0000-7000-8000-000000000001",
         "timestamp": "2026-01-02T10:00:00.000Z", "cwd": GONE},
        {"type": "message", "id": "aaaa0001", "parentId": None, "timestamp": "2026-01-02T10:00:01.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "earlier question"}], "timestamp": 1}},
        {"type": "message", "id": "aaaa0002", "parentId": "aaaa0001", "timestamp": "2026-01-02T10:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "earlier answer"}],
                     "api": "openai-completions", "provider": "fake", "model": "fake-model",
                     "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                     "stopReason": "stop", "timestamp": 2}},
    ]
    path = folder / "old.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _agent(agent: Path, base_url: str) -> Path:
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "fake-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "contextWindow": 100_000, "maxTokens": 1000}]}}}))
    (agent / "settings.json").write_text(json.dumps({"defaultProvider": "fake", "defaultModel": "fake-model"}))
    return agent


def test_print_mode_says_it_on_stderr_and_continues_here(tmp_path: Path, project: Path) -> None:
    session = _session_file(tmp_path)
    with FakeServer([{"text": "still here"}]) as server:
        agent = _agent(tmp_path / "agent", server.base_url)
        done = subprocess.run([sys.executable, "-m", "pi_tui", "-p", "--session", str(session), "go on"],
                              cwd=project, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)},
                              capture_output=True, text=True, timeout=90)
        sent = json.dumps(server.requests[0]["messages"])
    assert done.returncode == 0 and "still here" in done.stdout, done.stderr
    assert (f"pi-tui: the session's working directory does not exist: {GONE} (session file {session}); "
            f"continuing in the current one: {project}") in done.stderr
    assert "earlier question" in sent and f"Current working directory: {project}" in sent


def _app(project: Path, agent: Path, session: Path) -> Any:
    from pi_tui.modes.interactive import load_session
    from pi_tui.modes.interactive.app import PiApp

    args = build_parser().parse_args(["--session", str(session)])
    app: Any = None

    def loader() -> Any:
        return load_session(args, project, agent, ask_continue=app.ask_to_continue_here)

    app = PiApp(None, cwd=project, agent_dir=agent, session_loader=loader)
    return app


async def _until(pilot: Any, condition: Any, seconds: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        assert loop.time() < deadline, "condition not met in time"
        await pilot.pause(0.05)


def _question_up(app: Any) -> bool:
    from pi_tui.modes.interactive.screens.confirm import ConfirmScreen

    return isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#confirm-detail"))


def _screen_text(app: Any) -> str:
    from textual.widgets import Static

    return "\n".join(str(w.render()) for w in app.screen.query(Static))


async def test_the_tui_asks_as_pi_and_continue_opens_the_session_here(tmp_path: Path, project: Path) -> None:
    session = _session_file(tmp_path)
    app = _app(project, _agent(tmp_path / "agent", "http://127.0.0.1:9/v1"), session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(pilot, lambda: _question_up(app))
        shown = _screen_text(app)
        assert "Session cwd not found" in shown
        assert f"cwd from session file does not exist\n{GONE}\n\ncontinue in current cwd\n{project}" in shown
        assert app.session is None  # nothing loaded before the answer
        await pilot.press("y")
        await _until(pilot, lambda: app.chat is not None and app.chat.history_loaded.is_set())
        assert app.session is not None and app.session.session_manager.session_file == session
        assert [m["role"] for m in app.session.messages] == ["user", "assistant"]


async def test_the_tui_cancel_ends_the_app_without_loading(tmp_path: Path, project: Path) -> None:
    session = _session_file(tmp_path)
    before = session.read_bytes()
    app = _app(project, _agent(tmp_path / "agent", "http://127.0.0.1:9/v1"), session)
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(pilot, lambda: _question_up(app))
        await pilot.press("n")
        await _until(pilot, lambda: not app.is_running)
    assert app.return_code == 0 and app.session is None
    assert session.read_bytes().startswith(before)  # nothing of it lost (the model in use is appended on open)
