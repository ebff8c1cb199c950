"""The store's upkeep: forgetting a deleted session's snapshots, freeing what no session holds,
and a warning when a project's store grows past ``checkpoints.warnStoreBytes``.

Never by age: objects are only dropped once the session that held them is gone
(``prune_deleted_session``: its refs removed, then ``git gc`` of the store frees what no other
session still holds). Objects written in the last ``GC_GRACE`` are kept whatever holds them: a
snapshot of another session may be between ``write-tree`` and its ref.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pi_tui.checkpoints.git_store import CheckpointError, store_dir_for, store_lock

GC_GRACE = "10.minutes.ago"
GC_TIMEOUT_S = 300.0
LOCK_WAIT_S = 30.0
DEFAULT_WARN_STORE_BYTES = 2 * 1024**3
"""``checkpoints.warnStoreBytes``: past this a project's store is named once per session."""
PENDING_REFS = "refs/pi-tui/pending"
"""``<this>/<session id>``: the session's first snapshot (a tree) while it is held back."""
SESSION_REFS = "refs/pi-tui/sessions"


def session_header(path: Path) -> tuple[str, str] | None:
    """``(session id, cwd)`` from a session file's first line; None when it has none."""
    try:
        with open(path, encoding="utf-8") as handle:
            first = json.loads(handle.readline() or "null")
    except (OSError, ValueError):
        return None
    if not isinstance(first, dict) or first.get("type") != "session":
        return None
    session_id, cwd = first.get("id"), first.get("cwd")
    return (session_id, cwd) if isinstance(session_id, str) and isinstance(cwd, str) else None


def ref_safe(session_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id) or "session"


def forget_session(agent_dir: Path, cwd: str, session_id: str) -> bool:
    """Remove the session's refs from its project's store; True when there were any."""
    store = store_dir_for(agent_dir, Path(cwd))
    refs = store / SESSION_REFS / ref_safe(session_id)
    pending = store / PENDING_REFS / ref_safe(session_id)
    had = refs.is_dir() or pending.is_file()
    shutil.rmtree(refs, ignore_errors=True)
    pending.unlink(missing_ok=True)
    return had


@dataclass(frozen=True, slots=True)
class PruneResult:
    forgotten: bool
    """Whether the session had snapshots in the store (its refs were removed)."""
    store: Path
    bytes_before: int | None = None
    bytes_after: int | None = None
    problem: str | None = None


def prune_deleted_session(agent_dir: Path, cwd: str, session_id: str, *, background: bool = True,
                          grace: str = GC_GRACE, timeout_s: float = GC_TIMEOUT_S) -> PruneResult:
    """What to call once a session file is deleted for good (not trashed: it may come back):
    its refs go, and a ``git gc`` of the project's store frees what no other session holds.
    ``background`` (default) runs the gc in a daemon thread and returns at once (a picker must
    not wait for it); otherwise the result says the sizes before and after."""
    store = store_dir_for(agent_dir, Path(cwd))
    forgotten = forget_session(agent_dir, cwd, session_id)
    if not forgotten or not (store / "HEAD").is_file():
        return PruneResult(forgotten, store)
    if background:
        threading.Thread(target=gc_store, args=(store,), kwargs={"grace": grace, "timeout_s": timeout_s},
                         name="pi-tui-checkpoints-gc", daemon=True).start()
        return PruneResult(forgotten, store)
    before = store_bytes(store)
    try:
        gc_store(store, grace=grace, timeout_s=timeout_s)
    except CheckpointError as err:
        return PruneResult(forgotten, store, before, store_bytes(store), str(err))
    return PruneResult(forgotten, store, before, store_bytes(store))


def gc_store(store: Path, *, grace: str = GC_GRACE, timeout_s: float = GC_TIMEOUT_S) -> None:
    """``git gc --prune=<grace>`` in the store, under its lock (snapshots of the project wait or
    are skipped meanwhile). Refs stay loose (``gc.packRefs`` off): a session's refs are a folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_DIR": str(store), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    deadline = time.monotonic() + timeout_s
    with store_lock(store, min(deadline, time.monotonic() + LOCK_WAIT_S)):
        try:
            done = subprocess.run(
                ["git", "-c", "gc.packRefs=false", "-c", "gc.auto=0", "-c", "core.hooksPath=" + os.devnull,
                 "gc", "--quiet", f"--prune={grace}"],
                cwd=store, env=env, capture_output=True, timeout=max(0.1, deadline - time.monotonic()), check=False)
        except FileNotFoundError as err:
            raise CheckpointError("git is not on PATH") from err
        except subprocess.TimeoutExpired as err:
            raise CheckpointError(f"git gc of {store} did not finish in {timeout_s:g} s") from err
    if done.returncode != 0:
        text = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CheckpointError(f"git gc failed: {text[-1] if text else f'exit {done.returncode}'}")


def store_bytes(store: Path) -> int:
    """Bytes of every file under ``store`` (what deleting it would free)."""
    total = 0
    stack = [str(store)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
        except OSError:
            continue
    return total


def size_warning(store: Path, limit: int) -> str | None:
    """The line to show when ``store`` is past ``limit`` bytes (None under it)."""
    size = store_bytes(store)
    if size <= limit:
        return None
    return (f"Checkpoints: this project's snapshot store is {_human(size)}, past checkpoints.warnStoreBytes "
            f"({_human(limit)}): {store}. Deleting sessions frees their snapshots; deleting the folder "
            "is safe too (only file restores are lost) — docs/checkpoints.md")


def _human(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"  # pragma: no cover
