"""Subagents are gated as their parent is: a ``general`` child's bash runs in the parent's
sandbox, and ``explore`` (read-only) runs bash in ``plan`` mode — the read-only sandbox without
network — whatever the parent's mode, bypass included. Without a gate, explore has no bash."""

from __future__ import annotations

from typing import Any

import pytest

from pi_tui.permissions.sandbox import find_bwrap
from pi_tui.permissions.setup import PermissionOptions
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.permissions.conftest import FakeWorld

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed")
SUBAGENT = "working as a subagent"
WRITES = "echo child > by-child.txt; echo home > ~/child-home.txt; cat .git/config"


def delegating(agent: str, command: str) -> ScriptedProvider:
    return ScriptedProvider([
        {"when": {"last_user_contains": "PARENT"}, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
            "description": "look", "prompt": "CHILD: go", "subagent_type": agent}}]},
        {"when": {"last_user_contains": "CHILD"}, "tool_calls": [
            {"id": "c1", "name": "bash", "arguments": {"command": command}}]},
        {"when": {"last_user_contains": "CHILD"}, "text": "child done"},
        {"when": {"last_user_contains": "PARENT"}, "text": "ok"},
    ])


async def run(world: FakeWorld, agent: str, *, mode: str | None) -> tuple[str, Any, ScriptedProvider]:
    provider = delegating(agent, WRITES)
    session = create_agent_session(
        cwd=world.project, agent_dir=world.agent, provider=provider, no_session=True, trust_project=True,
        permissions=PermissionOptions(mode=mode) if mode else None, load_extensions=False,
        active_tools=["read", "bash", "task"])
    await session.prompt("PARENT: delegate")
    child_results = [m for r in provider.requests if SUBAGENT in r.system_prompt for m in r.messages
                     if m.get("role") == "toolResult"]
    text = "".join(b.get("text", "") for m in child_results[-1:] for b in m["content"])
    return text, session, provider


@pytest.mark.parametrize("mode", ["auto", "bypassPermissions"])
async def test_explore_runs_bash_read_only_whatever_the_parents_mode(fake_world: FakeWorld, mode: str) -> None:
    text, _, provider = await run(fake_world, "explore", mode=mode)
    child = next(r for r in provider.requests if SUBAGENT in r.system_prompt)
    assert "bash" in [t.name for t in child.tools]
    assert "Read-only file system" in text and "[core]" in text  # it ran, and could read
    assert not (fake_world.project / "by-child.txt").exists()
    assert not (fake_world.home / "child-home.txt").exists()


async def test_a_general_child_runs_in_the_parents_sandbox(fake_world: FakeWorld) -> None:
    text, _, _ = await run(fake_world, "general", mode="auto")
    assert (fake_world.project / "by-child.txt").read_text() == "child\n"  # the project is writable
    assert not (fake_world.home / "child-home.txt").exists() and "Read-only file system" in text


async def test_without_a_gate_explore_has_no_bash(fake_world: FakeWorld) -> None:
    _, _, provider = await run(fake_world, "explore", mode=None)
    child = next(r for r in provider.requests if SUBAGENT in r.system_prompt)
    assert sorted(t.name for t in child.tools) == ["find", "grep", "ls", "read"]
