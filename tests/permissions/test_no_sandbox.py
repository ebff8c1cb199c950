"""When bwrap cannot run: a bwrap that fails the way Docker's default seccomp profile makes it
fail (a script standing in for /usr/bin/bwrap, the real preflight reading its stderr). Headless
runs say why and deny bash unless ``sandbox.allowUnsandboxed``; an allow rule runs its command
unsandboxed and says so once; the TUI shows "no sandbox" and asks for every bash call."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from pi_tui.modes.interactive.app import PiApp
from pi_tui.modes.interactive.screens.extension_dialogs import ExtensionSelectScreen
from pi_tui.modes.interactive.widgets.events_pane import EventsPane
from pi_tui.modes.interactive.widgets.footer import StatusFooter
from pi_tui.modes.print_mode import say_on_stderr
from pi_tui.permissions import sandbox, setup
from pi_tui.permissions.setup import PermissionOptions
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.conftest import fixed_clock, settle, wait_for
from tests.modes.interactive.test_extension_dialogs import submit
from tests.permissions.conftest import FakeWorld

DOCKER = "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged"


@pytest.fixture
def failing_bwrap(fake_world: FakeWorld, monkeypatch: pytest.MonkeyPatch) -> Path:
    program = fake_world.base / "bwrap"
    program.write_text(f"#!/bin/sh\n[ \"$1\" = --help ] && exit 0\necho '{DOCKER} user namespaces.' >&2\nexit 1\n")
    program.chmod(0o755)
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: str(program))
    monkeypatch.setattr(setup, "_PREFLIGHTS", {})  # the run's preflight: this one
    return program


def bash(*commands: str) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"id": f"b{i}", "name": "bash", "arguments": {"command": c}}]}
            for i, c in enumerate(commands)] + [{"text": "done"}]


def settings(world: FakeWorld, content: dict[str, Any]) -> None:
    (world.agent / "settings.json").write_text(json.dumps(content))


async def headless(world: FakeWorld, turns: list[dict[str, Any]]) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
    session = create_agent_session(cwd=world.project, agent_dir=world.agent, provider=ScriptedProvider(turns),
                                   no_session=True, permissions=PermissionOptions(), trust_project=True,
                                   load_extensions=False)
    events: list[dict[str, Any]] = []
    session.subscribe(events.append)
    session.subscribe(say_on_stderr)  # what print mode does with them
    await session.prompt("go")
    return session, {m["toolCallId"]: m for m in session.messages if m["role"] == "toolResult"}, events


async def test_headless_says_why_and_denies_bash(fake_world: FakeWorld, failing_bwrap: Path) -> None:
    session, results, _ = await headless(fake_world, bash("touch ~/outside.txt"))
    assert any("no sandbox: user namespaces are refused (Docker's default seccomp profile does this): run the "
               "container with --security-opt seccomp=unconfined, or use --permission-mode bypassPermissions "
               f"(bwrap said: {DOCKER} user namespaces.); bash asks every time (here: is denied)" in str(d)
               for d in session.diagnostics()), session.diagnostics()
    assert results["b0"]["isError"] and "there is no sandbox here" in results["b0"]["content"][0]["text"]
    assert not (fake_world.home / "outside.txt").exists()


async def test_allow_unsandboxed_runs_bash_headless_and_says_so_once(fake_world: FakeWorld, failing_bwrap: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    settings(fake_world, {"sandbox": {"allowUnsandboxed": True}})
    _, results, events = await headless(fake_world, bash("touch ~/one.txt", "touch ~/two.txt"))
    assert not results["b0"]["isError"] and not results["b1"]["isError"]
    assert (fake_world.home / "one.txt").exists() and (fake_world.home / "two.txt").exists()  # full rights
    said = [e for e in events if e["type"] == "permission_unsandboxed"]
    assert len(said) == 1 and "sandbox.allowUnsandboxed is set" in said[0]["reason"]
    err = capsys.readouterr().err
    assert err.count("pi-tui: no sandbox (default mode): bash `touch ~/one.txt`: sandbox.allowUnsandboxed is set; "
                     "there is no sandbox here (user namespaces are refused") == 1, err


async def test_an_allow_rule_runs_unsandboxed_and_says_so(fake_world: FakeWorld, failing_bwrap: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    settings(fake_world, {"permissions": {"allow": ["Bash(touch:*)"]}})
    _, results, events = await headless(fake_world, bash("touch ~/ruled.txt", "echo no"))
    assert not results["b0"]["isError"] and (fake_world.home / "ruled.txt").exists()
    assert results["b1"]["isError"]  # no rule: denied, as before
    said = [e for e in events if e["type"] == "permission_unsandboxed"]
    assert [e["toolCallId"] for e in said] == ["b0"] and "allow rule" in said[0]["reason"], said
    assert "pi-tui: no sandbox (default mode): bash `touch ~/ruled.txt`: the allow rule" in capsys.readouterr().err


def dialog_text(app: PiApp) -> str:
    return " ".join(str(w.render()) for w in app.screen.query("Static"))


def asking(app: PiApp, command: str) -> bool:
    return (isinstance(app.screen, ExtensionSelectScreen) and command in dialog_text(app)
            and "Allow once" in app.screen.shown)


def more_results(session: Any, than: int) -> bool:
    return bool(sum(m["role"] == "toolResult" for m in session.messages) > than)


async def test_the_tui_shows_no_sandbox_asks_every_time_and_lists_a_rule_run(fake_world: FakeWorld,
                                                                             failing_bwrap: Path) -> None:
    settings(fake_world, {"permissions": {"allow": ["Bash(touch:*)"]}})
    session = create_agent_session(cwd=fake_world.project, agent_dir=fake_world.agent,
                                   provider=ScriptedProvider(bash("echo one > 1.txt", "echo two > 2.txt", "touch r")),
                                   load_extensions=False, trust_project=True,
                                   permissions=PermissionOptions(ask_through_session=True))
    app = PiApp(session, cwd=fake_world.project, agent_dir=fake_world.agent, clock=fixed_clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "go")
        for done, command in enumerate(("echo one > 1.txt", "echo two > 2.txt")):  # asked again, every time
            await wait_for(pilot, partial(asking, app, command))
            assert "there is no sandbox here" in dialog_text(app) and "full rights" in dialog_text(app)
            await pilot.press("enter")  # Allow once
            await wait_for(pilot, partial(more_results, session, done))
        await settle(app, pilot)
        chat = app.chat
        assert chat is not None and "no sandbox" in str(chat.query_one(StatusFooter).render())
        titles = [f"{line.title} | {line.detail}" for line in chat.query_one(EventsPane).lines]
        assert [t for t in titles if t.startswith("bash ran without a sandbox | bash `touch r`: the allow rule")], titles
    assert (fake_world.project / "1.txt").exists() and (fake_world.project / "2.txt").exists()
    assert (fake_world.project / "r").exists()
