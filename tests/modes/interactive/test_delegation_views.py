"""The todo panel above the editor and the task panel streaming a subagent (Textual pilot and
SVG snapshots)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.modes.interactive.widgets.footer import StatusFooter
from pi_tui.modes.interactive.widgets.todo_panel import TodoPanel
from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.conftest import fixed_clock, ready, settle, wait_for

SETTINGS = {"subagents": {"enabled": True}, "todo": {"enabled": True}}
PLAN = [{"content": "Find where the config is read", "status": "completed"},
        {"content": "Explain the loading order", "status": "in_progress"},
        {"content": "Suggest a fix", "status": "pending"}]
TURNS: list[dict[str, Any]] = [
    {"when": {"last_user_contains": "PARENT"}, "tool_calls": [{"id": "d1", "name": "todo", "arguments": {"todos": PLAN}}]},
    {"when": {"last_user_contains": "PARENT"}, "delay_ms": 300, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
        "description": "find the loader", "prompt": "CHILD: where is config.toml read?", "subagent_type": "explore"}}]},
    {"when": {"last_user_contains": "CHILD"}, "tool_calls": [
        {"id": "g1", "name": "grep", "arguments": {"pattern": "config.toml"}},
        {"id": "r1", "name": "read", "arguments": {"path": "loader.py"}}],
     "usage": {"prompt_tokens": 600, "completion_tokens": 20}},
    {"when": {"last_user_contains": "CHILD"}, "text": "config.toml is read in loader.py, line 1, by load().",
     "usage": {"prompt_tokens": 620, "completion_tokens": 26}},
    {"when": {"last_user_contains": "PARENT"}, "text": "The loader reads it first."},
]
# The child's turns give their usage: estimated, it follows the system prompt (tmp paths, the
# tools other rooms add) and the task panel's token count moved from run to run.


def _app(project: Path, agent_dir: Path) -> PiApp:
    (project / "loader.py").write_text("def load():\n    return open('config.toml').read()\n")
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider(TURNS),
                                   settings=SETTINGS, load_extensions=False, no_session=True)
    return PiApp(session, cwd=project, agent_dir=agent_dir, clock=fixed_clock)


async def test_todo_panel_updates_live_and_the_task_panel_shows_the_child(project: Path, agent_dir: Path) -> None:
    app = _app(project, agent_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        panel = app.screen.query_one("#todos", TodoPanel)
        assert panel.display is False  # no list yet: no panel
        await app.chat.submit("PARENT: where is the config read?")
        await wait_for(pilot, lambda: panel.display)  # while the run goes on (the next turn is delayed)
        assert app.chat.session.is_streaming
        assert "▶ Explain the loading order" in str(panel.render())
        await settle(app, pilot)
        task = next(p for p in app.screen.query(ToolCallPanel) if p.state.name == "task")
        shown = str(task.render())
        assert "→ grep config.toml" in shown and "→ read loader.py" in shown
        assert "config.toml is read in loader.py" in shown
        assert "Child session" not in shown
        footer = str(app.screen.query_one(StatusFooter).render())
        assert "subagents" in footer
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert task.expanded
        assert "explore · 2 tool calls · 2 turns" in str(task.render())


async def _run(pilot: Any) -> None:
    await ready(pilot)
    await pilot.app.chat.submit("PARENT: where is the config read?")
    await settle(pilot.app, pilot)
    for panel in pilot.app.screen.query(ToolCallPanel):
        panel.duration = 1.2
        panel.repaint()
    pilot.app.screen.query_one(PromptEditor).cursor_blink = False
    await pilot.pause()


def test_todo_and_task_panels_layout(snap_compare, isolated_home: Path, agent_dir: Path) -> None:
    project = isolated_home / "project"  # shown as ~/project: the same in every run
    project.mkdir()
    assert snap_compare(_app(project, agent_dir), terminal_size=(120, 40), run_before=_run)


def _notices(app: PiApp) -> list[str]:
    from pi_tui.modes.interactive.widgets.chat_items import Notice

    return [str(n.text) for n in app.screen.query(Notice)]


async def test_session_command_shows_the_subagents_line(project: Path, agent_dir: Path) -> None:
    app = _app(project, agent_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await app.chat.submit("PARENT: where is the config read?")
        await settle(app, pilot)
        await app.chat.submit("/session")
        await wait_for(pilot, lambda: any("Subagents:" in n for n in _notices(app)))
        line = next(x for n in _notices(app) for x in n.splitlines() if x.startswith("Subagents:"))
        assert line.startswith("Subagents: 2 turns · ↑1,220 ↓46 cache read 0 write 0 · cost ")


class _HeldChild:
    """The scripted provider, holding the child's answer (its request after its tool calls)
    until ``release`` is set."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.inner = ScriptedProvider(turns)
        self.release = asyncio.Event()
        self.holding = asyncio.Event()

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        child = "working as a subagent" in request.system_prompt
        if child and any(m.get("role") == "toolResult" for m in request.messages):
            self.holding.set()
            await self.release.wait()
        async for event in self.inner.stream(request):
            yield event


async def test_the_task_panel_shows_the_childs_progress_while_it_runs(project: Path, agent_dir: Path) -> None:
    (project / "loader.py").write_text("def load():\n    return open('config.toml').read()\n")
    provider = _HeldChild(TURNS)
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=provider, settings=SETTINGS,
                                   load_extensions=False, no_session=True)
    app = PiApp(session, cwd=project, agent_dir=agent_dir, clock=fixed_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await app.chat.submit("PARENT: where is the config read?")
        await wait_for(pilot, provider.holding.is_set)

        def running_panel() -> str:
            panel = next((p for p in app.screen.query(ToolCallPanel) if p.state.name == "task"), None)
            return str(panel.render()) if panel is not None else ""

        await wait_for(pilot, lambda: "→ read loader.py" in running_panel())
        shown = running_panel()
        assert "→ grep config.toml" in shown and "config.toml is read" not in shown  # no answer yet
        assert app.chat.session.is_streaming
        provider.release.set()
        await settle(app, pilot)
        assert "config.toml is read in loader.py" in running_panel()


FIRST_PLAN = [{"content": "Read the loader", "status": "in_progress"}, {"content": "Write the fix", "status": "pending"}]
SECOND_PLAN = [{"content": "Read the loader", "status": "completed"}, {"content": "Write the fix", "status": "completed"},
               {"content": "Run the tests", "status": "in_progress"}]
TODO_TURNS: list[dict[str, Any]] = [
    {"when": {"last_user_contains": "FIRST"}, "tool_calls": [{"id": "p1", "name": "todo", "arguments": {"todos": FIRST_PLAN}}]},
    {"when": {"last_user_contains": "FIRST"}, "text": "Planned it."},
    {"when": {"last_user_contains": "SECOND"}, "tool_calls": [{"id": "p2", "name": "todo", "arguments": {"todos": SECOND_PLAN}}]},
    {"when": {"last_user_contains": "SECOND"}, "text": "Fixed it."},
]


async def test_the_todo_panel_follows_tree_moves_new_and_resume(project: Path, agent_dir: Path) -> None:
    """The list shown is the one at the current tree node: /tree back to the first answer shows
    the first plan, /new none, and /resume of the session its latest plan again."""
    from pi_tui.modes.interactive.screens.session_picker import SessionPickerScreen

    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider(TODO_TURNS),
                                   settings=SETTINGS, load_extensions=False)
    app = PiApp(session, cwd=project, agent_dir=agent_dir, clock=fixed_clock)

    def shown() -> str:
        panel = app.screen.query_one("#todos", TodoPanel)
        return str(panel.render()) if panel.display else ""

    async def command(text: str) -> None:
        app.screen.query_one(PromptEditor).insert(text)
        await pilot.press("enter")

    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        for prompt in ("FIRST: plan the fix", "SECOND: do it"):
            await app.chat.submit(prompt)
            await settle(app, pilot)
        assert "Todo 2/3" in shown() and "▶ Run the tests" in shown()
        file = session.state.session_file
        first_answer = next(e["id"] for e in session.session_manager.get_entries() if e.get("type") == "message"
                            and e["message"].get("role") == "assistant" and "Planned it." in str(e["message"]["content"]))

        await command("/tree")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "TreeScreen")
        for _ in range(30):
            if app.screen.selected.entry_id == first_answer:
                break
            await pilot.press("up")
        assert app.screen.selected.entry_id == first_answer
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SummarizeChoiceScreen")
        await pilot.press("enter")  # no summary
        await wait_for(pilot, lambda: session.session_manager.leaf_id == first_answer and "Todo 0/2" in shown())
        assert "▶ Read the loader" in shown() and "Run the tests" not in shown()

        await command("/new")
        await wait_for(pilot, lambda: session.state.session_file != file and shown() == "")

        await command("/resume")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionPickerScreen)
                       and file in [info.path for info in app.screen.shown])
        await pilot.press(*"FIRST")
        await wait_for(pilot, lambda: [info.path for info in app.screen.shown] == [file])
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.state.session_file == file and "Todo 2/3" in shown())
        assert "▶ Run the tests" in shown()
