"""Each way checkpoints can fail says so clearly, and no one's work is lost."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from pi_tui.checkpoints.git_store import store_dir_for
from pi_tui.core.errors import PiError
from tests.checkpoints.conftest import (
    bash,
    cp_entries,
    needs_git,
    picture,
    tree_hashes,
    user_git,
    write,
)

pytestmark = needs_git


def _notes(events: list[dict]) -> list[str]:
    return [e["message"] for e in events if e["type"] == "notify"]


async def test_no_git_on_path_turns_it_off_with_one_line(make_session, project: Path, monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    empty = tmp_path / "no-git-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    session, _, events = make_session([write("a.txt", "1"), {"text": "done"}])
    await session.start()
    await session.prompt("go")
    assert (project / "a.txt").read_text() == "1"
    off = [n for n in _notes(events) if "Checkpoints are off" in n]
    assert off == ["Checkpoints are off: git is not on PATH (install git to have /tree, /fork and /undo bring files back)"]
    with pytest.raises(PiError, match="File checkpoints are off: git is not on PATH"):
        await session.navigate_tree(session.session_manager.get_entries()[0]["id"], restore_files=True)
    assert cp_entries(session) == []


async def test_a_snapshot_past_its_time_limit_is_recorded_as_skipped_and_the_turn_goes_on(make_session, project: Path) -> None:
    session, _, events = make_session([write("a.txt", "1"), {"text": "done"}],
                                      settings={"checkpoints": {"timeoutMs": 1}})
    await session.prompt("go")
    assert session.messages[-1]["content"][0]["text"] == "done"
    skipped = [e for e in events if e["type"] == "checkpoint" and e["action"] == "skipped"]
    assert skipped and "took longer than checkpoints.timeoutMs (1 ms)" in skipped[0]["message"]
    recorded = [e["data"] for e in cp_entries(session)]
    assert recorded and all(d["commit"] is None and "timeoutMs" in d["skippedBecause"] for d in recorded)


async def test_a_missing_snapshot_refuses_the_restore_before_anything_moves(make_session, project: Path,
                                                                            agent_dir: Path) -> None:
    session, _, _ = make_session([write("a.txt", "1"), {"text": "1"}, write("a.txt", "2"), {"text": "2"}])
    await session.prompt("one")
    await session.prompt("two")
    shutil.rmtree(store_dir_for(agent_dir, project))
    leaf, files = session.session_manager.leaf_id, picture(project)
    second = [e for e in session.session_manager.get_entries() if e.get("message", {}).get("role") == "user"][1]
    with pytest.raises(PiError, match=r"Cannot restore files: snapshot [0-9a-f]{40} is missing from the store"):
        await session.navigate_tree(second["id"], restore_files=True)
    assert picture(project) == files
    assert session.session_manager.leaf_id == leaf  # the conversation did not move either


def _real(path: Path) -> str:
    return os.path.realpath(path)


async def test_cwd_is_home_turns_it_off(make_session, isolated_home: Path) -> None:
    home = _real(isolated_home)
    session, _, events = make_session([{"text": "hi"}], cwd=isolated_home)
    await session.start()
    await session.prompt("hello")
    assert [n for n in _notes(events) if "Checkpoints are off" in n] == [
        f"Checkpoints are off: the working folder is your home folder ({home}); "
        "nothing is snapshotted there"]


async def test_a_nested_repository_is_left_alone(make_session, project: Path) -> None:
    user_git(project, "init", "-q")
    inner = project / "lib"
    inner.mkdir()
    user_git(inner, "init", "-q")
    (inner / "code.c").write_text("v1")
    user_git(inner, "add", "code.c")
    user_git(inner, "commit", "-qm", "inner")
    inner_git = tree_hashes(inner / ".git")
    outer_git = tree_hashes(project / ".git")
    session, _, events = make_session([bash("echo v2 > lib/code.c; echo top > top.txt"), {"text": "done"}])
    await session.prompt("go")
    first = next(e for e in session.session_manager.get_entries() if e.get("message", {}).get("role") == "user")
    result = await session.navigate_tree(first["id"], restore_files=True)
    assert result.files["deleted"] == ["top.txt"]
    assert (inner / "code.c").read_text() == "v2\n"  # inside the nested repository: not ours to restore
    assert tree_hashes(inner / ".git") == inner_git and tree_hashes(project / ".git") == outer_git
    skipped = [e for e in events if e["type"] == "checkpoint" and e.get("skipped")]
    assert skipped and skipped[0]["skipped"] == ["lib/ (a nested git repository)"]


async def test_two_sessions_of_one_project_at_once(make_session, project: Path) -> None:
    one, _, events_one = make_session([bash("echo 1 > one.txt"), {"text": "1"}])
    two, _, events_two = make_session([bash("echo 2 > two.txt"), {"text": "2"}])
    await asyncio.gather(one.prompt("first"), two.prompt("second"))
    assert not [e for e in events_one + events_two if e["type"] == "checkpoint" and e["action"] == "failed"]
    assert cp_entries(one) and cp_entries(two)
    target = next(e for e in one.session_manager.get_entries() if e.get("message", {}).get("role") == "user")
    from pi_tui.session.checkpoint_hooks import preview_restore

    leaf = one.session_manager.leaf_id
    await preview_restore(one, target["id"])  # which of them saw the other's file first is a race
    await one.navigate_tree(target["id"], restore_files=True)
    assert not (project / "one.txt").exists()
    await one.navigate_tree(leaf, restore_files=True)  # whatever the restore took away comes back
    assert (project / "one.txt").read_text() == "1\n" and (project / "two.txt").read_text() == "2\n"
