"""The permission question in the real TUI (Textual pilot): the dialog shows the command, the
folder and why; Enter on an escalation denies; Esc denies and stops the turn; a note reaches the
model; the footer shows the mode and alt+m cycles it."""

from __future__ import annotations

from typing import Any

import pytest

from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.screens.extension_dialogs import (
    ExtensionInputScreen,
    ExtensionSelectScreen,
)
from pi_tui.modes.interactive.widgets.footer import StatusFooter
from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel
from pi_tui.permissions.sandbox import find_bwrap
from pi_tui.permissions.setup import PermissionOptions
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.conftest import fixed_clock, ready, settle, wait_for
from tests.modes.interactive.test_extension_dialogs import submit
from tests.permissions.conftest import FakeWorld

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed")


def app_for(world: FakeWorld, turns: list[dict[str, Any]], mode: str) -> tuple[PiApp, Any]:
    session = create_agent_session(cwd=world.project, agent_dir=world.agent, provider=ScriptedProvider(turns),
                                   settings={}, load_extensions=False, trust_project=True,
                                   permissions=PermissionOptions(mode=mode, ask_through_session=True))
    return PiApp(session, cwd=world.project, agent_dir=world.agent, clock=fixed_clock), session


def footer_text(app: PiApp) -> str:
    return str(app.screen.query_one(StatusFooter).render())


async def test_enter_on_an_escalation_denies(fake_world: FakeWorld) -> None:
    turns: list[dict[str, Any]] = [{"tool_calls": [{"id": "e", "name": "bash", "arguments": {
        "command": "touch ~/owned", "escalate": True, "justification": "write to your home"}}]}, {"text": "done"}]
    app, _ = app_for(fake_world, turns, "auto")
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "go")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionSelectScreen))
        shown = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert "touch ~/owned" in shown and str(fake_world.project) in shown
        assert "outside the sandbox" in shown and "write to your home" in shown
        await pilot.press("enter")
        await settle(app, pilot)
        panel = app.screen.query_one(ToolCallPanel)
        assert panel.state.status == "error" and "Denied by the user" in (panel.state.output or "")
    assert not (fake_world.home / "owned").exists()


async def test_allow_once_runs_in_the_sandbox_and_the_footer_shows_the_mode(fake_world: FakeWorld) -> None:
    turns: list[dict[str, Any]] = [{"tool_calls": [{"id": "b", "name": "bash", "arguments": {"command": "echo hi > made.txt"}}]},
             {"text": "done"}]
    app, session = app_for(fake_world, turns, "default")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert "mode default" in footer_text(app)
        await submit(pilot, "go")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionSelectScreen))
        await pilot.press("enter")  # not an escalation: the first option is "Allow once"
        await settle(app, pilot)
        assert app.screen.query_one(ToolCallPanel).state.status == "ok"
        assert (fake_world.project / "made.txt").read_text() == "hi\n"
        await pilot.press("alt+m")
        await pilot.pause()
        assert session.permissions.mode == "acceptEdits" and "mode acceptEdits" in footer_text(app)


async def test_esc_denies_and_stops_the_turn(fake_world: FakeWorld) -> None:
    turns: list[dict[str, Any]] = [{"tool_calls": [{"id": "b", "name": "bash", "arguments": {"command": "echo hi > made.txt"}}]},
             {"text": "the model went on"}]
    app, session = app_for(fake_world, turns, "default")
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "go")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionSelectScreen))
        assert isinstance(app.screen, ExtensionSelectScreen) and "Deny with a note to the model…" in app.screen.shown
        await pilot.press("escape")
        await settle(app, pilot)
        panel = app.screen.query_one(ToolCallPanel)
        assert panel.state.status == "error" and "Denied by the user" in (panel.state.output or "")
        assert "the dialog was closed" in (panel.state.output or "")
    assert not (fake_world.project / "made.txt").exists()
    assert not session.is_streaming
    assert not any(m["role"] == "assistant" and "the model went on" in str(m["content"]) for m in session.messages)


async def test_deny_with_a_note_reaches_the_model(fake_world: FakeWorld) -> None:
    turns: list[dict[str, Any]] = [{"tool_calls": [{"id": "b", "name": "bash", "arguments": {"command": "echo hi > made.txt"}}]},
             {"text": "the model went on"}]
    app, session = app_for(fake_world, turns, "default")
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "go")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionSelectScreen))
        await pilot.press(*"note")  # the filter leaves the one option
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ExtensionInputScreen))
        await pilot.press(*"write it under out/ instead")
        await pilot.press("enter")
        await settle(app, pilot)
    result = next(m for m in session.messages if m["role"] == "toolResult")
    assert result["isError"] and "The user said: write it under out/ instead" in result["content"][0]["text"]
    assert not (fake_world.project / "made.txt").exists()
    assert any(m["role"] == "assistant" and "the model went on" in str(m["content"]) for m in session.messages)
