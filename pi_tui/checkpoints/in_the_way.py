"""What a restore must leave alone: something of the user's that no snapshot holds, standing where
a file of the target snapshot comes back.

A path the target creates is, by definition, not in the snapshot taken just before the restore,
so whatever is on disk there (a file over ``checkpoints.maxFileBytes``, an ignored one, one in a
crowded folder, one made after that snapshot) exists nowhere else. So does a file or symlink at
a folder above it (git would remove it to make the folder), and a folder standing in the place
of a file coming back. A restore writes none of these paths; it names them instead
(``KEPT_WHY``), before anything is written and in its result.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from pathlib import Path

LEFT = "left as it is"
KEPT_WHY = f"yours, in no snapshot: {LEFT}"
CHANGED_WHY = f"changed since the preview: {LEFT}"
"""A fork's restore leaves a path changed between its preview and the writing (``Checkpoints._recheck``)."""


def kept_note(path: str, why: str = KEPT_WHY) -> str:
    """How a kept path is named in a restore's ``skipped`` list (the format of a snapshot's)."""
    return f"{path} ({why})"


def in_the_way(work_tree: Path, created: Iterable[str], changed: Iterable[str] = (),
               deleted: Collection[str] = ()) -> tuple[str, ...]:
    """The paths of ``created`` and ``changed`` a restore must not write. ``deleted`` (paths the
    restore removes first, held by the current snapshot) do not count as in the way: asked before
    the deletions (the preview), a file there or a folder they empty is about to go."""
    gone = set(deleted)
    emptied = {"/".join(parts[:i]) for d in gone for parts in [d.split("/")] for i in range(1, len(parts))}
    kept: list[str] = []
    for path in created:
        if _leading_blocked(work_tree, path, gone) or _occupied(work_tree / path, path, gone, emptied):
            kept.append(path)
    for path in changed:  # held by the current snapshot: only a folder made in its place since
        full = work_tree / path
        if full.is_dir() and not full.is_symlink() and path not in emptied:
            kept.append(path)
    return tuple(kept)


def _leading_blocked(work_tree: Path, path: str, gone: Collection[str]) -> bool:
    parts = path.split("/")
    for i in range(1, len(parts)):
        lead = "/".join(parts[:i])
        full = work_tree / lead
        if full.is_symlink() or (os.path.lexists(full) and not full.is_dir()):
            return lead not in gone
        if not full.exists():
            return False
    return False


def _occupied(full: Path, path: str, gone: Collection[str], emptied: Collection[str]) -> bool:
    if full.is_symlink():
        return True
    if full.is_dir():
        return path not in emptied or _holds_more(full, path, gone)
    return os.path.lexists(full)


def _holds_more(folder: Path, path: str, gone: Collection[str]) -> bool:
    """Whether ``folder`` holds anything besides the paths the restore deletes."""
    for root, dirs, files in os.walk(folder):
        rel = os.path.relpath(root, folder)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            inner = name if rel == "." else f"{rel}/{name}"
            if f"{path}/{inner}" not in gone:
                return True
    return False
