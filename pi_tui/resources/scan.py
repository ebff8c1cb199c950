"""Scanning shared by templates and skills: follow symlinks, report broken ones, first name wins."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Generic, Literal, TypeVar

from pi_tui.resources.diagnostics import Collision, ResourceDiagnostic

T = TypeVar("T")


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


class FirstWins(Generic[T]):
    """Collects resources in priority order: a real file is used once (silently), and the first
    resource of a name wins — a later one becomes a ``collision`` diagnostic naming both files."""

    def __init__(
        self,
        resource_type: Literal["skill", "prompt"],
        collision_message: Callable[[str], str],
        diagnostics: list[ResourceDiagnostic],
    ) -> None:
        self.items: list[T] = []
        self._resource_type = resource_type
        self._message = collision_message
        self._diagnostics = diagnostics
        self._winners: dict[str, Path] = {}
        self._seen: set[Path] = set()

    def first_visit(self, file: Path) -> bool:
        key = real_path(file)
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def add(self, name: str, file: Path, item: T, *, overridable: bool = False) -> None:
        """``overridable``: a built-in resource, which a user's or project's of the same name
        replaces on purpose (the docs offer it), so losing is no collision."""
        winner = self._winners.get(name)
        if winner is not None:
            if overridable:
                return
            collision = Collision(self._resource_type, name, winner, file)
            self._diagnostics.append(ResourceDiagnostic("collision", self._message(name), file, collision))
            return
        self._winners[name] = file
        self.items.append(item)
