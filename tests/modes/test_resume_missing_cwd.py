"""Resuming a session whose working directory is gone (issue 19 item 14): pi 0.73.1 asks in its
TUI ("Session cwd not found": continue in the current folder, or cancel and exit); pi-tui asks
the same, and in print mode continues in the current folder and says so on stderr (it was silent).
Inside the running app, ``/resume`` to such a session asks the same before it switches (pi's
``handleResumeSession``): Continue switches, Cancel leaves the current session as it was.
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


def _session_file(folder: Path, cwd: str = GONE, name: str = "old.jsonl") -> Path:
    """A pi session written in ``cwd`` (by default a folder that no longer exists): one question,
    one answer."""
    lines = [
        {"type": "session", "version": 3, "id": "01a233d1-0000-7000-8000-000000000001",
         "timestamp": "2026-01-02T10:00:00.000Z", "cwd": cwd},
        {"type": "message", "id": "aaaa0001", "parentId": None, "timestamp": "2026-01-02T10:00:01.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "earlier question"}], "timestamp": 1}},
        {"type": "message", "id": "aaaa0002", "parentId": "aaaa0001", "timestamp": "2026-01-02T10:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "earlier answer"}],
                     "api": "openai-completions", "provider": "fake", "model": "fake-model",
                     "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                     "stopReason": "stop", "timestamp": 2}},
    ]
    path = folder / name
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
        loaded: Any = app.session  # (not the None narrowed above: the answer loaded it)
        assert loaded is not None and loaded.session_manager.session_file == session
        assert [m["role"] for m in loaded.messages] == ["user", "assistant"]


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


# ---------------------------------------------------------------- /resume in the running app


def test_the_header_alone_tells_whether_to_ask(tmp_path: Path) -> None:
    from pi_tui.modes.session_cwd import missing_cwd_of_file

    gone = tmp_path / "deleted"
    assert missing_cwd_of_file(_session_file(tmp_path, str(gone), "gone.jsonl")) == str(gone)
    assert missing_cwd_of_file(_session_file(tmp_path, str(tmp_path), "here.jsonl")) is None
    for name, text in (("empty.jsonl", ""), ("corrupt.jsonl", '{"type": "session", "cwd": "/nope'),
                       ("no-header.jsonl", '{"type": "message", "id": "x", "cwd": "/nope"}\n'),
                       ("no-cwd.jsonl", '{"type": "session", "id": "x"}\n')):
        (tmp_path / name).write_text(text)
        assert missing_cwd_of_file(tmp_path / name) is None, name
    assert missing_cwd_of_file(tmp_path / "absent.jsonl") is None


def _running_app(project: Path, agent: Path, extensions: tuple[str, ...] = ()) -> tuple[Any, Any]:
    """The TUI on a session of ``project`` (the scripted provider), as the CLI builds it."""
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.sdk import create_agent_session
    from pi_tui.testing.scripted import ScriptedProvider

    session = create_agent_session(cwd=project, agent_dir=agent, provider=ScriptedProvider([{"text": "current answer"}]),
                                   settings={}, load_extensions=False, extension_paths=extensions)
    return PiApp(session, cwd=project, agent_dir=agent), session


def _deleted_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "deleted-project"
    folder.mkdir()
    folder.rmdir()
    return folder


async def _start_with_a_session(pilot: Any, app: Any) -> Path:
    """Ask one question in the app, so the current session has a file and a conversation."""
    from pi_tui.modes.interactive.widgets.editor import PromptEditor

    await _until(pilot, lambda: app.chat is not None and app.chat.history_loaded.is_set())
    app.screen.query_one(PromptEditor).insert("current question")
    await pilot.press("enter")
    await _until(pilot, lambda: "current answer" in _chat_text(app) and not app.session.state.is_streaming)
    current = app.session.state.session_file
    assert current is not None and current.is_file()
    return Path(current)


async def _resume(pilot: Any, app: Any, target: Path) -> None:
    """``/resume``, search for the other session's first message, Enter."""
    from pi_tui.modes.interactive.screens.session_picker import SessionPickerScreen
    from pi_tui.modes.interactive.widgets.editor import PromptEditor

    app.screen.query_one(PromptEditor).insert("/resume")
    await pilot.press("enter")
    await _until(pilot, lambda: isinstance(app.screen, SessionPickerScreen)
                 and target in [info.path for info in app.screen.shown])
    await pilot.press(*"earlier")
    await _until(pilot, lambda: [info.path for info in app.screen.shown] == [target])
    await pilot.press("enter")


def _in_chat(app: Any) -> bool:
    return type(app.screen).__name__ == "ChatScreen"


def _users(app: Any) -> list[str]:
    from pi_tui.modes.interactive.widgets.chat_items import UserMessageView

    return [view.text for view in app.screen.query(UserMessageView)]


def _notices(app: Any) -> list[str]:
    from pi_tui.modes.interactive.widgets.chat_items import Notice

    return [notice.text for notice in app.screen.query(Notice)]


def _chat_text(app: Any) -> str:
    from pi_tui.modes.interactive.widgets.markdown_stream import StreamedMarkdown

    return "\n".join([*_users(app), *(md.text for md in app.screen.query(StreamedMarkdown))])


async def test_resume_asks_when_the_folder_is_gone_and_continue_switches(tmp_path: Path, project: Path,
                                                                        agent_dir: Path) -> None:
    gone = _deleted_folder(tmp_path)
    app, session = _running_app(project, agent_dir)
    async with app.run_test(size=(110, 32)) as pilot:
        current = await _start_with_a_session(pilot, app)
        other = _session_file(current.parent, str(gone), "other.jsonl")
        await _resume(pilot, app, other)
        await _until(pilot, lambda: _question_up(app))
        shown = _screen_text(app)
        assert "Session cwd not found" in shown
        assert f"cwd from session file does not exist\n{gone}\n\ncontinue in current cwd\n{project}" in shown
        assert session.state.session_file == current  # asked before anything is switched
        await pilot.press("y")
        await _until(pilot, lambda: _in_chat(app) and _users(app) == ["earlier question"])
        assert session.state.session_file == other
        assert "earlier answer" in _chat_text(app) and "current question" not in _chat_text(app)
        assert "Resumed other.jsonl in current cwd" in _notices(app)
        assert [m["role"] for m in session.messages] == ["user", "assistant"]


async def test_resume_cancelled_keeps_the_current_session(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    gone = _deleted_folder(tmp_path)
    app, session = _running_app(project, agent_dir)
    async with app.run_test(size=(110, 32)) as pilot:
        current = await _start_with_a_session(pilot, app)
        other = _session_file(current.parent, str(gone), "other.jsonl")
        before = (current.read_bytes(), other.read_bytes(), list(session.messages))
        await _resume(pilot, app, other)
        await _until(pilot, lambda: _question_up(app))
        await pilot.press("n")
        await _until(pilot, lambda: _in_chat(app) and any("Resume cancelled" in n for n in _notices(app)))
        await pilot.pause(0.2)  # a switch, had one started, would land meanwhile
        assert "Resume cancelled: the current session was not changed" in _notices(app)
        assert session.state.session_file == current
        assert _users(app) == ["current question"] and "current answer" in _chat_text(app)
        assert (current.read_bytes(), other.read_bytes(), list(session.messages)) == before
        assert app.is_running


async def test_resume_to_a_folder_that_exists_asks_nothing(tmp_path: Path, project: Path, agent_dir: Path) -> None:
    still_there = tmp_path / "still-there"
    still_there.mkdir()
    app, session = _running_app(project, agent_dir)
    async with app.run_test(size=(110, 32)) as pilot:
        current = await _start_with_a_session(pilot, app)
        other = _session_file(current.parent, str(still_there), "other.jsonl")
        await _resume(pilot, app, other)
        # no key pressed after the picker: a question would hold the switch
        await _until(pilot, lambda: _in_chat(app) and _users(app) == ["earlier question"])
        assert session.state.session_file == other
        assert "Resumed other.jsonl" in _notices(app)


VETO = """
def register(pi):
    pi.on("session_before_switch", lambda event, ctx: {"cancel": True})
"""


async def test_a_switch_an_extension_cancels_is_not_called_resumed(tmp_path: Path, project: Path,
                                                                   agent_dir: Path) -> None:
    """``session_before_switch`` may cancel ``/resume`` and ``/new``: the app says so, never
    "Resumed" or "New session started" over a session that did not change."""
    veto = tmp_path / "veto.py"
    veto.write_text(VETO)
    app, session = _running_app(project, agent_dir, (str(veto),))
    async with app.run_test(size=(110, 32)) as pilot:
        current = await _start_with_a_session(pilot, app)
        other = _session_file(current.parent, str(tmp_path), "other.jsonl")
        await _resume(pilot, app, other)
        await _until(pilot, lambda: _in_chat(app) and any("cancelled by an extension" in n for n in _notices(app)))
        assert "Resume cancelled by an extension; the session is unchanged." in _notices(app)
        from pi_tui.modes.interactive.widgets.editor import PromptEditor

        app.screen.query_one(PromptEditor).insert("/new")
        await pilot.press("enter")
        await _until(pilot, lambda: any(n.startswith("New session cancelled") for n in _notices(app)))
        await pilot.pause(0.2)
        assert not any(n.startswith(("Resumed", "New session started")) for n in _notices(app)), _notices(app)
        assert session.state.session_file == current and _users(app) == ["current question"]
