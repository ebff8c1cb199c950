"""Checkpoint snapshot costs (docs/checkpoints.md) beside ``git status`` on the same tree.

For trees of N files (100 per folder, ~200 bytes each; the tree is also a user repository with
every file committed, so ``git status`` has its index): the first snapshot (every file hashed),
an unchanged snapshot and a one-file change (median of 5 each, ``GitStore.snapshot``: the stat
pass, the new-file walk and ``write-tree``), and ``git status --porcelain`` (median of 5). Then
the store's size after 200 turns that each change one file (snapshot + commit + keep-alive ref),
and after that session is deleted (its refs removed, ``gc_store`` with no grace).

Second table, on the same tree with a fresh store: the first snapshot under the default
``checkpoints.timeoutMs`` (5 s): whether it ran out of time and how many new files it left, how
long the background fill (``checkpoints.firstSnapshotTimeoutMs``) then took, and the snapshot after.

``python bench/bench_checkpoints.py [N ...]`` (default 10000 100000).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pi_tui.checkpoints.git_store import GitStore, SnapshotTimeout, store_dir_for
from pi_tui.checkpoints.prune import gc_store
from pi_tui.checkpoints.scan_limits import ScanLimits

RUNS = 5
TURNS = 200


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@x")
    return env


def _make_tree(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"d{i // 100:05d}"
        if i % 100 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{i % 100:03d}.txt").write_text(f"file {i}\n" + "x" * 190 + "\n")
    env = _git_env()
    subprocess.run(["git", "init", "-q"], cwd=root, env=env, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "tree"], cwd=root, env=env, check=True)


def _ms(fn: object) -> float:
    started = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - started) * 1000


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def bench(files: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="pi-tui-bench-cp-") as scratch:
        root = Path(scratch) / "project"
        root.mkdir()
        _make_tree(root, files)
        store = GitStore(store_dir_for(Path(scratch) / "agent", root), root, ScanLimits())
        deadline = lambda: time.monotonic() + 600  # noqa: E731
        first = _ms(lambda: store.snapshot(deadline()))
        unchanged = statistics.median(_ms(lambda: store.snapshot(deadline())) for _ in range(RUNS))
        changes = []
        for run in range(RUNS):
            (root / "d00000" / "f000.txt").write_text(f"changed {run}\n")
            changes.append(_ms(lambda: store.snapshot(deadline())))
        status = statistics.median(
            _ms(lambda: subprocess.run(["git", "status", "--porcelain"], cwd=root, env=_git_env(),
                                       capture_output=True, check=True)) for _ in range(RUNS))
        before = _size(store.store)
        parent: list[str] = []
        for turn in range(TURNS):
            (root / f"d{turn % max(files // 100, 1):05d}" / "f001.txt").write_text(f"turn {turn}\n")
            tree = store.snapshot(deadline()).tree
            commit = store.commit(tree, parent, "turn", deadline())
            store.keep("refs/pi-tui/sessions/bench", commit, deadline())
            parent = [commit]
        after = _size(store.store)
        shutil.rmtree(store.store / "refs" / "pi-tui" / "sessions" / "bench")
        gc_store(store.store, grace="now")
        limited = _first_under_limit(root, Path(scratch) / "agent-limited")
        return {**limited, "store_mb_after_delete": _size(store.store) / 1e6,
                "files": files, "first_ms": first, "unchanged_ms": unchanged,
                "one_change_ms": statistics.median(changes), "git_status_ms": status,
                "store_mb_first": before / 1e6, "store_mb_after_200": after / 1e6}


def _first_under_limit(root: Path, agent: Path, limit_s: float = 5.0) -> dict[str, float]:
    store = GitStore(store_dir_for(agent, root), root, ScanLimits())
    started = time.perf_counter()
    left = 0
    try:
        store.snapshot(time.monotonic() + limit_s)
    except SnapshotTimeout as err:
        left = err.left
    first = (time.perf_counter() - started) * 1000
    fill = _ms(lambda: store.snapshot(time.monotonic() + 300)) if left else 0.0
    after = _ms(lambda: store.snapshot(time.monotonic() + limit_s))
    return {"limited_ms": first, "left": left, "fill_ms": fill, "after_fill_ms": after}


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [10_000, 100_000]
    print(f"load average before: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} CPUs)")
    rows = []
    print("| files | first snapshot | unchanged | one file changed | git status | unchanged / status "
          "| store after first | after 200 turns | after the session is deleted |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for files in sizes:
        r = bench(files)
        rows.append(r)
        print(f"| {files:,} | {r['first_ms']:.0f} ms | {r['unchanged_ms']:.0f} ms | {r['one_change_ms']:.0f} ms "
              f"| {r['git_status_ms']:.0f} ms | {r['unchanged_ms'] / r['git_status_ms']:.2f}× "
              f"| {r['store_mb_first']:.1f} MB | {r['store_mb_after_200']:.1f} MB "
              f"| {r['store_mb_after_delete']:.1f} MB |", flush=True)
    print()
    print("| files | first snapshot, 5 s limit | new files left | background fill | next snapshot |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['files']:,} | {r['limited_ms']:.0f} ms | {r['left']:,} | {r['fill_ms']:.0f} ms "
              f"| {r['after_fill_ms']:.0f} ms |")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
