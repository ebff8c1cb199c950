"""The TUI's side of files that follow the tree (docs/checkpoints.md): the "restore files?"
question with its preview after a /tree or /fork choice, and /undo, /redo.

The question comes after the summary choice and only when the session has file snapshots and
the move would change files (or the user changed some since the last snapshot); y restores,
n moves the conversation only.
"""

from __future__ import annotations

from typing import Any

RESTORE_QUESTION = "Restore files too?"
NAME_LIMIT = 8


def _names(paths: list[str]) -> str:
    shown = ", ".join(p.replace("\n", "\\n") for p in paths[:NAME_LIMIT])
    return shown + (f" … (+{len(paths) - NAME_LIMIT})" if len(paths) > NAME_LIMIT else "")


def preview_text(preview: dict[str, Any]) -> str:
    """The preview: counts and names per kind, then files edited since the last snapshot."""
    from pi_tui.core.terminal_text import printable

    lines: list[str] = []
    for key, verb in (("changed", "changed"), ("created", "brought back"), ("deleted", "deleted")):
        paths = list(preview.get(key) or [])
        if paths:
            lines.append(f"{len(paths)} {verb}: {_names(paths)}")
    edited = preview.get("editedSinceSnapshot") or {}
    touched = [*edited.get("changed", []), *edited.get("created", []), *edited.get("deleted", [])]
    if touched:
        lines.append(f"Edited since the last snapshot (kept in the snapshot of the point you leave): {_names(touched)}")
    if not lines:
        lines.append("No file differs.")
    return printable("\n".join(lines))


async def ask_restore(app: Any, session: Any, target_id: str, position: str = "tree") -> bool:
    """Whether to restore files for a move to ``target_id``; False without asking when there is
    nothing to restore. Runs in a worker (it waits for the dialog)."""
    checkpoints = getattr(session, "checkpoints", None)
    if checkpoints is None or not checkpoints.enabled or not checkpoints.has_snapshots():
        return False
    from pi_tui.modes.interactive.screens.confirm import ConfirmScreen
    from pi_tui.session.checkpoint_hooks import preview_restore

    try:
        preview = await preview_restore(session, target_id, position)
    except Exception:
        return False
    if preview.get("problem"):
        return False
    moved = any(preview.get(k) for k in ("changed", "created", "deleted"))
    if not moved:
        return False
    answer: bool = bool(await app.push_screen_wait(ConfirmScreen(RESTORE_QUESTION, detail=preview_text(preview))))
    return answer


def restored_note(files: dict[str, Any] | None) -> str | None:
    if not files or not files.get("restored"):
        return None
    counts = [f"{len(files.get(k) or [])} {k}" for k in ("changed", "created", "deleted")]
    return "Files restored: " + ", ".join(counts)
