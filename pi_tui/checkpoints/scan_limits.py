"""What a snapshot leaves out, and why — every skip is named, never silent.

* Ignore rules: git reads the project's own ``.gitignore`` files under the cwd; the repository's
  ``info/exclude`` is the store's ``core.excludesFile``; the unanchored rules (and anchored ones
  that point into the cwd) of ``.gitignore`` files *above* the cwd in its repository are copied
  into the store's ``info/exclude``. In a folder that is no git repository a default list of
  build and dependency folders is excluded instead (``DEFAULT_EXCLUDES``).
* Files new to the store larger than ``maxFileBytes``, folders holding more than
  ``maxFolderFiles`` new files directly, and nested repositories are not added.
* The agent dir and session dir are excluded when they sit inside the project.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_EXCLUDES = (
    "node_modules/", ".venv/", "venv/", "__pycache__/", "*.pyc", ".tox/", ".nox/", ".mypy_cache/",
    ".pytest_cache/", ".ruff_cache/", ".cache/", "target/", "dist/", "build/", ".gradle/", ".next/",
    ".nuxt/", ".parcel-cache/", ".turbo/", "coverage/", ".DS_Store",
)
"""Excluded in a folder that is not a git repository (there, nothing else says what is junk)."""

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_FOLDER_FILES = 2000


@dataclass(frozen=True, slots=True)
class ScanLimits:
    max_file_bytes: int = MAX_FILE_BYTES
    max_folder_files: int = MAX_FOLDER_FILES


def user_git_dir(work_tree: Path) -> Path | None:
    """The git directory of the repository ``work_tree`` is in (read only, for its
    ``info/exclude``), found without running git; None outside any repository."""
    current = work_tree
    while True:
        dot_git = current / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():  # a linked worktree or submodule: "gitdir: <path>"
            try:
                text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text[7:].strip())
                target = target if target.is_absolute() else current / target
                common = target / "commondir"
                if common.is_file():
                    shared = Path(common.read_text(encoding="utf-8", errors="replace").strip())
                    return shared if shared.is_absolute() else target / shared
                return target
            return None
        if current.parent == current:
            return None
        current = current.parent


def _repo_top(work_tree: Path) -> Path | None:
    current = work_tree
    while True:
        if (current / ".git").exists():
            return current
        if current.parent == current:
            return None
        current = current.parent


def _escape(path: str) -> str:
    out = "".join("\\" + c if c in "*?[]!#\\ " else c for c in path)
    return "/" + out


def _inherited_rules(work_tree: Path, top: Path) -> list[str]:
    """The rules of ``.gitignore`` files above ``work_tree`` (up to ``top``) that apply inside it."""
    rules: list[str] = []
    folder = top
    relative_parts = work_tree.relative_to(top).parts
    for depth in range(len(relative_parts)):
        below = "/".join(relative_parts[depth:]) + "/"
        try:
            text = (folder / ".gitignore").read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            text = ""
        for line in text.splitlines():
            stripped = line.rstrip()
            if not stripped or stripped.startswith("#"):
                continue
            negate = "!" if stripped.startswith("!") else ""
            body = stripped[1:] if negate else stripped
            if "/" not in body.rstrip("/"):
                rules.append(negate + body)
            elif body.lstrip("/").startswith(below):
                rules.append(negate + "/" + body.lstrip("/")[len(below):])
        folder = folder / relative_parts[depth]
    return rules


def exclude_text(work_tree: Path, in_repository: bool, excluded: Sequence[Path]) -> str:
    lines = ["# written by pi-tui for its checkpoint snapshots"]
    if in_repository:
        top = _repo_top(work_tree)
        if top is not None and top != work_tree:
            lines += _inherited_rules(work_tree, top)
    else:
        lines += DEFAULT_EXCLUDES
    for path in excluded:
        try:
            relative = path.relative_to(work_tree)
        except ValueError:
            continue
        if relative.parts:
            lines.append(_escape(relative.as_posix()) + "/")
    return "\n".join(lines) + "\n"


def select_new_files(work_tree: Path, new: Sequence[str], limits: ScanLimits) -> tuple[list[str], list[str]]:
    """``(files to add, skipped paths with the reason)`` among the files new to the store."""
    skipped: list[str] = []
    nested: dict[str, str | None] = {}
    per_folder = Counter(os.path.dirname(p) for p in new)
    crowded = {folder for folder, count in per_folder.items() if count > limits.max_folder_files}
    for folder in sorted(crowded):
        skipped.append(f"{folder or '.'}/ ({per_folder[folder]} new files, more than {limits.max_folder_files})")
    chosen: list[str] = []
    for path in new:
        folder = os.path.dirname(path)
        if folder in crowded:
            continue
        repo = _nested_repository(work_tree, folder, nested)
        if repo is not None:
            continue
        try:
            size = os.lstat(work_tree / path).st_size
        except OSError:
            continue  # gone since it was listed
        if size > limits.max_file_bytes:
            skipped.append(f"{path} ({size} bytes, more than {limits.max_file_bytes})")
            continue
        chosen.append(path)
    for repo in sorted({r for r in nested.values() if r is not None}):
        skipped.append(f"{repo}/ (a nested git repository)")
    return chosen, skipped


def _nested_repository(work_tree: Path, folder: str, cache: dict[str, str | None]) -> str | None:
    """The nested repository (a folder below the work tree holding ``.git``) ``folder`` is in."""
    if not folder:
        return None
    if folder in cache:
        return cache[folder]
    parent = _nested_repository(work_tree, os.path.dirname(folder), cache)
    found = parent if parent is not None else (folder if os.path.lexists(work_tree / folder / ".git") else None)
    cache[folder] = found
    return found
