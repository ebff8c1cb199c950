"""Shared bits of grep, find and ls: locating rg/fd, guarding them against ignore files that
block, and the byte-limited listing output."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

from pi_tui.core.cancellable_thread import check_cancelled, run_in_thread
from pi_tui.core.deadline import cancel_and_wait
from pi_tui.core.gitignore import walk
from pi_tui.core.messages import JsonValue
from pi_tui.core.regular_files import file_kind
from pi_tui.core.tool import ToolResult
from pi_tui.tools.shell import shell_env
from pi_tui.tools.truncate import DEFAULT_MAX_BYTES, UNLIMITED_LINES, format_size, truncate_head

_OTHER_NAMES = {"fd": ("fdfind",)}
"""Names a tool is installed under elsewhere: Debian and Ubuntu ship fd as ``fdfind``."""


def find_binary(name: str) -> str | None:
    """``name`` (or its other name) on PATH or in ``<agentDir>/bin`` (where pi keeps downloaded
    tools); never downloads."""
    path = shell_env().get("PATH")
    for candidate in (name, *_OTHER_NAMES.get(name, ())):
        found: str | None = shutil.which(candidate, path=path)
        if found is not None:
            return found
    return None


def kill_quietly(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.kill()


T = TypeVar("T")

IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".rgignore")
"""The per-folder ignore files ripgrep opens (in the searched tree and the folders above it)."""
FD_IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")
"""The same for fd (the same ignore crate, its own ``.fdignore``)."""
CHECK_AFTER_S = 0.25
"""How long rg may run before its ignore files are checked (most searches end sooner)."""


class BlockingIgnoreFiles(Exception):
    """Ignore files that are FIFOs or devices: opening one blocks a search that honours it."""

    def __init__(self, found: list[tuple[Path, str]], program: str = "ripgrep") -> None:
        self.found = found
        self.program = program
        super().__init__(self.notice(Path("/")))

    def notice(self, root: Path) -> str:
        """One line naming each file (relative to ``root`` when below it) and what it is."""
        names = []
        for path, kind in self.found:
            shown = os.path.relpath(path, root) if path.is_relative_to(root) else str(path)
            names.append(f"{shown} is {kind}")
        return "; ".join(names) + f", not a regular file: searched without {self.program}, its rules not applied"


def blocking_ignore_files(root: Path, names: tuple[str, ...] = IGNORE_FILE_NAMES) -> list[tuple[Path, str]]:
    """The ignore files (``names``) a ripgrep or fd search of ``root`` would open that are not
    regular files: in the folders above ``root``, ``.git/info/exclude``, and every folder of the
    tree (walked as .gitignore allows, a superset of their walk). Never opens one (stat only)."""
    def odd(path: Path) -> str | None:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return None  # missing or unreadable: rg skips it too
        return None if stat.S_ISREG(mode) else file_kind(mode)

    folders = [root, *root.parents] if root.is_dir() else list(root.parents)
    candidates = [folder / name for folder in folders for name in names]
    candidates += [folder / ".git" / "info" / "exclude" for folder in folders]
    found = [(path, kind) for path in candidates if (kind := odd(path)) is not None]
    if root.is_dir():
        for entry in walk(root):
            check_cancelled()
            if entry.is_dir:
                for name in names:
                    kind = odd(entry.path / name)
                    if kind is not None:
                        found.append((entry.path / name, kind))
    return found


async def unless_an_ignore_file_blocks(search: Awaitable[T], root: Path, *, program: str = "ripgrep",
                                       names: tuple[str, ...] = IGNORE_FILE_NAMES) -> T:
    """``search`` (``program``, rg or fd, over ``root``), stopped with ``BlockingIgnoreFiles`` when
    an ignore file it would open (``names``) is a FIFO or a device: it would wait on it forever,
    and in print mode nobody aborts. Checked only once the search has run ``CHECK_AFTER_S`` (a thread walks the tree
    meanwhile); a search that ends first is never slowed. Cancelling the search is what ends
    its process (the search's own cleanup)."""
    task: asyncio.Future[T] = asyncio.ensure_future(search)
    check: asyncio.Future[list[tuple[Path, str]]] | None = None
    try:
        done, _ = await asyncio.wait({task}, timeout=CHECK_AFTER_S)
        if not done:
            check = asyncio.ensure_future(run_in_thread(blocking_ignore_files, root, names))
            racing: set[asyncio.Future[Any]] = {task, check}
            done, _ = await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
            found = check.result() if task not in done and check.exception() is None else []
            if found:
                raise BlockingIgnoreFiles(found, program)
        return await task
    finally:
        await cancel_and_wait(task, check)


def listing_result(
    lines: list[str],
    *,
    limit_notice: str | None = None,
    details: dict[str, JsonValue] | None = None,
    trailing_notices: tuple[str, ...] = (),
) -> ToolResult:
    """The shared output of grep/find/ls: lines joined and cut at 50 KB (whole lines, no line
    limit), then pi's notices in one bracket — the limit notice, the byte notice, the rest."""
    truncation = truncate_head("\n".join(lines), max_lines=UNLIMITED_LINES)
    notices = [limit_notice] if limit_notice else []
    details = dict(details or {})
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation.as_details()
    notices.extend(trailing_notices)
    text = truncation.content + (f"\n\n[{'. '.join(notices)}]" if notices else "")
    return ToolResult(content=[{"type": "text", "text": text}], details=details or None)
