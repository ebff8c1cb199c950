"""File checkpoints: the working tree follows the session tree (docs/checkpoints.md).

``open_checkpoints`` builds the session's ``Checkpoints`` from the settings; the session calls it
at a few points (``pi_tui/session/checkpoint_hooks.py``). Whoever deletes a session file for good
calls ``prune_deleted_session(agent_dir, cwd, session_id)`` (``prune.py``): its snapshots are
forgotten and the store's gc frees what no other session holds. Nothing here imports the session, the
SDK or a mode: what the room needs from above comes in as callables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pi_tui.checkpoints.background_fill import DEFAULT_FIRST_TIMEOUT_MS
from pi_tui.checkpoints.git_store import GitStore, git_available, store_dir_for
from pi_tui.checkpoints.manager import Checkpoints, refuse_reason
from pi_tui.checkpoints.prune import DEFAULT_WARN_STORE_BYTES, PruneResult, prune_deleted_session
from pi_tui.checkpoints.scan_limits import MAX_FILE_BYTES, MAX_FOLDER_FILES, ScanLimits
from pi_tui.core.session.manager import SessionManager

DEFAULT_TIMEOUT_MS = 5000


def _setting(settings: Any, key: str, default: Any) -> Any:
    getter = getattr(settings, "get", None)
    value = getter(key, default) if callable(getter) else default
    return default if value is None else value


def _positive(settings: Any, key: str, default: int) -> int:
    value = _setting(settings, key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def open_checkpoints(
    *, cwd: Path, agent_dir: Path, settings: Any, current: Callable[[], SessionManager],
    emit: Callable[[dict[str, Any]], None], excluded: Sequence[Path] = (),
) -> Checkpoints | None:
    """None when ``checkpoints.enabled`` is false; otherwise a ``Checkpoints`` that may be off
    (no git, cwd is ``$HOME`` or ``/``) and says why once."""
    if _setting(settings, "checkpoints.enabled", True) is False:
        return None
    timeout = _positive(settings, "checkpoints.timeoutMs", DEFAULT_TIMEOUT_MS)
    limits = ScanLimits(_positive(settings, "checkpoints.maxFileBytes", MAX_FILE_BYTES),
                        _positive(settings, "checkpoints.maxFolderFiles", MAX_FOLDER_FILES))
    off = refuse_reason(cwd)
    if off is None and git_available() is None:
        off = "git is not on PATH (install git to have /tree, /fork and /undo bring files back)"
    store = None if off else GitStore(store_dir_for(agent_dir, cwd), cwd, limits,
                                      excluded=[agent_dir, *excluded])
    return Checkpoints(store=store, current=current, emit=emit, timeout_ms=timeout, off_reason=off,
                       first_timeout_ms=_positive(settings, "checkpoints.firstSnapshotTimeoutMs", DEFAULT_FIRST_TIMEOUT_MS),
                       warn_store_bytes=_positive(settings, "checkpoints.warnStoreBytes", DEFAULT_WARN_STORE_BYTES))


__all__ = ["Checkpoints", "PruneResult", "open_checkpoints", "prune_deleted_session"]
