"""The store's upkeep: a deleted session's snapshots are freed (never by age), other sessions'
stay restorable, a first snapshot still held back survives a gc, and a store past
``checkpoints.warnStoreBytes`` is named once."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.checkpoints import prune_deleted_session
from pi_tui.checkpoints.git_store import store_dir_for
from tests.checkpoints.conftest import bash, cp_entries, needs_git, write

pytestmark = needs_git


def _has_object(store: Path, sha: str) -> bool:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_DIR=str(store), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", "cat-file", "-e", sha], env=env, capture_output=True, check=False).returncode == 0


def _blob(content: str) -> str:
    return subprocess.run(["git", "hash-object", "--stdin"], input=content.encode(), capture_output=True,
                          check=True).stdout.decode().strip()


def _user_ids(session: Any) -> list[str]:
    return [e["id"] for e in session.session_manager.get_branch()
            if e.get("type") == "message" and e["message"]["role"] == "user"]


async def test_deleting_a_session_frees_its_snapshots_and_keeps_the_others(make_session, project: Path,
                                                                           agent_dir: Path) -> None:
    gone_text, kept_text = "only the deleted session wrote this\n" * 50, "the kept session wrote this\n" * 50
    doomed, _, _ = make_session([write("gone.txt", gone_text), {"text": "1"}, bash("rm gone.txt"), {"text": "2"}])
    await doomed.prompt("write it")
    await doomed.prompt("remove it")
    kept, _, _ = make_session([write("kept.txt", kept_text), {"text": "1"}, bash("rm kept.txt"), {"text": "2"}])
    await kept.prompt("write it")
    await kept.prompt("remove it")
    store = store_dir_for(agent_dir, project)
    assert _has_object(store, _blob(gone_text)) and _has_object(store, _blob(kept_text))
    doomed.session_manager.close()
    result = prune_deleted_session(agent_dir, str(project), doomed.session_manager.session_id,
                                   background=False, grace="now")
    assert result.forgotten and result.problem is None
    assert not _has_object(store, _blob(gone_text))  # nothing holds it any more: freed
    assert _has_object(store, _blob(kept_text))
    sessions = store / "refs" / "pi-tui" / "sessions"
    assert [p.name for p in sessions.iterdir()] == [kept.session_manager.session_id]
    assert not (store / "packed-refs").exists()  # refs stay loose: forgetting a session is removing a folder
    # The kept session still brings its files back.
    await kept.navigate_tree(_user_ids(kept)[1], restore_files=True)
    assert (project / "kept.txt").read_text() == kept_text
    again = prune_deleted_session(agent_dir, str(project), doomed.session_manager.session_id, background=False)
    assert not again.forgotten  # deleting twice is harmless


async def test_a_first_snapshot_held_back_survives_a_gc(make_session, project: Path, agent_dir: Path) -> None:
    (project / "before.txt").write_text("the user's file before the session\n")
    other, _, _ = make_session([write("x.txt", "x"), {"text": "x"}])
    await other.prompt("x")
    (project / "x.txt").unlink()
    (project / "before.txt").write_text("the user's file before the session, edited\n")
    holder, _, _ = make_session([bash("true"), {"text": "looked"}, write("new.txt", "n"), {"text": "wrote"}])
    await holder.prompt("look")  # a tool that could change files ran: the first snapshot is taken, held back
    assert cp_entries(holder) == []
    (project / "before.txt").write_text("edited again, snapshotted by a third session\n")
    third, _, _ = make_session([write("y.txt", "y"), {"text": "y"}])
    await third.prompt("y")  # the store's shared index moves on: only a ref still holds the first snapshot
    (project / "y.txt").unlink()
    prune_deleted_session(agent_dir, str(project), other.session_manager.session_id, background=False, grace="now")
    (project / "before.txt").write_text("changed after the gc\n")
    await holder.prompt("write")
    assert [e["data"]["reason"] for e in cp_entries(holder)][:1] == ["base"]
    await holder.navigate_tree(_user_ids(holder)[0], restore_files=True)
    assert (project / "before.txt").read_text() == "the user's file before the session, edited\n"
    assert not (project / "new.txt").exists()


async def test_a_store_past_the_size_setting_is_named_once(make_session, project: Path, agent_dir: Path) -> None:
    session, _, events = make_session([write("a.txt", "1"), {"text": "1"}, write("a.txt", "2"), {"text": "2"}],
                                      settings={"checkpoints": {"warnStoreBytes": 1}})
    await session.prompt("one")
    await session.prompt("two")
    warnings = [e for e in events if e["type"] == "notify" and "checkpoints.warnStoreBytes" in e["message"]]
    assert len(warnings) == 1 and warnings[0]["level"] == "warning"
    assert str(store_dir_for(agent_dir, project)) in warnings[0]["message"]


async def test_under_the_size_setting_nothing_is_said(make_session, project: Path) -> None:
    session, _, events = make_session([write("a.txt", "1"), {"text": "1"}])
    await session.prompt("one")
    assert cp_entries(session)
    assert not [e for e in events if e["type"] == "notify" and "warnStoreBytes" in e["message"]]



@pytest.mark.parametrize("restore_files", [False, True])
async def test_a_fork_keeps_the_snapshots_it_copied_when_its_original_is_deleted(
        make_session, project: Path, agent_dir: Path, restore_files: bool) -> None:
    (project / "pre.txt").write_text("pre\n")
    session, _, _ = make_session([write("f.txt", "A\n"), {"text": "1"}, {"text": "2"}])
    await session.prompt("one")
    await session.prompt("two")  # changes nothing: a fork at "two" makes no snapshot of its own
    original_id = session.session_manager.session_id
    await session.fork(_user_ids(session)[1], restore_files=restore_files)
    assert session.session_manager.session_id != original_id
    assert [e["data"]["reason"] for e in cp_entries(session)] == ["base", "turn"]  # copied, no new commit
    prune_deleted_session(agent_dir, str(project), original_id, background=False, grace="now")
    result = await session.navigate_tree(_user_ids(session)[0], restore_files=True)  # before "one": the base
    assert result.files["restored"] is True and result.files["deleted"] == ["f.txt"]
    assert sorted(os.listdir(project)) == ["pre.txt"]
