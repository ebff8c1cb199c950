"""Questions through the session's dialogs (``AgentSession.ask_user``), as the TUI and RPC ask
them: what the dialog shows, Deny first for an escalation, and each answer's effect."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from pi_tui.permissions.sandbox import find_bwrap
from pi_tui.permissions.setup import PermissionOptions
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.permissions.conftest import FakeWorld
from tests.session.test_session_hooks import _ChoosingUI

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed")


class Dialogs(_ChoosingUI):
    """The mode's dialogs (``extensions.ui.ExtensionUI``), answering with a chosen option."""

    def __init__(self, pick: Any) -> None:
        super().__init__(None)
        self.pick = pick
        self.shown = self.asked

    async def select(self, title: str, options: Sequence[str], *, timeout_s: float | None) -> str | None:
        self.shown.append((title, list(options)))
        choice: str | None = self.pick(list(options))
        return choice


class _Results(dict[str, Any]):
    """The tool results by call id; ``stopped``: the model's next turn never came."""

    stopped = False


async def run(world: FakeWorld, calls: list[dict[str, Any]], dialogs: Dialogs, mode: str) -> _Results:
    provider = ScriptedProvider([{"tool_calls": calls}, {"text": "done"}])
    session = create_agent_session(cwd=world.project, agent_dir=world.agent, provider=provider, no_session=True,
                                   permissions=PermissionOptions(mode=mode, ask_through_session=True),
                                   trust_project=True, load_extensions=False)
    session.set_extension_ui(dialogs)
    await session.prompt("go")
    results = _Results({m["toolCallId"]: m for m in session.messages if m["role"] == "toolResult"})
    results.stopped = not any(m["role"] == "assistant" and "done" in str(m["content"]) for m in session.messages)
    return results



async def test_an_escalation_shows_why_and_puts_deny_first(fake_world: FakeWorld) -> None:
    dialogs = Dialogs(lambda options: options[0])  # what Enter picks
    calls = [{"id": "e", "name": "bash", "arguments": {"command": "touch ~/x", "escalate": True,
                                                       "justification": "needs \x1b[31mhome"}}]
    results = await run(fake_world, calls, dialogs, "auto")
    ((title, options),) = dialogs.shown
    assert options == ["Deny", "Allow once", "Deny and stop the turn", "Deny with a note to the model…"]
    assert "bash `touch ~/x`" in title and f"in {fake_world.project}" in title
    assert "why: the model asks to run it outside the sandbox" in title
    assert "the model says: needs" in title and "\x1b" not in title
    assert results["e"]["isError"] and not (fake_world.home / "x").exists()


async def test_always_for_the_project_writes_the_rule(fake_world: FakeWorld) -> None:
    dialogs = Dialogs(lambda options: next(o for o in options if o.endswith("(this project, .pi/settings.json)")))
    calls = [{"id": "b", "name": "bash", "arguments": {"command": "ls -a"}}]
    results = await run(fake_world, calls, dialogs, "default")
    ((_, options),) = dialogs.shown
    assert options[0] == "Allow once" and "Always allow Bash(ls -a) (you, every project)" in options
    assert not results["b"]["isError"]
    saved = json.loads((fake_world.project / ".pi" / "settings.json").read_text())
    assert saved == {"permissions": {"allow": ["Bash(ls -a)"]}}


async def test_a_closed_dialog_denies_and_stops_the_turn(fake_world: FakeWorld) -> None:
    dialogs = Dialogs(lambda options: None)
    calls = [{"id": "w", "name": "write", "arguments": {"path": "a.txt", "content": "x"}}]
    results = await run(fake_world, calls, dialogs, "default")
    text = results["w"]["content"][0]["text"]
    assert "Denied by the user" in text and "no answer" in text and not (fake_world.project / "a.txt").exists()
    assert results.stopped  # the model's next turn never came


async def test_a_note_reaches_the_model_and_the_turn_goes_on(fake_world: FakeWorld) -> None:
    class Noting(Dialogs):
        async def input(self, title: str, placeholder: str | None, *, timeout_s: float | None) -> str | None:
            self.shown.append((title, []))
            return "use \x1b[31mb.txt\n instead"

    dialogs = Noting(lambda options: options[-1])
    calls = [{"id": "w", "name": "write", "arguments": {"path": "a.txt", "content": "x"}}]
    results = await run(fake_world, calls, dialogs, "default")
    assert dialogs.shown[0][1][-1] == "Deny with a note to the model…" and "tell the model" in dialogs.shown[1][0]
    text = results["w"]["content"][0]["text"]
    assert text.endswith("Denied by the user: do not retry it; ask the user what to do instead. "
                         "The user said: use b.txt instead"), text
