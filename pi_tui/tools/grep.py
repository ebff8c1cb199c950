"""The ``grep`` tool (pi-behaviour.md §4.6, §13.4 grep).

Uses ripgrep when it is on PATH (or in ``<agentDir>/bin``); otherwise a pure-Python search with
the same output: ``relpath:N: text`` for matches, ``relpath-N- text`` for context, lines cut at
500 characters, the whole output cut at 50 KB, the same notices. Nothing is ever downloaded.
The fallback searches what rg would search: hidden files included, ``.gitignore`` honoured,
binary files (a NUL byte in the first 8 KB) skipped.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, Literal

from pi_tui.core.cancellable_thread import check_cancelled, run_in_thread
from pi_tui.core.errors import ToolError
from pi_tui.core.gitignore import glob_to_regex, walk
from pi_tui.core.messages import JsonValue
from pi_tui.core.regular_files import file_kind, open_regular
from pi_tui.core.tool import ToolContext, ToolResult
from pi_tui.tools.common import (
    names_failures,
    optional_bool,
    optional_int,
    optional_str,
    require_str,
)
from pi_tui.tools.paths import resolve_to_cwd
from pi_tui.tools.search_common import (
    BlockingIgnoreFiles,
    find_binary,
    kill_quietly,
    listing_result,
    unless_an_ignore_file_blocks,
)
from pi_tui.tools.truncate import GREP_MAX_LINE_LENGTH, truncate_line

DEFAULT_GREP_LIMIT = 100
_BINARY_SNIFF = 8192

GREP_PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "What to look for: a regular expression, or plain text with literal=true"},
        "path": {"type": "string", "description": "File or folder to search; the working directory when omitted"},
        "glob": {"type": "string", "description": "Only search files matching this glob, such as '*.py' or 'src/**/*.test.ts'"},
        "ignoreCase": {"type": "boolean", "description": "Ignore letter case (false when omitted)"},
        "literal": {"type": "boolean", "description": "Match the pattern as plain text, not as a regular expression (false when omitted)"},
        "context": {"type": "number", "description": "Lines of surrounding context to show around each match (0 when omitted)"},
        "limit": {"type": "number", "description": f"Stop after this many matches ({DEFAULT_GREP_LIMIT} when omitted)"},
    },
    "required": ["pattern"],
}

Match = tuple[Path, int, str | None]
"""(file, 1-based line number, the line's text when known)."""


def compile_glob_filter(glob: str) -> Callable[[str], bool]:
    """rg's ``--glob``: no ``/`` matches the file name at any depth; ``!`` excludes."""
    negated = glob.startswith("!")
    body = glob[1:] if negated else glob
    anchored = "/" in body.rstrip("/")
    prefix = "^" if anchored else "^(?:.*/)?"
    regex = re.compile(prefix + glob_to_regex(body.lstrip("/"), braces=True) + "$", re.DOTALL)
    return (lambda rel: not regex.match(rel)) if negated else (lambda rel: bool(regex.match(rel)))


def _open_text(path: Path) -> BinaryIO | None:
    """The file opened for searching, or None when it is binary, not a regular file (a FIFO would
    block the walk forever) or unreadable: rg skips those too."""
    try:
        fh = open_regular(path)
    except OSError:
        return None
    try:
        if b"\x00" in fh.read(_BINARY_SNIFF):
            fh.close()
            return None
        fh.seek(0)
    except OSError:
        fh.close()
        return None
    return fh


def python_grep(
    root: Path, regex: re.Pattern[str], *, glob: str | None, limit: int
) -> tuple[list[Match], bool]:
    """Matches in walk order and whether the limit was reached."""
    keep = compile_glob_filter(glob) if glob else None
    if root.is_file():
        candidates: list[tuple[Path, str]] = [(root, root.name)]
    else:
        candidates = [(e.path, e.rel) for e in walk(root) if not e.is_dir]
    matches: list[Match] = []
    for path, rel in candidates:
        if keep is not None and not keep(rel):
            continue
        check_cancelled()
        fh = _open_text(path)
        if fh is None:
            continue
        try:
            with fh:  # lines end at \n only, as for rg (a bare \r is text)
                for number, raw in enumerate(fh, start=1):
                    if number % 50_000 == 0:
                        check_cancelled()
                    text = raw.rstrip(b"\n").removesuffix(b"\r").decode("utf-8", "replace")
                    if regex.search(text):
                        matches.append((path, number, text))
                        if len(matches) >= limit:
                            return matches, True
        except OSError:
            continue
    return matches, False


async def ripgrep(
    rg: str, root: Path, args: dict[str, JsonValue], pattern: str, limit: int
) -> tuple[list[Match], bool]:
    command = [rg, "--json", "--line-number", "--color=never", "--hidden"]
    if optional_bool(args, "ignoreCase", "grep"):
        command.append("--ignore-case")
    if optional_bool(args, "literal", "grep"):
        command.append("--fixed-strings")
    glob = optional_str(args, "glob", "grep")
    if glob:
        command += ["--glob", glob]
    command += ["--", pattern, str(root)]
    try:
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=16 << 20,
        )
    except OSError as error:
        raise ToolError(f"Failed to run ripgrep: {error}") from None
    assert process.stdout is not None and process.stderr is not None
    matches: list[Match] = []
    reached = False
    finished = False
    try:
        async for raw in process.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if event.get("type") != "match":
                continue
            data = event.get("data", {})
            file_text = data.get("path", {}).get("text")
            number = data.get("line_number")
            line = data.get("lines", {}).get("text")
            if isinstance(file_text, str) and isinstance(number, int):
                text = line.rstrip("\n").replace("\r", "") if isinstance(line, str) else None
                matches.append((Path(file_text), number, text))
            if len(matches) >= limit:
                reached = True
                break
        finished = True
    finally:
        if reached or not finished:  # the limit, an abort, or a failure: rg may still be running
            kill_quietly(process)
        stderr = (await process.stderr.read()).decode("utf-8", "replace").strip()
        code = await process.wait()
    if not reached and code not in (0, 1):
        raise ToolError(stderr or f"ripgrep exited with code {code}")
    return matches, reached


class GrepTool:
    name = "grep"
    label = "grep"
    description = (
        "Search file contents for a regex (or, with literal=true, a plain string). Returns matching "
        "lines with file paths and line numbers; respects .gitignore and includes hidden files. "
        f"Output stops at {DEFAULT_GREP_LIMIT} matches by default or 50KB; long lines are cut to "
        f"{GREP_MAX_LINE_LENGTH} characters."
    )
    parameters: dict[str, JsonValue] = GREP_PARAMETERS
    prompt_snippet: str | None = "Search inside files for a pattern (skips what .gitignore excludes)"
    prompt_guidelines: tuple[str, ...] = ()
    execution_mode: Literal["parallel", "sequential"] = "parallel"

    async def execute(self, call_id: str, args: dict[str, JsonValue], ctx: ToolContext) -> ToolResult:
        pattern = require_str(args, "pattern", self.name)
        root = resolve_to_cwd(optional_str(args, "path", self.name) or ".", ctx.cwd)
        context = max(0, optional_int(args, "context", self.name) or 0)
        limit = max(1, optional_int(args, "limit", self.name) or DEFAULT_GREP_LIMIT)
        if not root.exists():
            raise ToolError(f"Path not found: {root}")
        if not (root.is_dir() or root.is_file()):  # rg would block on a FIFO until aborted
            raise ToolError(f"Cannot search {root}: it is {file_kind(root.stat().st_mode)}, not a regular file")
        notices: tuple[str, ...] = ()
        with names_failures(self.name, f"{pattern} in {root}"):
            rg = find_binary("rg")
            blocked: BlockingIgnoreFiles | None = None
            if rg is not None:
                try:
                    matches, reached = await unless_an_ignore_file_blocks(ripgrep(rg, root, args, pattern, limit), root)
                except BlockingIgnoreFiles as error:  # rg would wait on it forever: search without rg
                    blocked = error
                    notices = (error.notice(root if root.is_dir() else root.parent),)
            if rg is None or blocked is not None:
                flags = re.IGNORECASE if optional_bool(args, "ignoreCase", self.name) else 0
                source = re.escape(pattern) if optional_bool(args, "literal", self.name) else pattern
                try:
                    regex = re.compile(source, flags)
                except re.error as error:
                    raise ToolError(f"regex parse error: {error} (pattern: {pattern})") from None
                glob = optional_str(args, "glob", self.name)
                matches, reached = await run_in_thread(python_grep, root, regex, glob=glob, limit=limit)
        if not matches:
            text = "No matches found" + "".join(f"\n\n[{notice}]" for notice in notices)
            return ToolResult(content=[{"type": "text", "text": text}])
        lines, any_cut = format_matches(matches, root, context)
        details: dict[str, JsonValue] = {}
        if reached:
            details["matchLimitReached"] = limit
        if any_cut:
            details["linesTruncated"] = True
        return listing_result(
            lines,
            limit_notice=(
                f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern" if reached else None
            ),
            details=details,
            trailing_notices=(
                (f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines",)
                if any_cut else ()
            ) + notices,
        )


def format_matches(matches: list[Match], root: Path, context: int) -> tuple[list[str], bool]:
    """pi's blocks: each match with ``context`` lines around it (blocks may repeat lines)."""
    single_file = root.is_file()
    file_lines: dict[Path, list[str]] = {}
    any_cut = False

    def shown_path(path: Path) -> str:
        if single_file:
            return path.name
        relative = os.path.relpath(path, root)
        return relative.replace("\\", "/") if not relative.startswith("..") else path.name

    def lines_of(path: Path) -> list[str]:
        if path not in file_lines:
            try:
                file_lines[path] = path.read_text(encoding="utf-8", errors="replace").split("\n")
            except OSError:
                file_lines[path] = []
        return file_lines[path]

    out: list[str] = []
    for path, number, match_text in matches:
        label = shown_path(path)
        if context == 0 and match_text is not None:
            text, cut = truncate_line(match_text.replace("\r", ""))
            any_cut = any_cut or cut
            out.append(f"{label}:{number}: {text}")
            continue
        lines = lines_of(path)
        if not lines:
            out.append(f"{label}:{number}: (unable to read file)")
            continue
        for current in range(max(1, number - context), min(len(lines), number + context) + 1):
            text, cut = truncate_line(lines[current - 1].replace("\r", ""))
            any_cut = any_cut or cut
            sep = ":" if current == number else "-"
            out.append(f"{label}{sep}{current}{sep} {text}")
    return out, any_cut
