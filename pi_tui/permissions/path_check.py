"""Paths for the in-process file tools, checked as the sandbox checks bash's.

``read``/``edit``/``write`` run in pi-tui's own process, not in bwrap, so the gate checks their
paths itself: the real path (every link resolved, a dangling one to where it would create the
file) must be inside a writable root and outside the protected paths for an edit to run without
asking; a file with more than one hard link is treated as outside (its other name may be
``~/.bashrc``); reading a hidden path (``~/.ssh`` …) asks.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pi_tui.tools.paths import resolve_to_cwd


@dataclass(frozen=True, slots=True)
class PathCheck:
    """Whether an edit's real path is inside the writable roots, and why not."""

    inside: bool
    reason: str = ""
    real: Path | None = None


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_edit_path(raw: str, cwd: Path, roots: Sequence[Path], protected: Sequence[Path]) -> PathCheck:
    if not raw:
        return PathCheck(False, "no path given")
    lexical = resolve_to_cwd(raw, cwd)
    real = os.path.realpath(lexical)
    shown = str(lexical) if str(lexical) == real else f"{lexical} (really {real})"
    real_roots = [os.path.realpath(r) for r in roots]
    if not any(_within(real, root) for root in real_roots):
        return PathCheck(False, f"{shown} is outside the writable roots ({', '.join(real_roots)})", Path(real))
    for path in protected:
        if _within(real, os.path.realpath(path)) or _within(str(lexical), str(path)):
            return PathCheck(False, f"{shown} is protected ({path.name}: it runs outside the sandbox later)",
                             Path(real))
    try:
        links = os.stat(real).st_nlink
    except OSError:
        links = 1
    if links > 1 and os.path.isfile(real):
        return PathCheck(False, f"{shown} has {links} hard links: its other names may be outside the writable roots",
                         Path(real))
    return PathCheck(True, "", Path(real))


def hidden_reason(raw: str, cwd: Path, hidden: Sequence[Path]) -> str:
    """Why reading ``raw`` leaves the sandbox (a hidden credential path), or ``""``."""
    lexical = resolve_to_cwd(raw, cwd)
    forms = {str(lexical), os.path.realpath(lexical)}
    for path in hidden:
        for root in {str(path), os.path.realpath(path)}:
            if any(_within(form, root) for form in forms):
                return f"{lexical} is hidden from the sandbox ({path}: credentials and private data)"
    return ""
