"""A subagent's session opened read-only from the TUI (issue 23: "a way to open the child's
session read-only"): a click on the task panel, or ``/subagent [N]``, shows the child's own
conversation from its file — its prompt, tool calls and answer, nothing of the parent's — in a
screen without an editor that leaves the file as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.screens.child_session import ChildSessionScreen, pick_child
from pi_tui.modes.interactive.widgets.assistant_message import AssistantMessageView
from pi_tui.modes.interactive.widgets.chat_items import Notice, UserMessageView
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.conftest import fixed_clock, ready, settle, wait_for

TURNS: list[dict[str, Any]] = [
    {"when": {"last_user_contains": "PARENT"}, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
        "description": "find the loader", "prompt": "CHILD: where is config.toml read?", "subagent_type": "explore"}}]},
    {"when": {"last_user_contains": "CHILD"}, "tool_calls": [{"id": "g1", "name": "grep",
                                                               "arguments": {"pattern": "config.toml"}}]},
    {"when": {"last_user_contains": "CHILD"}, "text": "CHILD ANSWER: loader.py reads it."},
    {"when": {"last_user_contains": "PARENT"}, "text": "PARENT ANSWER: the loader reads it first."},
]


def _app(project: Path, agent_dir: Path, sessions: Path) -> PiApp:
    (project / "loader.py").write_text("def load():\n    return open('config.toml').read()\n")
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider(TURNS),
                                   settings={"subagents": {"enabled": True}}, load_extensions=False,
                                   session_dir=sessions)
    return PiApp(session, cwd=project, agent_dir=agent_dir, clock=fixed_clock)


def _file_bytes(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _shown(screen: ChildSessionScreen) -> str:
    """The user blocks and tool panels as drawn, and the assistant blocks' texts."""
    drawn = [str(w.render()) for w in screen.query(UserMessageView)]
    drawn += [f"{panel.border_title}\n{panel.render()}" for panel in screen.query(ToolCallPanel)]
    answers = [str(block.get("text", "")) for message in screen.messages if message.get("role") == "assistant"
               for block in message.get("content") or [] if block.get("type") == "text"]
    assert len(screen.query(AssistantMessageView)) == len([m for m in screen.messages if m["role"] == "assistant"])
    return "\n".join([*drawn, *answers])


async def test_a_task_panel_opens_the_child_session_read_only(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    app = _app(project, agent_dir, tmp_path / "sessions")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await app.chat.submit("PARENT: where is the config read?")
        await settle(app, pilot)
        task = next(p for p in app.screen.query(ToolCallPanel) if p.state.name == "task")
        child_file = Path(task.state.details["childSession"])
        parent_file = app.chat.session.session_manager.session_file
        before = _file_bytes(child_file)
        assert before and child_file != parent_file

        await pilot.click(task)
        await wait_for(pilot, lambda: isinstance(app.screen, ChildSessionScreen) and bool(app.screen.messages))
        screen = app.screen
        assert isinstance(screen, ChildSessionScreen)
        await wait_for(pilot, lambda: bool(screen.query(UserMessageView)))
        shown = _shown(screen)
        assert "CHILD: where is config.toml read?" in shown
        assert "grep" in shown and "CHILD ANSWER" in shown
        assert "PARENT" not in shown  # the child's own conversation only
        title = str(screen.query_one("#child-title").render())
        assert "read-only" in title and f"subagent of {parent_file.name}" in title and "explore: find the loader" in title
        assert not screen.query(PromptEditor)  # nothing to type into
        await pilot.press("ctrl+o")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ChildSessionScreen))
        assert _file_bytes(child_file) == before  # read, never written

        await app.chat.submit("/subagent")
        await wait_for(pilot, lambda: isinstance(app.screen, ChildSessionScreen) and bool(app.screen.messages))
        assert app.screen.path == child_file
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ChildSessionScreen))
        await app.chat.submit("/subagent 2")
        await wait_for(pilot, lambda: any("N from 1 to 1" in str(n.render()) for n in app.screen.query(Notice)))


def test_pick_child_names_each_task_in_order(tmp_path: Path) -> None:
    def result(name: str) -> dict[str, Any]:
        return {"role": "toolResult", "toolName": "task", "toolCallId": name, "content": [],
                "details": {"agent": "general", "description": name, "childSession": str(tmp_path / f"{name}.jsonl")}}

    messages = [result("first"), {"role": "toolResult", "toolName": "read", "toolCallId": "r", "content": []},
                result("second")]
    assert pick_child(messages, "") == (tmp_path / "second.jsonl", "general: second")
    assert pick_child(messages, "1") == (tmp_path / "first.jsonl", "general: first")
    assert "N from 1 to 2" in str(pick_child(messages, "x"))
    assert "No subagent session" in str(pick_child([], ""))


async def test_a_missing_child_file_is_said_not_raised(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    app = _app(project, agent_dir, tmp_path / "sessions")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await app.push_screen(ChildSessionScreen(tmp_path / "gone.jsonl"))
        screen = app.screen
        assert isinstance(screen, ChildSessionScreen)
        await wait_for(pilot, lambda: screen.error is not None)
        assert "Cannot open the subagent's session" in str(screen.query_one("#child-title").render())
