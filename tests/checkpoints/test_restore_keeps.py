"""A restore never destroys something of the user's that no snapshot holds: a file standing where
the target's file comes back (over ``checkpoints.maxFileBytes``, ignored, made after the last
snapshot), a file where the target has a folder, a folder where it has a file. Such a path is
left as it is and named in ``skipped`` — in the preview, before anything is written, and in the
result (SDK, RPC, the TUI's chooser)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pi_tui.checkpoints.git_store import GitStore, store_dir_for
from pi_tui.checkpoints.scan_limits import ScanLimits
from pi_tui.session.checkpoint_hooks import preview_restore
from tests.checkpoints.conftest import bash, needs_git, user_git, write

pytestmark = needs_git

KEPT = "yours, in no snapshot: left as it is"


def _user_ids(session: Any) -> list[str]:
    return [e["id"] for e in session.session_manager.get_branch()
            if e.get("type") == "message" and e["message"]["role"] == "user"]


def _leaf(session: Any) -> str:
    return [e["id"] for e in session.session_manager.get_entries() if e.get("customType") != "pi-tui.checkpoint"][-1]


async def test_a_large_file_of_the_users_where_a_snapshot_file_comes_back_is_kept_and_named(
        make_session, project: Path) -> None:
    session, _, _ = make_session([write("data.bin", "small v1\n"), {"text": "1"}, bash("rm data.bin"), {"text": "2"}],
                                 settings={"checkpoints": {"maxFileBytes": 1000}})
    await session.prompt("one")
    await session.prompt("two")
    leaf = _leaf(session)
    (project / "notes.txt").write_text("the user's notes\n")
    big = b"USER-BIG " * 500  # over maxFileBytes: never snapshotted
    (project / "data.bin").write_bytes(big)
    target = _user_ids(session)[1]
    preview = await preview_restore(session, target)
    assert preview["created"] == [] and preview["deleted"] == ["notes.txt"]
    assert preview["skipped"] == [f"data.bin ({KEPT})"]
    result = await session.navigate_tree(target, restore_files=True)
    assert (project / "data.bin").read_bytes() == big
    assert not (project / "notes.txt").exists()  # held by the snapshot of the point left
    assert result.files["restored"] is True and result.files["created"] == []
    assert result.files["skipped"] == [f"data.bin ({KEPT})"]
    await session.navigate_tree(leaf, restore_files=True)
    assert (project / "data.bin").read_bytes() == big
    assert (project / "notes.txt").read_text() == "the user's notes\n"


async def test_an_ignored_file_of_the_users_is_kept_and_the_rest_restored(make_session, project: Path) -> None:
    user_git(project, "init", "-q")
    session, _, _ = make_session([write("local.cfg", "the model's\n"), {"text": "1"},
                                  bash("rm local.cfg; echo local.cfg > .gitignore"), {"text": "2"}])
    await session.prompt("one")
    await session.prompt("two")
    (project / "local.cfg").write_text("the user's secret\n")  # ignored now: in no snapshot
    result = await session.navigate_tree(_user_ids(session)[1], restore_files=True)
    assert result.files["deleted"] == [".gitignore"] and result.files["created"] == []
    assert result.files["skipped"] == [f"local.cfg ({KEPT})"]
    assert (project / "local.cfg").read_text() == "the user's secret\n"
    assert not (project / ".gitignore").exists()


async def test_the_chooser_names_what_is_kept(make_session, project: Path) -> None:
    from pi_tui.modes.interactive.checkpoint_flow import files_preview, restored_note

    session, _, _ = make_session([write("data.bin", "small\n"), {"text": "1"}, bash("rm data.bin"), {"text": "2"}],
                                 settings={"checkpoints": {"maxFileBytes": 100}})
    await session.prompt("one")
    await session.prompt("two")
    (project / "data.bin").write_bytes(b"x" * 500)
    shown = await files_preview(session, _user_ids(session)[1])
    assert shown is not None  # though nothing else would change
    assert shown.text == "1 of yours left as they are (in no snapshot, not overwritten): data.bin"
    result = await session.navigate_tree(_user_ids(session)[1], restore_files=True)
    assert restored_note(result.files) == (
        "Files restored: 0 changed, 0 created, 0 deleted; left as they are (yours): data.bin")


def _store(agent_dir: Path, project: Path) -> GitStore:
    return GitStore(store_dir_for(agent_dir, project), project, ScanLimits(max_file_bytes=100, max_folder_files=2000))


def _deadline() -> float:
    return time.monotonic() + 30


def test_a_file_where_a_folder_comes_back_and_a_folder_where_a_file_does_are_kept(agent_dir: Path,
                                                                                  project: Path) -> None:
    store = _store(agent_dir, project)
    (project / "out").mkdir()
    (project / "out" / "report.txt").write_text("report\n")
    (project / "x").write_text("x\n")
    first = store.snapshot(_deadline()).tree
    (project / "out" / "report.txt").unlink()
    (project / "out").rmdir()
    (project / "out").write_bytes(b"o" * 500)  # the user's, too large for a snapshot
    (project / "x").unlink()
    (project / "x").mkdir()
    (project / "x" / "big").write_bytes(b"b" * 500)
    second = store.snapshot(_deadline()).tree
    done = store.restore(second, first, _deadline())
    assert done.kept == ("out/report.txt", "x") and done.created == ()
    assert (project / "out").read_bytes() == b"o" * 500
    assert (project / "x" / "big").read_bytes() == b"b" * 500


def test_a_folder_the_restore_empties_first_gives_way_to_the_file(agent_dir: Path, project: Path) -> None:
    store = _store(agent_dir, project)
    (project / "x").write_text("a file\n")
    first = store.snapshot(_deadline()).tree
    (project / "x").unlink()
    (project / "x").mkdir()
    (project / "x" / "y").write_text("in the folder\n")
    second = store.snapshot(_deadline()).tree
    done = store.restore(second, first, _deadline())
    assert done.kept == () and done.deleted == ("x/y",) and done.created == ("x",)
    assert (project / "x").read_text() == "a file\n"


async def test_skipped_names_what_the_snapshot_before_the_restore_left_out(make_session, project: Path) -> None:
    session, _, _ = make_session([write("a.txt", "1\n"), {"text": "1"}, write("a.txt", "2\n"), {"text": "2"}],
                                 settings={"checkpoints": {"maxFileBytes": 100}})
    await session.prompt("one")
    await session.prompt("two")
    (project / "big.log").write_bytes(b"l" * 300)
    target = _user_ids(session)[1]
    preview = await preview_restore(session, target)
    assert preview["changed"] == ["a.txt"] and preview["skipped"] == ["big.log (300 bytes, more than 100)"]
    result = await session.navigate_tree(target, restore_files=True)
    assert result.files["skipped"] == ["big.log (300 bytes, more than 100)"]
    assert (project / "big.log").read_bytes() == b"l" * 300 and (project / "a.txt").read_text() == "1\n"


async def test_an_edit_made_while_the_branch_summary_is_written_is_bound_to_the_point_left(
        make_session, project: Path) -> None:
    import asyncio

    session, provider, _ = make_session([write("f.txt", "1\n"), {"text": "1"}, write("f.txt", "2\n"), {"text": "2"},
                                         {"text": "the summary", "delay_ms": 300}])
    await session.prompt("one")
    await session.prompt("two")
    leaf = _leaf(session)
    asked = len(provider.requests)

    async def edit_while_it_thinks() -> None:
        for _ in range(2000):  # until the summary's request has arrived: its answer is 300 ms off
            if len(provider.requests) > asked:
                break
            await asyncio.sleep(0.005)
        (project / "f.txt").write_text("the user's edit during the summary\n")

    editing = asyncio.create_task(edit_while_it_thinks())
    result = await session.navigate_tree(_user_ids(session)[1], summarize=True, restore_files=True)
    await editing
    assert provider.requests[asked:] and result.files["restored"] is True
    assert (project / "f.txt").read_text() == "1\n"
    back = await session.navigate_tree(leaf, restore_files=True)
    assert back.files["changed"] == ["f.txt"]
    assert (project / "f.txt").read_text() == "the user's edit during the summary\n"


EDIT_WHILE_FORKING = '''
from pathlib import Path


def register(pi):
    @pi.on("session_before_fork")
    def edit(event):
        Path("f.txt").write_text("edited while the fork was made\\n")
'''


async def test_a_restoring_fork_leaves_a_file_edited_after_its_preview(make_session, project: Path,
                                                                       agent_dir: Path) -> None:
    (agent_dir / "extensions").mkdir(parents=True)
    (agent_dir / "extensions" / "edit.py").write_text(EDIT_WHILE_FORKING)
    session, _, _ = make_session([write("f.txt", "1\n"), {"text": "1"}, write("f.txt", "2\n"), {"text": "2"}],
                                 load_extensions=True)
    await session.prompt("one")
    await session.prompt("two")
    await session.fork(_user_ids(session)[1], restore_files=True)
    assert session.last_restore is not None and session.last_restore["restored"] is True
    assert session.last_restore["changed"] == []
    assert session.last_restore["skipped"] == ["f.txt (changed since the preview: left as it is)"]
    assert (project / "f.txt").read_text() == "edited while the fork was made\n"
