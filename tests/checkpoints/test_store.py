"""The private store with the real git binary: byte-exact snapshots and restores, the limits, and
the user's own repository left byte for byte as it was."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pi_tui.checkpoints.git_store import GitStore, SnapshotTimeout, store_dir_for
from pi_tui.checkpoints.scan_limits import ScanLimits
from tests.checkpoints.conftest import needs_git, picture, tree_hashes, user_git

pytestmark = needs_git


def _store(agent_dir: Path, project: Path, limits: ScanLimits | None = None) -> GitStore:
    return GitStore(store_dir_for(agent_dir, project), project, limits or ScanLimits(), excluded=[agent_dir])


def _deadline() -> float:
    return time.monotonic() + 30


def _populate(root: Path) -> None:
    (root / "plain.txt").write_bytes(b"one\r\ntwo\n")  # CRLF kept as it is
    (root / "with space.md").write_text("spaces\n")
    (root / "new\nline").write_text("a newline in the name\n")
    (root / "caf\u00e9 \u00fc.txt").write_text("non-ascii\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "deep" / "er").mkdir(parents=True)
    (root / "deep" / "er" / "leaf.bin").write_bytes(bytes(range(256)))
    (root / "link").symlink_to("plain.txt")
    (root / "dangling").symlink_to("nowhere")


def test_snapshot_and_restore_are_byte_exact(agent_dir: Path, project: Path) -> None:
    _populate(project)
    store = _store(agent_dir, project)
    before = picture(project)
    first = store.snapshot(_deadline()).tree
    # change everything in every way
    (project / "plain.txt").write_text("changed\n")
    (project / "with space.md").unlink()
    (project / "run.sh").chmod(0o644)
    (project / "link").unlink()
    (project / "link").symlink_to("run.sh")
    (project / "dangling").unlink()
    (project / "dangling").write_text("now a file\n")
    (project / "deep" / "er" / "leaf.bin").unlink()
    (project / "deep" / "er").rmdir()
    (project / "brand new.txt").write_text("new\n")
    second = store.snapshot(_deadline()).tree
    after = picture(project)
    changes = store.restore(second, first, _deadline())
    assert picture(project) == before
    assert "brand new.txt" in changes.deleted and "with space.md" in changes.created
    assert not (project / "brand new.txt").exists()
    store.restore(first, second, _deadline())
    assert picture(project) == after


def test_unchanged_tree_gives_the_same_tree_and_files_no_snapshot_knew_stay(agent_dir: Path, project: Path) -> None:
    _populate(project)
    store = _store(agent_dir, project)
    first = store.snapshot(_deadline()).tree
    assert store.snapshot(_deadline()).tree == first
    (project / "after.txt").write_text("made after both snapshots\n")
    (project / "plain.txt").write_text("x")
    second = store.snapshot(_deadline()).tree
    (project / "later.txt").write_text("no snapshot knows me\n")
    store.restore(second, first, _deadline())
    assert (project / "later.txt").read_text() == "no snapshot knows me\n"  # never deleted
    assert not (project / "after.txt").exists()


def test_default_excludes_outside_git_and_gitignore_inside(agent_dir: Path, project: Path) -> None:
    (project / "node_modules" / "x").mkdir(parents=True)
    (project / "node_modules" / "x" / "index.js").write_text("dep")
    (project / "src.py").write_text("print(1)\n")
    store = _store(agent_dir, project)
    tree = store.snapshot(_deadline()).tree
    listed = store.git("ls-tree", "-r", "--name-only", tree, deadline=_deadline()).decode().split()
    assert listed == ["src.py"]


def test_gitignore_and_info_exclude_of_the_users_repository(agent_dir: Path, project: Path) -> None:
    user_git(project, "init", "-q")
    (project / ".gitignore").write_text("*.log\n")
    (project / ".git" / "info" / "exclude").write_text("secret.env\n")
    (project / "app.log").write_text("log")
    (project / "secret.env").write_text("KEY=1")
    (project / "node_modules").mkdir()  # in a repository only its own rules count
    (project / "node_modules" / "a.js").write_text("a")
    store = _store(agent_dir, project)
    tree = store.snapshot(_deadline()).tree
    listed = store.git("ls-tree", "-r", "--name-only", tree, deadline=_deadline()).decode().split()
    assert listed == [".gitignore", "node_modules/a.js"]


def test_a_subfolder_of_a_repository_inherits_the_rules_above(agent_dir: Path, tmp_path: Path) -> None:
    top = tmp_path / "repo"
    sub = top / "packages" / "web"
    sub.mkdir(parents=True)
    user_git(top, "init", "-q")
    (top / ".gitignore").write_text("dist/\n/packages/web/generated.ts\n/other\n")
    (sub / "dist").mkdir()
    (sub / "dist" / "bundle.js").write_text("x")
    (sub / "generated.ts").write_text("x")
    (sub / "other").write_text("kept: the rule is anchored elsewhere")
    (sub / "index.ts").write_text("x")
    store = _store(tmp_path / "agent", sub)
    tree = store.snapshot(_deadline()).tree
    listed = store.git("ls-tree", "-r", "--name-only", tree, deadline=_deadline()).decode().split()
    assert listed == ["index.ts", "other"]


def test_large_files_crowded_folders_and_nested_repositories_are_skipped_and_named(agent_dir: Path, project: Path) -> None:
    (project / "big.bin").write_bytes(b"x" * 2048)
    (project / "crowd").mkdir()
    for i in range(12):
        (project / "crowd" / f"f{i}").write_text(str(i))
    nested = project / "vendor" / "lib"
    nested.mkdir(parents=True)
    user_git(nested, "init", "-q")
    (nested / "code.c").write_text("int x;")
    (project / "small.txt").write_text("ok")
    store = _store(agent_dir, project, ScanLimits(max_file_bytes=1024, max_folder_files=10))
    snap = store.snapshot(_deadline())
    listed = store.git("ls-tree", "-r", "--name-only", snap.tree, deadline=_deadline()).decode().split()
    assert listed == ["small.txt"]
    assert any(s.startswith("big.bin (2048 bytes") for s in snap.skipped)
    assert any(s.startswith("crowd/ (12 new files") for s in snap.skipped)
    assert "vendor/lib/ (a nested git repository)" in snap.skipped
    (project / "small.txt").write_text("changed")
    later = store.snapshot(_deadline()).tree
    store.restore(later, snap.tree, _deadline())
    assert (project / "big.bin").stat().st_size == 2048 and (nested / "code.c").exists()
    assert len(list((project / "crowd").iterdir())) == 12


def test_a_stale_index_lock_is_removed_and_said(agent_dir: Path, project: Path) -> None:
    (project / "a").write_text("a")
    store = _store(agent_dir, project)
    store.snapshot(_deadline())
    (store.store / "index.lock").write_text("left by a killed git")
    (project / "a").write_text("b")
    snap = store.snapshot(_deadline())
    assert snap.notes == ("removed a stale index.lock left by an interrupted snapshot",)
    assert not (store.store / "index.lock").exists()


def test_a_deadline_in_the_past_is_a_timeout(agent_dir: Path, project: Path) -> None:
    store = _store(agent_dir, project)
    with pytest.raises(SnapshotTimeout):
        store.snapshot(time.monotonic() - 1)


def test_the_store_is_isolated_from_the_users_git_configuration(agent_dir: Path, project: Path, isolated_home: Path) -> None:
    # A global config that would break or leak into snapshots if it were read.
    (isolated_home / ".gitconfig").write_text(
        "[core]\n\tautocrlf = true\n\thooksPath = /nonexistent\n[commit]\n\tgpgSign = true\n")
    (isolated_home / ".config" / "git").mkdir(parents=True)
    (isolated_home / ".config" / "git" / "ignore").write_text("*.txt\n")
    (project / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    (project / ".gitattributes").write_text("* text=auto eol=lf\n")
    store = _store(agent_dir, project)
    first = store.snapshot(_deadline())
    (project / "crlf.txt").write_bytes(b"other")
    second = store.snapshot(_deadline())
    store.restore(second.tree, first.tree, _deadline())
    assert (project / "crlf.txt").read_bytes() == b"a\r\nb\r\n"
    commit = store.commit(first.tree, [], "m", _deadline())
    body = store.git("cat-file", "commit", commit, deadline=_deadline()).decode()
    assert "gpgsig" not in body and "pi-tui checkpoints <checkpoints@pi-tui.invalid>" in body


def test_the_users_repository_is_never_written(agent_dir: Path, project: Path) -> None:
    user_git(project, "init", "-q")
    (project / "tracked.txt").write_text("v1\n")
    (project / "staged.txt").write_text("s1\n")
    user_git(project, "add", "tracked.txt", "staged.txt")
    user_git(project, "commit", "-qm", "first")
    (project / "staged.txt").write_text("s2 staged\n")
    user_git(project, "add", "staged.txt")
    (project / "staged.txt").write_text("s3 unstaged on top\n")
    (project / "tracked.txt").write_text("v2 unstaged\n")
    (project / "untracked.txt").write_text("u\n")
    git_dir = project / ".git"
    before = tree_hashes(git_dir)
    split = user_git(project, "--no-optional-locks", "status", "--porcelain")
    store = _store(agent_dir, project)
    first = store.snapshot(_deadline()).tree
    (project / "tracked.txt").write_text("agent\n")
    os.remove(project / "untracked.txt")
    second = store.snapshot(_deadline()).tree
    store.restore(second, first, _deadline())
    store.restore(first, second, _deadline())
    store.restore(second, first, _deadline())
    store.keep("refs/pi-tui/sessions/x", store.commit(first, [], "m", _deadline()), _deadline())
    assert tree_hashes(git_dir) == before  # HEAD, refs, index bytes, objects, config: all of it
    assert user_git(project, "--no-optional-locks", "status", "--porcelain") == split
    assert (project / "staged.txt").read_text() == "s3 unstaged on top\n"


def test_many_new_files_go_through_one_pack_and_restore_exactly(agent_dir: Path, project: Path) -> None:
    from pi_tui.checkpoints.git_store import PACK_AT

    for i in range(PACK_AT + 50):
        (project / f"dir{i % 7}").mkdir(exist_ok=True)
        (project / f"dir{i % 7}" / f"f{i}.bin").write_bytes(bytes([i % 256]) * (i + 1))
    (project / "link").symlink_to("dir0/f0.bin")
    store = _store(agent_dir, project)
    before = picture(project)
    first = store.snapshot(_deadline()).tree
    assert list((store.store / "objects" / "pack").glob("*.pack"))  # written as a pack
    for i in range(0, PACK_AT, 3):
        (project / f"dir{i % 7}" / f"f{i}.bin").write_bytes(b"changed")
    second = store.snapshot(_deadline()).tree
    store.restore(second, first, _deadline())
    assert picture(project) == before
