"""Files follow the session tree, through the real AgentSession on the scripted provider and the
real git: branches of conversation are branches of code, after /fork and after a restart, and no
file anyone wrote is lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.errors import PiError
from pi_tui.session.checkpoint_hooks import redo, undo
from tests.checkpoints.conftest import (
    bash,
    cp_entries,
    edit,
    needs_git,
    picture,
    tree_hashes,
    user_git,
    write,
)

pytestmark = needs_git


def _user_ids(session: Any) -> list[str]:
    return [e["id"] for e in session.session_manager.get_branch()
            if e.get("type") == "message" and e["message"]["role"] == "user"]


def _last_non_checkpoint(session: Any) -> str:
    for entry in reversed(session.session_manager.get_branch()):
        if entry.get("customType") != "pi-tui.checkpoint":
            return str(entry["id"])
    raise AssertionError("empty branch")


async def test_a_session_that_changes_no_file_gets_no_checkpoint_entries(make_session, project: Path) -> None:
    (project / "readme.md").write_text("hi")
    session, _, events = make_session([bash("ls"), {"text": "listed"}, {"text": "plain"}])
    await session.prompt("list")
    await session.prompt("talk")
    assert cp_entries(session) == []
    assert not [e for e in events if e["type"] == "checkpoint"]


async def test_edit_write_bash_restored_byte_for_byte(make_session, project: Path) -> None:
    (project / "pre.txt").write_text("was here before the session\n")
    (project / "notes.md").write_text("alpha\nbeta\n")
    before = picture(project)
    session, _, events = make_session([
        write("new dir/caf\u00e9 \u00fc.txt", "created\n"), {"text": "1"},
        edit("notes.md", "beta", "gamma"), {"text": "2"},
        bash("printf 'x' > 'odd\nname'; chmod +x notes.md; ln -s notes.md link; rm pre.txt"), {"text": "3"},
    ])
    await session.prompt("one")
    after_one = picture(project)
    await session.prompt("two")
    await session.prompt("three")
    final = picture(project)
    assert "odd\nname" in final and final["link"] == ("link", b"notes.md") and final["notes.md"][0] == "filex"
    snapshots = [e for e in events if e["type"] == "checkpoint" and e["action"] == "snapshot"]
    assert len(snapshots) == 3 and all(isinstance(e["ms"], int) for e in snapshots)

    first, second, _third = _user_ids(session)
    result = await session.navigate_tree(first, restore_files=True)
    assert result.editor_text == "one" and result.files["restored"] is True
    assert picture(project) == before
    assert sorted(result.files["deleted"]) == ["link", "new dir/caf\u00e9 \u00fc.txt", "odd\nname"]
    result = await session.navigate_tree(second, restore_files=True)
    assert picture(project) == after_one
    assert [e["action"] for e in events if e["type"] == "checkpoint"][-1] == "restore"


async def test_branches_keep_their_own_files_across_fork_and_restart(make_session, project: Path, agent_dir: Path) -> None:
    session, _, _ = make_session([
        write("f.txt", "A\n"), {"text": "a"},
        write("f.txt", "B\n"), {"text": "b"},
        write("f.txt", "C\n"), {"text": "c"},
        write("f.txt", "D\n"), {"text": "d"},
    ])
    await session.prompt("a")
    await session.prompt("b")
    b_leaf = _last_non_checkpoint(session)
    await session.prompt("c")
    c_leaf = _last_non_checkpoint(session)
    await session.navigate_tree(b_leaf, restore_files=True)
    assert (project / "f.txt").read_text() == "B\n"
    await session.prompt("d")  # A→B→D
    d_leaf = _last_non_checkpoint(session)
    assert (project / "f.txt").read_text() == "D\n"
    await session.navigate_tree(c_leaf, restore_files=True)
    assert (project / "f.txt").read_text() == "C\n"
    await session.navigate_tree(d_leaf, restore_files=True)
    assert (project / "f.txt").read_text() == "D\n"
    path = session.session_manager.session_file
    session.session_manager.close()

    # after a restart: the same tree, the same files
    again, _, _ = make_session([], session=str(path))
    await again.start()
    await again.navigate_tree(c_leaf, restore_files=True)
    assert (project / "f.txt").read_text() == "C\n"
    await again.navigate_tree(b_leaf, restore_files=True)
    assert (project / "f.txt").read_text() == "B\n"

    # /fork from the prompt "c": the new session starts with B's files
    await again.navigate_tree(c_leaf, restore_files=True)
    c_prompt = list(_user_ids(again))[-1]
    selected = await again.fork(c_prompt, restore_files=True)
    assert selected == "c" and (project / "f.txt").read_text() == "B\n"
    assert again.last_restore is not None and again.last_restore["changed"] == ["f.txt"]
    assert again.session_manager.session_file != path


async def test_a_user_edit_after_the_last_turn_survives_a_restore_and_comes_back(make_session, project: Path) -> None:
    session, _, _ = make_session([write("f.txt", "agent 1\n"), {"text": "1"}, write("f.txt", "agent 2\n"), {"text": "2"}])
    await session.prompt("one")
    await session.prompt("two")
    leaf = _last_non_checkpoint(session)
    (project / "f.txt").write_text("the user's own edit\n")
    (project / "mine.txt").write_text("a file only the user made\n")
    preview_target = _user_ids(session)[1]
    from pi_tui.session.checkpoint_hooks import preview_restore

    preview = await preview_restore(session, preview_target)
    assert preview["editedSinceSnapshot"] == {"changed": ["f.txt"], "created": ["mine.txt"], "deleted": []}
    await session.navigate_tree(preview_target, restore_files=True)
    assert (project / "f.txt").read_text() == "agent 1\n" and not (project / "mine.txt").exists()
    await session.navigate_tree(leaf, restore_files=True)
    assert (project / "f.txt").read_text() == "the user's own edit\n"
    assert (project / "mine.txt").read_text() == "a file only the user made\n"


async def test_undo_and_redo(make_session, project: Path) -> None:
    (project / "keep.txt").write_text("keep")
    session, _, _ = make_session([write("a.txt", "1"), {"text": "1"}, bash("echo 2 > a.txt; rm keep.txt"), {"text": "2"}])
    await session.prompt("one")
    await session.prompt("two")
    result = await undo(session)
    assert result.editor_text == "two" and (project / "a.txt").read_text() == "1" and (project / "keep.txt").exists()
    await redo(session)
    assert (project / "a.txt").read_text() == "2\n" and not (project / "keep.txt").exists()
    with pytest.raises(PiError, match="Nothing to redo"):
        await redo(session)
    await undo(session)
    await undo(session)
    assert not (project / "a.txt").exists() and (project / "keep.txt").read_text() == "keep"


async def test_user_bash_is_a_file_change(make_session, project: Path) -> None:
    session, _, _ = make_session([{"text": "ok"}])
    await session.prompt("hello")
    before = _last_non_checkpoint(session)
    await session.run_user_bash("echo mine > user.txt")
    command = _last_non_checkpoint(session)
    assert [e["data"]["reason"] for e in cp_entries(session)] == ["base", "bash"]
    assert cp_entries(session)[-1]["data"]["entryId"] == command  # the bashExecution entry
    await session.navigate_tree(before, restore_files=True)
    assert not (project / "user.txt").exists()
    await session.navigate_tree(command, restore_files=True)
    assert (project / "user.txt").read_text() == "mine\n"


async def test_a_whole_session_never_writes_the_users_repository(make_session, project: Path) -> None:
    user_git(project, "init", "-q")
    (project / "tracked.txt").write_text("v1\n")
    (project / "staged.txt").write_text("s1\n")
    user_git(project, "add", "tracked.txt", "staged.txt")
    user_git(project, "commit", "-qm", "first")
    (project / "staged.txt").write_text("s2 staged\n")
    user_git(project, "add", "staged.txt")
    (project / "staged.txt").write_text("s3 unstaged on top\n")
    (project / "untracked.txt").write_text("u\n")
    before = tree_hashes(project / ".git")  # HEAD, refs, index bytes, every object, config
    split = user_git(project, "--no-optional-locks", "status", "--porcelain")
    session, _, _ = make_session([
        write("tracked.txt", "agent 1\n"), {"text": "1"},
        bash("echo agent > staged.txt; rm untracked.txt; echo n > new.txt"), {"text": "2"},
        edit("tracked.txt", "agent 1", "agent 2"), {"text": "3"},
    ])
    await session.prompt("one")
    await session.prompt("two")
    first, second = _user_ids(session)
    await session.navigate_tree(first, restore_files=True)
    await session.prompt("three")
    await undo(session)
    await redo(session)
    await session.fork(second, restore_files=True)
    await session.navigate_tree(_user_ids(session)[0], restore_files=True)
    assert (project / "staged.txt").read_text() == "s3 unstaged on top\n"
    assert (project / "untracked.txt").read_text() == "u\n"
    assert tree_hashes(project / ".git") == before
    assert user_git(project, "--no-optional-locks", "status", "--porcelain") == split
