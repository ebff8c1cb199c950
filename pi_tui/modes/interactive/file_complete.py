"""``@`` file completion: a bounded walk of the project and a fuzzy subsequence match.

The walk skips what a developer never means (.git, node_modules, virtualenvs, caches) and stops at
a file budget, so completion stays instant in a large monorepo.
"""

from __future__ import annotations

import os
from pathlib import Path

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache", "dist", "build", ".tox", ".idea"})
MAX_FILES = 20_000


def list_project_files(root: Path, *, limit: int = MAX_FILES) -> list[str]:
    """Relative POSIX paths of files (and directories, with a trailing ``/``) under ``root``."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        rel_folder = os.path.relpath(folder, root)
        prefix = "" if rel_folder == "." else rel_folder.replace(os.sep, "/") + "/"
        found.extend(prefix + d + "/" for d in dirs)
        found.extend(prefix + f for f in sorted(files))
        if len(found) >= limit:
            return found[:limit]
    return found


def fuzzy_score(query: str, candidate: str) -> int | None:
    """Higher is better; None when ``query`` is not a subsequence of ``candidate``.

    Consecutive matches and matches in the file name (after the last ``/``) score higher,
    and shorter paths win ties.
    """
    if not query:
        return -len(candidate)
    q = query.lower()
    c = candidate.lower()
    name_start = c.rstrip("/").rfind("/") + 1
    score = 0
    position = -1
    streak = 0
    for ch in q:
        found = c.find(ch, position + 1)
        if found < 0:
            return None
        streak = streak + 1 if found == position + 1 else 0
        score += 1 + 3 * streak + (4 if found >= name_start else 0)
        position = found
    if q in c[name_start:]:
        score += 20
    return score * 10 - len(candidate)


def fuzzy_files(query: str, paths: list[str], *, limit: int = 12) -> list[str]:
    scored = [(s, p) for p in paths if (s := fuzzy_score(query, p)) is not None]
    scored.sort(key=lambda sp: (-sp[0], sp[1]))
    return [p for _, p in scored[:limit]]
