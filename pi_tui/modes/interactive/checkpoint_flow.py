"""The TUI's side of files that follow the tree (docs/checkpoints.md): the restore preview the
/tree and /fork chooser shows beside its summary choice ("restore files"), and /undo, /redo.

The chooser shows the preview only when the session has file snapshots and the move would
change files; it says why when they cannot come back (a snapshot missing). Nothing is written
before the choice: the preview only snapshots the current files (what a restore does first).
"""

from __future__ import annotations

from typing import Any

from pi_tui.modes.interactive.screens.tree import FilesPreview

NAME_LIMIT = 8


def _names(paths: list[str]) -> str:
    shown = ", ".join(p.replace("\n", "\\n") for p in paths[:NAME_LIMIT])
    return shown + (f" … (+{len(paths) - NAME_LIMIT})" if len(paths) > NAME_LIMIT else "")


def _kept(preview: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The preview's ``skipped``: the paths the restore leaves (something of the user's is in the
    way), and the rest (what the snapshot itself left out, ``name (why)``)."""
    from pi_tui.checkpoints.in_the_way import LEFT

    skipped = [str(s) for s in preview.get("skipped") or []]
    note = f": {LEFT})"
    kept = [s.rsplit(" (", 1)[0] for s in skipped if s.endswith(note)]
    return kept, [s for s in skipped if not s.endswith(note)]


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
    kept, skipped = _kept(preview)
    if kept:
        lines.append(f"{len(kept)} of yours left as they are (in no snapshot, not overwritten): {_names(kept)}")
    if skipped:
        lines.append(f"Not in the snapshots, left alone: {_names(skipped)}")
    if not lines:
        lines.append("No file differs.")
    return printable("\n".join(lines))


async def files_preview(session: Any, target_id: str, position: str = "tree") -> FilesPreview | None:
    """What the chooser shows about the files of a move to ``target_id``: None when nothing
    would change (or the session has no snapshots)."""
    checkpoints = getattr(session, "checkpoints", None)
    if checkpoints is None or not checkpoints.enabled or not checkpoints.has_snapshots():
        return None
    from pi_tui.core.terminal_text import printable
    from pi_tui.session.checkpoint_hooks import preview_restore

    try:
        preview = await preview_restore(session, target_id, position)
    except Exception as err:
        return FilesPreview(blocked=printable(f"Files cannot come back: {err}"))
    if preview.get("problem"):
        return FilesPreview(blocked=printable(f"Files cannot come back: {preview['problem']}"))
    if not any(preview.get(k) for k in ("changed", "created", "deleted")) and not _kept(preview)[0]:
        return None
    return FilesPreview(text=preview_text(preview))


async def ask_fork(app: Any, session: Any, entry_id: str) -> bool | None:
    """The /fork chooser when files could come back: True restore, False conversation only,
    None cancelled (Esc). Without a preview the fork goes on at once (False). In a worker."""
    from pi_tui.modes.interactive.screens.tree_dialogs import (
        FORK_OPTIONS,
        FORK_TITLE,
        SummarizeChoiceScreen,
    )

    files = await files_preview(session, entry_id, "before")
    if files is None:
        return False
    dialog = SummarizeChoiceScreen(files=files.text, files_blocked=files.blocked, title=FORK_TITLE,
                                   options=FORK_OPTIONS)
    if await app.push_screen_wait(dialog) is None:
        return None
    return dialog.restore_files


def restored_note(files: dict[str, Any] | None) -> str | None:
    if not files or not files.get("restored"):
        return None
    counts = [f"{len(files.get(k) or [])} {k}" for k in ("changed", "created", "deleted")]
    from pi_tui.core.terminal_text import printable

    kept = _kept(files)[0]
    left = printable(f"; left as they are (yours): {_names(kept)}") if kept else ""
    return "Files restored: " + ", ".join(counts) + left
