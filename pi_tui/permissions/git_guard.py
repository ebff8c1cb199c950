"""What a sandboxed command may not change in a repository (docs/permissions.md "Git").

git reads a repository's configuration and hooks and runs what they name (``core.fsmonitor``,
``core.pager``, hooks …): a command that plants them would run on the host, outside the
sandbox, the next time the user types ``git status``. ``git add`` and ``git commit`` must still
work inside the sandbox, so the objects, refs, index and HEAD stay writable.

Before each command (``bind_arguments``, ``protected_in``): every gitdir of a writable root —
its ``.git``, ``.git/worktrees/*``, ``.git/modules/**`` (submodules, nested) — is mounted onto
itself (a mount point cannot be renamed, removed or replaced: EBUSY), and its ``config``,
``config.worktree``, ``commondir`` and ``hooks`` are read-only when they exist. A ``.git`` that
is a file (``gitdir: …``: a worktree's or a submodule's pointer) is read-only itself.

A missing file cannot be mounted read-only without creating it on the host (and an empty
``commondir`` makes git die), so after each command, once nothing of it runs any more,
``GitGuard.check`` moves aside what appeared where git would read it: a ``commondir``, a
``config.worktree``, a gitdir's ``config`` or ``hooks`` where none was, the ``HEAD`` of a root
that this command turned into what git takes for a repository (``HEAD``, ``objects/``, ``refs/``:
git reads it, config included, when the root's ``.git`` is broken). Nothing is deleted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

GUARDED = ("config", "config.worktree", "commondir", "hooks")
"""In every gitdir: what git reads as configuration or runs."""
NOT_WALKED = frozenset({"objects", "refs", "logs", "hooks", "info", "lfs"})
MAX_DEPTH = 8
BLOCKED = ".pi-tui-blocked-"


def gitdirs(root: Path) -> list[Path]:
    """The root's ``.git`` (a folder), its worktrees' and its submodules' gitdirs, parents first."""
    git = root / ".git"
    if git.is_symlink() or not git.is_dir():
        return []
    found = [git]
    found += _folders(git / "worktrees", skip=frozenset())
    _modules(git / "modules", found, 0)
    return found


def _folders(folder: Path, skip: frozenset[str] = NOT_WALKED) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            return sorted(Path(e.path) for e in entries if e.is_dir(follow_symlinks=False) and e.name not in skip)
    except OSError:
        return []


def _modules(folder: Path, found: list[Path], depth: int) -> None:
    """``modules/<name>`` is a submodule's gitdir (``HEAD`` in it); a name with slashes nests folders."""
    if depth > MAX_DEPTH:
        return
    for child in _folders(folder):
        if os.path.lexists(child / "HEAD") or os.path.lexists(child / "config"):
            found.append(child)
            _modules(child / "modules", found, depth + 1)
        else:
            _modules(child, found, depth + 1)


def protected_in(root: Path) -> list[Path]:
    """Read-only in the sandbox (when they exist): a ``.git`` file, each gitdir's guarded names."""
    git = root / ".git"
    if git.is_file() and not git.is_symlink():
        return [git]
    return [folder / name for folder in gitdirs(root) for name in GUARDED]


def bind_arguments(root: Path) -> list[str]:
    """Each gitdir mounted onto itself (before the read-only binds inside it)."""
    args: list[str] = []
    for folder in gitdirs(root):
        args += ["--bind", str(folder), str(folder)]
    return args


@dataclass(slots=True)
class GitGuard:
    """What existed in the writable roots' gitdirs before one command (a few lstat calls)."""

    present: dict[Path, frozenset[str]] = field(default_factory=dict)
    bare_before: dict[Path, bool] = field(default_factory=dict)
    """Whether each root already looked like a repository itself (HEAD, objects/, refs/)."""

    @classmethod
    def before(cls, roots: list[Path]) -> GitGuard:
        guard = cls()
        for root in roots:
            folders = gitdirs(root)
            if not folders:
                continue
            for folder in folders:
                guard.present[folder] = frozenset(n for n in GUARDED if os.path.lexists(folder / n))
            guard.bare_before[root] = _looks_bare(root)
        return guard

    def check(self) -> list[str]:
        """Move aside what the command made git read; one line per file moved, for the output."""
        lines: list[str] = []
        for folder, names in self.present.items():
            for name in GUARDED:
                if name not in names and os.path.lexists(folder / name):
                    lines.append(_move_aside(folder / name, "git on the host would read it and could run "
                                             "what it names, outside the sandbox"))
        for root, was_bare in self.bare_before.items():
            if not was_bare and _looks_bare(root):  # whichever of the three this command added
                lines.append(_move_aside(root / "HEAD", "with objects/ and refs/ it makes the project itself a "
                                         "repository that git on the host would read, config included"))
        return lines


def _looks_bare(root: Path) -> bool:
    """What git's discovery takes for a repository when the folder's ``.git`` is broken."""
    return os.path.lexists(root / "HEAD") and (root / "objects").is_dir() and (root / "refs").is_dir()


def _move_aside(path: Path, why: str) -> str:
    number = 1
    while os.path.lexists(path.with_name(f"{path.name}{BLOCKED}{number}")):
        number += 1
    target = path.with_name(f"{path.name}{BLOCKED}{number}")
    try:
        os.rename(path, target)
    except OSError as error:
        return (f"[sandbox] the command created {path} and it could not be moved aside ({error.strerror}): "
                f"remove it before running git there ({why})")
    return f"[sandbox] the command created {path}: moved aside to {target.name} ({why})"
