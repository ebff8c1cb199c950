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


def _slow_git(folder: Path, real_git: str, slow_calls: int, seconds: float) -> Path:
    """A ``git`` in front of the real one whose first ``slow_calls`` ``update-index`` calls take
    ``seconds`` longer: a tree too big for ``checkpoints.timeoutMs`` without building one."""
    folder.mkdir()
    counter = folder / "count"
    counter.write_text("0")
    script = folder / "git"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = update-index ]; then\n'
        f'  n=$(cat "{counter}"); echo $((n + 1)) > "{counter}"\n'
        f'  if [ "$n" -lt {slow_calls} ]; then sleep {seconds} </dev/null >/dev/null 2>&1; fi\n'
        "fi\n"
        f'exec "{real_git}" "$@"\n')
    script.chmod(0o755)
    return folder


async def test_a_first_snapshot_too_slow_for_the_limit_is_finished_in_the_background(
        make_session, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(30):
        (project / f"old{i}.txt").write_text(f"there before the session {i}\n")
    real = shutil.which("git")
    assert real is not None
    fake = _slow_git(tmp_path / "slow-bin", real, slow_calls=2, seconds=1.5)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    session, _, events = make_session(
        [write("a.txt", "1"), {"text": "1"}, write("b.txt", "2"), {"text": "2"}],
        settings={"checkpoints": {"timeoutMs": 500, "firstSnapshotTimeoutMs": 20000}})
    started = asyncio.get_running_loop().time()
    await session.prompt("one")
    assert asyncio.get_running_loop().time() - started < 5  # the turn did not wait for the snapshot
    assert session.messages[-1]["content"][0]["text"] == "1"
    skipped = [e for e in events if e["type"] == "checkpoint" and e["action"] == "skipped"]
    assert "took longer than checkpoints.timeoutMs (500 ms)" in skipped[0]["message"]
    assert "0 of 30 new files stored so far" in skipped[0]["message"]
    assert "the rest goes on in the background" in skipped[0]["message"]
    recorded = [e["data"] for e in cp_entries(session)]
    assert recorded and all(d["commit"] is None for d in recorded)  # each recorded as skipped, with why
    checkpoints = session.checkpoints
    assert checkpoints is not None
    assert await asyncio.to_thread(checkpoints.fill.wait, 20)
    await asyncio.sleep(0.05)  # the fill's end is reported on the loop
    assert [e["action"] for e in events if e["type"] == "checkpoint"][-1] == "filled"
    await session.prompt("two")  # from now on snapshots are a stat pass
    assert [d["reason"] for d in (e["data"] for e in cp_entries(session)) if d["commit"]] == ["base", "turn"]
    await session.navigate_tree(_user_ids(session)[1], restore_files=True)
    assert not (project / "b.txt").exists() and (project / "a.txt").read_text() == "1"
    assert all((project / f"old{i}.txt").exists() for i in range(30))


def _user_ids(session) -> list[str]:
    return [e["id"] for e in session.session_manager.get_branch()
            if e.get("type") == "message" and e["message"]["role"] == "user"]


async def test_an_aborted_turn_that_changed_files_still_gets_its_snapshot(make_session, project: Path) -> None:
    session, _, _ = make_session([bash("echo made > made.txt; sleep 30"), {"text": "never"}])
    task = asyncio.create_task(session.prompt("go"))
    for _ in range(500):
        if (project / "made.txt").exists():
            break
        await asyncio.sleep(0.02)
    assert (project / "made.txt").exists()
    await session.abort()
    await asyncio.wait_for(task, 10)
    snaps = [e["data"] for e in cp_entries(session) if e["data"]["commit"]]
    assert [d["reason"] for d in snaps] == ["base", "turn"]
    assert snaps[-1]["files"]["created"] == ["made.txt"]
    await session.navigate_tree(_user_ids(session)[0], restore_files=True)
    assert not (project / "made.txt").exists()


async def test_a_non_git_folder_is_snapshotted_with_the_default_excludes(make_session, project: Path) -> None:
    assert not (project / ".git").exists()
    (project / "node_modules").mkdir()
    (project / "node_modules" / "dep.js").write_text("dependency")
    session, _, _ = make_session([bash("echo new > app.js; echo changed > node_modules/dep.js"), {"text": "done"}])
    await session.prompt("go")
    await session.navigate_tree(_user_ids(session)[0], restore_files=True)
    assert not (project / "app.js").exists()
    assert (project / "node_modules" / "dep.js").read_text() == "changed\n"  # excluded: never touched
    assert not (project / ".git").exists()  # and no repository was made in the project


async def test_a_stale_lock_in_the_store_is_removed_and_said_and_the_snapshot_taken(
        make_session, project: Path, agent_dir: Path) -> None:
    session, _, events = make_session([write("a.txt", "1"), {"text": "1"}, write("a.txt", "2"), {"text": "2"}])
    await session.prompt("one")
    (store_dir_for(agent_dir, project) / "index.lock").write_text("left by a killed git")
    await session.prompt("two")
    assert "Checkpoints: removed a stale index.lock left by an interrupted snapshot" in _notes(events)
    assert not [e for e in events if e["type"] == "checkpoint" and e["action"] in ("failed", "skipped")]
    await session.navigate_tree(_user_ids(session)[1], restore_files=True)
    assert (project / "a.txt").read_text() == "1"


async def test_cwd_is_the_root_turns_it_off(make_session) -> None:
    session, _, events = make_session([{"text": "hi"}], cwd=Path("/"))
    await session.prompt("hello")
    assert [n for n in _notes(events) if "Checkpoints are off" in n] == [
        "Checkpoints are off: the working folder is the file system root (/); nothing is snapshotted there"]


async def test_a_submodule_is_left_alone_and_the_users_repository_unchanged(make_session, project: Path,
                                                                           tmp_path: Path) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    user_git(upstream, "init", "-q")
    (upstream / "lib.c").write_text("v1\n")
    user_git(upstream, "add", "lib.c")
    user_git(upstream, "commit", "-qm", "lib")
    user_git(project, "init", "-q")
    (project / "main.c").write_text("main\n")
    user_git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "sub")
    user_git(project, "add", "main.c")
    user_git(project, "commit", "-qm", "with a submodule")
    before = tree_hashes(project / ".git")
    session, _, events = make_session([bash("echo v2 > sub/lib.c; echo changed > main.c"), {"text": "done"}])
    await session.prompt("go")
    await session.navigate_tree(_user_ids(session)[0], restore_files=True)
    assert (project / "main.c").read_text() == "main\n"
    assert (project / "sub" / "lib.c").read_text() == "v2\n"  # the submodule's files are its own repository's
    assert tree_hashes(project / ".git") == before  # modules/ included
    skipped = [e for e in events if e["type"] == "checkpoint" and e.get("skipped")]
    assert skipped and skipped[0]["skipped"] == ["sub/ (a nested git repository)"]


def test_a_git_still_running_at_exit_is_killed(project: Path, agent_dir: Path, tmp_path: Path) -> None:
    """A background fill when pi-tui quits: its git must not live on, writing the store's index
    while the next session takes its index.lock for a stale one."""
    import subprocess
    import sys
    import time

    fake = tmp_path / "hang-bin"
    fake.mkdir()
    pid_file = tmp_path / "git.pid"
    (fake / "git").write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = update-index ]; then echo $$ > "{pid_file}"; exec sleep 60; fi\n'
        f'exec "{shutil.which("git")}" "$@"\n')
    (fake / "git").chmod(0o755)
    (project / "a.txt").write_text("a")
    child = (
        "import threading, time, sys\n"
        "from pathlib import Path\n"
        "from pi_tui.checkpoints.git_store import GitStore, store_dir_for\n"
        "from pi_tui.checkpoints.scan_limits import ScanLimits\n"
        f"root, agent, pid = Path({str(project)!r}), Path({str(agent_dir)!r}), Path({str(pid_file)!r})\n"
        "store = GitStore(store_dir_for(agent, root), root, ScanLimits())\n"
        "threading.Thread(target=store.snapshot, args=(time.monotonic() + 300,), daemon=True).start()\n"
        "end = time.monotonic() + 20\n"
        "ready = lambda: pid.exists() and pid.read_text().strip().isdigit()\n"
        "while not ready() and time.monotonic() < end: time.sleep(0.02)\n"
        "time.sleep(0.1)\n"
        "sys.exit(0 if ready() else 3)\n")
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode()
    hung = int(pid_file.read_text())
    for _ in range(200):
        try:
            os.kill(hung, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        os.kill(hung, 9)
        raise AssertionError("the git left running at exit was not killed")


def _file_in_place_of_the_stores(agent_dir: Path) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "checkpoints").write_text("a file where the stores' folder goes")  # OSError: not a directory


async def test_a_store_that_cannot_be_written_is_a_failed_snapshot_and_the_tool_still_runs(
        make_session, project: Path, agent_dir: Path) -> None:
    _file_in_place_of_the_stores(agent_dir)
    session, _, events = make_session([write("a.txt", "1"), {"text": "done"}])
    await session.prompt("go")
    assert (project / "a.txt").read_text() == "1"
    results = [m["content"][0]["text"] for m in session.messages if m["role"] == "toolResult"]
    assert results == ["Successfully wrote 1 bytes to a.txt"]
    assert session.messages[-1]["content"][0]["text"] == "done"
    failed = [e for e in events if e["type"] == "checkpoint" and e["action"] == "failed"]
    assert [e["reason"] for e in failed] == ["base", "turn"]  # before the tool, and after its turn
    assert all("Not a directory" in e["message"] for e in failed)
    assert not [n for n in _notes(events) if "hook failed" in n]
    assert cp_entries(session) == []
