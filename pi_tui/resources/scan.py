"""Directory scanning shared by templates and skills: follow symlinks, skip and report broken ones."""

from __future__ import annotations

import os
from pathlib import Path

from pi_tui.resources.diagnostics import ResourceDiagnostic


def list_markdown_files(directory: Path, diagnostics: list[ResourceDiagnostic]) -> list[Path]:
    """The ``*.md`` files directly in ``directory`` (non-recursive), sorted by name.

    Symlinks to files are followed; a broken symlink is skipped with a warning naming it.
    """
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"cannot list directory: {exc.strerror}", directory))
        return []
    found: list[Path] = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.name.endswith(".md"):
            continue
        path = Path(entry.path)
        if entry.is_symlink() and not path.exists():
            diagnostics.append(ResourceDiagnostic("warning", "broken symlink skipped", path))
            continue
        if path.is_file():
            found.append(path)
    return found


def real_path(path: Path) -> Path:
    try:
        return path.resolve(strict=True)
    except OSError:
        return path.absolute()
