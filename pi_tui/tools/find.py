"""The ``find`` tool (pi-behaviour.md §4.7, §13.4 find).

With ``fd`` on PATH: ``fd --glob --color=never --hidden --no-require-git --max-results N``
(``--full-path`` and a ``**/`` prefix when the pattern has a ``/``). Without it, a pure-Python
walk with the same meaning: the glob matches the file name (or, with a ``/``, the whole path),
hidden files are included, ``.gitignore`` files apply, folders end with ``/``.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Literal

from pi_tui.core.cancellable_thread import run_in_thread
from pi_tui.core.errors import ToolError
from pi_tui.core.gitignore import glob_to_regex, walk
from pi_tui.core.messages import JsonValue
from pi_tui.core.regular_files import file_kind
from pi_tui.core.tool import ToolContext, ToolResult
from pi_tui.tools.common import names_failures, optional_int, optional_str, require_str
from pi_tui.tools.paths import resolve_to_cwd
from pi_tui.tools.search_common import (
    FD_IGNORE_FILE_NAMES,
    BlockingIgnoreFiles,
    find_binary,
    listing_result,
    unless_an_ignore_file_blocks,
)

DEFAULT_FIND_LIMIT = 1000

FIND_PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Glob that file paths must match, such as '*.py', '**/*.json' or 'docs/**/*.md'"},
        "path": {"type": "string", "description": "Folder to search; the working directory when omitted"},
        "limit": {"type": "number", "description": f"Stop after this many paths ({DEFAULT_FIND_LIMIT} when omitted)"},
    },
    "required": ["pattern"],
}


def full_path_pattern(pattern: str) -> str | None:
    """The ``--full-path`` form of a pattern containing ``/`` (None when it has none)."""
    if "/" not in pattern:
        return None
    if pattern.startswith("/") or pattern.startswith("**/") or pattern == "**":
        return pattern
    return "**/" + pattern


def python_find(root: Path, pattern: str, limit: int) -> list[str]:
    full = full_path_pattern(pattern)
    regex = re.compile("^" + glob_to_regex(full or pattern, braces=True) + "$", re.DOTALL)
    root_text = root.as_posix().rstrip("/")
    results: list[str] = []
    for entry in walk(root):
        subject = f"{root_text}/{entry.rel}" if full else entry.rel.rsplit("/", 1)[-1]
        if regex.match(subject):
            results.append(entry.rel + "/" if entry.is_dir else entry.rel)
            if len(results) >= limit:
                break
    return results


async def _fd_output(command: list[str]) -> tuple[int, str, str]:
    try:
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
    except OSError as error:
        raise ToolError(f"Failed to run fd: {error}") from None
    try:
        stdout, stderr = await process.communicate()
    except asyncio.CancelledError:
        process.kill()
        raise
    code = process.returncode if process.returncode is not None else -1
    return code, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace")


_FD_WITHOUT_REQUIRE_GIT: set[str] = set()
"""fd binaries (by path) that refused ``--no-require-git``; find walks by itself instead."""


async def run_fd(fd: str, root: Path, pattern: str, limit: int) -> list[str]:
    flags = ["--glob", "--color=never", "--hidden", "--no-require-git", "--max-results", str(limit)]
    full = full_path_pattern(pattern)
    if full is not None:
        flags.append("--full-path")
    tail = ["--", full or pattern, str(root)]
    if fd in _FD_WITHOUT_REQUIRE_GIT:
        return await run_in_thread(python_find, root, pattern, limit)
    code, stdout, stderr = await _fd_output([fd, *flags, *tail])
    if code != 0 and "--no-require-git" in stderr:
        # fd < 9 (Debian's fdfind 8.6) has no such flag and ignores .gitignore outside a git
        # repo: use the walker, and stop starting this fd for nothing on every later call
        _FD_WITHOUT_REQUIRE_GIT.add(fd)
        return await run_in_thread(python_find, root, pattern, limit)
    lines = [line for line in stdout.splitlines() if line.strip()]
    if code != 0 and not lines:
        raise ToolError(stderr.strip() or f"fd exited with code {code}")
    prefix = str(root).rstrip(os.sep) + os.sep
    results: list[str] = []
    for line in lines:
        trailing = line.endswith(("/", "\\"))
        relative = line[len(prefix) :] if line.startswith(prefix) else line
        if trailing and not relative.endswith("/"):
            relative += "/"
        results.append(relative.replace("\\", "/"))
    return results


class FindTool:
    name = "find"
    label = "find"
    description = (
        "Find files and folders by glob pattern (matched against names, or against paths when the "
        "pattern contains '/'). Respects .gitignore and includes hidden files. Returns paths relative "
        f"to the search folder, at most {DEFAULT_FIND_LIMIT} by default or 50KB."
    )
    parameters: dict[str, JsonValue] = FIND_PARAMETERS
    prompt_snippet: str | None = "Locate files by glob (skips what .gitignore excludes)"
    prompt_guidelines: tuple[str, ...] = ()
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        pattern = require_str(args, "pattern", self.name)
        root = resolve_to_cwd(optional_str(args, "path", self.name) or ".", ctx.cwd)
        limit = max(1, optional_int(args, "limit", self.name) or DEFAULT_FIND_LIMIT)
        if not root.exists():
            raise ToolError(f"Path not found: {root}")
        if not (root.is_dir() or root.is_file()):  # nothing to walk; fd would say "not a directory"
            raise ToolError(f"Cannot search {root}: it is {file_kind(root.stat().st_mode)}, not a folder")
        fd = find_binary("fd")
        notices: tuple[str, ...] = ()
        with names_failures(self.name, f"{pattern} in {root}"):
            results: list[str] | None = None
            if fd is not None:
                try:
                    results = await unless_an_ignore_file_blocks(run_fd(fd, root, pattern, limit), root, program="fd",
                                                                 names=FD_IGNORE_FILE_NAMES)
                except BlockingIgnoreFiles as error:  # fd would wait on it forever: walk without fd
                    notices = (error.notice(root if root.is_dir() else root.parent),)
            if results is None:
                results = await run_in_thread(python_find, root, pattern, limit)
        if not results:
            text = "No files found matching pattern" + "".join(f"\n\n[{notice}]" for notice in notices)
            return ToolResult(content=[{"type": "text", "text": text}])
        if len(results) < limit:
            return listing_result(results, trailing_notices=notices)
        return listing_result(
            results,
            limit_notice=f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern",
            details={"resultLimitReached": limit},
            trailing_notices=notices,
        )
