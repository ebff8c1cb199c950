"""A subagent's session file is told apart from a fork in ``pi-tui sessions`` and ``/resume``
(issue 23): both have a ``parentSession``, but a ``task`` child's file starts with a
``pi-tui:subagent`` custom entry (agent, description) that pi skips, and the listings label it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pi_tui.cli import main
from pi_tui.core.messages import user_message
from pi_tui.core.session.listing import SUBAGENT_ENTRY_TYPE, list_sessions, session_info
from pi_tui.core.session.manager import SessionManager
from pi_tui.modes.interactive.screens.session_picker import SessionPickerScreen
from pi_tui.resources.locations import default_session_dir
from pi_tui.sdk import create_agent_session
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.screens.builders import ScreenHost
from tests.session.conftest import MODEL
from tests.subagents.conftest import read_jsonl

TURNS: list[dict[str, Any]] = [
    {"when": {"last_user_contains": "PARENT"}, "tool_calls": [{"id": "t1", "name": "task", "arguments": {
        "description": "find the loader", "prompt": "CHILD: where is config.toml read?", "subagent_type": "explore"}}]},
    {"when": {"last_user_contains": "CHILD"}, "text": "loader.py reads it."},
    {"when": {"last_user_contains": "PARENT"}, "text": "The loader reads it first."},
]


async def _parent_child_and_fork(project: Path, agent_dir: Path) -> tuple[Path, Path, Path]:
    folder = default_session_dir(project)
    session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider(TURNS), model=MODEL,
                                   settings={"subagents": {"enabled": True}}, load_extensions=False,
                                   session_dir=folder)
    await session.prompt("PARENT: where is the config read?")
    parent = session.session_manager.session_file
    result = next(m for m in session.messages if m.get("role") == "toolResult" and m.get("toolName") == "task")
    child = Path(result["details"]["childSession"])
    with SessionManager.create(project, folder) as forked:  # a fork: parentSession, and no subagent entry
        forked.new_session(parent_session=str(parent))
        forked.append_message(user_message("a fork of the parent"))
        fork = forked.session_file
    assert parent is not None and fork is not None
    return parent, child, fork


async def test_the_child_file_says_whose_subagent_it_is(project: Path, agent_dir: Path) -> None:
    parent, child, fork = await _parent_child_and_fork(project, agent_dir)
    entries = read_jsonl(child)
    assert entries[0]["parentSession"] == str(parent)
    assert entries[1]["type"] == "custom" and entries[1]["customType"] == SUBAGENT_ENTRY_TYPE
    assert entries[1]["data"] == {"agent": "explore", "description": "find the loader", "depth": 1}
    infos = {info.path: info for info in list_sessions(child.parent)}
    assert infos[child].subagent == "explore: find the loader"
    assert infos[child].first_message == "CHILD: where is config.toml read?"
    assert infos[parent].subagent is None and infos[fork].subagent is None
    assert infos[fork].parent_session_path == str(parent)  # a fork has a parent too, but no label
    assert session_info(child) is not None and session_info(child).to_json()["subagent"] == "explore: find the loader"
    assert "subagent" not in infos[fork].to_json()  # pi's shape for everything else


async def test_pi_tui_sessions_labels_the_child(project: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parent, child, fork = await _parent_child_and_fork(project, agent_dir)
    capsys.readouterr()
    assert main(["sessions"]) == 0
    lines = {line.rsplit("  ", 1)[-1]: line for line in capsys.readouterr().out.splitlines()}
    assert '↳ subagent explore: find the loader of "PARENT: where is..."' in lines[str(child)]
    assert "subagent" not in lines[str(parent)] and "subagent" not in lines[str(fork)]
    assert main(["sessions", "--json"]) == 0
    listed = {item["path"]: item for item in json.loads(capsys.readouterr().out)}
    assert listed[str(child)]["subagent"] == "explore: find the loader"
    assert "subagent" not in listed[str(fork)]


async def test_resume_picker_nests_and_labels_the_child(project: Path, agent_dir: Path) -> None:
    parent, child, fork = await _parent_child_and_fork(project, agent_dir)
    screen = SessionPickerScreen(session_dir=child.parent, sessions_root=child.parent.parent,
                                 now=lambda: datetime(2030, 1, 1, tzinfo=UTC))
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        paths = [info.path for info in screen.shown]
        assert set(paths) == {parent, child, fork}
        child_row = str(screen.session_row(paths.index(child)))
        assert child_row.startswith("  └ subagent · explore: find the loader  CHILD: where is config.toml read?")
        fork_row = str(screen.session_row(paths.index(fork)))
        assert fork_row.startswith("  └ a fork of the parent") and "subagent" not in fork_row
        assert "subagent" not in str(screen.session_row(paths.index(parent)))
