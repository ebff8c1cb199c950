"""Forgetting a deleted session's snapshots: its refs in the project's store are removed, so a
later ``git gc`` of the store (``git --git-dir <store> gc --prune=now``) frees what no other
session still holds. Never by age: only when the session itself is gone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pi_tui.checkpoints.git_store import store_dir_for
from pi_tui.checkpoints.manager import ref_safe


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


def forget_session(agent_dir: Path, cwd: str, session_id: str) -> bool:
    """Remove the session's refs from its project's store; True when there were any."""
    refs = store_dir_for(agent_dir, Path(cwd)) / "refs" / "pi-tui" / "sessions" / ref_safe(session_id)
    if not refs.is_dir():
        return False
    shutil.rmtree(refs, ignore_errors=True)
    return True
