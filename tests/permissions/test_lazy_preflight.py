"""bwrap's preflight runs when a decision first needs it, once per run: a print run that calls no
tool never starts bwrap (it cost every ``-p`` run ~20-60 ms plus a ``bwrap --help``) nor builds
the gate, and a missing sandbox is still reported, when it is first learnt."""

from __future__ import annotations

from typing import Any

import pytest

from pi_tui.permissions import setup
from pi_tui.permissions.sandbox import Preflight, find_bwrap
from pi_tui.permissions.setup import PermissionOptions
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.permissions.conftest import FakeWorld


@pytest.fixture
def preflights(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Counts the real preflights (the run's cache emptied)."""
    started: list[Any] = []
    real = setup.run_preflight

    def counted(policy: Any) -> Preflight:
        started.append(policy)
        return real(policy)

    monkeypatch.setattr(setup, "_PREFLIGHTS", {})
    monkeypatch.setattr(setup, "run_preflight", counted)
    return started


def session_for(world: FakeWorld, turns: list[dict[str, Any]], *, mode: str | None = None) -> Any:
    return create_agent_session(cwd=world.project, agent_dir=world.agent, provider=ScriptedProvider(turns),
                                no_session=True, permissions=PermissionOptions(mode=mode), trust_project=True,
                                load_extensions=False, active_tools=["read", "bash", "edit", "write"])


async def test_a_run_without_tool_calls_never_starts_bwrap(fake_world: FakeWorld, preflights: list[Any]) -> None:
    session = session_for(fake_world, [{"text": "hi"}])
    await session.prompt("say hi")
    assert preflights == []
    assert session.permissions is None  # print mode: the gate is built at the first tool call
    read = session_for(fake_world, [{"tool_calls": [{"id": "r", "name": "read", "arguments": {"path": "a"}}]},
                                    {"text": "done"}], mode="auto")
    (fake_world.project / "a").write_text("x")
    await read.prompt("read a")
    assert preflights == []  # a read is decided from the paths alone


@pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed")
async def test_the_first_bash_call_runs_it_once_and_settles_the_mode(fake_world: FakeWorld,
                                                                      preflights: list[Any]) -> None:
    bash = [{"tool_calls": [{"id": f"b{i}", "name": "bash", "arguments": {"command": "echo ran > out.txt"}}
                            for i in range(2)]}, {"text": "done"}]
    session = session_for(fake_world, bash)
    await session.prompt("go")
    assert len(preflights) == 1
    gate = session.permissions
    assert gate.settled and gate.mode == "auto" and gate.sandboxed  # the trusted default with a sandbox
    assert (fake_world.project / "out.txt").read_text() == "ran\n"
    again = session_for(fake_world, bash)
    await again.prompt("go")
    assert len(preflights) == 1  # one per run, whatever the number of sessions


async def test_no_sandbox_is_reported_when_learnt(fake_world: FakeWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(setup, "_PREFLIGHTS", {"bwrap": Preflight(False, "bwrap is not installed (test)")})
    session = session_for(fake_world, [{"tool_calls": [{"id": "b", "name": "bash", "arguments": {"command": "id"}}]},
                                       {"text": "done"}])
    assert not any("no sandbox" in str(d) for d in session.diagnostics())
    await session.prompt("go")
    assert session.permissions.mode == "default"  # trusted, but the sandbox cannot run
    assert any("no sandbox: bwrap is not installed (test); bash asks every time (here: is denied)" in str(d)
               for d in session.diagnostics())
    result = next(m for m in session.messages if m["role"] == "toolResult")
    assert result["isError"] and "there is no sandbox here" in result["content"][0]["text"]


def test_a_bad_mode_is_still_a_start_up_error(fake_world: FakeWorld) -> None:
    (fake_world.agent / "settings.json").write_text('{"permissions": {"defaultMode": "sometimes"}}')
    from pi_tui.permissions.modes import ModeError

    with pytest.raises(ModeError, match="unknown permission mode 'sometimes'"):
        session_for(fake_world, [{"text": "hi"}])
